"""Every command that runs a model has the shared flags and the shared run shape."""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect

from bias_hub.pipelines.cli import _leaf_parsers, build_parser
from bias_hub.pipelines.common import COMMON_FLAGS, RunSettings

# Commands that run no model over a dataset: they keep their own flags (and -q/-v).
NOT_PIPELINES = {
    "build",
    "demo",
    "export lm-eval",
    "export inspect",
    "export lm-eval-path",
    "export eval-results",
    "leaderboard",
    "publish",
    "score",
    "embeddings correlate",
    "jbbq figure",
    "jbbq tiny-model",
    "nli init-model",
    "report",
    "reproduce",
    "speciesism-tiny-models",
    "stereoset offline-models",
}


def _commands() -> dict[str, argparse.ArgumentParser]:
    found = {}
    for parser in _leaf_parsers(build_parser()):
        name = parser.prog.removeprefix("bias-hub ").strip()
        found[name] = parser
    return found


def _resolve(target):
    if not isinstance(target, str):
        return target
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def test_every_command_is_a_pipeline_or_listed_as_not_one() -> None:
    commands = _commands()
    pipelines = {name for name, parser in commands.items() if parser.get_default("pipeline_run")}
    others = {name for name in commands if name not in pipelines}
    assert {name for name in others if not name.startswith("build")} == NOT_PIPELINES - {"build"}
    # The model-running commands of the five systems, by name.
    assert {
        "nli train",
        "nli evaluate",
        "nli meta-evaluate",
        "jbbq evaluate",
        "stereoset attention",
        "speciesism",
        "embeddings score",
        "embeddings control",
    } <= pipelines


def test_pipeline_commands_accept_the_shared_flags() -> None:
    for name, parser in _commands().items():
        if not parser.get_default("pipeline_run"):
            continue
        options = set(parser._option_string_actions)
        missing = [flag for flag in COMMON_FLAGS if flag not in options]
        assert not missing, f"bias-hub {name} lacks {missing}"
        assert {"-q", "-v"} <= options


def test_pipeline_commands_share_one_run_shape() -> None:
    for name, parser in _commands().items():
        run_target = parser.get_default("pipeline_run")
        if not run_target:
            continue
        run = _resolve(run_target)
        settings = _resolve(parser.get_default("pipeline_settings"))
        assert list(inspect.signature(run).parameters) == [
            "model",
            "dataset",
            "out_dir",
            "settings",
        ], name
        assert issubclass(settings, RunSettings), name
        # Every part flag lands in a settings field of the same name (nothing is dropped).
        fields = {field.name for field in dataclasses.fields(settings)}
        shared = {
            "model",
            "dataset",
            "out",
            "verbosity",
            "func",
            "pipeline_run",
            "pipeline_settings",
        }
        dests = {action.dest for action in parser._actions if action.dest != "help"}
        assert dests - shared <= fields, (
            f"bias-hub {name}: flags without a settings field: {dests - shared - fields}"
        )


def test_every_command_has_quiet_and_verbose() -> None:
    for name, parser in _commands().items():
        assert {"-q", "--quiet", "-v", "--verbose"} <= set(parser._option_string_actions), name


def _field_default(field: dataclasses.Field):
    if field.default is not dataclasses.MISSING:
        return field.default
    if field.default_factory is not dataclasses.MISSING:
        return field.default_factory()
    return dataclasses.MISSING


def test_every_flag_default_is_its_settings_field_default() -> None:
    """Defaults are written once, in the settings dataclass; a flag that still passes its own
    ``default=`` must agree with it (so the CLI and Python callers get the same run)."""
    disagree = []
    for name, parser in _commands().items():
        if not parser.get_default("pipeline_run"):
            continue
        fields = {
            field.name: field
            for field in dataclasses.fields(_resolve(parser.get_default("pipeline_settings")))
        }
        for action in parser._actions:
            if action.dest not in fields or action.default is argparse.SUPPRESS:
                continue
            expected = _field_default(fields[action.dest])
            same = (
                list(action.default) == list(expected)
                if isinstance(action.default, (list, tuple)) and isinstance(expected, (list, tuple))
                else action.default == expected
            )
            if expected is not dataclasses.MISSING and not same:
                disagree.append(
                    f"bias-hub {name} {action.option_strings[0]}: flag {action.default!r}, "
                    f"settings {expected!r}"
                )
    assert not disagree, "\n".join(disagree)
