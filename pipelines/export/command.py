"""``bias-hub export lm-eval|inspect --out DIR``: JBBQ and BBQ as lm-evaluation-harness or
Inspect AI tasks; ``bias-hub export eval-results RUN_DIR... --out DIR``: runs as the Hub's
evaluation results of model repos."""

from __future__ import annotations

import argparse
from pathlib import Path

from bias_hub.pipelines.common.arguments import (
    add_answer_reader_flag,
    add_flags,
    add_root_flags,
    settings_defaults,
    settings_from_args,
)
from bias_hub.pipelines.export.settings import Settings

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction) -> None:
    export = subparsers.add_parser("export", help="write the benchmarks in another tool's format")
    inner = export.add_subparsers(dest="format", required=True, metavar="FORMAT")
    lm_eval = inner.add_parser(
        "lm-eval",
        help="JBBQ and BBQ as lm-evaluation-harness tasks: writes DIR/jbbq/*.yaml, DIR/bbq/*.yaml, "
        "their utils.py, data/ and tasks.json (lm-eval run ... --include_path DIR)",
        description="Write JBBQ (the paper's prompts; generation and multiple-choice; each few-shot count) and "
        "BBQ as lm-evaluation-harness 0.4 tasks whose results table shows bias-hub's scores.",
    )
    _add_arguments(lm_eval)
    lm_eval.set_defaults(func=_run, export_module="lm_eval")
    inspect = inner.add_parser(
        "inspect",
        help="JBBQ and BBQ as Inspect AI tasks: writes DIR/tasks.py, scoring.py, prompts.json, "
        "data/ and tasks.json (inspect eval DIR/tasks.py@jbbq ...; installed, inspect eval "
        "bias_hub/jbbq needs no export)",
        description="Write JBBQ (the paper's prompts, each few-shot count) and BBQ as Inspect AI tasks whose "
        "scorer reads each reply with bias-hub's answer reader and whose metrics are bbq_bias's scores.",
    )
    _add_arguments(inspect)
    inspect.set_defaults(func=_run, export_module="inspect_tasks")
    path = inner.add_parser(
        "lm-eval-path",
        help="print the folder of lm-evaluation-harness tasks the installed package ships (for "
        "lm-eval ... --include_path), which read the built datasets when they run; writes nothing",
    )
    path.set_defaults(func=_lm_eval_path)
    _add_eval_results(
        inner.add_parser(
            "eval-results",
            help="runs' headline numbers as the Hub's evaluation results of a model repo: writes "
            "DIR/<model>/.eval_results/<benchmark>_<setting>.yaml (--push opens a pull request)",
            description="Write each run's values of its benchmark's tasks (the tasks of the dataset's "
            "eval.yaml) as .eval_results/*.yaml files, one per model and setting, for the Hub's model "
            "pages and the benchmark's leaderboard. A dry run unless --push.",
        )
    )


def _add_arguments(parser: argparse.ArgumentParser) -> None:
    settings_defaults(parser, Settings)
    parser.add_argument(
        "--out",
        required=True,
        help="the task folder, replaced whole when the export succeeds; refused while it holds files an "
        "earlier export did not write (or that were changed since), which it names",
    )
    parser.add_argument(
        "--jbbq",
        metavar="DIR_OR_NAME",
        help="the JBBQ dataset folder, or a name under --datasets-root (default: %(default)s)",
    )
    parser.add_argument(
        "--bbq",
        metavar="DIR_OR_NAME",
        help="the BBQ dataset folder (default: bbq under --datasets-root when built, else no BBQ task)",
    )
    parser.add_argument(
        "--preset",
        metavar="NAME_OR_FILE",
        help="the `jbbq evaluate` study preset giving prompts, layout, split, reply length and answer "
        "reader (default: %(default)s)",
    )
    parser.add_argument(
        "--prompt",
        dest="prompts",
        nargs="+",
        metavar="NAME",
        help="prompt names or .yaml files (default: the preset's)",
    )
    parser.add_argument(
        "--layout",
        metavar="LAYOUT",
        help="prompt layout, a name or a .yaml file (default: the preset's)",
    )
    parser.add_argument(
        "--shots", nargs="+", type=int, metavar="K", help="few-shot counts (default: 0 4)"
    )
    parser.add_argument(
        "--shot-pool",
        type=int,
        metavar="N",
        help="few-shot templates drawn once per seed, as jbbq evaluate --shot-pool (default: %(default)s)",
    )
    add_flags(
        parser,
        ("--split", None, "questions of this split, or all (default: the preset's)"),
        ("--max-new-tokens", int, "reply length of the generation tasks (default: the preset's)"),
    )
    add_answer_reader_flag(parser, "the preset's (paper: llm-jp-eval)")
    add_flags(
        parser,
        ("--limit", int, "at most this many questions per category (as jbbq evaluate --limit)"),
        ("--seed", int, "seed of the few-shot choice and --limit (default: %(default)s)"),
    )
    add_root_flags(parser, metrics=False)


def _add_eval_results(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "runs",
        nargs="*",
        metavar="RUN_DIR",
        help="run folders (jbbq evaluate, score, nli evaluate, stereoset, speciesism)",
    )
    parser.add_argument(
        "--namespace",
        required=True,
        metavar="ORG",
        help="the Hub namespace the benchmark datasets are published under (dataset.id = ORG/<dataset>)",
    )
    parser.add_argument(
        "--out",
        required=True,
        help="folder for DIR/<model>/.eval_results/*.yaml, replaced whole when the export succeeds",
    )
    parser.add_argument(
        "--study", metavar="NAME", help="also the values NAME's paper printed, as printed"
    )
    parser.add_argument(
        "--source-url", metavar="URL", help="where the results can be checked (logs, a report)"
    )
    parser.add_argument(
        "--source-name", metavar="NAME", help="the source's name (with --source-url)"
    )
    parser.add_argument(
        "--push",
        action="store_true",
        help="open a pull request on --model with the files (default: write them only)",
    )
    parser.add_argument(
        "--model", metavar="ORG/NAME", help="the model repo --push opens the pull request on"
    )
    parser.add_argument(
        "--allow-stand-ins",
        action="store_true",
        help="write results of runs on stand-in data (sample templates, generated sets), labelled "
        "so in their notes; a dry run only, never pushed",
    )
    parser.set_defaults(func=_eval_results)


def _lm_eval_path(args: argparse.Namespace) -> int:
    from bias_hub.pipelines.export.lm_eval import INSTALLED

    print(INSTALLED)
    return 0


def _eval_results(args: argparse.Namespace) -> int:
    from bias_hub.pipelines.export.eval_results import Settings as EvalSettings
    from bias_hub.pipelines.export.eval_results import export

    export(args.runs, Path(args.out), settings_from_args(EvalSettings, args))
    return 0


def _run(args: argparse.Namespace) -> int:
    import importlib

    export = importlib.import_module(f"bias_hub.pipelines.export.{args.export_module}").export
    export(Path(args.out), settings_from_args(Settings, args))
    return 0
