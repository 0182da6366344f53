"""Write one dataset folder the way a Hub dataset repo holds it.

A folder is a README.md card whose YAML declares every config, split and
feature (``builders.shared.card``), plus ``<config>/<split>-00000-of-00001.parquet``
files. The folder is assembled in a staging sibling and swapped in with a
rename, so a failed or killed build never leaves a half-written dataset behind
(the next build cleans up after a killed one).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import datasets

from builders.shared.card import (
    CardMetadata,
    CardSections,
    parquet_name,
    read_card_yaml,
    render_card,
)
from builders.shared.files import atomic_write_text, file_mode, replace_folder, staging_folder

__all__ = ["CardMetadata", "CardSections", "parquet_name", "read_card_yaml", "write_dataset_folder"]


def write_dataset_folder(
    target: str | os.PathLike[str],
    configs: Mapping[str, Mapping[str, datasets.Dataset]],
    metadata: CardMetadata,
    card: CardSections | str,
    default_config: str | None = None,
) -> Path:
    """Write ``configs`` ({config: {split: Dataset}}) and their card into ``target``.

    ``card``: the sections of the card (``builders.shared.card.CardSections``); a plain
    string is the whole card body (test fixtures). All configs must be non-empty;
    every split of a config must share its features. The previous folder, if any,
    is replaced only once the new one is complete.
    """
    target = Path(target)
    if not configs:
        raise ValueError("write_dataset_folder: no configs to write")
    for name, splits in configs.items():
        if not splits:
            raise ValueError(f"config {name!r} has no splits")
        features = None
        for split, ds in splits.items():
            if len(ds) == 0:
                raise ValueError(f"config {name!r}, split {split!r} is empty")
            if features is not None and ds.features != features:
                raise ValueError(f"config {name!r}: split {split!r} has different features")
            features = ds.features

    rendered = render_card(target.name, configs, metadata, card, default_config)
    staging = staging_folder(target)
    try:
        for name, splits in configs.items():
            (staging / name).mkdir()
            for split, ds in splits.items():
                ds.to_parquet(str(staging / name / parquet_name(split)))
        atomic_write_text(staging / "README.md", str(rendered))
        for parquet in staging.rglob("*.parquet"):
            os.chmod(parquet, file_mode())
        replace_folder(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _forget_cached_copies(target)
    return target


def _forget_cached_copies(target: Path) -> None:
    """Drop `datasets`' Arrow cache of a folder we just rewrote.

    datasets 5 keys its cache of a local folder by folder name and config, not by
    the files' contents, so without this `load_dataset` keeps serving the rows of
    the previous build.
    """
    cached = Path(datasets.config.HF_DATASETS_CACHE) / target.name
    if cached.is_dir():
        shutil.rmtree(cached, ignore_errors=True)
