"""Which optional part of the install an import comes with, and the one line that says so.

``pip install bias-hub`` builds datasets, loads every metric module and scores predictions;
running a model, tokenizing Japanese and calling an API come as extras. They are declared once,
in pyproject.toml's ``[project.optional-dependencies]``, and read here from the installed
metadata. Code imports what it needs where it needs it, as usual; a missing one surfaces as
``ModuleNotFoundError``, which ``bias-hub`` turns into one line through ``missing_extra`` (the
CLI and the demo catch it once, so no call site writes its own install hint)::

    bias-hub: error: this needs torch, which comes with the extra 'models': pip install 'bias-hub[models]'

A module is matched to a requirement by name, normalised as distribution names are: a module of
``vadersentiment`` is ``vaderSentiment``, one of ``google-cloud-language`` is
``google.cloud.language_v1``.
"""

from __future__ import annotations

import functools
from importlib import metadata

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from bias_hub.builders.shared.errors import UserError

__all__ = ["MissingExtra", "extra_for", "extras", "missing_extra"]

# The contributors' extra: its tools are no part of any command.
DEV = "dev"


@functools.cache
def extras() -> dict[str, str]:
    """Each distribution an extra requires (normalised name) -> the first extra, in
    pyproject.toml's order, that requires it (``dev`` left out); empty where bias-hub runs from a
    checkout that was never installed."""
    try:
        distribution = metadata.distribution("bias-hub")
    except metadata.PackageNotFoundError:
        return {}
    names = [e for e in distribution.metadata.get_all("Provides-Extra") or [] if e != DEV]
    found: dict[str, str] = {}
    for line in distribution.requires or []:
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == "bias-hub":
            continue  # `all` names the other extras: bias_hub itself is no extra's module
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
    """``(distribution, extra)`` for a module an extra installs, or None for any other module: the
    distribution whose name the module's begins with, normalised (``torch.nn`` -> ``("torch",
    "models")``, ``google.cloud.language_v1`` -> ``("google-cloud-language", "google")``)."""
    name = canonicalize_name(module or "")
    found = [d for d in extras() if name and (name == d or name.startswith(f"{d}-"))]
    if not found:
        return None
    distribution = max(found, key=len)
    return distribution, extras()[distribution]


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
