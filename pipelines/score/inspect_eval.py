"""Inspect AI's ``.eval`` logs: zip archives whose entries Inspect compresses with Zstandard.

Python's own ``zipfile`` reads that method from 3.14 on (PEP 784); before, ``backports.zstd``'s
copy of the 3.14 module does, so ``bias-hub score --from-inspect`` reads the log Inspect wrote
as it is, with no conversion step.
"""

from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["BAD_ARCHIVE", "eval_archive"]

if sys.version_info >= (3, 14):
    import zipfile
else:
    from backports.zstd import zipfile

# What a file that is no zip archive raises.
BAD_ARCHIVE = zipfile.BadZipFile


def eval_archive(path: str | Path) -> zipfile.ZipFile:
    """The ``.eval`` log at ``path``, opened for reading."""
    return zipfile.ZipFile(path)
