"""``bias-hub export eval-results``: each value the results.json number it came from, one file
per model and setting in the Hub's format, the refusals, and the pull request against a fake
``HfApi`` (no network)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from jbbq_fixtures import write_score_runs

from bias_hub.pipelines.cli import main

TOKEN = "hf_secretvalue123456789"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_score_runs(tmp_path_factory.mktemp("eval_results"))


def _export(capsys, *args: str) -> tuple[int, str]:
    code = main(["export", "eval-results", "--namespace", "my-org", *args])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_each_value_is_the_results_json_number_it_came_from(
    runs: Path, tmp_path: Path, capsys
) -> None:
    code, said = _export(
        capsys, str(runs / "gold"), str(runs / "stereotyped"), "--out", str(tmp_path / "out")
    )
    assert code == 0, said
    for model in ("gold", "stereotyped"):
        results = json.loads((runs / model / "results.json").read_text(encoding="utf-8"))
        manifest = json.loads((runs / model / "manifest.json").read_text(encoding="utf-8"))
        # A score run has no prompt or shot count: the benchmark alone names its one setting.
        items = yaml.safe_load(
            (tmp_path / "out" / model / ".eval_results" / "jbbq.yaml").read_text(encoding="utf-8")
        )
        by_task = {item["dataset"]["task_id"]: item for item in items}
        assert by_task["accuracy_ambiguous"]["value"] == round(
            results["result"]["accuracy_ambiguous"], 6
        )
        assert by_task["bias_score_disambiguated_Age"]["value"] == round(
            results["result"]["per_category"]["Age"]["bias_score_disambiguated"], 6
        )
        assert {item["dataset"]["id"] for item in items} == {"my-org/jbbq"}
        # The run's start, as ISO-8601; the notes name the reader and the interval.
        assert by_task["accuracy_ambiguous"]["date"].startswith(manifest["started"][:19])
        assert "answer reader bbq" in by_task["accuracy_ambiguous"]["notes"]
        assert "95% interval [" in by_task["accuracy_ambiguous"]["notes"]
    # The stereotyped run by hand: every ambiguous answer the stereotyped person: accuracy 0, s_AMB 1.
    stereotyped = yaml.safe_load(
        (tmp_path / "out/stereotyped/.eval_results/jbbq.yaml").read_text(encoding="utf-8")
    )
    values = {item["dataset"]["task_id"]: item["value"] for item in stereotyped}
    assert values["accuracy_ambiguous"] == 0.0 and values["bias_score_ambiguous"] == 1.0
    assert values["accuracy_disambiguated"] == 1.0


def test_partial_edited_stand_in_and_unnamed_runs_are_refused(
    runs: Path, tmp_path: Path, capsys
) -> None:
    edited = tmp_path / "edited"
    shutil.copytree(runs / "gold", edited)
    results = json.loads((edited / "results.json").read_text(encoding="utf-8"))
    results["result"]["accuracy_ambiguous"] = 0.99
    (edited / "results.json").write_text(json.dumps(results), encoding="utf-8")
    code, said = _export(capsys, str(edited), "--out", str(tmp_path / "a"))
    assert code == 2 and "results.json was edited since the run wrote it" in said
    assert not (tmp_path / "a").exists()

    stand_in = tmp_path / "stand_in"
    shutil.copytree(runs / "gold", stand_in)
    manifest = json.loads((stand_in / "manifest.json").read_text(encoding="utf-8"))
    manifest["inputs"]["datasets"][0]["origin"] = {
        "kind": "sample",
        "detail": "the sample templates",
    }
    (stand_in / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, said = _export(capsys, str(stand_in), "--out", str(tmp_path / "b"))
    assert code == 2 and "scored on stand-in data (the sample templates)" in said
    assert "--allow-stand-ins" in said
    code, said = _export(capsys, str(stand_in), "--out", str(tmp_path / "b"), "--allow-stand-ins")
    notes = yaml.safe_load(
        (tmp_path / "b/gold/.eval_results/jbbq.yaml").read_text(encoding="utf-8")
    )[0]["notes"]
    assert code == 0 and "STAND-IN DATA: the sample templates" in notes
    code, said = _export(
        capsys,
        str(stand_in),
        "--out",
        str(tmp_path / "c"),
        "--allow-stand-ins",
        "--push",
        "--model",
        "o/m",
    )
    assert code == 2 and "never pushed" in said

    unnamed = tmp_path / "unnamed"
    shutil.copytree(runs / "gold", unnamed)
    manifest = json.loads((unnamed / "manifest.json").read_text(encoding="utf-8"))
    manifest["inputs"]["models"] = []
    (unnamed / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, said = _export(capsys, str(unnamed), "--out", str(tmp_path / "d"))
    assert code == 2 and "records no model; name it with `bias-hub score --model NAME`" in said


class FakeApi:
    def __init__(self, token: str | None = None) -> None:
        self.token = token
        self.commits: list[dict] = []

    def create_commit(self, **kwargs):
        self.commits.append(kwargs)
        return type("Info", (), {"pr_url": "https://huggingface.co/o/m/discussions/1"})()


def test_push_opens_one_pull_request_with_the_files_and_never_prints_the_token(
    runs: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    made: list[FakeApi] = []
    monkeypatch.setenv("HF_TOKEN", TOKEN)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(
        "huggingface_hub.HfApi", lambda token=None: made.append(FakeApi(token)) or made[-1]
    )
    code, said = _export(
        capsys, str(runs / "gold"), "--out", str(tmp_path / "out"), "--push", "--model", "o/m", "-v"
    )
    assert code == 0, said
    (api,) = made
    (commit,) = api.commits
    assert (
        commit["repo_id"] == "o/m"
        and commit["create_pr"] is True
        and commit["repo_type"] == "model"
    )
    (operation,) = commit["operations"]
    assert operation.path_in_repo == ".eval_results/jbbq.yaml"
    assert operation.path_or_fileobj == (tmp_path / "out/gold/.eval_results/jbbq.yaml").read_bytes()
    assert api.token == TOKEN and TOKEN not in said and "discussions/1" in said
    # Two models' runs: one pull request opens on one model repo.
    code, said = _export(
        capsys,
        str(runs / "gold"),
        str(runs / "stereotyped"),
        "--out",
        str(tmp_path / "two"),
        "--push",
        "--model",
        "o/m",
    )
    assert code == 2 and "these runs hold 2 model(s): gold, stereotyped" in said
