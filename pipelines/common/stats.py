"""Statistics the parts share when they report several comparisons at once."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["holm"]


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
