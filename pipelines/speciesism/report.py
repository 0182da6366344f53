"""The speciesism report, rendered from the results alone: ``render(results, folder)`` writes
``report.md`` (the study's tables in Markdown, with intervals; ``speciesism/templates/run.md.j2``
and ``tables.md.j2``) and ``negative_share.png``. ``PAPER_LAYOUTS``: ``paper.md.j2``."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bias_hub.pipelines.common.render import (
    draw_intervals,
    macros,
    paper_layouts,
    pyplot,
    save_figure,
    write_report,
)

__all__ = ["PAPER_LAYOUTS", "chart_figure", "negative_share_markdown", "render"]

TABLES = "speciesism/templates/tables.md.j2"


def negative_share_markdown(results: dict) -> str:
    """Per animal and model, the share of negative fills, then over all animals."""
    return macros(TABLES).negative_share(results)


def chart_figure(results: dict):
    """Grouped bars: share of negative fills per animal (x) and model (colour), with intervals;
    a share of 0 gets a mark at 0, so that every animal shows something for every model."""
    plt = pyplot()

    models = results["models"]
    animals = sorted({a for m in models for a in m["sentiment"]["negative_share"]})
    width = 0.8 / max(len(models), 1)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(animals) + 2), 4))
    x = np.arange(len(animals))
    for i, model in enumerate(models):
        shares = np.array([model["sentiment"]["negative_share"].get(a, np.nan) for a in animals])
        intervals = model["sentiment"].get("confidence_intervals") or {}
        offset = x + (i - (len(models) - 1) / 2) * width
        bars = ax.bar(offset, shares, width, label=model["label"])
        draw_intervals(
            ax, offset, [intervals.get(f"negative_share.{a}") for a in animals], width / 3
        )
        ax.plot(
            offset,
            shares,
            linestyle="none",
            marker="_",
            markersize=8,
            color=bars.patches[0].get_facecolor(),
        )
    ax.set_xticks(x, animals, rotation=30, ha="right")
    ax.set_xlabel("animal (its neutral sentence's top fills)")
    ax.set_ylim(0, 1)
    ax.axhline(0.5, color="grey", linewidth=0.8, linestyle="--")
    ax.set_ylabel("share of negative fills")
    level = results["intervals"]["confidence_level"]
    bars = f"; bars: {level:.0%} intervals, fills resampled" if level else ""
    ax.set_title(f"Top fills judged negative ({results['sentiment_backend']}{bars})", fontsize=10)
    ax.legend(fontsize=8)
    return fig


def render(results: dict, folder: Path) -> None:
    """Write ``report.md`` and the chart (``results["chart"]``) into the run folder ``folder``."""
    if results.get("part") != "speciesism":
        raise ValueError(
            f"{folder}: results of part {results.get('part')!r}; expected a speciesism run"
        )
    folder = Path(folder)
    save_figure(chart_figure(results), folder / results["chart"])
    write_report(folder, "speciesism/templates/run.md.j2", results=results)


# Layouts of the study's tables (``pipelines/studies/speciesism.yaml``).
PAPER_LAYOUTS = paper_layouts(
    "speciesism/templates/paper.md.j2", "figure1", "table1", "table2", "table3", "table4"
)
