"""The run's report, rendered from its results alone: ``render(results, folder)`` writes
``report.md``, the study's Figure 2 (``figure2.png``) and the ends of the order (``plot.png``)
from ``results.json`` and the run's ``words.jsonl`` / ``top_words.jsonl``, so a report can be
rendered again from a run folder without running the models."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from bias_hub.builders.shared.files import atomic_write_text  # noqa: E402
from bias_hub.builders.shared.text import (  # noqa: E402
    code_cell,
    code_span,
    fmt,
    markdown_table,
    with_interval,
)
from bias_hub.pipelines.common.presets import preset_markdown  # noqa: E402

__all__ = ["PAPER_LAYOUTS", "figure2", "render", "report_markdown", "summary_table", "top_figure"]


def _fmt(value, digits: int = 3) -> str:
    return fmt(value, digits, missing="n/a")


def _estimate(value, interval: dict | None, digits: int = 3) -> str:
    """The shared formatter with this report's digits; "n/a" for a missing value."""
    return with_interval(value, interval, digits=digits)


def _error_bars(values: np.ndarray, intervals: list[dict | None]) -> np.ndarray:
    """(2, n) distances below and above each value; 0 where there is no interval."""
    below = np.array(
        [
            v - i["low"] if i and i.get("low") is not None else 0.0
            for v, i in zip(values, intervals, strict=True)
        ]
    )
    above = np.array(
        [
            i["high"] - v if i and i.get("high") is not None else 0.0
            for v, i in zip(values, intervals, strict=True)
        ]
    )
    return np.nan_to_num(np.vstack([below, above]))


def _correlation_line(correlation: dict | None) -> str:
    """Pearson and Spearman in the shared correlation shape (``bias_hub.pipelines.common.stats.correlation``'s keys)."""
    if correlation is None:
        return "n/a"
    pearson, spearman = correlation["pearson"], correlation["spearman"]
    return (
        f"Pearson {_estimate(pearson['statistic'], pearson['interval'])} (p {_fmt(pearson['p_value'])}), Spearman "
        f"{_estimate(spearman['statistic'], spearman['interval'])} (p {_fmt(spearman['p_value'])}), "
        f"{spearman['n']} words"
    )


def _has_spearman(correlation: dict | None) -> bool:
    return correlation is not None and correlation["spearman"]["statistic"] is not None


def _level_name(settings) -> str:
    return "token" if settings.level == "token" else "word"


def figure2(words: list[dict], correlation: dict, settings):
    """The study's Figure 2: every word in attention-gap order against its perplexity gap.

    Above, the attention gap of each word (the order); below, the mean perplexity gap of the
    pairs the word took, with the intervals as error bars where there are any.
    """
    x = np.arange(len(words))
    attention = np.array([row["attention_gap"] for row in words], dtype=float)
    perplexity = np.array(
        [np.nan if row["perplexity_gap"] is None else row["perplexity_gap"] for row in words]
    )
    figure, (top, bottom) = plt.subplots(
        2,
        1,
        figsize=(max(8.0, min(24.0, 0.12 * len(words))), 7.5),
        sharex=True,
        gridspec_kw={"height_ratios": [1, 1.6]},
    )
    top.errorbar(
        x,
        attention,
        yerr=_error_bars(attention, [r["attention_gap_interval"] for r in words]),
        fmt="o",
        markersize=2.5,
        linewidth=0.6,
        color="tab:blue",
        ecolor="lightsteelblue",
    )
    top.axhline(0, color="black", linewidth=0.5)
    top.set_ylabel("attention gap\n(male - female)")
    has = np.isfinite(perplexity)
    bottom.errorbar(
        x[has],
        perplexity[has],
        yerr=_error_bars(
            perplexity[has],
            [r["perplexity_gap_interval"] for r, h in zip(words, has, strict=True) if h],
        ),
        fmt="o",
        markersize=2.5,
        linewidth=0.6,
        color="tab:gray",
        ecolor="lightgray",
    )
    bottom.axhline(0, color="black", linewidth=0.5)
    bottom.set_ylabel("perplexity gap of the word's pairs\n(male - female)")
    unit = _level_name(settings)
    bottom.set_xlabel(
        f"{unit}s in attention-gap order ({len(words)}; {int((~has).sum())} without a pair left)"
    )
    if len(words) <= 80:
        bottom.set_xticks(x, [row["word"] for row in words], rotation=90, fontsize=6)
    title = f"{settings.encoder_label} (layer {settings.layer}) vs {settings.lm_label}"
    if _has_spearman(correlation):
        title += f"\nper {unit}: {_correlation_line(correlation)}"
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
    attention = np.array([row["attention_gap"] for row in shown], dtype=float)
    perplexity = np.array(
        [np.nan if row["perplexity_gap"] is None else row["perplexity_gap"] for row in shown]
    )
    unit = _level_name(settings)

    figure, (top, bottom, right) = plt.subplots(
        1, 3, figsize=(16, 4.8), gridspec_kw={"width_ratios": [2.2, 2.2, 1.2]}
    )
    x = np.arange(len(shown))
    top.bar(
        x,
        attention,
        color=np.where(attention >= 0, "tab:blue", "tab:red"),
        yerr=_error_bars(attention, [row["attention_gap_interval"] for row in shown]),
        ecolor="black",
        error_kw={"linewidth": 0.6},
    )
    top.plot(
        x, attention, linestyle="none", marker="_", color="black", markersize=6
    )  # a gap near 0 still shows
    top.set_xticks(x, labels, rotation=90, fontsize=7)
    top.axhline(0, color="black", linewidth=0.6)
    top.set_xlabel(f"{unit}s: top and bottom {k} of the attention-gap order")
    top.set_ylabel("attention gap (male - female)")
    top.set_title(f"attention-gap order, top and bottom {k}")
    has = np.isfinite(perplexity)
    bottom.bar(
        x[has],
        perplexity[has],
        color="tab:gray",
        yerr=_error_bars(
            perplexity[has],
            [row["perplexity_gap_interval"] for row, h in zip(shown, has, strict=True) if h],
        ),
        ecolor="black",
        error_kw={"linewidth": 0.6},
        label="mean perplexity gap of the pairs it took",
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

    every_attention = np.array([row["attention_gap"] for row in words], dtype=float)
    every = np.array(
        [np.nan if row["perplexity_gap"] is None else row["perplexity_gap"] for row in words]
    )
    finite = np.isfinite(every)
    right.scatter(every_attention[finite], every[finite], s=6, alpha=0.5)
    right.axhline(0, color="black", linewidth=0.4)
    right.axvline(0, color="black", linewidth=0.4)
    right.set_xlabel(f"attention gap ({int(finite.sum())} {unit}s with a pair)")
    right.set_ylabel("perplexity gap")
    if _has_spearman(correlation):
        spearman = correlation["spearman"]
        right.set_title(
            f"Spearman {_estimate(spearman['statistic'], spearman['interval'])}", fontsize=9
        )
    figure.suptitle(
        f"{settings.encoder_label} (layer {settings.layer}) vs {settings.lm_label}", fontsize=10
    )
    return figure


def _matched_line(correlation: dict | None) -> str:
    if correlation is None:
        return "Pearson n/a, Spearman n/a (p n/a), 0 words"
    pearson, spearman = correlation["pearson"], correlation["spearman"]
    return (
        f"Pearson {_fmt(pearson['statistic'])}, Spearman {_fmt(spearman['statistic'])} "
        f"(p {_fmt(spearman['p_value'])}), {spearman['n']} words"
    )


def _pair_counts(results: dict) -> str:
    """The dataset config's pairs: those that differ and the identical ones, and which were studied
    (a run folder written before these counts were recorded shows its total only)."""
    dataset = results.get("dataset", {})
    if "identical_pairs" not in dataset:
        return str(results["counts"]["pairs_in_dataset"])
    identical = dataset["identical_pairs"]
    fate = (
        "studied"
        if dataset["identical_pairs_studied"]
        else "left out; `--identical-pairs include` studies them"
    )
    mixed = (dataset.get("left_out_at_build") or {}).get("mixed_gender")
    return (
        f"{dataset['pairs']}: {dataset['differing_pairs']} that differ, "
        f"{identical} identical (no gender word; {fate})"
        + (
            f"; {mixed} contexts with words of both genders left out at build, as no form of "
            "theirs is the male one (the dataset card lists them)"
            if mixed
            else ""
        )
    )


def summary_table(results: dict) -> str:
    corr = results["correlation"]
    matched = results["frequency_matched"]
    ppl = results["perplexity"]
    intervals = ppl["intervals"]
    rows = [
        [
            f"pairs in the dataset config {code_cell(results['settings']['config'])}",
            _pair_counts(results),
        ],
        ["pairs studied", results["counts"]["pairs_used"]],
        ["pairs aligned to the encoder's pieces", results["counts"]["pairs_aligned"]],
        [f"{results['settings']['level']}s with an attention gap", results["attention"]["n_words"]],
        [
            "mean attention gap over words",
            _estimate(
                results["attention"]["mean_gap"], results["attention"]["mean_gap_interval"], 4
            ),
        ],
        [
            f"{results['settings']['level']}s that took pairs "
            f"({'without duplication' if results['settings']['pair_assignment'] == 'first' else 'every pair of each one'})",
            f"{ppl['words_with_pairs']}, using {ppl['pairs_used_by_a_word']} of {ppl['n_pairs']} pairs",
        ],
        [
            "mean perplexity gap (male - female), per pair",
            _estimate(ppl["mean_gap"], intervals.get("mean_gap")),
        ],
        ["median perplexity gap", _estimate(ppl["median_gap"], intervals.get("median_gap"))],
        [
            "share of pairs with higher male perplexity",
            _estimate(ppl["male_higher_rate"], intervals.get("male_higher_rate")),
        ],
        ["Wilcoxon p (log-perplexity differences)", _fmt(ppl["wilcoxon_pvalue"])],
        [
            f"attention gap vs perplexity gap, per {results['settings']['level']}",
            _correlation_line(corr),
        ],
        [
            f"same, frequency-matched pairs (gender-word Zipf gap within ±{matched['tolerance_zipf']}, "
            f"{matched['pairs_matched']} pairs)",
            _matched_line(matched["correlation"]),
        ],
        [
            "log-perplexity ratio vs gender-word Zipf gap, per pair",
            f"Spearman {_fmt(matched['confound'].get('spearman_log_ppl_ratio_vs_zipf_gap'))} "
            f"(p {_fmt(matched['confound'].get('spearman_pvalue'))})",
        ],
    ]
    return markdown_table(["quantity", "value"], rows)


def _word_rows(rows: list[dict]) -> str:
    return markdown_table(
        [
            "rank",
            "word",
            "attention gap",
            "male / female occurrences",
            "perplexity gap (pairs)",
            "example (male form)",
        ],
        [
            [
                row["rank"],
                row["word"].replace("|", "\\|"),
                _estimate(row["attention_gap"], row["attention_gap_interval"], 4),
                f"{row['male_count']} / {row['female_count']}",
                f"{_estimate(row['perplexity_gap'], row['perplexity_gap_interval'])} ({row['n_pairs']})",
                (row["pairs"][0]["male_sentence"] if row["pairs"] else "").replace("|", "\\|"),
            ]
            for row in rows
        ],
    )


def _interval_note(intervals: dict) -> str:
    if intervals["confidence_level"] is None:
        return "No intervals (`--confidence-level 0`)."
    level = f"{intervals['confidence_level']:.0%}"
    return (
        f"Brackets: {level} bootstrap intervals ({intervals['n_resamples']} resamples, seed {intervals['seed']}; BCa where "
        "defined, else percentile). An attention gap's interval resamples the word's occurrences within each form "
        "(none for a word seen once in a form); a perplexity gap's resamples the pairs the word took (none for one "
        "pair); the mean and share resample pairs; the correlation's resamples words, holding each word's two "
        "numbers fixed, so it leaves out their own noise. The largest gaps of a long list are partly selected "
        "noise; their intervals do not correct for that selection."
    )


def report_markdown(results: dict, words: list[dict], summary: str, settings) -> str:
    k = settings.top_k
    head = [row for row in words if row["rank"] <= k]
    tail = [row for row in words if row["rank"] > max(len(words) - k, k)]
    counts = markdown_table(
        ["count", "value"], [[key, value] for key, value in results["counts"].items()]
    )
    heads = "all heads averaged" if settings.heads is None else f"heads {settings.heads} averaged"
    unit = _level_name(settings)
    level = (
        "BERT's tokens, as the study (word pieces such as `##s` are items of their own)"
        if settings.level == "token"
        else "words (pieces folded: the mean over a word's pieces)"
    )
    excluded = (
        "periods left out, as in the study"
        if settings.exclude == "period"
        else "every punctuation mark left out"
    )
    order = (
        "attention-gap order (largest first)"
        if settings.order == "signed"
        else "order of |attention gap|"
    )
    assignment = (
        f"in {order}, each {unit} takes the pairs that hold it and that no earlier {unit} took "
        "(the study's rule: a pair is used once), and its perplexity gap is the mean over those pairs"
        if settings.pair_assignment == "first"
        else f"a {unit}'s perplexity gap is the mean over every pair that holds it (a pair counts for each of its {unit}s)"
    )
    record = results.get("preset")
    preset = (
        SimpleNamespace(preset=record["name"], departures=record["departures"]) if record else None
    )
    preset_line = "\n".join(preset_markdown(preset)) if preset else ""
    lm_note = f"\n{settings.lm_note}" if settings.lm_note else ""
    names = (
        results.get("dataset", {}).get("name_list")
        or "none recorded by this config's rows (its card says which)"
    )
    notes = "".join(f"\n> {note}\n" for note in settings.notes)
    return f"""# Attention to gender words and perplexity gaps on gender-swapped StereoSet pairs

Encoder {code_span(settings.encoder_label)} (layer {settings.layer}, {heads}); causal LM {code_span(settings.lm_label)}{lm_note}; dataset config {code_span(settings.config)}; first-name list: {names}.
{preset_line}{notes}
{summary}

{_interval_note(results["intervals"])}

How it is measured (the study's §4.2): the attention each {unit} gives to the gender words of its
sentence (summed over the gender words' pieces) is averaged over the {unit}'s occurrences in the
male forms and in the female forms (kept when seen at least {settings.min_count} time(s) in each form);
the attention gap is male minus female. Items: {level}; {excluded}. Then {assignment}.
Perplexity gap: perplexity of the male form minus the female form.

## All {unit}s in attention-gap order against their perplexity gap (the study's Figure 2)

![attention-gap order vs perplexity gap](figure2.png)

Every {unit}'s numbers: `words.jsonl`; the sentence pairs of the {unit}s at both ends: `top_words.jsonl`.

## The ends of the order

![top and bottom of the attention-gap order](plot.png)

The mean gap over all {unit}s is {_fmt(results["attention"]["mean_gap"], 4)}: a model may attend to one
gender's words more overall; the ordering is what the study compares.

### Highest attention gap (relatively more attention to male words)

{_word_rows(head)}

### Lowest attention gap (relatively more attention to female words)

{_word_rows(tail)}

## Counts

{counts}
"""


def _read_jsonl(path: Path) -> list[dict]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


def _save(figure, path: Path) -> None:
    try:
        figure.tight_layout()
        figure.savefig(path, dpi=120)
    finally:
        plt.close(figure)


def render(results: dict, folder: Path) -> None:
    """Write ``report.md``, ``figure2.png`` and ``plot.png`` into the run folder ``folder`` from
    ``results`` (``results.json``) and the folder's ``words.jsonl`` and ``top_words.jsonl``."""
    if results.get("step") != "attention":
        raise ValueError(
            f"{folder}: results of step {results.get('step')!r}; expected a stereoset attention run"
        )
    folder = Path(folder)
    settings = SimpleNamespace(**results["settings"])
    words = _read_jsonl(folder / "words.jsonl")
    top = {row["rank"]: row for row in _read_jsonl(folder / "top_words.jsonl")}
    # The ends of the order with their sentence pairs (top_words.jsonl), the rest without.
    rows = [top.get(row["rank"], row | {"pairs": []}) for row in words]
    _save(figure2(rows, results["correlation"], settings), folder / "figure2.png")
    _save(top_figure(rows, results["correlation"], settings), folder / "plot.png")
    atomic_write_text(
        folder / "report.md", report_markdown(results, rows, summary_table(results), settings)
    )


def figure2_layout(results: dict | None, printed: dict) -> str:
    """The study's Figure 2 beside ours: its counts and its reading of the figure (it prints no
    coefficient), our counts and coefficients, and our figure; the paper's alone where the step
    did not run (``results`` None)."""
    if results is None:
        keys = ("pairs", "gender_words", "correlation")
        rows = [[key.replace("_", " "), printed[key], "not run"] for key in keys]
        return markdown_table(["", "paper", "this run"], rows)
    correlation = results["correlation"]
    rows = [
        ["pairs (male and female form)", printed["pairs"], _pair_counts(results)],
        ["pairs the statistics use", "", results["counts"]["pairs_used"]],
        [
            "gender words (study appendix, male + female)",
            printed["gender_words"],
            "30 + 30 in the lexicon's `study` set",
        ],
        [
            "attention gap vs perplexity gap, per word",
            printed["correlation"],
            _correlation_line(correlation),
        ],
    ]
    return (
        markdown_table(["", "paper", "this run"], rows)
        + "\n\n![attention-gap order vs perplexity gap](figure2.png)\n"
    )


# Layouts of the study's tables and figures (``pipelines/studies/stereoset_gender_attention.yaml``).
PAPER_LAYOUTS = {"figure2": figure2_layout}
