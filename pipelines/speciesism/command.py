"""``bias-hub speciesism --model ID [ID ...]`` or ``bias-hub speciesism --preset paper``."""

from __future__ import annotations

import argparse

from pipelines.common import pipeline_command


def confidence_level(text: str) -> float | None:
    """``0.95``; ``none`` or ``0`` for no intervals."""
    if text.strip().lower() in ("none", "0", "off"):
        return None
    try:
        level = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number between 0 and 1 (or none)") from None
    if not 0 < level < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not between 0 and 1 (use none for no intervals)")
    return level


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = pipeline_command(
        subparsers,
        "speciesism",
        run="pipelines.speciesism.run:run",
        settings="pipelines.speciesism.run:Settings",
        help="speciesist bias of masked LMs: change rates, association, sentiment of fills",
        description="Probabilities at the mask under human-form vs object-form templates, the "
        "study's change-rate tables, Kurita et al.'s association, and the share of negative "
        "fills per animal; writes results.json, report.md and negative_share.png.",
        model_help="masked LM (Hub id or local path; default with --preset paper: "
        "bert-large-uncased and roberta-large)",
        several_models=True,
        model_required=False,
        out_default="reports/speciesism",
        dataset_help="the speciesism_templates folder or its name under --datasets-root (default: speciesism_templates)",
    )
    parser.add_argument(
        "--preset",
        choices=("paper",),
        default=None,
        help="paper: the study's settings (bert-large-uncased and roberta-large unless --model, "
        "raw vocabulary tokens, Google Cloud sentiment unless --sentiment-backend, the six farmed "
        "animals, 15 words per table, top 10 fills); other flags override it and are reported",
    )
    parser.add_argument(
        "--language",
        choices=("en", "ja"),
        default="en",
        help="template set: en (the study's) or ja (this project's extension)",
    )
    parser.add_argument(
        "--groups",
        nargs="+",
        type=str,
        default=("study",),
        choices=("study", "companion", "wild", "control"),
        help="animal groups to include (default: the study's six animals)",
    )
    parser.add_argument(
        "--animals",
        nargs="+",
        default=(),
        metavar="ANIMAL",
        help="exact animals (English keys such as pig dog person); overrides --groups",
    )
    parser.add_argument("--top-k", type=int, default=15, help="words per direction in the tables")
    parser.add_argument(
        "--tokens",
        choices=("words", "raw"),
        default=None,
        help="items the tables and fills may list: words (whole-word tokens; the default) or raw "
        "(every vocabulary item, as the paper's tables; the default of --preset paper)",
    )
    parser.add_argument("--sentiment-top-k", type=int, default=10, help="fills judged per animal")
    parser.add_argument(
        "--association-words",
        type=int,
        default=5,
        help="top words per direction scored with Kurita's association (0: skip)",
    )
    parser.add_argument(
        "--sentiment-backend",
        default=None,
        help="vader (English, offline), google-cloud (the paper's; credentials from "
        "GOOGLE_API_KEY or Application Default Credentials), ja-lexicon, or package.module:factory "
        "(default: vader for en, ja-lexicon for ja; google-cloud with --preset paper)",
    )
    parser.add_argument(
        "--confidence-level",
        type=confidence_level,
        default=0.95,
        help="bootstrap intervals of change rates, negative shares and association "
        "(default: %(default)s; none: off)",
    )
    parser.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (default: %(default)s)")
    parser.add_argument("--batch-size", type=int, default=32)
