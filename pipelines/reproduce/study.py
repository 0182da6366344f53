"""A study file read and checked: the paper, its models, inputs, steps and tables.

``plan(study, ...)`` turns a study, with a variant, the user's models and ``--set`` overrides,
into the ``bias-hub`` command lines it runs; the schema (``paper_input``, ``only_if``, ...) is
in CONTRIBUTING.md. Study files are plain data: YAML aliases are refused, in ``--set`` values
too, and the commands a step may run are checked in ``steps.py``.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.files import read_text
from bias_hub.builders.shared.secrets import is_secret_name, redact, register
from bias_hub.pipelines.common.locations import default_datasets_root, default_metrics_root
from bias_hub.pipelines.common.presets import STUDIES_DIR, YAMLRefused, safe_yaml
from bias_hub.pipelines.reproduce.steps import (
    Commands,
    StepError,
    check_allowed,
    check_contained,
    flag_argv,
    shown,
)

__all__ = [
    "PlannedStep",
    "Study",
    "StudyError",
    "command_dests",
    "list_studies",
    "load_study",
    "model_slug",
    "parse_set",
    "plan",
    "validate",
]

INPUT_KINDS = ("dataset", "file", "model", "env")
_PLACEHOLDER = re.compile(r"\{([a-z_]+)(?:\.([A-Za-z0-9_]+))?\}")


class StudyError(ValueError):
    """A study file that does not follow the schema, or a request it cannot serve."""


@dataclass(frozen=True)
class Study:
    name: str
    version: str
    path: Path
    title: str
    paper: dict
    models: list[dict]
    inputs: list[dict]
    steps: list[dict]
    tables: list[dict]
    variants: dict[str, dict]
    presets: dict = field(default_factory=dict)

    def inputs_of(self, variant: str | None) -> list[dict]:
        """The inputs a run needs: a variant that declares ``inputs`` (each an input of the study
        by name, or an input of its own) replaces the study's."""
        if variant is None or "inputs" not in self.variants.get(variant, {}):
            return list(self.inputs)
        by_name = {item["name"]: item for item in self.inputs}
        return [
            by_name[item] if isinstance(item, str) else item
            for item in self.variants[variant]["inputs"] or []
        ]


@dataclass(frozen=True)
class PlannedStep:
    """One step as it will run: ``argv`` for ``bias-hub`` (without the program name)."""

    id: str
    command: str
    argv: list[str]
    out: Path | None
    model: str | None = None
    # The step's arguments as planned (placeholders expanded), by argument name.
    args: dict = field(default_factory=dict)


def _require(data: dict, key: str, kind: type | tuple, where: str) -> Any:
    if key not in data:
        raise StudyError(f"{where}: missing '{key}'")
    if not isinstance(data[key], kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise StudyError(f"{where}: '{key}' must be a {names}, got {type(data[key]).__name__}")
    return data[key]


def _check_step(step: Any, where: str) -> dict:
    if not isinstance(step, dict):
        raise StudyError(f"{where}: a step must be a mapping with 'id', 'command' and 'args'")
    _require(step, "id", str, where)
    _require(step, "command", str, f"{where} ({step['id']})")
    if not isinstance(step.get("args", {}), dict):
        raise StudyError(f"{where} ({step['id']}): 'args' must map flag names to values")
    return step


def _check_inputs(inputs: Any, where: str) -> list[dict]:
    if not isinstance(inputs, list):
        raise StudyError(f"{where}: expected a list of inputs")
    for i, item in enumerate(inputs):
        if (
            not isinstance(item, dict)
            or item.get("kind") not in INPUT_KINDS
            or not item.get("name")
        ):
            raise StudyError(
                f"{where}[{i}] needs 'kind' (one of {', '.join(INPUT_KINDS)}) and 'name'"
            )
        if not item.get("how"):
            raise StudyError(f"{where}[{i}] ({item['name']}) needs 'how': how a user supplies it")
        if not isinstance(item.get("paper_input", ""), str):
            raise StudyError(f"{where}[{i}] ({item['name']}): 'paper_input' must be a text")
        only_if = item.get("only_if", {})
        if not isinstance(only_if, dict) or any(
            not isinstance(key, str) or "." not in key for key in only_if
        ):
            raise StudyError(
                f"{where}[{i}] ({item['name']}): 'only_if' must map STEP.KEY to the value(s) "
                "that need the input"
            )
    return inputs


def _read(path: Path) -> Study:
    try:
        data = safe_yaml(read_text(path), str(path))
    except ValueError as err:
        raise StudyError(str(err)) from None
    if not isinstance(data, dict):
        raise StudyError(f"{path}: expected a mapping at the top")
    where = path.name
    name = _require(data, "study", str, where)
    version = str(_require(data, "version", (str, int, float), where))
    models = data.get("models") or []
    for i, model in enumerate(models):
        if not isinstance(model, dict) or not isinstance(model.get("id"), str):
            raise StudyError(f"{where}: models[{i}] needs an 'id' (a Hub id or local path)")
    inputs = _check_inputs(data.get("inputs") or [], f"{where}: inputs")
    steps = [_check_step(s, f"{where}: steps[{i}]") for i, s in enumerate(data.get("steps") or [])]
    ids = [s["id"] for s in steps]
    if len(set(ids)) != len(ids):
        raise StudyError(f"{where}: step ids must be unique, got {ids}")
    tables = data.get("tables") or []
    for i, table in enumerate(tables):
        if not isinstance(table, dict) or not all(map(table.get, ("id", "step", "layout"))):
            raise StudyError(f"{where}: tables[{i}] needs 'id', 'step' and 'layout'")
    variants = data.get("variants") or {}
    if not isinstance(variants, dict):
        raise StudyError(f"{where}: 'variants' must map variant names to their changes")
    for vname, variant in variants.items():
        if not isinstance(variant, dict) or not variant.get("description"):
            raise StudyError(
                f"{where}: variant {vname!r} needs a 'description' (how it differs from the paper)"
            )
        for i, s in enumerate(variant.get("steps") or []):
            _check_step(s, f"{where}: variants.{vname}.steps[{i}]")
        if "inputs" in variant:
            names = {item["name"] for item in inputs}
            given = variant["inputs"] or []
            own = [item for item in given if not isinstance(item, str)]
            unknown = [item for item in given if isinstance(item, str) and item not in names]
            if unknown:
                raise StudyError(
                    f"{where}: variants.{vname}.inputs names {unknown}, not inputs of the study"
                )
            _check_inputs(own, f"{where}: variants.{vname}.inputs")
    return Study(
        name=name,
        version=version,
        path=path,
        title=str(data.get("title", "")),
        paper=data.get("paper") or {},
        models=models,
        inputs=inputs,
        steps=steps,
        tables=tables,
        variants=variants,
        presets=data.get("presets") or {},
    )


def list_studies(folder: Path | None = None) -> list[Study]:
    return [_read(p) for p in sorted((folder or STUDIES_DIR).glob("*.yaml"))]


def load_study(name_or_path: str, folder: Path | None = None) -> Study:
    path = Path(name_or_path)
    if path.suffix in {".yaml", ".yml"}:
        if not path.is_file():
            raise StudyError(f"study {name_or_path}: no such file")
        return _read(path)
    studies = {s.name: s for s in list_studies(folder)}
    if name_or_path not in studies:
        raise StudyError(
            f"study {name_or_path!r}: unknown; known: {', '.join(sorted(studies)) or 'none'} "
            "(`bias-hub reproduce --list`)"
        )
    return studies[name_or_path]


def parse_set(items: list[str]) -> dict[str, Any]:
    """``["evaluate.limit=40", "seed=1"]`` -> ``{"evaluate.limit": 40, "seed": 1}`` (YAML values;
    a text that is no YAML stays text). The value of a key named like a secret (``token``,
    ``*_api_key``, ...) is registered for redaction at once."""
    values = {}
    for item in items:
        key, sep, text = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise StudyError(f"--set {item!r}: expected KEY=VALUE or STEP.KEY=VALUE")
        if is_secret_name(key.rpartition(".")[2]):
            register(text)
        values[key] = _set_value(key, text) if text.strip() else ""
    return values


def _set_value(key: str, text: str) -> Any:
    try:
        return safe_yaml(text, f"--set {key}")
    except YAMLRefused as err:
        raise StudyError(str(err)) from None
    except ValueError:
        return text  # not YAML: the text as typed


def _expand(value: Any, context: dict[str, Any], where: str) -> Any:
    """Placeholders in a value: ``{out}``, ``{model}``, ``{model_slug}`` (a folder name for the
    model), ``{models}``, ``{datasets_root}``, ``{input.NAME}``. A string holding ``{models}``
    becomes a list, one item per model (``"{out}/models/{models}"``: one path per model)."""
    if isinstance(value, list):
        out = []
        for item in value:
            expanded = _expand(item, context, where)
            out.extend(expanded if isinstance(expanded, list) else [expanded])
        return out
    if not isinstance(value, str):
        return value
    if "{models}" in value:
        return [
            _expand(value.replace("{models}", str(m)), context, where) for m in context["models"]
        ]

    def substitute(match: re.Match) -> str:
        key, sub = match.group(1), match.group(2)
        if key == "input":
            if sub not in context["inputs"]:
                raise StudyError(f"{where}: {{input.{sub}}} needs --input {sub}=PATH")
            return str(context["inputs"][sub])
        if key not in context or context[key] is None or sub is not None:
            raise StudyError(
                f"{where}: unknown placeholder {match.group(0)} "
                "(known: {out}, {model}, {model_slug}, {models}, {datasets_root}, {input.NAME})"
            )
        return str(context[key])

    return _PLACEHOLDER.sub(substitute, value)


def model_slug(model: str, out: Path | None = None) -> str:
    """A folder name for a model: a local folder's own name (one that exists, is absolute,
    starts with ``.`` or lies under ``out``), a Hub id with ``/`` as ``--``."""
    path = Path(model)
    if (
        path.exists()
        or path.is_absolute()
        or model.startswith(".")
        or (out is not None and path.is_relative_to(out))
    ):
        return path.name
    return model.replace("/", "--")


def plan(
    study: Study,
    out: Path,
    *,
    variant: str | None = None,
    models: list[str] | None = None,
    overrides: dict[str, Any] | None = None,
    inputs: dict[str, str] | None = None,
    datasets_root: Path | None = None,
    accepts: Callable[[str], set[str]] | None = None,
    parser: argparse.ArgumentParser | None = None,
    allow_any_command: bool = False,
) -> list[PlannedStep]:
    """The steps as they will run, in order: the variant's extra steps first, then the study's.

    A ``STEP.KEY`` change sets that step's argument; a bare ``KEY`` sets it on every step whose
    command accepts it (``accepts(command)`` gives a command's flag dests, or ``parser``'s;
    without either, the steps that already have the argument). A change that reaches no step is
    an error, never dropped. With ``parser`` (the ``bias-hub`` parser), each argument becomes
    argv by its flag's kind and every step's argv is parsed before this returns: a wrong value
    is a ``StudyError`` naming the step and the ``--set`` that gave it. Every step's command
    must be one a study may run (``steps.check_allowed``) unless ``allow_any_command``."""
    if not study.steps:
        raise StudyError(f"{study.name}: the study declares no steps yet ({study.path})")
    commands = Commands(parser) if parser is not None else None
    if accepts is None and commands is not None:
        accepts = commands.dests
    steps = list(study.steps)
    chosen_models = [m["id"] for m in study.models]
    variant_changes: dict[str, Any] = {}
    if variant is not None:
        if variant not in study.variants:
            raise StudyError(
                f"--variant {variant!r}: {study.name} has {', '.join(study.variants) or 'no variants'}"
            )
        spec = study.variants[variant]
        skipped = set(spec.get("skip") or [])
        unknown = skipped - {s["id"] for s in steps}
        if unknown:
            raise StudyError(
                f"{study.name}: variant {variant} skips {sorted(unknown)}, not steps of the study"
            )
        steps = list(spec.get("steps") or []) + [s for s in steps if s["id"] not in skipped]
        chosen_models = list(spec.get("models") or chosen_models)
        variant_changes = dict(spec.get("set") or {})
    if models:
        chosen_models = list(models)
    overrides = dict(overrides or {})
    for key in overrides:
        if key.rpartition(".")[2] == "out":
            raise StudyError(
                f"--set {key}: a step's output folder is the study's, under --out; "
                "it is not changed by --set"
            )
    # Where each change comes from, for the messages: the variant's `set`, or the command line.
    changes = [
        *((key, value, f"variant {variant}: set {key}") for key, value in variant_changes.items()),
        *((key, value, f"--set {key}={shown(value)}") for key, value in overrides.items()),
    ]
    root = Path(datasets_root) if datasets_root else default_datasets_root()
    context = {
        "out": out,
        "models": chosen_models,
        "datasets_root": root,
        "inputs": dict(inputs or {}),
    }
    context["models"] = [
        _expand(m, {**context, "models": []}, f"{study.name}: models") for m in chosen_models
    ]
    ids = {s["id"] for s in steps}
    for key, _, origin in changes:
        step_id, dot, _ = key.partition(".")
        if dot and step_id not in ids:
            raise StudyError(
                f"{origin}: no step {step_id!r} in {study.name} (steps: {', '.join(sorted(ids))})"
            )
    # What a step may read besides --out and the datasets root: the metric modules and what the
    # user gave (the study file's own paths are checked against these, `steps.check_contained`).
    readable = [default_metrics_root(), *(inputs or {}).values()]
    readable += [m for m in models or [] if Path(m).expanduser().exists()]
    planned, applied = [], set()
    for step in steps:
        args = dict(step.get("args") or {})
        origins: dict[str, str] = {}
        for key, value, origin in changes:
            step_id, dot, name = key.partition(".")
            if dot and step_id == step["id"]:
                args[name], origins[name] = value, origin
                applied.add(key)
            elif not dot and (
                key in args or (accepts is not None and key in accepts(step["command"]))
            ):
                args[key], origins[key] = value, origin
                applied.add(key)
        from_study = {k for k in args if not origins.get(k, "").startswith("--set")}
        # The run's datasets root reaches every step that reads one, as the input check used it.
        if "datasets_root" not in args and accepts is not None:
            if "datasets_root" in accepts(step["command"]):
                args["datasets_root"] = str(root)
        # Without for_each_model, {model} is the first model (a step that loads one).
        runs = context["models"] if step.get("for_each_model") else [None]
        for model in runs:
            where = f"{study.name}: step {step['id']}"
            chosen = model if model is not None else next(iter(context["models"]), None)
            values = {
                **context,
                "model": chosen,
                "model_slug": model_slug(chosen, out) if chosen else None,
            }
            expanded = {k: _expand(v, values, where) for k, v in args.items()}
            try:
                check_contained(
                    step["command"],
                    expanded,
                    from_study,
                    out=out,
                    readable=[root, *readable],
                    commands=commands,
                    allow_any=allow_any_command,
                )
            except StepError as err:
                key = str(err).split()[0].rstrip(":")
                origin = f": {origins[key]}" if key in origins else ""
                raise StudyError(redact(f"{where}{origin}: {err}")) from None
            argv = _checked_argv(step, expanded, origins, commands, where, allow_any_command)
            out_dir = Path(expanded["out"]) if "out" in expanded else None
            planned.append(PlannedStep(step["id"], step["command"], argv, out_dir, model, expanded))
    unused = [key for key, _, _ in changes if key not in applied]
    if unused:
        raise StudyError(
            f"--set {', '.join(unused)}: no step of {study.name} takes it "
            "(write STEP.KEY to set an argument of one step)"
        )
    return planned


def _checked_argv(
    step: dict,
    args: dict[str, Any],
    origins: dict[str, str],
    commands: Commands | None,
    where: str,
    allow_any_command: bool,
) -> list[str]:
    """The step's argv, refused (naming the step, and the ``--set`` where one gave the value)
    when a value does not fit its flag, the step's own parser rejects it, or the command is
    not one a study may run."""

    def refuse(message: str, key: str | None) -> StudyError:
        origin = f": {origins[key]}" if key in origins else ""
        return StudyError(redact(f"{where}{origin}: {message}"))

    argv = step["command"].split()
    for key, value in args.items():
        try:
            argv += flag_argv(step["command"], key, value, commands)
        except StepError as err:
            raise refuse(str(err), key) from None
    try:
        check_allowed(step["command"], argv, allow_any_command)
    except StepError as err:
        raise refuse(str(err), "force" if "--force" in argv else None) from None
    if commands is not None:
        message = commands.parse_error(argv)
        if message is not None:
            blamed = next(
                (
                    key
                    for key in origins
                    if re.search(
                        rf"(?<![\w-])--{re.escape(key.replace('_', '-'))}(?![\w-])", message
                    )
                ),
                None,
            )
            detail = message if blamed else f"`bias-hub {' '.join(argv)}`: {message}"
            raise refuse(detail, blamed)
    return argv


def command_dests(parser: argparse.ArgumentParser) -> Callable[[str], set[str]]:
    """``accepts(command)`` for ``plan``: the flag dests of a ``bias-hub`` command such as ``"jbbq evaluate"``."""
    return Commands(parser).dests


def validate(study: Study, parser: argparse.ArgumentParser, out: Path = Path("OUT")) -> None:
    """Every step of the study and of each variant parses with the real ``bias-hub`` parser,
    and every table names a step of the study."""
    ids = {s["id"] for s in study.steps}
    for table in study.tables:
        if table["step"] not in ids:
            raise StudyError(
                f"{study.name}: table {table['id']!r} names step {table['step']!r}, not in {sorted(ids)}"
            )
    for variant in [None, *study.variants]:
        inputs = {item["name"]: f"INPUT_{item['name']}" for item in study.inputs_of(variant)}
        try:
            plan(study, out, variant=variant, inputs=inputs, parser=parser)
        except StudyError as err:
            label = f" (variant {variant})" if variant else ""
            raise StudyError(f"{err}{label}") from None
