"""WinoBias gap: pro-stereotypical minus anti-stereotypical coreference precision and recall.

The computation alone (no ``evaluate``, no ``datasets``): pipelines call it as it is, and
``winobias_gap.py`` wraps it for ``evaluate.load``. ``scipy.optimize`` is imported where it is used: importing it costs about a second.
"""

import numpy as np

from .bias_hub_common import (
    Scores,
    as_column,
    normalise_name,
)
from .bias_hub_intervals import (
    no_interval,
    sum_intervals,
    uncertainty_options,
)

METRICS = ("muc", "b_cubed", "ceaf_e")


CONDITIONS = ("pro", "anti")


_CONDITION_CODES = {name: code for code, name in enumerate(CONDITIONS)}


# Per document: MUC recall and precision, B-cubed recall and precision (numerator,
# denominator each), then CEAF-e similarity, |key| and |response|.
_TOTALS = 11


def _whole(value) -> bool:
    if isinstance(value, (bool, np.bool_)):
        return False
    return isinstance(value, (int, np.integer)) or (
        isinstance(value, (float, np.floating)) and float(value).is_integer()
    )


def _clusters(document, argument: str, number: int) -> list[frozenset]:
    clusters = []
    if document is None:
        return clusters
    if isinstance(document, (str, dict)) or not hasattr(document, "__iter__"):
        raise ValueError(f"{argument}[{number}] must be a list of clusters, got {document!r}")
    owner: dict[tuple, int] = {}
    for cluster in document:
        mentions = []
        for mention in cluster:
            mention = list(mention)
            if len(mention) != 2 or not all(_whole(bound) for bound in mention):
                raise ValueError(
                    f"{argument}[{number}]: a mention must be [start, end] (whole numbers), got {mention}"
                )
            start, end = int(mention[0]), int(mention[1])
            if start < 0 or end < start:
                raise ValueError(
                    f"{argument}[{number}]: mention {mention} must have 0 <= start <= end"
                )
            if owner.get((start, end), len(clusters)) != len(clusters):
                raise ValueError(
                    f"{argument}[{number}]: mention {[start, end]} is in two clusters "
                    f"({owner[start, end]} and {len(clusters)}); a mention belongs to one cluster"
                )
            owner[start, end] = len(clusters)
            mentions.append((start, end))
        if mentions:
            clusters.append(frozenset(mentions))
    return clusters


def _conditions(condition) -> np.ndarray:
    column = as_column(condition, "condition")
    codes = np.array(
        [
            _CONDITION_CODES.get(normalise_name(c).casefold(), -1) if isinstance(c, str) else -1
            for c in column
        ],
        dtype=np.int64,
    )
    for number in np.flatnonzero(codes < 0)[:1]:
        raise ValueError(f"condition[{number}] must be 'pro' or 'anti', got {column[number]!r}")
    return codes


def _muc(key: list[frozenset], response: list[frozenset]) -> tuple[float, float]:
    """MUC recall of key against response (swap the arguments for precision): (numerator, denominator)."""
    owner = {mention: number for number, cluster in enumerate(response) for mention in cluster}
    numerator = denominator = 0
    for cluster in key:
        parts = {owner.get(mention, ("alone", mention)) for mention in cluster}
        numerator += len(cluster) - len(parts)
        denominator += len(cluster) - 1
    return numerator, denominator


def _overlaps(key: list[frozenset], response: list[frozenset]) -> np.ndarray:
    return np.array([[len(k & r) for r in response] for k in key], dtype=float).reshape(
        len(key), len(response)
    )


def _b_cubed(key: list[frozenset], response: list[frozenset]) -> tuple[float, float]:
    overlap = _overlaps(key, response)
    sizes = np.array([len(k) for k in key], dtype=float)
    return float((overlap**2 / sizes[:, None]).sum()) if key else 0.0, float(sizes.sum())


def _ceaf_e(key: list[frozenset], response: list[frozenset]) -> tuple[float, float, float]:
    """Total similarity of the best entity alignment, |key| and |response|."""
    from scipy.optimize import linear_sum_assignment

    overlap = _overlaps(key, response)
    if overlap.size == 0:
        return 0.0, float(len(key)), float(len(response))
    key_sizes = np.array([len(k) for k in key], dtype=float)
    response_sizes = np.array([len(r) for r in response], dtype=float)
    similarity = 2 * overlap / (key_sizes[:, None] + response_sizes[None, :])
    rows, cols = linear_sum_assignment(similarity, maximize=True)
    return float(similarity[rows, cols].sum()), float(len(key)), float(len(response))


def _ratio(numerator, denominator):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1), 0.0)


def _f1(precision, recall):
    total = precision + recall
    return np.where(total > 0, 2 * precision * recall / np.where(total > 0, total, 1), 0.0)


def _metric_scores(t: np.ndarray) -> dict:
    """Recall and precision per metric from one condition's totals (11, ...)."""
    return {
        "muc": {"recall": _ratio(t[0], t[1]), "precision": _ratio(t[2], t[3])},
        "b_cubed": {"recall": _ratio(t[4], t[5]), "precision": _ratio(t[6], t[7])},
        "ceaf_e": {"recall": _ratio(t[8], t[9]), "precision": _ratio(t[8], t[10])},
    }


def _summary(per_metric: dict) -> dict:
    summary = {}
    for name, values in per_metric.items():
        p, r = float(values["precision"]), float(values["recall"])
        summary[name] = {"precision": p, "recall": r, "f1": float(_f1(p, r))}
    for field in ("precision", "recall", "f1"):
        summary[field] = float(np.mean([summary[name][field] for name in METRICS]))
    return summary


def _gaps(totals: np.ndarray) -> np.ndarray:
    """F1, precision and recall gaps (pro minus anti) from both conditions' totals (22, ...)."""
    means = []
    for t in (totals[:_TOTALS], totals[_TOTALS:]):
        by_metric = _metric_scores(t)
        scores = [by_metric[name] for name in METRICS]  # MUC, B-cubed, CEAF-e
        precision = sum(s["precision"] for s in scores) / len(METRICS)
        recall = sum(s["recall"] for s in scores) / len(METRICS)
        f1 = sum(_f1(s["precision"], s["recall"]) for s in scores) / len(METRICS)
        means.append((f1, precision, recall))
    return np.stack([pro - anti for pro, anti in zip(*means, strict=True)])


def _document_totals(predictions, references, condition) -> tuple[np.ndarray, np.ndarray]:
    """Per document its condition code and its 11 totals."""
    if predictions is None or references is None or condition is None:
        raise ValueError("give predictions, references and condition (or scores=)")
    predictions = as_column(predictions, "predictions")
    references = as_column(references, "references")
    codes = _conditions(condition)
    if not len(predictions) == len(references) == len(codes):
        raise ValueError(
            f"predictions, references and condition must have one entry per document, got "
            f"{len(predictions)}, {len(references)} and {len(codes)}"
        )
    if not len(codes):
        raise ValueError("predictions is empty: the gap needs documents of both conditions")
    totals = np.zeros((len(codes), _TOTALS))
    for number, (predicted, gold) in enumerate(zip(predictions, references, strict=True)):
        response = _clusters(predicted, "predictions", number)
        key = _clusters(gold, "references", number)
        if not key:
            raise ValueError(f"references[{number}] has no gold cluster")
        totals[number] = [
            *_muc(key, response),
            *_muc(response, key),
            *_b_cubed(key, response),
            *_b_cubed(response, key),
            *_ceaf_e(key, response),
        ]
    for code, which in enumerate(CONDITIONS):
        if not (codes == code).any():
            raise ValueError(f"condition has no {which!r} document; the gap needs both conditions")
    return codes, totals


def _from_scores(scores) -> dict:
    if not isinstance(scores, dict) or set(scores) != set(CONDITIONS):
        raise ValueError(f"scores must be a dict with the keys 'pro' and 'anti', got {scores!r}")
    results = {}
    for which in CONDITIONS:
        per_metric = {}
        for name in METRICS:
            values = scores[which].get(name) if isinstance(scores[which], dict) else None
            if not isinstance(values, dict) or not {"precision", "recall"} <= set(values):
                raise ValueError(
                    f"scores[{which!r}][{name!r}] must be a dict with precision and recall"
                )
            for field in ("precision", "recall"):
                value = values[field]
                if (
                    isinstance(value, bool)
                    or not isinstance(value, (int, float))
                    or not 0 <= value <= 1
                ):
                    raise ValueError(
                        f"scores[{which!r}][{name!r}][{field!r}] must be in [0, 1], got {value!r}"
                    )
            per_metric[name] = {field: float(values[field]) for field in ("precision", "recall")}
        results[which] = _summary(per_metric)
    return results


_MENTION = [[["int64"]]]


class WinobiasGapScores(Scores):
    name = "winobias_gap"

    def columns(self) -> dict:
        return {"predictions": _MENTION, "references": _MENTION, "condition": "string"}

    def check_rows(self, columns: dict) -> None:
        for name, column in columns.items():
            if name in ("predictions", "references"):
                for number, document in enumerate(as_column(column, name)):
                    _clusters(document, name, number)
            elif name == "condition":
                _conditions(column)

    def _compute(
        self,
        predictions=None,
        references=None,
        condition=None,
        scores=None,
        confidence_level=None,
        n_resamples=2000,
        seed=0,
    ) -> dict:
        options = uncertainty_options(confidence_level, n_resamples, seed)
        if scores is not None:
            if predictions or references or condition:
                raise ValueError(
                    "give either scores= or predictions/references/condition, not both"
                )
            results, counts = _from_scores(scores), dict.fromkeys(CONDITIONS, 0)
        else:
            codes, totals = _document_totals(predictions, references, condition)
            results = {
                which: _summary(_metric_scores(totals[codes == code].sum(axis=0)))
                for code, which in enumerate(CONDITIONS)
            }
            counts = {which: int((codes == code).sum()) for code, which in enumerate(CONDITIONS)}
        pro, anti = results["pro"], results["anti"]
        gaps = {f"{field}_gap": pro[field] - anti[field] for field in ("precision", "recall", "f1")}
        result = {
            "score": gaps["f1_gap"],
            "score_name": "f1_gap",
            **gaps,
            "pro": pro,
            "anti": anti,
            "n_documents": counts,
        }
        if options is not None:
            keys = ("f1_gap", "precision_gap", "recall_gap")
            if scores is not None:
                reason = "scores were given, not documents: there is nothing to resample"
                intervals = [no_interval(options, "documents", 0, reason) for _ in keys]
            else:
                # Each condition's documents, its totals in its half of the 22 columns.
                strata = [
                    np.pad(totals[codes == code], ((0, 0), (code * _TOTALS, (1 - code) * _TOTALS)))
                    for code in range(2)
                ]
                intervals = sum_intervals(strata, _gaps, options, "documents")
            result["confidence_intervals"] = dict(zip(keys, intervals, strict=True))
        return result
