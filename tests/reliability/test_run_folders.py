"""Run folders and dataset folders under faults: all or nothing, never a mix of two
runs, writable checks before any work, normal permissions, clean-up after a kill."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from bias_hub.builders.shared.files import (
    atomic_write_text,
    ensure_writable_folder,
    recover_folder,
    replace_folder,
    staging_folder,
)
from bias_hub.pipelines.common import RunFolder


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def umask_022():
    old = os.umask(0o022)
    yield
    os.umask(old)


def test_files_and_folders_get_the_umask_permissions(tmp_path: Path, umask_022) -> None:
    # mkstemp alone gives 0600 and mkdtemp 0700: reports must be readable like any other file.
    written = atomic_write_text(tmp_path / "report.md", "x")
    assert _mode(written) == 0o644
    staging = staging_folder(tmp_path / "run")
    (staging / "sub").mkdir(mode=0o700)
    atomic_write_text(staging / "sub" / "a.txt", "a")
    target = replace_folder(staging, tmp_path / "run")
    assert _mode(target) == 0o755
    assert _mode(target / "sub") == 0o755
    assert _mode(target / "sub" / "a.txt") == 0o644


def test_replace_folder_swaps_whole_and_drops_old_files(tmp_path: Path) -> None:
    target = tmp_path / "out"
    target.mkdir()
    (target / "predictions_1.jsonl").write_text("old")
    staging = staging_folder(target)
    (staging / "results.json").write_text("{}")
    replace_folder(staging, target)
    assert sorted(p.name for p in target.iterdir()) == ["results.json"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_staging_of_a_dead_process_is_removed_and_a_live_one_kept(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    stale = tmp_path / f".out.staging-{dead.stdout.strip()}-abc"
    stale.mkdir()
    alive = tmp_path / f".out.staging-{os.getppid()}-xyz"
    alive.mkdir()
    recover_folder(tmp_path / "out")
    assert not stale.exists()
    assert alive.exists()


def test_interrupted_swap_is_restored(tmp_path: Path) -> None:
    # Killed between "old folder renamed aside" and "new folder renamed in".
    backup = tmp_path / ".out.previous"
    backup.mkdir()
    (backup / "results.json").write_text("old run")
    recover_folder(tmp_path / "out")
    assert (tmp_path / "out" / "results.json").read_text() == "old run"
    assert not backup.exists()


def test_previous_copy_beside_a_complete_folder_is_dropped(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / ".out.previous").mkdir()
    recover_folder(tmp_path / "out")
    assert [p.name for p in tmp_path.iterdir()] == ["out"]


def test_output_that_is_a_file_is_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "out").write_text("not a folder")
    with pytest.raises(ValueError, match=r"--out .*out: is a file"):
        ensure_writable_folder(tmp_path / "out")


def test_output_under_a_file_is_refused_before_any_work(tmp_path: Path) -> None:
    # (A read-only parent cannot be tested as root, which CI is: root writes anywhere.)
    (tmp_path / "plain").write_text("x")
    with pytest.raises(ValueError, match=r"--out .*plain/out: cannot create"):
        ensure_writable_folder(tmp_path / "plain" / "out")


def test_run_folder_is_swapped_in_whole_with_a_manifest(tmp_path: Path) -> None:
    out = tmp_path / "run"
    out.mkdir()
    (out / "manifest.json").write_text("{}")
    (out / "predictions_1.jsonl").write_text("from an older run with more models\n")
    with RunFolder(out) as run:
        run.write_json("results.json", {"score": 0.5})
        run.write_text("report.md", "# report\n")
        assert not (out / "results.json").exists()  # nothing visible before the commit
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "report.md", "results.json"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [entry["path"] for entry in manifest["files"]] == ["report.md", "results.json"]
    assert manifest["files"][0]["bytes"] == len("# report\n")
    assert "torch" in manifest["versions"]


def test_failed_run_keeps_the_previous_folder(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with RunFolder(out) as run:
        run.write_text("report.md", "first\n")
    with pytest.raises(RuntimeError, match="model failed"), RunFolder(out) as run:
        run.write_text("report.md", "second, never finished\n")
        raise RuntimeError("model failed")
    assert (out / "report.md").read_text() == "first\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]


def test_run_file_names_stay_inside(tmp_path: Path) -> None:
    run = RunFolder(tmp_path / "run")
    with pytest.raises(ValueError, match="expected a relative path inside the run folder"):
        run.path("../escape.txt")
    run.abort()


def test_a_folder_of_other_work_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "thesis.tex").write_text("months of work")
    with pytest.raises(ValueError, match=r"exists, is not empty and is not a bias-hub run folder"):
        RunFolder(tmp_path)
    assert (tmp_path / "thesis.tex").read_text() == "months of work"


def test_subfolder_views_write_into_the_same_run(tmp_path: Path) -> None:
    with RunFolder(tmp_path / "run") as run:
        run.sub("chive").write_text("report.md", "ja\n")
        run.write_text("report.md", "en\n")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert [entry["path"] for entry in manifest["files"]] == ["chive/report.md", "report.md"]
    assert (tmp_path / "run" / "chive" / "report.md").read_text() == "ja\n"
