"""The ``bias-hub`` command.

Sub-commands are found, not listed: every ``builders/<dataset>/command.py``
becomes ``bias-hub build <dataset>``, and every ``pipelines/<part>/command.py``
adds its own sub-command group through ``register(subparsers)``. Command
modules import heavy libraries (torch, transformers) inside their functions, so
``bias-hub --help`` stays fast.
"""

from __future__ import annotations

import sys

INTERRUPTED = "bias-hub: interrupted; outputs of this run were not written (earlier ones are kept)"

# Ctrl-C in the first instants lands in these imports: the same one line as later, no traceback.
try:
    import argparse
    import importlib
    import importlib.util
    import inspect
    import signal
    import threading
    from collections.abc import Sequence
    from pathlib import Path
    from types import ModuleType

    from bias_hub import pipelines
    from bias_hub.builders import build_all
    from bias_hub.builders.shared.errors import UserError
    from bias_hub.builders.shared.extras import missing_extra
    from bias_hub.builders.shared.secrets import redact, register_namespace
    from bias_hub.pipelines.discovery import builder_commands, builder_function, submodules
except KeyboardInterrupt:
    print(INTERRUPTED, file=sys.stderr)
    raise SystemExit(130) from None


class Parser(argparse.ArgumentParser):
    """Every parser of ``bias-hub``: no abbreviated long flags (``--tok`` is not ``--token``),
    so a flag is only ever what it spells, and redaction and presets see the real name.
    Sub-parsers are made by their parent's class, so the whole tree is this class."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)


def run_builder(command: ModuleType, args: argparse.Namespace) -> Path:
    """The one adapter of every ``bias-hub build DATASET``: ``build(out_root, **options)`` with
    each keyword option of ``build`` taken from the flag of the same dest (a command module
    declares its flags, never the call)."""
    build = builder_function(command)
    options = [
        name
        for name, parameter in inspect.signature(build).parameters.items()
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    return build(Path(args.out_root), **{name: getattr(args, name) for name in options})


def _register_build(subparsers: argparse._SubParsersAction) -> None:
    from bias_hub.pipelines.common.locations import default_datasets_root

    # The same root the pipelines read by default: the checkout's datasets/, or the data folder.
    out_root = str(default_datasets_root())
    out_root_help = (
        "parent folder of the dataset folders (default: %(default)s, where the pipelines look)"
    )
    build = subparsers.add_parser(
        "build", help=f"build a dataset folder (under {out_root} by default)"
    )
    inner = build.add_subparsers(dest="dataset", required=True, metavar="DATASET")
    commands = builder_commands()
    every = inner.add_parser("all", help="build every dataset that needs no user-supplied data")
    every.add_argument("--out-root", default=out_root, help=out_root_help)
    every.set_defaults(func=lambda args: build_all(args.out_root, commands, args.argv))
    for name, module in commands.items():
        parser = inner.add_parser(name, help=module.HELP)
        parser.add_argument("--out-root", default=out_root, help=out_root_help)
        module.add_arguments(parser)
        if "--force" not in parser._option_string_actions:
            parser.add_argument(
                "--force",
                action="store_true",
                help="replace configs an earlier build made from your own copy of the data",
            )
        parser.set_defaults(func=_build_one, build_module=module, build_parser=parser)
        # Building steps that make no dataset folder (jbbq-translation).
        if hasattr(module, "register_steps"):
            module.register_steps(inner)


# Builder flags whose value may be a path but names nothing the build reads: where it writes,
# switches, and caches of answers (a cache grows with use; it is not the data).
_NOT_READ = {"out_root", "out", "force", "help", "verbosity"}


def paths_read(
    parser: argparse.ArgumentParser, args: argparse.Namespace, *, defaults: bool = True
) -> list[Path]:
    """The existing files and folders a build's flags name (``--source``, ``--authors-dir``, a
    template table...), in flag order; without ``defaults``, only those the command line gave
    (a value other than the flag's default)."""
    found = []
    for action in parser._actions:
        dest = action.dest
        if dest in _NOT_READ or "cache" in dest or not hasattr(args, dest):
            continue
        value = getattr(args, dest)
        if value is None or (not defaults and value == action.default):
            continue
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, (str, Path)) and str(item) and Path(item).expanduser().exists():
                found.append(Path(item).expanduser())
    return found


def _reads_user_copy(parser: argparse.ArgumentParser, args: argparse.Namespace) -> bool:
    """Whether the build reads something the user gave: a flag set to an existing path."""
    return bool(paths_read(parser, args, defaults=False))


def _build_one(args: argparse.Namespace) -> None:
    from bias_hub.builders.dataset_folder import user_copy_build
    from bias_hub.builders.shared.console import command_line
    from bias_hub.builders.shared.files import ensure_writable_root

    ensure_writable_root(args.out_root, "--out-root")
    reads = _reads_user_copy(args.build_parser, args)
    with user_copy_build(command_line(args.argv), reads_user_copy=reads, force=args.force):
        run_builder(args.build_module, args)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """Every command's parser; with ``argv``, only those its first word can name when that word
    is ``build``, ``demo`` or a part's (``jbbq``, ``speciesism-tiny-models``): the other command
    modules, and every builder's for a word other than ``build``, are then not imported (half
    a second of every command's start). Any other word gets every command, for the help and
    the error messages that list them."""
    parser = Parser(
        prog="bias-hub",
        description="Social-bias benchmarks for Japanese and English language models.",
    )
    parser.set_defaults(loads_models=False)
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    first = next((a for a in argv or () if not a.startswith("-")), None)
    modules = _command_modules(first)
    if first == "build" or len(modules) > 1:  # `build`, or every command
        _register_build(subparsers)
    for module in modules:
        before = set(subparsers.choices)
        module.register(subparsers)
        # A command module that sets LOADS_MODELS = True: its commands import torch and
        # transformers first (MODEL_LIBRARIES, see _main); a sub-command may set its own
        # `loads_models` default, a function of the parsed arguments.
        for name in set(subparsers.choices) - before:
            subparsers.choices[name].set_defaults(
                loads_models=getattr(module, "LOADS_MODELS", False)
            )
    return _with_verbosity_flags(parser)


def _command_modules(first: str | None) -> list[ModuleType]:
    """The modules that register the commands ``first`` may name (see ``build_parser``)."""
    if first == "build":
        return []
    if first == "demo":
        return [importlib.import_module("bias_hub.pipelines.demo")]
    part = f"bias_hub.pipelines.{(first or '').split('-')[0]}"
    if (
        first
        and first.split("-")[0].isidentifier()
        and importlib.util.find_spec(part) is not None
        and importlib.util.find_spec(f"{part}.command") is not None
    ):
        return [importlib.import_module(f"{part}.command")]
    return [*submodules(pipelines, "command"), importlib.import_module("bias_hub.pipelines.demo")]


def _leaf_parsers(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every parser that runs something (has no sub-commands of its own)."""
    nested = [
        action for action in parser._actions if isinstance(action, argparse._SubParsersAction)
    ]
    if not nested:
        return [parser]
    children = [child for action in nested for child in dict.fromkeys(action.choices.values())]
    return [leaf for child in children for leaf in _leaf_parsers(child)]


def _with_verbosity_flags(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """-q/-v on every command, the same everywhere (pipeline commands already have them)."""
    from bias_hub.pipelines.common.arguments import add_verbosity_flags

    for leaf in _leaf_parsers(parser):
        if "--quiet" not in leaf._option_string_actions:
            add_verbosity_flags(leaf)
    return parser


# What a command that loads a model imports first, with Ctrl-C held (see _main).
MODEL_LIBRARIES = ("torch", "transformers")

# Errors a user can act on: their message names the flag, file or row, so a traceback adds noise.
# Not RuntimeError as such: the project's own failures of that kind are ``UserError``s, and any
# other RuntimeError (torch, a library, a broken assumption) is a bug, shown with its traceback.
USER_ERRORS = (
    ValueError,
    FileNotFoundError,
    NotADirectoryError,
    IsADirectoryError,
    PermissionError,
    UserError,
)


def _printable_console() -> None:
    """A console that cannot show a character (an ASCII terminal, ``PYTHONIOENCODING=ascii``)
    gets ``\\u....`` for it instead of a UnicodeEncodeError in the middle of the output."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure") and getattr(stream, "errors", "strict") == "strict":
            stream.reconfigure(errors="backslashreplace")


def _redacting_excepthook(kind, value, tb) -> None:
    """A traceback (a bug, or ``-v``) is printed like every other line: without secrets."""
    import traceback

    sys.stderr.write(redact("".join(traceback.format_exception(kind, value, tb))))


def main(argv: Sequence[str] | None = None) -> int:
    # Ctrl-C may come at any moment, even while the commands and torch are still being
    # imported: it is always the one line below, never a traceback.
    from bias_hub.builders.shared.console import raise_interrupt_outside_finalizers

    _printable_console()
    sys.excepthook = _redacting_excepthook

    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, raise_interrupt_outside_finalizers)
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    finally:
        if previous is not None:
            signal.signal(signal.SIGINT, previous)


def _main(argv: Sequence[str] | None) -> int:
    from bias_hub.builders.shared import console

    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    # Secrets by value: whatever flag or variable carried them, they are redacted from every
    # file, log line and printed command from here on.
    register_namespace(vars(args))
    # A --preset yields to the flags given explicitly: flags.explicit_dests parses argv again.
    args.argv, args.top_parser = argv, parser
    verbosity = getattr(args, "verbosity", 0)
    console.configure(verbosity)
    from bias_hub.pipelines.common.arguments import say_intervals_off

    say_intervals_off(argv)
    before_loading = getattr(args, "before_loading", None)
    if before_loading is not None:  # work that needs none of the libraries below (demo's builds)
        before_loading(args)
    loads_models = args.loads_models
    if callable(loads_models):  # a command whose flags decide (`--backend openai` runs none)
        loads_models = loads_models(args)
    if loads_models:
        # Their first steps import torch and transformers, compiled libraries that a Ctrl-C
        # inside their import can abort: it then waits for these imports to finish (see
        # console.interrupts_deferred), then is the one line. Imported here, they also serve
        # every part the demo forks. Other libraries load where a step uses them, and those of
        # an extra that is not installed are left to the step, which then names the extra.
        console.import_installed(MODEL_LIBRARIES)
    from bias_hub.builders.shared.files import os_error_line

    try:
        with console.running(argv):
            result = args.func(args)
    except Exception as err:
        # A module of an extra that is not installed is the one line naming the extra.
        error = err if isinstance(err, USER_ERRORS) else missing_extra(err)
        # A full disk, a quota, a name too long: the machine's limit, one line naming the file.
        line = os_error_line(err) if error is None and isinstance(err, OSError) else None
        if (error is None and line is None) or verbosity > 0:
            raise
        message = line or str(error).strip() or type(error).__name__
        # A library's message may echo what it was given (a Hub error, the token): redacted
        # like every log line.
        print(f"bias-hub: error: {redact(message)}", file=sys.stderr)
        return 2
    return int(result or 0)


if __name__ == "__main__":
    sys.exit(main())
