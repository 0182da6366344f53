"""``bias-hub export lm-eval|inspect --out DIR``: JBBQ and BBQ as lm-evaluation-harness or
Inspect AI tasks."""

from __future__ import annotations

import argparse
from pathlib import Path

from bias_hub.pipelines.common.arguments import (
    add_answer_reader_flag,
    add_root_flags,
    settings_defaults,
)
from bias_hub.pipelines.export.settings import Settings

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    export = subparsers.add_parser("export", help="write the benchmarks in another tool's format")
    inner = export.add_subparsers(dest="format", required=True, metavar="FORMAT")
    lm_eval = inner.add_parser(
        "lm-eval",
        help="a task folder for lm-evaluation-harness (lm-eval ... --include_path DIR): JBBQ and BBQ",
        description="Write JBBQ (the paper's prompts; generation and multiple-choice; each few-shot count) and "
        "BBQ as lm-evaluation-harness 0.4 tasks whose results table shows bias-hub's scores.",
    )
    _add_arguments(lm_eval, "the task folder")
    lm_eval.set_defaults(func=_run, export_module="lm_eval")
    inspect = inner.add_parser(
        "inspect",
        help="a task folder for Inspect AI (inspect eval DIR/jbbq_tasks.py ...): JBBQ and BBQ",
        description="Write JBBQ (the paper's prompts, each few-shot count) and BBQ as Inspect AI tasks whose "
        "scorer reads each reply with bias-hub's answer reader and whose metrics are bbq_bias's scores.",
    )
    _add_arguments(inspect, "the task folder")
    inspect.set_defaults(func=_run, export_module="inspect_tasks")


def _add_arguments(parser: argparse.ArgumentParser, what: str) -> None:
    settings_defaults(parser, Settings)
    parser.add_argument(
        "--out",
        required=True,
        help=f"{what}, replaced whole when the export succeeds; refused while it holds files an "
        "earlier export did not write (or that were changed since), which it names",
    )
    parser.add_argument(
        "--jbbq",
        metavar="DIR_OR_NAME",
        help="the JBBQ dataset folder, or a name under --datasets-root (default: %(default)s)",
    )
    parser.add_argument(
        "--bbq",
        metavar="DIR_OR_NAME",
        help="the BBQ dataset folder (default: bbq under --datasets-root when built, else no BBQ task)",
    )
    parser.add_argument(
        "--preset",
        metavar="NAME_OR_FILE",
        help="the `jbbq evaluate` study preset giving prompts, layout, split, reply length and answer "
        "reader (default: %(default)s)",
    )
    parser.add_argument(
        "--prompt",
        dest="prompts",
        nargs="+",
        metavar="NAME",
        help="prompt names or .yaml files (default: the preset's)",
    )
    parser.add_argument(
        "--layout",
        metavar="LAYOUT",
        help="prompt layout, a name or a .yaml file (default: the preset's)",
    )
    parser.add_argument(
        "--shots", nargs="+", type=int, metavar="K", help="few-shot counts (default: 0 4)"
    )
    parser.add_argument(
        "--shot-pool",
        type=int,
        metavar="N",
        help="few-shot templates drawn once per seed, as jbbq evaluate --shot-pool (default: %(default)s)",
    )
    parser.add_argument("--split", help="questions of this split, or all (default: the preset's)")
    parser.add_argument(
        "--max-new-tokens",
        type=int,
        help="reply length of the generation tasks (default: the preset's)",
    )
    add_answer_reader_flag(parser, "the preset's (paper: llm-jp-eval)")
    parser.add_argument(
        "--limit",
        type=int,
        help="at most this many questions per category (as jbbq evaluate --limit)",
    )
    parser.add_argument(
        "--seed", type=int, help="seed of the few-shot choice and --limit (default: %(default)s)"
    )
    add_root_flags(parser, metrics=False)


def _run(args: argparse.Namespace) -> int:
    import importlib

    export = importlib.import_module(f"bias_hub.pipelines.export.{args.export_module}").export
    settings = Settings(
        jbbq=args.jbbq,
        bbq=args.bbq,
        preset=args.preset,
        prompts=args.prompts,
        layout=args.layout,
        answer_reader=args.answer_reader,
        shots=args.shots,
        shot_pool=args.shot_pool,
        split=args.split,
        max_new_tokens=args.max_new_tokens,
        limit=args.limit,
        seed=args.seed,
        datasets_root=args.datasets_root,
    )
    export(Path(args.out), settings)
    return 0
