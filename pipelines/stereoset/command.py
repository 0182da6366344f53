"""``bias-hub stereoset attention``: attention gaps and perplexity gaps on gender-swapped pairs.

Flag defaults come from ``pipelines/stereoset/settings.py``; ``--preset paper`` from the study
file ``pipelines/studies/stereoset_gender_attention.yaml``.
"""

from __future__ import annotations

import argparse

from bias_hub.pipelines.common import pipeline_command
from bias_hub.pipelines.common.arguments import add_flags, add_interval_flags
from bias_hub.pipelines.stereoset import stand_in_models

# The CLI imports torch and transformers before running these commands, with Ctrl-C held
# meanwhile (a SIGINT inside torch's import can abort the process).
LOADS_MODELS = True


def _heads(text: str) -> list[int] | None:
    if text == "mean":
        return None
    try:
        heads = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(
            f"--heads: expected 'mean' or comma-separated head numbers, got {text!r}"
        ) from err
    if not heads:
        raise argparse.ArgumentTypeError("--heads: no head given")
    return heads


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser(
        "stereoset", help="gender-swapped StereoSet pairs: attention and perplexity gaps"
    )
    inner = group.add_subparsers(dest="stereoset_command", required=True, metavar="COMMAND")
    parser = pipeline_command(
        inner,
        "attention",
        run="bias_hub.pipelines.stereoset.run:run",
        settings="bias_hub.pipelines.stereoset.settings:Settings",
        preset_command="stereoset attention",
        help="attention to gender words vs perplexity gaps, per word",
        model_help="a bidirectional encoder (BERT-like) whose attentions are read, Hub id or local folder; "
        "a causal (decoder-only) model is refused (--preset paper: bert-base-uncased)",
        model_required=False,
        out_default="reports/stereoset",
        dataset_help="the stereoset_gender_swap folder or its name under --datasets-root (default: stereoset_gender_swap)",
    )
    parser.add_argument("--lm", help="causal LM id or folder (perplexities; --preset paper: gpt2)")
    parser.add_argument(
        "--config",
        help="dataset config: contexts (default), paper_population (the study's whole "
        "population; --preset paper), continuations or llm (default: %(default)s)",
    )
    parser.add_argument("--layer", type=int, help="attention layer (default %(default)s, the last)")
    parser.add_argument(
        "--heads", type=_heads, help="'mean' (all heads, the default) or e.g. 0,3,7"
    )
    parser.add_argument(
        "--level",
        choices=["token", "word"],
        help="BERT's tokens (the study's) or words (pieces folded) (default: %(default)s)",
    )
    parser.add_argument(
        "--exclude",
        choices=["period", "punctuation"],
        help="leave out periods (the study's) or every punctuation mark (default: %(default)s)",
    )
    parser.add_argument(
        "--pair-assignment",
        choices=["first", "all"],
        help="first: each pair is used by the first word of the order that holds it (the study's); "
        "all: every pair counts for each of its words (default: %(default)s)",
    )
    parser.add_argument(
        "--order",
        choices=["signed", "absolute"],
        help="the order words take pairs in: attention gap, largest first, or |attention gap| "
        "(default: %(default)s)",
    )
    parser.add_argument(
        "--identical-pairs",
        choices=["exclude", "include"],
        help="pairs without a gender word (the same sentence twice: paper_population's contexts "
        "without one): left out of the statistics and Figure 2, or included as the study's count "
        "holds them (default: %(default)s)",
    )
    add_flags(
        parser,
        ("--batch-size", int, "sentences per batch (default: %(default)s)"),
        (
            "--min-count",
            int,
            "occurrences per form a word needs (default %(default)s, the study's)",
        ),
        ("--top-k", int, "words shown at each end (default: %(default)s)"),
        ("--frequency-tolerance", float, "max |Zipf gap| of matched pairs (default: %(default)s)"),
        ("--max-pairs", int, "random subsample of pairs (seeded by --seed)"),
    )
    add_interval_flags(parser, unit="occurrences, pairs and words")
    stand_in_models.register(inner)
