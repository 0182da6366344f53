"""``bias-hub stereoset attention``: attention gaps and perplexity gaps on gender-swapped pairs."""

from __future__ import annotations

import argparse

from pipelines.common import pipeline_command


def _heads(text: str) -> list[int] | None:
    if text == "mean":
        return None
    try:
        heads = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"--heads: expected 'mean' or comma-separated head numbers, got {text!r}") from err
    if not heads:
        raise argparse.ArgumentTypeError("--heads: no head given")
    return heads


def _confidence(text: str) -> float | None:
    if text.strip().lower() in {"0", "none", "off"}:
        return None
    try:
        return float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"--confidence-level: expected a number such as 0.95, or 0 / none, got {text!r}") from err


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser("stereoset", help="gender-swapped StereoSet pairs: attention and perplexity gaps")
    inner = group.add_subparsers(dest="stereoset_command", required=True, metavar="COMMAND")
    parser = pipeline_command(
        inner,
        "attention",
        run="pipelines.stereoset.run:run",
        settings="pipelines.stereoset.run:Settings",
        help="attention to gender words vs perplexity gaps, per word",
        model_help="BERT-like encoder whose attentions are read (Hub id or local folder; --preset paper: bert-base-uncased)",
        model_required=False,
        out_default="reports/stereoset",
        dataset_help="the stereoset_gender_swap folder or its name under --datasets-root (default: stereoset_gender_swap)",
    )
    parser.add_argument("--preset", choices=["paper"],
                        help="the study's settings: bert-base-uncased + gpt2, last layer, heads averaged, token level, "
                        "min count 1 (recorded in results.json)")  # fmt: skip
    parser.add_argument("--lm", help="causal LM id or folder (perplexities; --preset paper: gpt2)")
    parser.add_argument("--config", default="contexts", help="dataset config: contexts (the study's), continuations or llm")
    parser.add_argument("--layer", type=int, default=-1, help="attention layer (default -1, the last)")
    parser.add_argument("--heads", type=_heads, default=None, help="'mean' (all heads) or e.g. 0,3,7")
    parser.add_argument("--level", choices=["token", "word"], default="token",
                        help="BERT's tokens (the study's) or words (pieces folded)")  # fmt: skip
    parser.add_argument("--exclude", choices=["period", "punctuation"], default="period",
                        help="leave out periods (the study's) or every punctuation mark")  # fmt: skip
    parser.add_argument("--pair-assignment", choices=["first", "all"], default="first",
                        help="first: each pair is used by the first word of the order that holds it (the study's); "
                        "all: every pair counts for each of its words")  # fmt: skip
    parser.add_argument("--order", choices=["signed", "absolute"], default="signed",
                        help="the order words take pairs in: attention gap, largest first, or |attention gap|")  # fmt: skip
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--min-count", type=int, default=1, help="occurrences per form a word needs (default 1, the study's)")
    parser.add_argument("--top-k", type=int, default=15, help="words shown at each end")
    parser.add_argument("--frequency-tolerance", type=float, default=0.25, help="max |Zipf gap| of matched pairs")
    parser.add_argument("--max-pairs", type=int, help="random subsample of pairs (seeded by --seed)")
    parser.add_argument("--confidence-level", type=_confidence, default=0.95,
                        help="bootstrap intervals at this level (default 0.95; 0 or none: no intervals)")  # fmt: skip
    parser.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
