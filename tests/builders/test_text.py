"""Numbers as reports and cards print them."""

from __future__ import annotations

import pytest

from bias_hub.builders.shared.text import fmt, markdown_table, with_interval


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "–"),
        (float("nan"), "–"),
        (0.5, "0.500"),
        (0.0001234, "0.000123"),
        (1234, "1,234"),
        (True, "True"),
    ],
)
def test_fmt(value, text: str) -> None:
    assert fmt(value) == text


def test_markdown_table() -> None:
    assert markdown_table(["a", "b"], [[1, 2]]) == "| a | b |\n|---|---|\n| 1 | 2 |"


BOUNDS = {"low": 0.37, "high": 0.47}
NO_BOUNDS = {"low": None, "high": None, "reason": "too few items"}


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        ((0.42, BOUNDS), "0.42 [0.37, 0.47]"),
        ((0.42, None), "0.42"),
        ((0.42, BOUNDS, 1, 100), "42.0 [37.0, 47.0]"),
        ((None, BOUNDS), "n/a"),
        ((float("nan"), BOUNDS), "n/a"),
        ((0.42, NO_BOUNDS), "0.42"),
    ],
)
def test_with_interval(arguments: tuple, text: str) -> None:
    assert with_interval(*arguments) == text


def test_with_interval_variants_the_reports_need() -> None:
    # a change or a difference carries its sign; a value below 0 has its own
    assert with_interval(0.42, BOUNDS, sign=True) == "+0.42 [0.37, 0.47]"
    assert with_interval(-0.5, None, sign=True) == "-0.50"
    assert with_interval(0.0, None, 3, missing="–", sign=True) == "+0.000"
    # an interval that was computed but has no bounds says so, with its reason where asked
    assert with_interval(0.42, NO_BOUNDS, unavailable=" [n/a]") == "0.42 [n/a]"
    assert (
        with_interval(0.42, NO_BOUNDS, unavailable=" (no interval: {reason})")
        == "0.42 (no interval: too few items)"
    )
    assert with_interval(0.42, None, unavailable=" [n/a]") == "0.42"
    # 3 significant digits, at least 3 decimals: 0.000911 -> 6 decimals, 12.345 -> 3
    small = {"low": 0.000506, "high": 0.001735}
    assert with_interval(0.000911, small, 3, significant=True) == "0.000911 [0.000506, 0.001735]"
    assert with_interval(12.345, None, 3, significant=True) == "12.345"


def test_a_value_that_rounds_to_zero_is_written_without_a_minus_sign() -> None:
    # A Pearson r that is 0 by construction comes out as -1e-17 with some BLAS builds.
    assert with_interval(-1e-17, None, 3) == "0.000"
    assert with_interval(-0.004, {"low": -0.0049, "high": 0.3}, 2) == "0.00 [0.00, 0.30]"
    assert with_interval(-0.004, None, 2, sign=True) == "0.00"
    assert with_interval(0.004, None, 2, sign=True) == "+0.00"
    assert with_interval(-0.006, None, 2) == "-0.01"
    assert fmt(-0.0) == "0.000"
    assert fmt(-0.25) == "-0.250"
