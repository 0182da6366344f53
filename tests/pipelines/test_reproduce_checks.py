"""`bias-hub reproduce` checks everything before the first step runs: every step's command line
through that step's own parser (`--set` values of the wrong type, lists spread into a one-value
flag, `false` for a flag that takes a value), unknown `--input` names, YAML aliases, commands a
study may not run, stand-ins in a paper run; and it keeps `--set` secrets out of what it writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from reproduce_toy import CALLS, install_toy, toy_study, write_study

from bias_hub.pipelines import cli
from bias_hub.pipelines.reproduce.run import reproduce
from bias_hub.pipelines.reproduce.study import StudyError, load_study


@pytest.fixture
def toy(monkeypatch, tmp_path) -> Path:
    install_toy(monkeypatch)
    (tmp_path / "corpus.txt").write_text("x", encoding="utf-8")
    return write_study(tmp_path, toy_study())


def _dry_run(study: Path, *args: str) -> int:
    return cli.main(["reproduce", str(study), "--dry-run", *args])


def test_a_set_value_of_the_wrong_type_fails_the_dry_run_naming_step_and_set(toy, capsys):
    assert _dry_run(toy, "--set", "count.scale=abc") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "step count: --set count.scale=abc: argument --scale: invalid int value: 'abc'" in err[0]


def test_the_jbbq_dry_run_checks_each_step_with_its_parser(capsys):
    assert cli.main(["reproduce", "jbbq", "--dry-run", "--set", "figure1.limit=abc"]) == 2
    err = capsys.readouterr().err
    assert "step figure1: --set figure1.limit=abc: argument --limit: invalid int value" in err


def test_a_list_spread_into_a_one_value_flag_is_refused(toy, tmp_path):
    study = load_study(str(toy))
    elsewhere, corpus = tmp_path / "ELSEWHERE", {"corpus": str(tmp_path / "corpus.txt")}
    with pytest.raises(StudyError, match=r"--set count.scale=\[4, .*: --scale takes one value"):
        reproduce(
            study,
            tmp_path / "run",
            inputs=corpus,
            overrides={"count.scale": [4, "--out", str(elsewhere)]},
        )
    # In a flag that takes several values, a value that is a flag is refused too.
    with pytest.raises(StudyError, match="--model: the value '--out' looks like a flag"):
        reproduce(study, tmp_path / "run", overrides={"count.model": ["m", "--out", "x"]})
    assert CALLS == [] and not elsewhere.exists()


def test_false_never_drops_a_flag_that_takes_a_value(toy, tmp_path):
    study = load_study(str(toy))
    with pytest.raises(
        StudyError, match="--set count.scale=false: --scale takes a value, got false"
    ):
        reproduce(study, tmp_path / "run", overrides={"count.scale": False}, dry_run=True)
    # A switch takes true or false; null leaves any flag out.
    text = reproduce(
        study,
        tmp_path / "run",
        overrides={"count.lowercase": True, "count.scale": None},
        dry_run=True,
    )
    assert "--lowercase" in text and "--scale" not in text
    with pytest.raises(StudyError, match="--lowercase is a switch: expected true or false, got 3"):
        reproduce(study, tmp_path / "run", overrides={"count.lowercase": 3}, dry_run=True)


def test_an_unknown_input_name_is_refused(toy, tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    code = _dry_run(toy, "--input", f"corpus={corpus}", "--input", f"corpse={corpus}")
    assert code == 2
    err = capsys.readouterr().err
    assert "--input corpse: not a file input of toy; it takes --input corpus=PATH" in err
    assert _dry_run(toy, "--input", f"corpus={corpus}", "--input", "corpus=other.txt") == 2
    assert f"--input corpus: given twice ({corpus} and other.txt)" in capsys.readouterr().err


def test_yaml_aliases_in_a_study_file_are_refused(tmp_path):
    study = write_study(tmp_path, toy_study()).read_text(encoding="utf-8")
    aliased = tmp_path / "aliased.yaml"
    aliased.write_text(
        study.replace("version: '2'", "version: &v '2'\nother: *v"), encoding="utf-8"
    )
    with pytest.raises(StudyError, match=r"line 3: the alias \*v \(aliases are not allowed"):
        load_study(str(aliased))
    # Nine levels of nine aliases would be 9^9 strings once expanded: refused at the first.
    levels = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + [
        f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]" for i in range(1, 10)
    ]
    bomb = tmp_path / "bomb.yaml"
    bomb.write_text(study + "\n".join(levels) + "\n", encoding="utf-8")
    with pytest.raises(StudyError, match=r"the alias \*a0"):
        load_study(str(bomb))


def test_a_set_value_holding_an_alias_is_refused(toy, capsys):
    assert _dry_run(toy, "--set", "count.model=[&m [a, b], *m]") == 2
    err = capsys.readouterr().err
    assert "--set count.model: line 1: the alias *m (aliases are not allowed" in err


def test_secrets_given_with_set_never_appear_in_clear(toy, tmp_path, capsys):
    secret = "hf_TrustSetSecret0123456789"
    corpus = tmp_path / "corpus.txt"
    out = tmp_path / "run"
    args = ["--input", f"corpus={corpus}", "--set", f"token={secret}"]
    assert _dry_run(toy, *args) == 0
    printed = capsys.readouterr()
    assert secret not in printed.out + printed.err and "--token ***" in printed.out
    assert cli.main(["reproduce", str(toy), "--out", str(out), *args]) == 0
    printed = capsys.readouterr()
    assert secret not in printed.out + printed.err
    for name in ("steps.json", "results.json", "report.md"):
        assert secret not in (out / name).read_text(encoding="utf-8"), name
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["overrides"] == {
        "token": "***"
    }


def test_study_steps_run_only_the_allowed_commands(toy, tmp_path, monkeypatch):
    publish = toy_study(
        steps=[{"id": "push", "command": "publish", "args": {"namespace": "me", "push": True}}],
        tables=[],
    )
    study = load_study(str(write_study(tmp_path, publish)))
    with pytest.raises(StudyError, match="step push: `bias-hub publish` is not a command a study"):
        reproduce(study, tmp_path / "run", inputs={"corpus": "c"}, dry_run=True)
    again = toy_study(steps=[{"id": "again", "command": "reproduce", "args": {"study": "x"}}])
    study = load_study(str(write_study(tmp_path, {**again, "tables": []})))
    with pytest.raises(StudyError, match="`bias-hub reproduce` is not a command a study"):
        reproduce(study, tmp_path / "run", inputs={"corpus": "c"}, dry_run=True)
    build = toy_study(
        steps=[{"id": "data", "command": "build jbbq", "args": {"out_root": "{out}/datasets"}}],
        tables=[],
    )
    study = load_study(str(write_study(tmp_path, build)))
    reproduce(study, tmp_path / "run", inputs={"corpus": "c"}, dry_run=True)
    with pytest.raises(StudyError, match=r"--set data.force=true: `build --force` would replace"):
        reproduce(
            study,
            tmp_path / "run",
            overrides={"data.force": True},
            inputs={"corpus": "c"},
            dry_run=True,
        )
    text = reproduce(
        study,
        tmp_path / "run",
        overrides={"data.force": True},
        inputs={"corpus": "c"},
        dry_run=True,
        allow_any_command=True,
    )
    assert "bias-hub build jbbq --out-root" in text and "--force" in text


def _toyset(root: Path, sample: bool) -> Path:
    import datasets

    from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder

    metadata = CardMetadata(
        pretty_name="toy sample (not the toy set)" if sample else "the toy set",
        license="mit",
        language=["en"],
        task_categories=["text-classification"],
        extra={"sample": True} if sample else {},
    )
    configs = {"all": {"test": datasets.Dataset.from_list([{"x": 1}, {"x": 2}])}}
    return write_dataset_folder(root / "toyset", configs, metadata, "# toy\n", "all")


def _with_dataset(tmp_path: Path) -> Path:
    data = toy_study(
        inputs=[
            {
                "kind": "dataset",
                "name": "toyset",
                "config": "all",
                "how": "bias-hub build toyset --source PATH",
                "paper_input": "the toy paper's own set",
            }
        ]
    )
    data["steps"][0]["args"]["dataset"] = "{datasets_root}/toyset"
    return write_study(tmp_path, data)


def test_a_paper_run_on_a_stand_in_stops_and_says_how_to_get_the_real_input(toy, tmp_path):
    root = tmp_path / "datasets"
    _toyset(root, sample=True)
    study = load_study(str(_with_dataset(tmp_path)))
    text = reproduce(study, tmp_path / "run", datasets_root=root, dry_run=True)
    assert (
        "[STAND-IN] dataset toyset (config all): "
        f"{root / 'toyset'} (sample: toy sample (not the toy set))" in text
    )
    assert "the paper used: the toy paper's own set" in text
    with pytest.raises(ValueError, match="stand-ins, not the paper's data") as err:
        reproduce(study, tmp_path / "run", datasets_root=root)
    assert "how: bias-hub build toyset --source PATH" in str(err.value)
    assert CALLS == [] and not (tmp_path / "run").exists()
    # A variant is not the paper's setting: it runs, and its table says what it computed on.
    reproduce(study, tmp_path / "variant", variant="double", datasets_root=root)
    report = (tmp_path / "variant" / "report.md").read_text(encoding="utf-8")
    assert "Computed on toyset (config all), sample: toy sample (not the toy set)" in report


def test_allowed_stand_ins_label_every_table(toy, tmp_path):
    root = tmp_path / "datasets"
    _toyset(root, sample=True)
    study = load_study(str(_with_dataset(tmp_path)))
    out = tmp_path / "run"
    reproduce(study, out, datasets_root=root, allow_stand_ins=True)
    report = (out / "report.md").read_text(encoding="utf-8")
    table = report.split("## Table 1: words", 1)[1]
    assert (
        "**Computed on toyset (config all), sample: toy sample (not the toy set), "
        "not the paper's data.**" in table
    )
    assert "**Not the paper's data or models (run with `--allow-stand-ins`):**" in report
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["steps"][0]["stand_ins"] == [
        "toyset (config all), sample: toy sample (not the toy set)"
    ]
    # The report lists what each step read, as its manifest fingerprinted it.
    inputs = report.split("\n## Inputs\n", 1)[1].split("\n## ", 1)[0]
    assert f"  dataset {(root / 'toyset').resolve()} config all [sample]: 2 files" in inputs
    # The release itself is no stand-in: the paper run starts without the flag.
    _toyset(root, sample=False)
    reproduce(study, tmp_path / "release", datasets_root=root)
    assert "Computed on" not in (tmp_path / "release" / "report.md").read_text(encoding="utf-8")


def _input_lines(text: str) -> str:
    return text.split("\ninputs:\n", 1)[1].split("\nsteps:\n", 1)[0]


def test_a_variant_s_models_and_settings_replace_the_paper_s_in_the_input_check(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir(), b.mkdir()
    species = load_study("speciesism")
    # The offline variant scores the models given with VADER: no Hub model, no Google key.
    text = reproduce(
        species, tmp_path / "o", variant="offline", models=[str(a), str(b)], dry_run=True
    )
    inputs = _input_lines(text)
    assert "MISSING" not in inputs, inputs
    assert f"[ok] model {a}: local folder" in inputs and "GOOGLE_API_KEY" not in inputs
    # The paper's run with --models checks those, and needs the key for Google's sentiment model.
    inputs = _input_lines(reproduce(species, tmp_path / "o", models=[str(a)], dry_run=True))
    assert "bert-large-uncased" not in inputs and "roberta-large" not in inputs
    assert "[MISSING] env GOOGLE_API_KEY" in inputs or "[ok] env GOOGLE_API_KEY" in inputs
    vader = reproduce(
        species,
        tmp_path / "o",
        models=[str(a)],
        overrides={"speciesism.sentiment_backend": "vader"},
        dry_run=True,
    )
    assert "GOOGLE_API_KEY" not in _input_lines(vader)
    # The StereoSet offline variant loads the models its first step makes, not BERT and GPT-2.
    stereo = load_study("stereoset_gender_attention")
    inputs = _input_lines(reproduce(stereo, tmp_path / "o", variant="offline", dry_run=True))
    assert "MISSING" not in inputs, inputs
    assert "bert-base-uncased" not in inputs and "gpt2" not in inputs
    # The paper's run checks both, the causal LM from the step's preset.
    inputs = _input_lines(reproduce(stereo, tmp_path / "o", dry_run=True))
    assert "model bert-base-uncased" in inputs and "model openai-community/gpt2" in inputs
