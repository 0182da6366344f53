from __future__ import annotations

import pytest

from bias_hub.pipelines import cli


def test_help_lists_build_and_demo(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "build" in out and "demo" in out


def test_every_builder_command_has_the_expected_shape() -> None:
    for name, module in cli.builder_commands().items():
        assert module.NAME == name
        assert module.HELP
        assert callable(module.add_arguments)
        # The CLI's one adapter (cli.run_builder) calls build(); a module of its own would restate it.
        assert not hasattr(module, "run"), name


def test_unknown_dataset_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        cli.main(["build", "no_such_dataset"])
    assert done.value.code == 2
    assert "no_such_dataset" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "loads"),
    [
        (["nli", "evaluate", "--model", "m", "--out", "o"], True),
        (["jbbq", "evaluate", "--model", "m", "--out", "o"], True),
        # an API runs no local model; a figure draws what runs wrote
        (["jbbq", "evaluate", "--backend", "openai", "--model", "m", "--out", "o"], False),
        (["jbbq", "figure", "r.json", "--out", "o"], False),
        (["stereoset", "attention", "--model", "m", "--out", "o"], True),
        (["speciesism", "--model", "m", "--out", "o"], True),
        (["demo"], True),
        (["embeddings", "score", "--model", "m", "--out", "o"], False),
        (["build", "all"], False),
        (["report", "run"], False),
    ],
)
def test_commands_of_a_module_that_loads_models_import_the_model_libraries_first(
    argv: list[str], loads: bool
) -> None:
    # Declared beside each command (LOADS_MODELS in its module, or a function of the arguments
    # where its flags decide), not listed in the CLI.
    args = cli.build_parser().parse_args(argv)
    declared = args.loads_models(args) if callable(args.loads_models) else args.loads_models
    assert declared is loads


def _commands(parser) -> set[str]:
    (action,) = [a for a in parser._actions if a.dest == "command"]
    return set(action.choices)


def test_a_command_s_parser_holds_only_what_its_first_word_can_name() -> None:
    # The other command modules are not imported: a command starts sooner.
    assert _commands(cli.build_parser(["jbbq", "evaluate", "--model", "m"])) == {"jbbq"}
    assert _commands(cli.build_parser(["score", "bbq_bias"])) == {"score"}
    assert _commands(cli.build_parser(["speciesism-tiny-models", "--out", "o"])) >= {
        "speciesism",
        "speciesism-tiny-models",
    }
    assert _commands(cli.build_parser(["build", "weat_word_sets"])) == {"build"}
    # `report` is no part's name (the reproduce module registers it): every command, as for help
    everything = _commands(cli.build_parser())
    assert _commands(cli.build_parser(["report", "run"])) == everything
    assert _commands(cli.build_parser(["--help"])) == everything
    assert {"build", "demo", "jbbq", "report", "score"} <= everything
    # whatever registers it, every command is in the parser its own name builds
    assert [name for name in everything if name not in _commands(cli.build_parser([name]))] == []
