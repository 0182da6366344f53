"""``bias-hub leaderboard SOURCE... --out DIR``: runs of any part and origin side by side,
written through one ``RunFolder`` as ``leaderboard.json`` (one record per row),
``leaderboard.md`` and ``leaderboard.html`` (a static, sortable page).
"""

from __future__ import annotations

import logging
from pathlib import Path

from bias_hub.pipelines.common import RunFolder
from bias_hub.pipelines.common.render import render
from bias_hub.pipelines.leaderboard.entries import Entry, read_entries
from bias_hub.pipelines.leaderboard.ranking import Board, boards, goodness
from bias_hub.pipelines.leaderboard.settings import Settings

__all__ = ["Settings", "records", "run"]

log = logging.getLogger(__name__)


def table_label(board: Board) -> str:
    """What a table's rows share, in words."""
    label = board.label
    if label["dataset"] is None and label["split"] is None:
        return f"{board.benchmark}: the papers' printed values"
    kind = label.get("dataset_kind")
    kind = f" ({kind})" if kind not in (None, "unknown") else ""
    parts = [
        f"dataset {label['dataset'] or 'unknown'}{kind}",
        f"split {label['split'] or 'unknown'}",
        f"preset {label['preset'] or 'none'}",
        f"answer reader {label['answer_reader'] or 'none'}",
    ]
    return f"{board.benchmark}: " + ", ".join(parts)


_READS = {"high": "higher is better", "low": "lower is better", "zero": "best at 0, by its size"}
_ARROWS = {"high": "↑", "low": "↓", "zero": "→0"}


def _cell(entry: Entry, task, ranks: dict) -> dict:
    """A value with its interval and rank (`` (2–3)``, `` (as printed)``) and its sort order."""
    score = entry.scores.get(task.id)
    if score is None:
        return {"value": None, "interval": None, "rank": "", "order": ""}
    rank = ""
    if entry.paper is not None:
        rank = " (as printed)"
    elif task.id in ranks:
        best, worst = ranks[task.id]
        rank = f" ({best})" if best == worst else f" ({best}–{worst})"
    return {
        "value": score.value,
        "interval": {"low": score.low, "high": score.high},
        "rank": rank,
        "order": goodness(task, score.value),
    }


def view(tables: list[Board]) -> list[dict]:
    """What the templates lay out: per table its title, what its rows share (``label``) and its
    columns in groups by config (``all`` first, then each category), each with its rows."""
    found = []
    for board in tables:
        groups = []
        for config in dict.fromkeys(task.config for task in board.columns):
            columns = [task for task in board.columns if task.config == config]
            rows = [row for row in board.rows if any(t.id in row.entry.scores for t in columns)]
            groups.append(
                {
                    "config": config,
                    "columns": [
                        {"id": t.id, "arrow": _ARROWS[t.best], "reads": _READS[t.best]}
                        for t in columns
                    ],
                    "rows": [
                        {
                            "model": row.entry.model,
                            # what the table shares is said once, above it
                            "setting": row.entry.setting_label(
                                ("answer_reader", "preset", "split")
                            ),
                            "origin": row.entry.origin,
                            "paper": row.entry.paper is not None,
                            "cells": [_cell(row.entry, task, row.ranks) for task in columns],
                        }
                        for row in rows
                    ],
                }
            )
        label = dict(board.label, paired_tests=board.paired_tests)
        found.append({"title": table_label(board), "label": label, "groups": groups})
    return found


def _record(number: int, board: Board, entry: Entry, ranks: dict) -> dict:
    model = entry.model_record
    setting = entry.setting
    return {
        "benchmark": board.benchmark,
        "table": number,
        "table_label": table_label(board),
        "model": entry.model,
        "model_id": model.get("id"),
        "model_revision": model.get("resolved") or model.get("revision"),
        "model_fingerprint": model.get("sha256"),
        "model_api": model.get("api"),
        "origin": entry.origin,
        "run": entry.run,
        "date": entry.date,
        "paper": entry.paper,
        "partial": entry.partial,
        "dataset_fingerprint": entry.dataset,
        "dataset_kind": entry.dataset_kind,
        **{
            key: setting.get(key)
            for key in "prompt layout scoring answer_reader preset split config shots".split()
        },
        "departures": list(entry.departures),
        "scores": [
            {
                "task": task.id,
                "config": task.config,
                "value": entry.scores[task.id].value,
                "low": entry.scores[task.id].low,
                "high": entry.scores[task.id].high,
                "rank_best": ranks[task.id][0] if task.id in ranks else None,
                "rank_worst": ranks[task.id][1] if task.id in ranks else None,
            }
            for task in board.columns
            if task.id in entry.scores
        ],
    }


def records(tables: list[Board]) -> list[dict]:
    """leaderboard.json: one flat record per row of every table (the scores a list of
    ``{task, config, value, low, high, rank_best, rank_worst}``)."""
    return [
        _record(number, board, row.entry, row.ranks)
        for number, board in enumerate(tables, start=1)
        for row in board.rows
    ]


def run(sources: list[str | Path], out_dir: str | Path, settings: Settings) -> list[Board]:
    """Read, rank and write the leaderboard; return its tables."""
    if not sources:
        raise ValueError("give at least one run folder, lm-eval results file or study:NAME")
    with RunFolder(out_dir) as out:
        entries = [entry for source in sources for entry in read_entries(source)]
        tables = boards(
            entries,
            confidence_level=settings.confidence_level,
            n_resamples=settings.n_resamples,
            seed=settings.seed,
        )
        out.write_json("leaderboard.json", records(tables))
        context = {"boards": view(tables), "sources": [str(source) for source in sources]}
        for name in ("leaderboard.md", "leaderboard.html"):
            out.write_text(name, render(f"leaderboard/templates/{name}.j2", **context))
    log.info(
        "wrote %s: %d rows in %d tables (leaderboard.md, leaderboard.html, leaderboard.json)",
        out_dir,
        sum(len(t.rows) for t in tables),
        len(tables),
    )
    return tables
