"""`make setup-dev`'s bytecode warm-up imports what the code imports from outside, read from the
code: no list to keep in step with the dependencies."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from warm_up import outside_imports, warm


def test_the_warm_up_finds_the_outside_imports_and_leaves_ours_and_the_standard_library() -> None:
    found = outside_imports()
    # torch is imported bare; transformers' model classes by name (loaded lazily on access).
    assert {("torch", None), ("transformers", "BertForMaskedLM"), ("yaml", None)} <= found
    tops = {module.split(".")[0] for module, _ in found}
    assert not tops & {"bias_hub", "bench", "json", "os", "__future__"}, tops
    assert not tops & {"checkout_copies", "jbbq_fixtures", "_harness", "warm_up"}, tops


def test_warm_imports_an_attribute_or_a_submodule(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "warm_package"
    package.mkdir()
    (package / "__init__.py").write_text("value = 1\n", encoding="utf-8")
    (package / "sub.py").write_text("", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    warm("warm_package", "value")  # an attribute: no submodule of that name is looked for
    assert "warm_package" in sys.modules and "warm_package.value" not in sys.modules
    warm("warm_package", "sub")  # a submodule, which is no attribute until imported
    assert "warm_package.sub" in sys.modules
    with pytest.raises(ModuleNotFoundError):
        warm("warm_package", "absent")
    for name in ("warm_package", "warm_package.sub"):
        monkeypatch.delitem(sys.modules, name)
