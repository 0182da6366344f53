"""``bias-hub reproduce``: run a study's steps and lay out the paper's tables beside ours.

The output folder holds one run folder per step (each written whole by its own command) and,
once every step has finished, ``report.md`` and ``results.json`` of the reproduction. A step
whose run folder exists from an earlier attempt with the same command line is reused, so an
interrupted reproduction resumes where it stopped; nothing else in the folder is touched.
"""

from __future__ import annotations

import importlib
import json
import logging
import re
import shlex
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.files import atomic_write_text, ensure_writable_folder, write_json
from bias_hub.pipelines.common.presets import basis_markdown, basis_record, load_preset
from bias_hub.pipelines.reproduce.inputs import check_inputs, missing_text
from bias_hub.pipelines.reproduce.study import PlannedStep, Study, StudyError, command_dests, plan

__all__ = ["LEDGER", "dry_run_text", "render_reproduction", "reproduce"]

log = logging.getLogger(__name__)
LEDGER = "steps.json"


def _command_text(step: PlannedStep) -> str:
    return "bias-hub " + shlex.join(step.argv)


def _built_by(steps: list[PlannedStep]) -> set[str]:
    return {step.argv[1] for step in steps if step.argv[:1] == ["build"] and len(step.argv) > 1}


def dry_run_text(study: Study, steps: list[PlannedStep], checks: list, variant: str | None) -> str:
    paper = study.paper
    lines = [f"{study.name} v{study.version}: {study.title}"]
    if paper.get("citation"):
        lines.append(f"paper: {paper['citation']}")
    if paper.get("later_version"):
        lines.append(f"later version: {paper['later_version']}")
    if variant:
        lines.append(
            f"variant {variant}: {study.variants[variant]['description']} (not the paper's setting)"
        )
    lines.append("models (as the paper gives them):")
    lines += [
        f"  {m['id']}" + (f"  ({m['section']})" if m.get("section") else "") for m in study.models
    ]
    lines.append("inputs:")
    lines += [
        f"  [{'ok' if c.ok else 'MISSING'}] {c.kind} {c.name}: {c.detail}"
        + ("" if c.ok or not c.how else f"\n      how: {c.how}")
        for c in checks
    ] or ["  (none)"]
    lines.append("steps:")
    for i, step in enumerate(steps, 1):
        lines.append(f"  {i}. {_command_text(step)}")
    lines.append("tables and figures:")
    for table in study.tables:
        section = f" ({table['section']})" if table.get("section") else ""
        lines.append(f"  {table['id']}: {table.get('title', '')}{section} <- step {table['step']}")
    return "\n".join(lines)


def _ledger(out: Path) -> dict:
    path = out / LEDGER
    if not path.is_file():
        return {}
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return {}


def _check_out(out: Path) -> None:
    ensure_writable_folder(out, "--out")
    if out.is_dir() and any(out.iterdir()) and not (out / LEDGER).is_file():
        raise ValueError(
            f"--out {out}: exists, is not empty and is not a reproduction folder (no {LEDGER}); "
            "give a new or empty folder, or the folder of an earlier `bias-hub reproduce` to resume"
        )


def _models_used(steps: list[PlannedStep]) -> list[str]:
    """The models the steps load (``--model`` / ``--lm`` values), in order of first use."""
    from bias_hub.pipelines.reproduce.inputs import step_models

    return list(dict.fromkeys(m for step in steps for m in step_models(step)))


_LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")


def _relink(markdown: str, folder: str) -> str:
    """Relative links and images of a step's Markdown, made relative to the reproduction folder."""

    def fix(match: re.Match) -> str:
        target = match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:|^/|^#", target):
            return match.group(0)
        return f"{match.group(1)}{folder}/{target}{match.group(3)}"

    return _LINK.sub(fix, markdown)


def _key(step: PlannedStep) -> str:
    return f"{step.id}:{step.model}" if step.model else step.id


def _run_step(step: PlannedStep) -> None:
    # bias_hub.pipelines.cli registers this package's commands: imported where used, so no import circle.
    from bias_hub.pipelines import cli

    code = cli.main(list(step.argv))
    if code:
        raise UserError(
            f"step {step.id} failed (exit {code}): {_command_text(step)}; the steps before it "
            "are kept, run the same reproduce command again to resume"
        )


def reproduce(
    study: Study,
    out: Path,
    *,
    variant: str | None = None,
    models: list[str] | None = None,
    overrides: dict[str, Any] | None = None,
    inputs: dict[str, str] | None = None,
    datasets_root: Path | None = None,
    dry_run: bool = False,
) -> str:
    """Run (or, with ``dry_run``, describe) the study; returns the text printed for the user."""
    # bias_hub.pipelines.cli registers this package's commands: imported where used, so no import circle.
    from bias_hub.pipelines.cli import build_parser

    # A file input not given yet still shows in the plan (the checks below report it missing).
    shown = {
        item["name"]: f"<{item['name']}>"
        for item in study.inputs_of(variant)
        if item["kind"] == "file"
    }
    steps = plan(
        study,
        out,
        variant=variant,
        models=models,
        overrides=overrides,
        inputs={**shown, **(inputs or {})},
        datasets_root=datasets_root,
        accepts=command_dests(build_parser()),
    )
    checks = check_inputs(
        study,
        steps,
        out,
        given=dict(inputs or {}),
        datasets_root=datasets_root,
        built_by_steps=_built_by(steps),
        variant=variant,
    )
    if dry_run:
        return dry_run_text(study, steps, checks, variant)
    missing = missing_text(checks)
    if missing:
        raise ValueError(
            f"{study.name}: cannot start, inputs are missing (nothing was run):\n{missing}"
        )
    _check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    ledger = _ledger(out)
    for i, step in enumerate(steps, 1):
        key = _key(step)
        done = ledger.get(key) == step.argv and (
            step.out is None or (step.out / "manifest.json").is_file()
        )
        if done:
            log.info("[%d/%d] %s: reused (same command, finished earlier)", i, len(steps), step.id)
            continue
        log.info("[%d/%d] %s", i, len(steps), _command_text(step))
        _run_step(step)
        ledger[key] = step.argv
        write_json(out / LEDGER, ledger)
    record = {
        "part": "reproduce",
        "step": "reproduce",
        "study": study.name,
        "version": study.version,
        "title": study.title,
        "paper": study.paper,
        "variant": variant,
        "variant_description": study.variants[variant]["description"] if variant else None,
        "models": _models_used(steps),
        "paper_models": study.models,
        "overrides": dict(overrides or {}),
        "steps": [
            {
                "id": s.id,
                "model": s.model,
                "command": _command_text(s),
                "out": str(s.out.relative_to(out))
                if s.out and s.out.is_relative_to(out)
                else (str(s.out) if s.out else None),
            }
            for s in steps
        ],
        "tables": study.tables,
        # Every step's command, run or skipped: a table of a skipped step still shows the paper's values.
        "commands": {
            s["id"]: s["command"]
            for s in [*study.steps, *(study.variants.get(variant, {}).get("steps") or [])]
        },
        "settings": _preset_bases(steps),
    }
    render_reproduction(record, out)
    write_json(out / "results.json", record)
    return f"wrote {out / 'report.md'}"


def _preset_bases(steps: list[PlannedStep]) -> list[dict]:
    """What each preset the steps use rests on (the paper's section, or our reading), once each."""
    records = {}
    for step in steps:
        if "--preset" in step.argv:
            name = step.argv[step.argv.index("--preset") + 1]
            if (step.command, name) not in records:
                records[step.command, name] = basis_record(load_preset(step.command, name))
    return list(records.values())


def _step_link(out: Path, folder: str | None) -> str:
    """The run folder's report.md where it has one, else the folder itself (a model folder)."""
    if not folder:
        return "–"
    if (out / folder / "report.md").is_file():
        return f"[{folder}]({folder}/report.md)"
    return f"[{folder}]({folder})" if (out / folder).exists() else f"{folder} (not written)"


def _layout(command: str, name: str):
    part = command.split()[0]
    try:
        module = importlib.import_module(f"bias_hub.pipelines.{part}.report")
    except ModuleNotFoundError:
        raise StudyError(f"layout {name!r}: no report module for `{command}`") from None
    layouts = getattr(module, "PAPER_LAYOUTS", {})
    if name not in layouts:
        raise StudyError(
            f"layout {name!r}: pipelines/{part}/report.py has no such PAPER_LAYOUTS entry "
            f"(has: {', '.join(sorted(layouts)) or 'none'})"
        )
    return layouts[name]


def render_reproduction(record: dict, out: Path) -> Path:
    """report.md of a reproduction, from its record and its steps' results.json (re-rendered by
    ``bias-hub report``)."""
    paper = record.get("paper") or {}
    lines = [f"# {record['title'] or record['study']}: reproduced with bias-hub", ""]
    lines.append(f"Study `{record['study']}` v{record['version']}.")
    if paper.get("citation"):
        lines += ["", f"Paper: {paper['citation']}"]
    if paper.get("later_version"):
        lines += ["", f"Later version: {paper['later_version']}"]
    lines.append("")
    if record.get("variant"):
        lines += [
            f"**Variant `{record['variant']}` — not the paper's setting:** "
            f"{record['variant_description'].rstrip().rstrip('.')}. "
            "Its numbers test the pipeline, they do not reproduce the paper's.",
            "",
        ]
    if record["models"]:
        lines += ["Models: " + ", ".join(f"`{m}`" for m in record["models"]), ""]
    if record.get("overrides"):
        lines += [
            "Departures given on the command line (`--set`): "
            + ", ".join(f"`{k}` = {v!r}" for k, v in record["overrides"].items()),
            "",
        ]
    lines += ["## Steps", "", "| step | command | run folder |", "|---|---|---|"]
    for step in record["steps"]:
        lines.append(f"| {step['id']} | `{step['command']}` | {_step_link(out, step.get('out'))} |")
    lines.append("")
    if record.get("settings"):
        lines += ["## Settings: what the paper states and our reading", ""]
        lines += basis_markdown(record["settings"])
    # The bias-hub command of each step ("nli evaluate"): the study's for every step, the ones
    # run as their command lines say ("bias-hub nli evaluate --model ...").
    commands = {
        **(record.get("commands") or {}),
        **{s["id"]: s["command"].split(maxsplit=1)[1] for s in record["steps"]},
    }
    for table in record["tables"]:
        section = f" ({table['section']})" if table.get("section") else ""
        lines += [f"## {table.get('title') or table['id']}{section}", ""]
        runs = [s for s in record["steps"] if s["id"] == table["step"]]
        if table["step"] not in commands:
            lines += [f"Step `{table['step']}` was not run.", ""]
            continue
        layout = _layout(commands[table["step"]], table["layout"])
        if not runs:
            # Skipped by the variant: the paper's values alone.
            lines += [f"Step `{table['step']}` was not run in this reproduction.", ""]
            lines += [layout(None, table.get("printed") or {}).rstrip(), ""]
            continue
        for run in runs:
            results_path = out / run["out"] / "results.json" if run.get("out") else None
            if results_path is None or not results_path.is_file():
                lines += [f"No results.json for step `{run['id']}` at {results_path}.", ""]
                lines += [layout(None, table.get("printed") or {}).rstrip(), ""]
                continue
            results = json.loads(results_path.read_text(encoding="utf-8"))
            if run.get("model") and len(runs) > 1:
                lines += [f"### `{run['model']}`", ""]
            lines += [_relink(layout(results, table.get("printed") or {}).rstrip(), run["out"]), ""]
            if table.get("figure"):
                figure = f"{run['out']}/{table['figure']}"
                lines += [f"[![{table['id']}]({figure})]({figure})", ""]
            lines += [f"Ours from `{run['out']}/results.json`; printed values from the paper.", ""]
    return atomic_write_text(out / "report.md", "\n".join(lines))
