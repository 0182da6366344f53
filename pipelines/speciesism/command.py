"""``bias-hub speciesism --model ID [ID ...]`` or ``bias-hub speciesism --preset paper``; and
``bias-hub speciesism-tiny-models --out DIR``, the offline stand-ins of the paper's two models.

Flag defaults come from ``pipelines/speciesism/settings.py``; ``--preset paper`` from the study
file ``pipelines/studies/speciesism.yaml``.
"""

from __future__ import annotations

import argparse

from bias_hub.pipelines.common import pipeline_command
from bias_hub.pipelines.common.arguments import add_interval_flags
from bias_hub.pipelines.speciesism import stand_in_models
from bias_hub.pipelines.speciesism.settings import GROUPS

# The CLI imports torch and transformers before running these commands, with Ctrl-C held
# meanwhile (a SIGINT inside torch's import can abort the process).
LOADS_MODELS = True


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = pipeline_command(
        subparsers,
        "speciesism",
        run="bias_hub.pipelines.speciesism.run:run",
        settings="bias_hub.pipelines.speciesism.settings:Settings",
        preset_command="speciesism",
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
        "--language",
        choices=("en", "ja"),
        help="template set: en (the study's) or ja (this project's extension) (default: %(default)s)",
    )
    parser.add_argument(
        "--groups",
        nargs="+",
        choices=GROUPS,
        help="animal groups to include (default: the study's six animals)",
    )
    parser.add_argument(
        "--animals",
        nargs="+",
        metavar="ANIMAL",
        help="exact animals (English keys such as pig dog person); overrides --groups",
    )
    parser.add_argument(
        "--top-k", type=int, help="words per direction in the tables (default: %(default)s)"
    )
    parser.add_argument(
        "--tokens",
        choices=("words", "raw"),
        help="items the tables and fills may list: words (whole-word tokens; the default) or raw "
        "(every vocabulary item, as the paper's tables; --preset paper)",
    )
    parser.add_argument(
        "--sentiment-top-k", type=int, help="fills judged per animal (default: %(default)s)"
    )
    parser.add_argument(
        "--association-words",
        type=int,
        help="top words per direction scored with Kurita's association (0: skip) (default: %(default)s)",
    )
    parser.add_argument(
        "--sentiment-backend",
        help="vader (English, offline), google-cloud (the paper's; credentials from "
        "GOOGLE_API_KEY or Application Default Credentials), ja-lexicon, or package.module:factory "
        "(default: vader for en, ja-lexicon for ja; google-cloud with --preset paper)",
    )
    add_interval_flags(
        parser, unit="templates (change rates), fills (negative shares) and pairs (association)"
    )
    parser.add_argument("--batch-size", type=int, help="sentences per batch (default: %(default)s)")
    stand_in_models.register(subparsers)
