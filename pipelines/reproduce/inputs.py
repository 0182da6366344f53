"""What a study needs before any step runs, and whether it is here.

Every input is checked before any work starts, so a reproduction never stops half-way for a
file or a model that was missing from the beginning. Each missing input is reported with the
study's own words on how to supply it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from bias_hub.builders.shared.card import read_card_yaml
from bias_hub.pipelines.common.locations import dataset_folder, default_datasets_root
from bias_hub.pipelines.reproduce.study import PlannedStep, Study

__all__ = ["Check", "check_inputs", "missing_text", "step_models"]


@dataclass(frozen=True)
class Check:
    kind: str
    name: str
    ok: bool
    detail: str
    how: str = ""


def _dataset(item: dict, datasets_root: Path | None) -> Check:
    name, config = item["name"], item.get("config")
    label = f"{name}" + (f" (config {config})" if config else "")
    try:
        folder = dataset_folder(name, datasets_root)
    except FileNotFoundError:  # not built: a missing input to list, not an error
        folder = Path(datasets_root or default_datasets_root()) / name
        return Check("dataset", label, False, f"no dataset folder at {folder}", item["how"])
    if config:
        configs = {c.get("config_name") for c in read_card_yaml(folder).get("configs") or []}
        if config not in configs or not any((folder / config).glob("*.parquet")):
            return Check(
                "dataset", label, False, f"{folder} has no built config {config!r}", item["how"]
            )
    return Check("dataset", label, True, str(folder))


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
    checks, model_how = [], _MODEL_HOW
    for item in study.inputs_of(variant):
        kind, name = item["kind"], item["name"]
        if kind == "dataset":
            if name in built_by_steps:
                checks.append(Check("dataset", name, True, "built by a step of this plan"))
            else:
                checks.append(_dataset(item, datasets_root))
        elif kind == "file":
            path = given.get(name)
            if path is None:
                checks.append(
                    Check("file", name, False, f"not given (--input {name}=PATH)", item["how"])
                )
            else:
                exists = Path(path).exists()
                checks.append(
                    Check(
                        "file",
                        name,
                        exists,
                        path if exists else f"{path}: no such file or folder",
                        item["how"],
                    )
                )
        elif kind == "env":
            checks.append(
                Check(
                    "env",
                    name,
                    bool(os.environ.get(name)),
                    "set" if os.environ.get(name) else f"environment variable {name} is not set",
                    item["how"],
                )
            )
        elif name == "{models}":
            model_how = item[
                "how"
            ]  # how the study's models are had: said for each one checked below
        else:
            checks.append(_model(name, item["how"]))
    seen = {c.name for c in checks if c.kind == "model"}
    for step in steps:
        for model in step_models(step):
            if model in seen:
                continue
            seen.add(model)
            if Path(model).resolve().is_relative_to(out.resolve()):
                checks.append(Check("model", model, True, "made by a step of this plan"))
            else:
                checks.append(_model(model, model_how))
    return checks


def step_models(step: PlannedStep) -> list[str]:
    """The values of ``--model`` (and ``--lm``) in a step's argv."""
    models, take = [], False
    for token in step.argv:
        if token.startswith("--"):
            take = token in {"--model", "--lm"}
            continue
        if take:
            models.append(token)
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
