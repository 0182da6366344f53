"""Bias-controlled Japanese NLI training sets, one config per bias rate r = 0.0 .. 1.0.

``build(out_root, ...)`` writes ``<out_root>/nli_bias_controlled``; ``bias-hub build
nli_bias_controlled`` is its command-line form. Built from the project lexicon by default, or
from the authors' release (``ja_v1.1/bias-controlled-set_v1.1``) with ``authors_dir``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

__all__ = ["NAME", "build"]

NAME = "nli_bias_controlled"

logger = logging.getLogger(__name__)


def build(
    out_root: str | os.PathLike[str],
    *,
    authors_dir: str | os.PathLike[str] | None = None,
    train_on_dev: bool = False,
    occupations_per_type: int = 10,
    templates_per_occupation: int = 50,
    templates: str | os.PathLike[str] | None = None,
    seed: int = 0,
) -> Path:
    """Build the training sets into ``out_root/nli_bias_controlled`` and return that folder.

    Options:

    - ``authors_dir``: your copy of the authors' release as shipped:
      ``bias-controlled-set_v1.1`` (its ``untokenized`` folder is read), one of its folders, or
      a folder above it (``ja_v1.1``, a checkout of their repository); ``train/train_r-K.json``,
      ``dev/dev_r-K.json`` and ``test/test_{bias,nonbias}.json`` are read. Without it the sets
      are built from the project lexicon;
    - ``train_on_dev``: with ``authors_dir``, train on ``dev/dev_r-K.json`` (the ``train`` split
      of each rate's config holds the dev pairs), for copies without the large train files; the
      card records which files were the training data;
    - ``occupations_per_type``: occupations per type (default 10);
    - ``templates_per_occupation``: training templates per occupation, each giving a female
      and a male pair (default 50);
    - ``templates``: a training templates TSV (default: the project's);
    - ``seed``: seed of the template sample per occupation (default 0).
    """
    # Loaded on use: `bias-hub build --help` imports this package (its command module), and these
    # bring in datasets (heavy).
    import datasets

    from bias_hub.builders.dataset_folder import write_dataset_folder
    from bias_hub.builders.nli_bias_controlled.card import card_sections, metadata
    from bias_hub.builders.nli_bias_controlled.rows import config_name, features

    if train_on_dev and not authors_dir:
        raise ValueError(
            "--train-on-dev needs --authors-dir (the authors' dev files are what it trains on)"
        )
    sets, tests, facts = _sets(
        authors_dir, train_on_dev, occupations_per_type, templates_per_occupation, templates, seed
    )
    feats = features()
    configs = {
        config_name(rate): {
            split: datasets.Dataset.from_list(rows, features=feats)
            for split, rows in splits.items()
        }
        for rate, splits in sets.items()
    }
    for name, rows in tests.items():
        configs[name] = {"test": datasets.Dataset.from_list(rows, features=feats)}
    target = Path(out_root) / NAME
    _keep_release_configs(target, facts)
    write_dataset_folder(
        target,
        configs,
        metadata(facts),
        card_sections(sets, tests, facts, configs),
        default_config="r0.5",
    )
    logger.info(
        "wrote %s (%d configs; training data: %s)", target, len(configs), facts["training_data"]
    )
    return target


def _keep_release_configs(target: Path, facts: dict) -> None:
    """Refuse a generated build over a folder built from the authors' files: an offline rebuild
    (``make datasets``) must never replace them silently."""
    from bias_hub.builders.dataset_folder import UserBuildKept
    from bias_hub.builders.shared.card import read_card_yaml

    if facts["origin"] == "release" or not (target / "README.md").is_file():
        return
    provenance = read_card_yaml(target).get("bias_hub_provenance") or {}
    if provenance.get("origin") != "release":
        return
    dev = " --train-on-dev" if str(provenance.get("training_data", "")).startswith("dev/") else ""
    raise UserBuildKept(
        f"{target} holds the sets built from the authors' files ({provenance.get('folder')}); a build without "
        f"--authors-dir would replace them with the generated ones. Rebuild them with `bias-hub build {NAME} "
        f"--authors-dir {provenance.get('folder')}{dev}`, or remove {target} first to build the generated sets"
    )


def _sets(
    authors_dir: str | os.PathLike[str] | None,
    train_on_dev: bool,
    occupations_per_type: int,
    templates_per_occupation: int,
    templates: str | os.PathLike[str] | None,
    seed: int,
) -> tuple[dict[float, dict[str, list[dict]]], dict[str, list[dict]], dict]:
    """``({rate: {split: rows}}, {test config: rows}, facts for the card)``."""
    from bias_hub.builders.nli_bias_controlled import rows

    if authors_dir:
        from bias_hub.builders.nli_bias_controlled.release import read_release

        release = read_release(authors_dir, train_on_dev)
        flag = " --train-on-dev" if train_on_dev else ""
        return (
            release.sets,
            release.tests,
            {
                "origin": "release",
                "release": release,
                "training_data": release.training_data,
                "command": f"bias-hub build nli_bias_controlled --authors-dir {authors_dir}{flag}",
            },
        )
    from bias_hub.builders.nli_gender_bias.lexicon import load_occupations, load_templates

    training = rows.load_training_templates(templates)
    rows.check_disjoint_templates(training, load_templates())
    selected = rows.select_occupations(load_occupations(), occupations_per_type)
    sets = {
        rate: {"train": rows.build_rows(selected, training, rate, templates_per_occupation, seed)}
        for rate in rows.RATES
    }
    return (
        sets,
        {},
        {
            "origin": "generated",
            "training_data": "generated: the project lexicon x builders/nli_bias_controlled/templates.tsv",
            "templates": len(training),
            "command": "bias-hub build nli_bias_controlled",
            "selected": selected,
        },
    )
