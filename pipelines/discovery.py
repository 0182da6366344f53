"""The commands are found, not listed: every ``builders/<dataset>/command.py`` and every
``pipelines/<part>/command.py``. The CLI builds its parsers from them; the demo builds the
datasets ``bias-hub build all`` would."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from bias_hub import builders

__all__ = ["builder_commands", "builder_function", "submodules"]


def submodules(package: ModuleType, leaf: str) -> list[ModuleType]:
    """``<package>.<sub>.<leaf>`` for every sub-package that has one, imported, by name."""
    names = [
        f"{package.__name__}.{info.name}.{leaf}"
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
        if info.ispkg
    ]
    return [importlib.import_module(n) for n in names if importlib.util.find_spec(n) is not None]


def builder_commands() -> dict[str, ModuleType]:
    """``{dataset name: command module}`` for every dataset builder."""
    return {module.NAME: module for module in submodules(builders, "command")}


def builder_function(command: ModuleType) -> Callable[..., Path]:
    """The ``build`` function of the builder package a command module belongs to."""
    return importlib.import_module(command.__package__).build
