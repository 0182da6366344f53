"""Writing the embeddings part's outputs: results, score tables, correlations, plots, report.md."""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Sequence
from dataclasses import asdict

from builders.shared.text import fmt
from pipelines.common import RunFolder
from pipelines.embeddings.control import AttractRepelConfig, FamilyMember, member_settings
from pipelines.embeddings.correlate import (
    correlation_markdown,
    correlation_table,
    scatter_figure,
    table2_markdown,
)
from pipelines.embeddings.scoring import interval_table, wide_table
from pipelines.embeddings.vectors import WordVectors

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
    decimals = digits if value == 0 else max(digits, digits - 1 - math.floor(math.log10(abs(value))))
    text = f"{value:.{decimals}f}"
    if interval and interval["low"] is not None:
        text += f" [{interval['low']:.{decimals}f}, {interval['high']:.{decimals}f}]"
    elif interval and interval["reason"]:
        text += f" (no interval: {interval['reason']})"
    return text


def scores_markdown(rows: Sequence[dict]) -> str:
    lines = ["| embedding | test | score | value [interval] | p-value | notes |", "|---|---|---|---|---|---|"]
    for row in rows:
        oov = {name: words for name, words in row["result"]["oov"].items() if words}
        notes = "; ".join([*(row["notes"] or []), *([f"OOV {oov}"] if oov else [])])
        for number, item in enumerate(row["values"]):
            p_value = _number(row["p_value"]) if row["metric"] == "weat" and number == 0 else ""
            lines.append(f"| {row['embedding']} | {row['test_id']} | {item['name']} | {_value(item)} | {p_value} | "
                         f"{notes if number == 0 else ''} |")  # fmt: skip
    return "\n".join(lines)


def _csv(columns: Sequence[str], table: dict[str, dict[str, float]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["embedding", *columns])
    for name, values in table.items():
        writer.writerow([name, *(values.get(column, "") for column in columns)])
    return buffer.getvalue()


def _write_tables(out: RunFolder, rows: Sequence[dict], extra: dict | None = None) -> tuple[list[str], dict]:
    columns, table = wide_table(rows)
    out.write_jsonl("results.jsonl", rows)
    out.write_json("scores.json", {"columns": columns, "table": table, "intervals": interval_table(rows), **(extra or {})})
    out.write_text("scores.csv", _csv(columns, table))
    return columns, table


def write_scores(out: RunFolder, rows: Sequence[dict], vectors: WordVectors, title: str) -> None:
    _write_tables(out, rows)
    text = [
        f"# {title}",
        "",
        f"Vectors: `{vectors.name}`, {len(vectors):,} words x {vectors.dim}. {vectors.note}",
        "",
        SCORES_NOTE,
        "",
        _interval_note(rows),
        "",
        scores_markdown(rows),
        "",
    ]
    out.write_text("report.md", "\n".join(text))


def family_pairs(columns: Sequence[str]) -> list[tuple[str, str]]:
    """Per test: the WEAT value and |WEAT value| against RNSB in both orientations, and the
    effect size against RNSB trained on the attribute sets (the study's Table 3 and more)."""
    pairs = []
    for column in columns:
        if not column.startswith("weat_") or column.startswith("weat_effect_size_"):
            continue
        test = column[len("weat_") :]
        for rnsb in (f"rnsb_attributes_{test}", f"rnsb_targets_{test}"):
            if rnsb in columns:
                pairs += [(column, rnsb), (f"abs_{column}", rnsb)]
        if f"weat_effect_size_{test}" in columns and f"rnsb_attributes_{test}" in columns:
            pairs.append((f"weat_effect_size_{test}", f"rnsb_attributes_{test}"))
    return pairs


def with_absolute_weat(columns: list[str], table: dict[str, dict[str, float]]) -> list[str]:
    """``abs_weat_<test>`` = |WEAT value|: RNSB's KL divergence has no sign."""
    extra = [f"abs_{c}" for c in columns if c.startswith("weat_") and not c.startswith("weat_effect_size_")]
    for values in table.values():
        for column in extra:
            if column[len("abs_") :] in values:
                values[column] = abs(values[column[len("abs_") :]])
    return columns + extra


def _bootstrap_note(settings) -> str:
    if not getattr(settings, "confidence_level", None):
        return "No intervals (--confidence-level 0)."
    return (
        f"Brackets: {settings.confidence_level:.0%} bootstrap intervals of each correlation, resampling the "
        f"embeddings ({settings.n_resamples} resamples, paired, BCa where defined). p (Holm): Holm's "
        "step-down adjustment over the rows of the table."
    )


def _winobias_markdown(gaps: dict) -> str:
    lines = ["| embedding | " + " | ".join(gaps["columns"]) + " |", "|---|" + "---|" * len(gaps["columns"])]
    for name, values in gaps["table"].items():
        cells = []
        for column in gaps["columns"]:
            bounds = gaps["intervals"].get(name, {}).get(column)
            cell = _number(values.get(column))
            cells.append(cell + (f" [{_number(bounds[0])}, {_number(bounds[1])}]" if bounds else ""))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def write_correlations(
    out: RunFolder,
    columns: Sequence[str],
    table: dict[str, dict[str, float]],
    pairs: Sequence[tuple[str, str]] | None = None,
    title: str = "",
    settings=None,
    winobias: dict | None = None,
) -> str:
    bootstrap = {}
    if settings is not None and settings.confidence_level:
        bootstrap = {"confidence_level": settings.confidence_level, "n_resamples": settings.n_resamples,
                     "seed": settings.seed}  # fmt: skip
    rows = correlation_table(columns, table, pairs, **bootstrap)
    figure = scatter_figure([r for r in rows if not r["x"].startswith("abs_")], table, title)
    out.write_json("correlations.json", rows)
    markdown = correlation_markdown(rows)
    parts = [_bootstrap_note(settings), "", markdown]
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
    if winobias is not None:
        out.write_json("winobias.json", winobias)
        parts += ["", f"## WinoBias gaps ({winobias['split']} split, {winobias['folder']})", "",
                  "Pro- minus anti-stereotypical precision, recall and F1 (MUC, B-cubed, CEAF-e averaged) per "
                  "type; intervals resample the sentences.", "", _winobias_markdown(winobias)]  # fmt: skip
    out.write_text("correlations.md", "\n".join(parts) + "\n")
    out.write_figure("scatter.png", figure)
    return "\n".join(parts)


def _member_table(headers: list[str], cells: list[list[str]], columns: Sequence[str], table: dict, names: list[str]) -> str:
    lines = ["| " + " | ".join(headers + list(columns)) + " |", "|" + "---|" * (len(headers) + len(columns))]
    for name, first in zip(names, cells, strict=True):
        values = table.get(name, {})
        lines.append("| " + " | ".join(first + [_number(values.get(c)) for c in columns]) + " |")
    return "\n".join(lines)


def _notes(rows: Sequence[dict], skipped: dict[str, str] | None = None) -> list[str]:
    notes = sorted({note for row in rows for note in row["notes"]})
    oov = sorted({f"{row['test_id']}: {word}" for row in rows for words in row["result"]["oov"].values() for word in words})
    return [
        *(f"- **{name} is not scored** (left out of the correlations): {reason}" for name, reason in (skipped or {}).items()),
        *(f"- {note}" for note in notes),
        *([f"- out of vocabulary: {', '.join(oov)}"] if oov else []),
    ]


def write_family(
    out: RunFolder,
    rows: Sequence[dict],
    family: Sequence[tuple[FamilyMember, WordVectors]],
    config: AttractRepelConfig,
    vectors: WordVectors,
    settings=None,
    extra: str = "",
    skipped: dict[str, str] | None = None,
) -> dict:
    """The report of this project's ATTRACT-REPEL strength family (no corpus given)."""
    members = {member.name: member_settings(member, config) for member, _ in family}
    columns, table = _write_tables(out, rows, {"family": "attract-repel strengths (bias-hub's variant)",
                                               "members": members, "not_scored": skipped or {}})  # fmt: skip
    all_columns = with_absolute_weat(list(columns), table)
    correlations = write_correlations(
        out, all_columns, table, family_pairs(all_columns),
        title=f"WEAT vs RNSB over {len(family)} bias-controlled embeddings", settings=settings,
    )  # fmt: skip
    scores = _member_table(
        ["member", "direction", "strength", "share of pairs", "expansion"],
        [[m.name, m.direction, f"{m.strength:g}", f"{m.fraction:g}", str(m.expand)] for m, _ in family],
        columns, table, [m.name for m, _ in family],
    )  # fmt: skip
    text = "\n".join(
        [
            "# Bias-controlled embeddings (bias-hub's ATTRACT-REPEL strength variant): WEAT vs RNSB",
            "",
            f"Base vectors: `{vectors.name}`, {len(vectors):,} words x {vectors.dim}. {vectors.note}",
            "",
            "This is **this project's variant**, not the study's 17-member family (that one needs a corpus: "
            "`bias-hub embeddings control --corpus FILE`). Each member is the base embedding specialised with "
            f"ATTRACT-REPEL (Mrkšić et al., 2017; {config.epochs} epochs, margins "
            f"{config.attract_margin}/{config.repel_margin}, AdaGrad lr {config.learning_rate}) on pairs from "
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
            *_notes(rows, skipped),
            "",
            *([extra, ""] if extra else []),
        ]
    )
    out.write_text("report.md", text)
    return {"columns": columns, "table": table, "correlations": correlations}


def _balancing_markdown(balancing: dict) -> str:
    lines = ["| member | sentences before | after | X&A before → after | Y&B | Y&A | X&B |", "|---|---|---|---|---|---|---|"]
    for name, stats in balancing.items():
        kinds = [f"{stats['before'][k]:,} → {stats['after'][k]:,}" for k in ("x_a", "y_b", "y_a", "x_b")]
        lines.append(f"| {name} | {stats['sentences_before']:,} | {stats['sentences_after']:,} | " + " | ".join(kinds) + " |")
    return "\n".join(lines)


def write_paper_family(out: RunFolder, rows: Sequence[dict], family, record: dict, word2vec, config: AttractRepelConfig,
                       settings, skipped: dict[str, str] | None = None) -> dict:  # fmt: skip
    """The report of the study's 4 x 2 x 2 + 1 family built from a corpus."""
    members = {m.name: {"set_pair": m.set_pair, "method": m.method, "direction": m.direction} for m, _ in family}
    columns, table = _write_tables(out, rows, {"family": "the study's set pairs x methods x directions",
                                               "members": members, "not_scored": skipped or {}, "record": record})  # fmt: skip
    out.write_json("family.json", {"word2vec": asdict(word2vec), "attract_repel": asdict(config), **record})
    all_columns = with_absolute_weat(list(columns), table)
    correlations = write_correlations(
        out, all_columns, table, family_pairs(all_columns),
        title=f"WEAT vs RNSB over the study's {len(family)} embeddings", settings=settings,
    )  # fmt: skip
    scores = _member_table(
        ["member", "set pair", "method", "direction"],
        [[m.name, m.set_pair or "", m.method or "original", m.direction or ""] for m, _ in family],
        columns, table, [m.name for m, _ in family],
    )  # fmt: skip
    corpus = record["corpus"]
    pairs = "\n".join(
        f"- `{name}`: " + "; ".join(f"{role} {len(words)} words" for role, words in
                                    {**sets["target_sets"], **sets["attribute_sets"]}.items())
        for name, sets in record["set_pairs"].items()
    )  # fmt: skip
    text = "\n".join(
        [
            f"# The study's bias-controlled family ({len(family)} embeddings): WEAT vs RNSB",
            "",
            f"Corpus `{corpus['path']}`: {corpus['sentences']:,} sentences, {corpus['tokens']:,} tokens "
            f"(NLTK word tokens, one sentence per line), {corpus['types']:,} types of which "
            f"{corpus['types_replaced_by_unk']:,} seen fewer than {word2vec.min_count} times became `<unk>`. "
            f"Word2Vec (gensim): {word2vec.vector_size} dimensions, min count {word2vec.min_count}, window "
            f"{word2vec.window}, {word2vec.epochs} epochs, {'skip-gram' if word2vec.skipgram else 'CBOW'}.",
            "",
            "As Kato and Miyao (§3) after Goldfarb-Tarrant et al. (2021): the original Word2Vec, and per set "
            "pair ATTRACT-REPEL on it (*reduce*: stereotypical pairs X×A ∪ Y×B repelled, anti-stereotypical "
            f"X×B ∪ Y×A attracted; *amplify* the reverse; {config.epochs} epochs) and dataset balancing of the "
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
            "correlate --scores scores.json --coref MEMBER=OUTPUT.conll ...` once a coreference model has "
            "been trained on each member (your step).",
            "",
            "![WEAT vs RNSB](scatter.png)",
            "",
            "## Notes",
            "",
            *_notes(rows, skipped),
            "",
        ]
    )
    out.write_text("report.md", text)
    return {"columns": columns, "table": table, "correlations": correlations}
