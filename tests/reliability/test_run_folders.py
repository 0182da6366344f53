"""Run folders and dataset folders under faults: all or nothing, never a mix of two
runs, writable checks before any work, normal permissions, clean-up after a kill."""

from __future__ import annotations

import hashlib
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
    older = "from an older run with more models\n"
    (out / "predictions_1.jsonl").write_text(older)
    digest = hashlib.sha256(older.encode()).hexdigest()
    (out / "manifest.json").write_text(
        json.dumps({"files": [{"path": "predictions_1.jsonl", "sha256": digest}]})
    )
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


def test_a_file_added_to_any_run_folder_or_edited_in_it_stops_the_next_run(
    tmp_path: Path,
) -> None:
    out = tmp_path / "run"
    with RunFolder(out) as run:
        run.write_text("report.md", "first\n")
        run.sub("plots").write_text("notes.txt", "written by the run\n")
    (out / "my notes.md").write_text("what I saw")
    (out / "plots" / "notes.txt").write_text("edited by hand")
    with pytest.raises(ValueError) as refused:
        RunFolder(out)
    assert str(refused.value) == (
        f"--out {out}: holds 2 file(s) its last run did not write, which this run would delete "
        "(it replaces the folder whole): my notes.md (added), plots/notes.txt (changed since); "
        "move them out of the folder, or give a new --out"
    )
    assert (out / "my notes.md").read_text() == "what I saw"
    assert not list(tmp_path.glob(".run.*"))  # no staging folder, no lock left
    (out / "my notes.md").unlink()
    (out / "plots" / "notes.txt").write_text("written by the run\n")
    _run(out, "second\n")  # the run's own files, as it wrote them, are replaced as before
    assert (out / "report.md").read_text() == "second\n" and not (out / "plots").exists()


def test_an_input_the_run_reads_from_inside_its_folder_is_refused(tmp_path: Path) -> None:
    # The earlier run's model, read by the next run into the same folder, would be deleted.
    out = tmp_path / "run"
    with RunFolder(out) as run:
        run.write_text("model/config.json", "{}")
    with pytest.raises(ValueError, match=r"model lies inside --out .*run, which this run"):
        with RunFolder(out) as run:
            run.record_inputs(models=[out / "model"])
            run.write_text("report.md", "evaluation\n")
    assert (out / "model" / "config.json").read_text() == "{}"


def test_a_part_s_run_folder_keeps_a_note_the_user_put_there(tmp_path: Path, capsys) -> None:
    from bias_hub.pipelines.cli import main

    scores = tmp_path / "scores.csv"
    scores.write_text("embedding,weat,gap\ne1,0.1,0.2\ne2,0.5,0.1\ne3,0.9,0.4\n")
    out = tmp_path / "correlation"
    argv = ["embeddings", "correlate", "--scores", str(scores), "--out", str(out)]
    assert main(argv) == 0
    (out / "notes.md").write_text("the second embedding is odd")
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "notes.md (added)" in err, err
    assert (out / "notes.md").read_text() == "the second embedding is odd"
    inside = out / "scores.csv"  # an input put inside --out is the user's file too
    inside.write_text(scores.read_text())
    (out / "notes.md").unlink()
    assert main([*argv[:3], str(inside), *argv[4:]]) == 2
    assert "scores.csv (added)" in capsys.readouterr().err and inside.is_file()


def test_re_rendering_a_report_keeps_the_files_the_user_added(tmp_path: Path) -> None:
    # `bias-hub report` copies every file of the folder into the new run: nothing is lost, so a
    # note of the user's does not stop it.
    from bias_hub.pipelines.cli import main

    scores = tmp_path / "scores.csv"
    scores.write_text("embedding,weat,gap\ne1,0.1,0.2\ne2,0.5,0.1\ne3,0.9,0.4\n")
    out = tmp_path / "correlation"
    assert main(["embeddings", "correlate", "--scores", str(scores), "--out", str(out)]) == 0
    (out / "notes.md").write_text("the second embedding is odd")
    (out / "report.md").unlink()
    assert main(["report", str(out)]) == 0
    assert (out / "notes.md").read_text() == "the second embedding is odd"
    assert (out / "report.md").is_file()


def test_nli_train_refuses_a_model_inside_its_out_before_training(tmp_path: Path, capsys) -> None:
    # The model folder is swapped in at the end of training: a --model inside it would be
    # deleted by the swap, and used to be found only then, after the training.
    from bias_hub.pipelines.cli import main

    out = tmp_path / "trained"
    with RunFolder(out) as run:
        run.write_text("config.json", "{}")
    data = tmp_path / "train.csv"
    data.write_text("premise,hypothesis,label\na,b,entailment\n")
    argv = ["nli", "train", "--model", str(out), "--dataset", str(data), "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{out} lies inside --out {out}" in err, err
    assert (out / "config.json").read_text() == "{}"


def test_subfolder_views_write_into_the_same_run(tmp_path: Path) -> None:
    with RunFolder(tmp_path / "run") as run:
        run.sub("chive").write_text("report.md", "ja\n")
        run.write_text("report.md", "en\n")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert [entry["path"] for entry in manifest["files"]] == ["chive/report.md", "report.md"]
    assert (tmp_path / "run" / "chive" / "report.md").read_text() == "ja\n"


def _run(out: Path, text: str) -> None:
    with RunFolder(out) as run:
        run.write_text("report.md", text)


def _leftovers(folder: Path) -> list[str]:
    return sorted(
        p.name for p in folder.iterdir() if ".staging-" in p.name or ".previous" in p.name
    )


def test_an_out_that_is_a_link_writes_the_folder_it_points_to(tmp_path: Path) -> None:
    # --out latest -> run-1: the link stays a link, run-1 is replaced, and a second and a third
    # run work too (the link was renamed aside and then tripped over: rmtree on a link).
    _run(tmp_path / "run-1", "first")
    (tmp_path / "latest").symlink_to("run-1")
    for text in ("second", "third"):
        _run(tmp_path / "latest", text)
        assert (tmp_path / "latest").is_symlink()
        assert (tmp_path / "run-1" / "report.md").read_text(encoding="utf-8") == text
        assert _leftovers(tmp_path) == []


def test_a_link_an_older_version_left_as_the_previous_copy_is_dropped(tmp_path: Path) -> None:
    _run(tmp_path / "run-1", "first")
    (tmp_path / ".out.previous").symlink_to("run-1")
    _run(tmp_path / "out", "second")
    assert not (tmp_path / ".out.previous").is_symlink()
    assert (tmp_path / "run-1" / "report.md").read_text(encoding="utf-8") == "first"


def test_a_build_into_a_linked_dataset_folder_replaces_what_the_link_points_to(
    tmp_path: Path,
) -> None:
    # datasets/jbbq -> a folder on another disk: rebuilt there, the link kept.
    elsewhere = tmp_path / "disk" / "jbbq"
    elsewhere.mkdir(parents=True)
    (elsewhere / "old.txt").write_text("old", encoding="utf-8")
    (tmp_path / "datasets").mkdir()
    (tmp_path / "datasets" / "jbbq").symlink_to(elsewhere)
    for _ in range(2):
        staging = staging_folder(tmp_path / "datasets" / "jbbq")
        (staging / "README.md").write_text("card", encoding="utf-8")
        replace_folder(staging, tmp_path / "datasets" / "jbbq")
    assert (tmp_path / "datasets" / "jbbq").is_symlink()
    assert sorted(p.name for p in elsewhere.iterdir()) == ["README.md"]


def test_an_out_name_too_long_for_the_file_system_is_one_line_before_any_work(
    tmp_path: Path,
) -> None:
    # 255 bytes is the usual limit; the staging folder beside it adds 26 characters.
    with pytest.raises(ValueError, match="the folder's name is 240 bytes; at most 229 fit"):
        ensure_writable_folder(tmp_path / ("r" * 240))
    # Japanese names count in bytes: 80 characters of 3 bytes each.
    with pytest.raises(ValueError, match="the folder's name is 240 bytes"):
        ensure_writable_folder(tmp_path / ("結" * 80))
    assert ensure_writable_folder(tmp_path / ("r" * 229)) == tmp_path / ("r" * 229)
    assert list(tmp_path.iterdir()) == []


def _word_sets(folder: Path) -> Path:
    """A weat_word_sets-format folder with one test (a score run that needs no build)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    (folder / "en").mkdir(parents=True)
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: en\n  data_files:\n  - split: test\n"
        "    path: en/test-00000-of-00001.parquet\n---\n",
        encoding="utf-8",
    )
    test = {
        "test_id": "t1",
        "target_x_name": "X",
        "target_x_words": ["x1", "x2"],
        "target_y_name": "Y",
        "target_y_words": ["y1", "y2"],
        "attribute_a_name": "A",
        "attribute_a_words": ["a"],
        "attribute_b_name": "B",
        "attribute_b_words": ["b"],
    }
    pq.write_table(pa.Table.from_pylist([test]), folder / "en" / "test-00000-of-00001.parquet")
    return folder


def test_a_full_disk_is_one_line_naming_the_file_and_keeps_the_earlier_run(
    tmp_path: Path, monkeypatch, capsys
) -> None:
    import errno
    import types

    from bias_hub.builders.shared import files
    from bias_hub.pipelines.cli import main

    vectors = {
        "x1": [1, 0.1],
        "x2": [1, 0.2],
        "y1": [0.1, 1],
        "y2": [0.2, 1],
        "a": [1, 0],
        "b": [0, 1],
    }
    predictions = tmp_path / "vectors.jsonl"
    predictions.write_text(
        "".join(json.dumps({"word": w, "vector": v}) + "\n" for w, v in vectors.items()),
        encoding="utf-8",
    )
    argv = ["score", "weat", "--predictions", str(predictions), "--dataset"]
    argv += [str(_word_sets(tmp_path / "sets")), "--out", str(tmp_path / "out")]
    argv += ["--confidence-level", "none"]
    assert main(argv) == 0
    earlier = (tmp_path / "out" / "results.json").read_bytes()

    class FullDisk:
        """A file whose every write fails as on a full disk (the error names no file)."""

        def __init__(self, fd: int, mode: str) -> None:
            self.handle = os.fdopen(fd, mode)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            self.handle.close()

        def write(self, data) -> None:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    # Only the project's writer sees the full disk (libraries keep writing their caches).
    full = types.SimpleNamespace(**{n: getattr(os, n) for n in dir(os) if not n.startswith("__")})
    full.fdopen = FullDisk
    monkeypatch.setattr(files, "os", full)
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("bias-hub: error: ") and "results.json: No space left on device" in err
    assert (tmp_path / "out" / "results.json").read_bytes() == earlier
    assert _leftovers(tmp_path) == []
