"""Which dataset folders the builds inside a block wrote.

``folders_written()`` opens the block; ``write_dataset_folder`` calls ``note_written`` for each
folder it finishes. A caller that runs a build as a step (``bias-hub reproduce``) fingerprints
what it made. Kept in the shared layer, free of heavy imports, so pipelines can use it without
reaching into a builder's internals. ``holding`` is the one way the project scopes a context
variable to a block (this module's, the command running, the build, the study step).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["folders_written", "holding", "note_written"]

_written: contextvars.ContextVar[list[Path] | None] = contextvars.ContextVar(
    "bias_hub_folders_written", default=None
)


@contextlib.contextmanager
def holding(variable: contextvars.ContextVar, value: Any) -> Iterator[Any]:
    """``variable`` holds ``value`` inside the block (and again what it held before, after it);
    yields ``value``."""
    token = variable.set(value)
    try:
        yield value
    finally:
        variable.reset(token)


def folders_written() -> contextlib.AbstractContextManager[list[Path]]:
    """The dataset folders written inside the block (absolute, links followed), in the order
    written; the list fills as the block runs."""
    return holding(_written, [])


def note_written(folder: Path) -> None:
    """Record ``folder`` (already resolved) as written, when a block is collecting."""
    written = _written.get()
    if written is not None:
        written.append(folder)
