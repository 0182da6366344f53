"""A study file keeps its steps inside the run: every path a step writes resolves inside --out;
a path the study file gives a step to read lies in --out, the datasets or metrics root or what
the user gave; a study file holds no secret; it may not pick the metric modules' code, a
model's own code or where requests go unless --allow-any-command. Each is refused while the
plan is made, before any step runs, naming the step."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from bias_hub.pipelines.reproduce.run import reproduce
from bias_hub.pipelines.reproduce.study import StudyError, load_study

TOKEN = "hf_StudyFileSecret0123456789"


def _score_study(tmp_path: Path, **args) -> Path:
    """One `score` step; ``args`` change its arguments."""
    step = {
        "positional": "bbq_bias",
        "predictions": "{input.predictions}",
        "dataset": "{datasets_root}/jbbq",
        "config": "all",
        "out": "{out}/s1",
        **args,
    }
    data = {
        "study": "escape",
        "version": "1",
        "title": "t",
        "paper": {"citation": "A test study."},
        "inputs": [{"kind": "file", "name": "predictions", "how": "a file"}],
        "steps": [{"id": "s1", "command": "score", "args": step}],
    }
    path = tmp_path / "escape.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _plan(tmp_path: Path, path: Path, **options) -> str:
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("{}\n", encoding="utf-8")
    return reproduce(
        load_study(str(path)),
        tmp_path / "out",
        inputs={"predictions": str(predictions)},
        datasets_root=tmp_path / "datasets",
        dry_run=True,
        **options,
    )


@pytest.mark.parametrize("out", ["/elsewhere/s1", "{out}/../../x", "{out}/link/s1"])
def test_a_step_that_writes_outside_out_is_refused(tmp_path: Path, out: str) -> None:
    (tmp_path / "out").mkdir()
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "s1").mkdir(parents=True)
    (elsewhere / "s1" / "notes.md").write_text("mine\n", encoding="utf-8")
    (tmp_path / "out" / "link").symlink_to(elsewhere, target_is_directory=True)
    path = _score_study(tmp_path, out=out.replace("/elsewhere", str(elsewhere)))
    for options in ({}, {"allow_any_command": True}):
        with pytest.raises(
            StudyError, match=r"step s1: out .*: a study step writes only inside --out"
        ):
            _plan(tmp_path, path, **options)
    assert (elsewhere / "s1" / "notes.md").read_text(encoding="utf-8") == "mine\n"


def test_a_build_step_into_the_default_datasets_root_is_refused(tmp_path: Path) -> None:
    data = {
        "study": "b",
        "version": "1",
        "title": "t",
        "paper": {"citation": "c"},
        "steps": [{"id": "b", "command": "build speciesism_templates", "args": {}}],
    }
    path = tmp_path / "b.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(
        StudyError, match=r"step b: out_root .*: a study step writes only inside --out"
    ):
        reproduce(load_study(str(path)), tmp_path / "out", dry_run=True)


def test_a_metrics_root_in_a_study_file_needs_allow_any_command(tmp_path: Path) -> None:
    """A bbq_bias.py elsewhere would run as the metric: the plan refuses before any step."""
    modules = tmp_path / "elsewhere" / "bbq_bias"
    modules.mkdir(parents=True)
    marker = tmp_path / "ran"
    (modules / "bbq_bias.py").write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    path = _score_study(tmp_path, metrics_root=str(modules.parent))
    with pytest.raises(
        StudyError, match="metrics_root: a study file may not choose which code runs"
    ):
        _plan(tmp_path, path)
    assert "--metrics-root" in _plan(tmp_path, path, allow_any_command=True)
    assert not marker.exists()


@pytest.mark.parametrize(
    "args",
    [{"trust_remote_code": True}, {"base_url": "http://elsewhere.example/v1"}],
    ids=["remote code", "url"],
)
def test_remote_code_and_endpoints_in_a_study_file_need_allow_any_command(tmp_path, args):
    data = {
        "study": "j",
        "version": "1",
        "title": "t",
        "paper": {"citation": "c"},
        "steps": [
            {
                "id": "e",
                "command": "jbbq evaluate",
                "args": {"model": "org/m", "out": "{out}/e", **args},
            }
        ],
    }
    path = tmp_path / "j.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    key = next(iter(args))
    with pytest.raises(StudyError, match=f"{key}: a study file may not choose"):
        reproduce(load_study(str(path)), tmp_path / "out", dry_run=True)


def test_a_study_file_path_read_from_elsewhere_is_refused_and_an_input_is_not(tmp_path):
    elsewhere = tmp_path / "elsewhere.jsonl"
    elsewhere.write_text("{}\n", encoding="utf-8")
    path = _score_study(tmp_path, predictions=str(elsewhere))
    with pytest.raises(StudyError, match=r"predictions .*elsewhere.jsonl: a study step reads only"):
        _plan(tmp_path, path)
    assert f"--predictions {tmp_path / 'p.jsonl'}" in _plan(tmp_path, _score_study(tmp_path))


def test_a_secret_in_a_study_file_is_refused_and_never_printed(tmp_path: Path) -> None:
    path = _score_study(tmp_path, token=TOKEN)
    with pytest.raises(StudyError) as refused:
        _plan(tmp_path, path)
    assert "token: a study file holds no secret" in str(refused.value)
    assert "environment" in str(refused.value) and TOKEN not in str(refused.value)
    url = _score_study(tmp_path, dataset="http://user:Passw0rdInStudy@host/jbbq")
    with pytest.raises(StudyError, match="dataset: a study file holds no secret") as refused:
        _plan(tmp_path, url)
    assert "Passw0rdInStudy" not in str(refused.value)


@pytest.mark.slow  # plans every shipped study end to end
def test_the_shipped_studies_stay_inside(tmp_path: Path) -> None:
    """Every study and variant plans with every write under --out (their builds included)."""
    from bias_hub.pipelines.reproduce.study import list_studies

    for study in list_studies():
        for variant in [None, *study.variants]:
            inputs = {
                item["name"]: str(tmp_path / item["name"])
                for item in study.inputs_of(variant)
                if item["kind"] == "file"
            }
            plan = reproduce(
                study,
                tmp_path / "o",
                variant=variant,
                inputs=inputs,
                dry_run=True,
                datasets_root=tmp_path / "datasets",
            )
            for line in plan.splitlines():
                for flag in ("--out", "--out-root"):
                    if f" {flag} " in line:
                        written = line.split(f" {flag} ", 1)[1].split()[0]
                        assert written.startswith(str(tmp_path / "o")), (study.name, line)


def test_a_model_given_with_models_that_no_step_loads_is_refused(tmp_path: Path) -> None:
    """StereoSet's study loads one model per step by {model} and the preset's GPT-2 as the LM:
    a second --models value would be dropped without a word."""
    study = load_study("stereoset_gender_attention")
    plan = reproduce(study, tmp_path / "o", models=["org/encoder"], dry_run=True)
    assert "--model org/encoder" in plan
    with pytest.raises(StudyError, match="--models org/lm: no step of stereoset_gender_attention"):
        reproduce(study, tmp_path / "o", models=["org/encoder", "org/lm"], dry_run=True)
    both = reproduce(
        study,
        tmp_path / "o",
        models=["org/encoder", "org/lm"],
        overrides={"attention.lm": "org/lm"},
        dry_run=True,
    )
    assert "--lm org/lm" in both
