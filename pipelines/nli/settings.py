"""Settings of ``bias-hub nli train | evaluate | meta-evaluate | init-model`` and the part's dataset names.

The one place of every default: the commands' flags take theirs from these dataclasses
(``bias_hub.pipelines.common.arguments.pipeline_command`` / ``settings_defaults``). A cheap module (no torch,
no transformers), imported by the command module at registration and by every step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bias_hub.pipelines.common.batching import DEFAULT_BATCH_TOKENS
from bias_hub.pipelines.common.settings import IntervalSettings, RunSettings

__all__ = [
    "DATASET",
    "PART",
    "TRAINING_SETS",
    "EvaluateSettings",
    "InitSettings",
    "MetaSettings",
    "TrainSettings",
    "VERSIONS",
]

PART = "nli"
# Where the evaluation sets and the bias-controlled training sets live by default.
DATASET = "nli_gender_bias"
TRAINING_SETS = "nli_bias_controlled"
# The packages whose versions a run records.
VERSIONS = (
    "bias-hub",
    "torch",
    "transformers",
    "datasets",
    "evaluate",
    "numpy",
    "scipy",
    "tokenizers",
)


def _positive(value: int | None, flag: str) -> None:
    """None (the flag not given) or a whole number of at least 1."""
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise ValueError(
            f"{flag} {value!r}: expected a whole number of at least 1 (or leave the flag out)"
        )


@dataclass(kw_only=True)
class TrainSettings(RunSettings):
    """``nli train``'s settings (the paper's defaults); ``dtype`` is the mixed precision."""

    # The seed this command has always used, so that earlier fine-tunings can be repeated.
    seed: int = 42
    tokenizer: str | None = None
    config: str | None = None
    split: str = "train"
    dataset_revision: str | None = None
    # "auto": JSNLI's header-less TSV is recognised; "jsnli" insists on it; "table": columns.
    dataset_format: str = "auto"
    # How text meets the tokenizer: see bias_hub.pipelines.nli.segmentation.
    segmentation: str = "auto"
    eval_dataset: str | None = None
    eval_split: str = "validation"
    columns: str = "premise,hypothesis,label"
    # The dataset's own values for entailment, neutral, contradiction (e.g. ("E", "N", "C")).
    label_names: tuple[str, ...] | None = None
    epochs: float = 5.0
    learning_rate: float = 2e-5
    batch_size: int = 32
    max_length: int = 128
    warmup_ratio: float = 0.0
    weight_decay: float = 0.0
    max_train_samples: int | None = None
    resume: bool = True
    # A checkpoint per epoch; the meta-evaluation trains throw-away models and turns it off.
    save: bool = True
    logging_steps: int = 50
    # Share of ordinary tokens replaced by [UNK] in each training batch (0: off). For models
    # trained from scratch: it teaches them to read unknown context words, which is what words
    # of unseen evaluation templates become.
    token_dropout: float = 0.0


@dataclass(kw_only=True)
class EvaluateSettings(IntervalSettings, RunSettings):
    """``nli evaluate``'s settings; ``seed`` draws the ``limit`` sample and seeds the bootstrap."""

    # Pairs within their set, or the pairs of one template together.
    BOOTSTRAP_UNITS = ("items", "templates")

    # None: the release's `all` where the folder has it, else `generated_all`.
    config: str | None = None
    # Pairs sorted by length go in batches as large as the token budget allows (rows x the
    # longest pair), at most batch_size pairs when given.
    batch_size: int | None = None
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    max_length: int = 128
    # MODEL_LABEL=entailment,... for models whose label names are not NLI names.
    label_map: str | None = None
    segmentation: str = "auto"
    threads: int | None = None
    limit: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        _positive(self.limit, "--limit")
        _positive(self.threads, "--threads")
        _positive(self.batch_size, "--batch-size")
        _positive(self.batch_tokens, "--batch-tokens")
        # A pair needs room for [CLS], a token of each sentence and two [SEP].
        if (
            isinstance(self.max_length, bool)
            or not isinstance(self.max_length, int)
            or self.max_length < 5
        ):
            raise ValueError(
                f"--max-length {self.max_length!r}: a pair needs at least 5 tokens ([CLS], a token "
                "of each sentence, two [SEP]); the paper uses 128"
            )


@dataclass(kw_only=True)
class MetaSettings(IntervalSettings, RunSettings):
    """``nli meta-evaluate``'s settings; ``seed`` draws the evaluation sample, ``seeds`` the runs."""

    # A built nli_bias_controlled folder (or its name under datasets_root).
    training_sets: str | Path | None = None
    # Evaluation config; None: the release's `all_downsampled`, else `generated_all` (drawn).
    config: str | None = None
    rates: Sequence[float] = tuple(k / 10 for k in range(11))
    seeds: Sequence[int] = (0, 1, 2)
    epochs: float = 3.0
    learning_rate: float = 2e-5
    batch_size: int = 32
    max_length: int = 128
    base_rate: float | None = None
    base_epochs: float = 10.0
    # One base model for every seed (trained with the first), as the paper starts every run
    # from one NLI model; the seeds then differ in their fine-tuning's order and dropout.
    shared_base: bool = False
    base_learning_rate: float | None = None
    reinitialize: bool = False
    # Pairs per set drawn from a config that is not already down-sampled.
    eval_per_subset: int = 200
    token_dropout: float = 0.0
    # Train each rate on a seeded sample of this many pairs (the same pairs at every rate).
    max_train_samples: int | None = None
    segmentation: str = "auto"
    workers: int = 1
    # torch threads per worker: fixed, because MKL's sums split differently over more threads
    # and the numbers would then depend on the machine's core count.
    threads: int = 1
    # The report states whether the mean Spearman(r, s) over seeds reaches it (None: no criterion).
    target_spearman: float | None = None
    # Markdown at the top of the report (default: the model's name).
    description: str = ""
    # How the report names the model (default: --model); the demo's model lives in a temporary folder.
    model_label: str | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        rates = [float(r) for r in self.rates]
        if any(not 0 <= r <= 1 for r in rates):
            raise ValueError(f"--rates must lie in [0, 1], got {rates}")
        _positive(self.threads, "--threads")
        _positive(self.workers, "--workers")


@dataclass(kw_only=True)
class InitSettings(RunSettings):
    """``nli init-model``'s settings: a from-scratch classifier and the tokenizer it reads with.

    Its step reads the training text of ``dataset`` (a built nli_bias_controlled folder)."""

    # The rate whose training text the vocabulary comes from (every rate has the same pairs).
    rate: float = 0.5
    size: str = "tiny"
    tokenizer: str = "wordpiece"
    max_length: int = 128
    dropout: float = 0.1
