"""Every example of README.md, of the pages in docs/ and of the metric and dataset cards runs as written, offline.

A fenced ``python`` or ``bash`` block is an example. One whose first line is a marker comment
(``# needs the network``, ``# needs your data``, ``# needs a GPU``, ``# takes minutes``, each
followed by what exactly) says why it cannot run here; every other block runs:

- Python blocks run in order in one namespace per document (a later block may use what an
  earlier one made, as a reader would type them); a block of ``>>>`` lines runs as a doctest
  whose printed results are checked.
- Bash blocks run each ``bias-hub ...`` command line in this process (``bias_hub.pipelines.cli.main``);
  ``make`` lines are the suite's own entry points (``make test`` runs this file) and are left
  out; any other command in an unmarked block is an error of the document.

They run from a scratch folder laid out like the checkout: ``datasets/`` holds what
``bias-hub build all`` builds (plus WinoBias, from the test CoNLL files: its card's example
needs a built folder) and ``metrics/`` is the checkout's. Nothing is written into the checkout.
"""

from __future__ import annotations

import doctest
import re
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [
    REPO_ROOT / "README.md",
    *sorted(REPO_ROOT.glob("docs/*.md")),
    *sorted(REPO_ROOT.glob("metrics/*/README.md")),
    *sorted(REPO_ROOT.glob("datasets/*/README.md")),
]
MARKER = re.compile(r"^# (needs the network|needs your data|needs a GPU|takes minutes)\b")
FENCE = re.compile(r"^```(\w*)\s*$")
RUNNABLE = ("python", "bash")


@dataclass
class Block:
    document: Path
    line: int  # of the opening fence, 1-based
    language: str
    text: str

    @property
    def where(self) -> str:
        return f"{self.document.relative_to(REPO_ROOT)}:{self.line}"

    @property
    def marker(self) -> str | None:
        first = self.text.lstrip("\n").splitlines()[0] if self.text.strip() else ""
        found = MARKER.match(first.strip())
        return found.group(1) if found else None


def code_blocks(path: Path) -> list[Block]:
    """The fenced blocks of a Markdown file, with their language and opening line."""
    blocks, current, start, language = [], None, 0, ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        fence = FENCE.match(line)
        if current is None and fence:
            current, start, language = [], number, fence.group(1)
        elif current is not None and line.strip() == "```":
            blocks.append(Block(path, start, language, "\n".join(current) + "\n"))
            current = None
        elif current is not None:
            current.append(line)
    assert current is None, f"{path}: a code block opened at line {start} is never closed"
    return blocks


def commands(text: str) -> list[str]:
    """The command lines of a bash block: continuations joined, comments and blanks dropped."""
    joined = re.sub(r"\s*\\\n\s*", " ", text)
    return [
        line.strip()
        for line in joined.splitlines()
        if line.strip() and not line.strip().startswith("#")
    ]


# --- the extraction itself ------------------------------------------------------------------


def test_blocks_markers_and_commands_are_read_as_written(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "text\n\n```python\nx = 1\n```\n\n```bash\n# needs the network: the paper's models\n"
        "bias-hub speciesism --preset paper \\\n    --out r   # the paper\n```\n\n```\nlayout\n```\n",
        encoding="utf-8",
    )
    python, bash, plain = code_blocks(page)
    assert (python.line, python.language, python.text, python.marker) == (
        3,
        "python",
        "x = 1\n",
        None,
    )
    assert (bash.line, bash.marker) == (7, "needs the network")
    assert commands(bash.text) == ["bias-hub speciesism --preset paper --out r   # the paper"]
    assert plain.language == ""


# --- the examples ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def scratch(tmp_path_factory, winobias_source: Path, built_datasets: Path) -> Path:
    """A folder laid out like the checkout, with every dataset an example reads built (a copy
    of the suite's shared build: examples rebuild some)."""
    from bias_hub.builders.winobias import build as build_winobias

    root = tmp_path_factory.mktemp("docs")
    (root / "metrics").symlink_to(REPO_ROOT / "metrics")
    shutil.copytree(built_datasets, root / "datasets")
    build_winobias(root / "datasets", source=winobias_source)
    return root


class _Collecting(doctest.DocTestRunner):
    """A doctest runner that keeps each failure as one line naming the document and line."""

    def __init__(self, where: str) -> None:
        super().__init__(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
        self.where, self.problems = where, []

    def report_failure(self, out, test, example, got) -> None:
        self.problems.append(
            f"{self.where}: {example.source.strip()!r} gave {got.strip()!r}, "
            f"the document says {example.want.strip()!r}"
        )

    def report_unexpected_exception(self, out, test, example, exc_info) -> None:
        self.problems.append(f"{self.where}: {example.source.strip()!r} raised {exc_info[1]!r}")


def _run_python(block: Block, namespace: dict) -> None:
    if ">>>" in block.text:
        test = doctest.DocTestParser().get_doctest(
            block.text, namespace, block.where, str(block.document), block.line
        )
        runner = _Collecting(block.where)
        runner.run(test, clear_globs=False)
        namespace.update(test.globs)  # DocTest works on a copy: later blocks use its names
        assert not runner.problems, "\n".join(runner.problems)
        return
    try:
        exec(compile(block.text, block.where, "exec"), namespace)  # the document's own example
    except Exception as err:
        raise AssertionError(
            f"{block.where}: the example fails offline: {type(err).__name__}: {err}"
        ) from err


def _run_bash(block: Block) -> None:
    from bias_hub.pipelines.cli import main

    for line in commands(block.text):
        argv = shlex.split(line, comments=True)
        if argv[0] == "make":
            continue
        assert argv[0] == "bias-hub", (
            f"{block.where}: `{line}` is not a bias-hub command; run it here or mark the block "
            "(# needs the network / needs your data / needs a GPU / takes minutes)"
        )
        assert main([*argv[1:], "-q"]) == 0, f"{block.where}: `{line}` failed"


# The manual's examples (README.md, docs/) run every part on its stand-ins (about 30 s on 2
# cores): make test-all; the cards' run in make test.
@pytest.mark.parametrize(
    "document",
    [
        pytest.param(d, marks=pytest.mark.slow)
        if d.parent in (REPO_ROOT, REPO_ROOT / "docs")
        else d
        for d in DOCUMENTS
    ],
    ids=lambda p: str(p.relative_to(REPO_ROOT)),
)
def test_document_examples_run_offline(
    document: Path, scratch: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bias_hub.pipelines.common import locations

    monkeypatch.chdir(scratch)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # The scratch folder stands for the checkout: builds and reads go to its datasets/.
    monkeypatch.setattr(locations, "default_datasets_root", lambda: scratch / "datasets")
    monkeypatch.setattr(locations, "default_metrics_root", lambda: scratch / "metrics")
    namespace: dict = {"__name__": "__docs__"}
    blocks = [b for b in code_blocks(document) if b.language in RUNNABLE]
    if not blocks:
        pytest.skip(f"{document.relative_to(REPO_ROOT)} has no example")
    failures = []
    for block in blocks:
        if block.marker:
            continue
        try:
            if block.language == "python":
                _run_python(block, namespace)
            else:
                _run_bash(block)
        except AssertionError as err:  # every broken example of the document, not the first only
            failures.append(str(err).splitlines()[0] if str(err) else block.where)
    assert not failures, "\n".join(failures)


def test_only_examples_that_cannot_run_here_are_marked() -> None:
    """A marker is a promise that the block needs something this machine lacks, with what."""
    for document in DOCUMENTS:
        for block in code_blocks(document):
            if block.marker:
                first = block.text.lstrip("\n").splitlines()[0]
                assert re.match(r"^# [^:]+: \S", first), (
                    f"{block.where}: say what it needs after the marker (`{first}`), e.g. "
                    "`# needs the network: downloads bert-large-uncased`"
                )
