"""``bias-hub stereoset attention``'s settings: the one place of their defaults (cheap to import).

The defaults follow the study (Ueno, §4.2): the last layer's attention, heads averaged, BERT's
tokens, every token kept (min count 1), periods left out, pairs taken without duplication. Ours,
where the study is silent: identical pairs (no gender word: the paper population's contexts
without one) are left out of the statistics, since they carry no attention to gender words and
no perplexity gap (``identical_pairs="include"`` keeps them).
The study's models and dataset config are its preset (``pipelines/studies/stereoset_gender_attention.yaml``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bias_hub.pipelines.common.settings import IntervalSettings, RunSettings

__all__ = ["ASSIGNMENTS", "DATASET", "EXCLUDES", "IDENTICAL_PAIRS", "LEVELS", "ORDERS", "Settings"]

DATASET = "stereoset_gender_swap"
LEVELS = ("token", "word")
EXCLUDES = ("period", "punctuation")
ASSIGNMENTS = ("first", "all")
ORDERS = ("signed", "absolute")
# What the statistics do with a pair without gender words (its two forms are the same sentence).
IDENTICAL_PAIRS = ("exclude", "include")


@dataclass(kw_only=True)
class Settings(IntervalSettings, RunSettings):
    """``bias-hub stereoset attention``'s own settings (the shared ones come from ``RunSettings``
    and the interval ones from ``IntervalSettings``)."""

    lm: str | None = None
    config: str = "contexts"
    layer: int = -1
    heads: list[int] | None = None
    level: str = "token"
    exclude: str = "period"
    pair_assignment: str = "first"
    order: str = "signed"
    identical_pairs: str = "exclude"
    min_count: int = 1
    batch_size: int = 32
    top_k: int = 15
    frequency_tolerance: float = 0.25
    max_pairs: int | None = None
    # How the report names the models (default: as given) and what it says about the LM.
    encoder_label: str | None = None
    lm_label: str | None = None
    lm_note: str = ""
    notes: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        super().__post_init__()
        for name, allowed in (
            ("level", LEVELS),
            ("exclude", EXCLUDES),
            ("pair_assignment", ASSIGNMENTS),
            ("order", ORDERS),
            ("identical_pairs", IDENTICAL_PAIRS),
        ):
            if getattr(self, name) not in allowed:
                raise ValueError(
                    f"--{name.replace('_', '-')} must be one of {', '.join(allowed)}, "
                    f"got {getattr(self, name)!r}"
                )
        for name in ("batch_size", "min_count", "top_k"):
            if getattr(self, name) < 1:
                raise ValueError(
                    f"--{name.replace('_', '-')} must be at least 1, got {getattr(self, name)}"
                )
        if self.max_pairs is not None and self.max_pairs < 1:
            raise ValueError(f"--max-pairs must be at least 1, got {self.max_pairs}")
        if not self.frequency_tolerance >= 0:
            raise ValueError(
                f"--frequency-tolerance must be a number >= 0, got {self.frequency_tolerance}"
            )
