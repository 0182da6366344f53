"""``bias-hub demo``: every part's demo on the embedded defaults, then one report.

A part with a demo has ``pipelines/<part>/demo.py``: an integer ``ORDER``, the ``EXTRAS`` it
needs (optional) and ``run_demo(out_dir) -> dict`` (``title``, ``summary`` Markdown, ``report``
path relative to the part's folder, optionally ``stages``: ``[{"stage", "seconds"}]``). Each
part writes ``<out>/<part>/`` whole; with ``jobs`` > 1 parts run at once, each in a process
forked from the driver (they are independent), so one part's single-threaded stretches leave
no core idle; the driver imports what they share before it forks them (``SHARED_LIBRARIES``,
during the dataset build of a full run). A part whose extra is missing is skipped, named with
its install command.

The console gets one line per part and per stage; everything else a part writes goes to
``<out>/logs/<part>.log``. ``<out>/demo.json`` records what each part folder holds; the index
is written from it after every part, so ``--only`` re-runs some parts and keeps the others,
and a full run removes the folders of parts the demo no longer has.
"""

from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import multiprocessing.connection
import os
import shutil
import sys
import time
from datetime import datetime
from pathlib import Path
from types import ModuleType

from bias_hub import pipelines
from bias_hub.builders import build_all
from bias_hub.builders.shared import console
from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.extras import extras_line, missing_extra, missing_extras
from bias_hub.builders.shared.files import ensure_writable_folder, write_json
from bias_hub.pipelines.common.locations import (
    default_datasets_root,
    ensure_built,
    missing_data_files,
)
from bias_hub.pipelines.discovery import builder_commands, submodules

# The CLI imports torch and transformers before running these commands, with Ctrl-C held
# meanwhile (a SIGINT inside torch's import can abort the process); the parts forked after
# that share them.
LOADS_MODELS = True

__all__ = [
    "can_fork",
    "default_jobs",
    "demo",
    "demo_parts",
    "parse_prior_stage",
    "register",
    "run",
    "start_datasets",
]

# What most parts import (their rows through datasets' loader, their figures through
# matplotlib): a driver about to fork several parts imports them once, so that no forked part
# imports them again (~1.5 s of CPU each on a small machine).
SHARED_LIBRARIES = ("datasets", "matplotlib.figure")

log = logging.getLogger(__name__)
MANIFEST = "demo.json"
LOGS = "logs"
DEMO_LOG = "demo.log"
DATASETS_LOG = "datasets.log"


def demo_parts() -> list[ModuleType]:
    return sorted(submodules(pipelines, "demo"), key=lambda module: (module.ORDER, module.__name__))


def _part_name(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 2)[-2]  # bias_hub.pipelines.<part>.demo


def parse_prior_stage(text: str) -> dict:
    """``NAME=SECONDS`` (a stage run before the demo, e.g. ``setup=95.2``) as a breakdown row."""
    name, sep, seconds = text.partition("=")
    try:
        value = float(seconds)
    except ValueError:
        value = -1.0
    if not sep or not name.strip() or value < 0:
        raise argparse.ArgumentTypeError(f"{text!r}: expected NAME=SECONDS, e.g. setup=95.2")
    return {"stage": name.strip(), "seconds": round(value, 1)}


def _now(timespec: str = "seconds") -> str:
    return datetime.now().isoformat(timespec=timespec)


def _startup_seconds() -> float | None:
    """Seconds since this process started: the interpreter and the imports before the first part."""
    try:
        import psutil  # a dependency of accelerate
    except ImportError:
        return None
    return round(max(0.0, time.time() - psutil.Process().create_time()), 1)


def _load_manifest(out: Path) -> dict:
    path = out / MANIFEST
    if not path.is_file():
        return {"parts": {}, "prior_stages": []}
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise ValueError(
            f"{path}: not valid JSON ({err}); delete it to start the demo folder afresh"
        ) from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("parts"), dict):
        raise ValueError(
            f"{path}: expected an object with a 'parts' object; delete it to start afresh"
        )
    manifest.setdefault("prior_stages", [])
    return manifest


def _stages(part: str, summary: dict) -> list[dict]:
    stages = summary.get("stages", [])
    valid = isinstance(stages, list) and all(
        isinstance(s, dict)
        and isinstance(s.get("stage"), str)
        and isinstance(s.get("seconds"), (int, float))
        and not isinstance(s.get("seconds"), bool)
        for s in stages
    )
    if not valid:
        raise ValueError(
            f"demo part {part}: 'stages' must be a list of {{'stage': name, 'seconds': number}}, "
            f"got {stages!r}"
        )
    return [{"stage": s["stage"], "seconds": round(float(s["seconds"]), 1)} for s in stages]


def _run_part(
    module: ModuleType, out: Path, run_started: str, demo_log: logging.Handler, title: str
) -> dict:
    """Run one part with its output captured in its log; return its manifest entry."""
    part = _part_name(module)
    log_name = f"{LOGS}/{part}.log"
    entry: dict = {"part": part, "title": title, "run": run_started, "log": log_name}
    started = time.perf_counter()
    # The demo's own log holds the driver's lines; the part's lines go to the part's log only.
    demo_log.setLevel(logging.CRITICAL + 1)
    try:
        with console.capture(out / log_name):
            try:
                summary = module.run_demo(out / part)
                if not isinstance(summary, dict):
                    raise TypeError(
                        f"demo part {part}: run_demo returned {type(summary).__name__}, expected a dict"
                    )
                entry["stages"] = _stages(part, summary)
            except Exception as err:
                # The traceback of a bug goes to the part's log (and the console under -v); the
                # console gets the one line below. An error a user can fix is that line alone.
                extra = missing_extra(err)
                fixable = isinstance(err, UserError) or extra is not None
                logging.getLogger(module.__name__).debug(
                    "demo part %s failed: %s", part, extra or err, exc_info=not fixable
                )
                raise
    except Exception as err:  # one failed part still leaves the others and a true index
        extra = missing_extra(err)  # a module of an extra that is not installed: the extra named
        error = str(extra) if extra else f"{type(err).__name__}: {err}".strip()
        entry.update(status="failed", error=error)
    else:
        entry.update(
            status="ok",
            title=summary.get("title", part),
            summary=summary.get("summary", ""),
            report=summary.get("report"),
        )
    finally:
        demo_log.setLevel(logging.DEBUG)
    entry["seconds"] = round(time.perf_counter() - started, 1)
    entry["finished"] = _now()
    return entry


def _announce(entry: dict, out: Path) -> None:
    """The console's lines for a part that ended: its time and stages, or its error."""
    if entry["status"] == "ok":
        log.info("%s: %.1f s", entry["part"], entry["seconds"])
        for stage in entry["stages"]:
            log.info("  %s: %.1f s", stage["stage"], stage["seconds"])
    else:
        log.error(
            "%s: failed after %.1f s: %s (see %s)",
            entry["part"],
            entry["seconds"],
            entry["error"],
            out / entry["log"],
        )


def can_fork() -> bool:
    """Whether parts can run in forked processes (not on Windows; not on macOS, where a forked
    process may crash in system libraries)."""
    return "fork" in multiprocessing.get_all_start_methods() and sys.platform != "darwin"


def default_jobs() -> int:
    """Parts at once by default: one per core (the parts are mostly single-threaded), where
    processes can be forked (elsewhere a spawned process would import every library again)."""
    return _cores() if can_fork() else 1


def _cores() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _part_process(module, out, run_started, demo_log, title, threads, sender) -> None:
    """A forked process's work: the part, then its entry sent to the driver.

    Its torch gets its share of the cores (``threads``; OMP_NUM_THREADS, when set, decides):
    the demo's small models gain little from more threads, and the threads of parts that run
    side by side would wait on each other's cores (measured: 270 CPU-seconds against 230 one
    part at a time, the same work)."""
    torch = sys.modules.get("torch")
    if torch is not None and "OMP_NUM_THREADS" not in os.environ:
        torch.set_num_threads(threads)
    try:
        entry = _run_part(module, out, run_started, demo_log, title)
    except KeyboardInterrupt:  # Ctrl-C reaches every process: the driver says it, once
        sys.exit(130)
    sender.send(entry)
    sender.close()


def _run_parts(
    modules: list[ModuleType],
    out: Path,
    run_started: str,
    demo_log: logging.Handler,
    titles: dict[str, str],
    jobs: int,
):
    """Yield each part's entry as it ends; up to ``jobs`` parts run at once in forked processes.

    A part whose process dies without an entry (killed, out of memory) gets a failed entry
    naming its exit code. An interrupt stops the running parts before it propagates."""
    if jobs <= 1:
        for module in modules:
            part = _part_name(module)
            yield _run_part(module, out, run_started, demo_log, titles[part])
        return
    waiting = list(modules)
    running: dict = {}  # sentinel -> (process, receiver, part, started)
    try:
        while waiting or running:
            while waiting and len(running) < jobs:
                module = waiting.pop(0)
                part = _part_name(module)
                process, receiver = _forked(
                    _part_process,
                    module,
                    out,
                    run_started,
                    demo_log,
                    titles[part],
                    max(1, _cores() // jobs),
                )
                running[process.sentinel] = (process, receiver, part, time.perf_counter())
            ready = multiprocessing.connection.wait(list(running))
            for sentinel in ready:
                process, receiver, part, started = running.pop(sentinel)
                entry = _received(process, receiver)
                if entry is None:
                    entry = {
                        "part": part,
                        "title": titles[part],
                        "run": run_started,
                        "log": f"{LOGS}/{part}.log",
                        "status": "failed",
                        "error": f"its process ended with exit code {process.exitcode} "
                        "before reporting (killed, or out of memory?)",
                        "seconds": round(time.perf_counter() - started, 1),
                        "finished": _now(),
                    }
                yield entry
    finally:
        # Left early (Ctrl-C reached every process): each part stops its own work and removes
        # what it staged; one that has not ended after a grace period is stopped.
        deadline = time.monotonic() + 15
        for process, receiver, _part, _started in running.values():
            process.join(max(0.1, deadline - time.monotonic()))
            if process.is_alive():
                process.terminate()
                process.join()
            receiver.close()


def _write(out: Path, manifest: dict, order: list[str]) -> Path:
    from bias_hub.pipelines.report_index import write_index

    entries = [manifest["parts"][part] for part in order if part in manifest["parts"]]
    index = write_index(
        out, entries, prior_stages=manifest["prior_stages"], run=manifest.get("run")
    )
    write_json(out / MANIFEST, manifest)
    return index


def _remove_stale(out: Path, manifest: dict, known: list[str], full_run: bool) -> None:
    """On a full run, the folders of parts the demo no longer has; logs no entry refers to."""
    if full_run:
        for part in [p for p in manifest["parts"] if p not in known]:
            shutil.rmtree(out / part, ignore_errors=True)
            del manifest["parts"][part]
            log.debug("removed %s (no longer a demo part)", out / part)
    keep = {
        DEMO_LOG,
        DATASETS_LOG,
        *(Path(entry["log"]).name for entry in manifest["parts"].values() if entry.get("log")),
    }
    for path in (out / LOGS).glob("*.log"):
        if path.name not in keep:
            path.unlink()


def _check_links(out: Path) -> None:
    """One console line when a link or image of the report does not resolve; the list in the log."""
    from bias_hub.pipelines.report_index import broken_links

    broken = broken_links(out)
    if broken:
        log.warning(
            "demo: %d link(s) of the report do not resolve, e.g. %s (all of them in %s)",
            len(broken),
            broken[0],
            out / LOGS / DEMO_LOG,
        )
        for line in broken:
            log.debug("broken link: %s", line)


def _build_datasets(log_path: Path, rebuild: bool) -> dict | None:
    """Build, with its output in ``log_path``, what ``bias-hub build all`` builds: all of it
    (``rebuild``, as ``make demo`` does, so the demo never reads data an older version built) or
    what the data root lacks (an installed bias-hub has no Makefile). Returns the stage for the
    index's breakdown (with ``built`` and ``root``), or None when nothing was missing."""
    root = default_datasets_root()
    commands = builder_commands()
    names = [name for name, command in commands.items() if getattr(command, "IN_ALL", True)]
    if not rebuild:
        names = [name for name in names if missing_data_files(root / name) != []]
    if not names:
        log_path.unlink(missing_ok=True)  # an earlier run's, describing builds not made now
        return None
    started = time.perf_counter()
    with console.capture(log_path):
        try:
            if rebuild:
                build_all(root, commands, ["build", "all"])  # the command a card may repeat
            else:
                for name in names:
                    ensure_built(name, root)
        except Exception:  # the console gets one line; the log keeps the traceback
            log.debug("the dataset build failed", exc_info=True)
            raise
    return {
        "stage": "datasets",
        "seconds": round(time.perf_counter() - started, 1),
        "built": names,
        "root": str(root),
    }


def _forked(target, *args):
    """Start ``target(*args, sender)`` in a forked process; returns (process, receiver)."""
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    # Output written before the fork must not be written again by the child.
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    process = context.Process(target=target, args=(*args, sender))
    process.start()
    sender.close()
    return process, receiver


def _received(process, receiver):
    """What a forked process sent (waiting for it); None if it ended without sending."""
    try:  # the driver holds no copy of the sending end: a process that ends closes the pipe
        value = receiver.recv()
    except EOFError:
        value = None
    receiver.close()
    process.join()
    return value


def _datasets_process(log_path: Path, rebuild: bool, sender) -> None:
    try:
        sender.send({"stage": _build_datasets(log_path, rebuild)})
    except KeyboardInterrupt:  # Ctrl-C reaches every process: the driver says it, once
        sys.exit(130)
    except Exception as err:  # the driver says it, with the log
        sender.send({"error": f"{type(err).__name__}: {err}".strip()})
    sender.close()


def start_datasets(args: argparse.Namespace) -> None:
    """Before the libraries load (the CLI calls it first): a full run's dataset build starts in
    a forked process, so that it runs while torch and transformers import (several seconds on
    a small machine); ``run`` waits for it. Where processes cannot be forked, ``run``
    builds itself."""
    if args.only or not can_fork():
        return
    out = ensure_writable_folder(args.out, "--out")
    log_path = out / LOGS / DATASETS_LOG
    log_path.parent.mkdir(parents=True, exist_ok=True)
    args.datasets_build = (
        _forked(_datasets_process, log_path, args.build_datasets == "all"),
        log_path,
    )


def _datasets_stage(args: argparse.Namespace) -> dict | None:
    """The dataset build's stage: waited for if ``start_datasets`` started it, else run here."""
    out = ensure_writable_folder(args.out, "--out")
    started = getattr(args, "datasets_build", None)
    if started is None:
        stage = _build_datasets(out / LOGS / DATASETS_LOG, args.build_datasets == "all")
    else:
        (process, receiver), log_path = started
        reply = _received(process, receiver) or {
            "error": f"its process ended with exit code {process.exitcode} before reporting"
        }
        if "error" in reply:
            raise UserError(f"datasets: the build failed: {reply['error']} (see {log_path})")
        stage = reply["stage"]
    if stage is None:
        return None
    log.info(
        "datasets: %.1f s (built %s under %s)",
        stage["seconds"],
        ", ".join(stage["built"]),
        stage["root"],
    )
    # Built in a forked process while the libraries loaded: its seconds are in the start-up's.
    return {"stage": "datasets", "seconds": stage["seconds"], "during_startup": started is not None}


def demo(
    out: str | Path,
    only: list[str] | None = None,
    prior_stages: list[dict] | None = None,
    jobs: int = 1,
) -> Path:
    """Run the demo parts (all, or those in ``only``) into ``out``; return ``index.md``.

    ``jobs``: how many parts run at once (each in a forked process when more than one).

    ``prior_stages`` are stages that ran before the demo (``make demo`` passes the setup and
    dataset-build times) for the index's breakdown; without them the last ones given are kept.
    Raises ``RuntimeError`` naming the parts that failed, after the others have run.
    """
    modules = {_part_name(module): module for module in demo_parts()}
    unknown = sorted(set(only or []) - set(modules))
    if unknown:
        raise ValueError(
            f"--only: unknown part(s) {', '.join(unknown)}; expected some of: {', '.join(modules)}"
        )
    chosen = [part for part in modules if not only or part in only]
    lacking = {part: missing_extras(getattr(modules[part], "EXTRAS", ())) for part in chosen}
    lacking = {part: extras for part, extras in lacking.items() if extras}
    if lacking:
        skipped = ", ".join(f"{part} ({', '.join(extras)})" for part, extras in lacking.items())
        every = {extra: m for extras in lacking.values() for extra, m in extras.items()}
        line = f"demo: {skipped}: {extras_line(every)}"
        if len(lacking) == len(chosen):
            raise UserError(f"{line}; no part chosen can run here (nothing was written)")
        log.warning("%s; running the others", line)
        chosen = [part for part in chosen if part not in lacking]
    out = ensure_writable_folder(out, "--out")
    out.mkdir(parents=True, exist_ok=True)
    manifest = _load_manifest(out)
    # Entries whose folder is gone describe nothing; those of parts the demo no longer has stay
    # recorded (not shown) until a full run removes their folders.
    manifest["parts"] = {p: e for p, e in manifest["parts"].items() if (out / p).is_dir()}
    for part in modules:
        if part not in chosen and part not in manifest["parts"] and (out / part).is_dir():
            log.warning(
                "%s is not in the index (no record of its run): run the whole demo to refresh it",
                out / part,
            )
    if min(jobs, len(chosen)) > 1 and can_fork():  # counted in the start-up, before the parts
        console.import_installed(SHARED_LIBRARIES)
    run_started = _now("microseconds")  # also tells this run's entries from earlier ones
    if prior_stages:
        manifest["prior_stages"] = [{**stage, "run": run_started} for stage in prior_stages]
    manifest["run"] = {
        "started": run_started,
        "parts": chosen,
        "skipped": {part: list(extras) for part, extras in lacking.items()},
        "startup_seconds": _startup_seconds(),
    }
    (out / LOGS).mkdir(exist_ok=True)
    (out / LOGS / DEMO_LOG).unlink(missing_ok=True)
    demo_log = console.add_log_file(out / LOGS / DEMO_LOG)
    started = time.perf_counter() - (manifest["run"]["startup_seconds"] or 0.0)
    try:
        if jobs > 1 and not can_fork():
            log.warning(
                "demo: --jobs %d needs forked processes, not available here: one at a time", jobs
            )
            jobs = 1
        jobs = max(1, min(jobs, len(chosen)))
        at_once = f", {jobs} at a time" if jobs > 1 else ""
        log.info("demo: %s -> %s (full logs in %s%s)", ", ".join(chosen), out, out / LOGS, at_once)
        manifest["run"]["jobs"] = jobs
        # A failed run keeps the last title.
        titles = {part: manifest["parts"].get(part, {}).get("title", part) for part in chosen}
        ordered = [modules[part] for part in chosen]
        for entry in _run_parts(ordered, out, run_started, demo_log, titles, jobs):
            manifest["parts"][entry["part"]] = entry
            _announce(entry, out)
            manifest["run"]["seconds"] = round(time.perf_counter() - started, 1)
            index = _write(out, manifest, list(modules))
        _remove_stale(out, manifest, list(modules), full_run=not only)
        manifest["run"]["seconds"] = round(time.perf_counter() - started, 1)
        index = _write(out, manifest, list(modules))
        _check_links(out)
        log.info("demo: %.1f s; report: %s", manifest["run"]["seconds"], index.with_suffix(".html"))
    finally:
        console.remove_log_file(demo_log)
    failed = [part for part in chosen if manifest["parts"][part]["status"] == "failed"]
    if failed:
        raise UserError(f"demo: {', '.join(failed)} failed; see {out / LOGS}/<part>.log")
    return index


def run(args: argparse.Namespace) -> None:
    prior = list(args.prior_stage or [])
    jobs = args.jobs or default_jobs()
    if not args.only:  # a full run reads every dataset; a part run builds what it reads
        if jobs > 1 and can_fork():  # while the datasets build in their own process
            console.import_installed(SHARED_LIBRARIES)
        built = _datasets_stage(args)
        if built is not None:
            prior.append(built)
    demo(args.out, args.only, prior or None, jobs=jobs)


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a whole number of parts, 1 or more")
    return value


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("demo", help="run every part on the embedded defaults")
    parser.add_argument("--out", default="reports/demo", help="output folder")
    parser.add_argument(
        "--only", nargs="*", metavar="PART", help="run only these parts (the others are kept)"
    )
    parser.add_argument(
        "--prior-stage",
        action="append",
        type=parse_prior_stage,
        metavar="NAME=SECONDS",
        help="a stage that ran before the demo, for the index's time breakdown (make demo passes "
        "setup and datasets)",
    )
    parser.add_argument(
        "--jobs",
        type=_positive_int,
        metavar="N",
        help="parts to run at once, each in its own process (default: one per core, "
        f"here {default_jobs()}; 1 runs them one after the other in this process)",
    )
    parser.add_argument(
        "--build-datasets",
        choices=("missing", "all"),
        default="missing",
        help="before a full run, build the datasets the data root lacks (default), or rebuild "
        "all that `bias-hub build all` builds (make demo: never data an older version built); "
        "it runs while the libraries load",
    )
    parser.set_defaults(func=run, before_loading=start_datasets)
