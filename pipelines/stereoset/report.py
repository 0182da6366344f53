"""The run's report, rendered from its results alone: ``render(results, folder)`` writes
``report.md``, the study's Figure 2 (``figure2.png``) and the ends of the order (``plot.png``)
from ``results.json`` and the run's ``words.jsonl`` / ``top_words.jsonl``, so a report can be
rendered again from a run folder without running the models. The text is
``stereoset/templates/`` (``attention.md.j2``; ``tables.md.j2``, which the figures' titles and
the demo use too; ``paper.md.j2``, the study's Figure 2 layout)."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from bias_hub.builders.shared.sources import read_json_lines
from bias_hub.builders.shared.text import with_interval
from bias_hub.pipelines.common.render import (
    draw_intervals,
    macros,
    paper_layouts,
    pyplot,
    save_figure,
    write_report,
)

__all__ = ["PAPER_LAYOUTS", "figure2", "render", "summary_table", "top_figure"]

TABLES = "stereoset/templates/tables.md.j2"


def summary_table(results: dict) -> str:
    """The run's numbers in one table (the report's head and the demo's summary)."""
    return macros(TABLES).summary_table(results)


def _has_spearman(correlation: dict | None) -> bool:
    return correlation is not None and correlation["spearman"]["statistic"] is not None


def _column(rows: list[dict], key: str) -> np.ndarray:
    """The rows' ``key`` as floats, NaN where it is None (a word without a pair left)."""
    return np.array([row[key] for row in rows], dtype=float)


def figure2(words: list[dict], correlation: dict, settings):
    """The study's Figure 2: every word in attention-gap order against its perplexity gap.

    Above, the attention gap of each word (the order); below, the mean perplexity gap of the
    pairs the word took, with their intervals where there are any.
    """
    x = np.arange(len(words))
    attention = _column(words, "attention_gap")
    perplexity = _column(words, "perplexity_gap")
    figure, (top, bottom) = pyplot().subplots(
        2,
        1,
        figsize=(max(8.0, min(24.0, 0.12 * len(words))), 7.5),
        sharex=True,
        gridspec_kw={"height_ratios": [1, 1.6]},
    )
    draw_intervals(
        top, x, [r["attention_gap_interval"] for r in words], color="lightsteelblue", linewidth=0.6
    )
    top.plot(x, attention, "o", markersize=2.5, color="tab:blue")
    top.axhline(0, color="black", linewidth=0.5)
    top.set_ylabel("attention gap\n(male - female)")
    has = np.isfinite(perplexity)
    draw_intervals(
        bottom,
        x[has],
        [r["perplexity_gap_interval"] for r, h in zip(words, has, strict=True) if h],
        color="lightgray",
        linewidth=0.6,
    )
    bottom.plot(x[has], perplexity[has], "o", markersize=2.5, color="tab:gray")
    bottom.axhline(0, color="black", linewidth=0.5)
    bottom.set_ylabel("perplexity gap of the word's pairs\n(male - female)")
    unit = settings.level
    bottom.set_xlabel(
        f"{unit}s in attention-gap order ({len(words)}; {int((~has).sum())} without a pair left)"
    )
    if len(words) <= 80:
        bottom.set_xticks(x, [row["word"] for row in words], rotation=90, fontsize=6)
    title = f"{settings.encoder_label} (layer {settings.layer}) vs {settings.lm_label}"
    if _has_spearman(correlation):
        title += f"\nper {unit}: {macros(TABLES).correlation_line(correlation)}"
    figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    return figure


def top_figure(words: list[dict], correlation: dict | None, settings):
    """The ``top_k`` words at each end of the attention-gap order, and all words as a scatter.

    Every word shown has a mark in both bar panels: a word whose pairs were all taken by earlier
    words has no perplexity gap and gets an x at 0 instead of a bar (the legend says so)."""
    k = settings.top_k
    shown = [row for row in words if row["rank"] <= k or row["rank"] > len(words) - k]
    labels = [row["word"] for row in shown]
    attention = _column(shown, "attention_gap")
    perplexity = _column(shown, "perplexity_gap")
    unit = settings.level

    figure, (top, bottom, right) = pyplot().subplots(
        1, 3, figsize=(16, 4.8), gridspec_kw={"width_ratios": [2.2, 2.2, 1.2]}
    )
    x = np.arange(len(shown))
    top.bar(x, attention, color=np.where(attention >= 0, "tab:blue", "tab:red"))
    draw_intervals(top, x, [row["attention_gap_interval"] for row in shown], linewidth=0.6)
    # a gap near 0 still shows
    top.plot(x, attention, linestyle="none", marker="_", color="black", markersize=6)
    top.set_xticks(x, labels, rotation=90, fontsize=7)
    top.axhline(0, color="black", linewidth=0.6)
    top.set_xlabel(f"{unit}s: top and bottom {k} of the attention-gap order")
    top.set_ylabel("attention gap (male - female)")
    top.set_title(f"attention-gap order, top and bottom {k}")
    has = np.isfinite(perplexity)
    bottom.bar(
        x[has], perplexity[has], color="tab:gray", label="mean perplexity gap of the pairs it took"
    )
    draw_intervals(
        bottom,
        x[has],
        [row["perplexity_gap_interval"] for row, h in zip(shown, has, strict=True) if h],
        linewidth=0.6,
    )
    if (~has).any():
        bottom.plot(
            x[~has],
            np.zeros(int((~has).sum())),
            linestyle="none",
            marker="x",
            color="tab:red",
            label=f"no pair left: every pair holding the {unit} was taken by an earlier {unit}",
        )
    bottom.legend(fontsize=7, loc="best")
    bottom.set_xticks(x, labels, rotation=90, fontsize=7)
    bottom.axhline(0, color="black", linewidth=0.6)
    bottom.set_xlabel(f"the same {unit}s")
    bottom.set_ylabel("perplexity gap (male - female)")
    bottom.set_title("the same words: mean perplexity gap of the pairs they took")

    every_attention = _column(words, "attention_gap")
    every = _column(words, "perplexity_gap")
    finite = np.isfinite(every)
    right.scatter(every_attention[finite], every[finite], s=6, alpha=0.5)
    right.axhline(0, color="black", linewidth=0.4)
    right.axvline(0, color="black", linewidth=0.4)
    right.set_xlabel(f"attention gap ({int(finite.sum())} {unit}s with a pair)")
    right.set_ylabel("perplexity gap")
    if _has_spearman(correlation):
        spearman = correlation["spearman"]
        right.set_title(
            f"Spearman {with_interval(spearman['statistic'], spearman['interval'], 3)}",
            fontsize=9,
        )
    figure.suptitle(
        f"{settings.encoder_label} (layer {settings.layer}) vs {settings.lm_label}", fontsize=10
    )
    return figure


def render(results: dict, folder: Path) -> None:
    """Write ``report.md``, ``figure2.png`` and ``plot.png`` into the run folder ``folder`` from
    ``results`` (``results.json``) and the folder's ``words.jsonl`` and ``top_words.jsonl``."""
    if results.get("step") != "attention":
        raise ValueError(
            f"{folder}: results of step {results.get('step')!r}; expected a stereoset attention run"
        )
    folder = Path(folder)
    settings = SimpleNamespace(**results["settings"])
    words = [row for _, row in read_json_lines(folder / "words.jsonl")]
    top = {row["rank"]: row for _, row in read_json_lines(folder / "top_words.jsonl")}
    # The ends of the order with their sentence pairs (top_words.jsonl), the rest without.
    rows = [top.get(row["rank"], row | {"pairs": []}) for row in words]
    save_figure(figure2(rows, results["correlation"], settings), folder / "figure2.png")
    save_figure(top_figure(rows, results["correlation"], settings), folder / "plot.png")
    write_report(folder, "stereoset/templates/attention.md.j2", results=results, rows=rows)


# Layouts of the study's tables and figures (``pipelines/studies/stereoset_gender_attention.yaml``).
PAPER_LAYOUTS = paper_layouts("stereoset/templates/paper.md.j2", "figure2")
