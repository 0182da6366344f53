"""Which dataset folders the builds inside a block wrote.

``folders_written()`` opens the block; ``write_dataset_folder`` calls ``note_written`` for each
folder it finishes. A caller that runs a build as a step (``bias-hub reproduce``) fingerprints
what it made. Kept in the shared layer, free of heavy imports, so pipelines can use it without
reaching into a builder's internals.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from pathlib import Path

__all__ = ["folders_written", "note_written"]

_written: contextvars.ContextVar[list[Path] | None] = contextvars.ContextVar(
    "bias_hub_folders_written", default=None
)


@contextlib.contextmanager
def folders_written() -> Iterator[list[Path]]:
    """The dataset folders written inside the block (absolute, links followed), in the order
    written; the list fills as the block runs."""
    written: list[Path] = []
    token = _written.set(written)
    try:
        yield written
    finally:
        _written.reset(token)


def note_written(folder: Path) -> None:
    """Record ``folder`` (already resolved) as written, when a block is collecting."""
    written = _written.get()
    if written is not None:
        written.append(folder)
