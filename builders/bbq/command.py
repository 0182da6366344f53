"""``bias-hub build bbq [--source PATH]``: the command-line form of ``bias_hub.builders.bbq.build``."""

from __future__ import annotations

import argparse

from bias_hub.builders.jbbq.command import add_source_arguments

NAME = "bbq"
HELP = "English BBQ (Parrish et al. 2022) from its canonical files or --source PATH"
IN_ALL = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_source_arguments(
        parser,
        "a BBQ checkout (root or data/, or an archive; reads data/*.jsonl only), a .jsonl "
        "file, or BBQ's templates/ folder to expand (default: download data/*.jsonl from "
        "github.com/nyu-mll/BBQ)",
    )
