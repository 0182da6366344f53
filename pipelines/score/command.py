"""``bias-hub score METRIC``: a metric on predictions made elsewhere (a file, or lm-eval samples)."""

from __future__ import annotations

import argparse
from pathlib import Path

from bias_hub.pipelines.common.arguments import (
    add_answer_reader_flag,
    add_interval_flags,
    add_root_flags,
    settings_defaults,
    settings_from_args,
)
from bias_hub.pipelines.common.score_path import score_paths
from bias_hub.pipelines.score.settings import Settings

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "score",
        help="score predictions made elsewhere (JSON lines, CSV, Parquet, lm-eval samples) with a metric",
        description="Join predictions made elsewhere to a built dataset on an id column and run a metric "
        "module on them, with intervals; writes results.json and report.md into --out.",
    )
    settings_defaults(parser, Settings)
    metrics = sorted(score_paths())
    parser.add_argument(
        "metric", choices=metrics, metavar="METRIC", help=f"the metric module: {', '.join(metrics)}"
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--predictions",
        type=Path,
        metavar="FILE",
        help="predictions: JSON lines (.jsonl), CSV (.csv) or Parquet (.parquet), one row per item",
    )
    source.add_argument(
        "--from-lm-eval",
        type=Path,
        metavar="SAMPLES.jsonl",
        help="the samples file lm-evaluation-harness writes with --log_samples",
    )
    source.add_argument(
        "--from-inspect",
        type=Path,
        metavar="LOG",
        help="an Inspect AI eval log (.eval or .json) of a task `bias-hub export inspect` wrote",
    )
    parser.add_argument(
        "--dataset",
        metavar="DIR_OR_NAME",
        help="dataset folder, or a name under --datasets-root (default: the metric's own)",
    )
    parser.add_argument(
        "--config", help="dataset config (default: the metric's own, e.g. bbq_bias: all)"
    )
    parser.add_argument("--split", help="dataset split (default: every split of the config)")
    parser.add_argument(
        "--id-column",
        help="the id column shared by predictions and dataset (default: example_id or id)",
    )
    parser.add_argument(
        "--prediction-column",
        metavar="COL",
        help="the predictions column holding the answers: indices, or answer texts read by "
        "--answer-reader (default: prediction)",
    )
    add_answer_reader_flag(
        parser,
        "what the exported task recorded (lm-eval, Inspect), else bbq (BBQ's analysis script)",
    )
    parser.add_argument(
        "--column",
        dest="columns",
        action="append",
        metavar="ARG=COLUMN",
        help="read another compute() argument from COLUMN (e.g. probabilities=probs); repeatable",
    )
    parser.add_argument(
        "--out", required=True, help="output folder, replaced whole when the run succeeds"
    )
    parser.add_argument(
        "--allow-partial",
        action="store_true",
        help="score predictions that answer only part of their lm-eval task (its results file "
        "beside the samples says how many questions it has), of their Inspect task (its log's "
        "header says how many samples) or of the dataset's rows; refused otherwise, since a "
        "file cut short scores like a whole one; recorded as partial",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="the model that made the predictions: a Hub id, a local folder (fingerprinted) or an API "
        "model's name, recorded in the run (default: the one lm-eval's results file or the Inspect "
        "log names)",
    )
    parser.add_argument("--revision", help="the Hub revision of --model")
    add_root_flags(parser)
    parser.add_argument("--seed", type=int, help="seed of the resampling (default: %(default)s)")
    add_interval_flags(parser, unit="items (templates where the metric takes them)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from bias_hub.pipelines.score.run import run

    run(args.predictions, args.dataset, Path(args.out), settings_from_args(Settings, args))
    return 0
