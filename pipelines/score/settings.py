"""Settings of ``bias-hub score METRIC`` (no heavy import: the command reads their defaults)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bias_hub.pipelines.common.settings import IntervalSettings

__all__ = ["Settings"]


@dataclass(kw_only=True)
class Settings(IntervalSettings):
    """Where the predictions are, which dataset rows they answer, and how they are read.

    ``run``'s ``predictions`` (a JSON lines, CSV or Parquet file), ``from_lm_eval`` (the
    samples file lm-evaluation-harness writes with ``--log_samples``) and ``from_inspect`` (an
    Inspect AI eval log) are exclusive; ``run``'s
    ``dataset``, and ``config``, ``id_column`` and ``prediction_column`` left at None take the metric's
    declared score path (``pipelines/<part>/score_paths.py``); ``split`` None joins every split of
    the config.
    """

    metric: str = "bbq_bias"
    from_lm_eval: Path | None = None
    from_inspect: Path | None = None
    # how answer texts are read (answer_reading); None: what the exported task recorded, else bbq
    answer_reader: str | None = None
    config: str | None = None
    split: str | None = None
    id_column: str | None = None
    prediction_column: str | None = None
    # ARG=COLUMN: read a compute() argument from another predictions column than the path's.
    columns: list[str] | None = None
    datasets_root: Path | None = None
    metrics_root: Path | None = None
    seed: int = 0
    # Score predictions that answer only part of their task or dataset (refused otherwise).
    allow_partial: bool = False
    # The model that made the predictions (a Hub id at ``revision``, a local folder or an API
    # model's name); None: the one lm-eval's results file or the Inspect log names, if any.
    model: str | None = None
    revision: str | None = None
