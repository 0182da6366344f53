"""Settings of ``bias-hub leaderboard`` (no heavy import: the command reads their defaults)."""

from __future__ import annotations

from dataclasses import dataclass

from bias_hub.pipelines.common.settings import IntervalSettings

__all__ = ["Settings"]


@dataclass(kw_only=True)
class Settings(IntervalSettings):
    """``confidence_level``: of the paired tests (their Holm-corrected p against 1 - it; None:
    no paired tests, only intervals compared); ``n_resamples`` and ``seed``: of the tests."""

    seed: int = 0
