"""``make datasets`` never modifies a tracked file.

On a fresh clone ``make datasets`` once rewrote ``datasets/stereoset_gender_swap/README.md``
(604 -> 580 pairs offline), and the folder's card and Parquet then disagreed. In ``make test``,
the cards ``bias-hub build all`` writes (into the suite's shared build, seeded with the
committed cards as a clone's ``datasets/`` is) must be the committed ones, byte for byte; in
``make test-all`` the repository is cloned (its committed state, as a user gets it), ``build
all`` runs in the clone offline, and ``git status --porcelain`` must be empty. That every other
writer (the demo's parts, every pipeline command) writes only under its ``--out`` is checked by
the whole suite: tests/conftest.py fails a run that leaves a file in the checkout.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from checkout_copies import pythonpath_for

REPO = Path(__file__).resolve().parents[2]
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "MPLBACKEND": "Agg",
}


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    if shutil.which("git") is None or not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    target = tmp_path_factory.mktemp("clone") / "bias-hub"
    subprocess.run(
        ["git", "clone", "--quiet", "--no-hardlinks", str(REPO), str(target)], check=True
    )
    return target


def _bias_hub(clone: Path, *argv: str, timeout: float) -> subprocess.CompletedProcess:
    # The clone's own code (PYTHONPATH first), the cache of the machine (models, wheels).
    env = dict(os.environ, **OFFLINE, PYTHONPATH=pythonpath_for(clone))
    return subprocess.run(
        [sys.executable, "-m", "bias_hub", *argv],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _changed(clone: Path) -> list[str]:
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=clone, capture_output=True, text=True, check=True
    )
    return status.stdout.splitlines()


def test_build_all_writes_the_committed_cards_byte_for_byte(built_datasets: Path) -> None:
    committed = {card.parent.name: card for card in (REPO / "datasets").glob("*/README.md")}
    built = {card.parent.name: card for card in built_datasets.glob("*/README.md")}
    assert committed and set(built) == set(committed)
    assert [
        name for name, card in committed.items() if built[name].read_bytes() != card.read_bytes()
    ] == []


@pytest.mark.slow
def test_make_datasets_leaves_every_tracked_file_as_committed(clone: Path) -> None:
    done = _bias_hub(clone, "build", "all", timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    assert list(clone.glob("datasets/*/*/*.parquet")), "build all wrote no Parquet file"
    assert _changed(clone) == []
