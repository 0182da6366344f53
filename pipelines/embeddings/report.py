"""The embeddings part's reports, rendered from results.json alone: ``render(results, folder)``.

Each step (``score``, ``control``, ``correlate``; see ``run.py``) writes its results.json and
calls ``render``, which writes report.md (and for ``control`` and ``correlate``
correlations.md and scatter.png); ``bias-hub report RUN`` re-renders a run folder the same
way without running anything. ``PAPER_LAYOUTS`` lays our numbers beside the RNSB-vs-WinoBias
study's printed Tables 2 and 3 for ``bias-hub reproduce rnsb_winobias``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.builders.shared.text import code_span, fmt, table_cell, with_interval
from bias_hub.pipelines.common.presets import preset_markdown
from bias_hub.pipelines.common.stats import correlation
from bias_hub.pipelines.embeddings.correlate import (
    EXTRINSIC,
    correlation_markdown,
    scatter_figure,
    table2_markdown,
    with_absolute_weat,
)

__all__ = ["PAPER_LAYOUTS", "SCORES_NOTE", "correlations_markdown", "render", "scores_markdown"]

SCORES_NOTE = (
    "**WEAT value** is the study's c(X, A) + c(Y, B) − c(X, B) − c(Y, A) with "
    "c(T, A) = Σ_t (1/|A|) Σ_a cos(t, a) (Kato and Miyao, §2.1.1; Caliskan et al.'s test statistic): the "
    "`weat_<test>` columns and the correlations use it. **WEAT effect size** (Caliskan et al.'s d) is the "
    "second column, `weat_effect_size_<test>`. The p-value is Caliskan et al.'s one-sided permutation "
    "p-value (exact when the partitions are few). **RNSB** is the KL divergence (nats) of a logistic "
    "classifier's normalised probabilities from uniform, with the classifier trained on the attribute sets "
    "A, B and the target words scored (`rnsb_attributes_<test>`: WEFE's RNSB, which the study says it ran; "
    "most likely what its Tables 2–3 used), or trained on the target sets X, Y and the attribute words "
    "scored (`rnsb_targets_<test>`: the study's §2.1.2 text)."
)


def _number(value: float | None, digits: int = 3) -> str:
    return fmt(value, digits, missing="n/a")


def _interval_note(rows: Sequence[dict]) -> str:
    for row in rows:
        for item in row["values"]:
            interval = item["interval"]
            if interval:
                return (
                    f"Brackets: {interval['confidence_level']:.0%} bootstrap intervals resampling the words of "
                    f"each set ({interval['n_resamples']} resamples, BCa where defined; RNSB's keep the trained "
                    "classifiers)."
                )
    return "No intervals (--confidence-level 0)."


def _value(item: dict, digits: int = 3) -> str:
    """The value and its interval with one number of decimals: ``digits`` significant
    digits of the value, at least ``digits`` decimals (0.000911 [0.000506, 0.001735])."""
    value, interval = item["value"], item["interval"]
    if value is None:
        return "n/a"
    decimals = (
        digits if value == 0 else max(digits, digits - 1 - math.floor(math.log10(abs(value))))
    )
    text = with_interval(value, interval, digits=decimals)
    if interval and interval["low"] is None and interval["reason"]:
        text += f" (no interval: {interval['reason']})"
    return text


def scores_markdown(rows: Sequence[dict]) -> str:
    lines = [
        "| embedding | test | score | value [interval] | p-value | notes |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        oov = {name: words for name, words in row["result"]["oov"].items() if words}
        notes = "; ".join([*(row["notes"] or []), *([f"OOV {oov}"] if oov else [])])
        for number, item in enumerate(row["values"]):
            p_value = _number(row["p_value"]) if row["metric"] == "weat" and number == 0 else ""
            lines.append(
                f"| {table_cell(row['embedding'])} | {table_cell(row['test_id'])} | {item['name']} | "
                f"{_value(item)} | {p_value} | {table_cell(notes) if number == 0 else ''} |"
            )
    return "\n".join(lines)


def _preset_lines(results: dict) -> list[str]:
    record = results.get("preset") or {}
    return preset_markdown(
        SimpleNamespace(preset=record.get("name"), departures=record.get("departures", []))
    )


def _bootstrap_note(results: dict) -> str:
    intervals = results.get("intervals") or {}
    if not intervals.get("confidence_level"):
        return "No intervals (--confidence-level 0)."
    return (
        f"Brackets: {intervals['confidence_level']:.0%} bootstrap intervals of each correlation, resampling the "
        f"embeddings ({intervals['n_resamples']} resamples, paired, BCa where defined). p (Holm): Holm's "
        "step-down adjustment over the rows of the table; the raw p-values are in correlations.json. "
        "†: Pearson and Spearman disagree (one significant at 0.05, the other not)."
    )


def _winobias_markdown(gaps: dict) -> str:
    lines = [
        "| embedding | " + " | ".join(table_cell(c) for c in gaps["columns"]) + " |",
        "|---|" + "---|" * len(gaps["columns"]),
    ]
    for name, values in gaps["table"].items():
        cells = []
        for column in gaps["columns"]:
            bounds = gaps["intervals"].get(name, {}).get(column)
            cell = _number(values.get(column))
            cells.append(
                cell + (f" [{_number(bounds[0])}, {_number(bounds[1])}]" if bounds else "")
            )
        lines.append(f"| {table_cell(name)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def correlations_markdown(results: dict) -> str:
    """The correlation section of a ``control`` or ``correlate`` run (correlations.md)."""
    rows = results["correlations"]
    parts = [_bootstrap_note(results), "", correlation_markdown(rows)]
    table2 = table2_markdown(rows)
    if table2:
        parts = [
            "## Table 2 layout: Pearson r of direct scores with WinoBias gaps",
            "",
            "Rows: the set pair's test and the direct score (WEAT value, RNSB trained on the attribute sets "
            "A, B as WEFE does, RNSB trained on the target sets X, Y as the study's §2.1.2 reads, WEAT effect "
            "size); columns: the pro minus anti precision and recall of the coreference system trained on "
            "each embedding. * Holm-adjusted p < 0.05.",
            "",
            table2,
            "",
            "## All pairs",
            "",
            *parts,
        ]
    gaps = results.get("winobias")
    if gaps is not None:
        parts += [
            "",
            f"## WinoBias gaps ({gaps['split']} split, {gaps['folder']})",
            "",
            "Pro- minus anti-stereotypical precision, recall and F1 (MUC, B-cubed, CEAF-e averaged) per "
            "type; intervals resample the sentences.",
            "",
            _winobias_markdown(gaps),
        ]
    return "\n".join(parts)


def _write_scatter(results: dict, folder: Path, title: str) -> None:
    import matplotlib.pyplot as plt  # heavy: loaded only to draw

    _, table = with_absolute_weat(results["columns"], results["table"])
    rows = [row for row in results["correlations"] if not row["x"].startswith("abs_")]
    figure = scatter_figure(rows, table, title)
    try:
        figure.savefig(folder / "scatter.png", dpi=120, bbox_inches="tight")
    finally:
        plt.close(figure)


_SCORE_HEADERS = {
    "weat_": "WEAT value",
    "weat_effect_size_": "WEAT effect size",
    "rnsb_attributes_": "RNSB (on A, B)",
    "rnsb_targets_": "RNSB (on X, Y)",
}


def _member_table(headers: list[str], cells: list[list[str]], results: dict) -> str:
    """One table per test (members x its scores), so that no table runs off the page."""
    columns, table = results["columns"], results["table"]
    tests = list(dict.fromkeys(row["test_id"] for row in results["rows"]))
    parts = []
    for test in tests:
        mine = [
            (prefix, f"{prefix}{test}") for prefix in _SCORE_HEADERS if f"{prefix}{test}" in columns
        ]
        names = headers + [_SCORE_HEADERS[prefix] for prefix, _ in mine]
        lines = [
            f"**{table_cell(test)}**",
            "",
            "| " + " | ".join(names) + " |",
            "|" + "---|" * len(names),
        ]
        for first in cells:
            values = table.get(first[0], {})
            lines.append(
                "| "
                + " | ".join(first + [_number(values.get(column)) for _, column in mine])
                + " |"
            )
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def _notes(results: dict) -> list[str]:
    rows, skipped = results["rows"], results.get("not_scored") or {}
    notes = sorted({note for row in rows for note in row["notes"]})
    oov = sorted(
        {
            f"{row['test_id']}: {word}"
            for row in rows
            for words in row["result"]["oov"].values()
            for word in words
        }
    )
    return [
        *(
            f"- **{name} is not scored** (left out of the correlations): {reason}"
            for name, reason in skipped.items()
        ),
        *(f"- {note}" for note in notes),
        *([f"- out of vocabulary: {', '.join(oov)}"] if oov else []),
    ]


def _render_score(results: dict, folder: Path) -> None:
    vectors = results["vectors"]
    text = [
        f"# {results['title']}",
        "",
        f"Vectors: {code_span(vectors['name'])}, {vectors['words']:,} words x {vectors['dim']}. {vectors['note']}",
        "",
        *_preset_lines(results),
        SCORES_NOTE,
        "",
        _interval_note(results["rows"]),
        "",
        scores_markdown(results["rows"]),
        "",
    ]
    atomic_write_text(folder / "report.md", "\n".join(text))


def _variant_text(results: dict, correlations: str) -> list[str]:
    vectors, config, members = results["vectors"], results["attract_repel"], results["members"]
    cells = [
        [name, m["direction"], f"{m['strength']:g}", f"{m['fraction']:g}", str(m["expand"])]
        for name, m in members.items()
    ]
    scores = _member_table(
        ["member", "direction", "strength", "share of pairs", "expansion"], cells, results
    )
    return [
        "# Bias-controlled embeddings (bias-hub's ATTRACT-REPEL strength variant): WEAT vs RNSB",
        "",
        f"Base vectors: {code_span(vectors['name'])}, {vectors['words']:,} words x {vectors['dim']}. {vectors['note']}",
        "",
        *_preset_lines(results),
        "This is **this project's variant**, not the study's 17-member family (that one needs a corpus: "
        "`bias-hub embeddings control --corpus FILE`). Each member is the base embedding specialised with "
        f"ATTRACT-REPEL (Mrkšić et al., 2017; {config['epochs']} epochs, margins "
        f"{config['attract_margin']}/{config['repel_margin']}, AdaGrad lr {config['learning_rate']}) on pairs from "
        "all tests' word sets merged: *reduce* repels the stereotypical pairs X×A ∪ Y×B and attracts the "
        "anti-stereotypical ones, *amplify* the reverse. *strength* s moves every specialised word the "
        "share s of the way from its original to its fully specialised vector, which grades the amount of "
        "bias; *expanded* members first add each list word's nearest neighbours (cosine ≥ 0.5) to its set. "
        "All members are unit-normalised.",
        "",
        "## Scores",
        "",
        SCORES_NOTE,
        "",
        scores,
        "",
        "## WEAT vs RNSB across the family (Table 3 analogue)",
        "",
        correlations,
        "",
        "`abs_weat_*` is |WEAT value|: RNSB's KL divergence cannot tell stereotypical from "
        "anti-stereotypical bias, so members pushed past zero (anti-stereotypical) score high on RNSB "
        "while their WEAT is negative; the signed WEAT and RNSB then need not correlate linearly.",
        "",
        "![WEAT vs RNSB](scatter.png)",
        "",
        "## Notes",
        "",
        *_notes(results),
        "",
        *([results["notes_markdown"], ""] if results.get("notes_markdown") else []),
    ]


def _balancing_markdown(balancing: dict) -> str:
    lines = [
        "| member | sentences before | after | X&A before → after | Y&B | Y&A | X&B |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, stats in balancing.items():
        kinds = [
            f"{stats['before'][k]:,} → {stats['after'][k]:,}" for k in ("x_a", "y_b", "y_a", "x_b")
        ]
        lines.append(
            f"| {name} | {stats['sentences_before']:,} | {stats['sentences_after']:,} | "
            + " | ".join(kinds)
            + " |"
        )
    return "\n".join(lines)


def _paper_text(results: dict, correlations: str) -> list[str]:
    record, word2vec, config, members = (
        results["record"],
        results["word2vec"],
        results["attract_repel"],
        results["members"],
    )
    cells = [
        [name, m["set_pair"] or "", m["method"] or "original", m["direction"] or ""]
        for name, m in members.items()
    ]
    scores = _member_table(["member", "set pair", "method", "direction"], cells, results)
    corpus = record["corpus"]
    pairs = "\n".join(
        f"- {code_span(name)}: "
        + "; ".join(
            f"{role} {len(words)} words"
            for role, words in {**sets["target_sets"], **sets["attribute_sets"]}.items()
        )
        for name, sets in record["set_pairs"].items()
    )
    return [
        f"# The study's bias-controlled family ({len(members)} embeddings): WEAT vs RNSB",
        "",
        *_preset_lines(results),
        f"Corpus {code_span(corpus['path'])}: {corpus['sentences']:,} sentences, {corpus['tokens']:,} tokens "
        f"(NLTK word tokens, one sentence per line), {corpus['types']:,} types of which "
        f"{corpus['types_replaced_by_unk']:,} seen fewer than {word2vec['min_count']} times became `<unk>`. "
        f"Word2Vec (gensim): {word2vec['vector_size']} dimensions, min count {word2vec['min_count']}, window "
        f"{word2vec['window']}, {word2vec['epochs']} epochs, {'skip-gram' if word2vec['skipgram'] else 'CBOW'}.",
        "",
        "As Kato and Miyao (§3) after Goldfarb-Tarrant et al. (2021): the original Word2Vec, and per set "
        "pair ATTRACT-REPEL on it (*reduce*: stereotypical pairs X×A ∪ Y×B repelled, anti-stereotypical "
        f"X×B ∪ Y×A attracted; *amplify* the reverse; {config['epochs']} epochs) and dataset balancing of the "
        "corpus with Word2Vec trained again (*reduce*: sentences pairing X with A, or Y with B, subsampled "
        "to the number pairing Y with A, or X with B; *amplify*: every sentence pairing Y with A or X with "
        f"B deleted). The last set pair is the union of the tests' sets, expanded with each word's "
        f"{record['neighbours']} nearest neighbours in {record['expansion']} (the study: spaCy's vectors).",
        "",
        "Set pairs:",
        "",
        pairs,
        "",
        "## Scores",
        "",
        SCORES_NOTE,
        "",
        scores,
        "",
        "## Dataset balancing",
        "",
        _balancing_markdown(record["balancing"]),
        "",
        "## WEAT vs RNSB across the family (the study's Table 3)",
        "",
        correlations,
        "",
        "`abs_weat_*` is |WEAT value|. Correlate with WinoBias (Table 2) with `bias-hub embeddings "
        "correlate --scores results.json --coref MEMBER=OUTPUT.conll ...` (or `--coref-dir DIR`) once a "
        "coreference model has been trained on each member (your step; `--save-vectors` writes them).",
        "",
        "![WEAT vs RNSB](scatter.png)",
        "",
        "## Notes",
        "",
        *_notes(results),
        "",
    ]


def _render_control(results: dict, folder: Path) -> None:
    correlations = correlations_markdown(results)
    atomic_write_text(folder / "correlations.md", correlations + "\n")
    members = len(results["members"])
    if results["family"] == "paper":
        text, title = (
            _paper_text(results, correlations),
            f"WEAT vs RNSB over the study's {members} embeddings",
        )
    else:
        text, title = (
            _variant_text(results, correlations),
            f"WEAT vs RNSB over {members} bias-controlled embeddings",
        )
    _write_scatter(results, folder, title)
    atomic_write_text(folder / "report.md", "\n".join(text))


def _render_correlate(results: dict, folder: Path) -> None:
    correlations = correlations_markdown(results)
    atomic_write_text(folder / "correlations.md", correlations + "\n")
    _write_scatter(results, folder, "")
    scores = ", ".join(f"{code_span(path)}" for path in results["settings"]["scores"])
    text = [
        "# Correlations between bias scores across embeddings",
        "",
        f"Score tables: {scores}.",
        "",
        *_preset_lines(results),
        correlations,
        "",
        "![scores against each other](scatter.png)",
        "",
    ]
    atomic_write_text(folder / "report.md", "\n".join(text))


_RENDERERS = {"score": _render_score, "control": _render_control, "correlate": _render_correlate}


def render(results: dict, folder: str | Path) -> None:
    """report.md and the figures of one step's run folder, from its results.json alone."""
    step = results.get("step")
    if results.get("part") != "embeddings" or step not in _RENDERERS:
        raise ValueError(
            f"{folder}: results.json of part {results.get('part')!r}, step {step!r}; "
            f"expected part 'embeddings' and a step of {sorted(_RENDERERS)}"
        )
    _RENDERERS[step](results, Path(folder))


# The study's Tables 2 and 3 (pipelines/studies/rnsb_winobias.yaml) beside ours.
_TABLE2_SCORES = {"WEAT": "weat_", "RNSB": "rnsb_attributes_"}


def _correlation_row(results: dict, x: str, y: str) -> dict | None:
    return next(
        (row for row in results.get("correlations") or [] if row["x"] == x and row["y"] == y), None
    )


def table2_layout(results: dict | None, printed: dict) -> str:
    """Table 2: Pearson r of WEAT and RNSB (WEFE's, trained on A, B) with the WinoBias gaps, per
    set pair; ours [interval] beside the printed value, and our scatter. ``printed``: {test:
    {"WEAT": [4 values], "RNSB": [...]}} in the order Type 1 Pre., Type 1 Rec., Type 2 Pre.,
    Type 2 Rec. Without gaps (or ``results`` None), the printed values alone."""
    gaps = results is not None and any(column in results.get("columns", []) for column in EXTRINSIC)
    lines = [
        "| set pair | score | Type 1 Pre. diff | Type 1 Rec. diff | Type 2 Pre. diff | Type 2 Rec. diff |",
        "|---|---|---|---|---|---|",
    ]
    for test, scores in printed.items():
        for score, values in scores.items():
            cells = []
            for column, paper in zip(EXTRINSIC, values, strict=True):
                row = (
                    _correlation_row(results, f"{_TABLE2_SCORES[score]}{test}", column)
                    if gaps
                    else None
                )
                ours = (
                    ("n/a" if gaps else "not run")
                    if row is None
                    else with_interval(row["pearson"]["statistic"], row["pearson"]["interval"])
                )
                cells.append(f"{ours} (paper {paper:g})")
            lines.append(f"| {test} | {score} | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    if not gaps:
        return (
            table
            + "\n\nOurs: not run. No WinoBias gaps in this run (no `--coref`/`--coref-dir` outputs): "
            "Table 2 needs one coreference system trained per embedding."
        )
    return (
        table
        + "\n\nOurs: Pearson r [bootstrap interval over embeddings]; RNSB trained on A, B (WEFE's)."
        + "\n\n![WEAT and RNSB against the WinoBias gaps](scatter.png)"
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


def table3_layout(results: dict | None, printed: dict) -> str:
    """Table 3: Pearson r of the WEAT value with RNSB (WEFE's, trained on A, B) across the
    family, per set pair; ``printed``: {test: r}. A family whose reduce and amplify members
    mirror each other forces the value near 0, and the table says so beside it."""
    lines = [
        "| set pair | Pearson r (ours) | paper | Spearman ρ (ours) | embeddings |",
        "|---|---|---|---|---|",
    ]
    if results is None:
        lines += [
            f"| {test} | not run | {paper:g} | not run | 0 |" for test, paper in printed.items()
        ]
        return "\n".join(lines) + "\n\nOurs: not run; the paper's values alone."
    symmetric = _symmetric(results.get("members") or {})
    forced = []
    for test, paper in printed.items():
        row = _correlation_row(results, f"weat_{test}", f"rnsb_attributes_{test}")
        if row is None:
            lines.append(f"| {test} | n/a (not in this run) | {paper:g} | n/a | 0 |")
            continue
        pearson, spearman = row["pearson"], row["spearman"]
        mark = " ‡ near 0 by construction" if symmetric else ""
        if symmetric:
            forced.append((test, _against_size(results, test)))
        lines.append(
            f"| {test} | {with_interval(pearson['statistic'], pearson['interval'], digits=3)}{mark} | "
            f"{paper:g} | {with_interval(spearman['statistic'], spearman['interval'], digits=3)} | "
            f"{row['n']} |"
        )
    family = {
        "paper": "the study's 17 members built from the corpus",
        "variant": "bias-hub's ATTRACT-REPEL strength variant (not the study's family)",
    }.get(results.get("family"), "")
    text = "\n".join(lines) + f"\n\nFamily: {family}. Figure: our scatter of each pair."
    if forced:
        sizes = ", ".join(f"{test} {fmt(r, 2) if r is not None else 'n/a'}" for test, r in forced)
        text += (
            "\n\n‡ Near 0 by construction: every reduce member of this family has an amplify twin "
            "that differs in nothing else, so the WEAT values lie on both sides of the original's; "
            "RNSB, a KL divergence, grows with the bias in either direction and cannot tell the two "
            "apart (the study's §4), so across the family it follows the size of the WEAT value "
            f"(Pearson r of RNSB with |WEAT value|: {sizes}) and its Pearson r with the WEAT value "
            "is near 0 whatever the embeddings. A value near the paper's says nothing here."
        )
    return text


PAPER_LAYOUTS = {"table2": table2_layout, "table3": table3_layout}
