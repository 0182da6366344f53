"""Every interval bias-hub reports, in one module: the bootstrap (percentile and BCa, with items
or whole templates as the units), the analytic intervals (Wilson, Student's t), the paired
comparison of two sets of predictions on the same items, and ranks.

Every interval is one dict, ``{"low", "high", "confidence_level", "method", "n_resamples",
"unit", "n_units", "reason"}`` (bounds None and a ``reason`` where none can be given; the
analytic ones carry ``low``, ``high``, ``confidence_level`` and ``method``). Metric modules import
it relatively (each module folder links this file, and a Space gets the file itself); it
imports numpy and scipy only, ``scipy.stats`` inside the functions that use it (importing it
costs about a second, more than a whole score of a few thousand rows).
"""

from __future__ import annotations

import inspect
from collections.abc import Sequence

import numpy as np
from scipy import special


def whole_number(value) -> bool:
    """An int (Python's or numpy's), never a bool."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def uncertainty_options(confidence_level, n_resamples, seed) -> dict | None:
    """The bootstrap settings, checked; None when no interval is asked for."""
    if confidence_level is None:
        return None
    if (
        isinstance(confidence_level, bool)
        or not isinstance(confidence_level, (int, float))
        or not 0 < confidence_level < 1
    ):
        raise ValueError(
            f"confidence_level must be a number between 0 and 1 (such as 0.95) or None, got {confidence_level!r}"
        )
    if not whole_number(n_resamples) or n_resamples < 100:
        raise ValueError(f"n_resamples must be an integer of at least 100, got {n_resamples!r}")
    if seed is not None and not whole_number(seed):
        raise ValueError(f"seed must be an integer or None, got {seed!r}")
    return {
        "confidence_level": float(confidence_level),
        "n_resamples": int(n_resamples),
        "seed": seed,
    }


def paired_uncertainty_options(confidence_level, n_resamples, seed) -> dict:
    """The interval options of a paired comparison, which always reports intervals."""
    options = uncertainty_options(confidence_level, n_resamples, seed)
    if options is None:
        raise ValueError(
            "confidence_level: the paired comparison reports intervals; give a level such as 0.95"
        )
    return options


def seeded(function, seed) -> dict:
    """The generator argument of a scipy resampling function: ``rng`` from scipy 1.15,
    ``random_state`` in the older releases a numpy < 2 Space may run."""
    name = "rng" if "rng" in inspect.signature(function).parameters else "random_state"
    return {name: np.random.default_rng(seed)}


def no_interval(options: dict, unit: str, n_units: int, reason: str) -> dict:
    """An interval that could not be given: its bounds None and the reason why."""
    return {
        "low": None,
        "high": None,
        "confidence_level": options["confidence_level"],
        "method": None,
        "n_resamples": options["n_resamples"],
        "unit": unit,
        "n_units": n_units,
        "reason": reason,
    }


def bootstrap_intervals(
    samples: list, statistic, observed, options: dict, unit: str, jackknife=None
) -> list[dict]:
    """One interval per score, from scipy.stats.bootstrap's resampling of each sample's units.

    ``samples``: 1-d arrays, resampled independently (strata keep their sizes);
    ``statistic(*resampled, axis=-1)`` -> (scores, resamples), NaN where a score is undefined;
    ``observed``: the point estimates; ``jackknife()`` -> per sample a (scores, n_units) array
    of leave-one-out values for BCa, or None where the jackknife is not consistent (a median):
    the interval is then the percentile one, as it is wherever BCa is undefined.
    """
    observed = np.asarray(observed, dtype=np.float64).reshape(-1)
    sizes = [len(sample) for sample in samples]
    n_units = sum(sizes)
    if min(sizes) < 2:
        reason = f"resampling needs at least 2 {unit} in each stratum, got {sizes}"
        return [
            no_interval(
                options,
                unit,
                n_units,
                "the score itself is undefined" if np.isnan(score) else reason,
            )
            for score in observed
        ]
    level, count = options["confidence_level"], options["n_resamples"]
    with np.errstate(all="ignore"):
        distribution = bootstrap_distribution(
            samples, statistic, count, max(1, 2_000_000 // n_units), options["seed"]
        )
    distribution = distribution.astype(np.float64).reshape(len(observed), -1)
    alpha = (1 - level) / 2
    levels = np.tile([alpha, 1 - alpha], (len(observed), 1))
    bca = np.zeros(len(observed), dtype=bool)
    if jackknife is not None:
        corrected = bca_levels(distribution, observed, jackknife(), alpha)
        bca = (
            np.isfinite(corrected).all(axis=1)
            & (corrected > 0).all(axis=1)
            & (corrected < 1).all(axis=1)
        )
        levels[bca] = corrected[bca]
    intervals = []
    for score, values, chosen, corrected in zip(observed, distribution, levels, bca, strict=True):
        undefined = int(np.isnan(values).sum())
        if np.isnan(score):
            intervals.append(no_interval(options, unit, n_units, "the score itself is undefined"))
        elif undefined:
            reason = f"the score is undefined in {undefined} of {count} resamples (too few {unit})"
            intervals.append(no_interval(options, unit, n_units, reason))
        else:
            low, high = np.quantile(values, chosen)
            intervals.append(
                {
                    "low": float(low),
                    "high": float(high),
                    "confidence_level": level,
                    "method": "BCa" if corrected else "percentile",
                    "n_resamples": count,
                    "unit": unit,
                    "n_units": n_units,
                    "reason": None,
                }
            )
    return intervals


def bootstrap_distribution(
    samples: list, statistic, n_resamples: int, batch: int, seed
) -> np.ndarray:
    """The statistic on each resample, drawn as ``scipy.stats.bootstrap`` draws them (batch by
    batch, sample by sample, ``rng.integers(0, n, (batch, n))`` from ``default_rng(seed)``): its
    ``bootstrap_distribution`` for the same seed, without importing ``scipy.stats`` (about a
    second, more than a whole score). Only the draws are needed: the levels are ours."""
    rng = np.random.default_rng(seed)
    parts = []
    for start in range(0, n_resamples, batch):
        size = min(batch, n_resamples - start)
        drawn = [
            sample[rng.integers(0, len(sample), size=(size, len(sample)), dtype=np.int64)]
            for sample in samples
        ]
        parts.append(statistic(*drawn, axis=-1))
    return np.concatenate(parts, axis=-1)


def bca_levels(
    distribution: np.ndarray, observed: np.ndarray, jackknife: list, alpha: float
) -> np.ndarray:
    """BCa's two quantile levels per score (Efron and Tibshirani 1993, 14.3; the formulas of
    scipy.stats.bootstrap), NaN where BCa is undefined.

    ``jackknife``: per sample, its leave-one-out scores, an array (scores, n_units) or a pair
    (indices of the scores it moves, their values); scores a sample does not move add nothing.
    The module computes them: scipy's own jackknife re-evaluates the statistic on n
    resamples of n - 1 units (3 s for 10^4 items, minutes for 10^5).
    """
    share = (distribution < observed[:, None]).sum(-1) + (distribution <= observed[:, None]).sum(-1)
    bias = special.ndtri(share / (2 * distribution.shape[-1]))
    cubes, squares = np.zeros(len(observed)), np.zeros(len(observed))
    for entry in jackknife:
        moved, values = entry if isinstance(entry, tuple) else (slice(None), entry)
        n = values.shape[-1]
        spread = (n - 1) * (values.mean(axis=-1, keepdims=True) - values)
        cubes[moved] += (spread**3).sum(axis=-1) / n**3
        squares[moved] += (spread**2).sum(axis=-1) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        acceleration = cubes / (6 * squares**1.5)
        z = special.ndtri(alpha)
        levels = np.stack(
            [special.ndtr(bias + (bias + q) / (1 - acceleration * (bias + q))) for q in (z, -z)],
            axis=-1,
        )
    levels[~(np.isfinite(bias) & np.isfinite(acceleration))] = np.nan
    return levels


def leave_one_out(samples: list, statistic) -> list:
    """Per sample, the statistic with each of its units left out in turn (for small samples:
    n evaluations of n - 1 units, as scipy does)."""
    values = []
    for j, sample in enumerate(samples):
        n = len(sample)
        kept = np.array([np.delete(sample, i) for i in range(n)])
        others = [np.broadcast_to(s, (n, len(s))) for s in samples]
        others[j] = kept
        values.append(np.asarray(statistic(*others, axis=-1), dtype=np.float64).reshape(-1, n))
    return values


def draw_counts(rows: np.ndarray, n: int) -> np.ndarray:
    """How often each of n units occurs in each resample (rows: resamples x draws of indices)."""
    rows = np.atleast_2d(rows)
    offsets = n * np.arange(rows.shape[0])[:, None]
    return np.bincount((rows + offsets).ravel(), minlength=rows.shape[0] * n).reshape(
        rows.shape[0], n
    )


def sum_intervals(strata: list, score, options: dict, unit: str) -> list[dict]:
    """Intervals for scores that are functions of column totals over units (shares, ratios, means).

    ``strata``: per stratum an (n_units, k) array, one row per unit (an item, or the summed
    items of one template); ``score(totals)`` maps (k, ...) totals to (scores, ...), NaN where
    undefined. A resample is a count per unit times the unit rows; a unit left out is the
    total minus its row.
    """
    totals = sum(units.sum(axis=0) for units in strata)

    def statistic(*drawn, axis=-1):
        resampled = sum(
            draw_counts(rows, len(units)) @ units for units, rows in zip(strata, drawn, strict=True)
        )
        return score(resampled.T)

    def jackknife():
        return [score((totals - units).T) for units in strata]

    with np.errstate(divide="ignore", invalid="ignore"):
        observed = score(totals)
    samples = [np.arange(len(units)) for units in strata]
    with np.errstate(divide="ignore", invalid="ignore"):
        return bootstrap_intervals(samples, statistic, observed, options, unit, jackknife)


def cluster_sums(units: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """The unit rows summed per cluster (resampling clusters keeps their rows together)."""
    _, codes = np.unique(clusters, return_inverse=True)
    size = int(codes.max()) + 1 if codes.size else 0
    return np.stack(
        [np.bincount(codes, weights=column, minlength=size) for column in units.T], axis=1
    )


def paired_comparison(
    strata_a: list, strata_b: list, score, keys: list, options: dict, unit: str
) -> dict:
    """B - A per score on the same units: a paired bootstrap interval (both sets resampled
    together) and a two-sided paired permutation test (each unit's A and B swapped at random;
    scipy.stats.permutation_test, permutation_type="samples"); exact when 2^units <= n_resamples.
    """
    from scipy import stats

    width = strata_a[0].shape[1]
    totals_a = sum(units.sum(axis=0) for units in strata_a)
    totals_b = sum(units.sum(axis=0) for units in strata_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores_a, scores_b = score(totals_a), score(totals_b)

    def difference(totals):
        return score(totals[width:]) - score(totals[:width])

    joined = [np.hstack([a, b]) for a, b in zip(strata_a, strata_b, strict=True)]
    intervals = sum_intervals(joined, difference, options, unit)

    change = np.vstack(strata_b) - np.vstack(strata_a)
    n = len(change)

    def swapped(rows_a, rows_b, axis=-1):
        # rows_a holds, per observation i, i (kept) or n + i (A and B swapped)
        rows = np.atleast_2d(rows_a)
        flips = np.zeros(rows.shape)
        np.put_along_axis(flips, rows % n, (rows >= n).astype(np.float64), axis=1)
        moved = flips @ change
        differences = score((totals_b - moved).T) - score((totals_a + moved).T)
        # scores on the last axis: scipy compares the null distribution (permutations, scores)
        # with the observed (scores,)
        return differences[:, 0] if np.ndim(rows_a) == 1 else differences.T

    with np.errstate(divide="ignore", invalid="ignore"):
        test = stats.permutation_test(
            (np.arange(n), np.arange(n) + n),
            swapped,
            permutation_type="samples",
            vectorized=True,
            n_resamples=options["n_resamples"],
            alternative="two-sided",
            **seeded(stats.permutation_test, options["seed"]),
        )
    exact = 2**n <= options["n_resamples"]
    null = np.asarray(test.null_distribution).reshape(-1, len(keys))
    result = {}
    for i, key in enumerate(keys):
        a, b = float(scores_a[i]), float(scores_b[i])
        entry = {
            "a": a,
            "b": b,
            "difference": b - a,
            "p_value": None,
            "p_value_method": "exact" if exact else "sampled",
            "n_permutations": len(null),
            "reason": None,
        }
        if np.isnan(a) or np.isnan(b):
            entry.update(
                difference=None,
                reason="the score is undefined for " + ("A" if np.isnan(a) else "B"),
            )
            entry["a"], entry["b"] = (None if np.isnan(a) else a), (None if np.isnan(b) else b)
        elif np.isnan(null[:, i]).any():
            entry["reason"] = (
                f"the difference is undefined in {int(np.isnan(null[:, i]).sum())} permutations"
            )
        else:
            entry["p_value"] = float(np.atleast_1d(test.pvalue)[i])
        result[key] = entry
    return {
        "scores": result,
        "confidence_intervals": dict(zip(keys, intervals, strict=True)),
        "n_units": n,
    }


def mean_intervals(samples: list, options: dict, unit: str) -> list[dict]:
    """The interval of each sample's mean, each sample resampled on its own (a word's pairs);
    none for a sample of fewer than 2 units. ``n_units`` is the sample's size."""
    samples = [np.asarray(sample, dtype=np.float64) for sample in samples]
    varying = [i for i, sample in enumerate(samples) if sample.size >= 2]
    intervals = [
        no_interval(options, unit, s.size, f"needs at least 2 {unit}, has {s.size}")
        for s in samples
    ]
    if not varying:
        return intervals
    drawn_from = [samples[i] for i in varying]

    def statistic(*drawn, axis=-1):
        return np.stack([sample.mean(axis=axis) for sample in drawn])

    def jackknife():
        # leaving one unit out moves only its own sample's mean
        return [
            ([place], ((sample.sum() - sample) / (sample.size - 1))[None])
            for place, sample in enumerate(drawn_from)
        ]

    observed = [sample.mean() for sample in drawn_from]
    found = bootstrap_intervals(drawn_from, statistic, observed, options, unit, jackknife)
    for i, interval in zip(varying, found, strict=True):
        intervals[i] = {**interval, "n_units": int(samples[i].size)}
    return intervals


def unit_strata(
    units: np.ndarray,
    clusters: np.ndarray | None = None,
    strata: np.ndarray | None = None,
    unit: str = "items",
) -> tuple[list, str]:
    """The unit rows the bootstrap resamples, and the name of the unit.

    ``units``: one row per item (every score a function of the column totals); ``clusters``
    (a template code per item): the rows of each template summed into one unit, so that the
    items of a template, which are not independent, move together; ``strata`` (a code per
    item): resampled within each stratum, whose size the design fixes, templates too where
    each template lies in one stratum (otherwise whole templates across the strata).
    """
    if strata is None:
        if clusters is None:
            return [units], unit
        return [cluster_sums(units, clusters)], "templates"
    codes = np.unique(strata)
    if clusters is None:
        return [units[strata == code] for code in codes], unit
    if len(np.unique(np.stack([clusters, strata]), axis=1).T) != len(np.unique(clusters)):
        return [cluster_sums(units, clusters)], "templates"
    return [
        cluster_sums(units[strata == code], clusters[strata == code]) for code in codes
    ], "templates"


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r along the last axis (NaN where either side is constant)."""
    x = x - x.mean(axis=-1, keepdims=True)
    y = y - y.mean(axis=-1, keepdims=True)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (x * y).sum(-1) / np.sqrt((x * x).sum(-1) * (y * y).sum(-1))


def correlation_intervals(x, y, options: dict, unit: str) -> dict:
    """Intervals of Pearson's r and Spearman's rho of paired values, resampling the pairs
    (``{"pearson": interval, "spearman": interval}``); each pair's two values are drawn together
    and held fixed, so their own noise is left out."""
    from scipy import stats

    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)

    def statistic(drawn, axis=-1):
        xs, ys = x[drawn], y[drawn]
        return np.stack(
            [
                pearson_rows(xs, ys),
                pearson_rows(stats.rankdata(xs, axis=-1), stats.rankdata(ys, axis=-1)),
            ]
        )

    def left_out(values):
        """Row i: ``values`` without unit i, and their average ranks (dropping a unit lowers the
        rank of every larger value by 1 and of every tie by 1/2: no re-ranking needed)."""
        keep = ~np.eye(values.size, dtype=bool)
        shift = (values[None] > values[:, None]) + 0.5 * (values[None] == values[:, None])
        ranks = stats.rankdata(values)[None] - shift
        return (
            np.broadcast_to(values, keep.shape)[keep].reshape(values.size, -1),
            ranks[keep].reshape(values.size, -1),
        )

    def jackknife():
        (xs, x_ranks), (ys, y_ranks) = left_out(x), left_out(y)
        return [np.stack([pearson_rows(xs, ys), pearson_rows(x_ranks, y_ranks)])]

    observed = statistic(np.arange(x.size))
    pearson, spearman = bootstrap_intervals(
        [np.arange(x.size)], statistic, observed, options, unit, jackknife
    )
    return {"pearson": pearson, "spearman": spearman}


def paired_difference(
    values_a, values_b, options: dict, unit: str = "items", clusters=None
) -> dict:
    """B - A of the mean of one value per item (1 for a correct answer, 0 for a wrong one, or any
    score) of two runs on the same items: ``paired_comparison``'s entry (``a``, ``b``,
    ``difference``, ``p_value``, ...) with its ``interval`` and ``n_units``; ``clusters``: a
    template code per item, to resample whole templates."""
    a = np.asarray(values_a, dtype=np.float64)
    b = np.asarray(values_b, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(
            f"values_a and values_b need one value per item, the same items, at least 2; "
            f"got shapes {a.shape} and {b.shape}"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("values_a and values_b must be finite numbers")
    clusters = None if clusters is None else np.asarray(clusters)
    strata = [
        unit_strata(np.stack([v, np.ones_like(v)], axis=1), clusters, None, unit) for v in (a, b)
    ]
    result = paired_comparison(
        strata[0][0], strata[1][0], lambda t: (t[0] / t[1])[None], ["mean"], options, strata[0][1]
    )
    return {
        **result["scores"]["mean"],
        "interval": result["confidence_intervals"]["mean"],
        "n_units": result["n_units"],
    }


def wilson_interval(count, total, confidence_level: float) -> dict:
    """Wilson's score interval of a share, ``count`` successes in ``total`` (without continuity
    correction; Wilson 1927)."""
    z = special.ndtri(0.5 + confidence_level / 2)
    share = count / total
    centre = (2 * count + z * z) / (2 * (total + z * z))
    half = z * np.sqrt(z * z + 4 * total * share * (1 - share)) / (2 * (total + z * z))
    return {
        "low": float(np.clip(centre - half, 0.0, 1.0)),
        "high": float(np.clip(centre + half, 0.0, 1.0)),
        "confidence_level": confidence_level,
        "method": "Wilson",
    }


def t_interval(
    values: Sequence[float], confidence_level: float | None, bounds: tuple | None = None
) -> dict:
    """The mean of a few values that are the units themselves (one per seed) with Student's t
    interval: ``{"mean", "sd", "n", "low", "high"}``, and ``confidence_level`` and ``method``
    where there is an interval (a level, two or more values, not all equal). Values that are
    not finite are left out; ``bounds`` (low, high) cut the interval where the quantity lies
    (a correlation: (-1, 1)), as a t interval of few values can reach beyond."""
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    values = values[np.isfinite(values)]
    entry = {
        "mean": float(values.mean()) if values.size else None,
        "sd": float(values.std(ddof=1)) if values.size > 1 else (0.0 if values.size else None),
        "n": int(values.size),
        "low": None,
        "high": None,
    }
    if confidence_level and values.size > 1 and entry["sd"] > 0:
        low, high = stats.t.interval(
            confidence_level,
            values.size - 1,
            loc=entry["mean"],
            scale=entry["sd"] / np.sqrt(values.size),
        )
        method = "t over seeds"
        if bounds is not None:
            low, high = max(float(low), bounds[0]), min(float(high), bounds[1])
            method += f", cut to [{bounds[0]:g}, {bounds[1]:g}]"
        entry.update(
            low=float(low), high=float(high), confidence_level=confidence_level, method=method
        )
    return entry


def ranks(scores: dict, descending: bool = True) -> dict:
    """Each name's rank by its score, 1 = the highest (``descending``) or the lowest; ties share
    a rank and the next rank is skipped (1, 1, 3); a score of None ranks after every number."""
    known = [s for s in scores.values() if s is not None]

    def better(other, score) -> bool:
        return other > score if descending else other < score

    return {
        name: 1 + (len(known) if score is None else sum(better(o, score) for o in known))
        for name, score in scores.items()
    }
