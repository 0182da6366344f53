"""The console: what ``capture`` sends to the log file and what still reaches the console."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bias_hub.builders.shared import console


@pytest.fixture
def fd_backed_streams(monkeypatch: pytest.MonkeyPatch):
    """Call in the test body: sys.stdout/stderr on descriptors 1 and 2, as in a real command.

    (pytest puts its own stream objects back when the test body starts, so a fixture cannot.)
    """
    console.configure(0)

    def use() -> None:
        monkeypatch.setattr(sys, "stdout", sys.__stdout__)
        monkeypatch.setattr(sys, "stderr", sys.__stderr__)

    yield use
    console.configure(0)


def test_capture_sends_output_to_the_log_and_keeps_stage_lines_on_the_console(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], fd_backed_streams
) -> None:
    fd_backed_streams()
    log_path = tmp_path / "logs" / "part.log"
    log_path.parent.mkdir()
    log_path.write_text("left by an earlier run\n", encoding="utf-8")
    own = logging.getLogger("bias_hub.pipelines.fake_part")
    driver = logging.getLogger("bias_hub.pipelines.fake_driver")
    library = logging.getLogger("datasets")
    with console.capture(log_path, keep=("bias_hub.pipelines.fake_driver",)):
        print("a print from the part")
        os.write(2, b"bytes written straight to descriptor 2\n")
        subprocess.run([sys.executable, "-c", "print('a child process line')"], check=True)
        own.info("an info line of the part")
        own.debug("a debug line of the part")
        own.warning("a warning of the part")
        library.debug("a debug line of a library")
        logging.getLogger("filelock").debug("lock 1234 acquired")
        logging.getLogger("filelock").info("a filelock info line")
        driver.info("a line the driver keeps on the console")
    sys.stdout.flush()
    text = log_path.read_text(encoding="utf-8")
    for line in [
        "a print from the part",
        "bytes written straight to descriptor 2",
        "a child process line",
        "INFO bias_hub.pipelines.fake_part: an info line of the part",
        "DEBUG bias_hub.pipelines.fake_part: a debug line of the part",
        "WARNING bias_hub.pipelines.fake_part: a warning of the part",
        "DEBUG datasets: a debug line of a library",
        "INFO filelock: a filelock info line",
    ]:
        assert line in text
    assert "lock 1234 acquired" not in text  # bookkeeping DEBUG lines stay out
    assert "left by an earlier run" not in text  # the log is replaced, not appended to
    assert (
        text.count("a debug line of a library") == 1
    )  # datasets propagates to the root: once only

    out, err = capfd.readouterr()
    shown = out + err
    assert "a line the driver keeps on the console" in err
    assert "a warning of the part" in err
    for hidden in [
        "a print from the part",
        "descriptor 2",
        "a child process line",
        "an info line of the part",
        "debug line",
    ]:
        assert hidden not in shown

    # Afterwards everything is back: output reaches the console, libraries are at WARNING again.
    print("after the capture")
    own.info("an info line after the capture")
    library.info("a library info line after the capture")
    sys.stdout.flush()
    out, err = capfd.readouterr()
    assert "after the capture" in out and "an info line after the capture" in err
    assert "library info line" not in out + err
    assert library.level == logging.WARNING
    assert "after the capture" not in log_path.read_text(encoding="utf-8")


def test_capture_restores_the_descriptors_when_the_block_fails(
    tmp_path: Path, capfd: pytest.CaptureFixture[str], fd_backed_streams
) -> None:
    fd_backed_streams()
    log_path = tmp_path / "part.log"
    with pytest.raises(ValueError, match="boom"), console.capture(log_path):
        print("before the error")
        raise ValueError("boom")
    print("after the error")
    sys.stdout.flush()
    out, _ = capfd.readouterr()
    assert "after the error" in out and "before the error" not in out
    assert "before the error" in log_path.read_text(encoding="utf-8")


def test_library_handlers_step_aside_during_capture_and_come_back(
    tmp_path: Path, fd_backed_streams
) -> None:
    fd_backed_streams()
    library = logging.getLogger("transformers")
    own_handler = logging.StreamHandler()
    library.addHandler(own_handler)
    try:
        with console.capture(tmp_path / "part.log"):
            assert own_handler not in library.handlers
            library.warning("a library warning")
        assert own_handler in library.handlers
        # Written once, by the log file's handler, with its time stamp and level.
        text = (tmp_path / "part.log").read_text(encoding="utf-8")
        assert (
            text.count("a library warning") == 1
            and "WARNING transformers: a library warning" in text
        )
    finally:
        library.removeHandler(own_handler)


def test_add_log_file_writes_each_record_once_at_every_level(tmp_path: Path) -> None:
    handler = console.add_log_file(tmp_path / "run.log")
    root_level = logging.getLogger().level
    logging.getLogger().setLevel(logging.DEBUG)
    try:
        logging.getLogger("bias_hub.pipelines.x").debug("own debug")
        logging.getLogger("datasets.builder").warning("library warning")
        logging.getLogger("some_other_library").info("other library info")
    finally:
        logging.getLogger().setLevel(root_level)
        console.remove_log_file(handler)
    lines = (tmp_path / "run.log").read_text(encoding="utf-8").splitlines()
    assert [line.split(" ", 2)[2] for line in lines] == [
        "DEBUG bias_hub.pipelines.x: own debug",
        "WARNING datasets.builder: library warning",
        "INFO some_other_library: other library info",
    ]


LIBRARY_LEVELS = """
import importlib, importlib.util, logging, sys
from bias_hub.builders.shared import console
finders = list(sys.meta_path)
console.configure(0)
assert sys.meta_path == finders, "configure touched the import system"
assert "datasets" not in sys.modules and "transformers" not in sys.modules
# The CLI asks find_spec whether a library is installed, then imports it.
assert importlib.util.find_spec("datasets") is not None
datasets = importlib.import_module("datasets")
print(logging.getLogger("datasets").level, datasets.is_progress_bar_enabled())
console.configure(1)
import transformers
print(logging.getLogger("transformers").level)
"""


@pytest.mark.slow  # a fresh interpreter imports the model libraries
def test_libraries_imported_after_configure_get_its_levels() -> None:
    # configure imports no library (evaluate alone takes seconds) and installs no import hook: a
    # library imported later reads the level and bars configure last chose from its own
    # variables, overriding what the user's environment said before the command.
    done = subprocess.run(
        [sys.executable, "-c", LIBRARY_LEVELS],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TRANSFORMERS_VERBOSITY": "debug", "DATASETS_VERBOSITY": "debug"},
    )
    assert done.stdout.split() == ["30", "False", "20"], done.stdout + done.stderr


@pytest.mark.slow  # a fresh interpreter imports the model libraries
def test_a_command_that_needs_no_model_imports_no_model_library(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from bias_hub.pipelines.cli import main\n"
        "code = main(['build', 'weat_word_sets', '--out-root', sys.argv[1]])\n"
        "print(code, sorted(m for m in ('torch', 'transformers', 'evaluate') if m in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "0 []", done.stdout + done.stderr
    assert (tmp_path / "weat_word_sets" / "README.md").is_file()
