"""Settings of ``bias-hub export lm-eval|inspect`` (no heavy import: the command reads their defaults)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Settings"]


@dataclass(kw_only=True)
class Settings:
    """What the task folder holds.

    ``prompts``, ``layout``, ``split``, ``max_new_tokens`` and ``answer_reader`` left at None take
    the study preset's (``preset``, default ``paper``: the paper's three prompts in llm-jp-eval's
    layout, every question, 1 new token, replies read as llm-jp-eval reads them).
    ``shots``: the few-shot counts, one task per prompt x count x output type; the questions
    are those ``bias-hub jbbq evaluate`` scores with the same ``seed`` and ``shot_pool``,
    whatever counts either asks for: the examples come from a pool of ``shot_pool`` train
    templates drawn once, and where the split holds those templates they are held out.
    ``bbq`` None: BBQ's task when ``bbq`` is built under ``datasets_root``, none otherwise.
    """

    jbbq: str = "jbbq"
    bbq: str | None = None
    preset: str = "paper"
    prompts: list[str] | None = None
    layout: str | None = None
    answer_reader: str | None = None
    shots: list[int] = dataclasses.field(default_factory=lambda: [0, 4])
    shot_pool: int = 4
    split: str | None = None
    max_new_tokens: int | None = None
    limit: int | None = None
    seed: int = 0
    datasets_root: Path | None = None
