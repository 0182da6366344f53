"""``bias-hub leaderboard SOURCE... --out DIR``: run folders of any part and origin side by side."""

from __future__ import annotations

import argparse
from pathlib import Path

from bias_hub.pipelines.common.arguments import (
    add_interval_flags,
    settings_defaults,
    settings_from_args,
)
from bias_hub.pipelines.leaderboard.settings import Settings

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "leaderboard",
        help="rank run folders of any part and origin side by side: writes leaderboard.md, "
        "leaderboard.html and leaderboard.json into --out",
        description="One table per benchmark and comparable setting (dataset build, split, preset, "
        "answer reader), one row per model and setting, each task's value with its interval and a "
        "rank range that says where the evidence cannot tell rows apart (paired tests where two runs "
        "answered the same questions). Writes leaderboard.md, leaderboard.html (a static, sortable "
        "page) and leaderboard.json (load_dataset('json', ...)) into --out.",
    )
    settings_defaults(parser, Settings)
    parser.add_argument(
        "sources",
        nargs="+",
        metavar="SOURCE",
        help="a run folder (jbbq evaluate, score, nli evaluate, stereoset, speciesism), a results_*.json "
        "lm-evaluation-harness wrote, or study:NAME for the values a paper printed (labelled, never ranked)",
    )
    parser.add_argument(
        "--out", required=True, help="output folder, replaced whole when the leaderboard is written"
    )
    parser.add_argument("--seed", type=int, help="seed of the paired tests (default: %(default)s)")
    add_interval_flags(parser, unit="items (the paired tests)")
    parser.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from bias_hub.pipelines.leaderboard.run import run

    run(args.sources, Path(args.out), settings_from_args(Settings, args))
    return 0
