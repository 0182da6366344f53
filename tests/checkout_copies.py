"""The checkout's files, and running a copy of the checkout (a clone, an edited copy) as ``bias_hub``.

The venv maps ``bias_hub`` to the original checkout (a folder holding a link ``bias_hub ->
<checkout>``, on ``sys.path`` through a .pth file); a copy's root folder is named otherwise, so
``PYTHONPATH=<copy>`` alone would still import the original. A folder holding one link,
``bias_hub -> <copy>``, put first on ``PYTHONPATH``, makes the copy's own code the one every
``python -m bias_hub`` and ``import bias_hub`` there reads (``PYTHONPATH`` comes before the
venv's own entries).
"""

from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]


def pythonpath_for(copy: Path) -> str:
    """A ``PYTHONPATH`` entry under which ``import bias_hub`` reads ``copy``."""
    holder = copy.parent / f".{copy.name}-import"
    holder.mkdir(exist_ok=True)
    link = holder / "bias_hub"
    if not link.is_symlink():
        link.symlink_to(copy.resolve(), target_is_directory=True)
    return str(holder)


_NOT_WATCHED = {
    ".git",
    "__pycache__",
    ".pytest_cache",
    ".ruff_cache",
    ".hypothesis",
    ".venv-lmeval",
}


def checkout_files(root: Path = REPO_ROOT) -> set[str]:
    """Every file under ``root`` but the venvs, git's own folder and the tools' caches."""
    found = set()
    for folder, names, files in os.walk(root):
        names[:] = [n for n in names if n not in _NOT_WATCHED and not n.startswith(".venv")]
        found.update(os.path.relpath(os.path.join(folder, f), root) for f in files)
    return found
