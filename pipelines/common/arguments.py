"""The one shape of a pipeline: ``run(model, dataset, out_dir, settings) -> results``, and its flags.

Every command that runs a model over a dataset is declared with ``pipeline_command``, which
gives it the same flags, parses them into the part's settings dataclass (a ``RunSettings``,
flag dest = field name) and calls the part's ``run`` with the model (a Hub id or folder, a list
where the command compares several), the dataset (a folder or a name under
``settings.datasets_root``; None: the part's own), the run folder and the settings. Tests and
the demo call the same ``run`` functions with settings objects.
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bias_hub.pipelines.common.answer_reading import READERS
from bias_hub.pipelines.common.models import DTYPES
from bias_hub.pipelines.common.settings import RunSettings

__all__ = [
    "COMMON_FLAGS",
    "add_answer_reader_flag",
    "add_flags",
    "add_interval_flags",
    "add_pipeline_flags",
    "add_root_flags",
    "add_verbosity_flags",
    "confidence_level",
    "explicit_dests",
    "pipeline_command",
    "settings_defaults",
    "settings_from_args",
]

# Every pipeline command accepts these (tests/pipelines/test_command_contract.py checks it).
COMMON_FLAGS = tuple(
    "--model --dataset --out --datasets-root --metrics-root --device --dtype --device-map "
    "--token --revision --trust-remote-code --allow-untrained --seed --quiet --verbose".split()
)


def confidence_level(text: str) -> float | None:
    """argparse type of ``--confidence-level``: a number in (0, 1), or ``none`` (also ``off`` and
    ``0``: intervals off; the command warns that it read a 0 so)."""
    if text.strip().lower() in ("none", "off", "0"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a number between 0 and 1 such as 0.95, or none; got {text!r}"
        ) from None
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(
            f"expected a number between 0 and 1 such as 0.95, or none (no intervals); got {text!r}"
        )
    return value


def say_intervals_off(argv: list[str]) -> None:
    """``--confidence-level 0`` is read as ``none`` (every interval and paired test off): said on
    the console, since a 0 could also be a slip for 0.95."""
    for at, word in enumerate(argv):
        flag, equals, value = word.partition("=")
        if flag != "--confidence-level":
            continue
        value = value if equals else (argv[at + 1] if at + 1 < len(argv) else "")
        if value.strip() == "0":
            logging.getLogger("bias_hub.pipelines.cli").warning(
                "--confidence-level 0 is read as none: no bootstrap intervals, no paired tests"
            )


def add_interval_flags(
    parser: argparse.ArgumentParser, unit: str = "items", bootstrap_units: tuple[str, ...] = ()
) -> None:
    """``--confidence-level`` and ``--n-resamples``, one group for every part, and
    ``--bootstrap-unit`` where the part offers several units (its settings class's
    ``BOOTSTRAP_UNITS``). Their defaults come from the command's settings class
    (``IntervalSettings``), never from here."""
    group = parser.add_argument_group("intervals")
    group.add_argument(
        "--confidence-level",
        type=confidence_level,
        metavar="LEVEL",
        help=f"level of the bootstrap intervals over {unit} and of the paired tests, "
        "or none (also 0) to switch them off (default: %(default)s)",
    )
    group.add_argument(
        "--n-resamples",
        type=int,
        metavar="N",
        help="bootstrap resamples and permutations, 100 to 100,000 (default: %(default)s)",
    )
    if len(bootstrap_units) > 1:
        group.add_argument(
            "--bootstrap-unit",
            choices=bootstrap_units,
            help="what one bootstrap draw resamples: items (each on its own) or templates (the "
            "items of one template together, as they are not independent) (default: %(default)s)",
        )


def add_flags(parser: argparse.ArgumentParser | argparse._ArgumentGroup, *rows: tuple) -> None:
    """The flags that take one value, one ``(flag, type, help)`` row each (type None: text)."""
    for flag, kind, text in rows:
        parser.add_argument(flag, type=kind, help=text)


def add_answer_reader_flag(parser: argparse.ArgumentParser, default: str) -> None:
    """``--answer-reader``, the one declaration for every command that reads replies (its
    default comes from the command's settings class; ``default`` says what that is in words)."""
    parser.add_argument(
        "--answer-reader",
        choices=READERS,
        help="how a reply is read as an answer: llm-jp-eval (the JBBQ paper's harness: the reply "
        "is exactly the index), bbq (BBQ's analysis script: the answer text, with its repairs; "
        "what it cannot read is dropped), lenient (an index or an option's text anywhere, "
        f"unknown synonyms; for chat models). Default: {default}",
    )


def add_verbosity_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    for flags, const, text in (
        (("-q", "--quiet"), -1, "warnings and errors only, no progress bars"),
        (("-v", "--verbose"), 1, "debug lines, library logs, and full tracebacks on errors"),
    ):
        group.add_argument(*flags, dest="verbosity", action="store_const", const=const, help=text)
    parser.set_defaults(verbosity=0)


def add_root_flags(parser: argparse.ArgumentParser, *, metrics: bool = True) -> None:
    """``--datasets-root`` (and ``--metrics-root``), their help naming the folders this install
    reads by default (``locations``: the checkout's, or the data root and the installed modules)."""
    from bias_hub.pipelines.common.locations import default_metrics_root, describe_datasets_root

    roots = parser.add_argument_group("where datasets and metrics live")
    roots.add_argument(
        "--datasets-root",
        type=Path,
        help=_literal(
            f"parent folder of the dataset folders (default: {describe_datasets_root()})"
        ),
    )
    if metrics:
        roots.add_argument(
            "--metrics-root",
            type=Path,
            help=_literal(
                f"parent folder of the metric modules (default: {default_metrics_root()})"
            ),
        )


def _literal(text: str) -> str:
    """``text`` as argparse prints it (a ``%`` in a path is not a format field)."""
    return text.replace("%", "%%")


def add_pipeline_flags(
    parser: argparse.ArgumentParser,
    *,
    model_help: str,
    several_models: bool = False,
    model_required: bool = True,
    model_aliases: tuple[str, ...] = (),
    dataset_help: str = "dataset folder, or a dataset name under --datasets-root (default: the part's own)",
    out_default: str | None = None,
) -> None:
    """The shared flags; the part adds its own afterwards."""
    flags = ("--model", *model_aliases)
    if several_models:
        parser.add_argument(
            *flags,
            dest="model",
            nargs="+",
            action="extend",
            required=model_required,
            metavar="MODEL",
            help=model_help + " (several: --model A B, or --model A --model B)",
        )
    else:
        parser.add_argument(
            *flags, dest="model", required=model_required, metavar="MODEL", help=model_help
        )
    parser.add_argument("--dataset", default=None, help=dataset_help)
    parser.add_argument(
        "--out",
        required=out_default is None,
        default=out_default,
        help="output folder, replaced whole when the run succeeds"
        + (" (default: %(default)s)" if out_default else ""),
    )
    add_root_flags(parser)
    model = parser.add_argument_group("loading the model")
    add_flags(
        model,
        ("--device", None, "cpu, cuda, cuda:N or mps (default: cuda when available, else cpu)"),
        ("--dtype", None, f"{', '.join(DTYPES)} (default: float32; auto: the checkpoint's)"),
        (
            "--device-map",
            None,
            "passed to from_pretrained, e.g. auto (one model over several GPUs)",
        ),
        ("--token", None, "Hub token (default: HF_TOKEN or the cached `hf auth login`)"),
        ("--revision", None, "model revision: branch, tag or commit"),
    )
    model.add_argument(
        "--trust-remote-code", action="store_true", help="allow code shipped with the model"
    )
    model.add_argument(
        "--allow-untrained",
        action="store_true",
        help="score a model whose head was never trained (newly initialised, or marked so by "
        "`nli init-model`): plumbing tests only, the scores mean nothing",
    )
    parser.add_argument(
        "--seed", type=int, help="seed of every random choice (default: %(default)s)"
    )
    add_verbosity_flags(parser)


def settings_defaults(parser: argparse.ArgumentParser, cls: type) -> None:
    """Make the settings dataclass the one place of every default: each field's default
    becomes the default of the flag with that dest. Call it *before* adding the flags (argparse
    gives a flag added without ``default=`` the parser's default for its dest; a flag that
    still passes ``default=`` must equal the field, which tests/pipelines/test_command_contract.py
    checks)."""
    for item in dataclasses.fields(cls):
        if item.default is not dataclasses.MISSING:
            parser.set_defaults(**{item.name: item.default})
        elif item.default_factory is not dataclasses.MISSING:
            parser.set_defaults(**{item.name: item.default_factory()})


def explicit_dests(
    top: argparse.ArgumentParser, leaf: argparse.ArgumentParser, argv: list[str]
) -> set[str]:
    """The dests of ``leaf`` that ``argv`` sets explicitly (a flag given with its default value
    counts): ``argv`` parsed again by ``top`` with every default of ``leaf`` suppressed. A preset
    yields to exactly these."""
    saved_actions = [(action, action.default) for action in leaf._actions]
    saved_defaults = dict(leaf._defaults)
    try:
        for action in leaf._actions:
            action.default = argparse.SUPPRESS
        leaf._defaults.clear()
        namespace = top.parse_args(argv)
    finally:
        for action, default in saved_actions:
            action.default = default
        leaf._defaults.update(saved_defaults)
    return set(vars(namespace)) & {action.dest for action in leaf._actions}


def settings_from_args(cls: type, args: argparse.Namespace, **overrides: Any):
    """The settings dataclass from parsed flags: every field whose name is a flag dest, and
    ``progress`` (off under ``--quiet``) where the class has it."""
    fields = [item.name for item in dataclasses.fields(cls) if item.init]
    values = {name: getattr(args, name) for name in fields if hasattr(args, name)}
    if "progress" in fields:
        values["progress"] = getattr(args, "verbosity", 0) >= 0
    values.update(overrides)
    return cls(**values)


RunFunction = Callable[[Any, Any, Path, RunSettings], dict]


def pipeline_command(
    subparsers: argparse._SubParsersAction,
    name: str,
    *,
    run: str | RunFunction,
    settings: str | type[RunSettings],
    help: str,
    description: str | None = None,
    preset_command: str | None = None,
    **flag_options: Any,
) -> argparse.ArgumentParser:
    """Declare a pipeline command: shared flags, then ``run(model, dataset, out_dir, settings)``.

    ``run`` may be a ``"module:attribute"`` string, imported only when the command runs (so
    ``bias-hub --help`` never imports torch); ``settings`` is imported now (a module without
    heavy imports) for its defaults. ``preset_command`` (``"jbbq evaluate"``) adds ``--preset``.
    """
    parser = subparsers.add_parser(name, help=help, description=description or help)
    settings_class = _resolve(settings)
    settings_defaults(parser, settings_class)
    add_pipeline_flags(parser, **flag_options)
    if preset_command is not None:
        parser.add_argument(
            "--preset",
            metavar="NAME_OR_FILE",
            help=f"a study's settings for `{preset_command}` (see `bias-hub reproduce --list`), "
            "or a preset YAML file; flags given beside it override it and are recorded "
            "as departures",
        )
    parser.set_defaults(
        func=_invoke,
        pipeline_run=run,
        pipeline_settings=settings_class,
        pipeline_parser=parser,
        preset_command=preset_command,
    )
    return parser


def _resolve(target):
    if isinstance(target, str):
        import importlib

        module, _, attribute = target.partition(":")
        return getattr(importlib.import_module(module), attribute)
    return target


def _invoke(args: argparse.Namespace) -> int:
    run = _resolve(args.pipeline_run)
    settings = settings_from_args(args.pipeline_settings, args)
    model = args.model
    if getattr(args, "preset", None) == "none":
        # A part whose --preset has a default (jbbq: paper) switches it off with `--preset none`.
        settings = dataclasses.replace(settings, preset=None)
    elif getattr(args, "preset", None):
        from bias_hub.pipelines.common.presets import apply_preset, load_preset

        preset = load_preset(args.preset_command, args.preset)
        explicit = explicit_dests(args.top_parser, args.pipeline_parser, args.argv)
        settings = apply_preset(settings, preset, explicit)
        if not model and preset.models:
            model = (
                list(preset.models)
                if isinstance(args.model, list) or args.model is None
                else preset.models[0]
            )
        elif model and preset.models:
            # Models given beside a preset that names its own: a departure like any other setting's.
            used = [model] if isinstance(model, str) else list(model)
            if used != list(preset.models):
                departure = dict(
                    setting="model", preset=list(preset.models), used=used, section=None
                )
                settings = dataclasses.replace(
                    settings, departures=[departure, *settings.departures]
                )
    from bias_hub.pipelines.common.prerequisites import check_prerequisites

    # Everything the run needs, all at once, before its folder is made or a model loaded.
    needs = settings.prerequisites(model, args.dataset) or {
        "extras": ("models",) if args.loads_models else ()
    }
    command = args.pipeline_parser.prog.removeprefix("bias-hub ")
    check_prerequisites(command, datasets_root=settings.datasets_root, **needs)
    run(model, args.dataset, Path(args.out), settings)
    return 0
