"""The command line's own guards: flags are only what they spell, Ctrl-C is one line
at any moment, only the project's own errors are one-line errors, and a build checks
``--out-root`` before any work."""

from __future__ import annotations

import argparse
import io
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bias_hub.builders.shared.errors import UserError
from bias_hub.pipelines import cli
from bias_hub.pipelines.cli import INTERRUPTED, build_parser, main

REPO = Path(__file__).resolve().parents[2]


def _every_parser(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += _every_parser(child)
    return found


def test_no_parser_accepts_an_abbreviated_flag() -> None:
    parsers = _every_parser(build_parser())
    # bias-hub, build, build all, the 8 builders, and every pipeline command and group.
    assert len(parsers) > 25
    abbreviating = [parser.prog for parser in parsers if parser.allow_abbrev]
    assert abbreviating == []


def test_every_flag_of_every_parser_says_what_it_does() -> None:
    # A help that is only "(default: ...)" says nothing; a suppressed flag is shown nowhere.
    silent = []
    for parser in _every_parser(build_parser()):
        for action in parser._actions:
            if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
                continue
            text = (action.help or "").strip()
            if action.help == argparse.SUPPRESS:
                continue  # a removed flag, kept to refuse it with the reason
            if not text or text.startswith("(default"):
                silent.append(f"{parser.prog} {'/'.join(action.option_strings) or action.dest}")
    assert silent == []


@pytest.mark.parametrize("flag", ["--tok", "--toke", "--tok=hf_SECRET"])
def test_a_prefix_of_token_is_refused_not_taken_for_it(flag: str, tmp_path: Path, capsys) -> None:
    # argparse took `--tok hf_SECRET` for --token, which the manifest did not redact.
    argv = ["nli", "evaluate", "--model", "m", "--out", str(tmp_path / "out"), flag]
    argv += [] if "=" in flag else ["hf_SECRET"]
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    assert f"unrecognized arguments: {flag}" in capsys.readouterr().err


def test_ctrl_c_while_the_commands_are_being_set_up_is_one_line(monkeypatch, capsys) -> None:
    # An interrupt before the command ran (while its modules were imported) was a traceback.
    def interrupted(argv=None) -> argparse.ArgumentParser:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "build_parser", interrupted)
    assert main(["nli", "evaluate"]) == 130
    assert capsys.readouterr().err.strip() == INTERRUPTED


# ``python -m bias_hub`` as __main__.py runs it, saying when ``main`` starts: the delays count
# from there, not from the process's start (Python's own start-up, which no program can guard,
# took longer than the shortest delay on a loaded machine).
STARTED_MAIN = """
import sys
from bias_hub.pipelines.cli import main
print("main", flush=True)
sys.exit(main(sys.argv[1:]))
"""


# 0.8 and 1.5 both land in the imports of torch and transformers (~10 s each to wait out): they
# run with the slow tests.
@pytest.mark.parametrize(
    "delay", [0.3, *(pytest.param(delay, marks=pytest.mark.slow) for delay in (0.8, 1.5))]
)
def test_ctrl_c_in_the_first_seconds_of_a_real_run_is_one_line(
    delay: float, tmp_path: Path, python_sigint
) -> None:
    # A real process, SIGINT within the first seconds of its run (the imports of the command
    # modules, torch and transformers happen then).
    env = dict(os.environ, PYTHONPATH=str(REPO))
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            STARTED_MAIN,
            "nli",
            "evaluate",
            "--model",
            str(tmp_path / "no_model"),
            "--out",
            str(tmp_path / "out"),
        ],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout.readline() == "main\n", process.stderr.read()
    time.sleep(delay)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=120)
    lines = err.strip().splitlines()
    # Either the interrupt came first (one line), or the missing model did (one line): never a traceback.
    assert "Traceback" not in err
    assert len(lines) == 1, err
    # -SIGINT: CPython 3.11 ends by its own SIGINT after a KeyboardInterrupt caught from code
    # run by exec() (dataclasses, namedtuple); a shell reads it as 130, like exit(130).
    assert process.returncode in (130, -signal.SIGINT, 2), err
    if process.returncode != 2:
        # The interrupt, or the missing model's error with the interrupt landing as the process
        # exits (a fast machine reaches the model check within 1.5 s).
        assert lines == [INTERRUPTED] or lines[0].startswith("bias-hub: error: --model "), err


def test_a_user_error_is_one_line_and_any_other_runtime_error_keeps_its_traceback(
    monkeypatch, capsys
) -> None:
    # Every RuntimeError (torch's, a library's, a bug of ours) used to print as one
    # line as if the user had made a mistake; only the project's own UserError does now.
    def failing(error: Exception):
        def run(args: argparse.Namespace) -> None:
            raise error

        return run

    parser = build_parser()
    monkeypatch.setattr(cli, "build_parser", lambda argv=None: parser)
    build_all = next(
        child
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for child in [action.choices["build"]]
    )
    inner = next(
        a for a in build_all._actions if isinstance(a, argparse._SubParsersAction)
    ).choices["all"]
    inner.set_defaults(func=failing(UserError("--thing x: expected y")))
    assert main(["build", "all"]) == 2
    assert capsys.readouterr().err.strip() == "bias-hub: error: --thing x: expected y"
    inner.set_defaults(func=failing(RuntimeError("CUDA error: device-side assert triggered")))
    with pytest.raises(RuntimeError, match="device-side assert"):
        main(["build", "all"])


def test_the_project_s_runtime_failures_are_user_errors() -> None:
    from bias_hub.builders.jbbq.translate import TranslationError
    from bias_hub.builders.shared.api_cache import APIFailure
    from bias_hub.builders.shared.sources import SourceError

    for error in (SourceError, APIFailure, TranslationError):
        assert issubclass(error, UserError)
    assert UserError in cli.USER_ERRORS and RuntimeError not in cli.USER_ERRORS


@pytest.fixture
def immutable(tmp_path: Path):
    folder = tmp_path / "imm"
    folder.mkdir()
    if (
        shutil.which("chattr") is None
        or subprocess.run(["chattr", "+i", str(folder)], capture_output=True).returncode
    ):
        pytest.skip("chattr +i is not available here")
    yield folder
    subprocess.run(["chattr", "-i", str(folder)], check=True)


def test_a_build_into_an_immutable_out_root_names_it_before_any_work(
    immutable: Path, capsys
) -> None:
    # A raw OSError on a hidden staging path, for root too (os.access says yes).
    assert main(["build", "weat_word_sets", "--out-root", str(immutable)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"bias-hub: error: --out-root {immutable} is not writable (Operation not permitted)"
    )
    assert main(["build", "all", "--out-root", str(immutable)]) == 2
    assert f"--out-root {immutable} is not writable" in capsys.readouterr().err


def test_a_build_whose_out_root_is_under_a_file_names_it(tmp_path: Path, capsys) -> None:
    (tmp_path / "afile").write_text("x")
    out_root = tmp_path / "afile" / "datasets"
    assert main(["build", "weat_word_sets", "--out-root", str(out_root)]) == 2
    assert (
        capsys.readouterr()
        .err.strip()
        .startswith(f"bias-hub: error: --out-root {out_root} is not writable (")
    )


def test_a_pipeline_out_in_an_immutable_folder_is_refused_before_any_work(
    immutable: Path, capsys
) -> None:
    # The same for --out: permission bits said yes to root; a real write says no.
    code = main(["nli", "evaluate", "--model", "no/such-model", "--out", str(immutable / "run")])
    assert code == 2
    assert (
        capsys.readouterr().err.strip()
        == f"bias-hub: error: --out {immutable / 'run'}: {immutable} is not writable"
    )


def test_ctrl_c_during_the_imports_of_compiled_libraries_waits_for_them(python_sigint) -> None:
    # A SIGINT raised inside torch's import (Python code its C++ calls back into) ended the
    # process with "terminate called after throwing ... error_already_set", or was swallowed
    # by a __del__; held until the block ends, it is an ordinary KeyboardInterrupt.
    from bias_hub.builders.shared.console import interrupts_deferred

    found = signal.getsignal(signal.SIGINT)
    reached_the_end = False
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the handler runs here: it must not raise
            reached_the_end = True
    assert reached_the_end
    assert signal.getsignal(signal.SIGINT) is found  # put back
    with interrupts_deferred():  # no signal: nothing raised
        pass


def test_ctrl_c_inside_a_finalizer_is_not_swallowed() -> None:
    # Python prints "Exception ignored in ... __del__" for a KeyboardInterrupt raised there
    # and carries on: the run went on to its end as if there had been no Ctrl-C.
    from bias_hub.builders.shared.console import raise_interrupt_outside_finalizers

    class Finalized:
        def __del__(self) -> None:
            raise_interrupt_outside_finalizers(signal.SIGINT, sys._getframe())

    previous = signal.signal(signal.SIGINT, raise_interrupt_outside_finalizers)
    try:
        with pytest.raises(KeyboardInterrupt):
            Finalized()  # collected at once: the handler runs inside __del__, raises nothing
            # The signal comes again, here, 0.05 s later. A wait that could end first on a busy
            # machine left the signal to land in a later test (a KeyboardInterrupt traceback in
            # a green run); this one ends when it comes.
            time.sleep(60)
    finally:
        signal.signal(signal.SIGINT, previous)


def test_an_ascii_terminal_shows_reproduce_list_with_escapes(monkeypatch) -> None:
    # The study titles are Japanese: an ASCII console (PYTHONIOENCODING=ascii, a terminal
    # without UTF-8) used to end in a UnicodeEncodeError. In-process: a separate Python would
    # spend most of ten seconds importing the libraries this worker has already imported.
    written = io.BytesIO()
    console = io.TextIOWrapper(written, encoding="ascii", errors="strict")
    monkeypatch.setattr(sys, "stdout", console)
    assert main(["reproduce", "--list"]) == 0
    console.flush()
    out = written.getvalue().decode("ascii")
    assert "jbbq  v" in out and "\\u" in out


def test_a_damaged_results_json_is_one_line_naming_it(tmp_path: Path, capsys) -> None:
    from bias_hub.pipelines.common import RunFolder

    run_dir = tmp_path / "run"
    with RunFolder(run_dir) as run:
        # A score run's results.json that lost its "join" (an edit, another version).
        run.write_json(
            "results.json",
            {
                "part": "score",
                "step": "score",
                "metric": "bbq_bias",
                "summary_keys": [],
                "per_test": False,
            },
        )
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{run_dir / 'results.json'}: report.md cannot be rendered from it (KeyError:" in err
    (run_dir / "results.json").write_text('{"part": "score", "metric"', encoding="utf-8")
    # Cut since the run wrote it: not the run's file, refused as such; let through, damaged.
    assert main(["report", str(run_dir)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"bias-hub: error: {run_dir / 'results.json'} was edited since")
    assert main(["report", str(run_dir), "--allow-edited"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"bias-hub: error: {run_dir / 'results.json'}: damaged, not JSON (")


def test_confidence_level_zero_is_said_to_be_none_on_the_console(tmp_path: Path, capsys) -> None:
    assert (
        main(
            [
                "score",
                "bbq_bias",
                "--predictions",
                str(tmp_path / "p.txt"),
                "--out",
                str(tmp_path / "r"),
                "--confidence-level",
                "0",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "--confidence-level 0 is read as none: no bootstrap intervals, no paired tests" in err


def test_n_resamples_is_capped_with_the_reason(tmp_path: Path, capsys) -> None:
    code = main(
        [
            "score",
            "bbq_bias",
            "--predictions",
            str(tmp_path / "p.jsonl"),
            "--out",
            str(tmp_path / "r"),
            "--n-resamples",
            str(10**11),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert "--n-resamples 100,000,000,000: at most 100,000." in err
    assert "the Monte Carlo error falls as 1/sqrt(N)" in err
