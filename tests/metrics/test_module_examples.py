"""Every metric module's `_KWARGS_DESCRIPTION` example is executed, and every card has the
sections CONTRIBUTING.md names ("Metric modules": the module canon and "The module card")."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from bias_hub.pipelines.common import import_metric_module

REPO_ROOT = Path(__file__).resolve().parents[2]
MODULES = sorted(p for p in (REPO_ROOT / "metrics").glob("*/*.py") if p.stem == p.parent.name)
# The sections of a module card (evaluate's canon), as CONTRIBUTING.md names them.
CARD_SECTIONS = (
    "Metric Description",
    "How to Use",
    "Inputs",
    "Output Values",
    "Examples",
    "Limitations and Bias",
    "Citation",
)


def _load(path: Path):
    return import_metric_module(path.parent)


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_kwargs_description_example_runs(path: Path, repo_root: Path) -> None:
    module = _load(path)
    text = module._KWARGS_DESCRIPTION
    parser = doctest.DocTestParser()
    test = parser.get_doctest(text, {}, f"{path.stem}._KWARGS_DESCRIPTION", str(path), 0)
    assert test.examples, f"{path} has no runnable example in _KWARGS_DESCRIPTION"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} example(s) failed in {path}"


@pytest.mark.parametrize("path", MODULES, ids=[p.stem for p in MODULES])
def test_module_has_card_with_standard_sections(path: Path) -> None:
    card = (path.parent / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n"), f"{path.parent}/README.md has no YAML header"
    for section in CARD_SECTIONS:
        assert f"## {section}" in card, f"{path.parent}/README.md lacks the section {section!r}"
