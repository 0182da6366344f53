"""Prediction values that match no answer, shown as the user wrote them, with their row.

An answer text that matches none of its row's answers scores as unparsable (-1), as BBQ's
analysis counts a reply it cannot read; but the report then shows only a count, and a
label outside a fixed set (NLI's ``"中立"`` for neutral, ``"²"``, an empty cell) is no
reply a model could give: it is a file that speaks another vocabulary. So every such value
is named with its file, row and column, and a fixed label set refuses it.
"""

from __future__ import annotations

from collections.abc import Sequence

from bias_hub.pipelines.score.paths import Column
from bias_hub.pipelines.score.predictions import to_choice

__all__ = ["refuse_unknown_labels", "unmatched_values"]

_SHOWN = 5


def unmatched_values(pairs: Sequence[tuple[dict, dict]], column: Column, source: str) -> list[dict]:
    """``[{"row", "column", "value"}]``: the rows of a choice column whose value matched no
    answer (the value as written; ``row`` counts the prediction rows from 1)."""
    found = []
    for number, (row, data) in enumerate(pairs, start=1):
        if column.name not in row:
            continue
        answers = [data[name] for name in column.choices] if column.choices else list(column.names)
        where = f"{source}, row {number}, column {column.name!r}"
        if not to_choice(row[column.name], answers, where)[1]:
            found.append({"row": number, "column": column.name, "value": row[column.name]})
    return found


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
