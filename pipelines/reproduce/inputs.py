"""What a study needs before any step runs, and whether it is here: every input is checked
first, so a reproduction never stops half-way for something missing from the beginning.

What is checked is what the plan uses: the models its steps load, the variant's inputs, an
input with ``only_if`` only where a step runs with that setting. A dataset whose card records a
sample or a generated set (``provenance.dataset_origin``) is a stand-in, and the plan says so.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.card import read_card_yaml
from bias_hub.pipelines.common.locations import (
    dataset_folder,
    default_datasets_root,
    missing_data_files,
)
from bias_hub.pipelines.common.presets import Preset, load_preset
from bias_hub.pipelines.common.provenance import STAND_IN_ORIGINS, dataset_origin
from bias_hub.pipelines.reproduce.study import PlannedStep, Study

__all__ = ["Check", "check_inputs", "missing_text", "stand_in_text", "step_models"]


@dataclass(frozen=True)
class Check:
    kind: str
    name: str
    ok: bool
    detail: str
    how: str = ""
    # A dataset's card: {"kind": release | sample | generated | built, "detail": ...}.
    origin: dict | None = None
    # What the paper used for this input (the study's `paper_input`).
    paper_input: str = ""

    @property
    def stand_in(self) -> bool:
        """A sample or generated set in place of the paper's data."""
        return self.ok and (self.origin or {}).get("kind") in STAND_IN_ORIGINS


def _dataset(item: dict, datasets_root: Path | None) -> Check:
    name, config = item["name"], item.get("config")
    label = f"{name}" + (f" (config {config})" if config else "")
    paper = item.get("paper_input", "")
    try:
        folder = dataset_folder(name, datasets_root)
    except FileNotFoundError:  # not built: a missing input to list, not an error
        folder = Path(datasets_root or default_datasets_root()) / name
        found = "no dataset folder" if missing_data_files(folder) is None else "a card but no data"
        return Check("dataset", label, False, f"{found} at {folder}", item["how"], None, paper)
    card = read_card_yaml(folder)
    if config:
        configs = {c.get("config_name") for c in card.get("configs") or []}
        if config not in configs or not any((folder / config).glob("*.parquet")):
            detail = f"{folder} has no built config {config!r}"
            return Check("dataset", label, False, detail, item["how"], None, paper)
    origin = dataset_origin(card, config)
    return Check("dataset", label, True, str(folder), item["how"], origin, paper)


def _preset(step: PlannedStep) -> Preset | None:
    name = step.args.get("preset")
    if not name:
        return None
    try:
        return load_preset(step.command, str(name))
    except (ValueError, FileNotFoundError):
        return None  # the step's own parser and run name a bad preset


def _setting(step: PlannedStep, key: str) -> Any:
    """The value a planned step runs with for ``key``: its argument, else its preset's."""
    if key in step.args:
        return step.args[key]
    preset = _preset(step)
    return None if preset is None else preset.values.get(key)


def _needed(item: dict, steps: list[PlannedStep]) -> bool:
    """Whether an input with ``only_if`` ({STEP.KEY: value(s)}) is needed by the plan."""
    for condition, wanted in (item.get("only_if") or {}).items():
        step_id, _, key = condition.partition(".")
        values = {str(v) for v in (wanted if isinstance(wanted, list) else [wanted])}
        if not any(str(_setting(step, key)) in values for step in steps if step.id == step_id):
            return False
    return True


def _model(model_id: str, how: str) -> Check:
    if Path(model_id).exists():
        return Check("model", model_id, True, "local folder")
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        path = snapshot_download(model_id, local_files_only=True)
        return Check("model", model_id, True, f"in the Hub cache ({path})")
    except (LocalEntryNotFoundError, OSError, ValueError):
        pass
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in {"1", "true", "yes", "on"}:
        return Check(
            "model", model_id, False, "not in the local Hub cache, and HF_HUB_OFFLINE is set", how
        )
    from huggingface_hub import HfApi

    try:
        HfApi().model_info(model_id, timeout=10)
        return Check("model", model_id, True, "on the Hub (downloaded by the step that loads it)")
    except Exception as err:  # any failure means the step would fail the same way
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        return Check("model", model_id, False, f"cannot be reached on the Hub ({first[:160]})", how)


_MODEL_HOW = (
    "give local copies with --models PATH ..., download them on a machine with network "
    "(`hf download ID`) into the Hub cache, or run a variant (`--variant offline`)"
)


def check_inputs(
    study: Study,
    steps: list[PlannedStep],
    out: Path,
    *,
    given: dict[str, str],
    datasets_root: Path | None,
    built_by_steps: set[str] = frozenset(),
    variant: str | None = None,
) -> list[Check]:
    """Every declared input and every model the steps load, in the study's order. Models and
    datasets that a step of this plan makes (under ``out``, or built by a ``build`` step) are not
    required beforehand."""
    checks, model_how, declared_models = [], _MODEL_HOW, {}
    for item in study.inputs_of(variant):
        kind, name = item["kind"], item["name"]
        if not _needed(item, steps):
            continue
        if kind == "dataset":
            if name in built_by_steps:
                checks.append(Check("dataset", name, True, "built by a step of this plan"))
            else:
                checks.append(_dataset(item, datasets_root))
        elif kind == "file":
            path = given.get(name)
            ok = path is not None and Path(path).exists()
            if path is None:
                detail = f"not given (--input {name}=PATH)"
            else:
                detail = path if ok else f"{path}: no such file or folder"
            checks.append(Check("file", name, ok, detail, item["how"]))
        elif kind == "env":
            ok = bool(os.environ.get(name))
            detail = "set" if ok else f"environment variable {name} is not set"
            checks.append(Check("env", name, ok, detail, item["how"]))
        elif name == "{models}":
            # How the study's models are had: said for each one checked below.
            model_how = item["how"]
        else:
            declared_models[name] = item["how"]
    # The models the steps load: a variant's models and --models replace the paper's.
    seen = set()
    for step in steps:
        for model in step_models(step):
            if model in seen:
                continue
            seen.add(model)
            if Path(model).resolve().is_relative_to(out.resolve()):
                checks.append(Check("model", model, True, "made by a step of this plan"))
            else:
                checks.append(_model(model, declared_models.get(model, model_how)))
    return checks


def step_models(step: PlannedStep) -> list[str]:
    """The models a step loads: the values of ``--model`` (and ``--lm``) in its argv, and where
    it gives none, its preset's (``models`` and ``lm``)."""
    models, take = [], False
    for token in step.argv:
        if token.startswith("--"):
            take = token in {"--model", "--lm"}
            continue
        if take:
            models.append(token)
    preset = _preset(step)
    if preset is not None:
        if "model" not in step.args:
            models += list(preset.models)
        if "lm" not in step.args and isinstance(preset.values.get("lm"), str):
            models.append(preset.values["lm"])
    return models


def missing_text(checks: list[Check]) -> str:
    """The lines a user reads when something is missing: what, why, and how to supply it."""
    lines = []
    for check in checks:
        if not check.ok:
            lines.append(f"- {check.kind} {check.name}: {check.detail}")
            if check.how:
                lines.append(f"    how: {check.how}")
    return "\n".join(lines)


def stand_in_text(checks: list[Check]) -> str:
    """The lines a user reads when a paper run would use stand-ins: which, what the paper
    used, and how to get it."""
    lines = []
    for check in checks:
        if check.stand_in:
            origin = check.origin or {}
            lines.append(f"- dataset {check.name}: {origin['kind']} ({origin.get('detail', '')})")
            if check.paper_input:
                lines.append(f"    the paper used: {check.paper_input}")
            if check.how:
                lines.append(f"    how: {check.how}")
    return "\n".join(lines)
