"""The one intervals module, metrics/_common/bias_hub_intervals.py: the pieces the metric modules'
own interval tests (test_metric_intervals.py) do not reach. Numbers by hand or from scipy's own
implementation of the same interval."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from bias_hub.metrics._common.bias_hub_intervals import (
    correlation_intervals,
    mean_intervals,
    paired_difference,
    ranks,
    t_interval,
    uncertainty_options,
    unit_strata,
    wilson_interval,
)

OPTIONS = uncertainty_options(0.95, 1000, 0)


def test_wilson_interval_of_3_in_10_by_hand() -> None:
    # z = 1.959964; centre = (2*3 + z^2) / (2 (10 + z^2)) = 9.8415 / 27.683 = 0.35551;
    # half = z sqrt(z^2 + 4*10*0.3*0.7) / 27.683 = 1.959964 * 3.49879 / 27.683 = 0.24771.
    interval = wilson_interval(3, 10, 0.95)
    assert interval["low"] == pytest.approx(0.10780, abs=1e-5)
    assert interval["high"] == pytest.approx(0.60322, abs=1e-5)
    assert (interval["confidence_level"], interval["method"]) == (0.95, "Wilson")
    # 0 of 10: the lower bound is 0 (cut at the edge of a share), the upper z^2 / (10 + z^2).
    empty = wilson_interval(0, 10, 0.95)
    assert empty["low"] == 0.0
    assert empty["high"] == pytest.approx(3.8415 / 13.8415, abs=1e-4)


def test_t_interval_over_three_seeds_by_hand() -> None:
    # mean 0.23333; sd sqrt(0.046667 / 2) = 0.152753; se 0.088192; t(0.975, 2) = 4.302653.
    entry = t_interval([0.1, 0.2, 0.4], 0.95)
    assert entry["mean"] == pytest.approx(0.233333, abs=1e-6)
    assert entry["sd"] == pytest.approx(0.152753, abs=1e-6)
    assert entry["low"] == pytest.approx(0.233333 - 0.379461, abs=1e-5)
    assert entry["high"] == pytest.approx(0.233333 + 0.379461, abs=1e-5)
    assert entry["method"] == "t over seeds" and entry["n"] == 3
    cut = t_interval([0.1, 0.2, 0.4, float("nan")], 0.95, bounds=(-0.1, 1.0))
    assert cut["n"] == 3 and cut["low"] == -0.1
    assert cut["method"] == "t over seeds, cut to [-0.1, 1]"


def test_t_interval_is_absent_without_spread_or_level() -> None:
    one = t_interval([0.5], 0.95)
    assert (one["mean"], one["sd"], one["low"], one["high"]) == (0.5, 0.0, None, None)
    assert "method" not in one
    assert t_interval([0.5, 0.5], 0.95)["low"] is None  # all equal: no spread
    assert t_interval([0.1, 0.3], None)["low"] is None
    assert t_interval([], 0.95)["mean"] is None


def test_ranks_share_ties_and_skip() -> None:
    scores = {"a": 0.5, "b": 0.5, "c": 0.1, "d": None}
    assert ranks(scores) == {"a": 1, "b": 1, "c": 3, "d": 4}
    assert ranks(scores, descending=False) == {"a": 2, "b": 2, "c": 1, "d": 4}


def test_paired_difference_of_two_runs_by_hand() -> None:
    # B right and A wrong on items 1-3, A right and B wrong on item 4: B - A = (3 - 1) / 4 = 0.5.
    # A swap pattern gives (sum of four signs) / 4; |sum| >= 2 in 2 * (1 + 4) of 16: p = 10/16.
    result = paired_difference([0, 0, 0, 1], [1, 1, 1, 0], OPTIONS)
    assert (result["a"], result["b"], result["difference"]) == (0.25, 0.75, 0.5)
    assert result["p_value"] == pytest.approx(10 / 16)
    assert result["p_value_method"] == "exact" and result["n_units"] == 4
    assert result["interval"]["unit"] == "items"
    assert result["interval"]["low"] <= 0.5 <= result["interval"]["high"]
    # The same difference on every item: every resample gives it, so does the interval.
    same = paired_difference([0, 0, 0], [1, 1, 1], OPTIONS)
    assert (same["interval"]["low"], same["interval"]["high"]) == (1.0, 1.0)
    assert same["p_value"] == pytest.approx(2 / 8)  # only +++ and --- reach |1|


def test_paired_difference_resamples_templates_and_refuses_unpaired_values() -> None:
    result = paired_difference([0, 1, 0, 1], [1, 1, 0, 1], OPTIONS, clusters=[0, 0, 1, 1])
    assert (result["interval"]["unit"], result["interval"]["n_units"]) == ("templates", 2)
    with pytest.raises(ValueError, match="the same items"):
        paired_difference([0, 1, 1], [1, 0], OPTIONS)
    with pytest.raises(ValueError, match="finite"):
        paired_difference([0, float("nan")], [1, 0], OPTIONS)


def test_unit_strata_by_hand() -> None:
    units = np.array([[1.0, 0], [2, 0], [0, 3], [0, 4]])
    # items as they are, within each stratum, and templates summed
    (whole,), unit = unit_strata(units)
    assert unit == "items" and whole.tolist() == units.tolist()
    by_form, unit = unit_strata(units, strata=np.array([0, 1, 0, 1]), unit="sentences")
    assert unit == "sentences" and [s.tolist() for s in by_form] == [
        [[1, 0], [0, 3]],
        [[2, 0], [0, 4]],
    ]
    (summed,), unit = unit_strata(units, clusters=np.array([0, 0, 1, 1]))
    assert unit == "templates" and summed.tolist() == [[3, 0], [0, 7]]
    # Templates inside one stratum each: resampled within it; a template across strata: not.
    nested, _ = unit_strata(units, np.array([0, 1, 0, 1]), np.array([0, 1, 0, 1]))
    assert [s.tolist() for s in nested] == [[[1, 3]], [[2, 4]]]
    (across,), _ = unit_strata(units, np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1]))
    assert across.tolist() == [[3, 0], [0, 7]]


def test_mean_intervals_each_sample_alone() -> None:
    rng = np.random.default_rng(1)
    first, second = rng.normal(0, 1, 20), rng.normal(5, 1, 30)
    (a, b, single) = mean_intervals([first, second, [1.0]], OPTIONS, "pairs")
    assert a["low"] < first.mean() < a["high"] < b["low"] < second.mean() < b["high"]
    assert (a["n_units"], b["n_units"]) == (20, 30)
    assert single["low"] is None and single["reason"] == "needs at least 2 pairs, has 1"


def test_correlation_intervals_equal_scipy_paired_bca() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=25)
    y = 0.6 * x + rng.normal(size=25)
    x[:4] = np.round(x[:4])  # a few ties for the ranks
    options = uncertainty_options(0.9, 500, 3)
    ours = correlation_intervals(x, y, options, "words")
    for method, statistic in (
        ("pearson", lambda a, b, axis=-1: _pearson(a, b)),
        ("spearman", lambda a, b, axis=-1: _pearson(*(stats.rankdata(v, axis=-1) for v in (a, b)))),
    ):
        reference = stats.bootstrap(
            (x, y),
            statistic,
            paired=True,
            vectorized=True,
            n_resamples=500,
            confidence_level=0.9,
            method="BCa",
            rng=np.random.default_rng(3),
        ).confidence_interval
        assert ours[method]["method"] == "BCa" and ours[method]["unit"] == "words"
        assert ours[method]["low"] == pytest.approx(reference.low, rel=1e-9)
        assert ours[method]["high"] == pytest.approx(reference.high, rel=1e-9)


def _pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    return (a * b).sum(-1) / np.sqrt((a * a).sum(-1) * (b * b).sum(-1))
