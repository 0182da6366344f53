"""The embeddings part's reports, rendered from results.json alone: ``render(results, folder)``.

Each step (``score``, ``control``, ``correlate``; see ``run.py``) writes its results.json and
calls ``render``, which writes report.md (and for ``control`` and ``correlate``
correlations.md and scatter.png); ``bias-hub report RUN`` re-renders a run folder the same
way without running anything. The text is ``embeddings/templates/`` (``tables.md.j2``, a
template per step); ``PAPER_LAYOUTS`` (``paper.md.j2``) lays our numbers beside the
RNSB-vs-WinoBias study's printed Tables 2 and 3 for ``bias-hub reproduce rnsb_winobias``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.pipelines.common.render import macros, paper_layouts, save_figure, write_report
from bias_hub.pipelines.common.stats import correlation
from bias_hub.pipelines.embeddings.correlate import (
    EXTRINSIC,
    scatter_figure,
    table2_cells,
    with_absolute_weat,
)

__all__ = [
    "PAPER_LAYOUTS",
    "correlations_markdown",
    "render",
    "scores_markdown",
    "table2_markdown",
]

TABLES = "embeddings/templates/tables.md.j2"


def scores_markdown(rows: Sequence[dict]) -> str:
    """A score per line: its value [interval], the WEAT p-value and notes."""
    return macros(TABLES, table2_cells=table2_cells).scores(rows)


def table2_markdown(rows: Sequence[dict], alpha: float = 0.05) -> str:
    """The study's Table 2 layout: rows test x direct score, columns Type 1/2 precision and
    recall gaps; Pearson r [bootstrap interval], * where Holm's adjusted p < alpha."""
    return macros(TABLES, table2_cells=table2_cells).table2(rows, alpha)


def correlations_markdown(results: dict) -> str:
    """The correlation section of a ``control`` or ``correlate`` run (correlations.md)."""
    return macros(TABLES, table2_cells=table2_cells).correlations(results)


def render(results: dict, folder: str | Path) -> None:
    """report.md and the figures of one step's run folder, from its results.json alone."""
    step, folder = results.get("step"), Path(folder)
    if results.get("part") != "embeddings" or step not in ("score", "control", "correlate"):
        raise ValueError(
            f"{folder}: results.json of part {results.get('part')!r}, step {step!r}; "
            "expected part 'embeddings' and a step of ['control', 'correlate', 'score']"
        )
    context = {"results": results, "table2_cells": table2_cells}
    if step != "score":
        context["correlations"] = correlations_markdown(results)
        atomic_write_text(folder / "correlations.md", context["correlations"] + "\n")
        members = len(results.get("members") or {})
        if step == "correlate":
            title = ""
        elif results["family"] == "paper":
            title = f"WEAT vs RNSB over the study's {members} embeddings"
        else:
            title = f"WEAT vs RNSB over {members} bias-controlled embeddings"
        _, table = with_absolute_weat(results["columns"], results["table"])
        rows = [row for row in results["correlations"] if not row["x"].startswith("abs_")]
        figure = scatter_figure(rows, table, title)
        save_figure(figure, folder / "scatter.png", tight=False, bbox_inches="tight")
    write_report(folder, f"embeddings/templates/{step}.md.j2", **context)


def _correlation_row(results: dict, x: str, y: str) -> dict | None:
    return next(
        (row for row in results.get("correlations") or [] if row["x"] == x and row["y"] == y), None
    )


def _symmetric(members: dict) -> bool:
    """Whether every reduce member has an amplify twin that differs in nothing else."""

    def twins(direction: str) -> list[str]:
        return sorted(
            repr(sorted((k, v) for k, v in m.items() if k not in {"name", "direction"}))
            for m in members.values()
            if m.get("direction") == direction
        )

    reduce = twins("reduce")
    return bool(reduce) and reduce == twins("amplify")


def _against_size(results: dict, test: str) -> float | None:
    """Pearson r of RNSB with |WEAT value| across the family: how closely RNSB follows the size
    of the bias, whatever its sign."""
    rows = list((results.get("table") or {}).values())
    weat = [row.get(f"weat_{test}") for row in rows]
    return correlation(
        [None if w is None else abs(w) for w in weat],
        [row.get(f"rnsb_attributes_{test}") for row in rows],
        "pearson",
    )["statistic"]


PAPER_LAYOUTS = paper_layouts(
    "embeddings/templates/paper.md.j2",
    "table2",
    "table3",
    EXTRINSIC=EXTRINSIC,
    correlation_row=_correlation_row,
    symmetric=_symmetric,
    against_size=_against_size,
)
