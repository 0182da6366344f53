"""``bias-hub export eval-results RUN_DIR... --namespace ORG --out DIR``: a run's headline numbers
as the Hub's evaluation results of a model repo (``.eval_results/*.yaml``).

Each run is read as the leaderboard reads it; each entry (a model under one setting on one
benchmark) becomes ``DIR/<model>/.eval_results/<benchmark>[_<setting>].yaml``, one item per
task of the benchmark's ``eval.yaml``, the setting in its notes. Refused, naming why: a run
that answered part of its questions, whose files no longer match its manifest, on stand-in
data (allowed for a dry run only), or that records no model. ``--push --model ORG/NAME``
opens one pull request; without it nothing leaves the machine.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bias_hub.pipelines.leaderboard.entries import (
    STUDY_PREFIX,
    Entry,
    read_entries,
    verify_run_folder,
)

__all__ = ["Settings", "export", "refusal"]

log = logging.getLogger(__name__)

STAND_IN_KINDS = ("sample", "generated")


@dataclass(kw_only=True)
class Settings:
    namespace: str = ""
    study: str | None = None
    source_url: str | None = None
    source_name: str | None = None
    push: bool = False
    model: str | None = None
    allow_stand_ins: bool = False


def refusal(entry: Entry, settings: Settings) -> str | None:
    """Why ``entry`` cannot go on a model page, or None."""
    if entry.paper is not None:
        return None
    folder = Path(entry.run)
    if not folder.is_dir():
        return (
            f"{entry.run}: not a bias-hub run folder; score its samples with `bias-hub score "
            "--from-lm-eval` first, so the run records its questions and files"
        )
    if entry.partial:
        return f"{entry.run}: a partial run ({entry.partial}); eval results need every question"
    unverified = verify_run_folder(folder)
    if unverified:
        return f"{unverified[0]}; eval results come only from a run's own files"
    if entry.model_record == {}:
        return f"{entry.run}: records no model; name it with `bias-hub score --model NAME`"
    if entry.dataset_kind in STAND_IN_KINDS and (settings.push or not settings.allow_stand_ins):
        why = (
            "never pushed"
            if settings.push
            else "pass --allow-stand-ins to preview them (dry run only)"
        )
        return f"{entry.run}: scored on stand-in data ({entry.dataset_detail or entry.dataset_kind}); {why}"
    return None


def _notes(entry: Entry, task: str) -> str:
    parts = [f"{entry.origin} in {entry.paper}" if entry.paper else entry.origin]
    if entry.setting_label():
        parts.append(entry.setting_label())
    if entry.departures:
        parts.append("departures from the preset: " + "; ".join(entry.departures))
    score = entry.scores[task]
    if score.low is not None and score.high is not None:
        level = f"{score.level:.0%} " if score.level else ""
        parts.append(f"{level}interval [{score.low:.4g}, {score.high:.4g}]")
    if entry.dataset_kind in STAND_IN_KINDS:
        parts.append(f"STAND-IN DATA: {entry.dataset_detail or entry.dataset_kind}")
    return "; ".join(parts)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-") or "model"


def _model_folder(entry: Entry) -> str:
    from bias_hub.pipelines.reproduce.study import model_slug

    return _slug(model_slug(str(entry.model_record.get("id") or entry.model)))


def _file_names(entries: list[Entry]) -> dict[int, str]:
    """A file name per entry: the benchmark, the prompt and shot count where set; the setting's
    hash where two settings of one model would share a name."""
    import hashlib

    names = {}
    for i, entry in enumerate(entries):
        shots = entry.setting.get("shots")
        parts = [
            entry.benchmark,
            entry.setting.get("prompt"),
            None if shots is None else f"{shots}shot",
        ]
        names[i] = _slug("_".join(str(p) for p in parts if p is not None))
    taken: dict[tuple[str, str], list[int]] = {}
    for i, name in names.items():
        taken.setdefault((_model_folder(entries[i]), name), []).append(i)
    for same in taken.values():
        if len(same) > 1:
            for i in same:
                label = entries[i].setting_label() + entries[i].run
                names[i] += "_" + hashlib.sha256(label.encode()).hexdigest()[:6]
    return {i: f"{name}.yaml" for i, name in names.items()}


def _entries_yaml(entry: Entry, settings: Settings) -> str:
    import yaml
    from huggingface_hub import EvalResultEntry, eval_result_entries_to_yaml

    source_url = settings.source_url
    # A paper's values name the paper as their source (its page, given with --source-url).
    source_name = settings.source_name or entry.paper
    items = [
        EvalResultEntry(
            dataset_id=f"{settings.namespace}/{entry.benchmark}",
            task_id=task,
            value=round(score.value, 6),
            date=entry.date,
            source_url=source_url,
            source_name=source_name if source_url else None,
            notes=_notes(entry, task),
        )
        for task, score in entry.scores.items()
    ]
    return yaml.safe_dump(
        eval_result_entries_to_yaml(items), sort_keys=False, allow_unicode=True, width=1000
    )


def export(sources: list[str], out_dir: str | Path, settings: Settings, api: Any = None) -> dict:
    """Write the files (and with ``settings.push`` open the pull request); return
    ``{model folder: [file, ...]}``. ``api`` replaces ``HfApi`` (tests pass a fake)."""
    from bias_hub.pipelines.common import RunFolder
    from bias_hub.pipelines.publish.hub_rules import HUB_NAME

    if not HUB_NAME.match(settings.namespace or ""):
        raise ValueError(
            f"--namespace {settings.namespace!r} is not a valid Hub user or organisation name"
        )
    if settings.study:
        sources = [*sources, f"{STUDY_PREFIX}{settings.study}"]
    if not sources:
        raise ValueError("give run folders (RUN_DIR ...) or --study NAME")
    entries = [entry for source in sources for entry in read_entries(source)]
    refused = [why for why in (refusal(e, settings) for e in entries) if why]
    if refused:
        raise ValueError(
            f"{len(refused)} of {len(entries)} results refused, nothing written: {refused[0]}"
        )
    if settings.push:
        models = sorted({_model_folder(e) for e in entries})
        if not settings.model or len(models) != 1:
            raise ValueError(
                f"--push: give --model ORG/NAME, the one model repo the pull request opens on; these "
                f"runs hold {len(models)} model(s): {', '.join(models)}"
            )
    names = _file_names(entries)
    written: dict[str, list[str]] = {}
    with RunFolder(out_dir) as out:
        for i, entry in enumerate(entries):
            folder = _model_folder(entry)
            path = f"{folder}/.eval_results/{names[i]}"
            out.write_text(path, _entries_yaml(entry, settings))
            written.setdefault(folder, []).append(path)
    for folder, paths in written.items():
        log.info("%s: %s", folder, ", ".join(Path(p).name for p in paths))
    if settings.push:
        (paths,) = written.values()
        _open_pull_request(api, settings.model, Path(out_dir), paths)
    else:
        log.info(
            "dry run: %d file(s) in %s; nothing left this machine (--push --model ORG/NAME opens a "
            "pull request with them)",
            sum(len(p) for p in written.values()),
            out_dir,
        )
    return written


def _open_pull_request(api: Any, model: str, out_dir: Path, paths: list[str]) -> str:
    """One pull request adding ``paths`` (under ``.eval_results/``) to the model repo."""
    from huggingface_hub import CommitOperationAdd

    if api is None:
        from bias_hub.pipelines.publish.push import hub_api

        api = hub_api("push")
    operations = [
        CommitOperationAdd(
            path_in_repo=path.split("/", 1)[1] if "/" in path else path,
            path_or_fileobj=(out_dir / path).read_bytes(),
        )
        for path in paths
    ]
    info = api.create_commit(
        repo_id=model,
        repo_type="model",
        operations=operations,
        commit_message="Add bias-hub evaluation results",
        commit_description="Evaluation results written by `bias-hub export eval-results`: each file one "
        "setting of a benchmark, its notes the setting and the interval.",
        create_pr=True,
    )
    url = getattr(info, "pr_url", None) or str(info)
    log.info("opened %s", url)
    return url
