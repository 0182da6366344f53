"""The dataset builders: ``builders/<dataset>/`` each (``build(out_root)``, ``command.py``), the
shared layer ``builders/shared/``, and ``build_all``, what ``bias-hub build all`` runs."""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import ModuleType

__all__ = ["build_all"]


def build_all(
    out_root: str | os.PathLike[str],
    commands: Mapping[str, ModuleType],
    argv: list[str] | None = None,
) -> None:
    """Every builder of ``commands`` (``{dataset: command module}``) that needs no user-supplied
    data, with its defaults, into ``out_root``; one timed line each. A folder holding configs
    built from the user's own copy is kept, with a warning. ``argv``: the command as typed,
    which the cards may repeat."""
    import importlib
    import logging
    from pathlib import Path

    from bias_hub.builders.dataset_folder import UserBuildKept, user_copy_build
    from bias_hub.builders.shared.console import command_line, stage
    from bias_hub.builders.shared.files import ensure_writable_root

    ensure_writable_root(out_root, "--out-root")
    log = logging.getLogger("bias_hub.builders")
    for name, command in commands.items():
        if not getattr(command, "IN_ALL", True):
            continue
        try:
            with (
                stage(f"built {name}", log),
                user_copy_build(command_line(argv), reads_user_copy=False),
            ):
                importlib.import_module(command.__package__).build(Path(out_root))
        except UserBuildKept as kept:
            log.warning("kept %s", kept)
