"""``bias-hub demo``: quiet console, one log per part, a true index after full, partial and failed runs."""

from __future__ import annotations

import argparse
import json
import logging
import os
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

from bias_hub.builders.shared import console
from bias_hub.pipelines import demo as demo_driver


def _part(name: str, order: int, body) -> types.ModuleType:
    module = types.ModuleType(f"bias_hub.pipelines.{name}.demo")
    module.ORDER = order
    module.run_demo = body
    return module


def _alpha(out_dir: Path) -> dict:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "report.md").write_text("# Alpha\n\nscore 0.25\n", encoding="utf-8")
    print("alpha prints a table")
    logging.getLogger("bias_hub.pipelines.alpha").info("alpha trains")
    logging.getLogger("transformers").debug("a library's debug line")
    return {
        "title": "Alpha part",
        "summary": "| x | y |\n|---|---|\n| 1 | 2 |",
        "report": "report.md",
        "stages": [{"stage": "tokenize", "seconds": 1.24}, {"stage": "train", "seconds": 12}],
    }


def _beta(label: str):
    def run_demo(out_dir: Path) -> dict:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "result.txt").write_text(label, encoding="utf-8")
        return {"title": "Beta part", "summary": f"beta says {label}"}

    return run_demo


def _failing(out_dir: Path) -> dict:
    print("gamma got this far")
    raise ValueError("gamma's input is missing")


def _on_descriptors(monkeypatch: pytest.MonkeyPatch) -> None:
    """sys.stdout/stderr on descriptors 1 and 2, as in a real command; pytest puts its own
    stream objects back when the test body starts, so this runs in the body."""
    monkeypatch.setattr(sys, "stdout", sys.__stdout__)
    monkeypatch.setattr(sys, "stderr", sys.__stderr__)


@pytest.fixture
def parts(monkeypatch: pytest.MonkeyPatch):
    """Swap the discovered parts for fakes."""
    console.configure(0)
    found: list[types.ModuleType] = []
    monkeypatch.setattr(demo_driver, "demo_parts", lambda: sorted(found, key=lambda m: m.ORDER))
    yield found
    console.configure(0)


def test_full_run_keeps_the_console_to_one_line_per_stage_and_logs_the_rest(
    tmp_path: Path, parts: list, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _on_descriptors(monkeypatch)
    parts += [_part("alpha", 1, _alpha), _part("beta", 2, _beta("first"))]
    out = tmp_path / "demo"
    index = demo_driver.demo(out, prior_stages=[{"stage": "setup", "seconds": 95.0}])
    sys.stdout.flush()
    console_text = "".join(capfd.readouterr())

    assert index == out / "index.md"
    lines = [line for line in console_text.splitlines() if line.strip()]
    assert lines[0] == f"demo: alpha, beta -> {out} (full logs in {out / 'logs'})"
    assert lines[1].startswith("alpha: ") and lines[1].endswith(" s")
    assert lines[2:4] == ["  tokenize: 1.2 s", "  train: 12.0 s"]
    assert lines[4].startswith("beta: ")
    assert lines[5].startswith("demo: ") and lines[5].endswith(str(out / "index.html"))
    assert len(lines) == 6  # nothing of what the parts printed or logged

    alpha_log = (out / "logs" / "alpha.log").read_text(encoding="utf-8")
    assert "alpha prints a table" in alpha_log
    assert "INFO bias_hub.pipelines.alpha: alpha trains" in alpha_log
    assert "DEBUG transformers: a library's debug line" in alpha_log
    assert "alpha" not in (out / "logs" / "beta.log").read_text(encoding="utf-8")
    demo_log = (out / "logs" / "demo.log").read_text(encoding="utf-8")
    assert "alpha: " in demo_log and "alpha trains" not in demo_log

    markdown = index.read_text(encoding="utf-8")
    assert "| setup | 95.0 | before this run |" in markdown
    assert "| alpha: tokenize | 1.2 |" in markdown and "| alpha: train | 12.0 |" in markdown
    assert re.search(r"\| alpha \| \d+\.\d \| this run \|", markdown)
    assert re.search(r"\| beta \| \d+\.\d \| this run \|", markdown)
    assert "log: [logs/alpha.log](logs/alpha.log)" in markdown
    assert "Full report: [report.md](alpha/report.md)" in markdown
    page = (out / "index.html").read_text(encoding="utf-8")
    assert "<h2>Time per stage</h2>" in page and "<td>alpha: tokenize</td>" in page

    manifest = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    assert list(manifest["parts"]) == ["alpha", "beta"]
    assert manifest["parts"]["alpha"]["stages"] == [
        {"stage": "tokenize", "seconds": 1.2},
        {"stage": "train", "seconds": 12.0},
    ]


def test_only_reruns_some_parts_and_keeps_the_others_labelled(tmp_path: Path, parts: list) -> None:
    parts += [_part("alpha", 1, _alpha), _part("beta", 2, _beta("first"))]
    out = tmp_path / "demo"
    demo_driver.demo(out, prior_stages=[{"stage": "setup", "seconds": 95.0}])
    first = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    alpha_log = (out / "logs" / "alpha.log").read_text(encoding="utf-8")

    parts[1] = _part("beta", 2, _beta("second"))
    demo_driver.demo(out, only=["beta"])
    manifest = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    markdown = (out / "index.md").read_text(encoding="utf-8")

    assert manifest["parts"]["alpha"] == first["parts"]["alpha"]  # kept as it was
    assert (out / "logs" / "alpha.log").read_text(encoding="utf-8") == alpha_log
    assert "beta says second" in markdown and "beta says first" not in markdown
    assert (out / "beta" / "result.txt").read_text(encoding="utf-8") == "second"
    # alpha ran in the earlier run (its time stamp), beta in this one; the setup time is kept.
    assert f"| alpha | {first['parts']['alpha']['seconds']:.1f} | run of " in markdown
    assert re.search(r"\| beta \| \d+\.\d \| this run \|", markdown)
    assert "| setup | 95.0 | before the run of " in markdown


def test_a_failed_part_is_shown_as_failed_and_the_others_still_run(
    tmp_path: Path, parts: list, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    _on_descriptors(monkeypatch)
    parts += [_part("gamma", 1, _failing), _part("beta", 2, _beta("first"))]
    out = tmp_path / "demo"
    with pytest.raises(RuntimeError, match="demo: gamma failed"):
        demo_driver.demo(out)
    console_text = "".join(capfd.readouterr())
    # One line on the console says what failed and where the log is; the traceback is in the log.
    assert (
        "gamma: failed after " in console_text
        and f"(see {out / 'logs' / 'gamma.log'})" in console_text
    )
    assert "Traceback" not in console_text and "gamma got this far" not in console_text
    markdown = (out / "index.md").read_text(encoding="utf-8")
    assert "**Failed**" in markdown and "ValueError: gamma's input is missing" in markdown
    assert "| gamma (failed) |" in markdown
    assert "beta says first" in markdown
    log = (out / "logs" / "gamma.log").read_text(encoding="utf-8")
    assert "gamma got this far" in log
    assert "Traceback" in log and "ValueError: gamma's input is missing" in log


def test_a_full_run_removes_parts_and_logs_the_demo_no_longer_has(
    tmp_path: Path, parts: list
) -> None:
    out = tmp_path / "demo"
    parts += [_part("alpha", 1, _alpha), _part("retired", 2, _beta("old"))]
    demo_driver.demo(out)
    assert (out / "retired").is_dir() and (out / "logs" / "retired.log").is_file()

    parts.pop()
    demo_driver.demo(out, only=["alpha"])  # a partial run removes nothing, and no longer shows it
    assert (out / "retired").is_dir() and (out / "logs" / "retired.log").is_file()
    assert "Beta part" not in (out / "index.md").read_text(encoding="utf-8")

    demo_driver.demo(out)
    assert not (out / "retired").exists()
    assert sorted(p.name for p in (out / "logs").iterdir()) == ["alpha.log", "demo.log"]


def test_unknown_parts_and_bad_stages_are_refused(tmp_path: Path, parts: list) -> None:
    parts.append(_part("alpha", 1, _alpha))
    with pytest.raises(ValueError, match="--only: unknown part.*nope.*expected some of: alpha"):
        demo_driver.demo(tmp_path / "demo", only=["nope"])

    def bad_stages(out_dir: Path) -> dict:
        return {"title": "bad", "stages": [{"stage": "x"}]}

    parts[0] = _part("alpha", 1, bad_stages)
    with pytest.raises(RuntimeError, match="alpha failed"):
        demo_driver.demo(tmp_path / "demo")
    assert "'stages' must be a list of" in (tmp_path / "demo" / "index.md").read_text(
        encoding="utf-8"
    )


STARTUP = """
import json, sys
from bias_hub.pipelines.cli import main
code = main(["demo", "--only", "NONE", "--out", sys.argv[1], "-q"])
libraries = ("torch", "transformers", "datasets", "evaluate", "pandas", "matplotlib", "scipy.stats")
print(json.dumps([code, [name for name in libraries if name in sys.modules]]))
"""


@pytest.mark.slow  # a fresh interpreter imports torch
def test_the_demo_imports_before_its_first_part_only_the_model_libraries(tmp_path: Path) -> None:
    # What every part it forks shares (and what a Ctrl-C must not interrupt): torch and
    # transformers. Datasets, metrics and figures load in the part that reads, scores or draws;
    # an unknown part is refused once the driver knows its parts, right after these imports.
    done = subprocess.run(
        [sys.executable, "-c", STARTUP, str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [2, ["torch", "transformers"]], (
        done.stderr[-2000:]
    )
    assert "--only: unknown part(s) NONE" in done.stderr


def test_prior_stage_flag() -> None:
    assert demo_driver.parse_prior_stage("setup=95.24") == {"stage": "setup", "seconds": 95.2}
    for bad in ["setup", "setup=", "=3", "setup=-1", "setup=fast"]:
        with pytest.raises(argparse.ArgumentTypeError, match="expected NAME=SECONDS"):
            demo_driver.parse_prior_stage(bad)


def _meets(mine: str, theirs: str):
    """A part that finishes only if the part writing ``theirs`` runs at the same time as it."""

    def run_demo(out_dir: Path) -> dict:
        import os
        import time

        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir.parent / f"{mine}.here").write_text(str(os.getpid()), encoding="utf-8")
        deadline = time.monotonic() + 60
        while not (out_dir.parent / f"{theirs}.here").exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"{mine} never met {theirs}: the parts did not run together")
            time.sleep(0.02)
        print(f"{mine} met {theirs}")
        return {"title": f"{mine} part", "summary": f"{mine} met {theirs}"}

    return run_demo


def _dies(out_dir: Path) -> dict:
    import os

    os.write(1, b"delta got this far\n")  # unbuffered: a killed process flushes nothing
    os._exit(3)  # as a process killed by the kernel would: no exception, no entry


needs_fork = pytest.mark.skipif(not demo_driver.can_fork(), reason="parts run side by side by fork")


@needs_fork
def test_parts_run_side_by_side_each_in_its_own_process(
    tmp_path: Path, parts: list, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    _on_descriptors(monkeypatch)
    # Each of alpha and beta waits for the other to have started: one after the other, the first
    # would time out.
    parts += [_part("alpha", 1, _meets("alpha", "beta")), _part("beta", 2, _meets("beta", "alpha"))]
    out = tmp_path / "demo"
    index = demo_driver.demo(out, jobs=2)
    console_text = "".join(capfd.readouterr())

    pids = {(out / f"{p}.here").read_text(encoding="utf-8") for p in ("alpha", "beta")}
    assert len(pids) == 2 and str(os.getpid()) not in pids  # two processes, neither the driver
    assert f"(full logs in {out / 'logs'}, 2 at a time)" in console_text
    assert "alpha met beta" not in console_text  # what a part prints goes to its log
    assert "alpha met beta" in (out / "logs" / "alpha.log").read_text(encoding="utf-8")
    assert "beta met alpha" in (out / "logs" / "beta.log").read_text(encoding="utf-8")
    manifest = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    assert manifest["run"]["jobs"] == 2
    assert {e["status"] for e in manifest["parts"].values()} == {"ok"}
    markdown = index.read_text(encoding="utf-8")
    assert "2 at a time, their times overlap" in markdown
    # The index lists the parts in their order, whichever ended first.
    assert markdown.index("alpha met beta") < markdown.index("beta met alpha")


SHARING = """
import json, sys, types
from pathlib import Path
from bias_hub.builders.shared import console
from bias_hub.pipelines import demo as driver

def part(name, order):
    module = types.ModuleType(f"bias_hub.pipelines.{name}.demo")
    module.ORDER = order

    def run_demo(out_dir):
        loaded = [lib for lib in driver.SHARED_LIBRARIES if lib in sys.modules]
        return {"title": name, "summary": " ".join(loaded) or "none"}

    module.run_demo = run_demo
    return module

console.configure(0)
driver.demo_parts = lambda: [part("alpha", 1), part("beta", 2)]
out = Path(sys.argv[1])
driver.demo(out / "alone", only=["alpha"], jobs=2)  # one part: it runs in the driver's process
driver.demo(out / "forked", jobs=2)
print(json.dumps({
    run: {p: e["summary"] for p, e in json.loads((out / run / "demo.json").read_text())["parts"].items()}
    for run in ("alone", "forked")
}))
"""


@needs_fork
@pytest.mark.slow  # a fresh interpreter imports datasets and matplotlib
def test_a_driver_that_forks_parts_imports_what_they_share_first(tmp_path: Path) -> None:
    # In a fresh interpreter (the test process has imported these libraries long ago): a part
    # that runs alone finds none of them loaded; parts forked side by side find all of them.
    done = subprocess.run(
        [sys.executable, "-c", SHARING, str(tmp_path)], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == {
        "alone": {"alpha": "none"},
        "forked": {"alpha": "datasets matplotlib.figure", "beta": "datasets matplotlib.figure"},
    }, done.stderr[-2000:]


@needs_fork
def test_a_part_whose_process_dies_is_failed_and_the_others_still_run(
    tmp_path: Path, parts: list
) -> None:
    parts += [_part("delta", 1, _dies), _part("beta", 2, _beta("first"))]
    out = tmp_path / "demo"
    with pytest.raises(RuntimeError, match="demo: delta failed"):
        demo_driver.demo(out, jobs=2)
    manifest = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    assert manifest["parts"]["delta"]["status"] == "failed"
    assert "exit code 3" in manifest["parts"]["delta"]["error"]
    assert manifest["parts"]["beta"]["status"] == "ok"
    assert "delta got this far" in (out / "logs" / "delta.log").read_text(encoding="utf-8")
    assert "beta says first" in (out / "index.md").read_text(encoding="utf-8")


@needs_fork
def test_a_part_that_raises_in_its_process_fails_as_in_one_process(
    tmp_path: Path, parts: list
) -> None:
    parts += [_part("gamma", 1, _failing), _part("beta", 2, _beta("first"))]
    out = tmp_path / "demo"
    with pytest.raises(RuntimeError, match="demo: gamma failed"):
        demo_driver.demo(out, jobs=2)
    markdown = (out / "index.md").read_text(encoding="utf-8")
    assert "ValueError: gamma's input is missing" in markdown and "beta says first" in markdown
    assert "Traceback" in (out / "logs" / "gamma.log").read_text(encoding="utf-8")


def test_jobs_flag_takes_a_positive_whole_number() -> None:
    parser = argparse.ArgumentParser()
    demo_driver.register(parser.add_subparsers())
    assert parser.parse_args(["demo", "--jobs", "3"]).jobs == 3
    assert parser.parse_args(["demo"]).jobs is None  # one per core, chosen when the demo runs
    for bad in ["0", "-1", "two"]:
        with pytest.raises(SystemExit):
            parser.parse_args(["demo", "--jobs", bad])
