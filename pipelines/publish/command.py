"""``bias-hub publish --namespace ORG [--only NAME ...] [--push] [--private]``.

Without ``--push`` a dry run: every dataset folder and metric module, its repo
id, repo type, visibility and every file with its size, and every problem that
would stop the upload. With ``--push`` the same plan is uploaded, but only if
it has no problem at all: nothing is uploaded while anything is wrong.

A push never deletes a file already on the Hub that the plan lacks (one added or
kept there by hand, or one an earlier build had): it lists them before the first
upload and keeps them. With ``--prune`` it deletes exactly the files it listed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from bias_hub.pipelines.common.arguments import add_root_flags
from bias_hub.pipelines.publish import hub_rules
from bias_hub.pipelines.publish.dataset_repo import (
    check_dataset_folder,
    discover_dataset_folders,
    plan_dataset,
)
from bias_hub.pipelines.publish.plan import RepoPlan, format_plan, human_size
from bias_hub.pipelines.publish.space_repo import (
    check_metric_module,
    discover_metric_modules,
    plan_metric,
)


def build_plans(
    namespace: str,
    *,
    datasets_root: Path,
    metrics_root: Path,
    only: Sequence[str] | None = None,
    private: bool = False,
) -> tuple[list[RepoPlan], list[str]]:
    """``(plans, notes)`` for every selected dataset folder and metric module.

    A dataset folder that was never built is skipped with a note unless it was
    named in ``only``, where it is a problem of its plan.
    """
    if not hub_rules.HUB_NAME.match(namespace):
        raise ValueError(f"--namespace {namespace!r} is not a valid Hub user or organisation name")
    dataset_folders = {p.name: p for p in discover_dataset_folders(datasets_root)}
    metric_folders = {p.name: p for p in discover_metric_modules(metrics_root)}
    chosen = set(only or [])
    unknown = sorted(chosen - set(dataset_folders) - set(metric_folders))
    if unknown:
        known = sorted(set(dataset_folders) | set(metric_folders)) or ["(none)"]
        raise ValueError(
            f"--only: {', '.join(unknown)} is neither a folder in {datasets_root} nor a module in "
            f"{metrics_root}; known: {', '.join(known)}"
        )
    plans: list[RepoPlan] = []
    notes: list[str] = []
    for name, folder in dataset_folders.items():
        if chosen and name not in chosen:
            continue
        checked = check_dataset_folder(folder)
        if not checked.built and name not in chosen:
            notes.append(f"skipped dataset {name}: {checked.problems[0]}")
            continue
        plans.append(plan_dataset(checked, namespace, private))
    for name, folder in metric_folders.items():
        if chosen and name not in chosen:
            continue
        plans.append(plan_metric(check_metric_module(folder), namespace, private))
    return plans, notes


def publish(
    namespace: str,
    *,
    only: Sequence[str] | None = None,
    push: bool = False,
    prune: bool = False,
    private: bool = False,
    datasets_root: Path | None = None,
    metrics_root: Path | None = None,
    api: Any | None = None,
    echo: Callable[[str], None] = print,
) -> list[RepoPlan]:
    """Plan, print, and with ``push`` upload; remote files the plan lacks are deleted only with
    ``prune``. ``api`` replaces ``HfApi`` (tests pass a fake)."""
    from bias_hub.pipelines.common.locations import default_datasets_root, default_metrics_root

    datasets_root = Path(datasets_root) if datasets_root else default_datasets_root()
    metrics_root = Path(metrics_root) if metrics_root else default_metrics_root()
    plans, notes = build_plans(
        namespace,
        datasets_root=datasets_root,
        metrics_root=metrics_root,
        only=only,
        private=private,
    )
    for note in notes:
        echo(note)
    if not plans:
        raise ValueError(
            f"nothing to publish: no built dataset folder in {datasets_root} and no module in {metrics_root}"
        )
    echo(format_plan(plans))
    refused = [plan for plan in plans if plan.problems]
    if refused:
        details = "; ".join(f"{plan.repo_id} ({plan.problems[0]})" for plan in refused)
        raise ValueError(
            f"{len(refused)} of {len(plans)} repos cannot be published, nothing was uploaded: {details}"
        )
    n_files = sum(len(plan.files) for plan in plans)
    total = human_size(sum(plan.total_size for plan in plans))
    if not push:
        echo(
            f"dry run: {len(plans)} repos, {n_files} files, {total}; nothing uploaded (add --push). "
            "A push lists the files on the Hub that the plan lacks and keeps them"
            + ("; with --prune it deletes them" if prune else " (--prune deletes them)")
        )
        return plans
    from bias_hub.pipelines.publish.push import hub_api, push_plans

    push_plans(
        api if api is not None else hub_api("publish"), plans, namespace, prune=prune, echo=echo
    )
    echo(f"pushed {len(plans)} repos ({n_files} files checked, {total})")
    return plans


def run(args: argparse.Namespace) -> None:
    flags = ("only", "push", "prune", "private", "datasets_root", "metrics_root")
    publish(args.namespace, **{name: getattr(args, name) for name in flags})


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "publish",
        help="publish dataset folders and metric modules to the Hugging Face Hub (dry run by default)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--namespace", required=True, metavar="ORG", help="Hub user or organisation"
    )
    parser.add_argument("--only", nargs="+", metavar="NAME", help="only these datasets / metrics")
    parser.add_argument("--push", action="store_true", help="upload (default: print the plan only)")
    parser.add_argument(
        "--prune",
        action="store_true",
        help="with --push, delete the files on the Hub that the plan lacks (listed first); without "
        "it they are listed and kept",
    )
    parser.add_argument(
        "--private",
        action="store_true",
        help="create private repos; required for datasets whose card says `redistributable: false`",
    )
    add_root_flags(parser)
    parser.set_defaults(func=run)
