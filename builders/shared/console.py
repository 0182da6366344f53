"""What a command prints: log lines through ``logging``, one line per stage, bars only on a terminal.

Every command configures the console once (``configure``); code logs with
``logging.getLogger(__name__)``, times stages with ``stage`` and wraps long loops in
``progress``. Default: INFO from this project, warnings from libraries; ``-q``: warnings only,
no bars; ``-v``: DEBUG from this project, INFO and bars from libraries. Off a terminal a long
loop logs a line every ~10 % instead of a bar, so logs hold lines, not bar fragments.
``add_log_file`` copies every record into a file; ``capture`` sends all a block writes (child
processes and C extensions included) into a log file while the console keeps the stage lines.
"""

from __future__ import annotations

import contextvars
import functools
import logging
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TypeVar

from bias_hub.builders.shared.secrets import redact
from bias_hub.builders.shared.written import holding

__all__ = [
    "add_log_file",
    "capture",
    "command_line",
    "configure",
    "progress",
    "progress_enabled",
    "progress_meter",
    "remove_log_file",
    "stage",
    "verbosity",
]

T = TypeVar("T")
OWN = ("bias_hub", "bench")
LIBRARIES = tuple(
    "transformers datasets evaluate huggingface_hub accelerate httpx openai deepl".split()
)
# Libraries whose DEBUG lines are bookkeeping (lock taken/released, file opened, font scores):
# half of a log file if let through, so a captured block keeps them at INFO.
BOOKKEEPING = ("filelock", "fsspec", "matplotlib")
_FORMAT = "%(message)s"
_FILE_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"

# verbosity: from configure; console: the stream console lines go to while ``capture`` holds
# standard error (None = whatever sys.stderr is).
_state: dict = {"verbosity": 0, "console": None}


# Libraries that set their own level (and bars) when first imported read it from these
# variables, their documented switches: configure writes them, so a library imported later starts
# as configure chose, and one already imported is set through the logging API.
_LEVEL_VARIABLES = ("TRANSFORMERS_VERBOSITY", "DATASETS_VERBOSITY", "EVALUATE_VERBOSITY")
# datasets' bars ("Generating test split", one per Parquet file written) and the Hub's, which
# transformers' follow (weight loading).
_BAR_VARIABLES = ("HF_DATASETS_DISABLE_PROGRESS_BARS", "HF_HUB_DISABLE_PROGRESS_BARS")


def configure(verbosity: int = 0) -> None:
    """Set up the console for one command: ``verbosity`` -1 (``-q``), 0 or 1 (``-v``)."""
    _state["verbosity"] = verbosity
    own_level = {-1: logging.WARNING, 0: logging.INFO}.get(verbosity, logging.DEBUG)
    library_level = logging.INFO if verbosity > 0 else logging.WARNING
    handler = _console_handler()
    handler.setLevel(own_level)
    for name in OWN:
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        logger.propagate = False
        logger.addHandler(handler)  # once: addHandler skips a handler it has
    for name in LIBRARIES:
        logging.getLogger(name).setLevel(library_level)
    bars = verbosity > 0 and progress_enabled()
    for variable in _LEVEL_VARIABLES:
        os.environ[variable] = logging.getLevelName(library_level).lower()
    for variable in _BAR_VARIABLES:
        if bars:
            os.environ.pop(variable, None)
        else:
            os.environ[variable] = "1"
    _loaded_libraries_bars(bars)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def _loaded_libraries_bars(bars: bool) -> None:
    """The bars of libraries already imported (a test, a notebook, a step run in-process), through
    their own switches; a datasets imported under one of the variables above keeps what it said."""
    datasets = sys.modules.get("datasets")
    if datasets is not None and datasets.config.HF_DATASETS_DISABLE_PROGRESS_BARS is None:
        (datasets.enable_progress_bars if bars else datasets.disable_progress_bars)()
    transformers = sys.modules.get("transformers")
    if transformers is not None and not bars:
        transformers.logging.disable_progress_bar()
    evaluate = sys.modules.get("evaluate")
    if evaluate is not None:
        evaluate.disable_progress_bar()


def verbosity() -> int:
    """What ``configure`` was given; worker processes configure their console with it."""
    return _state["verbosity"]


def console_stream():
    """Where console lines and bars go: standard error, or the terminal ``capture`` kept aside."""
    return _state["console"] or sys.stderr


class _StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time (test capture swaps it)."""

    @property
    def stream(self):  # noqa: D102
        return console_stream()

    @stream.setter
    def stream(self, value) -> None:
        pass


class _RedactingFormatter(logging.Formatter):
    """A log line never carries a secret (``bias_hub.builders.shared.secrets``), whatever logged it."""

    def format(self, record: logging.LogRecord) -> str:
        return redact(super().format(record))


@functools.cache
def _console_handler() -> logging.Handler:
    handler = _StderrHandler()
    handler.setFormatter(_RedactingFormatter(_FORMAT))
    return handler


class _OncePerRecord(logging.Filter):
    """A handler attached at several levels of the logger tree sees a propagating record once."""

    def __init__(self) -> None:
        super().__init__()
        self._last: logging.LogRecord | None = None
        self._lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        with self._lock:
            if record is self._last:
                return False
            self._last = record
            return True


def _log_targets() -> list[logging.Logger]:
    # The root catches libraries not named in LIBRARIES; the named ones and our own may not
    # propagate (transformers turns propagation off), so they get the handler directly.
    return [logging.getLogger(), *(logging.getLogger(name) for name in (*OWN, *LIBRARIES))]


def add_log_file(path: str | os.PathLike[str]) -> logging.Handler:
    """Also write everything (DEBUG and up, libraries included) to ``path``; returns the handler.

    "Everything" is every record that passes its logger's level: ``capture`` lowers the
    libraries' levels to DEBUG for its block; otherwise they keep what ``configure`` set.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(path, encoding="utf-8")
    handler.setLevel(logging.DEBUG)
    handler.setFormatter(_RedactingFormatter(_FILE_FORMAT))
    handler.addFilter(_OncePerRecord())
    for logger in _log_targets():
        logger.addHandler(handler)
    return handler


def remove_log_file(handler: logging.Handler) -> None:
    for logger in _log_targets():
        logger.removeHandler(handler)
    handler.close()


_running: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "bias_hub_running", default=None
)


def running(argv: Iterable[str]) -> AbstractContextManager[list[str]]:
    """The block runs the command ``bias-hub ARGV`` (``command_line`` names it): a command run
    inside another one (a step of ``bias-hub reproduce``) is named as itself."""
    return holding(_running, list(argv))


def command_line(argv: list[str] | None = None) -> str:
    """The command as typed (to repeat or resume it), with ``--token``'s value, every other
    registered secret and every URL's userinfo replaced by ``***`` (``bias_hub.builders.shared.secrets``):
    ``argv``, else the command running (``running``), else the process's own."""
    current = _running.get()
    args = list(argv if argv is not None else current if current is not None else sys.argv[1:])
    for index, arg in enumerate(args):
        if arg.startswith("--token="):
            args[index] = "--token=***"
        elif arg == "--token" and index + 1 < len(args):
            args[index + 1] = "***"
    return shlex.join(["bias-hub", *(redact(arg) for arg in args)])


@contextmanager
def capture(path: str | os.PathLike[str], keep: tuple[str, ...] = ()) -> Iterator[Path]:
    """Send everything the block writes to the log file ``path`` (replaced), not to the console.

    The file gets every log record at DEBUG, libraries included (``BOOKKEEPING`` ones from
    INFO), and standard output and error at the file-descriptor level, so prints, library
    handlers, warnings, C extensions and child processes land there too. The console keeps
    warnings and errors, the lines of the loggers named in ``keep`` (all lines under ``-v``),
    and progress bars on a terminal.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    log_fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND, 0o666)
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    # Console lines keep going where standard error went, unless sys.stderr is not descriptor
    # 2 at all (a test's in-memory capture), which the redirection below leaves alone anyway.
    console = None
    if _fileno(sys.stderr) == 2:
        console = open(os.dup(saved[2]), "w", buffering=1, encoding="utf-8", errors="replace")
    previous_console = _state["console"]

    def console_filter(record: logging.LogRecord) -> bool:
        """While ``capture`` holds: only warnings, plus the lines of the loggers it keeps."""
        if record.levelno >= logging.WARNING or _state["verbosity"] > 0:
            return True
        return any(record.name == name or record.name.startswith(name + ".") for name in keep)

    handler = _console_handler()
    libraries = {name: logging.getLogger(name) for name in (*LIBRARIES, *BOOKKEEPING)}
    stashed = {name: (lib.level, list(lib.handlers)) for name, lib in libraries.items()}
    root = logging.getLogger()
    root_level = root.level
    try:
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        _state["console"] = console or previous_console
        handler.addFilter(console_filter)
        # The libraries' own stderr handlers would copy their records into the file a second
        # time, without time stamps: they step aside while the file handler has them.
        for name, lib in libraries.items():
            for own in stashed[name][1]:
                if not isinstance(own, logging.FileHandler):
                    lib.removeHandler(own)
            lib.setLevel(logging.INFO if name in BOOKKEEPING else logging.DEBUG)
        root.setLevel(logging.DEBUG)
        file_handler = add_log_file(path)
        try:
            yield path
        finally:
            remove_log_file(file_handler)
    finally:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        os.close(log_fd)
        handler.removeFilter(console_filter)
        _state["console"] = previous_console
        if console is not None:
            console.close()
        root.setLevel(root_level)
        for name, lib in libraries.items():
            level, handlers = stashed[name]
            lib.setLevel(level)
            for own in handlers:
                lib.addHandler(own)


def _fileno(stream) -> int | None:
    try:
        return stream.fileno()
    except (AttributeError, OSError, ValueError):
        return None


def progress_enabled() -> bool:
    """Bars only on a terminal, and not under ``-q``."""
    stream = console_stream()
    return _state["verbosity"] >= 0 and hasattr(stream, "isatty") and stream.isatty()


# Without a terminal (a log file, CI, a pipe), a loop reports in lines instead of a bar: one at
# every tenth of the way, once the loop looks long enough to be waited on (it has run, or is
# on course to run, this many seconds); without a known total, one line per interval.
LINE_AFTER_SECONDS = 10.0
LINE_EVERY_SECONDS = 30.0
_clock = time.monotonic  # the tests' fake clock replaces it


def progress(
    iterable: Iterable[T],
    desc: str = "",
    total: int | None = None,
    unit: str = "it",
    enabled: bool = True,
) -> Iterator[T]:
    """``iterable`` with its progress shown: a tqdm bar (count, rate, time left) on a terminal,
    a log line every ~10 % otherwise (``LINE_AFTER_SECONDS``), nothing under ``-q`` or when
    ``enabled`` is false."""
    if not enabled or _state["verbosity"] < 0:
        return iter(iterable)
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    if not progress_enabled():
        return _counted(iterable, _LineMeter(desc or "progress", total, unit))
    from tqdm.auto import tqdm

    return iter(_bar(tqdm, iterable, desc, total, unit))


@contextmanager
def progress_meter(
    desc: str, total: int | None = None, unit: str = "it", enabled: bool = True
) -> Iterator[Callable[[int], None]]:
    """``progress`` for work that is not one Python loop (a callback per step, results coming
    back from workers): yields ``advance(n=1)``, to call as the work gets done."""
    if not enabled or _state["verbosity"] < 0:
        yield lambda n=1: None
        return
    if not progress_enabled():
        yield _LineMeter(desc, total, unit).advance
        return
    from tqdm.auto import tqdm

    bar = _bar(tqdm, None, desc, total, unit)
    try:
        yield bar.update
    finally:
        bar.close()


def _bar(tqdm, iterable, desc: str, total: int | None, unit: str):
    return tqdm(
        iterable,
        desc=desc,
        total=total,
        unit=unit,
        leave=False,
        file=console_stream(),
        dynamic_ncols=True,
    )


def _counted(iterable: Iterable[T], meter: _LineMeter) -> Iterator[T]:
    for item in iterable:
        yield item
        meter.advance()


class _LineMeter:
    """Progress as log lines: one per tenth of ``total`` once the work is on course to last
    ``LINE_AFTER_SECONDS``; without a total, one per ``LINE_EVERY_SECONDS``."""

    def __init__(self, desc: str, total: int | None, unit: str) -> None:
        self.desc, self.total, self.unit = desc, total, unit
        self.started = self.last = _clock()
        self.done = self.tenth = 0
        self.log = logging.getLogger("bias_hub.progress")

    def advance(self, n: int = 1) -> None:
        from tqdm import tqdm

        self.done += n
        now = _clock()
        elapsed = now - self.started
        if self.total:
            reached = min(10, self.done * 10 // self.total)
            if reached <= self.tenth:
                return
            self.tenth = reached
            # On course to last LINE_AFTER_SECONDS (or past it): worth a line.
            if max(elapsed, elapsed * self.total / self.done) < LINE_AFTER_SECONDS:
                return
            rate = self.done / elapsed if elapsed > 0 else float("inf")
            left = max(0, self.total - self.done) / rate if rate > 0 else 0.0
            self.log.info(
                "%s: %d%% (%s/%s %s), %s, %s left",
                self.desc,
                100 * self.done // self.total,
                f"{self.done:,}",
                f"{self.total:,}",
                self.unit,
                _rate(rate, self.unit),
                tqdm.format_interval(left),
            )
        elif now - self.last >= LINE_EVERY_SECONDS:
            self.last = now
            self.log.info(
                "%s: %s %s, %s, %s elapsed",
                self.desc,
                f"{self.done:,}",
                self.unit,
                _rate(self.done / elapsed, self.unit),
                tqdm.format_interval(elapsed),
            )


def _rate(per_second: float, unit: str) -> str:
    if per_second >= 1 or per_second == 0:
        return f"{per_second:,.1f} {unit}/s"
    return f"{1 / per_second:,.1f} s/{unit}"


@contextmanager
def stage(name: str, logger: logging.Logger | None = None) -> Iterator[dict]:
    """Log one line when the stage has finished: ``name: 12.3 s``.

    The yielded dict collects ``seconds`` after the stage (for breakdown tables) and
    may get a ``note`` from the caller, appended to the line. A stage that fails logs
    nothing: the error says what happened.
    """
    logger = logger or logging.getLogger("bias_hub.pipelines")
    record: dict = {"stage": name}
    started = time.perf_counter()
    yield record
    record["seconds"] = round(time.perf_counter() - started, 1)
    note = f" ({record['note']})" if record.get("note") else ""
    logger.info("%s: %.1f s%s", name, record["seconds"], note)


@contextmanager
def interrupts_deferred() -> Iterator[None]:
    """Ctrl-C during the block is held, and raised as ``KeyboardInterrupt`` when it ends.

    For imports of compiled libraries (torch, transformers): a ``KeyboardInterrupt`` raised
    in Python code that their C++ calls back into ends the process with "terminate called
    after throwing ... error_already_set", or is swallowed by a ``__del__`` ("Exception
    ignored"). Held until the block ends, it is an ordinary one in our own code.
    Outside the main thread (where signals cannot be handled) the block runs as it is.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: received.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


def import_installed(names: Iterable[str]) -> None:
    """Import each module of ``names`` whose package is installed, with Ctrl-C held meanwhile
    (``interrupts_deferred``: they are compiled libraries). One that is not installed is left
    to the step that needs it, which then names its extra."""
    import importlib
    import importlib.util

    with interrupts_deferred():
        for name in names:
            if importlib.util.find_spec(name.partition(".")[0]) is not None:
                importlib.import_module(name)


def raise_interrupt_outside_finalizers(signum: int, frame) -> None:
    """A SIGINT handler: ``KeyboardInterrupt`` as Python's own handler raises it, except
    inside a ``__del__``, where Python would print "Exception ignored" and carry on as if
    there had been no Ctrl-C; the signal is then sent again a moment later."""
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            threading.Timer(0.05, os.kill, (os.getpid(), signum)).start()
            return
        frame = frame.f_back
    raise KeyboardInterrupt
