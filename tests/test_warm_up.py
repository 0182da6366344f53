"""`make setup-dev`'s bytecode warm-up imports what the code imports from outside, read from the
code: no list to keep in step with the dependencies."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from warm_up import outside_imports, warm


def test_the_warm_up_finds_the_outside_imports_and_leaves_ours_and_the_standard_library(
    tmp_path: Path,
) -> None:
    files = {
        "pipelines/part/run.py": "import json\nimport torch\nfrom . import report\n"
        "from bias_hub.pipelines.common import RunFolder\n"
        "def load():\n    from transformers import (\n        AutoModel,\n        BertForMaskedLM,\n    )\n",
        "metrics/weat/weat.py": "import numpy as np\nfrom .bias_hub_common import DirectCompute\n",
        "tests/helpers.py": "import pytest\n",
        "tests/pipelines/test_part.py": "from helpers import thing\nimport yaml.constructor\n",
        "bench/speed.py": "from _harness import compare\nimport os.path\n",
        "bench/_harness.py": "",
        "datasets/x/notes.py": "import never_read\n",  # not a folder of code
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    assert outside_imports(tmp_path) == {
        ("torch", None),
        ("transformers", "AutoModel"),
        ("transformers", "BertForMaskedLM"),  # transformers loads it on first access
        ("numpy", None),
        ("pytest", None),
        ("yaml.constructor", None),
    }


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
