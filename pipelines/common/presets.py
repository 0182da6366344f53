"""Presets: a study's settings for one command, read from its versioned study file.

Each paper is a study, ``pipelines/studies/<study>.yaml``. Its ``presets`` mapping names, per
preset, the command it is for and the settings the paper states, each with the section that
states it::

    presets:
      paper:
        command: jbbq evaluate
        description: Figure 1 - 4-shot, generated answers, the three prompts
        models: [llm-jp/llm-jp-13b-instruct-full-jaster-dolly-oasst-v1.0]   # optional
        settings:
          shots: {value: [4], section: "§5.1"}
          chat: {value: "no", assumed: "the harness §5.1 names gives the prompt as text"}
          max_new_tokens: {value: 8, ours: "the paper gives no reply length; one index fits"}
          scoring: generate                      # a bare value: no basis given (user files only)

Each setting rests on exactly one of ``section`` (where the paper states it), ``assumed`` (our
reading of what the paper did, with the reason) or ``ours`` (this project's choice, with the
reason); ``ours: REASON`` beside ``settings`` covers every setting without a basis of its own.

``apply_preset``: a setting the command line does not give takes the preset's value; one given
explicitly wins, and where it differs it is a departure ``{"setting", "preset", "used",
"section"}`` that results.json (``preset_record``) and report.md show. So is every
``SUBSET_FIELDS`` setting off its default that the preset does not set, and every stand-in the
run read (``{"setting": "stand-in", "used": what}``). A preset may also be a YAML file shaped
as one entry (``command``, ``settings``, optional ``name``).
"""

from __future__ import annotations

import copy
import dataclasses
import functools
from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.files import read_text

__all__ = [
    "BASIS_KINDS",
    "SUBSET_FIELDS",
    "Preset",
    "STUDIES_DIR",
    "YAMLRefused",
    "apply_preset",
    "basis_markdown",
    "basis_record",
    "departures_from",
    "load_preset",
    "preset_names",
    "preset_record",
    "safe_yaml",
    "study_files",
]

STUDIES_DIR = Path(__file__).resolve().parents[1] / "studies"
# What a setting rests on: the paper's text, our reading of it, or our own choice.
BASIS_KINDS = ("section", "assumed", "ours")
# Settings that decide how much of the work runs: any value but the default is a departure.
SUBSET_FIELDS = tuple("limit categories max_pairs max_train_samples eval_per_subset seeds".split())


@dataclass(frozen=True)
class Preset:
    """One preset: ``values`` maps a settings field to its value, ``sections`` to where the
    paper states it (None where it does not), ``basis`` to ``(kind, text)`` with ``kind`` one
    of ``BASIS_KINDS`` (None where the preset gives none)."""

    name: str
    command: str
    source: str
    values: dict[str, Any]
    sections: dict[str, str | None] = field(default_factory=dict)
    models: tuple[str, ...] = ()
    description: str = ""
    basis: dict[str, tuple[str, str] | None] = field(default_factory=dict)


def study_files() -> list[Path]:
    return sorted(STUDIES_DIR.glob("*.yaml"))


# Levels of nesting a study file or a --set value may hold: far beyond any study's few.
_DEEPEST = 100


@functools.cache
def _no_alias_loader() -> type:
    import yaml  # loaded on use: importing the presets stays cheap

    class Refusal(yaml.YAMLError):
        """YAML that parses but that a study file may not hold."""

    class NoAliases(yaml.SafeLoader):
        """The safe loader, refusing every alias (``*name``) before it is expanded, nesting
        deeper than ``_DEEPEST`` (which would exhaust Python's recursion) and a key given twice
        in one mapping (which YAML loaders let the last one win, silently)."""

        depth = 0
        refusal = Refusal

        def compose_node(self, parent, index):
            event = self.peek_event()
            if self.check_event(yaml.AliasEvent):
                raise Refusal(
                    f"line {event.start_mark.line + 1}: the alias *{event.anchor} "
                    "(aliases are not allowed: write the value out)"
                )
            if self.depth >= _DEEPEST:
                raise Refusal(
                    f"line {event.start_mark.line + 1}: nested more than {_DEEPEST} levels deep"
                )
            self.depth += 1
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

        def construct_mapping(self, node, deep=False):
            seen: dict = {}
            for key_node, _ in node.value:
                key = self.construct_object(key_node, deep=True)
                if isinstance(key, Hashable) and key in seen:
                    raise Refusal(
                        f"line {key_node.start_mark.line + 1}: the key {key!r} is given twice in "
                        f"one mapping (first on line {seen[key]}); keep one"
                    )
                if isinstance(key, Hashable):
                    seen[key] = key_node.start_mark.line + 1
            return super().construct_mapping(node, deep)

    return NoAliases


class YAMLRefused(ValueError):
    """YAML that parses but holds what plain data may not: an alias, a key twice, deep nesting."""


def safe_yaml(text: str, where: str) -> Any:
    """``text`` read as plain YAML data: no alias (a few lines could expand into gigabytes), no
    key twice in one mapping (the last would win, silently), no nesting deeper than 100 levels
    (``YAMLRefused``). Raises ``ValueError`` naming ``where``, on one line."""
    import yaml

    loader = _no_alias_loader()
    try:
        # A SafeLoader subclass: plain data only, as yaml.safe_load, and no aliases.
        return yaml.load(text, Loader=loader)
    except loader.refusal as err:
        raise YAMLRefused(f"{where}: {err}") from None
    except yaml.YAMLError as err:
        raise ValueError(f"{where}: not valid YAML ({' '.join(str(err).split())})") from None


def _read_yaml(path: Path) -> dict:
    # A command reads the study files from several places (its preset, the preset names, the
    # record of its settings): each text is parsed once in a process, each caller gets a copy.
    return copy.deepcopy(_mapping(read_text(path), str(path)))


@functools.lru_cache(maxsize=32)
def _mapping(text: str, where: str) -> dict:
    data = safe_yaml(text, where)
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected a mapping at the top, got {type(data).__name__}")
    return data


def _preset_from(entry: Any, name: str, source: str) -> Preset:
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        raise ValueError(
            f"{source}: preset {name!r} needs 'command' (such as 'jbbq evaluate') and 'settings'"
        )
    settings = entry.get("settings") or {}
    if not isinstance(settings, dict):
        raise ValueError(f"{source}: preset {name!r}: 'settings' must map setting names to values")
    values, sections, basis = {}, {}, {}
    shared = entry.get("ours")
    for key, value in settings.items():
        if isinstance(value, dict) and "value" in value:
            values[key] = value["value"]
            basis[key] = _basis(value, f"{source}: preset {name!r}, setting {key!r}")
        else:
            values[key], basis[key] = value, None
        if basis[key] is None and shared:
            basis[key] = ("ours", str(shared))
        sections[key] = basis[key][1] if basis[key] and basis[key][0] == "section" else None
    models = entry.get("models") or ()
    if isinstance(models, str) or not all(isinstance(m, str) for m in models):
        raise ValueError(f"{source}: preset {name!r}: 'models' must be a list of model ids")
    return Preset(
        name=name,
        command=entry["command"],
        source=source,
        values=values,
        sections=sections,
        models=tuple(models),
        description=str(entry.get("description", "")),
        basis=basis,
    )


def _basis(entry: dict, where: str) -> tuple[str, str] | None:
    unknown = sorted(set(entry) - {"value", *BASIS_KINDS})
    if unknown:
        raise ValueError(
            f"{where}: unknown keys {unknown} (expected 'value' and one of {', '.join(BASIS_KINDS)})"
        )
    given = [kind for kind in BASIS_KINDS if kind in entry]
    if len(given) > 1:
        raise ValueError(f"{where}: give one of {', '.join(BASIS_KINDS)}, not {given}")
    if not given:
        return None
    text = str(entry[given[0]] or "").strip()
    if not text:
        raise ValueError(f"{where}: '{given[0]}' needs its text (the section, or the reason)")
    return given[0], text


def _study_presets() -> list[Preset]:
    presets = []
    for path in study_files():
        data = _read_yaml(path)
        version = data.get("version", "?")
        for name, entry in (data.get("presets") or {}).items():
            presets.append(_preset_from(entry, name, f"{path.stem} v{version}"))
    return presets


def preset_names(command: str) -> list[str]:
    """The built-in presets for a command, sorted."""
    return sorted(p.name for p in _study_presets() if p.command == command)


def load_preset(command: str, name_or_path: str) -> Preset:
    """The built-in preset ``name_or_path`` for ``command``, or a preset YAML file."""
    path = Path(name_or_path)
    if path.suffix in {".yaml", ".yml"} or path.is_file():
        if not path.is_file():
            raise FileNotFoundError(f"--preset {name_or_path}: no such file")
        data = _read_yaml(path)
        preset = _preset_from(data, str(data.get("name", path.stem)), str(path))
        if preset.command != command:
            raise ValueError(
                f"--preset {name_or_path}: it is for `{preset.command}`, not `{command}`"
            )
        return preset
    found = [p for p in _study_presets() if p.command == command and p.name == name_or_path]
    if not found:
        known = ", ".join(preset_names(command)) or "none"
        raise ValueError(
            f"--preset {name_or_path!r}: no such preset for `{command}` (known: {known}), "
            "and no such YAML file"
        )
    if len(found) > 1:
        raise ValueError(
            f"--preset {name_or_path!r}: declared by several studies ({', '.join(p.source for p in found)})"
        )
    return found[0]


def _plain(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, Path):
        return str(value)
    return value


def departures_from(settings: Any, preset: Preset | None) -> list[dict]:
    """Every value in force in ``settings`` that differs from ``preset``'s (with the section that
    states it), then every ``SUBSET_FIELDS`` setting the preset does not set whose value is not
    its default (the default None read as ``"all"``)."""
    values = preset.values if preset is not None else {}
    found = [
        {
            "setting": key,
            "preset": _plain(value),
            "used": _plain(getattr(settings, key)),
            "section": preset.sections.get(key),
        }
        for key, value in values.items()
        if _plain(getattr(settings, key)) != _plain(value)
    ]
    for item in dataclasses.fields(settings):
        if item.name not in SUBSET_FIELDS or item.name in values:
            continue
        default = (
            item.default if item.default_factory is dataclasses.MISSING else item.default_factory()
        )
        used = _plain(getattr(settings, item.name))
        if used != _plain(default):
            shown = "all" if default is None else _plain(default)
            found.append({"setting": item.name, "preset": shown, "used": used, "section": None})
    return found


def apply_preset(settings: Any, preset: Preset, explicit: set[str] | frozenset[str]) -> Any:
    """``settings`` with the preset's values for every field not in ``explicit``; every value
    in force that differs from the preset then, and every subset of the work, is a departure
    (``departures_from``). Unknown setting names are an error naming the preset's source."""
    fields = {f.name: f for f in dataclasses.fields(settings)}
    unknown = sorted(set(preset.values) - set(fields))
    if unknown:
        raise ValueError(
            f"preset {preset.name!r} ({preset.source}) names settings that `{preset.command}` "
            f"does not have: {', '.join(unknown)}"
        )
    changes = {}
    for key, value in preset.values.items():
        if key not in explicit:
            current = getattr(settings, key)
            changes[key] = (
                tuple(value) if isinstance(current, tuple) and isinstance(value, list) else value
            )
    try:
        applied = dataclasses.replace(settings, **changes, preset=preset.name)
    except (TypeError, ValueError) as err:  # a value the settings class refuses: say whose
        raise ValueError(f"preset {preset.name!r} ({preset.source}): {err}") from None
    return dataclasses.replace(applied, departures=departures_from(applied, preset))


def preset_record(settings: Any, inputs: dict | None = None) -> dict | None:
    """What results.json records: ``{"name", "departures"}``: the preset's departures (or,
    without a preset, the subsets of the work) and a ``stand-in`` entry for each stand-in of
    the ``inputs`` record (``provenance.stand_ins``); None without a preset or a departure."""
    from bias_hub.pipelines.common.provenance import stand_ins

    name = getattr(settings, "preset", None)
    departures = list(settings.departures) if name else departures_from(settings, None)
    departures += [{"setting": "stand-in", "used": text} for text in stand_ins(inputs)]
    if name is None and not departures:
        return None
    return {"name": name, "departures": departures}


def basis_record(preset: Preset) -> dict:
    """A preset's settings with what each rests on, as a reproduction records them."""
    rows = []
    for key, value in preset.values.items():
        kind, text = preset.basis.get(key) or (None, None)
        rows.append({"setting": key, "value": _plain(value), "basis": kind, "text": text})
    return {"preset": preset.name, "command": preset.command, "settings": rows}


def basis_markdown(records: list[dict]) -> list[str]:
    """Two lists from ``basis_record``s: the settings the paper states (with the section), and our
    reading (assumed or ours, with the reason; or no basis given); a row's ``this_run`` (the
    values steps ran with instead) beside its value."""
    stated, read = [], []
    for record in records:
        for row in record["settings"]:
            name = f"`{record['preset']}`: `{row['setting']}` = {row['value']!r}"
            if row.get("this_run"):  # a step ran with another value: a departure
                name += f" (**this run: {', '.join(repr(v) for v in row['this_run'])}**)"
            if row["basis"] == "section":
                stated.append(f"- {name} ({row['text']})")
            elif row["basis"]:
                read.append(f"- {name} — {row['basis']}: {row['text']}")
            else:
                read.append(f"- {name} — no basis given")
    lines = []
    if stated:
        lines += ["The paper states:", "", *stated, ""]
    if read:
        lines += ["Our reading (the paper does not state these):", "", *read, ""]
    return lines
