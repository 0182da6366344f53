"""The project's import graph: no two modules import each other in a circle, and the layers
hold (CONTRIBUTING.md, "Data flows one way"): builders never import pipelines; the shared lower layer
(builders/shared) imports nothing else of the project; a pipeline takes from builders only
the shared layer and a builder's ``build`` entry point (the CLI adapter also finds the builder
command modules)."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("builders", "pipelines")


def _module_name(path: Path) -> str:
    """The installed name: the checkout's root folder is the ``bias_hub`` package (setup.py)."""
    parts = ["bias_hub", *path.relative_to(ROOT).with_suffix("").parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {
        _module_name(p): p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py"))
    }


def _imports(path: Path, name: str, known: set[str]) -> list[tuple[str, list[str], int]]:
    """(imported module, imported names, line) for every project import anywhere in the file."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, [], node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".") if is_package else name.split(".")[:-1]
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            names = [alias.name for alias in node.names]
            submodules = [f"{base}.{n}" for n in names if f"{base}.{n}" in known]
            found += [(m, [], node.lineno) for m in submodules]
            rest = [n for n in names if f"{base}.{n}" not in known]
            if rest or not submodules:
                found.append((base, rest, node.lineno))
    return [(m, n, line) for m, n, line in found if m in known]


@functools.cache  # read once per run: every test below only reads it
def _graph() -> dict[str, list[tuple[str, list[str], int]]]:
    modules = _modules()
    known = set(modules)
    return {name: _imports(path, name, known) for name, path in modules.items()}


def _cycles(graph: dict[str, list]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, result = {}, {}, [], set(), []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w, _, _ in graph.get(v, []):
            if w == v:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                result.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return result


def test_the_graph_is_read():
    graph = _graph()
    assert "bias_hub.pipelines.cli" in graph and "bias_hub.builders.shared.files" in graph
    # bias_hub.pipelines.common.run_folder imports bias_hub.builders.shared.files: the reader resolves it.
    assert any(
        m == "bias_hub.builders.shared.files"
        for m, _, _ in graph["bias_hub.pipelines.common.run_folder"]
    )


def test_a_circle_is_found():
    graph = {"a": [("b", [], 1)], "b": [("c", [], 1)], "c": [("a", [], 1)], "d": [("a", [], 1)]}
    assert _cycles(graph) == [["a", "b", "c"]]


def test_no_import_circles():
    cycles = _cycles(_graph())
    assert not cycles, "modules that import each other in a circle: " + "; ".join(
        " <-> ".join(c) for c in cycles
    )


@pytest.mark.parametrize("layer", ["builders"])
def test_builders_never_import_pipelines(layer):
    bad = [
        f"{name}:{line} imports {module}"
        for name, edges in _graph().items()
        if name.startswith(f"bias_hub.{layer}")
        for module, _, line in edges
        if module.startswith("bias_hub.pipelines")
    ]
    assert not bad, bad


def test_the_shared_layer_imports_only_itself():
    bad = [
        f"{name}:{line} imports {module}"
        for name, edges in _graph().items()
        if name.startswith("bias_hub.builders.shared")
        for module, _, line in edges
        if not module.startswith("bias_hub.builders.shared")
    ]
    assert not bad, bad


def test_pipelines_take_from_builders_only_the_shared_layer_and_build():
    bad = []
    for name, edges in _graph().items():
        if not name.startswith("bias_hub.pipelines") or name == "bias_hub.pipelines.cli":
            continue
        for module, names, line in edges:
            if (
                not module.startswith("bias_hub.builders")
                or module.startswith("bias_hub.builders.shared")
                or module == "bias_hub.builders"
            ):
                continue
            if module.count(".") == 2 and names and set(names) <= {"build"}:
                continue
            bad.append(f"{name}:{line} imports {module} ({', '.join(names) or 'module'})")
    assert not bad, "pipelines reaching into builder internals:\n" + "\n".join(bad)


def test_the_interval_flags_and_presets_are_declared_once():
    """`--confidence-level`/`--n-resamples` live in pipelines/common/arguments.py alone, and
    no part keeps a presets table of its own (presets are study data, read by one loader)."""
    declared, tables = [], []
    for path in sorted((ROOT / "pipelines").rglob("*.py")) + sorted(
        (ROOT / "builders").rglob("*.py")
    ):
        text = path.read_text(encoding="utf-8")
        if '"--confidence-level"' in text or '"--n-resamples"' in text:
            declared.append(path.relative_to(ROOT).as_posix())
        for node in ast.parse(text).body:
            if isinstance(node, ast.Assign) and any(
                getattr(t, "id", "") == "PRESETS" for t in node.targets
            ):
                tables.append(path.relative_to(ROOT).as_posix())
    assert declared == ["pipelines/common/arguments.py"], declared
    assert not tables, tables


def test_no_metric_compute_is_longer_than_60_lines():
    long = []
    for path in sorted((ROOT / "metrics").glob("*/*.py")):
        if path.is_symlink():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.FunctionDef)
                and node.name == "_compute"
                and node.end_lineno - node.lineno + 1 > 60
            ):
                long.append(f"{path.name}: {node.end_lineno - node.lineno + 1} lines")
    assert not long, long
