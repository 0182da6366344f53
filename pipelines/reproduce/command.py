"""``bias-hub reproduce`` (a paper's tables from its study file) and ``bias-hub report`` (re-render
a run folder's report from its results.json).

``report`` checks results.json against the manifest first: one that is not what the run wrote
is refused, naming it, or with ``--allow-edited`` rendered with every table stamped as edited.
The manifest is never re-hashed to fit: the files the re-render copies keep the entries the
run wrote (an edited one stays edited), and a file the run did not write stays unlisted."""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
from pathlib import Path

from bias_hub.builders.shared.files import atomic_write_text, read_text
from bias_hub.builders.shared.text import code_span, stamp_tables
from bias_hub.pipelines.common.arguments import add_flags, add_root_flags, add_verbosity_flags
from bias_hub.pipelines.common.provenance import file_sha256, inputs_lines
from bias_hub.pipelines.common.run_folder import (
    ARGV_PATHS,
    INPUTS,
    MANIFEST,
    STUDY_STEP,
    RunFolder,
    read_manifest,
)
from bias_hub.pipelines.reproduce.run import (
    EDITED,
    edited_results,
    refuse_edited,
    render_reproduction,
    reproduce,
)
from bias_hub.pipelines.reproduce.study import list_studies, load_study, parse_set

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "reproduce",
        help="run a paper's study (its models, settings and steps) and write its tables beside ours",
        description="Each paper is a versioned study file (pipelines/studies/*.yaml). --list shows them; "
        "--dry-run prints each step as the bias-hub command it runs and what inputs are missing.",
    )
    parser.add_argument("study", nargs="?", help="study name (see --list) or a study YAML file")
    parser.add_argument("--list", action="store_true", help="one line per study, its name first")
    parser.add_argument(
        "--dry-run", action="store_true", help="print the plan and the inputs' state; run nothing"
    )
    add_flags(
        parser,
        ("--out", Path, "output folder (one run folder per step, report.md)"),
        ("--variant", None, "a named substitute of the study, such as offline (see --dry-run)"),
    )
    parser.add_argument(
        "--models", nargs="+", metavar="MODEL", help="models instead of the paper's"
    )
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="[STEP.]KEY=VALUE",
        help="change a step argument (STEP.KEY) or the same argument of every step (KEY)",
    )
    parser.add_argument(
        "--input",
        dest="inputs",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="where a file input of the study is (see --dry-run)",
    )
    add_root_flags(parser, metrics=False)
    parser.add_argument(
        "--allow-stand-ins",
        action="store_true",
        help="run the paper's setting on stand-ins (a sample or generated dataset) instead of "
        "stopping; every table computed on one then says so",
    )
    parser.add_argument(
        "--allow-any-command",
        action="store_true",
        help="let the study's steps run any bias-hub command (by default: the parts' commands, "
        "build without --force and report; never publish)",
    )
    add_verbosity_flags(parser)
    parser.set_defaults(func=_reproduce)

    report = subparsers.add_parser(
        "report", help="re-render a run folder's report.md (and figures) from its results.json"
    )
    report.add_argument(
        "run_dir", type=Path, metavar="RUN_DIR", help="a run folder written by bias-hub"
    )
    report.add_argument(
        "--allow-edited",
        action="store_true",
        help="render a results.json that is not what its run wrote (refused by default), with "
        "every table stamped as edited",
    )
    add_verbosity_flags(report)
    report.set_defaults(func=_report)


def _pairs(items: list[str], flag: str) -> dict[str, str]:
    pairs = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ValueError(f"{flag} {item!r}: expected NAME=PATH")
        if name in pairs:
            raise ValueError(f"{flag} {name}: given twice ({pairs[name]} and {value})")
        pairs[name] = value
    return pairs


def _reproduce(args: argparse.Namespace) -> int:
    if args.list:
        for study in list_studies():
            variants = f" (variants: {', '.join(study.variants)})" if study.variants else ""
            print(f"{study.name}  v{study.version}  {study.title}{variants}")
        return 0
    if not args.study:
        raise ValueError("give a study name (bias-hub reproduce --list shows them)")
    if not args.dry_run and args.out is None:
        raise ValueError("--out: required to run a study (or use --dry-run)")
    study = load_study(args.study)
    text = reproduce(
        study,
        args.out or Path("OUT"),
        variant=args.variant,
        models=args.models,
        overrides=parse_set(args.overrides),
        inputs=_pairs(args.inputs, "--input"),
        datasets_root=args.datasets_root,
        dry_run=args.dry_run,
        allow_stand_ins=args.allow_stand_ins,
        allow_any_command=args.allow_any_command,
    )
    print(text)
    return 0


def _results(path: Path) -> dict:
    """A run folder's results.json, or a ValueError naming it (not JSON, not an object)."""
    try:
        results = json.loads(read_text(path))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}: damaged, not JSON ({err})") from None
    if not isinstance(results, dict):
        raise ValueError(f"{path}: damaged, a JSON {type(results).__name__} instead of an object")
    return results


def _report(args: argparse.Namespace) -> int:
    run_dir = args.run_dir
    results_path = run_dir / "results.json"
    if not results_path.is_file():
        raise FileNotFoundError(
            f"RUN_DIR {run_dir}: no results.json (is it a bias-hub run folder?)"
        )
    problem = edited_results(run_dir)
    if problem and not args.allow_edited:
        raise refuse_edited(problem)
    results = _results(results_path)
    stamp = EDITED.format(what=code_span(problem)) if problem else None
    part = results.get("part")
    if part == "reproduce":
        report = render_reproduction(results, run_dir, allow_edited=args.allow_edited)
        if stamp:
            atomic_write_text(report, stamp_tables(report.read_text(encoding="utf-8"), stamp))
        print(f"wrote {report}")
        return 0
    if not isinstance(part, str) or not part.isidentifier():
        raise ValueError(f"{results_path}: no 'part' key naming the part that wrote it")
    try:
        module = importlib.import_module(f"bias_hub.pipelines.{part}.report")
    except ModuleNotFoundError:
        raise ValueError(f"{results_path}: part {part!r} has no report module") from None
    if not hasattr(module, "render"):
        raise ValueError(f"pipelines/{part}/report.py has no render(results, folder)")
    manifest = read_manifest(run_dir) or {}
    written = {entry.get("path"): entry for entry in manifest.get("files") or []}
    with RunFolder(run_dir, copies_all=True) as run:
        copied = {}
        for path in sorted(p for p in run_dir.rglob("*") if p.is_file() and p.name != MANIFEST):
            name = path.relative_to(run_dir).as_posix()
            shutil.copy2(path, run.path(name))
            copied[name] = file_sha256(path)
        run.info["rerendered"] = True
        for key in (INPUTS, STUDY_STEP, ARGV_PATHS):
            if key in manifest:
                run.info[key] = manifest[key]
        if problem:
            run.info["rendered_from_edited"] = problem
        try:
            module.render(results, run.staging)
        except (KeyError, TypeError, AttributeError, IndexError) as err:
            # The file was edited, cut, or written by another version: say so, not a traceback.
            raise ValueError(
                f"{results_path}: report.md cannot be rendered from it ({type(err).__name__}: "
                f"{err}); is it damaged, or written by another version of bias-hub?"
            ) from None
        if stamp:
            report = run.staging / "report.md"
            atomic_write_text(report, stamp_tables(report.read_text(encoding="utf-8"), stamp))
        # A file the render left as it was keeps the run's entry (or stays unlisted).
        for name, digest in copied.items():
            if file_sha256(run.staging / name) == digest:
                run.kept_entries[name] = written.get(name)
    print(f"wrote {run_dir / 'report.md'}")
    print("inputs:")
    print("\n".join(f"  {line}" for line in inputs_lines(manifest.get(INPUTS))))
    return 0
