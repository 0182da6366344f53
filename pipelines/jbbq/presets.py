"""Named, versioned experiment settings (``pipelines/jbbq/presets/<name>.yaml``), as data.

A preset fixes the task settings of one of the paper's experiments (prompts, few-shot
counts, scoring, chat template, split, reply length). ``jbbq evaluate --preset NAME``
starts from it; every flag given explicitly wins over the preset's value. The settings
that no preset names fall back to ``TASK_DEFAULTS``, which are also what ``--preset none``
runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import yaml

__all__ = ["PRESET_DIR", "PRESET_NAMES", "TASK_DEFAULTS", "Preset", "load_preset", "resolve_task"]

PRESET_DIR = Path(__file__).resolve().parent / "presets"
PRESET_NAMES = ("paper", "table4")
# The task settings a preset may fix, and their values without one.
TASK_DEFAULTS: dict[str, object] = {
    "prompts": ["basic", "unknown", "paraphrase"],
    "shots": [0],
    "scoring": "loglikelihood",
    "chat": "auto",
    "split": "test",
    "max_new_tokens": 8,
}
_TYPES = {
    "prompts": "a list of prompt names or .yaml paths",
    "shots": "a list of integers >= 0",
    "scoring": "a string",
    "chat": "a string",
    "split": "a string",
    "max_new_tokens": "an integer >= 1",
}


@dataclass(frozen=True)
class Preset:
    name: str
    version: str
    description: str = ""
    source: str = ""
    settings: dict = field(default_factory=dict)
    path: str = ""


def _valid(key: str, value: object) -> bool:
    if key == "prompts":
        return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v for v in value)
    if key == "shots":
        return (isinstance(value, list) and bool(value)
                and all(isinstance(v, int) and not isinstance(v, bool) and v >= 0 for v in value))  # fmt: skip
    if key == "max_new_tokens":
        return isinstance(value, int) and not isinstance(value, bool) and value >= 1
    return isinstance(value, str) and bool(value)


def _resolve_path(name_or_path: str | Path) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml"):
        if not candidate.is_file():
            raise FileNotFoundError(f"--preset: preset file {str(candidate)!r} does not exist")
        return candidate
    builtin = PRESET_DIR / f"{name_or_path}.yaml"
    if not builtin.is_file():
        raise ValueError(
            f"--preset: unknown preset {str(name_or_path)!r}; expected one of {', '.join(PRESET_NAMES)}, "
            "none, or the path of a preset .yaml file"
        )
    return builtin


def load_preset(name_or_path: str | Path) -> Preset:
    """Read and check one preset (a built-in name or a path)."""
    path = _resolve_path(name_or_path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ValueError(f"preset file {path}: not valid YAML ({err})") from err
    if not isinstance(data, dict):
        raise ValueError(f"preset file {path}: expected a mapping of fields, got {type(data).__name__}")
    for key in ("name", "version", "settings"):
        if data.get(key) in (None, ""):
            raise ValueError(f"preset file {path}: missing field {key!r}")
    settings = data["settings"]
    if not isinstance(settings, dict):
        raise ValueError(f"preset file {path}: field 'settings' must be a mapping, got {type(settings).__name__}")
    for key, value in settings.items():
        if key not in TASK_DEFAULTS:
            raise ValueError(
                f"preset file {path}: settings.{key} is not a task setting; expected some of {', '.join(TASK_DEFAULTS)}"
            )
        if not _valid(key, value):
            raise ValueError(f"preset file {path}: settings.{key} must be {_TYPES[key]}, got {value!r}")
    return Preset(
        name=str(data["name"]), version=str(data["version"]), description=str(data.get("description", "")),
        source=str(data.get("source", "")), settings=dict(settings), path=str(path),
    )  # fmt: skip


def resolve_task(preset: Preset | None, explicit: Mapping[str, object]) -> tuple[dict, dict]:
    """The task settings in force: ``TASK_DEFAULTS``, then the preset's, then ``explicit``
    (the values given, ``None`` meaning not given). Returns ``(values, overridden)`` where
    ``overridden`` maps each preset value an explicit one replaced to ``{"preset", "used"}``."""
    base = {**TASK_DEFAULTS, **(preset.settings if preset else {})}
    values = dict(base)
    overridden = {}
    for key, value in explicit.items():
        if value is None:
            continue
        values[key] = value
        if preset is not None and key in preset.settings and preset.settings[key] != value:
            overridden[key] = {"preset": preset.settings[key], "used": value}
    return values, overridden
