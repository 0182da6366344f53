"""A module written into an exported folder with bias-hub's own code inlined, so the folder needs
nothing of bias-hub installed (lm-eval imports a task's ``utils.py`` from its file alone)."""

from __future__ import annotations

import inspect
import re
from types import ModuleType

__all__ = ["MARKER", "inline_module"]

# The import line a module marks for inlining ends with this comment.
MARKER = "# bias-hub export: inline"
_IMPORT = re.compile(
    rf"^from (bias_hub(?:\.\w+)+) import "
    rf"(?:\([^)]*\)[ \t]*{re.escape(MARKER)}|\(\s*{re.escape(MARKER)}\n[^)]*\)|[^\n(]*{re.escape(MARKER)})\n",
    re.M,
)


def _body(module: ModuleType) -> str:
    """A module's code without its docstring, future import and ``__all__``."""
    source = inspect.getsource(module)
    body = source.split('"""', 2)[2] if source.lstrip().startswith('"""') else source
    body = body.replace("from __future__ import annotations\n", "")
    return re.sub(r"^__all__ = \[.*?\]\n", "", body, flags=re.S | re.M).strip()


def inline_module(module: ModuleType) -> str:
    """``module``'s source with each marked ``from bias_hub... import ...`` line replaced by the
    code of the module it imports (a comment names where it came from)."""
    import importlib

    text = inspect.getsource(module)
    if not _IMPORT.search(text):
        raise RuntimeError(f"{module.__name__} has no import marked '{MARKER}'")
    return _IMPORT.sub(
        lambda match: (
            f"# Inlined from {match.group(1)} (bias-hub): one reader for every path.\n"
            + _body(importlib.import_module(match.group(1)))
            + "\n"
        ),
        text,
    )
