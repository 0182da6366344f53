"""Entries put side by side: groups that compare, columns that read one way, ranks that say
where the evidence stops.

Rows share a table only when they share ``Entry.group`` (benchmark, dataset build, split,
preset, answer reader). A rank is a range, from 1 + the rows clearly better to n - the rows
clearly worse: a paired permutation test, Holm-corrected over the table, for two runs that
answered the same questions; intervals that do not overlap for any others (docs/leaderboard.md).
A paper's printed values sit in each comparable table, labelled, and are never ranked.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass, field

from bias_hub.builders.shared.benchmark import Task, find_task
from bias_hub.builders.shared.benchmark import benchmark as benchmark_declaration
from bias_hub.pipelines.jbbq.score_paths import SCORE_PATHS
from bias_hub.pipelines.leaderboard.entries import Entry, Score

__all__ = ["Board", "Row", "boards", "clearly_better", "goodness", "rank_ranges"]

# bbq_bias's arguments -> the question columns a paired test reads from each run's predictions.
_COLUMNS = {
    argument: name
    for argument, name in SCORE_PATHS[0].dataset_columns.items()
    if argument != "templates"
}


@dataclass
class Row:
    entry: Entry
    # {task id: (best rank, worst rank)}; absent where the row has no value or is a paper's
    ranks: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass
class Board:
    """One table: rows that compare, columns in the benchmark's task order."""

    benchmark: str
    label: dict  # what the rows share: dataset (fingerprint, kind), split, preset, answer reader
    columns: list[Task]
    rows: list[Row]
    paired_tests: int = 0


def goodness(task: Task, value: float) -> float:
    """Larger is better."""
    return {"high": value, "low": -value, "zero": -abs(value)}[task.best]


def _bounds(task: Task, score: Score) -> tuple[float, float] | None:
    """The interval in the column's reading (a size for a score best at 0), or None."""
    if score.low is None or score.high is None:
        return None
    if task.best != "zero":
        return score.low, score.high
    if score.low <= 0 <= score.high:
        return 0.0, max(-score.low, score.high)
    return tuple(sorted((abs(score.low), abs(score.high))))


def clearly_better(task: Task, a: Score, b: Score, p_holm: float | None, alpha: float) -> bool:
    """Whether ``a`` beats ``b`` beyond doubt: by a paired test where one was run (for a score
    best at 0, only where neither value has the other's opposite sign, so that the difference is
    one of size), or by intervals that do not overlap."""
    if goodness(task, a.value) <= goodness(task, b.value):
        return False
    if p_holm is not None and (task.best != "zero" or a.value * b.value >= 0) and p_holm < alpha:
        return True
    bounds_a, bounds_b = _bounds(task, a), _bounds(task, b)
    if bounds_a is None or bounds_b is None:
        return False
    if task.best == "high":
        return bounds_a[0] > bounds_b[1]
    return bounds_a[1] < bounds_b[0]


def rank_ranges(
    task: Task,
    scores: list[Score],
    p_holm: dict[tuple[int, int], float] | None = None,
    alpha: float = 0.05,
) -> list[tuple[int, int]]:
    """Each score's rank range among ``scores`` (``p_holm[(i, j)]``: the corrected p-value of a
    paired test of rows i and j, either order)."""
    p_holm = p_holm or {}
    n = len(scores)
    better = [[False] * n for _ in range(n)]
    for i, j in itertools.permutations(range(n), 2):
        p = p_holm.get((i, j), p_holm.get((j, i)))
        better[i][j] = clearly_better(task, scores[i], scores[j], p, alpha)
    return [
        (1 + sum(better[j][i] for j in range(n)), n - sum(better[i][j] for j in range(n)))
        for i in range(n)
    ]


def _items(entry: Entry) -> dict | None:
    """``{(category, example_id): row}`` of the entry's questions with its answers, or None."""
    if entry.items is None or not entry.items[0].is_file():
        return None
    path, chosen = entry.items
    found = {}
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            row = json.loads(line)
            if all(row.get(k) == v for k, v in chosen.items()):
                found[(row["category"], str(row["example_id"]))] = row
    return found or None


def _paired(board: Board, confidence_level: float, n_resamples: int, seed: int) -> dict:
    """``{(task id, i, j): Holm-corrected p}`` for every two ranked rows that answered the same
    questions, on the tasks of the whole test set (a bbq_bias benchmark's headline scores)."""
    from bias_hub.pipelines.common import metric_scores
    from bias_hub.pipelines.common.stats import holm

    ranked = [i for i, row in enumerate(board.rows) if row.entry.paper is None]
    items = {i: _items(board.rows[i].entry) for i in ranked}
    pairs = [
        (i, j)
        for i, j in itertools.combinations(ranked, 2)
        if items[i]
        and items[j]
        and items[i].keys() == items[j].keys()
        and all(items[i][k][c] == items[j][k][c] for k in items[i] for c in _COLUMNS.values())
    ]
    headline = [t for t in board.columns if t.config == "all" and t.metric == "bbq_bias"]
    if not pairs or not headline:
        return {}
    metric = metric_scores("bbq_bias", None, "paired")
    tests: list[tuple[str, int, int]] = []
    p_values: list[float | None] = []
    for i, j in pairs:
        keys = sorted(items[i])
        a, b = items[i], items[j]
        result = metric.compute(
            predictions=[int(a[k]["prediction"]) for k in keys],
            predictions_b=[int(b[k]["prediction"]) for k in keys],
            **{argument: [a[k][name] for k in keys] for argument, name in _COLUMNS.items()},
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
        )
        for task in headline:
            tests.append((task.id, i, j))
            p_values.append(result["scores"][task.score]["p_value"])
    board.paired_tests = sum(p is not None for p in p_values)
    return {test: p for test, p in zip(tests, holm(p_values), strict=True) if p is not None}


def _columns(benchmark: str, entries: list[Entry]) -> list[Task]:
    """The benchmark's tasks some entry has a value of: its headline tasks in eval.yaml's
    order, then each category's, categories in the order they come."""
    found = {}
    for entry in entries:
        for task_id in entry.scores:
            task = find_task(benchmark, task_id)
            if task is not None:
                found.setdefault(task_id, task)
    order = [item["id"] for item in benchmark_declaration(benchmark)["tasks"]]
    categories = list(dict.fromkeys(t.category for t in found.values() if t.category))
    return sorted(
        found.values(),
        key=lambda t: (
            categories.index(t.category) + 1 if t.category else 0,
            order.index(t.id[: len(t.id) - len(t.category) - 1] if t.category else t.id),
        ),
    )


def boards(
    entries: list[Entry],
    confidence_level: float | None = 0.95,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[Board]:
    """The tables of ``entries``: one per comparable group, a paper's rows added, labelled, to
    every group of its benchmark (and alone where there is none). ``confidence_level`` None:
    no paired tests (rows compared by their intervals alone)."""
    alpha = round(1 - (confidence_level or 0.95), 10)
    ours = [e for e in entries if e.paper is None]
    papers = [e for e in entries if e.paper is not None]
    groups: dict[tuple, list[Entry]] = {}
    for entry in ours:
        groups.setdefault(entry.group, []).append(entry)
    for entry in papers:
        if not any(key[0] == entry.benchmark for key in groups):
            groups.setdefault((entry.benchmark, None, None, None, None), [])
    found = []
    for key, members in groups.items():
        rows = members + [e for e in papers if e.benchmark == key[0]]
        first = members[0] if members else rows[0]
        board = Board(
            benchmark=key[0],
            label={
                "dataset": key[1],
                "dataset_kind": first.dataset_kind if members else None,
                "dataset_detail": first.dataset_detail if members else "",
                "split": key[2],
                "preset": key[3],
                "answer_reader": key[4],
            },
            columns=_columns(key[0], rows),
            rows=[Row(entry) for entry in rows],
        )
        p_holm = (
            _paired(board, confidence_level, n_resamples, seed)
            if confidence_level and len(members) > 1
            else {}
        )
        for task in board.columns:
            ranked = [
                i
                for i, row in enumerate(board.rows)
                if row.entry.paper is None and task.id in row.entry.scores
            ]
            pairs = {
                (ranked.index(i), ranked.index(j)): p
                for (task_id, i, j), p in p_holm.items()
                if task_id == task.id
            }
            scores = [board.rows[i].entry.scores[task.id] for i in ranked]
            for i, ranks in zip(ranked, rank_ranges(task, scores, pairs, alpha), strict=True):
                board.rows[i].ranks[task.id] = ranks
        board.rows.sort(key=lambda row: _order(board, row))
        found.append(board)
    return found


def _order(board: Board, row: Row) -> tuple:
    """Papers' rows last; then by the first column's rank and value."""
    if not board.columns:
        return (row.entry.paper is not None, 0, 0.0)
    first = board.columns[0]
    score = row.entry.scores.get(first.id)
    return (
        row.entry.paper is not None,
        row.ranks.get(first.id, (10**9,))[0],
        -goodness(first, score.value) if score else float("inf"),
    )
