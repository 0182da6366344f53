"""Every builder is a function, ``build(out_root, **options) -> Path``; its command only adapts argparse to it."""

from __future__ import annotations

import argparse
import functools
import inspect
from pathlib import Path

import pytest

from bias_hub.builders import build_all
from bias_hub.pipelines import cli

COMMANDS = cli.builder_commands()
BUILDERS = Path(__file__).resolve().parents[2] / "builders"


def _options(command) -> dict[str, object]:
    """``{dest: default}`` of every visible option the command adds."""
    parser = argparse.ArgumentParser()
    command.add_arguments(parser)
    return {
        action.dest: action.default
        for action in parser._actions
        if action.dest != "help" and action.help != argparse.SUPPRESS
    }


def test_every_dataset_folder_has_a_builder() -> None:
    # Discovered, not listed: every builder package (but the shared layer) has a command named
    # after it, every committed dataset folder has a builder, and the eight builders of the five
    # systems are among them.
    packages = {p.parent.name for p in BUILDERS.glob("*/__init__.py")} - {"shared"}
    assert {name: command.__package__ for name, command in COMMANDS.items()} == {
        name: f"bias_hub.builders.{name}" for name in packages
    }
    datasets_root = BUILDERS.parent / "datasets"
    assert {p.parent.name for p in datasets_root.glob("*/README.md")} <= set(COMMANDS)
    assert {
        "bbq",
        "jbbq",
        "nli_bias_controlled",
        "nli_gender_bias",
        "speciesism_templates",
        "stereoset_gender_swap",
        "weat_word_sets",
        "winobias",
    } <= set(COMMANDS)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_build_takes_documented_keyword_options_with_defaults(name: str) -> None:
    build = cli.builder_function(COMMANDS[name])
    first, *options = inspect.signature(build).parameters.values()
    assert first.name == "out_root" and first.default is inspect.Parameter.empty
    assert options, "a builder without options has nothing for its command to adapt"
    for option in options:
        assert option.kind is inspect.Parameter.KEYWORD_ONLY, option.name
        assert option.default is not inspect.Parameter.empty, option.name
        assert f"``{option.name}``" in (build.__doc__ or ""), (
            f"{name}: {option.name} is not documented"
        )


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_the_command_passes_every_option_to_build_unchanged(name: str, monkeypatch) -> None:
    import importlib

    command = COMMANDS[name]
    package = importlib.import_module(command.__package__)
    defaults = {
        key: p.default
        for key, p in inspect.signature(package.build).parameters.items()
        if key != "out_root"
    }
    options = _options(command)
    assert set(options) == set(defaults), "every flag maps to one build option and back"
    for dest, default in options.items():
        assert default == defaults[dest], f"--{dest}: the flag's default differs from build()'s"

    calls = []

    @functools.wraps(package.build)  # the stand-in keeps build()'s signature, which the CLI reads
    def stand_in(out_root, **kwargs) -> None:
        calls.append((out_root, kwargs))

    monkeypatch.setattr(package, "build", stand_in)
    parser = argparse.ArgumentParser()
    parser.add_argument("--out-root", default="somewhere")
    command.add_arguments(parser)
    cli.run_builder(command, parser.parse_args([]))
    assert calls == [(Path("somewhere"), defaults)]


def test_builders_neither_print_nor_parse_arguments_outside_their_commands() -> None:
    offenders = []
    for path in sorted(BUILDERS.rglob("*.py")):
        if path.name == "command.py":
            continue
        text = path.read_text(encoding="utf-8")
        for needle in ("print(", "argparse"):
            if needle in text:
                offenders.append(f"{path.relative_to(BUILDERS)}: {needle}")
    assert offenders == []


def test_build_all_calls_each_builder_once_and_logs_one_timed_line(
    tmp_path: Path, monkeypatch
) -> None:
    import importlib
    import logging

    built = []
    for name, command in COMMANDS.items():
        package = importlib.import_module(command.__package__)
        monkeypatch.setattr(
            package, "build", lambda out_root, name=name: built.append((name, out_root))
        )
    # A handler of our own on the "builders" logger: whatever an earlier command in this
    # process configured (console handler, propagation), each record arrives here once.
    records: list[logging.LogRecord] = []
    handler = logging.Handler(logging.INFO)
    handler.emit = records.append
    logger = logging.getLogger("bias_hub.builders")
    monkeypatch.setattr(logger, "level", logging.INFO)
    logger.addHandler(handler)
    try:
        build_all(tmp_path, COMMANDS)
    finally:
        logger.removeHandler(handler)
    in_all = [name for name, command in COMMANDS.items() if command.IN_ALL]
    assert built == [(name, tmp_path) for name in in_all]
    assert "bbq" not in in_all and "winobias" not in in_all  # need the user's copy or the network
    lines = [r.getMessage() for r in records if r.getMessage().startswith("built ")]
    assert [line.split(":")[0] for line in lines] == [f"built {name}" for name in in_all]
    assert all(line.endswith(" s") for line in lines)
