"""report.md of a ``bias-hub score`` run, rendered from its results.json alone."""

from __future__ import annotations

from pathlib import Path

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.builders.shared.text import code_span, table_cell, with_interval

__all__ = ["render", "report"]


def _cells(result: dict, keys: list[str]) -> list[str]:
    intervals = result.get("confidence_intervals") or {}
    return [with_interval(result.get(key), intervals.get(key), digits=3) for key in keys]


def _table(rows: list[tuple[str, dict]], keys: list[str], first: str) -> list[str]:
    lines = [f"| {first} | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    lines += [
        f"| {table_cell(name)} | " + " | ".join(_cells(result, keys)) + " |"
        for name, result in rows
    ]
    return lines


def report(results: dict) -> str:
    """The Markdown of a score run: where the predictions came from, the join, the scores."""
    keys = list(results["summary_keys"])
    source, dataset, joined = results["predictions"], results["dataset"], results["join"]
    level = results["intervals"]["confidence_level"]
    splits = ", ".join(code_span(split) for split in dataset["splits"])
    lines = [
        f"# {results['metric']} on predictions made elsewhere",
        "",
        f"- predictions: {code_span(source['file'])} ({source['format']}, {source['rows']} rows)"
        + (f", made by {code_span(results['model'])}" if results.get("model") else ""),
        f"- dataset: {code_span(dataset['folder'])}, config {code_span(dataset['config'])}, splits {splits}"
        if dataset["folder"]
        else "- dataset: the questions logged in each sample's doc",
    ]
    if results["per_test"]:
        lines.append(f"- {joined['word_vectors']} word vectors, {joined['tests']} tests")
    else:
        qualified = f" within {code_span(joined['qualified_by'])}" if joined["qualified_by"] else ""
        lines.append(
            f"- joined on {code_span(joined['id_column'])}{qualified}: {joined['joined']} prediction rows; "
            f"{joined['dataset_rows_without_prediction']} of {joined['dataset_rows']} dataset rows have no prediction"
        )
    lines += _coverage_lines(results.get("coverage"))
    reader = results.get("answer_reader")
    if reader:
        lines.append(f"- answers read by the `{reader['name']}` reader ({reader['chosen_by']})")
    for argument, reading in results["reading"].items():
        fate = (
            f"{reading['dropped']} left out of the scores, as BBQ's analysis script leaves them"
            if reading["dropped"]
            else f"{reading['rows'] - reading['read']} scored as unparsable (-1)"
        )
        shares = ", ".join(
            f"{rule} {n / reading['rows']:.1%}" for rule, n in reading["rules"].items()
        )
        shown = "; ".join(
            f"row {v['row']}: {code_span(repr(v['value']))}"
            for v in reading.get("unmatched_values", [])
        )
        lines.append(
            f"- `{argument}` from column {code_span(reading['column'])}: {reading['read']} of "
            f"{reading['rows']} read ({reading['coverage']:.1%}); {fate}; by rule: {shares} "
            "(every row in `predictions.jsonl`)"
            + (f"; matched no answer: {shown}" if shown else "")
        )
    lines.append(
        f"- intervals: {level:.0%} bootstrap, {results['intervals']['n_resamples']} resamples"
        if level
        else "- intervals: none (--confidence-level none)"
    )
    lines.append("")
    result = results["result"]
    if results["per_test"]:
        lines += _table(sorted(result.items()), keys, "test")
    else:
        rows = [("overall", result)]
        rows += sorted((result.get("per_category") or {}).items())
        lines += _table(rows, keys, "category" if "per_category" in result else "")
    return "\n".join(lines) + "\n"


def _coverage_lines(coverage: dict | None) -> list[str]:
    if not coverage:
        return []
    if coverage["expected"] is None:
        return [f"- coverage: {coverage['answered']} {coverage['unit']}; {coverage['against']}"]
    share = coverage["answered"] / coverage["expected"] if coverage["expected"] else 0.0
    line = (
        f"- coverage: {coverage['answered']} of {coverage['expected']} {coverage['unit']} "
        f"({share:.1%}) of {table_cell(coverage['against'])}"
    )
    if not coverage["complete"]:
        missing = ", ".join(map(table_cell, coverage["missing_examples"]))
        line += (
            f" -- **PARTIAL** (--allow-partial): the scores describe these {coverage['answered']} "
            f"only; missing e.g. {missing}"
        )
    return [line]


def render(results: dict, folder: Path) -> None:
    """Write report.md of ``results`` into ``folder`` (a run folder, or its staging area)."""
    atomic_write_text(Path(folder) / "report.md", report(results))
