"""Each metric module is published alone (one Hub Space), and the helpers all modules share
live once, in ``metrics/_common/``: ``bias_hub_common.py`` (input checks, the direct compute
path) and ``bias_hub_intervals.py`` (every interval). Each module folder links to both and
imports them relatively, which ``evaluate`` resolves by copying the files beside the module.
A module's computation is its own file beside it, ``<name>_scores.py``, which imports neither
evaluate nor datasets; evaluate copies only the files the module itself imports, so the module
imports every same-folder file its computation does. A module and those files may import only
the libraries the module's requirements.txt lists."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

METRICS = Path(__file__).resolve().parents[2] / "metrics"
COMMON = METRICS / "_common" / "bias_hub_common.py"
INTERVALS = METRICS / "_common" / "bias_hub_intervals.py"
SHARED = (COMMON, INTERVALS)
MODULES = sorted(p for p in METRICS.glob("*/*.py") if p.stem == p.parent.name)
SCORES = [path.with_name(f"{path.stem}_scores.py") for path in MODULES]
DISTRIBUTIONS = {"sklearn": "scikit-learn"}


def _definitions(path: Path) -> set[str]:
    names = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name):
            names.add(node.targets[0].id)
    return names


def _imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return {name for name in names if name not in sys.stdlib_module_names}


def test_every_metric_folder_is_a_module_and_the_modules_are_found():
    # Discovered, not listed: a new module folder is checked without editing this file. Every
    # folder (but _common) must hold <name>.py, so a misnamed module is not silently skipped;
    # the eight modules of the five systems must be among those found.
    folders = sorted(
        p for p in METRICS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))
    )
    assert [p.parent for p in MODULES] == folders, "a metric folder without <folder name>.py"
    assert {
        "bbq_bias",
        "gender_attention_gap",
        "nli_gender_bias",
        "perplexity_gap",
        "rnsb",
        "speciesism_bias",
        "weat",
        "winobias_gap",
    } <= {p.stem for p in MODULES}, [p.stem for p in MODULES]


def _shared_imports(path: Path) -> set[str]:
    """The same-folder files a module imports (``from .name import``)."""
    return {
        node.module
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
    }


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_the_shared_files_it_imports_are_links_to_the_one_copy(path):
    imported = _shared_imports(path)
    assert COMMON.stem in imported
    scores = path.with_name(f"{path.stem}_scores.py")
    assert scores.stem in imported, f"{path.name} does not import its computation {scores.name}"
    assert scores.is_file() and not scores.is_symlink(), scores
    for name in imported - {scores.stem}:
        shared = METRICS / "_common" / f"{name}.py"
        link = path.parent / f"{name}.py"
        assert shared.is_file(), f"{path.name} imports .{name}, which is no file of metrics/_common"
        assert link.is_symlink(), f"{link} should link to {shared}"
        assert os.readlink(link) == f"../_common/{name}.py"
        assert link.resolve() == shared.resolve()


@pytest.mark.parametrize("path", SCORES, ids=[p.stem for p in SCORES])
def test_the_computation_imports_shared_files_the_module_imports_too(path):
    module = path.with_name(f"{path.parent.name}.py")
    imported = _shared_imports(path)
    assert imported <= {COMMON.stem, INTERVALS.stem}, imported
    assert imported <= _shared_imports(module), (
        f"{path.name} imports {sorted(imported - _shared_imports(module))}, which "
        f"{module.name} does not: evaluate would not copy them"
    )
    assert not _imports(path) & {"datasets", "evaluate"}, _imports(path)


@pytest.mark.parametrize("path", [*MODULES, *SCORES], ids=[p.stem for p in [*MODULES, *SCORES]])
def test_no_module_redefines_a_shared_helper(path):
    for shared in SHARED:
        redefined = _definitions(path) & _definitions(shared)
        assert not redefined, (
            f"{path.name} redefines {sorted(redefined)}; import them from .{shared.stem}"
        )


def test_the_shared_files_define_no_name_twice():
    assert not _definitions(COMMON) & _definitions(INTERVALS)


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_module_imports_only_what_its_requirements_list(path):
    scores = path.with_name(f"{path.stem}_scores.py")
    imports = _imports(path) | _imports(scores) | _imports(COMMON) | _imports(INTERVALS)
    assert not imports & {"bias_hub", "builders", "pipelines", "bench", "tests"}
    assert imports <= {"datasets", "evaluate", "numpy", "scipy", "sklearn"}, imports
    listed = {
        line.split(";")[0].split("<")[0].split(">")[0].split("=")[0].split("~")[0].strip().lower()
        for line in (path.parent / "requirements.txt").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    }
    assert {DISTRIBUTIONS.get(name, name) for name in imports} <= listed, (imports, listed)


@pytest.mark.parametrize(
    "path",
    [*MODULES, *SCORES, *SHARED],
    ids=[*(p.stem for p in [*MODULES, *SCORES]), "common", "intervals"],
)
def test_one_import_per_line(path):
    # evaluate's dependency check reads "import a, b" as one module named "a, b", and finds a
    # same-folder import only on an unindented "from .name import" line.
    lines = path.read_text(encoding="utf-8").splitlines()
    for line in lines:
        if line.startswith("import "):
            assert "," not in line, line
    if path not in SHARED:
        assert any(line.startswith("from .bias_hub_common import ") for line in lines)
