"""Write one dataset folder the way a Hub dataset repo holds it: a README.md card whose YAML
declares every config, split and feature, ``<config>/<split>-00000-of-00001.parquet`` files and,
for a benchmark, ``eval.yaml``. The folder is assembled in a staging sibling and swapped in by
rename, so a killed build never leaves half a dataset (the next build cleans up).

A rebuild never throws away what a user built: configs built from the user's own copy are
listed in the card's YAML under ``built_from_user_copy`` with the command that built them, and
a build that would replace them with anything else is refused with ``UserBuildKept`` (``build
all`` keeps such a folder and says so, ``--force`` replaces it). Nor does a build delete what
no build wrote: a folder holding files its card does not list, or no card, is refused the same
way, as a run folder refuses files its last run did not write.

Each folder written is noted for ``builders.shared.written.folders_written()``, so that
``bias-hub reproduce`` can fingerprint what a build step made.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import os
import re
import shutil
from collections.abc import Collection, Mapping
from pathlib import Path

import datasets

from bias_hub.builders.shared.benchmark import EVAL_YAML, eval_yaml, eval_yaml_text
from bias_hub.builders.shared.card import (
    USER_COPY_KEY,
    CardMetadata,
    CardSections,
    card_data_files,
    parquet_name,
    read_card_yaml,
    render_card,
)
from bias_hub.builders.shared.files import (
    atomic_write_text,
    file_mode,
    followed,
    replace_folder,
    staging_folder,
)
from bias_hub.builders.shared.secrets import redact
from bias_hub.builders.shared.written import holding, note_written

__all__ = [
    "USER_COPY_KEY",
    "CardMetadata",
    "CardSections",
    "UserBuildKept",
    "parquet_name",
    "read_card_yaml",
    "user_copy_build",
    "user_built_configs",
    "write_dataset_folder",
]


# A data file where a build writes one: CONFIG/SPLIT-00000-of-00001.parquet.
_BUILT_LAYOUT = re.compile(r"[^/]+/[^/]+-\d{5}-of-\d{5}\.parquet")


class UserBuildKept(ValueError):
    """A build would replace configs its user built from their own copy of the data."""


@dataclasses.dataclass(frozen=True)
class _Build:
    command: str
    reads_user_copy: bool
    force: bool


_current: contextvars.ContextVar[_Build | None] = contextvars.ContextVar(
    "bias_hub_build", default=None
)


def user_copy_build(
    command: str, *, reads_user_copy: bool, force: bool = False
) -> contextlib.AbstractContextManager[_Build]:
    """The block is one ``bias-hub build`` (``command``, as a card may repeat it):
    ``reads_user_copy`` marks every config it writes as built from the user's copy (unless the
    builder names them), ``force`` lets it replace configs an earlier build made that way."""
    return holding(_current, _Build(command, reads_user_copy, force))


def user_built_configs(target: str | os.PathLike[str]) -> tuple[list[str], str]:
    """The configs of the folder ``target`` built from its user's copy, and the command that built them."""
    try:
        record = read_card_yaml(target).get(USER_COPY_KEY)
    except (FileNotFoundError, ValueError):  # no card, or one that does not parse
        return [], ""
    if not isinstance(record, dict):
        return [], ""
    return [str(name) for name in record.get("configs") or []], str(record.get("command") or "")


def _check_user_copies(target: Path, user_configs: Collection[str], build: _Build | None) -> None:
    earlier, command = user_built_configs(target)
    lost = [name for name in earlier if name not in set(user_configs)]
    if not lost or (build is not None and build.force):
        return
    how = f"`{command}`" if command else "the command that built them, with the same copy"
    raise UserBuildKept(
        f"{target}: config(s) {', '.join(lost)} were built from your own copy of the data; this build "
        f"would replace them, so the folder is kept. Rebuild them with {how}, or add --force to "
        f"`bias-hub build {target.name}` to replace them"
    )


def _check_nothing_else(target: Path) -> None:
    """Refuse to replace a folder that holds files no build wrote: anything but its card, its
    ``eval.yaml``, the data files the card lists, and files laid out as a build lays them out (``CONFIG/SPLIT-
    00000-of-00001.parquet``, for a folder whose card an older version wrote otherwise)."""
    if not target.is_dir():
        return
    try:
        listed = set(card_data_files(read_card_yaml(target)))
    except (ValueError, OSError):
        listed = None  # no card this version reads: the layout tells what a build wrote
    others = sorted(
        name
        for path in target.rglob("*")
        if (path.is_file() or path.is_symlink())
        and "__pycache__" not in path.relative_to(target).parts
        and (name := path.relative_to(target).as_posix()) not in ("README.md", EVAL_YAML)
        and not (name in listed if listed is not None else _BUILT_LAYOUT.fullmatch(name))
    )
    if others:
        shown = ", ".join(others[:10]) + (", ..." if len(others) > 10 else "")
        raise UserBuildKept(
            f"{target}: holds {len(others)} file(s) no build wrote, which this build would delete "
            f"(it replaces the folder whole): {shown}; the folder is kept. Move them out of it, "
            "or build into another --out-root"
        )


def write_dataset_folder(
    target: str | os.PathLike[str],
    configs: Mapping[str, Mapping[str, datasets.Dataset]],
    metadata: CardMetadata,
    card: CardSections | str,
    default_config: str | None = None,
    user_configs: Collection[str] | None = None,
) -> Path:
    """Write ``configs`` ({config: {split: Dataset}}) and their card into ``target``.

    ``user_configs``: the configs built from the user's own copy of the data (default: every
    config when the command line says the build read one, see ``user_copy_build``, else
    none). They are recorded in the card, and a build that would replace configs recorded so
    by an earlier build is refused (``UserBuildKept``) unless the command line forces it.

    ``card``: the sections of the card (``bias_hub.builders.shared.card.CardSections``); a plain
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

    build = _current.get()
    if user_configs is None:
        user_configs = list(configs) if build is not None and build.reads_user_copy else []
    unknown = [name for name in user_configs if name not in configs]
    if unknown:
        raise ValueError(
            f"user_configs: {', '.join(unknown)} not among the configs written ({', '.join(configs)})"
        )
    _check_user_copies(target, user_configs, build)
    _check_nothing_else(followed(target))
    if user_configs:
        record = {"configs": list(user_configs), "command": build.command if build else ""}
        metadata = dataclasses.replace(metadata, extra={**metadata.extra, USER_COPY_KEY: record})
    rendered = render_card(target.name, configs, metadata, card, default_config)
    staging = staging_folder(target)
    try:
        for name, splits in configs.items():
            (staging / name).mkdir()
            for split, ds in splits.items():
                ds.to_parquet(str(staging / name / parquet_name(split)))
        # A card may name an endpoint a config was made with: never its credentials.
        atomic_write_text(staging / "README.md", redact(str(rendered)))
        # A benchmark's tasks on the configs this build holds: a Hub Benchmark beside its card.
        spec = eval_yaml(target.name, {name: list(splits) for name, splits in configs.items()})
        if spec is not None:
            atomic_write_text(staging / EVAL_YAML, eval_yaml_text(spec))
        for parquet in staging.rglob("*.parquet"):
            os.chmod(parquet, file_mode())
        replace_folder(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _forget_cached_copies(target)
    note_written(followed(target).resolve())
    return target


def _forget_cached_copies(target: Path) -> None:
    """Drop `datasets`' Arrow cache of a folder we just rewrote.

    datasets 5 keys its cache of a local folder by folder name and config, not by
    the files' contents, so without this `load_dataset` keeps serving the rows of
    the previous build.
    """
    shutil.rmtree(Path(datasets.config.HF_DATASETS_CACHE) / target.name, ignore_errors=True)
