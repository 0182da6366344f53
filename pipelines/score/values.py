"""Prediction values the answer reader left unread, shown as the user wrote them, with their row.

The answer reader (``bias_hub.pipelines.common.answer_reading``) decides how a value becomes an
answer index; a value it cannot read is -1 (unparsable) or, under a reader whose harness drops
such replies (``bbq``), left out of the scores. A count alone hides what those values were,
and a label outside a fixed set (NLI's ``"中立"`` for neutral, ``"²"``, an empty cell) is no
reply a model could give: it is a file that speaks another vocabulary. So every unread value
is named with its row and column, and a fixed label set refuses it.
"""

from __future__ import annotations

from collections.abc import Sequence

from bias_hub.pipelines.common.answer_reading import UNREAD_RULES, Reading
from bias_hub.pipelines.common.score_path import Column

__all__ = ["describe", "refuse_unknown_labels", "unread_values"]

_SHOWN = 5


def unread_values(
    pairs: Sequence[tuple[dict, dict]], readings: Sequence[Reading], column: Column
) -> list[dict]:
    """``[{"row", "column", "value"}]``: the rows whose value the reader did not read (a rule of
    ``UNREAD_RULES``; a -1 given as such is an answer, not a value left unread), the value as
    written; ``row`` counts the joined prediction rows from 1."""
    return [
        {"row": number, "column": column.name, "value": row[column.name]}
        for number, ((row, _), reading) in enumerate(zip(pairs, readings, strict=True), start=1)
        if reading.rule in UNREAD_RULES
    ]


def describe(found: list[dict]) -> str:
    shown = "; ".join(f"row {f['row']}: {f['value']!r}" for f in found[:_SHOWN])
    return shown + ("; ..." if len(found) > _SHOWN else "")


def refuse_unknown_labels(found: list[dict], column: Column, source: str) -> None:
    """A column of fixed label names (``Column.names``) takes a name or an index, nothing else."""
    if not found or not column.names:
        return
    raise ValueError(
        f"{source}, column {column.name!r}: {len(found)} values are neither one of "
        f"{', '.join(column.names)} nor an index 0 to {len(column.names) - 1} ({describe(found)}); "
        "map them to these labels first"
    )
