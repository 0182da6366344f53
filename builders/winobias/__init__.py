"""WinoBias (Zhao et al. 2018) as a dataset folder, from its CoNLL-2012 files.

``build(out_root, ...)`` writes ``<out_root>/winobias`` from the eight files of
github.com/uclanlp/corefBias (``WinoBias/wino/data/conll_format/``: type 1 and 2,
pro- and anti-stereotypical, dev and test; MIT), fetched through ``bias_hub.builders.shared.sources``
with pinned sha256, or read from a local copy (``source``). No registry package ships
them, so an offline build needs ``source``; ``bias-hub build all`` leaves it out.
``bias-hub build winobias`` is its command-line form.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

__all__ = ["FILES", "NAME", "build"]

NAME = "winobias"
SPLITS = {"dev": "validation", "test": "test"}
# (upstream split, type, condition) -> file name, in the upstream folder conll_format/.
FILES = {
    (split, kind, condition): f"{split}_type{kind}_{condition}_stereotype.v4_auto_conll"
    for split in SPLITS
    for kind in (1, 2)
    for condition in ("pro", "anti")
}
# Folders of a corefBias checkout that hold other copies of these names: the notebook
# checkpoint and the website's older snapshot.
_SKIPPED = {".ipynb_checkpoints", "_site"}

logger = logging.getLogger(__name__)


def _local_files(source: Path) -> dict[tuple, Path]:
    """The eight files inside ``source`` (a checkout, its data folder or conll_format/)."""
    if not source.is_dir():
        raise FileNotFoundError(
            f"--source {source}: not a folder (give a corefBias checkout or its conll_format/)"
        )
    found: dict[tuple, Path] = {}
    for key, name in FILES.items():
        matches = [p for p in source.rglob(name) if not _SKIPPED & set(p.relative_to(source).parts)]
        if len(matches) > 1:
            raise ValueError(
                f"--source {source}: {name} appears {len(matches)} times: {[str(m) for m in matches]}"
            )
        if matches:
            found[key] = matches[0]
    missing = [name for key, name in FILES.items() if key not in found]
    if missing:
        raise FileNotFoundError(
            f"--source {source}: missing {missing} (WinoBias/wino/data/conll_format/ of corefBias)"
        )
    return found


def build(
    out_root: str | os.PathLike[str], *, source: str | os.PathLike[str] | None = None
) -> Path:
    """Build ``out_root/winobias`` and return that folder.

    Options:

    - ``source``: a folder holding the eight CoNLL files (a corefBias checkout, its
      ``WinoBias/wino/data/`` or ``conll_format/``; copies under ``_site/`` and
      ``.ipynb_checkpoints/`` are ignored). Default: download them from
      github.com/uclanlp/corefBias, checked against their pinned sha256.
    """
    # Imported here, not at the top: `bias-hub --help` imports this package (through command.py)
    # and must not pay for datasets and the folder writer.
    import datasets

    from bias_hub.builders.dataset_folder import write_dataset_folder
    from bias_hub.builders.shared.sources import SOURCES, resolve, sha256_of
    from bias_hub.builders.winobias.card import METADATA, card_sections
    from bias_hub.builders.winobias.rows import features, rows_of

    provenance = []
    if source is None:
        paths = {}
        for key in FILES:
            resolved = resolve("winobias_{}_type{}_{}".format(*key))
            paths[key] = resolved.path
            provenance.append((FILES[key], resolved.location, resolved.sha256, True))
    else:
        paths = _local_files(Path(source))
        for key, path in paths.items():
            digest = sha256_of(path)
            pinned = next(iter(SOURCES["winobias_{}_type{}_{}".format(*key)].url_sha256.values()))
            where = f"--source {Path(source).name}/{path.relative_to(source).as_posix()}"
            provenance.append((FILES[key], where, digest, digest == pinned))
            if digest != pinned:
                logger.warning(
                    "%s differs from the pinned upstream file (sha256 %s, pinned %s)",
                    path,
                    digest,
                    pinned,
                )
    schema = features()
    rows = {key: rows_of(path, *key) for key, path in paths.items()}
    configs: dict[str, dict[str, datasets.Dataset]] = {"all": {}}
    for split, hub_split in SPLITS.items():
        every = [row for key, found in rows.items() if key[0] == split for row in found]
        configs["all"][hub_split] = datasets.Dataset.from_list(every, features=schema)
    for kind in (1, 2):
        for condition in ("pro", "anti"):
            configs[f"type{kind}_{condition}"] = {
                hub_split: datasets.Dataset.from_list(rows[split, kind, condition], features=schema)
                for split, hub_split in SPLITS.items()
            }
    card = card_sections(configs, provenance, configs["all"]["test"][0])
    target = write_dataset_folder(
        Path(out_root) / NAME, configs, METADATA, card, default_config="all"
    )
    logger.info(
        "wrote %s: %s", target, ", ".join(f"{s} {len(d)}" for s, d in configs["all"].items())
    )
    return target
