"""``bias-hub build nli_bias_controlled``: the command-line form of ``bias_hub.builders.nli_bias_controlled.build``."""

from __future__ import annotations

import argparse

NAME = "nli_bias_controlled"
HELP = "bias-controlled NLI training sets, one config per bias rate r = 0.0 .. 1.0"
IN_ALL = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--authors-dir",
        help="your copy of the authors' bias-controlled-set_v1.1 as shipped (train/train_r-K.json, "
        "dev/dev_r-K.json, test/test_{bias,nonbias}.json; its untokenized/ folder is read); "
        "without it the sets are built from the project lexicon",
    )
    parser.add_argument(
        "--train-on-dev",
        action="store_true",
        help="with --authors-dir: train on dev/dev_r-K.json, for copies without the large train files "
        "(recorded in the card)",
    )
    parser.add_argument(
        "--occupations-per-type", type=int, default=10, help="occupations per type (default 10)"
    )
    parser.add_argument(
        "--templates-per-occupation",
        type=int,
        default=50,
        help="training templates per occupation; each gives a female and a male pair (default 50)",
    )
    parser.add_argument("--templates", help="training templates TSV (default: the project's)")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the template sample per occupation"
    )
