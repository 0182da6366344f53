"""What commands cost before their work: this checkout against a baseline commit, A B A B.

    python -m bench.command_costs                    # against main
    python -m bench.command_costs --baseline REF --cases score build

The baseline is ``git archive REF`` unpacked into a temporary folder and imported through
``PYTHONPATH`` (ahead of this checkout's editable install), with this checkout's virtual
environment: the same libraries, only the code differs. Every case is a whole process, timed
from its start to its exit (wall seconds, and the CPU seconds the operating system counts for
it), the baseline's and this checkout's interleaved (``bench/_harness.py``), each warmed up once
(its bytecode written then, as a user's first run writes it):

- ``score``: ``bias-hub score bbq_bias`` on seeded predictions for the built JBBQ sample's test
  split (448 questions), intervals from 2,000 resamples; target: at most 2 s wall;
- ``build``: ``bias-hub build weat_word_sets`` into a temporary folder; target: at most 1.5 s wall;
- ``cached``: ``bias-hub jbbq evaluate --backend openai --api completions --preset paper`` with
  every reply already in its response cache (filled once from a local stand-in server that then
  counts the requests a timed run makes: none); target: at most 3 s of CPU;
- ``startup``: ``bias-hub demo --only NONE``: the imports every demo makes before its first part
  (the unknown part is refused right after them); target: half the baseline's. A demo that forks
  several parts also imports, once, the libraries they share (``demo.SHARED_LIBRARIES``, during
  the dataset build of a full run), which this case leaves out;
- ``collection``: ``pytest --collect-only`` of the test suite in one process (what each test
  worker pays first); target: half the baseline's.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from bench._harness import (
    OFFLINE,
    REPO_ROOT,
    Run,
    describe_load,
    interleave,
    run_process,
    summary,
)

CASES = ("score", "build", "cached", "startup", "collection")
# (statistic compared, what the target says) per case
TARGETS = {
    "score": ("wall", "at most 2 s"),
    "build": ("wall", "at most 1.5 s"),
    "cached": ("cpu", "at most 3 s"),
    "startup": ("wall", "half the baseline's"),
    "collection": ("wall", "half the baseline's"),
}
QUIET = {**OFFLINE, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1", "MPLBACKEND": "Agg"}
# Bytecode written and reused, as for a user (and as make's commands run): with
# PYTHONDONTWRITEBYTECODE set (as on the project's machines) every timed run compiled bias_hub's
# modules and pytest rewrote every test module again, work a user's second command never does.
QUIET["PYTHONDONTWRITEBYTECODE"] = ""


def baseline_tree(ref: str, work: Path) -> Path:
    """``ref`` unpacked under ``work``; returns the folder to put on PYTHONPATH (it holds a
    ``bias_hub`` package: the tree itself when its root is the package, else its ``src``)."""
    tree = work / "baseline"
    tree.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "archive", ref], capture_output=True, check=True
    ).stdout
    archive_path = work / "baseline.tar"
    archive_path.write_bytes(archive)
    with tarfile.open(archive_path) as tar:
        tar.extractall(tree, filter="tar")
    if (tree / "src" / "bias_hub").is_dir():
        return tree / "src"
    (work / "path").mkdir()
    (work / "path" / "bias_hub").symlink_to(tree, target_is_directory=True)
    return work / "path"


def process(command: list[str], env: dict, cwd: Path, ok=(0,)):
    """A contestant: one whole-process run of ``command``."""
    return lambda: run_process(command, ok, env=env, cwd=cwd)


def cases(args, work: Path, baseline_path: Path) -> dict[str, dict[str, object]]:
    """Per case, the two contestants (``baseline`` and ``this``)."""
    from bias_hub.pipelines.common.locations import ensure_built

    jbbq = ensure_built("jbbq")
    envs = {
        "baseline": {**os.environ, **QUIET, "PYTHONPATH": str(baseline_path)},
        "this": {**os.environ, **QUIET},
    }
    trees = {"baseline": baseline_path / "bias_hub", "this": REPO_ROOT}
    cli = [sys.executable, "-m", "bias_hub"]

    def each(contestant) -> dict[str, object]:
        """``contestant(name, env)`` for the baseline and this checkout."""
        return {name: contestant(name, env) for name, env in envs.items()}

    chosen: dict[str, dict[str, object]] = {}
    if "score" in args.cases:
        import pyarrow.parquet as pq

        from bias_hub.builders.shared.files import write_jsonl

        test = jbbq / "all" / "test-00000-of-00001.parquet"
        rows = pq.read_table(test, columns=["example_id", "category"]).to_pylist()
        rng = random.Random(0)
        seeded = [{**row, "prediction": rng.randrange(3)} for row in rows]
        predictions = write_jsonl(work / "predictions.jsonl", seeded)
        score = cli + ["score", "bbq_bias", "--predictions", str(predictions), "--dataset"]
        score += [str(jbbq), "--split", "test", "-q", "--out"]
        chosen["score"] = each(lambda name, env: _fresh_out(score, work / f"score-{name}", env))
    if "build" in args.cases:
        build = cli + ["build", "weat_word_sets", "-q", "--out-root"]
        chosen["build"] = each(
            lambda name, env: process(build + [str(work / f"built-{name}")], env, work)
        )
    if "cached" in args.cases:
        from bench.jbbq_served import Server

        args.server = Server(0.0, 1e9, args.max_requests, 3600)
        cache = work / "api-cache"
        cached = cli + ["jbbq", "evaluate", "--backend", "openai", "--api", "completions"]
        cached += ["--model", "served-model", "--base-url", args.server.url, "--dataset"]
        cached += [str(jbbq), "--cache-dir", str(cache), "-q", "--out"]
        _fill(cached + [str(work / "fill")], cache, envs["this"], work, args.server)
        chosen["cached"] = each(lambda name, env: _fresh_out(cached, work / f"cached-{name}", env))
    if "startup" in args.cases:
        demo = cli + ["demo", "--only", "NONE", "--out", str(work / "demo")]
        chosen["startup"] = each(lambda name, env: process(demo, env, work, ok=(2,)))
    if "collection" in args.cases:
        pytest = [sys.executable, "-m", "pytest", "--collect-only", "-q"]
        pytest += ["-p", "no:cacheprovider", "-n", "0"]
        chosen["collection"] = each(lambda name, env: process(pytest, env, trees[name]))
    return chosen


def _fresh_out(command: list[str], out: Path, env: dict):
    """``command`` + an ``--out`` folder removed before each run (a command that refuses to
    replace its own earlier run folder would otherwise not be timed twice the same way)."""
    timed = process(command + [str(out)], env, out.parent)

    def run() -> Run:
        shutil.rmtree(out, ignore_errors=True)
        return timed()

    return run


def _fill(command: list[str], cache: Path, env: dict, work: Path, server) -> None:
    """Fill the response cache ``cache`` with every reply ``jbbq evaluate --preset paper`` asks
    for: one run of ``command`` against the stand-in ``server`` (``bench.jbbq_served``)."""
    subprocess.run(command, check=True, env=env, cwd=work)
    server.reset()
    count = len(list(cache.rglob("*.json")))
    print(f"cached: {count:,} replies in the response cache", flush=True)


def _asking(run, server, asked: list[int]):
    """``run``, noting in ``asked`` how many requests ``server`` received during it."""

    def counted():
        before = len(server.requests)
        result = run()
        asked.append(len(server.requests) - before)
        return result

    return counted


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--baseline", default="main", help="git ref of the baseline (default: main)"
    )
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-requests", type=int, default=20000)
    args = parser.parse_args(argv)
    results, asked = {}, []
    with tempfile.TemporaryDirectory(prefix="bench-command-costs-") as tmp:
        work = Path(tmp)
        baseline_path = baseline_tree(args.baseline, work)
        print(f"baseline {args.baseline}; {describe_load()}", flush=True)
        for case, contestants in cases(args, work, baseline_path).items():
            print(f"\n{case}:", flush=True)
            timed = contestants
            if case == "cached":  # the warm-ups may fill a cache; the timed runs must not ask
                timed = {
                    name: _asking(run, args.server, asked) for name, run in contestants.items()
                }
            runs = interleave(timed, args.rounds, warm_up=contestants)
            results[case] = runs
            if case == "cached":
                warmed = len(args.server.requests) - sum(asked)
                print(f"  requests the warm-ups made: {warmed}; the timed runs: {sum(asked)}")
    print(f"\n{'case':<12}{'':6}{'baseline min / median':>24}{'this min / median':>22}  target")
    for case, runs in results.items():
        statistic, target = TARGETS[case]
        loads = [x for r in runs.values() for u in r for x in (u.load_before, u.load_after) if x]
        for name, key in (("wall", lambda run: run.seconds), ("cpu", lambda run: run.cpu_seconds)):
            cells = {n: summary(r, key=key) for n, r in runs.items()}
            row = "".join(f"{cells[n]['min']:>14.2f} / {cells[n]['median']:<7.2f}" for n in cells)
            note = f"  {target} (load {min(loads)}-{max(loads)})" if name == statistic else ""
            print(f"{case if name == 'wall' else '':<12}{name + ' s':<6}{row}{note}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
