"""``bias-hub build bbq [--source PATH]``: the command-line form of ``bias_hub.builders.bbq.build``."""

from __future__ import annotations

import argparse

NAME = "bbq"
HELP = "English BBQ (Parrish et al. 2022) from its canonical files or --source PATH"
IN_ALL = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source",
        default=None,
        help="a BBQ checkout (root or data/, or an archive; reads data/*.jsonl only), a .jsonl "
        "file, or BBQ's templates/ folder to expand (default: download data/*.jsonl from "
        "github.com/nyu-mll/BBQ)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the expander and the splits")
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="leave out question rows that break the schema (listed on stderr and in the card) "
        "instead of stopping at the first",
    )
