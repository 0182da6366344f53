"""What a run computes across scores: Holm's correction over a report's family of comparisons,
and one correlation helper. Every interval, the correlation's too, comes from the one
intervals module, ``bias_hub.metrics._common.bias_hub_intervals``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["CORRELATION_METHODS", "correlation", "holm", "holm_family"]

CORRELATION_METHODS = ("pearson", "spearman")


def holm(p_values: Sequence[float | None]) -> list[float | None]:
    """Holm's (1979) step-down adjusted p-values, in the order given; a ``None`` (a test that
    could not be run) stays ``None`` and does not count towards the family.

    Sorted ascending, the i-th smallest (from 0) of the m present values becomes
    ``max_{j <= i} min(1, (m - j) p_(j))``. (scipy offers Benjamini-Hochberg/Yekutieli in
    ``false_discovery_control``, not Holm's family-wise correction.)
    """
    present = sorted((p, i) for i, p in enumerate(p_values) if p is not None)
    adjusted: list[float | None] = [None] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(present):
        running = max(running, min(1.0, (len(present) - rank) * float(p)))
        adjusted[i] = running
    return adjusted


def holm_family(entries: Sequence[dict], alpha: float) -> int:
    """Holm's correction over the ``"p_value"`` of each entry (a comparison; None: not tested):
    each gets ``"p_holm"`` (None where untested) and ``"significant"`` (its adjusted p-value
    below ``alpha``). Returns how many were tested, the family's size."""
    adjusted = holm([entry["p_value"] for entry in entries])
    for entry, p in zip(entries, adjusted, strict=True):
        entry["p_holm"] = p
        entry["significant"] = p is not None and p < alpha
    return sum(p is not None for p in adjusted)


def correlation(
    x: Sequence[float],
    y: Sequence[float],
    method: str = "spearman",
    *,
    confidence_level: float | None = None,
    n_resamples: int = 2000,
    seed: int = 0,
    unit: str = "items",
) -> dict:
    """Pearson's r or Spearman's rho of paired values, the one shape every report uses:
    ``{"method", "statistic", "p_value", "n", "interval", "note"}``. Pairs with a value None or
    not finite are dropped (counted in ``note``); statistic and p-value are None (with a
    ``note``) under 3 pairs or with a constant side; ``interval`` (with ``confidence_level``)
    is ``bias_hub_intervals.correlation_intervals``'s bootstrap interval over the pairs."""
    from scipy import stats

    if method not in CORRELATION_METHODS:
        raise ValueError(f"method {method!r}: expected one of {', '.join(CORRELATION_METHODS)}")
    if len(x) != len(y):
        raise ValueError(f"x and y must pair up: {len(x)} values against {len(y)}")
    a = np.array([np.nan if v is None else v for v in x], dtype=float)
    b = np.array([np.nan if v is None else v for v in y], dtype=float)
    keep = np.isfinite(a) & np.isfinite(b)
    a, b = a[keep], b[keep]
    dropped = int((~keep).sum())
    result = {
        "method": method,
        "statistic": None,
        "p_value": None,
        "n": int(a.size),
        "interval": None,
        "note": f"{dropped} pairs without a finite value dropped" if dropped else None,
    }
    if a.size < 3 or np.ptp(a) == 0 or np.ptp(b) == 0:
        why = "fewer than 3 pairs" if a.size < 3 else "a constant side"
        result["note"] = "; ".join(filter(None, [result["note"], f"undefined: {why}"]))
        return result
    test = stats.pearsonr(a, b) if method == "pearson" else stats.spearmanr(a, b)
    result.update(statistic=float(test.statistic), p_value=float(test.pvalue))
    if confidence_level:
        from bias_hub.metrics._common.bias_hub_intervals import (
            correlation_intervals,
            uncertainty_options,
        )

        options = uncertainty_options(confidence_level, n_resamples, seed)
        result["interval"] = correlation_intervals(a, b, options, unit)[method]
    return result
