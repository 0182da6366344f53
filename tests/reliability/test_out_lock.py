"""One run at a time per ``--out``.

Two ``jbbq evaluate ... --out X`` started together both reported success and one result
silently replaced the other. Now the second is refused while the first runs, naming the
first (pid and command); a lock left by a killed run is taken over; the lock goes away when
a run succeeds, fails or is interrupted.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bias_hub.pipelines.cli import main
from bias_hub.pipelines.common.run_folder import RunFolder

REPO = Path(__file__).resolve().parents[2]

# A run that holds its RunFolder until told to stop (a file appears), then commits or fails.
HOLDER = """
import signal, sys, time
# Ctrl-C as a terminal delivers it, whatever this process inherited (an ignored SIGINT stays
# ignored across exec).
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
from bias_hub.pipelines.common.run_folder import RunFolder
out, go, outcome = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
with RunFolder(out) as run:
    run.write_text("who.txt", "holder")
    print("holding", flush=True)
    while not go.exists():
        time.sleep(0.05)
    if outcome == "fail":
        raise ValueError("failed on purpose")
"""


def _hold(out: Path, tmp_path: Path, outcome: str = "commit") -> tuple[subprocess.Popen, Path]:
    go = tmp_path / f"go-{out.name}"
    process = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(out), str(go), outcome, "--the-holder-s-flag"],
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline().strip() == "holding", process.stderr.read()
    return process, go


def _lock_file(out: Path) -> Path:
    return out.parent / f".{out.name}.lock"


def test_a_second_run_on_the_same_out_is_refused_naming_the_first(tmp_path: Path, capsys) -> None:
    out = tmp_path / "out"
    holder, go = _hold(out, tmp_path)
    try:
        with pytest.raises(ValueError) as refused:
            RunFolder(out)
        message = str(refused.value)
        assert message.startswith(
            f"--out {out}: another run is writing this folder (pid {holder.pid}, started "
        )
        assert "--the-holder-s-flag" in message
        assert message.endswith("wait for it to finish or give another --out")
        # From the command line: exit 2, one line, before any model is loaded.
        assert main(["nli", "evaluate", "--model", "no/such-model", "--out", str(out)]) == 2
        assert f"another run is writing this folder (pid {holder.pid}" in capsys.readouterr().err
    finally:
        go.touch()
        holder.wait(timeout=60)
    assert holder.returncode == 0
    assert (out / "who.txt").read_text() == "holder"
    assert not _lock_file(out).exists()


def test_the_lock_of_a_dead_run_is_taken_over(tmp_path: Path) -> None:
    out = tmp_path / "out"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    _lock_file(out).parent.mkdir(parents=True, exist_ok=True)
    _lock_file(out).write_text(
        json.dumps({"pid": int(dead.stdout), "command": "bias-hub killed", "started": "then"})
    )
    with RunFolder(out) as run:
        record = json.loads(_lock_file(out).read_text())
        assert record["pid"] == os.getpid()
        run.write_text("a.txt", "mine")
    assert (out / "a.txt").read_text() == "mine"
    assert not _lock_file(out).exists()


def test_the_lock_is_released_when_a_run_fails(tmp_path: Path) -> None:
    out = tmp_path / "out"
    holder, go = _hold(out, tmp_path, outcome="fail")
    go.touch()
    holder.wait(timeout=60)
    assert holder.returncode == 1
    assert not _lock_file(out).exists()
    with RunFolder(out) as run:
        run.write_text("a.txt", "next")


def test_the_lock_is_released_on_ctrl_c(tmp_path: Path) -> None:
    out = tmp_path / "out"
    holder, _ = _hold(out, tmp_path)
    holder.send_signal(signal.SIGINT)
    holder.wait(timeout=60)
    assert "KeyboardInterrupt" in holder.stderr.read()
    assert not _lock_file(out).exists()
    assert not out.exists()
    with RunFolder(out) as run:
        run.write_text("a.txt", "next")


def test_a_killed_run_s_lock_does_not_stop_the_next(tmp_path: Path) -> None:
    out = tmp_path / "out"
    holder, _ = _hold(out, tmp_path)
    holder.kill()
    holder.wait(timeout=60)
    assert _lock_file(out).exists()  # SIGKILL leaves the file, not the lock
    started = time.monotonic()
    with RunFolder(out) as run:
        run.write_text("a.txt", "next")
    assert time.monotonic() - started < 5
    assert (out / "a.txt").read_text() == "next"


def test_runs_on_different_folders_do_not_wait_for_each_other(tmp_path: Path) -> None:
    holder, go = _hold(tmp_path / "one", tmp_path)
    try:
        with RunFolder(tmp_path / "two") as run:
            run.write_text("a.txt", "two")
    finally:
        go.touch()
        holder.wait(timeout=60)
    assert (tmp_path / "one" / "who.txt").is_file() and (tmp_path / "two" / "a.txt").is_file()
