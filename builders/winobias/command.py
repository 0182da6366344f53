"""``bias-hub build winobias [--source PATH]``: the command-line form of ``bias_hub.builders.winobias.build``."""

from __future__ import annotations

import argparse

NAME = "winobias"
HELP = "WinoBias (Zhao et al. 2018) from its CoNLL files on github.com/uclanlp/corefBias or --source PATH"
# No registry package ships WinoBias: offline, only --source builds it.
IN_ALL = False


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source",
        help="a corefBias checkout (or its WinoBias/wino/data/conll_format/ folder) holding the eight "
        "*_stereotype.v4_auto_conll files (default: download them, checked against pinned sha256)",
    )
