"""Which model made the predictions a ``bias-hub score`` run scores.

``--model NAME`` (a Hub id, with ``--revision``; a local folder, fingerprinted; or an API
model's name) wins; otherwise the log says it: the results file lm-evaluation-harness writes
beside its samples (``config.model_args``: ``pretrained=`` or ``model=``, ``revision=``,
``base_url=``) or an Inspect AI log's header (``eval.model``, ``eval.model_base_url``). The
run records it with its other inputs (the manifest's ``inputs.models``) and names it in
results.json (``model``); a file of predictions with neither records none.
"""

from __future__ import annotations

import json
from pathlib import Path

from bias_hub.builders.shared.files import read_text
from bias_hub.pipelines.score.coverage import _SAMPLES_NAME as SAMPLES_NAME
from bias_hub.pipelines.score.settings import Settings

__all__ = ["model_input", "model_name"]


def _model_args(value) -> dict[str, str]:
    """lm-eval's ``model_args``: a ``key=value,key=value`` text, or already a mapping."""
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    pairs = (item.partition("=") for item in str(value or "").split(","))
    return {key.strip(): v.strip() for key, sep, v in pairs if sep}


def _lm_eval(samples: Path) -> dict | None:
    match = SAMPLES_NAME.match(samples.name)
    if not match:
        return None
    for results in sorted(samples.parent.glob(f"*_{match.group('date')}.json")):
        try:
            data = json.loads(read_text(results))
        except ValueError:
            continue  # the coverage check names a results file that is not JSON
        config = data.get("config") if isinstance(data, dict) else None
        if not isinstance(config, dict):
            continue
        args = _model_args(config.get("model_args"))
        name = args.get("pretrained") or args.get("model") or data.get("model_name")
        if not name:
            continue
        record = {"id": str(name), "reported_by": f"lm-eval {results.name}"}
        if config.get("model"):
            record["backend"] = str(config["model"])
        if args.get("revision"):
            record["revision"] = args["revision"]
        if args.get("base_url"):
            record["api"] = args["base_url"]
        return record
    return None


def _inspect(log: Path) -> dict | None:
    from bias_hub.pipelines.score.predictions import inspect_log

    spec, _ = inspect_log(log)
    if not spec.get("model"):
        return None
    record = {"id": str(spec["model"]), "reported_by": f"Inspect log {log.name}"}
    if spec.get("model_base_url"):
        record["api"] = str(spec["model_base_url"])
    return record


def model_input(settings: Settings) -> tuple[str, str | None] | dict | None:
    """What ``record_inputs(models=[...])`` takes for the model: ``(--model, --revision)``, to be
    fingerprinted as any part's model is; else the log's own record; else None."""
    if settings.model:
        return (settings.model, settings.revision)
    if settings.from_lm_eval:
        return _lm_eval(Path(settings.from_lm_eval))
    if settings.from_inspect:
        return _inspect(Path(settings.from_inspect))
    return None


def model_name(recorded: tuple | dict | None) -> str | None:
    if recorded is None:
        return None
    return recorded[0] if isinstance(recorded, tuple) else recorded["id"]
