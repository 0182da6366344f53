"""``bias-hub speciesism``'s settings: the one place of their defaults (cheap to import).

The paper's settings (Takeshita, Rzepka and Araki: raw vocabulary items, Google's sentiment
model, the paper's models) are its preset in ``pipelines/studies/speciesism.yaml``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from bias_hub.pipelines.common.settings import IntervalSettings, RunSettings

__all__ = ["CONFIGS", "DATASET", "GROUPS", "Settings", "TOKENS"]

DATASET = "speciesism_templates"
CONFIGS = {"en": ("probability", "sentiment"), "ja": ("probability_ja", "sentiment_ja")}
GROUPS = ("study", "companion", "wild", "control")
# Which vocabulary items the tables and the sentiment fills may list: whole-word tokens
# (this project's filter) or every item as the model has it (the study's tables).
TOKENS = ("words", "raw")


@dataclass(kw_only=True)
class Settings(IntervalSettings, RunSettings):
    """``bias-hub speciesism``'s own settings (the shared ones come from ``RunSettings``; the
    intervals of change rates, negative shares and association from ``IntervalSettings``,
    templates resampled within each form)."""

    # A template's sentences share its wording across the animals: they are resampled together.
    BOOTSTRAP_UNITS = ("templates",)

    bootstrap_unit: str = "templates"
    language: str = "en"
    groups: tuple[str, ...] = ("study",)
    animals: tuple[str, ...] = ()
    top_k: int = 15
    tokens: str = "words"
    sentiment_top_k: int = 10
    association_words: int = 5
    # None: vader for English, ja-lexicon for Japanese.
    sentiment_backend: str | None = None
    batch_size: int = 32
    # A paragraph put at the top of report.md (the demo says what its tiny models can show).
    report_note: str = ""
    # Counted while running, reported under Warnings; not a setting.
    warnings: Counter = field(default_factory=Counter, init=False)

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.language not in CONFIGS:
            raise ValueError(f"--language {self.language!r}: expected one of {sorted(CONFIGS)}")
        if self.tokens not in TOKENS:
            raise ValueError(f"--tokens {self.tokens!r}: expected one of {list(TOKENS)}")
        for name in ("top_k", "sentiment_top_k", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"--{name.replace('_', '-')}: expected a positive integer")
        if self.association_words < 0:
            raise ValueError("--association-words: expected an integer >= 0")
