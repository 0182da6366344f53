"""The speciesism report, rendered from the results alone: ``render(results, folder)`` writes
``report.md`` (the study's tables in Markdown, with intervals) and ``negative_share.png``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from bias_hub.builders.shared.files import atomic_write_text  # noqa: E402
from bias_hub.builders.shared.text import code_cell, code_span, table_cell  # noqa: E402
from bias_hub.builders.shared.text import markdown_table as _table  # noqa: E402
from bias_hub.builders.shared.text import with_interval as _with_interval  # noqa: E402
from bias_hub.pipelines.common.presets import preset_markdown  # noqa: E402

__all__ = [
    "PAPER_LAYOUTS",
    "change_rate_markdown",
    "chart_figure",
    "negative_share_markdown",
    "render",
    "report_markdown",
]

# Per direction of the study's tables: (start form, end form, heading).
DIRECTIONS = {
    "object_to_human": (
        "object",
        "human",
        "Object form → human form (as the paper's Tables 1 and 3): words "
        "above chance in the object form whose probability drops when the animal is described "
        "as a person, most negative change rate first",
    ),
    "human_to_object": (
        "human",
        "object",
        "Human form → object form (as the paper's Tables 2 and 4): words "
        "above chance in the human form whose probability drops when the animal is described "
        "as an object, most negative change rate first",
    ),
}


def with_interval(value: float, interval: dict | None, digits: int, sign: bool = False) -> str:
    """The shared estimate formatter (``bias_hub.builders.shared.text.with_interval``) with a sign on a
    non-negative value where asked, and ``[n/a]`` where the bootstrap could not give an interval
    (the reason is listed under the table)."""
    text = _with_interval(value, interval, digits=digits)
    if sign and value >= 0:
        text = "+" + text
    if interval is not None and interval["low"] is None:
        text += " [n/a]"
    return text


def _reasons(intervals: list[dict | None]) -> str:
    reasons = sorted({i["reason"] for i in intervals if i is not None and i["reason"]})
    return "".join(f"\n\n_n/a: {reason}._" for reason in reasons)


def change_rate_markdown(table: dict, limit: int | None = None) -> str:
    """The study's two tables in its layout: word, probability in the object form, probability
    in the human form; then the change rate (with its interval when there is one)."""
    intervals = table.get("confidence_intervals")
    parts = []
    for key, (start, _end, title) in DIRECTIONS.items():
        entries = table[key][:limit] if limit else table[key]
        raw = any("token" in entry for entry in entries)
        level = next(iter(intervals.values()))["confidence_level"] if intervals else None
        rate = "change rate" + (f" [{level:.0%} CI]" if level else "")
        rows, shown = [], []
        for i, entry in enumerate(entries):
            p_object, p_human = (
                (entry["p_start"], entry["p_end"])
                if start == "object"
                else (entry["p_end"], entry["p_start"])
            )
            interval = intervals.get(f"{key}[{i}]") if intervals else None
            shown.append(interval)
            rows.append(
                [
                    table_cell(entry["word"]),
                    *([code_cell(entry["token"])] if raw else []),
                    f"{p_object:.8f}",
                    f"{p_human:.8f}",
                    with_interval(entry["change_rate"], interval, 4, sign=True),
                ]
            )
        parts.append(f"**{title}.**\n")
        parts.append(
            _table(
                ["word", *(["token"] if raw else []), "P(object form)", "P(human form)", rate], rows
            )
            + _reasons(shown)
            if entries
            else f"_No item above chance in the {start} form drops in the other form._"
        )
        parts.append("")
    return "\n".join(parts)


def negative_share_markdown(results: dict) -> str:
    models = results["models"]
    animals = sorted({a for m in models for a in m["sentiment"]["negative_share"]})

    def cell(model: dict, key: str, value: float | None) -> str:
        if value is None:
            return "-"
        intervals = model["sentiment"].get("confidence_intervals")
        return with_interval(value, intervals.get(key) if intervals else None, 2)

    return _table(
        ["animal", *[table_cell(m["label"]) for m in models]],
        [
            [
                table_cell(a),
                *[
                    cell(m, f"negative_share.{a}", m["sentiment"]["negative_share"].get(a))
                    for m in models
                ],
            ]
            for a in animals
        ]
        + [
            [
                "**all**",
                *[
                    cell(m, "overall_negative_share", m["sentiment"]["overall_negative_share"])
                    for m in models
                ],
            ]
        ],
    )


def comparisons_markdown(results: dict) -> str:
    """Pairs of models: B - A of each negative share, its interval and Holm-adjusted p-value."""
    level = results["intervals"]["confidence_level"]
    rows, reasons = [], []
    for comparison in results["comparisons"]:
        for key, score in comparison["scores"].items():
            name = (
                "**all**"
                if key == "overall_negative_share"
                else key.removeprefix("negative_share.")
            )
            interval = comparison["confidence_intervals"].get(key)
            reasons.append(interval)
            if score["p_value"] is None:
                p_text = f"n/a ({score['reason']})"
            else:
                mark = " *" if score["significant"] else ""
                p_text = f"{score['p_value']:.3f} / {score['p_holm']:.3f}{mark}"
            rows.append(
                [
                    f"{comparison['a']} → {comparison['b']}",
                    name,
                    f"{score['a']:.2f}",
                    f"{score['b']:.2f}",
                    with_interval(score["difference"], interval, 2, sign=True),
                    p_text,
                ]
            )
    n_tests = sum(
        score.get("p_holm") is not None
        for c in results["comparisons"]
        for score in c["scores"].values()
    )
    return (
        _table(["A → B", "animal", "A", "B", f"B − A [{level:.0%} CI]", "p / p (Holm)"], rows)
        + _reasons(reasons)
        + f"\n\nPaired on matched fills (the i-th fill of the same sentence). p: two-sided paired "
        "permutation test (A and B swapped within a unit; exact when every swap fits in the "
        "resamples). Units: per animal the matched fills, over all animals the sentences (one per "
        f"animal: with 6 the smallest p is 2/64). Holm's correction over the {n_tests} tests of "
        f"this table; * = significant at {1 - level:.2g} after it."
    )


def association_markdown(association: dict | None) -> str:
    if not association:
        return "_Association not computed._"
    by_group = association["by_group"]
    intervals = association.get("confidence_intervals")
    rows = []
    for direction in DIRECTIONS:
        cells = []
        for form in ("human", "object"):
            entry = by_group.get(f"{form}|{direction}")
            interval = intervals.get(f"by_group.{form}|{direction}.mean") if intervals else None
            cells.append(
                f"{with_interval(entry['mean'], interval, 3, sign=True)} (n={entry['n']})"
                if entry
                else "-"
            )
        rows.append([direction.replace("_to_", " → "), *cells])
    words = ", ".join(
        f"{a['word']} ({a['direction'].replace('_to_', ' → ')})" for a in association["attributes"]
    )
    return (
        _table(
            ["words taken from the table", "human-form templates", "object-form templates"],
            rows,
        )
        + f"\n\nWords: {words}."
    )


def chart_figure(results: dict):
    """Grouped bars: share of negative fills per animal (x) and model (colour), with error bars;
    a share of 0 gets a mark at 0, so that every animal shows something for every model."""
    models = results["models"]
    animals = sorted({a for m in models for a in m["sentiment"]["negative_share"]})
    width = 0.8 / max(len(models), 1)
    fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(animals) + 2), 4))
    x = np.arange(len(animals))
    for i, model in enumerate(models):
        shares = np.array([model["sentiment"]["negative_share"].get(a, np.nan) for a in animals])
        intervals = model["sentiment"].get("confidence_intervals") or {}
        errors = np.zeros((2, len(animals)))
        for j, animal in enumerate(animals):
            interval = intervals.get(f"negative_share.{animal}")
            if interval and interval["low"] is not None:
                errors[:, j] = shares[j] - interval["low"], interval["high"] - shares[j]
        offset = x + (i - (len(models) - 1) / 2) * width
        bars = ax.bar(
            offset,
            shares,
            width,
            label=model["label"],
            yerr=errors if intervals else None,
            capsize=3,
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


def _settings_lines(results: dict) -> list[str]:
    lines = [
        f"Language: {code_span(results['language'])}; animal groups: {', '.join(results['groups'])}"
        + (f"; animals: {', '.join(results['animals'])}" if results["animals"] else "")
        + f"; vocabulary items: {code_span(results['tokens'])}; sentiment backend: {code_span(results['sentiment_backend'])}.",
        "",
    ]
    record = results["preset"]
    if record:
        lines += preset_markdown(
            SimpleNamespace(preset=record["name"], departures=record["departures"])
        )
    return lines


def _intervals_lines(results: dict) -> list[str]:
    intervals = results["intervals"]
    level = intervals["confidence_level"]
    if not level:
        return ["Intervals: off (`--confidence-level none`).", ""]
    return [
        f"Intervals: {level:.0%} bootstrap intervals ({intervals['n_resamples']} resamples, seed "
        f"{intervals['seed']}; BCa where defined, else percentile). Units: a change rate resamples "
        "the **templates** within each form (a template's sentences share its wording across the "
        "animals, so they are one unit; the animals themselves are fixed). The study's English set "
        "has 2 human-form and 6 object-form templates, so every human-form mean is resampled from 2 "
        "units: the interval spans what those 2 templates allow and is a rough lower bound on the "
        "uncertainty, not a calibrated one; the listed words are also the extremes the data picked, "
        "which the intervals do not undo. A negative share per animal resamples that animal's fills "
        "(all from its one sentence, so it says how much the share rests on single fills, not what "
        "another wording would give); the share over all animals resamples the sentences (one per "
        "animal). The association resamples (sentence, word) pairs.",
        "",
    ]


def report_markdown(results: dict) -> str:
    note = results.get("report_note", "")
    lines = ["# Speciesism in masked language models", ""]
    if note:
        lines += [note, ""]
    lines += _settings_lines(results)
    lines += [
        "Change rate = (B - A) / A, where A is a word's mean probability at the mask in the "
        "starting form and B in the other form. As in the paper's Tables 1-4, each table lists the "
        "items above chance (A > 1/|V|) in the starting form whose probability drops, most negative "
        "change rate first, with the probability in the object form and in the human form. "
        + (
            "All vocabulary items are ranked, as the paper's tables list them (`--tokens raw`)."
            if results["tokens"] == "raw"
            else "Only whole-word vocabulary items are listed (`--tokens words`; "
            "see `pipelines/speciesism/fill_mask.py`); chance counts the whole vocabulary."
        )
        + " The largest gains, which the paper did not print, are in `results.json` under `gains`.",
        "",
    ]
    lines += _intervals_lines(results)
    for model in results["models"]:
        lines += [
            f"## {table_cell(model['label'])}",
            "",
            f"Model: {code_span(model['model'])}.",
            "",
        ]
        lines += [
            f"|V| = {model['vocabulary_size']:,} (chance {1 / model['vocabulary_size']:.2e}); "
            f"{model['word_like_items']:,} word-like items; {model['rows']} template rows.",
            "",
        ]
        for group, table in model["change_rate"].items():
            templates = table["n_templates"]
            lines += [
                f"### Change rates, {group} animals",
                "",
                f"{table['n_rows']['object']} object-form and {table['n_rows']['human']} human-form "
                f"sentences ({templates['object']} and {templates['human']} templates).",
                "",
                change_rate_markdown(table),
            ]
        lines += [
            f"### Association (Kurita et al.), {model['association_group']} animals",
            "",
            "Mean log(p_target / p_prior) of the animal names with the first words of each "
            "table, in human-form and object-form templates.",
            "",
            association_markdown(model["association"]),
            "",
        ]
        fills = model["sentiment"]["fills"]
        lines += [
            "### Sentiment of the top fills",
            "",
            f"The top {len(fills) // max(len(model['sentiment']['n']), 1)} fills of the neutral "
            f"template, each judged in {code_span(model['sentiment']['sentence'].format(fill='<fill>'))}.",
            "",
            _table(
                ["animal", "fills (label)"],
                [
                    [
                        a,
                        ", ".join(
                            f"{f['fill']} ({f['label'][:3]})" for f in fills if f["animal"] == a
                        ),
                    ]
                    for a in sorted({f["animal"] for f in fills})
                ],
            ),
            "",
        ]
    lines += [
        "## Share of negative fills",
        "",
        negative_share_markdown(results),
        "",
        f"![negative share per animal]({results['chart']})",
        "",
    ]
    if results["comparisons"]:
        lines += ["## Comparing the models' negative shares", "", comparisons_markdown(results), ""]
    if results["warnings"]:
        lines += ["## Warnings", ""]
        lines += [f"- {text}: {count}" for text, count in results["warnings"].items()]
        lines.append("")
    return "\n".join(lines)


def render(results: dict, folder: Path) -> None:
    """Write ``report.md`` and the chart (``results["chart"]``) into the run folder ``folder``."""
    if results.get("part") != "speciesism":
        raise ValueError(
            f"{folder}: results of part {results.get('part')!r}; expected a speciesism run"
        )
    folder = Path(folder)
    figure = chart_figure(results)
    try:
        figure.tight_layout()
        figure.savefig(folder / results["chart"], dpi=120)
    finally:
        plt.close(figure)
    atomic_write_text(folder / "report.md", report_markdown(results))


def _printed_table(rows: list[list], digits: int = 8) -> list[list]:
    return [
        [word, f"{p_object:.{digits}f}", f"{p_human:.{digits}f}"]
        for word, p_object, p_human in rows
    ]


def _is_roberta(label: str) -> bool:
    return "roberta" in label.lower()


def _is_bert(label: str) -> bool:
    return "bert" in label.lower() and not _is_roberta(label)


def change_rate_layout(model: str, direction: str):
    """A layout of Tables 1-4: the paper's 15 words in its order beside this run's 15, for the run's
    model of the paper's ``model`` ("roberta" or "bert", read from the label) and ``direction``
    (``object_to_human`` or ``human_to_object``)."""
    matches = _is_roberta if model == "roberta" else _is_bert

    def layout(results: dict | None, printed: dict) -> str:
        chosen = [m for m in (results or {}).get("models", []) if matches(m["label"])]
        if not chosen:
            why = "not run" if results is None else f"no {model} model in this run"
            return f"_Ours: {why}; the paper's table alone._\n\n" + _table(
                ["word", "P(object form)", "P(human form)"], _printed_table(printed["rows"])
            )
        table = chosen[0]["change_rate"][next(iter(chosen[0]["change_rate"]))]
        start = DIRECTIONS[direction][0]
        ours = []
        for entry in table[direction]:
            p_object, p_human = (
                (entry["p_start"], entry["p_end"])
                if start == "object"
                else (entry["p_end"], entry["p_start"])
            )
            ours.append([entry["word"], f"{p_object:.8f}", f"{p_human:.8f}"])
        rows = []
        for i in range(max(len(ours), len(printed["rows"]))):
            paper = _printed_table(printed["rows"])[i] if i < len(printed["rows"]) else ["", "", ""]
            run = ours[i] if i < len(ours) else ["", "", ""]
            rows.append([i + 1, *paper, *run])
        return _table(
            [
                "#",
                "paper: word",
                "P(object)",
                "P(human)",
                f"{chosen[0]['label']}: word",
                "P(object)",
                "P(human)",
            ],
            rows,
        )

    return layout


def figure1_layout(results: dict | None, printed: dict) -> str:
    """Figure 1 (no values printed): the paper's reading beside this run's shares and chart (the
    paper's alone where the step did not run)."""
    positive = "; ".join(f"{model}: {count}" for model, count in printed["positive"].items())
    if results is None:
        return f"Paper: {printed['negative_share']}. Fills judged positive: {positive}.\n\nOurs: not run."
    counts = []
    for model in results["models"]:
        fills = model["sentiment"]["fills"]
        counts.append(
            f"{model['label']}: {sum(f['label'] == 'positive' for f in fills)} of {len(fills)}"
        )
    return (
        f"Paper: {printed['negative_share']}. Fills judged positive: {positive}.\n\n"
        f"This run ({results['sentiment_backend']}): fills judged positive: {'; '.join(counts)}.\n\n"
        + negative_share_markdown(results)
        + f"\n\n![negative share per animal]({results['chart']})\n"
    )


# Layouts of the study's tables (``pipelines/studies/speciesism.yaml``).
PAPER_LAYOUTS = {
    "figure1": figure1_layout,
    "table1": change_rate_layout("roberta", "object_to_human"),
    "table2": change_rate_layout("roberta", "human_to_object"),
    "table3": change_rate_layout("bert", "object_to_human"),
    "table4": change_rate_layout("bert", "human_to_object"),
}
