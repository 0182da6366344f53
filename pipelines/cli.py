"""The ``bias-hub`` command.

Sub-commands are found, not listed: every ``builders/<dataset>/command.py``
becomes ``bias-hub build <dataset>``, and every ``pipelines/<part>/command.py``
adds its own sub-command group through ``register(subparsers)``. Command
modules import heavy libraries (torch, transformers) inside their functions, so
``bias-hub --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import builders
import pipelines


def _submodules(package: ModuleType, leaf: str) -> list[ModuleType]:
    found = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name):
        if not info.ispkg:
            continue
        name = f"{package.__name__}.{info.name}.{leaf}"
        if importlib.util.find_spec(name) is not None:
            found.append(importlib.import_module(name))
    return found


def builder_commands() -> dict[str, ModuleType]:
    """``{dataset name: command module}`` for every dataset builder."""
    return {module.NAME: module for module in _submodules(builders, "command")}


def builder_function(command: ModuleType) -> Callable[..., Path]:
    """The ``build`` function of the builder package a command module belongs to."""
    return importlib.import_module(command.__package__).build


def _register_build(subparsers: argparse._SubParsersAction) -> None:
    from pipelines.common.paths import default_datasets_root

    # The same root the pipelines read by default: the checkout's datasets/, or the data folder.
    out_root = str(default_datasets_root())
    out_root_help = "parent folder of the dataset folders (default: %(default)s, where the pipelines look)"
    build = subparsers.add_parser("build", help=f"build a dataset folder (under {out_root} by default)")
    inner = build.add_subparsers(dest="dataset", required=True, metavar="DATASET")
    commands = builder_commands()
    every = inner.add_parser("all", help="build every dataset that needs no user-supplied data")
    every.add_argument("--out-root", default=out_root, help=out_root_help)
    every.set_defaults(func=lambda args: _build_all(commands, args.out_root))
    for name, module in commands.items():
        parser = inner.add_parser(name, help=module.HELP)
        parser.add_argument("--out-root", default=out_root, help=out_root_help)
        module.add_arguments(parser)
        parser.set_defaults(func=module.run)
        if hasattr(module, "register_steps"):  # building steps that make no dataset folder (jbbq-translation)
            module.register_steps(inner)


def _build_all(commands: dict[str, ModuleType], out_root: str) -> None:
    """Every builder that needs no user-supplied data, with its defaults: one timed line each."""
    from builders.shared.console import stage

    for name, module in commands.items():
        if not getattr(module, "IN_ALL", True):
            continue
        with stage(f"built {name}", logging.getLogger("builders")):
            builder_function(module)(Path(out_root))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bias-hub",
        description="Social-bias benchmarks for Japanese and English language models.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _register_build(subparsers)
    for module in _submodules(pipelines, "command"):
        module.register(subparsers)
    from pipelines import demo

    demo.register(subparsers)
    return _with_verbosity_flags(parser)


def _leaf_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser that runs something (has no sub-commands of its own)."""
    nested = [action for action in parser._actions if isinstance(action, argparse._SubParsersAction)]
    if not nested:
        return [parser]
    leaves = []
    for action in nested:
        for child in dict.fromkeys(action.choices.values()):
            leaves += _leaf_parsers(child)
    return leaves


def _with_verbosity_flags(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """-q/-v on every command, the same everywhere (pipeline commands already have them)."""
    from pipelines.common.flags import add_verbosity_flags

    for leaf in _leaf_parsers(parser):
        if "--quiet" not in leaf._option_string_actions:
            add_verbosity_flags(leaf)
    return parser


# Errors a user can act on: their message names the flag, file or row, so a traceback adds noise.
USER_ERRORS = (ValueError, FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError, RuntimeError)


def main(argv: Sequence[str] | None = None) -> int:
    from builders.shared import console

    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    # A --preset yields to the flags given explicitly: flags.explicit_dests parses argv again.
    args.argv, args.top_parser = argv, parser
    verbosity = getattr(args, "verbosity", 0)
    console.configure(verbosity)
    try:
        result = args.func(args)
    except USER_ERRORS as err:
        if verbosity > 0:
            raise
        message = str(err).strip() or type(err).__name__
        print(f"bias-hub: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("bias-hub: interrupted; outputs of this run were not written (earlier ones are kept)", file=sys.stderr)
        return 130
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
