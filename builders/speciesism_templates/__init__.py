"""The speciesism templates dataset: human-form and object-form sentences about animals.

``build(out_root, ...)`` writes ``<out_root>/speciesism_templates``; ``bias-hub build
speciesism_templates`` is its command-line form.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from bias_hub.builders.speciesism_templates.templates import DEFAULT_ANIMALS, DEFAULT_TEMPLATES

__all__ = ["NAME", "build"]

NAME = "speciesism_templates"

logger = logging.getLogger(__name__)


def build(
    out_root: str | os.PathLike[str],
    *,
    templates: str | os.PathLike[str] = DEFAULT_TEMPLATES,
    animals: str | os.PathLike[str] = DEFAULT_ANIMALS,
) -> Path:
    """Build ``out_root/speciesism_templates`` and return that folder.

    Options:

    - ``templates``: the template table (TSV; default: the reviewed ``templates.tsv``);
    - ``animals``: the animal table (TSV; default: the reviewed ``animals.tsv``).
    """
    import datasets

    from bias_hub.builders.dataset_folder import write_dataset_folder
    from bias_hub.builders.speciesism_templates.card import METADATA, card_sections
    from bias_hub.builders.speciesism_templates.templates import ROW_FIELDS, SPLIT, build_rows

    rows = build_rows(Path(templates), Path(animals))
    features = datasets.Features({name: datasets.Value("string") for name in ROW_FIELDS})
    configs = {
        config: {SPLIT: datasets.Dataset.from_list(config_rows, features=features)}
        for config, config_rows in rows.items()
    }
    target = Path(out_root) / NAME
    write_dataset_folder(
        target,
        configs,
        METADATA,
        card_sections(rows, configs["probability"][SPLIT][0]),
        default_config="probability",
    )
    for config, config_rows in rows.items():
        logger.info("%s: %d rows", config, len(config_rows))
    logger.info("wrote %s", target)
    return target
