"""Markdown pieces shared by dataset cards and run reports."""

from __future__ import annotations

import math

__all__ = ["fmt", "markdown_table", "with_interval"]


def markdown_table(headers: list[str], rows: list[list[object]]) -> str:
    """A small Markdown table; cards and reports use it for counts and scores."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def fmt(value: object, digits: int = 3, missing: str = "–") -> str:
    """A number for a table: ``digits`` decimals, tiny values in general format, None/NaN as ``missing``."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return missing
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if value != 0 and abs(value) < 10 ** (-digits):
        return f"{value:.{digits}g}"
    return f"{value:.{digits}f}"


def with_interval(
    value: object, interval: dict | None, digits: int = 2, scale: float = 1.0, missing: str = "n/a"
) -> str:
    """An estimate with its interval, the one way every report writes it: ``0.42 [0.37, 0.47]``.

    ``interval`` is a dict with ``low`` and ``high`` (the shape every metric module and
    ``pipelines.common.stats`` return); the value alone where there is none or its bounds are
    None; ``missing`` where the value is None or not finite. ``scale`` multiplies all three
    (100 for percentages).
    """
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return missing if value is None else str(value)
    if not math.isfinite(value):
        return missing
    text = f"{value * scale:.{digits}f}"
    low, high = (interval or {}).get("low"), (interval or {}).get("high")
    if low is not None and high is not None:
        text += f" [{low * scale:.{digits}f}, {high * scale:.{digits}f}]"
    return text
