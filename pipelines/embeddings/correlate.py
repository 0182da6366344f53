"""Correlating bias scores across embeddings: Pearson (linear) next to Spearman (rank).

For every pair of columns of a table (one row per embedding; WEAT, RNSB or WinoBias gap
columns): both correlations from ``stats.correlation`` (bootstrap intervals resample the
embeddings), Holm's correction over the table, and scatter plots. Both matter: a few extreme
members can make a rank correlation look strong while the linear relation is weak, which is
how rank-based findings (Badilla et al.) and the study's Pearson results came to disagree.
"""

from __future__ import annotations

import io
import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path

from bias_hub.builders.shared.files import csv_records, read_text
from bias_hub.builders.shared.text import fmt
from bias_hub.pipelines.common.render import pyplot
from bias_hub.pipelines.common.stats import CORRELATION_METHODS, correlation, holm

__all__ = [
    "EXTRINSIC",
    "column_label",
    "correlation_table",
    "family_pairs",
    "merge_tables",
    "read_score_table",
    "scatter_figure",
    "table2_cells",
    "table2_pairs",
    "with_absolute_weat",
]

EXTRINSIC = (
    "winobias_type1_precision_gap",
    "winobias_type1_recall_gap",
    "winobias_type2_precision_gap",
    "winobias_type2_recall_gap",
)
# The direct scores of Table 2, in its row order (the study's WEAT value, then RNSB), by column
# prefix: their names in Table 2 and on a figure's axes.
_DIRECT_NAMES = {
    "weat_": ("WEAT (value)", "WEAT value"),
    "rnsb_attributes_": ("RNSB (on A, B)", "RNSB (trained on A, B)"),
    "rnsb_targets_": ("RNSB (on X, Y)", "RNSB (trained on X, Y)"),
    "weat_effect_size_": ("WEAT (effect size)", "WEAT effect size"),
}
_EXPECTED = (
    "expected scores.json or results.json of `bias-hub embeddings score|control` (with 'columns' "
    "and 'table'), or a CSV/TSV file with an 'embedding' column"
)


def _json_table(path: Path) -> tuple[list[str], dict[str, dict[str, float]]]:
    try:
        data = json.loads(_text(path))
    except json.JSONDecodeError as err:
        raise ValueError(f"--scores {path}: not valid JSON ({err}); {_EXPECTED}") from None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("columns"), list)
        or not isinstance(data.get("table"), dict)
    ):
        if isinstance(data, dict) and data.get("part"):
            what = f"results.json of part {data.get('part')!r}"
        elif isinstance(data, dict):
            what = f"a JSON object with keys {sorted(data)[:6]}"
        else:
            what = f"a JSON {type(data).__name__}"
        raise ValueError(f"--scores {path}: {what} is no score table; {_EXPECTED}")
    return list(data["columns"]), {name: dict(values) for name, values in data["table"].items()}


def read_score_table(path: str | Path) -> tuple[list[str], dict[str, dict[str, float]]]:
    """CSV/TSV with an ``embedding`` column and numeric score columns, or the JSON score table
    of ``embeddings score|control`` (``scores.json``, or the step's ``results.json``)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--scores {path}: no such file")
    if path.suffix == ".json":
        return _json_table(path)
    delimiter = "\t" if path.suffix == ".tsv" else ","
    text = io.StringIO(_text(path, newline=""), newline="")
    header, records = csv_records(text, f"--scores {path}", delimiter)
    if "embedding" not in header:
        raise ValueError(
            f"--scores {path}: needs a header with an 'embedding' column, got {header}"
        )
    columns = [name for name in header if name != "embedding"]
    table: dict[str, dict[str, float]] = {}
    lines: dict[str, int] = {}
    for number, record in records:
        name = record["embedding"]
        if name in lines:
            raise ValueError(
                f"--scores {path}, line {number}: the embedding {name!r} again (first on line "
                f"{lines[name]}); one row per embedding"
            )
        lines[name] = number
        table[name] = {
            column: _score_cell(
                record[column], f"--scores {path}, line {number}, column {column!r}"
            )
            for column in columns
            if record[column].strip()
        }
    return columns, table


def _score_cell(text: str, where: str) -> float:
    """A score cell as a finite number (a blank cell is a missing score)."""
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{where}: not a number: {text.strip()!r}") from None
    if not math.isfinite(value):
        raise ValueError(
            f"{where}: {text.strip()!r} is not a finite number (leave the cell blank for no score)"
        )
    return value


def _text(path: Path, newline: str | None = None) -> str:
    """``read_text``, a file that is not UTF-8 named with the flag that gave it."""
    try:
        return read_text(path, newline)
    except ValueError as err:
        raise ValueError(f"--scores {err}") from None


def merge_tables(
    first: tuple[list[str], dict[str, dict[str, float]]],
    second: tuple[list[str], dict[str, dict[str, float]]],
) -> tuple[list[str], dict[str, dict[str, float]]]:
    """Columns of both, joined on the embedding name (extrinsic scores beside ours)."""
    columns = list(first[0]) + [c for c in second[0] if c not in first[0]]
    table = {name: dict(values) for name, values in first[1].items()}
    for name, values in second[1].items():
        table.setdefault(name, {}).update(values)
    return columns, table


def _pair(
    table: dict[str, dict[str, float]], x: str, y: str
) -> tuple[list[str], list[float], list[float]]:
    """The embeddings with finite values in both columns, and those values."""
    names = [
        n
        for n, v in table.items()
        if x in v and y in v and math.isfinite(v[x]) and math.isfinite(v[y])
    ]
    return names, [table[n][x] for n in names], [table[n][y] for n in names]


def correlation_table(
    columns: Sequence[str],
    table: dict[str, dict[str, float]],
    pairs: Sequence[tuple[str, str]] | None = None,
    confidence_level: float | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[dict]:
    """Per pair of columns (all pairs by default): ``{"x", "y", "n", "pearson", "spearman",
    "disagree"}``, each method's entry ``bias_hub.pipelines.common.stats.correlation``'s dict (intervals
    over embeddings with ``confidence_level``) plus ``p_value_holm``, Holm's adjustment over the
    rows. ``disagree``: one of the two is significant at 0.05 and the other is not."""
    unknown = [c for pair in pairs or [] for c in pair if c not in columns]
    if unknown:
        raise ValueError(f"--pairs: unknown columns {unknown}; the table has {list(columns)}")
    options = {"confidence_level": confidence_level, "n_resamples": n_resamples, "seed": seed}
    rows = []
    for x, y in pairs or itertools.combinations(columns, 2):
        _, xs, ys = _pair(table, x, y)
        row: dict = {"x": x, "y": y, "n": len(xs)}
        for method in CORRELATION_METHODS:
            row[method] = correlation(xs, ys, method, **options, unit="embeddings")
        p_values = [row[method]["p_value"] for method in CORRELATION_METHODS]
        row["disagree"] = (
            None if None in p_values else bool((p_values[0] < 0.05) != (p_values[1] < 0.05))
        )
        rows.append(row)
    for method in CORRELATION_METHODS:
        for row, adjusted in zip(rows, holm([row[method]["p_value"] for row in rows]), strict=True):
            row[method]["p_value_holm"] = adjusted
    return rows


def table2_pairs(columns: Sequence[str]) -> list[tuple[str, str]]:
    """Every direct score column (WEAT value, RNSB both ways, WEAT effect size) against
    every WinoBias gap column: the pairs of the study's Table 2."""
    extrinsic = [c for c in columns if c.startswith("winobias_")]
    direct = [c for c in columns if c.startswith(("weat_", "rnsb_"))]
    return [(x, y) for x in direct for y in extrinsic]


def _direct_kind(column: str) -> tuple[str, str] | None:
    for prefix in sorted(_DIRECT_NAMES, key=len, reverse=True):
        if column.startswith(prefix):
            return prefix, column[len(prefix) :]
    return None


def column_label(column: str) -> str:
    """A score column as a reader names it: ``rnsb_attributes_weat7`` -> ``RNSB (trained on
    A, B), weat7``; ``winobias_type1_precision_gap`` -> ``WinoBias type 1 precision gap``."""
    if column.startswith("winobias_type") and column.endswith("_gap"):
        kind, _, measure = column[len("winobias_type") : -len("_gap")].partition("_")
        return f"WinoBias type {kind} {measure} gap (pro − anti)"
    absolute = column.startswith("abs_")
    kind = _direct_kind(column.removeprefix("abs_"))
    if kind is None:
        return column
    prefix, test = kind
    name = _DIRECT_NAMES[prefix][1]
    return f"|{name}|, {test}" if absolute else f"{name}, {test}"


def table2_cells(rows: Sequence[dict]) -> list[tuple[str, str, list]]:
    """The study's Table 2 cells: per (test, direct score), in its row order, the correlation row
    of each WinoBias gap (None where there is none); empty without gaps."""
    cells: dict[tuple[str, str], dict[str, dict]] = {}
    for row in rows:
        kind = _direct_kind(row["x"])
        if kind is not None and row["y"] in EXTRINSIC:
            cells.setdefault((kind[1], kind[0]), {})[row["y"]] = row
    order = {prefix: i for i, prefix in enumerate(_DIRECT_NAMES)}
    return [
        (test, _DIRECT_NAMES[prefix][0], [cells[test, prefix].get(column) for column in EXTRINSIC])
        for test, prefix in sorted(cells, key=lambda key: (key[0], order[key[1]]))
    ]


_MARKERS = "osD^vP*Xp<>h"


def scatter_figure(rows: Sequence[dict], table: dict[str, dict[str, float]], title: str = ""):
    """One panel per pair, axes named in words, r and rho in the panel title; each embedding
    one colour and marker, named once in a legend beside the panels (labels beside the points
    overlapped where members score alike)."""
    plt = pyplot()

    panels = [row for row in rows if row["n"] >= 2]
    if not panels:
        raise ValueError("no pair of columns has two embeddings with both scores")
    members = list(
        dict.fromkeys(name for row in panels for name in _pair(table, row["x"], row["y"])[0])
    )
    colours = plt.get_cmap("tab20")
    style = {name: (colours(i % 20), _MARKERS[i % len(_MARKERS)]) for i, name in enumerate(members)}
    width = min(3, len(panels))
    height = math.ceil(len(panels) / width)
    figure, axes = plt.subplots(
        height,
        width,
        figsize=(4.4 * width + 2.2, 3.9 * height),
        squeeze=False,
        layout="constrained",
    )
    for axis in axes.flat[len(panels) :]:
        axis.set_visible(False)
    for axis, row in zip(axes.flat, panels, strict=False):
        for name, x, y in zip(*_pair(table, row["x"], row["y"]), strict=True):
            colour, marker = style[name]
            axis.scatter([x], [y], s=28, color=colour, marker=marker, label=name)
        axis.set_xlabel(column_label(row["x"]), fontsize=8)
        axis.set_ylabel(column_label(row["y"]), fontsize=8)
        r, rho = row["pearson"]["statistic"], row["spearman"]["statistic"]
        axis.set_title(f"r={fmt(r, 2, missing='n/a')}  ρ={fmt(rho, 2, missing='n/a')}", fontsize=9)
        axis.tick_params(labelsize=7)
    handles = [
        plt.Line2D([], [], linestyle="", marker=style[n][1], color=style[n][0], label=n)
        for n in members
    ]
    figure.legend(
        handles=handles,
        loc="outside right center",
        fontsize=7,
        title="embedding",
        title_fontsize=8,
        frameon=False,
    )
    if title:
        figure.suptitle(title, fontsize=10)
    return figure


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


def with_absolute_weat(
    columns: Sequence[str], table: dict[str, dict[str, float]]
) -> tuple[list[str], dict]:
    """The columns and a copy of the table with ``abs_weat_<test>`` = |WEAT value| added: RNSB's
    KL divergence has no sign."""
    signed = [c for c in columns if c.startswith("weat_") and not c.startswith("weat_effect_size_")]
    table = {
        name: values | {f"abs_{c}": abs(values[c]) for c in signed if c in values}
        for name, values in table.items()
    }
    return [*columns, *(f"abs_{c}" for c in signed)], table
