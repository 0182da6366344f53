"""Compile, once, the bytecode of the outside modules the project imports (``make setup-dev``).

Python saves the bytecode of what a run imports unless PYTHONDONTWRITEBYTECODE is set. Where it
is set, each test worker would compile torch, transformers and the rest anew (~23 s of CPU
each on the project's machine); setup runs this file once with bytecode writing on instead.
What it imports is read from the code itself: every ``import a.b`` and ``from a.b import c``
of the package, its tests and benches, the standard library and the project's own modules left
out. A new dependency or model class needs no list of its own.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("builders", "pipelines", "metrics", "tests", "bench")


def outside_imports(root: Path = ROOT) -> set[tuple[str, str | None]]:
    """(module, name imported from it or None) for every absolute import of an outside module."""
    ours = {"bias_hub", "bench"} | {
        p.stem for f in ("tests", "bench") for p in (root / f).rglob("*.py")
    }
    found = set()
    for folder in FOLDERS:
        for path in (root / folder).rglob("*.py"):
            if any(part.startswith(".") for part in path.relative_to(root).parts):
                continue  # bench/.venv-*: the peers' own environments, not the project's code
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    found |= {(alias.name, None) for alias in node.names}
                elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                    found |= {(node.module, alias.name) for alias in node.names}
    return {
        (module, name)
        for module, name in found
        if module.split(".")[0] not in ours | set(sys.stdlib_module_names)
    }


def warm(module: str, name: str | None) -> None:
    """Import ``module`` and, from it, ``name``: an attribute (transformers loads its model
    classes lazily, on first access) or a submodule."""
    loaded = importlib.import_module(module)
    if name and not hasattr(loaded, name):
        importlib.import_module(f"{module}.{name}")


if __name__ == "__main__":
    for module, name in sorted(outside_imports(), key=lambda pair: (pair[0], pair[1] or "")):
        try:
            warm(module, name)
        except (
            Exception
        ):  # not installed here (a peer, an optional package): compiled when first used, if ever
            continue
