"""Shared test set-up: offline by default, repository root as the working directory."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

for _name in (
    "HF_HUB_OFFLINE",
    "HF_DATASETS_OFFLINE",
    "HF_EVALUATE_OFFLINE",
    "TRANSFORMERS_OFFLINE",
):
    os.environ.setdefault(_name, "1")
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("MPLBACKEND", "Agg")

REPO_ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def python_sigint() -> Iterator[None]:
    """SIGINT handled as Python handles it in a process started from a terminal
    (``KeyboardInterrupt``), whatever the runner found: ``nohup make test &`` and some CI runners
    start it ignored, and a child inherits an ignored SIGINT (a handled one is reset to the
    default at exec, so a child Python handles it too). The runner's disposition is put back."""
    found = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, found)


@pytest.fixture
def repo_root(monkeypatch: pytest.MonkeyPatch) -> Path:
    """Run the test from the repository root, where `metrics/<name>` paths resolve."""
    monkeypatch.chdir(REPO_ROOT)
    return REPO_ROOT


# --- WinoBias in its CoNLL-2012 format, with sentences written for the tests -------------

# (first occupation, second occupation, pro-stereotypical pronoun, anti-stereotypical pronoun,
# which occupation the pronoun refers to: 0 the first, 1 the second)
_WINOBIAS_PEOPLE = [
    ("carpenter", "teacher", "he", "she", 0),
    ("baker", "mover", "she", "he", 0),
    ("guard", "hairdresser", "she", "he", 1),
    ("farmer", "librarian", "he", "she", 0),
    ("sheriff", "nurse", "she", "he", 1),
]


def _winobias_documents(split: str, kind: int, condition: str) -> list[tuple[str, list[str], list]]:
    label = "stereotype" if condition == "pro" else "not_stereotype"
    documents = []
    for number, (first, second, pro, anti, refers) in enumerate(_WINOBIAS_PEOPLE):
        pronoun = pro if condition == "pro" else anti
        if kind == 1:
            tokens, at = (
                ["The", first, "met", "the", second, "because", pronoun, "was", "early", "."],
                6,
            )
        else:
            tokens, at = ["The", first, "called", "the", second, "and", "thanked", pronoun, "."], 7
        antecedent = [0, 1] if refers == 0 else [3, 4]
        documents.append(
            (f"nw/{split}_type{kind}/{label}//{number}", tokens, [[antecedent, [at, at]]])
        )
    return documents


def conll_text(documents) -> str:
    """CoNLL-2012 lines (15 columns, the last the coreference tags) for (key, tokens, clusters)."""
    lines = []
    for key, tokens, clusters in documents:
        tags: list[list[str]] = [[] for _ in tokens]
        for entity, cluster in enumerate(clusters, start=1):
            for start, end in cluster:
                if start == end:
                    tags[start].append(f"({entity})")
                else:
                    tags[start].append(f"({entity}")
                    tags[end].append(f"{entity})")
        lines.append(f"#begin document ({key}); part 000")
        for position, (token, tag) in enumerate(zip(tokens, tags, strict=True)):
            columns = [
                key,
                "0",
                str(position),
                token,
                *["-"] * 5,
                "Speaker#1",
                *["*"] * 4,
                "|".join(tag) or "-",
            ]
            lines.append("\t".join(columns))
        lines += ["", "#end document"]
    return "\n".join(lines) + "\n"


@pytest.fixture(scope="session")
def winobias_source(tmp_path_factory) -> Path:
    """A corefBias-like checkout: the eight CoNLL files (5 sentences each) under
    WinoBias/wino/data/conll_format/, and a differing copy under _site/ to be ignored."""
    root = tmp_path_factory.mktemp("corefBias")
    folder = root / "WinoBias" / "wino" / "data" / "conll_format"
    decoy = root / "_site" / "WinoBias" / "wino" / "data" / "conll_format"
    for place in (folder, decoy):
        place.mkdir(parents=True)
    for split in ("dev", "test"):
        for kind in (1, 2):
            for condition in ("pro", "anti"):
                name = f"{split}_type{kind}_{condition}_stereotype.v4_auto_conll"
                (folder / name).write_text(
                    conll_text(_winobias_documents(split, kind, condition)), encoding="utf-8"
                )
                (decoy / name).write_text("not read\n", encoding="utf-8")
    return root


@pytest.fixture(scope="session")
def winobias_documents():
    """(split, type, condition) -> the fixture's documents as (key, tokens, clusters)."""
    return _winobias_documents


@pytest.fixture(scope="session")
def conll_writer():
    """``conll_text``: CoNLL-2012 text for (key, tokens, clusters) documents."""
    return conll_text


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    """One BLAS thread for every test: on a loaded 2-core machine the metrics' resampling
    (small matrix products) ran 3x slower with more."""
    with threadpool_limits(limits=1):
        yield
