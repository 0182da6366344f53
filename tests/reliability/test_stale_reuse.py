"""`bias-hub reproduce` reuses a finished step only while the inputs it read are unchanged.

A study of one `score` step scores a predictions file (`--input predictions=FILE`) against a
JBBQ-shaped dataset folder. Every number below is counted by hand from the 16 test questions of
the fixture (templates a4, a5, g4, g5, four questions each): a prediction equal to the gold label
is right, accuracy is the share of right ones.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from jbbq_fixtures import fixture_rows

from bias_hub.pipelines.reproduce.run import reproduce
from bias_hub.pipelines.reproduce.study import load_study

STUDY = {
    "study": "stale",
    "version": "1",
    "title": "One score step",
    "paper": {"citation": "A test study."},
    "inputs": [{"kind": "file", "name": "predictions", "how": "a JSON-lines file"}],
    "steps": [
        {
            "id": "score",
            "command": "score",
            "args": {
                "positional": "bbq_bias",
                "predictions": "{input.predictions}",
                "dataset": "{datasets_root}/jbbq",
                "config": "all",
                "split": "test",
                "confidence_level": "none",
                "out": "{out}/score",
            },
        }
    ],
}


def _write_dataset(root: Path, other_gold: bool = False) -> Path:
    """The fixture as a dataset folder; with ``other_gold`` each disambiguated test question
    has the other person as its gold answer (8 of the 16), as a rebuild with other gold labels
    would have (an ambiguous question's gold stays the unknown answer)."""
    import datasets

    from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder
    from bias_hub.builders.jbbq.schema import FEATURES

    rows = fixture_rows()
    test = [dict(row) for row in rows["test"]]
    for row in test:
        if other_gold and row["context_condition"] == "disambig":
            row["label"] = ({0, 1, 2} - {row["label"], row["unknown_label"]}).pop()
    splits = {"train": rows["train"], "test": test}
    configs = {
        "all": {s: datasets.Dataset.from_list(r, features=FEATURES) for s, r in splits.items()}
    }
    metadata = CardMetadata(
        pretty_name="JBBQ-shaped test fixture",
        license="mit",
        language=["ja"],
        task_categories=["question-answering"],
    )
    return write_dataset_folder(root / "jbbq", configs, metadata, "# Fixture\n", "all")


def _predictions(path: Path, right: int) -> Path:
    """A prediction for every test question: the gold label of the fixture for the first
    ``right`` of them, the next index for the rest."""
    rows = []
    for i, row in enumerate(fixture_rows()["test"]):
        label = row["label"] if i < right else (row["label"] + 1) % 3
        rows.append({"example_id": row["example_id"], "prediction": label})
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _accuracy(out: Path) -> float:
    results = json.loads((out / "score" / "results.json").read_text(encoding="utf-8"))
    return results["result"]["accuracy"]


@pytest.fixture
def stale(tmp_path: Path):
    path = tmp_path / "stale.yaml"
    path.write_text(yaml.safe_dump(STUDY, sort_keys=False), encoding="utf-8")
    root = tmp_path / "datasets"
    _write_dataset(root)
    return load_study(str(path)), root


def _run(study, out: Path, root: Path, predictions: Path) -> None:
    reproduce(study, out, inputs={"predictions": str(predictions)}, datasets_root=root)


@pytest.mark.slow
def test_an_edited_input_file_reruns_the_step(stale, tmp_path: Path, capfd) -> None:
    study, root = stale
    out, predictions = tmp_path / "run", _predictions(tmp_path / "preds.jsonl", right=16)
    _run(study, out, root, predictions)
    assert _accuracy(out) == 1.0  # 16 of 16
    _predictions(predictions, right=4)
    capfd.readouterr()
    _run(study, out, root, predictions)
    assert _accuracy(out) == 0.25  # 4 of 16: the step ran again on the edited file
    assert f"score: rerun, input changed: {predictions.resolve()}" in capfd.readouterr().err
    _run(study, out, root, predictions)
    assert "score: reused" in capfd.readouterr().err and _accuracy(out) == 0.25


@pytest.mark.slow
def test_a_dataset_rebuilt_with_other_gold_labels_reruns_the_step(
    stale, tmp_path: Path, capfd
) -> None:
    study, root = stale
    out, predictions = tmp_path / "run", _predictions(tmp_path / "preds.jsonl", right=16)
    _run(study, out, root, predictions)
    assert _accuracy(out) == 1.0
    _write_dataset(root, other_gold=True)
    capfd.readouterr()
    _run(study, out, root, predictions)
    # The predictions match the old gold labels: 8 of the 16 are right under the new ones.
    assert _accuracy(out) == 0.5
    err = capfd.readouterr().err
    assert "score: rerun, data changed: jbbq/all/test-00000-of-00001.parquet" in err
    inputs = json.loads((out / "score" / "manifest.json").read_text(encoding="utf-8"))["inputs"]
    [dataset] = inputs["datasets"]
    assert dataset["folder"] == str((root / "jbbq").resolve()) and dataset["config"] == "all"


# A study of one `build` step that reads a template table the study names (a source file).
BUILD_STUDY = {
    "study": "stale_build",
    "version": "1",
    "title": "One build step",
    "paper": {"citation": "A test study."},
    "inputs": [{"kind": "file", "name": "templates", "how": "a template table"}],
    "steps": [
        {
            "id": "build",
            "command": "build speciesism_templates",
            "args": {"out_root": "{out}/datasets", "templates": "{input.templates}"},
        }
    ],
}


def _template_ids(out: Path) -> set[str]:
    import pyarrow.parquet as pq

    folder = out / "datasets" / "speciesism_templates" / "probability"
    return {
        row["template_id"]
        for path in folder.glob("*.parquet")
        for row in pq.read_table(path).to_pylist()
    }


@pytest.mark.slow
def test_a_build_step_reruns_when_its_source_or_its_folder_changed(tmp_path: Path, capfd) -> None:
    from bias_hub.builders.speciesism_templates.templates import DEFAULT_TEMPLATES

    templates = tmp_path / "my templates.tsv"
    lines = Path(DEFAULT_TEMPLATES).read_text(encoding="utf-8").splitlines(keepends=True)
    templates.write_text("".join(lines), encoding="utf-8")
    path = tmp_path / "stale_build.yaml"
    path.write_text(yaml.safe_dump(BUILD_STUDY, sort_keys=False), encoding="utf-8")
    study, out = load_study(str(path)), tmp_path / "run"
    given = {"templates": str(templates)}

    reproduce(study, out, inputs=given)
    assert "en_he_who" in _template_ids(out)

    # The template table edited (one template dropped): the same command must build again.
    templates.write_text("".join(line for line in lines if "en_he_who" not in line), "utf-8")
    capfd.readouterr()
    reproduce(study, out, inputs=given)
    assert f"build: rerun, input changed: {templates.resolve()}" in capfd.readouterr().err
    assert "en_he_who" not in _template_ids(out) and "en_she_who" in _template_ids(out)

    # The dataset folder edited by hand since: the step builds it again from its source.
    parquet = next((out / "datasets" / "speciesism_templates" / "probability").glob("*.parquet"))
    parquet.write_bytes(b"not parquet")
    reproduce(study, out, inputs=given)
    err = capfd.readouterr().err
    assert f"build: rerun, data changed: speciesism_templates/probability/{parquet.name}" in err
    assert "en_she_who" in _template_ids(out)

    reproduce(study, out, inputs=given)
    assert "build: reused" in capfd.readouterr().err
    # What the step read and wrote is in the ledger and the reproduction's report.
    ledger = json.loads((out / "steps.json").read_text(encoding="utf-8"))["build"]
    assert ledger["inputs"]["files"][0]["path"] == str(templates.resolve())
    assert ledger["outputs"]["datasets"][0]["name"] == "speciesism_templates"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert f"file {templates.resolve()}" in report and "speciesism_templates" in report
