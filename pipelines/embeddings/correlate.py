"""Correlating bias scores across embeddings: Pearson (linear) next to Spearman (rank).

Input: a table with one row per embedding and one column per score (our WEAT
and RNSB scores, or extrinsic scores such as the WinoBias gaps). Output: for
every pair of columns, Pearson's r and Spearman's rho with their p-values (Holm's
correction over the table beside them), bootstrap confidence intervals that
resample the embeddings (the members are the sample; `scipy.stats.bootstrap`,
paired, BCa where defined), and scatter plots. Reporting both correlations matters:
a few extreme members can make a rank correlation look strong while the linear
relation is weak (or the reverse), which is how earlier rank-based findings
(Badilla et al.) and the RNSB-vs-WinoBias study's Pearson results came to disagree.
"""

from __future__ import annotations

import csv
import itertools
import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from scipy import stats

from builders.shared.text import fmt
from pipelines.common.stats import holm

__all__ = [
    "correlation_markdown",
    "correlation_table",
    "holm",
    "read_score_table",
    "scatter_figure",
    "table2_markdown",
    "table2_pairs",
]

EXTRINSIC = ("winobias_type1_precision_gap", "winobias_type1_recall_gap",
             "winobias_type2_precision_gap", "winobias_type2_recall_gap")  # fmt: skip
# The direct scores of Table 2, in its row order: the study's WEAT value, then RNSB.
DIRECT = ("weat_", "rnsb_attributes_", "rnsb_targets_", "weat_effect_size_")


def read_score_table(path: str | Path) -> tuple[list[str], dict[str, dict[str, float]]]:
    """CSV/TSV with an ``embedding`` column and numeric score columns, or the JSON ``scores.json``."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--scores {path}: no such file")
    if path.suffix == ".json":
        data = json.loads(path.read_text(encoding="utf-8"))
        return list(data["columns"]), {name: dict(values) for name, values in data["table"].items()}
    delimiter = "\t" if path.suffix == ".tsv" else ","
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        if not reader.fieldnames or "embedding" not in reader.fieldnames:
            raise ValueError(f"--scores {path}: needs a header with an 'embedding' column, got {reader.fieldnames}")
        columns = [name for name in reader.fieldnames if name != "embedding"]
        table: dict[str, dict[str, float]] = {}
        for number, record in enumerate(reader, start=2):
            values = {}
            for column in columns:
                text = (record.get(column) or "").strip()
                if not text:
                    continue
                try:
                    values[column] = float(text)
                except ValueError as err:
                    raise ValueError(f"--scores {path}, line {number}, column {column!r}: not a number: {text!r}") from err
            table[record["embedding"]] = values
    return columns, table


def merge_tables(
    first: tuple[list[str], dict[str, dict[str, float]]], second: tuple[list[str], dict[str, dict[str, float]]]
) -> tuple[list[str], dict[str, dict[str, float]]]:
    """Columns of both, joined on the embedding name (extrinsic scores beside ours)."""
    columns = list(first[0]) + [c for c in second[0] if c not in first[0]]
    table = {name: dict(values) for name, values in first[1].items()}
    for name, values in second[1].items():
        table.setdefault(name, {}).update(values)
    return columns, table


def _pair(table: dict[str, dict[str, float]], x: str, y: str) -> tuple[np.ndarray, np.ndarray]:
    names = [n for n, v in table.items() if x in v and y in v and math.isfinite(v[x]) and math.isfinite(v[y])]
    return np.array([table[n][x] for n in names]), np.array([table[n][y] for n in names])


def _pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (x * y).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))


def _spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return _pearson(stats.rankdata(x, axis=axis), stats.rankdata(y, axis=axis), axis=axis)


def correlation_interval(a: np.ndarray, b: np.ndarray, kind: str, confidence_level: float, n_resamples: int,
                         seed: int) -> dict:  # fmt: skip
    """Bootstrap interval of Pearson's r or Spearman's rho, resampling the embeddings
    (pairs of scores kept together); BCa where defined, else percentile."""
    import warnings

    function = _pearson if kind == "pearson" else _spearman
    interval = {"low": None, "high": None, "confidence_level": confidence_level, "method": None,
                "n_resamples": n_resamples, "unit": "embeddings", "n_units": int(a.size), "reason": None}  # fmt: skip
    for method in ("BCa", "percentile"):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = stats.bootstrap((a, b), function, paired=True, vectorized=True, n_resamples=n_resamples,
                                     confidence_level=confidence_level, method=method,
                                     rng=np.random.default_rng(seed))  # fmt: skip
        undefined = int(np.isnan(result.bootstrap_distribution).sum())
        if undefined:
            interval["reason"] = (f"undefined in {undefined} of {n_resamples} resamples "
                                  "(a resample whose scores are all equal)")  # fmt: skip
            return interval
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            interval.update(low=float(low), high=float(high), method=method)
            return interval
    interval["reason"] = "the bootstrap distribution is degenerate"
    return interval


def correlation_table(
    columns: Sequence[str],
    table: dict[str, dict[str, float]],
    pairs: Sequence[tuple[str, str]] | None = None,
    confidence_level: float | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
) -> list[dict]:
    """Pearson and Spearman (with p-values, Holm-adjusted p-values over the rows and, with
    ``confidence_level``, bootstrap intervals over embeddings) for each pair of columns
    (all pairs by default)."""
    unknown = [c for pair in pairs or [] for c in pair if c not in columns]
    if unknown:
        raise ValueError(f"--pairs: unknown columns {unknown}; the table has {list(columns)}")
    rows = []
    for x, y in pairs or itertools.combinations(columns, 2):
        a, b = _pair(table, x, y)
        row: dict = {"x": x, "y": y, "n": int(a.size)}
        if a.size < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
            row.update(pearson_r=None, pearson_p=None, spearman_rho=None, spearman_p=None, disagree=None)
            rows.append(row)
            continue
        pearson = stats.pearsonr(a, b)
        spearman = stats.spearmanr(a, b)
        row.update(
            pearson_r=float(pearson.statistic),
            pearson_p=float(pearson.pvalue),
            spearman_rho=float(spearman.statistic),
            spearman_p=float(spearman.pvalue),
        )
        # "disagree": one of the two is significant at 0.05 and the other is not.
        row["disagree"] = bool((row["pearson_p"] < 0.05) != (row["spearman_p"] < 0.05))
        if confidence_level:
            row["pearson_ci"] = correlation_interval(a, b, "pearson", confidence_level, n_resamples, seed)
            row["spearman_ci"] = correlation_interval(a, b, "spearman", confidence_level, n_resamples, seed)
        rows.append(row)
    for key in ("pearson", "spearman"):
        for row, adjusted in zip(rows, holm([row.get(f"{key}_p") for row in rows]), strict=True):
            row[f"{key}_p_holm"] = adjusted
    return rows


def table2_pairs(columns: Sequence[str]) -> list[tuple[str, str]]:
    """Every direct score column (WEAT value, RNSB both ways, WEAT effect size) against
    every WinoBias gap column: the pairs of the study's Table 2."""
    extrinsic = [c for c in columns if c.startswith("winobias_")]
    direct = [c for c in columns if c.startswith(("weat_", "rnsb_"))]
    return [(x, y) for x in direct for y in extrinsic]


def _fmt(value: float | None, digits: int = 3) -> str:
    return fmt(value, digits, missing="n/a")


def _with_interval(value: float | None, interval: dict | None, digits: int = 2) -> str:
    text = _fmt(value, digits)
    if interval and interval.get("low") is not None:
        text += f" [{_fmt(interval['low'], digits)}, {_fmt(interval['high'], digits)}]"
    return text


def correlation_markdown(rows: Sequence[dict]) -> str:
    lines = [
        "| x | y | n | Pearson r [CI] | p | p (Holm) | Spearman ρ [CI] | p | p (Holm) | linear vs rank |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        verdict = "n/a" if row["disagree"] is None else ("disagree" if row["disagree"] else "agree")
        lines.append(
            f"| {row['x']} | {row['y']} | {row['n']} | {_with_interval(row['pearson_r'], row.get('pearson_ci'))} | "
            f"{_fmt(row['pearson_p'])} | {_fmt(row.get('pearson_p_holm'))} | "
            f"{_with_interval(row['spearman_rho'], row.get('spearman_ci'))} | {_fmt(row['spearman_p'])} | "
            f"{_fmt(row.get('spearman_p_holm'))} | {verdict} |"
        )
    return "\n".join(lines)


_DIRECT_NAMES = {"weat_": "WEAT (value)", "rnsb_attributes_": "RNSB (on A, B)", "rnsb_targets_": "RNSB (on X, Y)",
                 "weat_effect_size_": "WEAT (effect size)"}  # fmt: skip


def _direct_kind(column: str) -> tuple[str, str] | None:
    for prefix in sorted(_DIRECT_NAMES, key=len, reverse=True):
        if column.startswith(prefix):
            return prefix, column[len(prefix) :]
    return None


def table2_markdown(rows: Sequence[dict], alpha: float = 0.05) -> str:
    """The study's Table 2 layout: rows test x direct score, columns Type 1/2 precision and
    recall gaps; Pearson r [bootstrap interval], * where Holm's adjusted p < alpha."""
    cells: dict[tuple[str, str], dict[str, dict]] = {}
    for row in rows:
        kind = _direct_kind(row["x"])
        if kind is None or row["y"] not in EXTRINSIC:
            continue
        cells.setdefault((kind[1], kind[0]), {})[row["y"]] = row
    if not cells:
        return ""
    order = {prefix: i for i, prefix in enumerate(DIRECT)}
    lines = ["| test | direct score | Type 1 Pre. diff | Type 1 Rec. diff | Type 2 Pre. diff | Type 2 Rec. diff |",
             "|---|---|---|---|---|---|"]  # fmt: skip
    for test, prefix in sorted(cells, key=lambda key: (key[0], order[key[1]])):
        values = []
        for column in EXTRINSIC:
            row = cells[test, prefix].get(column)
            if row is None:
                values.append("")
                continue
            mark = "*" if row.get("pearson_p_holm") is not None and row["pearson_p_holm"] < alpha else ""
            values.append(_with_interval(row["pearson_r"], row.get("pearson_ci")) + mark)
        lines.append(f"| {test} | {_DIRECT_NAMES[prefix]} | " + " | ".join(values) + " |")
    return "\n".join(lines)


def scatter_figure(rows: Sequence[dict], table: dict[str, dict[str, float]], title: str = ""):
    """One panel per pair: the members as points, labelled, with r and rho in the panel title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [row for row in rows if row["n"] >= 2]
    if not panels:
        raise ValueError("no pair of columns has two embeddings with both scores")
    width = min(3, len(panels))
    height = math.ceil(len(panels) / width)
    figure, axes = plt.subplots(height, width, figsize=(4.2 * width, 3.8 * height), squeeze=False)
    for axis in axes.flat[len(panels) :]:
        axis.set_visible(False)
    for axis, row in zip(axes.flat, panels, strict=False):
        names = [n for n, v in table.items() if row["x"] in v and row["y"] in v]
        xs = [table[n][row["x"]] for n in names]
        ys = [table[n][row["y"]] for n in names]
        axis.scatter(xs, ys, s=22, color="tab:blue")
        for name, x, y in zip(names, xs, ys, strict=False):
            axis.annotate(name, (x, y), fontsize=6, xytext=(2, 2), textcoords="offset points")
        axis.set_xlabel(row["x"], fontsize=8)
        axis.set_ylabel(row["y"], fontsize=8)
        axis.set_title(f"r={_fmt(row['pearson_r'], 2)}  ρ={_fmt(row['spearman_rho'], 2)}", fontsize=9)
        axis.tick_params(labelsize=7)
    if title:
        figure.suptitle(title, fontsize=10)
    return figure
