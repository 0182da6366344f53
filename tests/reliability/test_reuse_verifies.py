"""`bias-hub reproduce` reuses a finished step only when it verifies (``run_folder.why_rerun``):
its manifest names this very step, every file it lists keeps its sha256, every input resolves
and fingerprints as it did, and the package's source files are those that ran. Each rerun says
why in one line.

The study is the one-step `score` study of ``test_stale_reuse``: 16 test questions of the JBBQ
fixture, predictions right for the first ``right`` of them. By hand: accuracy = right / 16; under
the labels of the rebuild with other gold labels (each of the 8 disambiguated questions answered
by the other person), the 16 right predictions are right on the 8 ambiguous ones only: 0.5.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from checkout_copies import REPO_ROOT, pythonpath_for
from test_stale_reuse import STUDY, _accuracy, _predictions, _write_dataset

from bias_hub.pipelines import cli
from bias_hub.pipelines.reproduce.run import reproduce
from bias_hub.pipelines.reproduce.study import load_study

pytestmark = pytest.mark.slow


def _study(tmp_path: Path, data: dict = STUDY) -> Path:
    path = tmp_path / f"{data['study']}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _run(path: Path, out: Path, root: Path, predictions: Path, capfd) -> str:
    """Reproduce the study; what it said on the console."""
    capfd.readouterr()
    reproduce(
        load_study(str(path)), out, inputs={"predictions": str(predictions)}, datasets_root=root
    )
    return capfd.readouterr().err


@pytest.fixture
def scored(tmp_path: Path, capfd):
    """The study run once, every prediction right: (study file, out, root, predictions)."""
    root, out = tmp_path / "datasets", tmp_path / "run"
    _write_dataset(root)
    predictions = _predictions(tmp_path / "preds.jsonl", right=16)
    path = _study(tmp_path)
    _run(path, out, root, predictions, capfd)
    assert _accuracy(out) == 1.0
    return path, out, root, predictions


def test_an_edited_result_reruns_its_step_naming_the_file(scored, capfd) -> None:
    path, out, root, predictions = scored
    results = out / "score" / "results.json"
    edited = json.loads(results.read_text(encoding="utf-8"))
    edited["result"]["accuracy"] = 0.123456
    results.write_text(json.dumps(edited), encoding="utf-8")
    err = _run(path, out, root, predictions, capfd)
    assert (
        "score: rerun, results.json was edited since the run wrote it; the folder as edited is "
        "kept as score.edited-1" in err
    )
    assert _accuracy(out) == 1.0  # 16 of 16, computed again
    kept = json.loads((out / "score.edited-1" / "results.json").read_text(encoding="utf-8"))
    assert kept["result"]["accuracy"] == 0.123456  # nothing the user wrote is deleted


def test_a_deleted_result_reruns_its_step(scored, capfd) -> None:
    path, out, root, predictions = scored
    (out / "score" / "results.json").unlink()
    err = _run(path, out, root, predictions, capfd)
    assert "score: rerun, results.json is gone" in err
    assert _accuracy(out) == 1.0


def test_a_re_pointed_dataset_link_reruns_the_step(tmp_path: Path, capfd) -> None:
    gold, other = tmp_path / "gold", tmp_path / "other"
    _write_dataset(gold)
    _write_dataset(other, other_gold=True)
    link = tmp_path / "root"
    link.symlink_to(gold, target_is_directory=True)
    predictions = _predictions(tmp_path / "preds.jsonl", right=16)
    path, out = _study(tmp_path), tmp_path / "run"
    _run(path, out, link, predictions, capfd)
    assert _accuracy(out) == 1.0
    link.unlink()
    link.symlink_to(other, target_is_directory=True)  # ln -sfn other root
    err = _run(path, out, link, predictions, capfd)
    assert f"score: rerun, input changed: {link} now reads {other} (it read {gold})" in err
    assert _accuracy(out) == 0.5  # 8 of 16 under the other gold labels
    folder = json.loads((out / "score" / "manifest.json").read_text(encoding="utf-8"))
    assert folder["inputs"]["datasets"][0]["folder"] == str((other / "jbbq").resolve())


def test_a_re_pointed_predictions_link_reruns_the_step(tmp_path: Path, capfd) -> None:
    root = tmp_path / "datasets"
    _write_dataset(root)
    right = _predictions(tmp_path / "all right.jsonl", right=16)
    four = _predictions(tmp_path / "four right.jsonl", right=4)
    link = tmp_path / "preds.jsonl"
    link.symlink_to(right)
    path, out = _study(tmp_path), tmp_path / "run"
    _run(path, out, root, link, capfd)
    assert _accuracy(out) == 1.0
    link.unlink()
    link.symlink_to(four)
    err = _run(path, out, root, link, capfd)
    assert f"score: rerun, input changed: {link} now reads {four} (it read {right})" in err
    assert _accuracy(out) == 0.25  # 4 of 16


def test_a_folder_another_command_wrote_is_not_taken_for_the_step(scored, tmp_path, capfd) -> None:
    path, out, root, predictions = scored
    four = _predictions(tmp_path / "four.jsonl", right=4)
    # By hand, into the step's folder: the same command on other predictions.
    argv = ["score", "bbq_bias", "--predictions", str(four), "--dataset", str(root / "jbbq")]
    argv += ["--config", "all", "--split", "test", "--confidence-level", "none"]
    assert cli.main([*argv, "--out", str(out / "score")]) == 0
    assert _accuracy(out) == 0.25
    err = _run(path, out, root, predictions, capfd)
    assert (
        f"score: rerun, its output was written by `bias-hub score bbq_bias --predictions {four}"
        in err
    )
    assert "not by this step" in err
    assert _accuracy(out) == 1.0


def test_a_step_whose_command_line_changed_says_so(scored, tmp_path, capfd) -> None:
    path, out, root, predictions = scored
    data = json.loads(json.dumps(STUDY))
    data["steps"][0]["args"]["confidence_level"] = "0.9"
    err = _run(_study(tmp_path, data), out, root, predictions, capfd)
    assert "score: rerun, its command line changed (it ran `bias-hub score bbq_bias" in err
    assert "--confidence-level none" in err
    assert "not by this step" not in err
    assert _accuracy(out) == 1.0


def test_the_run_s_datasets_root_reaches_a_step_that_names_none(tmp_path: Path, capfd) -> None:
    """The step names its dataset by name only: it is read under --datasets-root, the folder
    the input check looked at, and its manifest shows that folder."""
    data = json.loads(json.dumps(STUDY))
    data["steps"][0]["args"]["dataset"] = "jbbq"
    path, root, out = _study(tmp_path, data), tmp_path / "elsewhere", tmp_path / "run"
    _write_dataset(root)
    predictions = _predictions(tmp_path / "preds.jsonl", right=4)
    plan = reproduce(
        load_study(str(path)),
        out,
        inputs={"predictions": str(predictions)},
        datasets_root=root,
        dry_run=True,
    )
    assert f"--datasets-root {root}" in plan
    _run(path, out, root, predictions, capfd)
    assert _accuracy(out) == 0.25
    manifest = json.loads((out / "score" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["inputs"]["datasets"][0]["folder"] == str((root / "jbbq").resolve())


def test_a_run_whose_code_differs_from_the_code_here_reruns(scored, capfd) -> None:
    """The manifest records the sha256 of each of the package's source files; a run made by
    other code (here: its record of prompting.py differs from the file now) is not reused."""
    path, out, root, predictions = scored
    manifest_path = out / "score" / "manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    source = manifest["inputs"]["code"]["source"]
    assert (
        "pipelines/jbbq/prompting.py" in source and "pipelines/common/answer_reading.py" in source
    )
    source["pipelines/jbbq/prompting.py"] = "0" * 64
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    err = _run(path, out, root, predictions, capfd)
    assert "score: rerun, code changed: pipelines/jbbq/prompting.py" in err
    err = _run(path, out, root, predictions, capfd)
    assert "score: reused" in err


def _copy_of_the_package(folder: Path) -> Path:
    """The package's own files in ``folder`` (what a wheel carries, and the project files)."""
    for name in ("builders", "pipelines", "metrics"):
        shutil.copytree(
            REPO_ROOT / name,
            folder / name,
            symlinks=True,
            ignore=shutil.ignore_patterns("__pycache__"),
        )
    for name in ("__init__.py", "__main__.py", "pyproject.toml", "setup.py"):
        shutil.copy2(REPO_ROOT / name, folder / name)
    return folder


def test_a_code_edit_reruns_every_step_it_could_change(tmp_path: Path) -> None:
    """A copy of the package, run as `python -m bias_hub`: after an edit of two of its modules
    (committed or not, git plays no part), the finished step reruns, naming them."""
    copy = _copy_of_the_package(tmp_path / "bias_hub")
    root, out = tmp_path / "datasets", tmp_path / "run"
    _write_dataset(root)
    predictions = _predictions(tmp_path / "preds.jsonl", right=16)
    path = _study(tmp_path)
    env = {**os.environ, "PYTHONPATH": pythonpath_for(copy)}
    argv = [sys.executable, "-m", "bias_hub", "reproduce", str(path), "--out", str(out)]
    argv += ["--datasets-root", str(root), "--input", f"predictions={predictions}"]

    def run() -> str:
        done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        return done.stderr

    run()
    assert "score: reused" in run()
    for name in ("pipelines/jbbq/prompting.py", "pipelines/common/answer_reading.py"):
        with open(copy / name, "a", encoding="utf-8") as module:
            module.write("\n# an edit\n")
    err = run()
    assert "score: rerun, code changed: pipelines/common/answer_reading.py (and 1 more)" in err
