"""report.md of a ``bias-hub score`` run, rendered from its results.json alone."""

from __future__ import annotations

from pathlib import Path

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.builders.shared.text import with_interval

__all__ = ["render", "report"]


def _cells(result: dict, keys: list[str]) -> list[str]:
    intervals = result.get("confidence_intervals") or {}
    return [with_interval(result.get(key), intervals.get(key), digits=3) for key in keys]


def _table(rows: list[tuple[str, dict]], keys: list[str], first: str) -> list[str]:
    lines = [f"| {first} | " + " | ".join(keys) + " |", "|---" * (len(keys) + 1) + "|"]
    lines += [f"| {name} | " + " | ".join(_cells(result, keys)) + " |" for name, result in rows]
    return lines


def report(results: dict) -> str:
    """The Markdown of a score run: where the predictions came from, the join, the scores."""
    keys = list(results["summary_keys"])
    source, dataset, joined = results["predictions"], results["dataset"], results["join"]
    level = results["intervals"]["confidence_level"]
    lines = [
        f"# {results['metric']} on predictions made elsewhere",
        "",
        f"- predictions: `{source['file']}` ({source['format']}, {source['rows']} rows)",
        f"- dataset: `{dataset['folder']}`, config `{dataset['config']}`, splits {', '.join(dataset['splits'])}"
        if dataset["folder"]
        else "- dataset: the questions logged in each sample's doc",
    ]
    if results["per_test"]:
        lines.append(f"- {joined['word_vectors']} word vectors, {joined['tests']} tests")
    else:
        qualified = f" within `{joined['qualified_by']}`" if joined["qualified_by"] else ""
        lines.append(
            f"- joined on `{joined['id_column']}`{qualified}: {joined['joined']} prediction rows; "
            f"{joined['dataset_rows_without_prediction']} of {joined['dataset_rows']} dataset rows have no prediction"
        )
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
        lines.append(
            f"- `{argument}` from column `{reading['column']}`: {reading['read']} of {reading['rows']} "
            f"read ({reading['coverage']:.1%}); {fate}; by rule: {shares} "
            "(every row in `predictions.jsonl`)"
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


def render(results: dict, folder: Path) -> None:
    """Write report.md of ``results`` into ``folder`` (a run folder, or its staging area)."""
    atomic_write_text(Path(folder) / "report.md", report(results))
