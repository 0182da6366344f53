"""Every run records what it read (``pipelines/common/provenance.py``): the sha256 of each data
file of a dataset config and what its card says the rows are, a model folder's content hash or a
Hub id's resolved revision, input files, the code version; ``changed_inputs`` names what differs
later, and ``bias-hub report`` shows the record. Digests are checked against ``hashlib`` on the
file bytes, computed here independently."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import types
from pathlib import Path

import pytest

from bias_hub.pipelines import cli
from bias_hub.pipelines.common import provenance
from bias_hub.pipelines.common.locations import repo_root
from bias_hub.pipelines.common.provenance import (
    changed_inputs,
    dataset_origin,
    fingerprint_inputs,
    stand_ins,
)
from bias_hub.pipelines.common.run_folder import RunFolder


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _dataset(root: Path, rows: list[dict], extra: dict | None = None) -> Path:
    import datasets

    from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder

    metadata = CardMetadata(
        pretty_name="a test set",
        license="mit",
        language=["en"],
        task_categories=["text-classification"],
        extra=extra or {},
    )
    configs = {
        "a": {"test": datasets.Dataset.from_list(rows)},
        "b": {"train": datasets.Dataset.from_list(rows), "test": datasets.Dataset.from_list(rows)},
    }
    return write_dataset_folder(root / "set", configs, metadata, "# set\n", "a")


def test_a_dataset_config_is_recorded_file_by_file(tmp_path):
    folder = _dataset(tmp_path, [{"x": 1}, {"x": 2}])
    record = fingerprint_inputs(datasets=[(folder, "a")])
    [item] = record["datasets"]
    assert item["folder"] == str(folder.resolve()) and item["config"] == "a"
    assert item["files"] == {
        "README.md": _sha(folder / "README.md"),
        "a/test-00000-of-00001.parquet": _sha(folder / "a" / "test-00000-of-00001.parquet"),
    }
    assert item["origin"] == {"kind": "built", "detail": "a test set"}
    [every] = fingerprint_inputs(datasets=[folder])["datasets"]
    assert sorted(every["files"]) == [
        "README.md",
        "a/test-00000-of-00001.parquet",
        "b/test-00000-of-00001.parquet",
        "b/train-00000-of-00001.parquet",
    ]
    assert changed_inputs(record) == []
    _dataset(tmp_path, [{"x": 1}, {"x": 3}])  # rebuilt with another row
    assert "data changed: set/a/test-00000-of-00001.parquet" in changed_inputs(record)


def test_the_card_says_what_the_rows_are():
    assert dataset_origin({"sample": True, "pretty_name": "S"}, "all") == {
        "kind": "sample",
        "detail": "S",
    }
    generated = {"bias_hub_provenance": {"origin": "generated", "training_data": "templates"}}
    assert dataset_origin(generated, "r0.0") == {"kind": "generated", "detail": "templates"}
    mixed = {
        "pretty_name": "NLI",
        "bias_hub_provenance": {
            "release": "the release",
            "release_folders": {"untokenized": "/copy"},
            "generated_configs": ["generated_all"],
        },
    }
    assert dataset_origin(mixed, "generated_all")["kind"] == "generated"
    assert dataset_origin(mixed, "all") == {"kind": "release", "detail": "the release"}
    user = {"sample": False, "built_from_user_copy": {"configs": ["all"], "command": "build x"}}
    assert dataset_origin(user, "all") == {
        "kind": "release",
        "detail": "built from your copy: build x",
    }
    record = {
        "datasets": [
            {"name": "jbbq", "config": "all", "origin": {"kind": "sample", "detail": "S"}},
            {"name": "bbq", "config": "all", "origin": {"kind": "release", "detail": "R"}},
        ]
    }
    assert stand_ins(record) == ["jbbq (config all), sample: S"]


def test_a_model_folder_is_hashed_by_content(tmp_path):
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    (model / "model.safetensors").write_bytes(b"\x00\x01")
    [item] = fingerprint_inputs(models=[str(model)])["models"]
    lines = "".join(
        f"{name}\0{_sha(model / name)}\n" for name in ("config.json", "model.safetensors")
    )
    assert item["sha256"] == hashlib.sha256(lines.encode()).hexdigest() and item["files"] == 2
    record = {"models": [item]}
    (model / "manifest.json").write_text("{}", encoding="utf-8")  # a run's record, not content
    assert changed_inputs(record) == []
    (model / "model.safetensors").write_bytes(b"\x00\x02")
    assert changed_inputs(record) == [f"model changed: {model}"]


def test_a_hub_id_records_the_revision_it_resolves_to(tmp_path, monkeypatch):
    import huggingface_hub.constants

    sha = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "models--org--tiny"
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(sha, encoding="utf-8")
    (repo / "snapshots" / sha).mkdir(parents=True)
    (repo / "snapshots" / sha / "config.json").write_text("{}", encoding="utf-8")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))
    [known, unknown] = fingerprint_inputs(models=["org/tiny", ("org/absent", "v1")])["models"]
    assert known == {"id": "org/tiny", "revision": None, "resolved": sha}
    assert unknown == {"id": "org/absent", "revision": "v1", "resolved": False}


def test_a_file_is_hashed_once_per_process_while_unchanged(tmp_path, monkeypatch):
    opened = []
    real_open = open

    def counting_open(path, *args, **kwargs):
        opened.append(Path(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(provenance, "open", counting_open, raising=False)
    data = tmp_path / "predictions.jsonl"
    data.write_text("one\n", encoding="utf-8")
    first = fingerprint_inputs(files=[data])["files"]
    again = fingerprint_inputs(files=[data])["files"]
    where = {"given": str(data), "path": str(data.resolve())}
    assert first == again == [{**where, "sha256": _sha(data)}]
    assert len(opened) == 1
    data.write_text("one two\n", encoding="utf-8")
    assert fingerprint_inputs(files=[data])["files"][0]["sha256"] == _sha(data)
    assert len(opened) == 2
    assert changed_inputs({"files": first}) == [f"input changed: {data.resolve()}"]


def test_the_code_version_is_the_checkout_s_commit():
    code = fingerprint_inputs()["code"]
    head = subprocess.run(
        ["git", "-C", str(repo_root()), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    if head.returncode != 0:
        # A copy of the files without git (CONTRIBUTING's walk-through runs the suite in one):
        # no commit is claimed.
        assert code.get("git_commit") is None
    else:
        assert code["git_commit"] == head.stdout.strip() and isinstance(code["git_dirty"], bool)
    assert code["bias-hub"]


def test_a_run_folder_records_its_inputs_and_report_shows_them(tmp_path, monkeypatch, capsys):
    folder = _dataset(tmp_path, [{"x": 1}])
    predictions = tmp_path / "p.jsonl"
    predictions.write_text("{}\n", encoding="utf-8")

    def render(results, out):
        Path(out, "report.md").write_text("# toy report\n", encoding="utf-8")

    report = types.ModuleType("bias_hub.pipelines.toy.report")
    report.render = render
    monkeypatch.setitem(sys.modules, "bias_hub.pipelines.toy", types.ModuleType("toy"))
    monkeypatch.setitem(sys.modules, "bias_hub.pipelines.toy.report", report)
    out = tmp_path / "run"
    with RunFolder(out) as run:
        run.record_inputs(datasets=[(folder, "a")], settings={"seed": 3, "token": "hf_x"})
        run.record_inputs(files=[predictions])
        run.write_json("results.json", {"part": "toy", "step": "run"})
        render({}, run.staging)
    inputs = json.loads((out / "manifest.json").read_text(encoding="utf-8"))["inputs"]
    assert [d["folder"] for d in inputs["datasets"]] == [str(folder.resolve())]
    assert inputs["files"] == [
        {"given": str(predictions), "path": str(predictions.resolve()), "sha256": _sha(predictions)}
    ]
    assert inputs["settings"] == {"seed": 3}  # a token says nothing about the numbers
    assert cli.main(["report", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"  dataset {folder.resolve()} config a [built]: 2 files" in printed
    assert f"  file {predictions.resolve()}: sha256 {_sha(predictions)[:16]}" in printed
    again = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert again["inputs"] == inputs and again["rerendered"] is True
    # The report is the part's own, rendered from results.json alone.
    assert (out / "report.md").read_text(encoding="utf-8") == "# toy report\n"


@pytest.mark.parametrize("missing", ["folder", "file"])
def test_inputs_that_are_gone_are_changes(tmp_path, missing):
    if missing == "folder":
        folder = _dataset(tmp_path, [{"x": 1}])
        record = fingerprint_inputs(datasets=[(folder, "a")])
        (folder / "README.md").unlink()
        assert changed_inputs(record) == [f"data changed: set is gone ({folder.resolve()})"]
    else:
        path = tmp_path / "p.txt"
        path.write_text("x", encoding="utf-8")
        record = fingerprint_inputs(files=[path])
        path.unlink()
        assert changed_inputs(record) == [f"input changed: {path.resolve()} is gone"]
    assert changed_inputs(None) == ["no input fingerprints recorded (the run is older than them)"]
