"""``python -m bench [NAME ...]`` (``make bench``): run the benchmarks one after another.

Each ``bench/<name>.py`` compares our code against a baseline in the same run and
prints ratios. Baselines that must not become project dependencies (WEFE,
lm-evaluation-harness) live in their own virtual environments under ``bench/``;
``make bench`` creates them on first use (PyPI only).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Extra arguments a benchmark needs under `make bench`.
ARGUMENTS = dict.fromkeys(["jbbq_throughput", "jbbq_generation", "jbbq_served"], ["--setup-lmeval"])


def available() -> list[str]:
    return sorted(
        p.stem
        for p in HERE.glob("*.py")
        if not p.stem.startswith("_") and p.stem != "embeddings_wefe_reference"
    )


def main(argv: list[str]) -> int:
    names = argv or available()
    unknown = sorted(set(names) - set(available()))
    if unknown:
        print(
            f"unknown benchmark(s) {unknown}; available: {', '.join(available())}", file=sys.stderr
        )
        return 2
    failed = []
    for name in names:
        print(f"\n===== bench.{name} =====", flush=True)
        started = time.perf_counter()
        command = [sys.executable, "-m", f"bench.{name}", *ARGUMENTS.get(name, [])]
        done = subprocess.run(command, cwd=HERE.parent, check=False)
        print(
            f"===== bench.{name}: exit {done.returncode}, {time.perf_counter() - started:.0f} s",
            flush=True,
        )
        if done.returncode != 0:
            failed.append(name)
    if failed:
        print(f"\nfailed: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
