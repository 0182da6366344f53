"""Which extra of the install an import comes with, and the one line that says so.

The extras (models, Japanese tokenization, API clients) are declared once, in pyproject.toml,
and read here from the installed metadata. Code imports what it needs where it needs it; the
CLI and the demo turn a ``ModuleNotFoundError`` into one line through ``missing_extra``::

    bias-hub: error: this needs torch, which comes with the extra 'models': pip install 'bias-hub[models]'
"""

from __future__ import annotations

import functools
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from bias_hub.builders.shared.errors import UserError

__all__ = ["MissingExtra", "extra_for", "extras", "missing_extra"]


@functools.cache
def extras() -> dict[str, str]:
    """Normalised distribution name -> the first extra that requires it (not ``dev``, the tools,
    nor ``all``, the others); empty where bias-hub runs from a checkout never installed."""
    try:
        distribution = metadata.distribution("bias-hub")
    except metadata.PackageNotFoundError:
        return {}
    names = set(distribution.metadata.get_all("Provides-Extra") or []) - {"dev", "all"}
    found: dict[str, str] = {}
    for requirement in map(Requirement, distribution.requires or []):
        for extra in names:
            if requirement.marker and requirement.marker.evaluate({"extra": extra}):
                found.setdefault(canonicalize_name(requirement.name), extra)
    return found


class MissingExtra(UserError):
    """A module of an extra is not installed; the message names the extra and how to add it."""

    def __init__(self, module: str, extra: str) -> None:
        self.module, self.extra = module, extra
        super().__init__(
            f"this needs {module}, which comes with the extra '{extra}': "
            f"pip install 'bias-hub[{extra}]'"
        )


def extra_for(module: str | None) -> tuple[str, str] | None:
    """``(distribution, extra)`` for a module an extra installs, or None: the distribution whose
    name the module's begins with, both normalised (``torch.nn`` -> ``("torch", "models")``,
    ``google.cloud.language_v1`` -> ``google-cloud-language``)."""
    name = canonicalize_name(module or "") + "-"
    found = max((d for d in extras() if name.startswith(f"{d}-")), key=len, default=None)
    return (found, extras()[found]) if found else None


def missing_extra(err: BaseException) -> MissingExtra | None:
    """The ``MissingExtra`` that ``err`` stands for, or None.

    ``err`` stands for one when it is a ``ModuleNotFoundError`` for a module an extra installs,
    or was raised from one: explicitly (``raise ... from``), or by a library that re-raised an
    ``ImportError`` of its own while handling it (transformers does for fugashi).
    """
    while err is not None:
        if isinstance(err, MissingExtra):
            return err
        found = extra_for(err.name) if isinstance(err, ModuleNotFoundError) else None
        if found:
            return MissingExtra(*found)
        err = err.__cause__ or (err.__context__ if isinstance(err, ImportError) else None)
    return None
