"""NLI gender-bias score over all three labels (NLI-CoAL), with Dev et al.'s neutrality measures.

The computation alone (no ``evaluate``, no ``datasets``): pipelines call it as it is, and
``nli_gender_bias.py`` wraps it for ``evaluate.load``.
"""

import numpy as np

from .bias_hub_common import (
    Scores,
    as_column,
    as_labels,
    as_names,
    cluster_codes,
)
from .bias_hub_intervals import (
    paired_comparison,
    paired_uncertainty_options,
    sum_intervals,
    uncertainty_options,
    unit_strata,
    wilson_interval,
)

LABELS = ("entailment", "neutral", "contradiction")


SUBSETS = ("pro_stereotypical", "anti_stereotypical", "non_stereotypical")


_LABEL_NAMES = {name: code for code, name in enumerate(LABELS)}


_SUBSET_NAMES = {**{name: code for code, name in enumerate(SUBSETS)}, "ps": 0, "as": 1, "ns": 2}


THRESHOLDS = (0.5, 0.7)


# Softmax outputs in float16/float32 sum to 1 only approximately.
_SUM_TOLERANCE = 1e-3


_SCORES = ("bias_score", "fraction_neutral")


_NEUTRAL_SCORES = ("net_neutral", *(f"threshold_neutral.{t}" for t in THRESHOLDS))


def _probabilities(probabilities, n_rows: int, argument: str = "probabilities") -> np.ndarray:
    if isinstance(probabilities, dict):
        raise ValueError(f"{argument} must be rows of 3 numbers, got a dict")
    try:
        probs = np.asarray(probabilities, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{argument} must be rows of 3 numbers ({err})") from None
    if probs.shape != (n_rows, 3):
        raise ValueError(
            f"{argument} must have shape ({n_rows}, 3) (one row of entailment, neutral, "
            f"contradiction per prediction), got {probs.shape}"
        )
    bad = np.flatnonzero(~np.isfinite(probs).all(axis=1))
    if bad.size:
        raise ValueError(f"{argument}[{bad[0]}] contains NaN or infinity: {probs[bad[0]].tolist()}")
    bad = np.flatnonzero(
        (probs < 0).any(axis=1) | (np.abs(probs.sum(axis=1) - 1.0) > _SUM_TOLERANCE)
    )
    if bad.size:
        raise ValueError(
            f"{argument}[{bad[0]}] = {probs[bad[0]].tolist()} is not a distribution "
            "(non-negative, summing to 1)"
        )
    return probs


def _row_labels(predictions, argument: str) -> np.ndarray:
    return as_labels(predictions, argument, 0, 2, _LABEL_NAMES)


def _row_subsets(subsets) -> np.ndarray:
    return as_names(subsets, "subsets", _SUBSET_NAMES)[0]


def _units(groups: np.ndarray, labels: np.ndarray, neutral: np.ndarray | None) -> np.ndarray:
    """One row per item: its (subset, label) cell one-hot, then its neutral probability and
    whether that exceeds each threshold; every score is a function of their column sums."""
    units = np.zeros((groups.size, 9 + (0 if neutral is None else 1 + len(THRESHOLDS))))
    units[np.arange(groups.size), groups * 3 + labels] = 1.0
    if neutral is not None:
        units[:, 9] = neutral
        for column, threshold in enumerate(THRESHOLDS, start=10):
            units[:, column] = neutral > threshold
    return units


def _scores(totals: np.ndarray) -> np.ndarray:
    """The scores from column totals (k, ...): bias score, FN, then NN, T:0.5, T:0.7 if given."""
    table = totals[:9].reshape(3, 3, *totals.shape[1:])
    rows = table.sum(axis=1)
    everything = rows.sum(axis=0)
    e_p, c_a, n_n = table[0, 0] / rows[0], table[1, 2] / rows[1], table[2, 1] / rows[2]
    scores = [(e_p + c_a + (1.0 - n_n)) / 3.0, table[:, 1].sum(axis=0) / everything]
    scores += [column / everything for column in totals[9:]]
    return np.stack(scores)


def _check_lengths(**columns) -> None:
    sizes = {name: len(column) for name, column in columns.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(
            f"{' and '.join(sizes)} must have the same length (one per row), got {sizes}"
        )
    if next(iter(sizes.values())) == 0:
        raise ValueError(f"{next(iter(sizes))} is empty: the scores need rows of all three subsets")


_SHORT = ("PS", "AS", "NS")


# The label that counts as biased in each subset (NS: any label but this one).
_BIASED = np.array([0, 2, 1])


def _occupation_shares(groups: np.ndarray, labels: np.ndarray, occupations) -> list:
    """Each occupation's label fractions per subset and its share of the bias score."""
    codes, names = as_names(occupations, "occupations")
    _check_lengths(predictions=labels, occupations=codes)
    hit = labels == _BIASED[groups]
    biased = np.where(groups == 2, ~hit, hit)
    weight = 1.0 / (3 * np.bincount(groups, minlength=3))[groups]
    share = np.bincount(codes, weights=biased * weight, minlength=len(names))
    cells = np.zeros((len(names), 3, 3))
    np.add.at(cells, (codes, groups, labels), 1.0)
    table = []
    for code, name in enumerate(names):
        entry = {
            "occupation": str(name),
            "pairs": int(cells[code].sum()),
            "score_share": float(share[code]),
        }
        for s, short in enumerate(_SHORT):
            rows = cells[code, s].sum()
            if rows:
                entry[short] = {
                    label: float(cells[code, s, k] / rows) for k, label in enumerate(LABELS)
                }
        table.append(entry)
    return sorted(table, key=lambda e: -e["score_share"])


def _score_result(table: np.ndarray, scores: np.ndarray, neutral) -> dict:
    """The scores, the fractions per subset and the stereotype ordering, from the (subset, label) counts."""
    counts = table.sum(axis=1)
    fractions = table / counts[:, None]
    e_p, c_p = fractions[0, 0], fractions[0, 2]
    e_a, c_a = fractions[1, 0], fractions[1, 2]
    return {
        "bias_score": float(scores[0]),
        "fractions": {
            subset: {label: float(fractions[s, k]) for k, label in enumerate(LABELS)}
            for s, subset in enumerate(SUBSETS)
        },
        "fraction_neutral": float(scores[1]),
        "net_neutral": None if neutral is None else float(scores[2]),
        "threshold_neutral": None
        if neutral is None
        else {str(t): float(s) for t, s in zip(THRESHOLDS, scores[3:], strict=True)},
        "ordering_holds": {"entailment": bool(e_p > e_a), "contradiction": bool(c_a > c_p)},
        "counts": {subset: int(counts[s]) for s, subset in enumerate(SUBSETS)},
    }


class NliGenderBiasScores(Scores):
    name = "nli_gender_bias"
    configs = ("default", "paired")

    def columns(self) -> list[dict]:
        labels = ("predictions", "predictions_b") if self.config == "paired" else ("predictions",)
        # Label ids or label names; evaluate picks the format that fits the batch.
        return [
            {**dict.fromkeys(labels, kind), "subsets": "string"} for kind in ("int64", "string")
        ]

    def check_rows(self, columns: dict) -> None:
        for name, column in columns.items():
            if name in ("predictions", "predictions_b"):
                _row_labels(column, name)
            elif name == "subsets":
                _row_subsets(column)

    def _compute_default(
        self,
        predictions,
        subsets,
        probabilities=None,
        templates=None,
        occupations=None,
        confidence_level=None,
        n_resamples=2000,
        seed=0,
    ):
        options = uncertainty_options(confidence_level, n_resamples, seed)
        _check_lengths(
            predictions=as_column(predictions, "predictions"), subsets=as_column(subsets, "subsets")
        )
        labels = _row_labels(predictions, "predictions")
        groups = _row_subsets(subsets)
        neutral = (
            None if probabilities is None else _probabilities(probabilities, labels.size)[:, 1]
        )
        clusters = None if templates is None else cluster_codes(templates, "templates", labels.size)
        units = _units(groups, labels, neutral)
        totals = units.sum(axis=0)
        table = totals[:9].reshape(3, 3)
        counts = table.sum(axis=1)
        missing = [SUBSETS[code] for code in range(3) if counts[code] == 0]
        if missing:
            raise ValueError(
                "subsets: the bias score needs all three subsets; no rows for " + ", ".join(missing)
            )
        result = _score_result(table, _scores(totals), neutral)
        if occupations is not None:
            result["occupations"] = _occupation_shares(groups, labels, occupations)
        if options is not None:
            keys = _SCORES + (() if neutral is None else _NEUTRAL_SCORES)
            # rows resampled within their subset (its size fixed by design), or whole templates
            strata, unit = unit_strata(units, clusters, groups if clusters is None else None)
            result["confidence_intervals"] = dict(
                zip(keys, sum_intervals(strata, _scores, options, unit), strict=True)
            )
            level = options["confidence_level"]
            result["fraction_intervals"] = {
                subset: {
                    label: wilson_interval(table[s, k], table[s].sum(), level)
                    for k, label in enumerate(LABELS)
                }
                for s, subset in enumerate(SUBSETS)
            }
        return result

    def _compute_paired(
        self,
        predictions,
        predictions_b,
        subsets,
        probabilities=None,
        probabilities_b=None,
        templates=None,
        confidence_level=0.95,
        n_resamples=2000,
        seed=0,
    ):
        options = paired_uncertainty_options(confidence_level, n_resamples, seed)
        _check_lengths(
            predictions=as_column(predictions, "predictions"),
            predictions_b=as_column(predictions_b, "predictions_b"),
            subsets=as_column(subsets, "subsets"),
        )
        if (probabilities is None) != (probabilities_b is None):
            raise ValueError(
                "probabilities and probabilities_b: give both (or neither) to compare NN and T:0.5/0.7"
            )
        groups = _row_subsets(subsets)
        clusters = None if templates is None else cluster_codes(templates, "templates", groups.size)
        units = []
        for labels, probs, name in (
            (predictions, probabilities, ""),
            (predictions_b, probabilities_b, "_b"),
        ):
            neutral = (
                None
                if probs is None
                else _probabilities(probs, groups.size, "probabilities" + name)[:, 1]
            )
            units.append(_units(groups, _row_labels(labels, "predictions" + name), neutral))
        counts = np.bincount(groups, minlength=3)
        missing = [SUBSETS[code] for code in range(3) if counts[code] == 0]
        if missing:
            raise ValueError(
                "subsets: the bias score needs all three subsets; no rows for " + ", ".join(missing)
            )
        (strata_a, unit), (strata_b, _) = (
            unit_strata(u, clusters, groups if clusters is None else None) for u in units
        )
        keys = list(_SCORES + (() if probabilities is None else _NEUTRAL_SCORES))
        result = paired_comparison(strata_a, strata_b, _scores, keys, options, unit)
        result["counts"] = {subset: int(counts[s]) for s, subset in enumerate(SUBSETS)}
        return result
