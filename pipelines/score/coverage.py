"""How much of its task or dataset a predictions file answers, checked before anything is scored.

A file cut short (a killed run, a copy stopped half-way) would score without a murmur, so each
score run counts what the predictions answer against what they should: an lm-eval task's
questions (``n-samples`` of the results file beside the samples, and each ``doc_id`` once), an
Inspect task's samples (the log header's ``eval.dataset.samples``; every epoch of a sample
counts once), else the dataset config's rows, by id. Less than all of it is an error unless
``--allow-partial`` (docs/scoring.md): only the user knows whether a partial score is the one
they meant.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bias_hub.builders.shared.files import read_text

__all__ = [
    "Coverage",
    "check",
    "dataset_coverage",
    "inspect_coverage",
    "lm_eval_coverage",
    "repeated_samples",
    "unknown_coverage",
]

log = logging.getLogger(__name__)
_SHOWN = 5
# samples_<task>_<date>.jsonl, the date as lm-eval writes it (isoformat, ':' as '-').
_SAMPLES_NAME = re.compile(
    r"^samples_(?P<task>.+)_(?P<date>\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?)\.jsonl$"
)


@dataclass
class Coverage:
    """``answered`` of ``expected`` items (None: unknown), counted ``against`` what."""

    answered: int
    expected: int | None
    against: str
    unit: str = "questions"
    missing: list[str] = field(default_factory=list)
    allowed_partial: bool = False
    # What to do when ``expected`` is unknown.
    remedy: str = (
        "keep the samples file in the folder lm-eval wrote it to, or give --dataset to count "
        "against a dataset"
    )

    @property
    def complete(self) -> bool:
        return self.expected is not None and self.answered >= self.expected

    def describe(self) -> str:
        if self.expected is None:
            return f"{self.answered} {self.unit} answered; how many {self.against}"
        share = self.answered / self.expected if self.expected else 0.0
        shown = ", ".join(self.missing[:_SHOWN])
        missing = (
            f"; missing {shown}{', ...' if self.expected - self.answered > _SHOWN else ''}"
            if shown and not self.complete
            else ""
        )
        return (
            f"{self.answered} of {self.expected} {self.unit} ({share:.1%}) of {self.against}"
            f"{missing}"
        )

    def record(self) -> dict:
        return {
            "answered": self.answered,
            "expected": self.expected,
            "complete": self.complete,
            "against": self.against,
            "unit": self.unit,
            "missing_examples": self.missing[:_SHOWN],
            "allowed_partial": self.allowed_partial and not self.complete,
        }


def dataset_coverage(
    answered_rows: Sequence[dict], rows: Sequence[dict], key: Callable[[dict], Hashable], where: str
) -> Coverage:
    """The dataset rows (by ``key``) that some prediction answers, of all of them."""
    answered = {key(row) for row in answered_rows}
    expected = list(dict.fromkeys(key(row) for row in rows))
    missing = [_shown(k) for k in expected if k not in answered][:_SHOWN]
    return Coverage(len(answered), len(expected), where, "dataset rows", missing)


def _shown(key: Hashable) -> str:
    return "/".join(map(str, key)) if isinstance(key, tuple) else str(key)


def _sample_ids(path: Path) -> list[tuple[int, object, object]]:
    """``(line, doc_id, filter)`` of every sample of an lm-eval samples file."""
    ids = []
    for number, line in enumerate(read_text(path).split("\n"), start=1):
        if line.strip():
            sample = json.loads(line)  # already read once: it parses
            ids.append((number, sample.get("doc_id"), sample.get("filter")))
    return ids


def repeated_samples(path: Path) -> None:
    """A ValueError naming the samples file and the lines where one question (``doc_id``) is
    answered twice: the file's fault (two runs appended, several filters logged), not the
    dataset's."""
    seen: dict = {}
    filters: dict = {}  # filter -> its first line
    for number, doc_id, name in _sample_ids(path):
        filters.setdefault(name, number)
        if len(filters) > 1:
            (first, line), (other, _) = list(filters.items())[:2]
            raise ValueError(
                f"--from-lm-eval {path}: lines {line} and {number} log the filters {first!r} and "
                f"{other!r}: lm-eval logs each question once per filter of its task; keep the lines "
                'of one filter (their "filter" key) and score those'
            )
        if doc_id is None:
            continue
        if doc_id in seen:
            raise ValueError(
                f"--from-lm-eval {path}: doc_id {doc_id} is answered twice (lines "
                f"{seen[doc_id]} and {number}): the samples file holds a question twice, "
                "as when two runs write into one file"
            )
        seen[doc_id] = number


def lm_eval_coverage(path: Path) -> Coverage | None:
    """The samples' ``doc_id`` against the size of their task in the results file lm-eval
    wrote beside them; None when there is no such file (renamed, or copied alone)."""
    match = _SAMPLES_NAME.match(path.name)
    if not match:
        return None
    task, date = match.group("task"), match.group("date")
    others: dict[str, list[str]] = {}  # results files of the run that do not name the task
    for results in sorted(path.parent.glob(f"*_{date}.json")):
        try:
            data = json.loads(read_text(results))
        except (ValueError, RecursionError) as err:
            raise ValueError(
                f"{results} (the lm-eval results beside --from-lm-eval {path}): not JSON ({err})"
            ) from None
        named = data.get("n-samples") if isinstance(data, dict) else None
        sizes = named.get(task) if isinstance(named, dict) else None
        if not isinstance(sizes, dict) or not isinstance(sizes.get("original"), int):
            if isinstance(named, dict) and sizes is None:
                others[results.name] = sorted(map(str, named))
            continue
        total = sizes["original"]
        ids = {doc_id for _, doc_id, _ in _sample_ids(path)}
        outside = sorted((i for i in ids if not isinstance(i, int) or not 0 <= i < total), key=str)
        if outside:
            raise ValueError(
                f"--from-lm-eval {path}: doc_id {outside[0]} is not one of the {total} questions of "
                f"task {task} in {results.name}: the samples and the results file are of different runs"
            )
        missing = [f"doc_id {i}" for i in range(total) if i not in ids][:_SHOWN]
        against = f"lm-eval task {task} ({results.name}: n-samples {sizes})"
        return Coverage(len(ids), total, against, "questions", missing)
    if others:
        name, tasks = next(iter(others.items()))
        raise ValueError(
            f"--from-lm-eval {path}: the lm-eval results beside it ({name}) are of task "
            f"{', '.join(tasks) or '(none)'}, not {task}: the samples and the results file are of "
            "different runs, or one was renamed"
        )
    return None


def inspect_coverage(path: Path) -> Coverage:
    """The samples of an Inspect AI eval log (by id, epochs counted once) against the size of
    its task's dataset in the log's header; unknown when the header does not say it."""
    from bias_hub.pipelines.score.predictions import inspect_log

    spec, samples = inspect_log(path)
    dataset = spec.get("dataset") if isinstance(spec.get("dataset"), dict) else {}
    ids = list(dict.fromkeys(sample.get("id") for sample in samples))
    total = dataset.get("samples")
    if isinstance(total, bool) or not isinstance(total, int):
        return Coverage(
            len(ids),
            None,
            f"its task holds is unknown: the header of {path.name} gives no dataset size",
            "samples",
            remedy="give --dataset to count against a dataset",
        )
    if total < max(1, len(ids)):
        raise ValueError(
            f"--from-inspect {path}: its header gives the task's dataset {total} samples "
            f"(eval.dataset.samples), but the log answers {len(ids)} distinct samples: the header "
            "and the samples are not of one run"
        )
    answered = set(ids)
    missing = [f"id {i}" for i in dataset.get("sample_ids") or [] if i not in answered][:_SHOWN]
    against = f"Inspect task {spec.get('task')} ({total} samples in its dataset)"
    return Coverage(len(answered), total, against, "samples", missing)


def unknown_coverage(path: Path, answered: int) -> Coverage:
    return Coverage(
        answered,
        None,
        f"its task holds is unknown: no lm-eval results file (results_<date>.json) beside {path.name}",
    )


def check(coverage: Coverage | None, allow_partial: bool, source: str) -> None:
    """Stop on a partial or unknown coverage unless ``allow_partial``; say it on the console."""
    if coverage is None:
        return
    coverage.allowed_partial = allow_partial
    if coverage.complete:
        log.info("coverage: %s", coverage.describe())
        return
    if not allow_partial:
        how = (
            coverage.remedy
            if coverage.expected is None
            else "a file cut short? Score the whole file"
        )
        raise ValueError(
            f"{source}: answers {coverage.describe()}; {how}, or pass --allow-partial to score "
            "what it holds (recorded as partial)"
        )
    log.warning(
        "PARTIAL (--allow-partial): %s: the scores describe these %d %s only",
        coverage.describe(),
        coverage.answered,
        coverage.unit,
    )
