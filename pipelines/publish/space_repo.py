"""Metric modules (``metrics/<name>/``) as Hub Spaces, the way ``evaluate`` publishes them:
the module file, its card with the Space fields, an ``app.py`` that launches the module's widget
and a ``requirements.txt`` from the module's own imports. Once pushed,
``evaluate.load("<namespace>/<name>")`` finds ``<name>.py`` at the Space root.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bias_hub.pipelines.publish.plan import PlannedFile, RepoPlan

if TYPE_CHECKING:
    from huggingface_hub import SpaceCard

__all__ = [
    "CheckedMetric",
    "app_source",
    "check_metric_module",
    "discover_metric_modules",
    "plan_metric",
    "requirements",
    "space_card",
]

# `launch_gradio_widget` builds its form with `gr.inputs`, which gradio 4 removed:
# the widget needs a gradio 3 Space. 3.50.2 is the last 3.x; its wheel declares
# `numpy~=1.0`, so the Space's requirements keep numpy below 2 (the widget code
# in evaluate imports numpy itself). The pin is the project's: a module card cannot
# change it (space_card).
GRADIO_SDK_VERSION = "3.50.2"
NUMPY_FOR_GRADIO_3 = "numpy<2"
SECTIONS = (
    "Metric Description",
    "How to Use",
    "Inputs",
    "Output Values",
    "Examples",
    "Limitations and Bias",
    "Citation",
)
# Import names whose PyPI distribution is named differently.
DISTRIBUTIONS = {"sklearn": "scikit-learn", "yaml": "pyyaml", "PIL": "pillow"}
MODULE_TYPES = {"Metric": "metric", "Measurement": "measurement", "Comparison": "comparison"}


@dataclass
class CheckedMetric:
    folder: Path
    card: SpaceCard | None = None
    yaml_header: dict = field(default_factory=dict)
    imports: list[str] = field(default_factory=list)
    # Same-folder files the module imports (``from .x import``), which evaluate copies beside it.
    local_files: list[Path] = field(default_factory=list)
    module_type: str = "metric"
    problems: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def module_file(self) -> Path:
        return self.folder / f"{self.folder.name}.py"


def discover_metric_modules(root: Path) -> list[Path]:
    """Every folder under ``root`` that holds a ``<name>/<name>.py`` module."""
    if not root.is_dir():
        return []
    return sorted(
        p
        for p in root.iterdir()
        if p.is_dir() and not p.name.startswith((".", "_")) and (p / f"{p.name}.py").is_file()
    )


def _top_level_imports(tree: ast.Module) -> list[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return sorted(n for n in names if n not in sys.stdlib_module_names and n != "__future__")


def _local_imports(tree: ast.Module) -> list[str]:
    return sorted(
        {
            node.module
            for node in tree.body
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module
        }
    )


def _module_type(tree: ast.Module) -> str | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for base in node.bases:  # `evaluate.Metric` or `Metric`
                base_name = ast.unparse(base).rsplit(".", 1)[-1]
                if base_name in MODULE_TYPES:
                    return MODULE_TYPES[base_name]
    return None


def check_metric_module(folder: Path) -> CheckedMetric:
    """Offline checks of one module folder: the module parses, the card has its header and sections."""
    checked = CheckedMetric(folder=folder)
    problems = checked.problems
    try:
        tree = ast.parse(
            checked.module_file.read_text(encoding="utf-8"), filename=str(checked.module_file)
        )
    except SyntaxError as err:
        problems.append(f"{checked.module_file}: does not parse ({err})")
        tree = None
    if tree is not None:
        imports = set(_top_level_imports(tree))
        for name in _local_imports(tree):
            local = folder / f"{name}.py"
            if not local.is_file():
                problems.append(f"{checked.module_file}: imports .{name}, but {local} is missing")
                continue
            checked.local_files.append(local)
            imports.update(
                _top_level_imports(
                    ast.parse(local.read_text(encoding="utf-8"), filename=str(local))
                )
            )
        checked.imports = sorted(imports)
        module_type = _module_type(tree)
        if module_type is None:
            problems.append(
                f"{checked.module_file}: no class derived from evaluate.Metric, Measurement or Comparison"
            )
        else:
            checked.module_type = module_type
    readme = folder / "README.md"
    if not readme.is_file():
        problems.append(f"{folder}: no README.md card")
        return checked
    from huggingface_hub import SpaceCard

    try:
        checked.card = SpaceCard.load(readme)  # a Path: a str that is no file means a Hub repo id
    except Exception as err:  # yaml and huggingface_hub raise their own types
        problems.append(f"{readme}: the YAML header does not parse: {err}")
        return checked
    checked.yaml_header = checked.card.data.to_dict()
    if not checked.yaml_header:
        problems.append(f"{readme}: no YAML header")
    for section in SECTIONS:
        if f"## {section}" not in checked.card.text:
            problems.append(f"{readme}: lacks the section '## {section}'")
    for key, wanted in (("sdk", "gradio"), ("app_file", "app.py")):
        if key in checked.yaml_header and checked.yaml_header[key] != wanted:
            problems.append(
                f"{readme}: `{key}: {checked.yaml_header[key]}` but a module Space needs {wanted!r}"
            )
    return checked


def _description(checked: CheckedMetric) -> str:
    """The card's first paragraph under '## Metric Description', for the Space's short description."""
    rest = checked.card.text.partition("## Metric Description")[2] if checked.card else ""
    for paragraph in rest.strip().split("\n\n"):
        if paragraph.strip() and not paragraph.startswith("#"):
            return " ".join(paragraph.split())[:300]
    return f"The {checked.name} {checked.module_type}."


def space_card(checked: CheckedMetric) -> bytes:
    """The module card with the Space fields the Hub needs.

    The card's own values win for its presentation (title, emoji, colours, description,
    tags after ``evaluate`` and the module type); the project's values win for what the
    Space runs on (``sdk``, ``sdk_version``, ``app_file``): ``launch_gradio_widget`` works
    only on the pinned gradio.
    """
    from huggingface_hub import SpaceCard, SpaceCardData

    if checked.card is None:
        raise ValueError(f"{checked.folder}: no README.md card to publish")
    defaults = {
        "title": checked.name.replace("_", " ").title(),
        "emoji": "🤗",
        "colorFrom": "blue",
        "colorTo": "red",
        "pinned": False,
        "description": _description(checked),
    }
    runtime = {"sdk": "gradio", "sdk_version": GRADIO_SDK_VERSION, "app_file": "app.py"}
    header = {**defaults, **checked.yaml_header, **runtime}
    tags = [t for t in header.get("tags") or [] if t not in ("evaluate", checked.module_type)]
    header["tags"] = ["evaluate", checked.module_type, *tags]
    card = SpaceCard(checked.card.content)  # a copy: the checked card stays as read
    card.data = SpaceCardData(**header)
    return str(card).encode()


def app_source(repo_id: str) -> bytes:
    return (
        "import evaluate\n"
        "from evaluate.utils import launch_gradio_widget\n"
        "\n"
        f'module = evaluate.load("{repo_id}")\n'
        "launch_gradio_widget(module)\n"
    ).encode()


def requirements(checked: CheckedMetric) -> bytes:
    from importlib.metadata import version

    wanted = {f"evaluate=={version('evaluate')}", NUMPY_FOR_GRADIO_3}
    for name in checked.imports:
        if name not in ("evaluate", "numpy"):
            wanted.add(DISTRIBUTIONS.get(name, name))
    return ("\n".join(sorted(wanted)) + "\n").encode()


def plan_metric(checked: CheckedMetric, namespace: str, private: bool) -> RepoPlan:
    repo_id = f"{namespace}/{checked.name}"
    plan = RepoPlan(
        name=checked.name,
        kind="metric",
        repo_id=repo_id,
        repo_type="space",
        private=private,
        space_sdk="gradio",
        problems=list(checked.problems),
    )
    plan.files.append(PlannedFile(checked.module_file.name, source=checked.module_file))
    for local in checked.local_files:  # a link in the checkout; the file itself on the Hub
        plan.files.append(PlannedFile(local.name, content=local.read_bytes()))
    if (checked.folder / "README.md").is_file() and not checked.problems:
        plan.files.append(PlannedFile("README.md", content=space_card(checked)))
    plan.files.append(PlannedFile("app.py", content=app_source(repo_id)))
    plan.files.append(PlannedFile("requirements.txt", content=requirements(checked)))
    return plan
