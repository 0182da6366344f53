"""Settings of ``bias-hub embeddings score|control|correlate``: the one place of their defaults.

Cheap to import (no numpy, no torch): ``pipeline_command`` imports these classes when the CLI
is built, and each field's default becomes its flag's default. The interval settings
(``--confidence-level``, ``--n-resamples``) come from ``IntervalSettings``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bias_hub.pipelines.common.settings import IntervalSettings, RunSettings

__all__ = ["DEFAULT_TESTS", "ControlSettings", "CorrelateSettings", "ScoreSettings"]

# The study's set pairs (Kato and Miyao, Table 1): WEAT 6 with gender terms, 7 and 8.
DEFAULT_TESTS = {"en": ["weat6_gender_terms", "weat7", "weat8"], "ja": ["weat6", "weat7", "weat8"]}


@dataclass(kw_only=True)
class ScoreSettings(IntervalSettings, RunSettings):
    """``bias-hub embeddings score``'s own settings (the shared ones come from ``RunSettings``;
    intervals resample the words of each set)."""

    format: str | None = None
    limit: int | None = None
    config: str = "en"
    tests: list[str] | None = None
    metrics: Sequence[str] = ("weat", "rnsb")
    rnsb_train_on: Sequence[str] = ("attribute_sets", "target_sets")
    permutations: int = 10000
    rnsb_iterations: int = 10
    max_oov_share: float = 0.2
    lowercase_fallback: bool = True

    def score_options(self) -> dict:
        """The keyword arguments of ``scoring.score``: each module's options and the rest."""
        common = {**self.interval_options(), "seed": self.seed, "max_oov_share": self.max_oov_share}
        common = {key: value for key, value in common.items() if value is not None}
        return {
            "weat_options": {"permutations": self.permutations, **common},
            "rnsb_options": {"iterations": self.rnsb_iterations, **common},
            "rnsb_train_on": list(self.rnsb_train_on),
            "lowercase_fallback": self.lowercase_fallback,
            "metrics_root": self.metrics_root,
        }


@dataclass(kw_only=True)
class ControlSettings(ScoreSettings):
    """``bias-hub embeddings control``: the study's family from a corpus, or the ATTRACT-REPEL variant."""

    corpus: str | None = None
    expansion_vectors: str | None = None
    expansion_format: str | None = None
    expansion_neighbours: int = 100
    dimensions: int = 300
    min_count: int = 10
    w2v_window: int = 5
    w2v_epochs: int = 5
    w2v_skipgram: bool = False
    workers: int = 1
    epochs: int = 5
    strengths: Sequence[float] = (0.05, 0.1, 0.25, 1.0)
    expand: int = 3
    save_vectors: bool = False


@dataclass(kw_only=True)
class CorrelateSettings(IntervalSettings, RunSettings):
    """``bias-hub embeddings correlate``: score tables, WinoBias outputs, the bootstrap over
    embeddings. The WinoBias dataset folder is the step's ``dataset``."""

    scores: Sequence[str] = field(default_factory=list)
    pairs: Sequence[str] | None = None
    coref: Sequence[str] | None = None
    coref_dir: str | None = None
    split: str = "test"
