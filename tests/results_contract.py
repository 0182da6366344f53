"""The one shape of a part's results.json, checked on every results.json the suite writes.

tests/conftest.py runs ``check_results`` on each results.json a ``RunFolder`` writes during the
tests (every part, every step the tests run), and tests/pipelines/test_results_contract.py
checks the check. A results.json names its ``part`` and ``step``; where the step computed
intervals, their settings and the resampling unit are under ``"intervals"`` with exactly the
keys of ``IntervalSettings.interval_record`` and nowhere else at the top level.
"""

from __future__ import annotations

INTERVAL_KEYS = {"confidence_level", "n_resamples", "bootstrap_unit", "seed"}
BOOTSTRAP_UNITS = {"items", "templates"}
# Spellings of the interval settings outside "intervals" (the shapes before there was one).
STRAY_KEYS = {"confidence_level", "n_resamples", "bootstrap_unit", "resample", "uncertainty"}


def check_results(results: dict) -> None:
    """Raise AssertionError naming what departs from the one shape."""
    where = f"results.json of {results.get('part')!r} step {results.get('step')!r}"
    assert isinstance(results.get("part"), str) and isinstance(results.get("step"), str), (
        f"{where}: needs a top-level 'part' and 'step'"
    )
    stray = sorted(STRAY_KEYS & set(results))
    assert not stray, f"{where}: interval settings outside 'intervals': {stray}"
    if "intervals" not in results:
        return
    intervals = results["intervals"]
    assert isinstance(intervals, dict) and set(intervals) == INTERVAL_KEYS, (
        f"{where}: 'intervals' must hold exactly {sorted(INTERVAL_KEYS)}, got {intervals!r}"
    )
    if intervals["confidence_level"] is None:
        assert intervals["n_resamples"] is None and intervals["bootstrap_unit"] is None, (
            f"{where}: intervals are off, yet {intervals!r}"
        )
        return
    assert 0 < intervals["confidence_level"] < 1, f"{where}: {intervals!r}"
    assert isinstance(intervals["n_resamples"], int) and intervals["n_resamples"] >= 100, (
        f"{where}: {intervals!r}"
    )
    assert intervals["bootstrap_unit"] in BOOTSTRAP_UNITS, (
        f"{where}: bootstrap_unit {intervals['bootstrap_unit']!r} is not one of {sorted(BOOTSTRAP_UNITS)}"
    )
    assert isinstance(intervals["seed"], int), f"{where}: {intervals!r}"
