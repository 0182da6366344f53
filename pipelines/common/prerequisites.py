"""What a command needs before it starts, checked at once: every missing extra, dataset folder,
model folder and key in one message, before a folder is written, a model loaded or a request paid.

A command that found them one at a time (the dataset, then torch) made a user fix, rerun and
fail again; one that found them late had already written its output folder and spent minutes.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.extras import extras_line, missing_extras

__all__ = ["check_prerequisites"]


def check_prerequisites(
    command: str,
    *,
    extras: Iterable[str] = (),
    datasets: Iterable[tuple[str, str | Path]] = (),
    datasets_root: str | Path | None = None,
    models: Iterable[tuple[str, str]] = (),
    keys: Iterable[tuple[str, str]] = (),
) -> None:
    """Raise one ``UserError`` naming everything ``command`` lacks: ``extras`` not installed,
    ``datasets`` (``(flag, name or folder)``) not built, local ``models`` (``(flag, folder)``)
    missing, ``keys`` (``(flag, environment variable)``) not set. Hub ids are the loader's."""
    from bias_hub.pipelines.common.locations import dataset_folder
    from bias_hub.pipelines.common.models import looks_like_path

    problems = []
    lacking = missing_extras(extras)
    if lacking:
        problems.append(extras_line(lacking))
    for flag, name in datasets:
        try:
            dataset_folder(name, datasets_root, flag)
        except FileNotFoundError as err:
            problems.append(str(err))
    for flag, name in models:
        if name and looks_like_path(name) and not Path(name).expanduser().exists():
            problems.append(
                f"{flag} {name}: no such model folder (and not a Hub id of the form ORG/NAME)"
            )
    for flag, variable in keys:
        if not os.environ.get(variable):
            problems.append(f"{flag}: environment variable {variable} is not set")
    if len(problems) == 1:
        raise UserError(problems[0])
    if problems:
        listed = " ".join(f"({number}) {problem}" for number, problem in enumerate(problems, 1))
        raise UserError(
            f"{command} needs {len(problems)} things first (nothing was done): {listed}"
        )
