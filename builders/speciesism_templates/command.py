"""``bias-hub build speciesism_templates``: the command-line form of ``bias_hub.builders.speciesism_templates.build``."""

from __future__ import annotations

import argparse
from pathlib import Path

NAME = "speciesism_templates"
HELP = "human-form vs object-form templates about animals, for masked LMs (English and Japanese)"
IN_ALL = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from bias_hub.builders.speciesism_templates.templates import DEFAULT_ANIMALS, DEFAULT_TEMPLATES

    parser.add_argument(
        "--templates", type=Path, default=DEFAULT_TEMPLATES, help="template table (TSV)"
    )
    parser.add_argument("--animals", type=Path, default=DEFAULT_ANIMALS, help="animal table (TSV)")
