"""A real build killed with SIGKILL mid-write leaves the previous folder intact; the next build cleans up.

The build runs in a child process that stops at a chosen point (after the first Parquet
file of the new folder is written, or after the old folder was moved aside for the swap),
touches a marker and waits to be killed.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bias_hub.builders.speciesism_templates import NAME, build

CHILD = """
import os
import sys
import time
from pathlib import Path

import datasets

out, marker, where = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]


def wait_to_be_killed():
    marker.touch()
    time.sleep(300)
    sys.exit("not killed")


if where == "parquet":
    write = datasets.Dataset.to_parquet

    def to_parquet(self, path, *args, **kwargs):
        written = write(self, path, *args, **kwargs)
        wait_to_be_killed()
        return written

    datasets.Dataset.to_parquet = to_parquet
else:
    rename = os.replace

    def replace(source, destination):
        rename(source, destination)
        if str(destination).endswith(".previous"):
            wait_to_be_killed()

    os.replace = replace

from bias_hub.builders.speciesism_templates import build

build(out)
"""


def _contents(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def _kill_a_build(out: Path, where: str, tmp_path: Path) -> None:
    marker = tmp_path / f"reached-{where}"
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(out), str(marker), where],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 300
        while not marker.exists():
            if child.poll() is not None:
                pytest.fail(
                    f"the build ended before reaching {where}: {child.stderr.read().decode()[-2000:]}"
                )
            if time.monotonic() > deadline:
                pytest.fail(f"the build did not reach {where} within 300 s")
            time.sleep(0.05)
        os.kill(child.pid, signal.SIGKILL)
    finally:
        if child.poll() is None:
            child.kill()
        child.wait()
        child.stderr.close()
    assert child.returncode == -signal.SIGKILL


def test_killed_while_writing_parquet(tmp_path: Path) -> None:
    out = tmp_path / "datasets"
    before = _contents(build(out))

    _kill_a_build(out, "parquet", tmp_path)
    assert _contents(out / NAME) == before, "the previous folder changed under a killed build"
    leftovers = sorted(p.name for p in out.iterdir() if p.name != NAME)
    assert len(leftovers) == 1 and leftovers[0].startswith(f".{NAME}.staging-"), leftovers

    build(out)
    assert sorted(p.name for p in out.iterdir()) == [NAME]
    assert _contents(out / NAME) == before  # the same inputs build the same bytes


def test_killed_in_the_middle_of_the_swap(tmp_path: Path) -> None:
    out = tmp_path / "datasets"
    before = _contents(build(out))

    _kill_a_build(out, "swap", tmp_path)
    # Between the two renames: the old folder is aside, whole, and the new one still staged.
    assert not (out / NAME).exists()
    assert _contents(out / f".{NAME}.previous") == before
    assert any(p.name.startswith(f".{NAME}.staging-") for p in out.iterdir())

    # The next build puts the old folder back before it starts writing: killed in turn,
    # it leaves the old folder in place, not a missing one.
    _kill_a_build(out, "parquet", tmp_path)
    assert _contents(out / NAME) == before
    leftovers = sorted(p.name for p in out.iterdir() if p.name != NAME)
    assert len(leftovers) == 1 and leftovers[0].startswith(f".{NAME}.staging-"), leftovers

    build(out)
    assert sorted(p.name for p in out.iterdir()) == [NAME]
    assert _contents(out / NAME) == before
