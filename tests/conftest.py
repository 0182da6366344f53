"""Shared test set-up: offline by default, repository root as the working directory."""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from checkout_copies import checkout_files
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
# One thread per process (torch reads it at import; subprocesses inherit it): on a loaded
# 2-core machine, two threads ran tiny models 12-100x slower, and make test runs two workers.
os.environ.setdefault("OMP_NUM_THREADS", "1")

REPO_ROOT = Path(__file__).resolve().parents[1]


# --- the checkout is left as the suite found it ------------------------------------------

_CHECKOUT = pytest.StashKey[set]()


def pytest_sessionstart(session: pytest.Session) -> None:
    if not hasattr(session.config, "workerinput"):  # the run itself, not an xdist worker
        session.config.stash[_CHECKOUT] = checkout_files()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Every writer a test runs writes under its --out / --out-root (a temporary folder), never
    into the checkout, whatever the working directory: a file that appeared in the checkout or
    left it during the run fails the run, named."""
    before = session.config.stash.get(_CHECKOUT, None)
    if before is None:
        return
    after = checkout_files()
    changed = [f"+ {name}" for name in sorted(after - before)]
    changed += [f"- {name}" for name in sorted(before - after)]
    if changed:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        reporter.write_line(
            "the run changed the checkout's files (a writer ignored its --out, or a file was "
            "added or removed by hand during the run):\n  " + "\n  ".join(changed),
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# --- every dataset `bias-hub build all` builds, once per run ---------------------------------


@pytest.fixture(scope="session")
def built_datasets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A datasets root as `bias-hub build all` leaves a clean clone's: the checkout's committed
    cards, then every dataset built with its defaults. Built once per run (the xdist workers
    share it through their common temporary folder). Read it; copy what a test would change."""
    from filelock import FileLock

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent
    root, done = shared / "built" / "datasets", shared / "built" / "done"
    with FileLock(str(shared / "built.lock")):
        if not done.exists():
            from bias_hub.pipelines.cli import main

            for card in (REPO_ROOT / "datasets").glob("*/README.md"):
                (root / card.parent.name).mkdir(parents=True)
                shutil.copy2(card, root / card.parent.name / "README.md")
            assert main(["build", "all", "--out-root", str(root), "-q"]) == 0
            done.touch()
    return root


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
def _results_json_contract() -> Iterator[None]:
    """Every results.json a run folder writes during the tests has the one shape
    (tests/results_contract.py): the test whose run wrote another fails, naming it."""
    from results_contract import STRAY_KEYS, check_results

    from bias_hub.pipelines.common.run_folder import RunFolder

    write_json = RunFolder.write_json

    def checked(self: RunFolder, name: str, data) -> Path:
        # A part's results.json (it names the part or the step, or records intervals); a test
        # that writes a results.json of its own through a run folder is not one.
        if name == "results.json" and {"part", "step", *STRAY_KEYS, "intervals"} & set(data):
            check_results(data)
        return write_json(self, name, data)

    RunFolder.write_json = checked
    try:
        yield
    finally:
        RunFolder.write_json = write_json


@pytest.fixture(autouse=True, scope="session")
def _one_blas_thread():
    """One BLAS thread for every test: on a loaded 2-core machine the metrics' resampling
    (small matrix products) ran 3x slower with more."""
    with threadpool_limits(limits=1):
        yield
