"""A toy study for `bias-hub reproduce` tests: one command, "toy count", registered on the real
command line for the test, which counts the words of --text (and records the dataset folder it
is given, as every part records what it read)."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest
import yaml

from bias_hub.pipelines import cli
from bias_hub.pipelines.common.arguments import add_verbosity_flags
from bias_hub.pipelines.common.run_folder import RunFolder

__all__ = ["CALLS", "install_toy", "toy_study", "write_study"]

CALLS: list[list[str]] = []


def _toy_count(args) -> int:
    CALLS.append([args.text, str(args.out)])
    with RunFolder(args.out) as run:
        run.record_inputs(
            datasets=[(args.dataset, "all")] if args.dataset else [],
            settings={"text": args.text, "scale": args.scale},
        )
        run.write_json(
            "results.json",
            {"part": "toy", "step": "count", "words": len(args.text.split()), "scale": args.scale},
        )
        run.write_text("report.md", "toy\n")
    return 0


def _register(subparsers) -> None:
    toy = subparsers.add_parser("toy").add_subparsers(dest="toy_command", required=True)
    count = toy.add_parser("count")
    count.add_argument("--text", required=True)
    count.add_argument("--out", type=Path, required=True)
    count.add_argument("--scale", type=int, default=1)
    count.add_argument("--model", nargs="+", action="extend")
    count.add_argument("--token")
    count.add_argument("--dataset", type=Path)
    count.add_argument("--lowercase", action="store_true")
    add_verbosity_flags(count)
    count.set_defaults(func=_toy_count)


def _words_table(results: dict, printed: dict) -> str:
    return (
        "| | ours | paper |\n|---|---|---|\n"
        f"| words | {results['words'] * results['scale']} | {printed['words']} |"
    )


def toy_study(**changes) -> dict:
    """The toy study's data; ``changes`` replace its top-level keys."""
    study = {
        "study": "toy",
        "version": "2",
        "title": "A toy paper",
        "paper": {"citation": "Author (2024). Toy. In Proc. Toys."},
        "models": [{"id": "org/paper-model", "section": "§3"}],
        "inputs": [{"kind": "file", "name": "corpus", "how": "download the corpus"}],
        "steps": [
            {
                "id": "count",
                "command": "toy count",
                "args": {"text": "one two three", "out": "{out}/count", "scale": 1},
            }
        ],
        "tables": [
            {
                "id": "t1",
                "title": "Table 1: words",
                "step": "count",
                "layout": "words",
                "printed": {"words": 3},
            }
        ],
        "variants": {"double": {"description": "counts twice", "set": {"count.scale": 2}}},
    }
    return {**study, **changes}


def install_toy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Register "toy count" and its report module (which makes it a part's command)."""
    real = cli.build_parser

    def build_parser(argv=None):
        parser = real()
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        _register(sub)
        return parser

    monkeypatch.setattr(cli, "build_parser", build_parser)
    report = types.ModuleType("bias_hub.pipelines.toy.report")
    report.PAPER_LAYOUTS = {"words": _words_table}
    monkeypatch.setitem(
        sys.modules, "bias_hub.pipelines.toy", types.ModuleType("bias_hub.pipelines.toy")
    )
    monkeypatch.setitem(sys.modules, "bias_hub.pipelines.toy.report", report)
    CALLS.clear()


def write_study(folder: Path, data: dict) -> Path:
    path = folder / f"{data['study']}.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path
