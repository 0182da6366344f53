"""The settings of ``bias-hub jbbq evaluate``: one dataclass, the one place of every flag default.

A cheap module (no torch, no transformers): ``pipeline_command`` imports it when the CLI is
built. The task fields (prompts, shots, scoring, chat, max_new_tokens, split) default to the
project's own choice, which ``--preset none`` runs; the command's default preset is ``paper``
(``pipelines/studies/jbbq.yaml``), which fills every task setting the command line does not give.
From Python, ``with_preset("paper", shots=[0])`` does the same.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bias_hub.builders.shared.api_cache_openai import OPENAI_URL
from bias_hub.pipelines.common.answer_reading import MAX_NEW_TOKENS, READERS
from bias_hub.pipelines.common.batching import DEFAULT_BATCH_TOKENS
from bias_hub.pipelines.common.presets import apply_preset, load_preset
from bias_hub.pipelines.common.settings import IntervalSettings, RunSettings

__all__ = ["BACKENDS", "COMMAND", "PROMPTS_PER_REQUEST", "Settings", "TASK_FIELDS", "with_preset"]

COMMAND = "jbbq evaluate"
BACKENDS = ("hf", "openai")
# Prompts per completions request unless --prompts-per-request says: vLLM and the OpenAI API take
# a list, and an endpoint that refuses one is asked one prompt at a time (api_cache_openai).
PROMPTS_PER_REQUEST = 8
# The settings a preset fixes (prompts and their layout, few-shot counts, scoring, chat template,
# split, reply length, how a reply is read).
TASK_FIELDS = (
    "prompts",
    "layout",
    "shots",
    "scoring",
    "chat",
    "split",
    "max_new_tokens",
    "answer_reader",
)


@dataclass(kw_only=True)
class Settings(IntervalSettings, RunSettings):
    """What to evaluate and how (``confidence_level`` None or 0: no intervals, no paired comparisons)."""

    # Whole templates within each category (the questions of one template are not independent),
    # or single questions.
    BOOTSTRAP_UNITS = ("templates", "items")

    backend: str = "hf"
    # The study preset (pipelines/studies/jbbq.yaml); "none" or None: the defaults below.
    preset: str | None = "paper"
    # the task
    prompts: list[str] = field(default_factory=lambda: ["basic", "unknown", "paraphrase"])
    # how the prompt is laid out (pipelines/jbbq/prompts/layouts/): a built-in name or a file
    layout: str = "llm-jp-eval"
    shots: list[int] = field(default_factory=lambda: [0])
    # The few-shot templates drawn once per seed, the paper's largest shot count (§5.2): every
    # count takes the first k of them, and the questions they hold out are the same at 0 shots.
    shot_pool: int = 4
    scoring: str = "loglikelihood"
    chat: str = "auto"
    max_new_tokens: int = 8
    # how a generated reply is read (bias_hub.pipelines.common.answer_reading)
    answer_reader: str = "lenient"
    split: str = "test"
    config: str = "all"
    categories: list[str] | None = None
    limit: int | None = None
    # intervals (confidence_level, n_resamples: IntervalSettings)
    bootstrap_unit: str = "templates"
    # a local model (--backend hf): batches as large as the token budget allows (rows x the
    # longest prompt), at most batch_size rows when given
    batch_size: int | None = None
    batch_tokens: int = DEFAULT_BATCH_TOKENS
    prefix_cache: bool = True
    # an OpenAI-compatible API (--backend openai): its chat-completions endpoint (chat messages)
    # or its completions one (the plain prompt, for a base model behind a server)
    api: str = "chat"
    base_url: str = OPENAI_URL
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 4
    # --api completions: prompts sent in one request as a list (None: PROMPTS_PER_REQUEST)
    prompts_per_request: int | None = None
    max_retries: int = 6
    backoff: float = 1.0
    timeout: float = 60.0
    max_tokens_field: str = "max_tokens"
    cache_dir: Path | None = None
    # The model's name in the report (default: --model).
    model_label: str | None = None

    def __post_init__(self) -> None:
        if self.confidence_level == 0:  # 0 switches intervals off, as `--confidence-level 0` does
            self.confidence_level = None
        if self.preset == "none":
            self.preset = None
        _check_task(self)
        super().__post_init__()

    def prerequisites(self, model, dataset) -> dict:
        """A local model needs the extra ``models``, an API ``api`` (and OpenAI's its key);
        both the dataset folder."""
        api = self.backend == "openai"
        models = [model] if isinstance(model, str) else list(model or [])
        return {
            "extras": ("api",) if api else ("models",),
            "datasets": [("--dataset", dataset or "jbbq")],
            "models": [] if api else [("--model", name) for name in models],
            "keys": [("--api-key-env", self.api_key_env)]
            if api and "api.openai.com" in self.base_url
            else [],
        }


def _check_task(settings: Settings) -> None:
    """The task fields' types (a preset file may hold anything), naming the flag."""
    prompts, shots, tokens = settings.prompts, settings.shots, settings.max_new_tokens

    def list_of(values, each) -> bool:
        return isinstance(values, list) and bool(values) and all(each(v) for v in values)

    if not list_of(prompts, lambda p: isinstance(p, str) and p):
        raise ValueError(
            f"--prompt: expected a list of prompt names or .yaml paths, got {prompts!r}"
        )
    if not list_of(shots, lambda k: isinstance(k, int) and not isinstance(k, bool) and k >= 0):
        raise ValueError(f"--shots: expected a list of integers >= 0, got {shots!r}")
    if isinstance(tokens, bool) or not isinstance(tokens, int) or not 1 <= tokens <= MAX_NEW_TOKENS:
        raise ValueError(
            f"--max-new-tokens: expected an integer from 1 to {MAX_NEW_TOKENS:,} (a reply to a "
            f"multiple-choice question), got {tokens!r}"
        )
    if settings.answer_reader not in READERS:
        raise ValueError(
            f"--answer-reader: expected one of {', '.join(READERS)}, got {settings.answer_reader!r}"
        )
    for name in ("scoring", "chat", "split", "layout"):
        if not isinstance(getattr(settings, name), str) or not getattr(settings, name):
            raise ValueError(
                f"--{name}: expected a non-empty string, got {getattr(settings, name)!r}"
            )


def with_preset(preset: str | None = "paper", **given) -> Settings:
    """``Settings(**given)`` with the study preset's value for every setting not in ``given``;
    each given value that differs from the preset is a recorded departure (what ``--preset``
    does on the command line). ``preset`` None or "none": no preset."""
    settings = Settings(**given, preset=None)
    if preset in (None, "none"):
        return settings
    return apply_preset(settings, load_preset(COMMAND, preset), set(given))
