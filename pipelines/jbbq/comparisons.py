"""Paired comparisons between the runs of one evaluation (prompts, shot counts), Holm-corrected.

Every run of an evaluation answers the same questions, so two runs are compared item by
item with ``bbq_bias``'s ``paired`` config: B - A per score, a paired bootstrap interval
(templates or items resampled together for both runs) and a two-sided paired permutation
p-value. Which pairs: every two prompts at each shot count, and every two shot counts of
each prompt. All p-values of the evaluation form one family, corrected with Holm's
step-down method; a difference is marked significant when its Holm-adjusted p-value is
below ``1 - confidence_level``.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from bias_hub.pipelines.common.stats import holm_family

__all__ = ["CORRECTION", "comparison_pairs", "compare_runs"]

CORRECTION = "Holm"
# The scores the paired module compares, in report order.
COMPARED = (
    "accuracy_ambiguous",
    "accuracy_disambiguated",
    "accuracy_gap",
    "bias_score_disambiguated",
    "bias_score_ambiguous",
    "accuracy",
)


def comparison_pairs(runs: Sequence[dict]) -> list[tuple[int, int]]:
    """Index pairs (A, B) of the runs to compare: prompts within a shot count, then shot
    counts within a prompt; A is the earlier run."""
    pairs = []
    for key in ("shots", "prompt"):
        for value in dict.fromkeys(run[key] for run in runs):
            pairs += combinations([i for i, run in enumerate(runs) if run[key] == value], 2)
    return pairs


def compare_runs(
    paired_metric,
    columns: dict,
    runs: Sequence[dict],
    predictions: Sequence[Sequence[int]],
    *,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> dict:
    """Every pair of ``comparison_pairs`` scored with the ``paired`` metric; Holm over all.

    ``columns``: the metric's other inputs (references, unknown_labels, ..., and
    ``templates`` when resampling templates); ``predictions[i]`` are run i's answers.
    """
    rows = []
    for a, b in comparison_pairs(runs):
        result = paired_metric.compute(
            predictions=list(predictions[a]),
            predictions_b=list(predictions[b]),
            confidence_level=confidence_level,
            n_resamples=n_resamples,
            seed=seed,
            **columns,
        )
        for score in COMPARED:
            values = result["scores"][score]
            interval = result["confidence_intervals"].get(score, {})
            rows.append(
                {
                    "a": {"prompt": runs[a]["prompt"], "shots": runs[a]["shots"]},
                    "b": {"prompt": runs[b]["prompt"], "shots": runs[b]["shots"]},
                    "score": score,
                    "value_a": values["a"],
                    "value_b": values["b"],
                    "difference": values["difference"],
                    "low": interval.get("low"),
                    "high": interval.get("high"),
                    "p_value": values["p_value"],
                    "p_value_method": values["p_value_method"],
                    "reason": values.get("reason") or interval.get("reason"),
                }
            )
    alpha = round(1 - confidence_level, 10)
    n_tests = holm_family(rows, alpha)
    return {
        "correction": CORRECTION,
        "alpha": alpha,
        "n_tests": n_tests,
        "unit": "templates" if columns.get("templates") is not None else "items",
        "rows": rows,
    }
