"""A study step's arguments made into a ``bias-hub`` command line, checked before any step runs.

``flag_argv`` turns each step argument into argv by its flag's own kind (a switch takes
``true``/``false``, ``null`` leaves a flag out, no value may look like a flag), and
``Commands.parse_error`` runs the step's own parser over it, so a wrong value is refused in the
plan, not when the step starts. ``check_contained`` keeps a study inside its run
(docs/reproduce.md): what a step writes stays inside ``--out``, what the study file gives it to
read inside the run, the roots or what the user gave, and a study file never holds a secret or
picks code or addresses without ``--allow-any-command``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import json
import os
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.secrets import is_secret_name, redact
from bias_hub.pipelines.common.run_folder import WRITTEN_FLAGS

__all__ = [
    "STUDY_COMMANDS",
    "Commands",
    "StepError",
    "check_allowed",
    "check_contained",
    "flag_argv",
    "shown",
]

# Commands a study step may run besides the parts' own (see ``check_allowed``).
STUDY_COMMANDS = frozenset({"build", "report"})
# A value argparse reads as a negative number, not as a flag.
_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


class StepError(ValueError):
    """A step argument that cannot become a command line (the caller adds the step's name)."""


def shown(value: Any) -> str:
    """A value as a user would type it after ``--set KEY=``."""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _is_part(word: str) -> bool:
    """Whether ``bias-hub WORD ...`` is a part's command: ``pipelines/WORD/`` has a report module
    (every part renders its run's report; ``publish`` and ``reproduce`` have none)."""
    name = f"bias_hub.pipelines.{word}.report"
    if name in sys.modules:
        return True
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):  # no such package, or a module that is no package
        return False


def check_allowed(command: str, argv: list[str], allow_any: bool = False) -> None:
    """Refuse, unless ``allow_any``, a command that is neither a part's (found, not listed:
    ``_is_part``, the part named by the command's first word up to a hyphen) nor one of ``STUDY_COMMANDS``, and ``build --force``: a study never pushes to
    the Hub, runs a study, or replaces a dataset built from the user's own copy."""
    if allow_any:
        return
    words = command.split()
    # A part's commands are named after it: ``speciesism`` and ``speciesism-tiny-models``.
    if not words or not (words[0] in STUDY_COMMANDS or _is_part(words[0].split("-", 1)[0])):
        raise StepError(
            f"`bias-hub {command}` is not a command a study step may run (a step runs a part's "
            f"command, {' or '.join(sorted(STUDY_COMMANDS))}); pass --allow-any-command to run "
            "it anyway"
        )
    if words[0] == "build" and "--force" in argv:
        raise StepError(
            "`build --force` would replace a dataset built from your own copy of the data; "
            "a study step may not, unless you pass --allow-any-command"
        )


class Commands:
    """The ``bias-hub`` command line as study steps use it."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self.parser = parser

    def leaf(self, command: str) -> argparse.ArgumentParser | None:
        """The parser of ``command`` (``"jbbq evaluate"``); words after a command that has no
        sub-commands are its positionals (``"score bbq_bias"``)."""
        current = self.parser
        for word in command.split():
            nested = [a for a in current._actions if isinstance(a, argparse._SubParsersAction)]
            if not nested:
                break
            if word not in nested[0].choices:
                return None
            current = nested[0].choices[word]
        return current

    def dests(self, command: str) -> set[str]:
        leaf = self.leaf(command)
        return set() if leaf is None else {a.dest for a in leaf._actions if a.option_strings}

    def action(self, command: str, key: str) -> argparse.Action | None:
        """The flag a step argument sets: ``--KEY`` (``_`` as ``-``), else the flag whose dest is KEY."""
        leaf = self.leaf(command)
        if leaf is None:
            return None
        flag = "--" + key.replace("_", "-")
        if flag in leaf._option_string_actions:
            return leaf._option_string_actions[flag]
        return next((a for a in leaf._actions if a.option_strings and a.dest == key), None)

    def parse_error(self, argv: list[str]) -> str | None:
        """argparse's complaint about ``argv`` (its last line, without the usage), or None."""
        stderr = io.StringIO()
        try:
            with contextlib.redirect_stderr(stderr):
                self.parser.parse_args(argv)
        except SystemExit:
            lines = stderr.getvalue().strip().splitlines()
            last = lines[-1] if lines else "does not parse"
            return last.split(": error: ", 1)[-1]
        return None


def _flag_name(key: str, action: argparse.Action | None) -> str:
    flag = "--" + key.replace("_", "-")
    if action is None or flag in action.option_strings:
        return flag
    return next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])


def _text(flag: str, item: Any) -> str:
    if isinstance(item, (Mapping, list, tuple, bool)) or item is None:
        raise StepError(f"{flag}: {shown(item)} inside a list is not a plain value")
    text = str(item)
    if text.startswith("-") and not _NUMBER.match(text):
        raise StepError(
            f"{flag}: the value {text!r} looks like a flag; a value may not start with -"
        )
    return text


def _flag_argv(key: str, value: Any, action: argparse.Action | None) -> list[str]:
    flag = _flag_name(key, action)
    if value is None:
        return []  # null: the flag is left out (a variant removes a flag of the paper's step)
    if isinstance(value, Mapping):
        raise StepError(f"{flag}: expected a value or a list of values, got a mapping")
    if action is None:  # a flag the command does not know: its parser names it below
        if value is True:
            return [flag]
        if value is False:
            return []
        items = value if isinstance(value, (list, tuple)) else [value]
        return [flag, *(_text(flag, v) for v in items)] if items else []
    if isinstance(action, argparse.BooleanOptionalAction):
        if not isinstance(value, bool):
            raise StepError(f"{flag} is a switch: expected true or false, got {shown(value)}")
        return [flag] if value else ["--no-" + flag[2:]]
    if action.nargs == 0:
        if not isinstance(value, bool):
            raise StepError(f"{flag} is a switch: expected true or false, got {shown(value)}")
        return [flag] if value else []
    if isinstance(value, bool):
        raise StepError(
            f"{flag} takes a value, got {str(value).lower()} (null leaves the flag out)"
        )
    many = action.nargs in ("+", "*") or (isinstance(action.nargs, int) and action.nargs > 1)
    repeated = isinstance(action, argparse._AppendAction)
    if isinstance(value, (list, tuple)):
        if not (many or repeated):
            raise StepError(f"{flag} takes one value, got a list {shown(list(value))}")
        items = [_text(flag, v) for v in value]
        if not items:
            return []
        return [flag, *items] if many else [part for item in items for part in (flag, item)]
    return [flag, _text(flag, value)]


def flag_argv(command: str, key: str, value: Any, commands: Commands | None) -> list[str]:
    """The argv words of one step argument of ``command`` (``positional``: its positionals);
    raises ``StepError`` naming the flag. Without ``commands`` every flag is taken as one that
    takes values (a plan made without the real command line, for tests)."""
    if key == "positional":
        return [_text("positional", v) for v in (value if isinstance(value, list) else [value])]
    action = commands.action(command, key) if commands is not None else None
    return _flag_argv(key, value, action)


# Step arguments that name where a step writes.
WRITES = tuple(flag[2:].replace("-", "_") for flag in WRITTEN_FLAGS)


def _overrides_code_or_requests(key: str, value: Any) -> bool:
    """Arguments that choose which code runs (the metric modules, a model's own code) or where
    requests carrying the user's keys go (a URL, the variable a key is read from)."""
    return (
        key == "metrics_root"
        or (key == "trust_remote_code" and value is not False)
        or key.endswith(("_url", "_env"))
    )


def _texts(value: Any) -> list[str]:
    items = value if isinstance(value, (list, tuple)) else [value]
    return [str(item) for item in items if isinstance(item, (str, os.PathLike))]


def _local_path(text: str) -> bool:
    """Whether a value names a local file or folder (a bare name or a Hub id that is no path
    here does not)."""
    path = Path(text).expanduser()
    if not text or ("/" not in text and os.sep not in text):
        return False
    return path.is_absolute() or text.startswith(".") or ".." in path.parts or path.exists()


def _inside(text: str, folders: Iterable[Path]) -> bool:
    where = Path(text).expanduser().resolve()
    return any(where == f or where.is_relative_to(f) for f in folders)


def check_contained(
    command: str,
    args: Mapping[str, Any],
    from_study: set[str],
    *,
    out: Path,
    readable: Iterable[Path],
    commands: Commands | None,
    allow_any: bool = False,
) -> None:
    """Refuse (``StepError``) a step of a study that would write outside ``out``, read outside
    ``out`` and ``readable`` (the roots, the user's inputs and models) by a path its study file
    gives, take a secret from the study file, or let the study file choose code or where
    requests go without ``allow_any``. ``from_study``: the argument names whose value the study
    file gave (the others the user typed)."""
    out = out.expanduser().resolve()
    readable = [out, *(Path(p).expanduser().resolve() for p in readable)]
    for key in WRITES:
        written = _texts(args.get(key)) if key in args else []
        action = commands.action(command, key) if commands is not None else None
        if key not in args and action is not None and isinstance(action.default, (str, Path)):
            written = [str(action.default)]  # its default applies: a folder outside the run
        if command.split()[0] == "report" and key == "out":
            written += _texts(args.get("positional"))
        for text in written:
            if not _inside(text, [out]):
                raise StepError(
                    f"{key} {text}: a study step writes only inside --out {out} (this resolves "
                    f"to {Path(text).expanduser().resolve()}); write it under {{out}}"
                )
    for key in sorted(from_study & set(args)):
        value = args[key]
        if is_secret_name(key) or any(redact(text) != text for text in _texts(value)):
            raise StepError(
                f"{key}: a study file holds no secret (it is shared, printed by --dry-run and "
                "written into the run); set it in the environment (HF_TOKEN for the Hub, the "
                "variable the command's --*-env flag names) and leave it out of the study file"
            )
        if allow_any or key in WRITES:
            continue
        if _overrides_code_or_requests(key, value):
            raise StepError(
                f"{key}: a study file may not choose which code runs or where requests go; "
                "pass --allow-any-command to let it, or --set the value yourself"
            )
        for text in _texts(value):
            if _local_path(text) and not _inside(text, readable):
                raise StepError(
                    f"{key} {text}: a study step reads only from --out, the datasets and metrics "
                    "roots and the inputs you give (--input NAME=PATH, --models); pass "
                    "--allow-any-command to let it read elsewhere"
                )
