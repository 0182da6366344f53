"""Statistics the parts share: Holm's correction over several comparisons and one correlation
helper with one set of keys.

Estimates of a bias score with their intervals come from the metric modules; what lives here is
what a run computes *across* scores (a correlation between two columns of results, the family of
comparisons in one report).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np

__all__ = ["CORRELATION_METHODS", "correlation", "holm"]

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


def _pearson(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    x = x - x.mean(axis=axis, keepdims=True)
    y = y - y.mean(axis=axis, keepdims=True)
    return (x * y).sum(axis=axis) / np.sqrt((x * x).sum(axis=axis) * (y * y).sum(axis=axis))


def _spearman(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    from scipy import stats

    return _pearson(stats.rankdata(x, axis=axis), stats.rankdata(y, axis=axis), axis=axis)


def _bootstrap_interval(
    x: np.ndarray,
    y: np.ndarray,
    method: str,
    confidence_level: float,
    n_resamples: int,
    seed: int,
    unit: str,
) -> dict:
    """Bootstrap interval of the coefficient, resampling (x, y) pairs together; BCa where
    defined, else percentile; bounds None with a reason where no resample set gives one."""
    from scipy import stats

    statistic = _pearson if method == "pearson" else _spearman
    interval = {
        "low": None,
        "high": None,
        "confidence_level": confidence_level,
        "method": None,
        "n_resamples": n_resamples,
        "unit": unit,
        "n_units": int(x.size),
        "reason": None,
    }
    for kind in ("BCa", "percentile"):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = stats.bootstrap(
                (x, y),
                statistic,
                paired=True,
                vectorized=True,
                n_resamples=n_resamples,
                confidence_level=confidence_level,
                method=kind,
                rng=np.random.default_rng(seed),
            )
        undefined = int(np.isnan(result.bootstrap_distribution).sum())
        if undefined:
            interval["reason"] = (
                f"undefined in {undefined} of {n_resamples} resamples "
                "(a resample whose values are all equal)"
            )
            return interval
        low, high = result.confidence_interval
        if np.isfinite(low) and np.isfinite(high):
            interval.update(low=float(low), high=float(high), method=kind)
            return interval
    interval["reason"] = "the bootstrap distribution is degenerate"
    return interval


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
    """Pearson's r or Spearman's rho of paired values, the one shape every report uses.

    Returns ``{"method", "statistic", "p_value", "n", "interval", "note"}``: ``statistic``
    and ``p_value`` are None (with a ``note``) when fewer than 3 pairs remain or either side is
    constant; pairs where either value is None or not finite are dropped and counted in
    ``note``. ``interval`` (with ``confidence_level``) is a bootstrap interval over the pairs,
    ``{"low", "high", "confidence_level", "method", "n_resamples", "unit", "n_units",
    "reason"}``, else None.
    """
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
        result["interval"] = _bootstrap_interval(
            a, b, method, confidence_level, n_resamples, seed, unit
        )
    return result
