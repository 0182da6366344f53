"""JBBQ / BBQ: schema, template expander, builders and the DeepL translation flow.

``build(out_root, ...)`` writes ``<out_root>/jbbq``: the project's SAMPLE templates
(not JBBQ) by default, so ``make datasets`` and the demo run offline, or the real
JBBQ from the copy its user received from the authors (``source=``), marked
``redistributable: false``. ``bias-hub build jbbq`` is its command-line form.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from bias_hub.builders.jbbq.paper_counts import comparison_lines
from bias_hub.builders.shared.card import read_card_yaml

__all__ = ["NAME", "SAMPLE_DIR", "build"]

NAME = "jbbq"
SAMPLE_DIR = Path(__file__).resolve().parent / "sample_templates"

logger = logging.getLogger(__name__)


def build(
    out_root: str | os.PathLike[str],
    *,
    source: str | os.PathLike[str] | None = None,
    seed: int = 0,
    skip_invalid: bool = False,
    force: bool = False,
) -> Path:
    """Build ``out_root/jbbq`` and return that folder.

    Options:

    - ``source``: your JBBQ copy: a directory (a checkout with ``data/*.jsonl`` reads those
      only), the archive the authors sent, a ``.jsonl`` file or template CSVs (default:
      the project's sample templates);
    - ``seed``: seed of the expander and of the train/dev/test split (default 0);
    - ``skip_invalid``: leave out question rows that break the schema (logged and listed
      in the card) instead of stopping at the first;
    - ``force``: replace an existing build of your own JBBQ copy with the sample (without
      it such a folder is kept and a warning logged).
    """
    # `bias-hub` imports every builder package to list its commands: what needs datasets and
    # pyarrow loads when a build runs.
    from bias_hub.builders.dataset_folder import write_dataset_folder
    from bias_hub.builders.jbbq.bbq_format import build_configs, load_rows, warn_undecided
    from bias_hub.builders.jbbq.cards import JBBQ_FORM, jbbq_sample_card, jbbq_user_card
    from bias_hub.builders.jbbq.schema import JBBQ_CATEGORIES
    from bias_hub.builders.shared.card import CardMetadata
    from bias_hub.builders.shared.sources import sha256_of

    target = Path(out_root) / NAME
    sample = source is None
    if sample and _existing_is_private(target) and not force:
        logger.warning(
            "%s holds a build of your own JBBQ copy; not replacing it with the sample "
            "(pass --force to do so).",
            target,
        )
        return target
    folder = SAMPLE_DIR if sample else Path(source)
    built = load_rows(folder, JBBQ_CATEGORIES, language="ja", seed=seed, skip_invalid=skip_invalid)
    warn_undecided(built)
    configs = build_configs(built.rows, JBBQ_CATEGORIES, seed=seed)
    common = {
        "language": ["ja"],
        "task_categories": ["question-answering", "multiple-choice"],
        "task_ids": ["multiple-choice-qa"],
        "tags": ["bias", "social-bias", "fairness", "bbq", "jbbq"],
    }
    if sample:
        metadata = CardMetadata(
            pretty_name="JBBQ-format sample (bias-hub sample templates, not JBBQ)",
            license="mit",
            annotations_creators=["expert-generated"],
            source_datasets=["original"],
            extra={"redistributable": True, "sample": True},
            **common,
        )
        card = jbbq_sample_card(configs, built, seed)
    else:
        path = Path(source).expanduser()
        digest = f", sha256 {sha256_of(path)}" if path.is_file() else ""
        provenance = f"`{path.name}`{digest}"
        metadata = CardMetadata(
            pretty_name="JBBQ: Japanese Bias Benchmark for QA (private build)",
            license="other",
            source_datasets=["extended|bbq"],
            extra={
                "license_name": "jbbq-terms",
                "license_link": "https://github.com/ynklab/JBBQ_data",
                "redistributable": False,
                "extra_gated_prompt": (
                    "JBBQ's authors prohibit redistribution. Request the data from them: "
                    + JBBQ_FORM
                ),
            },
            **common,
        )
        card = jbbq_user_card(configs, built, seed, provenance)
        _compare_with_paper(built.rows)
    write_dataset_folder(target, configs, metadata, card, default_config="all")
    sizes = ", ".join(f"{name} {sum(len(d) for d in s.values())}" for name, s in configs.items())
    label = "SAMPLE templates (not JBBQ)" if sample else str(folder)
    logger.info("wrote %s from %s: %s", target, label, sizes)
    return target


def _compare_with_paper(rows: list[dict]) -> None:
    """Log the copy's counts beside §4.1's and the README's: a warning where they differ
    (users may hold a newer release than the paper's)."""
    lines, same = comparison_lines(rows)
    if same:
        logger.info("your JBBQ copy matches the published counts: %s", "; ".join(lines))
    else:
        logger.warning(
            "your JBBQ copy differs from the published counts (a newer or older release, or a partial copy?): %s",
            "; ".join(lines),
        )


def _existing_is_private(target: Path) -> bool:
    if not (target / "README.md").exists():
        return False
    try:
        header = read_card_yaml(target)
    except ValueError:
        return False
    return header.get("redistributable") is False
