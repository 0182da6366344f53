"""``bias-hub export lm-eval --out DIR``: JBBQ and BBQ as lm-evaluation-harness tasks."""

from __future__ import annotations

import argparse
from pathlib import Path

from bias_hub.pipelines.common.arguments import settings_defaults
from bias_hub.pipelines.export.settings import Settings

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    export = subparsers.add_parser("export", help="write the benchmarks in another tool's format")
    inner = export.add_subparsers(dest="format", required=True, metavar="FORMAT")
    parser = inner.add_parser(
        "lm-eval",
        help="a task folder for lm-evaluation-harness (lm-eval ... --include_path DIR): JBBQ and BBQ",
        description="Write JBBQ (the paper's prompts; generation and multiple-choice; each few-shot count) and "
        "BBQ as lm-evaluation-harness 0.4 tasks whose results table shows bias-hub's scores.",
    )
    settings_defaults(parser, Settings)
    parser.add_argument(
        "--out",
        required=True,
        help="the task folder, replaced whole when the export succeeds; refused while it holds "
        "files an earlier export did not write (or that were changed since), which it names",
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
        help="the `jbbq evaluate` study preset giving prompts, split and reply length (default: %(default)s)",
    )
    parser.add_argument(
        "--prompt",
        dest="prompts",
        nargs="+",
        metavar="NAME",
        help="prompt names or .yaml files (default: the preset's)",
    )
    parser.add_argument(
        "--shots", nargs="+", type=int, metavar="K", help="few-shot counts (default: 0 4)"
    )
    parser.add_argument("--split", help="questions of this split, or all (default: the preset's)")
    parser.add_argument(
        "--max-new-tokens",
        type=int,
        help="reply length of the generation tasks (default: the preset's)",
    )
    parser.add_argument(
        "--limit",
        type=int,
        help="at most this many questions per category (as jbbq evaluate --limit)",
    )
    parser.add_argument(
        "--seed", type=int, help="seed of the few-shot choice and --limit (default: %(default)s)"
    )
    parser.add_argument(
        "--datasets-root",
        type=Path,
        help="parent folder of the dataset folders (default: the repository's datasets/)",
    )
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from bias_hub.pipelines.export.lm_eval import export

    settings = Settings(
        jbbq=args.jbbq,
        bbq=args.bbq,
        preset=args.preset,
        prompts=args.prompts,
        shots=args.shots,
        split=args.split,
        max_new_tokens=args.max_new_tokens,
        limit=args.limit,
        seed=args.seed,
        datasets_root=args.datasets_root,
    )
    export(Path(args.out), settings)
    return 0
