"""Which optional part of the install an import comes with, and the one line that says so.

``pip install bias-hub`` builds datasets, loads every metric module and scores predictions;
running a model, tokenizing Japanese and calling an API come as extras (pyproject.toml's
``[project.optional-dependencies]``; this table follows it). Code imports what it needs where
it needs it, as usual; a missing one surfaces as ``ModuleNotFoundError``, which ``bias-hub``
turns into one line through ``missing_extra`` (the CLI and the demo catch it once, so no call
site writes its own install hint)::

    bias-hub: error: this needs torch, which comes with the extra 'models': pip install 'bias-hub[models]'
"""

from __future__ import annotations

from collections.abc import Iterable

from bias_hub.builders.shared.errors import UserError

__all__ = ["EXTRAS", "MissingExtra", "extra_for", "extras_line", "missing_extra", "missing_extras"]

# Import name (a top-level package, or a dotted prefix where a namespace package is shared) ->
# the extra that installs it.
EXTRAS: dict[str, str] = {
    "torch": "models",
    "transformers": "models",
    "accelerate": "models",
    "wordfreq": "models",
    "vaderSentiment": "models",
    "fugashi": "ja",
    "unidic_lite": "ja",
    "openai": "api",
    "deepl": "api",
    "tenacity": "api",
    "google.cloud": "google",
    "google.api_core": "google",
    "gensim": "corpus",
    "nltk": "corpus",
}


class MissingExtra(UserError):
    """A module of an extra is not installed; the message names the extra and how to add it."""

    def __init__(self, module: str, extra: str) -> None:
        self.module, self.extra = module, extra
        super().__init__(
            f"this needs {module}, which comes with the extra '{extra}': "
            f"pip install 'bias-hub[{extra}]'"
        )


def extra_for(module: str | None) -> tuple[str, str] | None:
    """``(import name, extra)`` for a module an extra installs (``torch.nn`` -> ``("torch",
    "models")``), or None for any other module."""
    if not module:
        return None
    parts = module.split(".")
    for length in range(len(parts), 0, -1):
        name = ".".join(parts[:length])
        if name in EXTRAS:
            return name, EXTRAS[name]
    return None


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


def missing_extras(extras: Iterable[str]) -> dict[str, list[str]]:
    """The extras of ``extras`` this install lacks, each with its modules that are missing
    (found without importing them: ``importlib.util.find_spec``)."""
    import importlib.util

    missing: dict[str, list[str]] = {}
    for extra in dict.fromkeys(extras):
        for module in (name for name, of in EXTRAS.items() if of == extra):
            try:
                found = importlib.util.find_spec(module) is not None
            except ModuleNotFoundError:  # "google.cloud" without "google"
                found = False
            if not found:
                missing.setdefault(extra, []).append(module)
    return missing


def extras_line(missing: dict[str, list[str]]) -> str:
    """``missing_extras`` in words, with the one install command for all of them: ``this needs
    torch and transformers, which come with the extra 'models': pip install 'bias-hub[models]'``."""
    if len(missing) == 1:
        ((extra, modules),) = missing.items()
        verb = "comes" if len(modules) == 1 else "come"
        said = f"{_and(modules)}, which {verb} with the extra '{extra}'"
    else:
        said = _and(
            [f"{_and(modules)} (the extra '{extra}')" for extra, modules in missing.items()]
        )
    return f"this needs {said}: pip install 'bias-hub[{','.join(missing)}]'"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
