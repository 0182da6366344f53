"""``bias-hub reproduce``: run a study's steps and lay out the paper's tables beside ours.

The output folder holds one run folder per step and, once every step has finished,
``report.md``, ``results.json`` and its ``manifest.json``. A step is reused only when
``run_folder.why_rerun`` finds nothing against its earlier run (docs/reproduce.md), so an
interrupted reproduction resumes and a changed input, file or code reruns the steps concerned,
each saying why. A ``build`` step writes no run folder: the ledger (``steps.json``) keeps its
record (``build_steps``). A paper run on a stand-in dataset stops before any work unless
``--allow-stand-ins``.
"""

from __future__ import annotations

import importlib
import itertools
import json
import logging
import os
import re
import shlex
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bias_hub.builders.shared.console import command_line
from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.files import (
    atomic_write_text,
    ensure_writable_folder,
    read_text,
    write_json,
)
from bias_hub.builders.shared.secrets import redact, redact_data
from bias_hub.builders.shared.text import code_span, stamp_tables, table_cell
from bias_hub.pipelines.common.presets import basis_markdown, basis_record, load_preset
from bias_hub.pipelines.common.provenance import file_sha256, inputs_lines, stand_ins
from bias_hub.pipelines.common.render import render
from bias_hub.pipelines.common.run_folder import (
    INPUTS,
    MANIFEST,
    as_study_step,
    edited_files,
    read_manifest,
    why_rerun,
)
from bias_hub.pipelines.reproduce.build_steps import build_lines, run_build
from bias_hub.pipelines.reproduce.inputs import (
    check_inputs,
    missing_text,
    stand_in_text,
    step_models,
)
from bias_hub.pipelines.reproduce.study import PlannedStep, Study, StudyError, plan

__all__ = [
    "EDITED",
    "LEDGER",
    "dry_run_text",
    "edited_results",
    "refuse_edited",
    "render_reproduction",
    "reproduce",
]

log = logging.getLogger(__name__)
LEDGER = "steps.json"


def _command_text(step: PlannedStep) -> str:
    return "bias-hub " + shlex.join(step.argv)


def dry_run_text(study: Study, steps: list[PlannedStep], checks: list, variant: str | None) -> str:
    commands = [_command_text(step) for step in steps]
    text = render(
        "reproduce/templates/dry_run.txt.j2",
        study=study,
        steps=steps,
        commands=commands,
        checks=checks,
        variant=variant,
    )
    return text.removesuffix("\n")


def _ledger(out: Path) -> dict:
    """What earlier runs into ``out`` wrote, step by step; a ledger that is not one is refused
    (reusing steps on its word would be reusing them on nothing)."""
    path = out / LEDGER
    if not path.is_file():
        return {}
    try:
        ledger = json.loads(read_text(path))
    except (ValueError, RecursionError) as err:
        ledger = err
    # (a step of an older ledger is its argv alone, a list)
    if not isinstance(ledger, dict) or not all(
        isinstance(v, (dict, list)) for v in ledger.values()
    ):
        found = (
            "text that is not JSON or is nested too deep"
            if isinstance(ledger, Exception)
            else f"a JSON {type(ledger).__name__}"
        )
        raise ValueError(
            f"{path}: not a reproduction ledger (a JSON object of steps expected, got {found}); "
            "remove it and every step runs again"
        )
    return ledger


def _check_out(out: Path) -> None:
    ensure_writable_folder(out, "--out")
    if out.is_dir() and any(out.iterdir()) and not (out / LEDGER).is_file():
        raise ValueError(
            f"--out {out}: exists, is not empty and is not a reproduction folder (no {LEDGER}); "
            "give a new or empty folder, or the folder of an earlier `bias-hub reproduce` to resume"
        )


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


def _manifest_inputs(folder: Path | None) -> dict | None:
    manifest = None if folder is None else read_manifest(folder)
    return None if manifest is None else manifest.get(INPUTS)


def _why_rerun(step: PlannedStep, owner: dict, earlier: Any) -> str | None:
    """None when the step's earlier run still holds (``run_folder.why_rerun``); else why not
    (an empty text: it never ran here)."""
    if step.out is None:  # a build step: the ledger holds what it read and wrote
        return "" if earlier is None else why_rerun(owner, record=earlier)
    if earlier is None and not (step.out / MANIFEST).is_file():
        return ""
    return why_rerun(owner, folder=step.out)


def _refuse_unused_models(study: Study, steps: list[PlannedStep], models: list[str] | None) -> None:
    """A model given with --models that no step loads would be dropped without a word."""
    used = {word for step in steps for word in [*step.argv, *step_models(step)]}
    unused = [model for model in models or [] if model not in used]
    if unused:
        raise StudyError(
            f"--models {' '.join(unused)}: no step of {study.name} loads it (each step takes "
            "the models its study file names by {model} or {models}); give it to a step with "
            "--set STEP.KEY=MODEL"
        )


def _set_aside(folder: Path) -> Path | None:
    """A step's folder holding files edited since its run wrote them, renamed beside itself
    (``NAME.edited-N``) so that the rerun replaces none of them; None when it holds none."""
    if not any(
        line.endswith(" was edited since the run wrote it") for line in edited_files(folder)
    ):
        return None
    aside = next(
        folder.with_name(f"{folder.name}.edited-{n}")
        for n in itertools.count(1)
        if not folder.with_name(f"{folder.name}.edited-{n}").exists()
    )
    folder.rename(aside)
    return aside


def _unknown_inputs(study: Study, variant: str | None, given: dict[str, str]) -> None:
    files = [item["name"] for item in study.inputs_of(variant) if item["kind"] == "file"]
    unknown = sorted(set(given) - set(files))
    if unknown:
        which = f"{study.name}" + (f" (variant {variant})" if variant else "")
        raise StudyError(
            f"--input {', '.join(unknown)}: not a file input of {which}; it takes "
            f"{', '.join(f'--input {name}=PATH' for name in files) or 'no --input'}"
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
    allow_stand_ins: bool = False,
    allow_any_command: bool = False,
) -> str:
    """Run (or, with ``dry_run``, describe) the study; returns the text printed for the user.

    Everything is checked before the first step runs: every step's command line (by its own
    parser), the inputs, and, for a paper run, that no input is a stand-in (unless
    ``allow_stand_ins``)."""
    # bias_hub.pipelines.cli registers this package's commands: imported where used, so no import circle.
    from bias_hub.pipelines.cli import build_parser

    parser = build_parser()
    _unknown_inputs(study, variant, dict(inputs or {}))
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
        parser=parser,
        allow_any_command=allow_any_command,
    )
    _refuse_unused_models(study, steps, models)
    checks = check_inputs(
        study,
        steps,
        out,
        given=dict(inputs or {}),
        datasets_root=datasets_root,
        built_by_steps={s.argv[1] for s in steps if s.argv[:1] == ["build"] and len(s.argv) > 1},
        variant=variant,
    )
    if dry_run:
        return redact(dry_run_text(study, steps, checks, variant))
    missing = missing_text(checks)
    if missing:
        raise ValueError(
            f"{study.name}: cannot start, inputs are missing (nothing was run):\n{missing}"
        )
    if variant is None and not allow_stand_ins and any(c.stand_in for c in checks):
        raise ValueError(
            f"{study.name}: the paper's run would use stand-ins, not the paper's data (nothing "
            f"was run):\n{stand_in_text(checks)}\nGet the real input as said, run a variant "
            "(--variant), or pass --allow-stand-ins to run on them (every table then says so)"
        )
    _check_out(out)
    out.mkdir(parents=True, exist_ok=True)
    ledger = _ledger(out)
    for i, step in enumerate(steps, 1):
        key = _key(step)
        owner = {"study": study.name, "step": key, "argv": redact_data(step.argv)}
        why = _why_rerun(step, owner, ledger.get(key))
        if why is None:
            log.info(
                "[%d/%d] %s: reused (same command, code and inputs; its files as written)",
                i,
                len(steps),
                step.id,
            )
            continue
        aside = _set_aside(step.out) if why and step.out is not None else None
        if aside is not None:
            why += f"; the folder as edited is kept as {os.path.relpath(aside, out)}"
        if why:
            log.info("[%d/%d] %s: rerun, %s", i, len(steps), step.id, why)
        log.info("[%d/%d] %s", i, len(steps), _command_text(step))
        with as_study_step(owner) as entry:
            entry = dict(entry)
            if step.out is None:
                entry.update(run_build(step.argv, parser, lambda step=step: _run_step(step)))
            else:
                _run_step(step)
        ledger[key] = redact_data(entry)
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
        "models": list(dict.fromkeys(m for step in steps for m in step_models(step))),
        "paper_models": study.models,
        "overrides": dict(overrides or {}),
        "allow_stand_ins": allow_stand_ins,
        "steps": [
            {
                "id": s.id,
                "model": s.model,
                "command": _command_text(s),
                "out": str(s.out.relative_to(out))
                if s.out and s.out.is_relative_to(out)
                else (str(s.out) if s.out else None),
                "stand_ins": stand_ins(_manifest_inputs(s.out)),
                "departures": _departures(s.out),
                "preset": _preset_of(s),
                "inputs": inputs_lines(_manifest_inputs(s.out))
                if s.out
                else build_lines(ledger.get(_key(s))),
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
    _mark_departed(record)
    record = redact_data(record)
    render_reproduction(record, out)
    results = write_json(out / "results.json", record)
    # What `bias-hub report OUT` checks results.json against before it renders it again.
    entry = {"path": results.name, "bytes": results.stat().st_size, "sha256": file_sha256(results)}
    write_json(out / MANIFEST, {"command": command_line(), "files": [entry]})
    return f"wrote {out / 'report.md'}"


def _departures(folder: Path | None) -> list[dict]:
    """The departures a step's results.json records (its preset's, the subsets of the work it
    ran, its stand-ins), or none (no results.json: a model or a dataset build)."""
    try:
        results = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError, TypeError):
        return []
    return ((results.get("preset") or {}) if isinstance(results, dict) else {}).get(
        "departures"
    ) or []


def _mark_departed(record: dict) -> None:
    """Each preset setting a step ran with another value gets that value (``this_run``), so
    the settings list never shows a value as the run's that the run did not use."""
    rows = {
        (b["command"], b["preset"], r["setting"]): r
        for b in record["settings"]
        for r in b["settings"]
    }
    for step in record["steps"]:
        for departure in step["departures"] if step["preset"] else []:
            row = rows.get((*step["preset"], departure["setting"]))
            if row is not None:
                row.setdefault("this_run", [])
                if departure["used"] not in row["this_run"]:
                    row["this_run"].append(departure["used"])


def _preset_of(step: PlannedStep) -> list[str] | None:
    """``[command, preset]`` of a step that runs with a preset, else None."""
    if "--preset" not in step.argv:
        return None
    return [step.command, step.argv[step.argv.index("--preset") + 1]]


def _preset_bases(steps: list[PlannedStep]) -> list[dict]:
    """What each preset the steps use rests on (the paper's section, or our reading), once each."""
    records = {}
    for step in steps:
        key = _preset_of(step)
        if key is not None and tuple(key) not in records:
            records[tuple(key)] = basis_record(load_preset(*key))
    return list(records.values())


def _step_link(out: Path, folder: str | None) -> str:
    """The run folder's report.md where it has one, else the folder itself (a model folder)."""
    if not folder:
        return "–"
    # A study file names the folder: its text escaped, its address percent-encoded (a "|" or a
    # space in it would end the table cell or the link).
    name, target = table_cell(folder), quote(folder)
    if (out / folder / "report.md").is_file():
        return f"[{name}]({target}/report.md)"
    return f"[{name}]({target})" if (out / folder).exists() else f"{name} (not written)"


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


def _inputs_section(steps: list[dict]) -> tuple[list[str], str]:
    """What each step read, as its manifest fingerprinted it, for a code block, and that block's
    fence: longer than any run of backticks in it, so no Markdown in a path gets through."""
    body = []
    for step in steps:
        if step.get("inputs"):
            where = step["out"] or f"a dataset build, its record in {LEDGER}"
            body += [f"{step['id']} ({where}):", *(f"  {line}" for line in step["inputs"])]
    longest = max((len(run) for run in re.findall(r"`+", "\n".join(body))), default=0)
    return body, "`" * max(3, longest + 1)


EDITED = (
    "**Edited by hand: {what} (its manifest.json keeps the sha256 the run wrote); these numbers "
    "are not a run's.**"
)


def edited_results(folder: Path) -> str | None:
    """Why ``folder/results.json`` is not what its run wrote (edited, gone, or no manifest
    vouches for it), or None."""
    if read_manifest(folder) is None:
        return f"{folder / 'results.json'}: no manifest.json records what the run wrote"
    found = [line for line in edited_files(folder) if line.startswith("results.json ")]
    return f"{folder / found[0]}" if found else None


def refuse_edited(problem: str) -> ValueError:
    return ValueError(
        f"{problem}: a report renders only what a run wrote (the manifest is never re-hashed to "
        "fit); run the step again, or pass --allow-edited to render it with every table "
        "stamped as edited"
    )


def render_reproduction(record: dict, out: Path, allow_edited: bool = False) -> Path:
    """report.md of a reproduction, from its record and its steps' results.json (re-rendered by
    ``bias-hub report``). A step's results.json that is not what the step wrote is refused
    (``refuse_edited``), or with ``allow_edited`` rendered under the stamp ``EDITED``."""
    # The bias-hub command of each step ("nli evaluate"): the study's for every step, the ones
    # run as their command lines say ("bias-hub nli evaluate --model ...").
    commands = {
        **(record.get("commands") or {}),
        **{s["id"]: s["command"].split(maxsplit=1)[1] for s in record["steps"]},
    }
    inputs, fence = _inputs_section(record["steps"])
    text = render(
        "reproduce/templates/report.md.j2",
        record=record,
        links=[_step_link(out, step.get("out")) for step in record["steps"]],
        inputs=inputs,
        fence=fence,
        settings=basis_markdown(record.get("settings") or []),
        tables=[_table(table, record, out, commands, allow_edited) for table in record["tables"]],
    )
    return atomic_write_text(out / "report.md", redact(text))


def _table(table: dict, record: dict, out: Path, commands: dict, allow_edited: bool) -> dict:
    """A study table for the template: ``runs`` None when its step is no command of the study,
    else one entry per run of the step (none: skipped by the variant), each with the layout's
    ``text`` or, without a results.json, None (then ``paper_text`` shows the paper's values)."""
    if table["step"] not in commands:
        return {**table, "runs": None}
    layout = _layout(commands[table["step"]], table["layout"])
    printed = table.get("printed") or {}
    runs = [s for s in record["steps"] if s["id"] == table["step"]]
    views = []
    for run in runs:
        path = out / run["out"] / "results.json" if run.get("out") else None
        view = {
            **run,
            "path": path,
            "text": None,
            "heading": bool(run.get("model")) and len(runs) > 1,
        }
        if path is not None and path.is_file():
            problem = edited_results(path.parent)
            if problem and not allow_edited:
                raise refuse_edited(problem)
            results = json.loads(path.read_text(encoding="utf-8"))
            view["text"] = _relink(layout(results, printed).rstrip(), run["out"])
            if problem:
                view["text"] = stamp_tables(
                    view["text"], EDITED.format(what=code_span(problem))
                ).rstrip()
        views.append(view)
    # The paper's values alone, where a run has none of its own to show beside them.
    if not views or any(view["text"] is None for view in views):
        return {**table, "runs": views, "paper_text": layout(None, printed).rstrip()}
    return {**table, "runs": views}
