"""``bias-hub reproduce`` (a paper's tables from its study file) and ``bias-hub report`` (re-render
a run folder's report from its results.json)."""

from __future__ import annotations

import argparse
import importlib
import json
import shutil
from pathlib import Path

from bias_hub.pipelines.common.arguments import add_root_flags, add_verbosity_flags
from bias_hub.pipelines.common.provenance import inputs_lines
from bias_hub.pipelines.common.run_folder import INPUTS, MANIFEST, RunFolder
from bias_hub.pipelines.reproduce.run import render_reproduction, reproduce
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
    parser.add_argument(
        "--out", type=Path, help="output folder (one run folder per step, report.md)"
    )
    parser.add_argument(
        "--variant", help="a named substitute of the study, such as offline (see --dry-run)"
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
    from bias_hub.builders.shared.files import read_text

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
    results = _results(results_path)
    part = results.get("part")
    if part == "reproduce":
        print(f"wrote {render_reproduction(results, run_dir)}")
        return 0
    if not isinstance(part, str) or not part.isidentifier():
        raise ValueError(f"{results_path}: no 'part' key naming the part that wrote it")
    try:
        module = importlib.import_module(f"bias_hub.pipelines.{part}.report")
    except ModuleNotFoundError:
        raise ValueError(f"{results_path}: part {part!r} has no report module") from None
    if not hasattr(module, "render"):
        raise ValueError(f"pipelines/{part}/report.py has no render(results, folder)")
    inputs = _recorded_inputs(run_dir)
    with RunFolder(run_dir, copies_all=True) as run:
        for path in sorted(p for p in run_dir.rglob("*") if p.is_file() and p.name != MANIFEST):
            shutil.copy2(path, run.path(path.relative_to(run_dir).as_posix()))
        run.info["rerendered"] = True
        if inputs is not None:
            run.info[INPUTS] = inputs
        try:
            module.render(results, run.staging)
        except (KeyError, TypeError, AttributeError, IndexError) as err:
            # The file was edited, cut, or written by another version: say so, not a traceback.
            raise ValueError(
                f"{results_path}: report.md cannot be rendered from it ({type(err).__name__}: "
                f"{err}); is it damaged, or written by another version of bias-hub?"
            ) from None
    print(f"wrote {run_dir / 'report.md'}")
    print("inputs:")
    print("\n".join(f"  {line}" for line in inputs_lines(inputs)))
    return 0


def _recorded_inputs(run_dir: Path) -> dict | None:
    """The input fingerprints the run recorded (kept when its report is re-rendered)."""
    try:
        manifest = json.loads((run_dir / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest.get(INPUTS) if isinstance(manifest, dict) else None
