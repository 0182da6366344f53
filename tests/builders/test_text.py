"""Numbers as reports and cards print them."""

from __future__ import annotations

import pytest

from bias_hub.builders.shared.text import fmt, markdown_table


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
