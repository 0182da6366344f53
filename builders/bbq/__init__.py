"""English BBQ (Parrish et al. 2022) as a Hub dataset folder; shares the JBBQ builder code.

``build(out_root, ...)`` writes ``<out_root>/bbq`` from BBQ's ``data/*.jsonl`` (CC BY
4.0): the eleven category files fetched from their canonical URLs through
``bias_hub.builders.shared.sources`` (cached, checked against pinned checksums), or a local copy. No
registry package ships BBQ with its metadata, so offline builds need ``source``.
``bias-hub build bbq`` is its command-line form.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

__all__ = ["NAME", "build"]

NAME = "bbq"

logger = logging.getLogger(__name__)


def build(
    out_root: str | os.PathLike[str],
    *,
    source: str | os.PathLike[str] | None = None,
    seed: int = 0,
    skip_invalid: bool = False,
) -> Path:
    """Build ``out_root/bbq`` and return that folder.

    Options:

    - ``source``: a BBQ checkout (its root or ``data/`` directory, or an archive of either;
      only ``data/*.jsonl`` is read, not ``results/``), a ``.jsonl`` file, or BBQ's
      ``templates/`` folder, expanded by BBQ's procedure with English "unknown"
      expressions (default: download ``data/*.jsonl`` from github.com/nyu-mll/BBQ);
    - ``seed``: seed of the expander and of the train/dev/test split (default 0);
    - ``skip_invalid``: leave out question rows that break the schema (logged and listed
      in the card) instead of stopping at the first.
    """
    # `bias-hub` imports every builder package to list its commands: what needs datasets and
    # pyarrow loads when a build runs.
    from bias_hub.builders.dataset_folder import write_dataset_folder
    from bias_hub.builders.jbbq.bbq_format import build_configs, load_rows, warn_undecided
    from bias_hub.builders.jbbq.cards import bbq_card
    from bias_hub.builders.jbbq.schema import BBQ_CATEGORIES
    from bias_hub.builders.shared.card import CardMetadata
    from bias_hub.builders.shared.sources import resolve

    target = Path(out_root) / NAME
    with tempfile.TemporaryDirectory(prefix="bias-hub-bbq-") as tmp:
        if source is None:
            resolved = [resolve(f"bbq_{category}") for category in BBQ_CATEGORIES]
            for item in resolved:
                shutil.copyfile(item.path, Path(tmp) / item.path.name)
            folder = Path(tmp)
            provenance = "the canonical files " + ", ".join(
                f"`{r.location}` (sha256 {r.sha256[:12]}...)" for r in resolved
            )
        else:
            folder = Path(source)
            provenance = f"`{folder.name}` (a copy given with --source)"
        built = load_rows(
            folder, BBQ_CATEGORIES, language="en", seed=seed, skip_invalid=skip_invalid
        )
    warn_undecided(built)
    configs = build_configs(built.rows, BBQ_CATEGORIES, seed=seed)
    metadata = CardMetadata(
        pretty_name="BBQ: Bias Benchmark for QA",
        license="cc-by-4.0",
        language=["en"],
        task_categories=["question-answering", "multiple-choice"],
        task_ids=["multiple-choice-qa"],
        tags=["bias", "social-bias", "fairness", "bbq"],
        source_datasets=["original"],
        extra={"redistributable": True},
    )
    write_dataset_folder(
        target, configs, metadata, bbq_card(configs, built, seed, provenance), default_config="all"
    )
    sizes = ", ".join(f"{name} {sum(len(d) for d in s.values())}" for name, s in configs.items())
    logger.info("wrote %s: %s", target, sizes)
    return target
