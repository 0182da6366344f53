"""What every bench in ``bench/`` times with.

A ratio is only as good as the conditions both tools ran in, and on a shared machine the load
moves by the minute: every contestant is warmed up untimed, then the contestants run
interleaved (A B A B ..., at least three times each) and each reports its minimum and median,
with the load printed beside every figure. ``PhaseClock`` splits a run into phases so a ratio
says where it comes from; ``matmul_flops_per_second`` is the machine's floor for model work.

Only the standard library at module level (torch on use): lm-evaluation-harness's side of a
bench runs this file in its own virtual environment.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
MIN_ROUNDS = 3
# What a tool run as a subprocess of a bench gets: the machine is offline.
OFFLINE = dict.fromkeys(
    ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE", "HF_EVALUATE_OFFLINE", "TRANSFORMERS_OFFLINE"), "1"
)


def make_venv(venv: Path, *installs: list[str]) -> Path:
    """The Python of a baseline's own virtual environment (a baseline never becomes a project
    dependency): ``venv`` created where missing, then each list of requirements installed in
    turn, by uv where the project's venv has it, else by pip."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    uv = Path(sys.executable).with_name("uv")
    install = (
        [str(uv), "pip", "install", "--quiet", "--python", str(python)]
        if uv.exists()
        else [str(python), "-m", "pip", "install", "--quiet"]
    )
    for requirements in installs:
        subprocess.run([*install, *requirements], check=True)
    return python


def read_jsonl(path: str | Path) -> list[dict]:
    """The rows of a JSON Lines file (blank lines skipped)."""
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def save_json(path: str | Path | None, data, **options) -> None:
    """``data`` as indented JSON with a final newline at ``path`` (None: nowhere); ``options``:
    ``json.dumps``'s."""
    if path:
        Path(path).write_text(json.dumps(data, indent=2, **options) + "\n", encoding="utf-8")


def describe_load() -> str:
    """``load 3.1 on 2 cores``: the 1-minute load average and the cores it is shared by."""
    load = load_average()
    return f"load {'unknown' if load is None else f'{load:.1f}'} on {os.cpu_count()} cores"


def load_average() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except OSError:  # not every platform has one
        return None


class PhaseClock:
    """Seconds spent per phase, summed over a run.

    ``with clock.phase("tokenize"): ...`` times a block; ``clock.wrap(obj, "method", "phase")``
    times every call of an instance's method; ``clock.time_forward(module)`` times every forward
    of a torch module (hooks before and after it, synchronising CUDA so the time is the GPU's).
    Nested phases are not subtracted from each other: wrap disjoint calls.
    """

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.cpu_seconds: dict[str, float] = defaultdict(float)
        self._open: dict[str, float] = {}

    def reset(self) -> None:
        self.seconds.clear()
        self.cpu_seconds.clear()
        self._open.clear()

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        started, cpu_started = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - started
            self.cpu_seconds[name] += time.process_time() - cpu_started

    def wrap(self, owner: object, method: str, phase: str) -> None:
        original = getattr(owner, method)

        def timed(*args, **kwargs):
            with self.phase(phase):
                return original(*args, **kwargs)

        setattr(owner, method, timed)

    def time_forward(self, module, phase: str = "forward") -> None:
        import torch

        def synchronise() -> None:
            if torch.cuda.is_available() and torch.cuda.is_initialized():
                torch.cuda.synchronize()

        def before(*_):
            synchronise()
            self._open[phase] = time.perf_counter()

        def after(*_):
            synchronise()
            self.seconds[phase] += time.perf_counter() - self._open.pop(phase)

        module.register_forward_pre_hook(before)
        module.register_forward_hook(after)

    def split(self, total: float, rest: str = "rest") -> dict[str, float]:
        """The phases of a run that took ``total`` seconds, with ``rest`` the time in none."""
        phases = dict(self.seconds)
        phases[rest] = max(0.0, total - sum(phases.values()))
        return phases


def split_phases(measured: dict[str, float], call: float, total: float) -> dict[str, float]:
    """A run's phases: tokenize, forward and decode as measured; score, the rest of the scoring
    call (batching, padding, softmax, bookkeeping); set-up, the rest of the run (data load,
    task or prompt building, the metric)."""
    inside = {k: measured.get(k, 0.0) for k in ("tokenize", "forward", "decode")}
    return {**inside, "score": max(0.0, call - sum(inside.values())), "set-up": total - call}


@dataclass
class Run:
    """One timed run: wall-clock and CPU seconds, seconds per phase, the load around it, and
    what it produced (for the identity checks)."""

    seconds: float
    cpu_seconds: float
    phases: dict[str, float] = field(default_factory=dict)
    load_before: float | None = None
    load_after: float | None = None
    output: object = None
    extra: dict = field(default_factory=dict)

    def record(self) -> dict:
        return {
            "seconds": round(self.seconds, 4),
            "cpu_seconds": round(self.cpu_seconds, 4),
            "phases": {k: round(v, 4) for k, v in self.phases.items()},
            "load_before": self.load_before,
            "load_after": self.load_after,
            **self.extra,
        }


def best_of(function: Callable[[], object], repeats: int = 1) -> tuple[float, object]:
    """The fewest wall seconds of ``repeats`` calls of ``function`` (no warm-up: for work too
    slow to repeat, such as a baseline's), and what the last call returned."""
    best, value = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        value = function()
        best = min(best, time.perf_counter() - started)
    return best, value


def timed(function: Callable[[], tuple[dict[str, float], object, dict]]) -> Run:
    """Run ``function`` (returning ``(phases, output, extra)``) once, timed, with the load."""
    load_before = load_average()
    started, cpu_started = time.perf_counter(), time.process_time()
    phases, output, extra = function()
    seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    return Run(seconds, cpu, phases, load_before, load_average(), output, extra)


def run_process(command: list[str], ok: tuple[int, ...] = (0,), **options) -> Run:
    """One whole-process run of ``command`` (``options``: ``subprocess.run``'s), timed: wall
    seconds, and the CPU seconds the operating system counts for it and its children. Exits
    naming the command when its status is not in ``ok``."""
    load_before, cpu_before = load_average(), _children_cpu()
    started = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, **options)
    seconds = time.perf_counter() - started
    if done.returncode not in ok:
        raise SystemExit(
            f"{' '.join(command[:6])} exited {done.returncode}:\n{done.stderr[-2000:]}"
        )
    return Run(seconds, _children_cpu() - cpu_before, {}, load_before, load_average())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def interleave(
    contestants: dict[str, Callable[[], Run]],
    rounds: int = MIN_ROUNDS,
    warm_up: dict[str, Callable[[], object]] | None = None,
    out=sys.stdout,
) -> dict[str, list[Run]]:
    """Warm each contestant up, then run them in turn, ``rounds`` times each (A B A B ...).

    Each contestant is a function that does one whole timed run and returns its ``Run``
    (a contestant in another process times itself there). Prints one line per run to
    ``out`` (None: nothing).
    """
    if rounds < MIN_ROUNDS:
        raise ValueError(f"--rounds must be at least {MIN_ROUNDS}, got {rounds}")
    say = (lambda text: print(text, file=out, flush=True)) if out is not None else (lambda _: None)
    for name, function in (warm_up or {}).items():
        started = time.perf_counter()
        function()
        say(f"  warm-up {name}: {time.perf_counter() - started:.2f} s ({describe_load()})")
    say(f"  timed runs, interleaved ({' '.join(['/'.join(contestants)] * rounds)}):")
    runs: dict[str, list[Run]] = {name: [] for name in contestants}
    for index in range(rounds):
        for name, function in contestants.items():
            run = function()
            runs[name].append(run)
            say(
                f"    round {index + 1} {name}: {run.seconds:.2f} s (CPU {run.cpu_seconds:.2f} s; "
                f"load {run.load_before} -> {run.load_after})"
            )
    return runs


def summary(runs: list[Run], key: Callable[[Run], float] = lambda run: run.seconds) -> dict:
    """Minimum and median of a contestant's runs (of ``key``), and the load range they ran at."""
    values = [key(run) for run in runs]
    loads = [x for run in runs for x in (run.load_before, run.load_after) if x is not None]
    return {
        "min": min(values),
        "median": statistics.median(values),
        "runs": len(values),
        "load": [min(loads), max(loads)] if loads else None,
    }


def phase_table(named_runs: dict[str, Run], order: list[str]) -> str:
    """Seconds per phase of one run per contestant (the fastest), as aligned text lines under
    the heading ``phases of the fastest run (seconds):``."""
    names = list(named_runs)
    phases = [p for p in order if any(p in r.phases for r in named_runs.values())]
    phases += [p for r in named_runs.values() for p in r.phases if p not in phases]
    width = max(len(p) for p in [*phases, "phase"]) + 2
    lines = ["phases of the fastest run (seconds):"]
    lines.append(f"    {'phase':<{width}}" + "".join(f"{n:>16}" for n in names))
    for phase in phases:
        cells = "".join(
            f"{named_runs[n].phases.get(phase, 0.0):>14.2f} s"
            if phase in named_runs[n].phases
            else f"{'-':>16}"
            for n in names
        )
        lines.append(f"    {phase:<{width}}" + cells)
    return "\n".join(lines)


def matmul_flops_per_second(
    m: int, k: int, n: int, dtype: str = "float32", device: str = "cpu", repeats: int = 5
) -> float:
    """FLOP/s of a plain ``(m x k) @ (k x n)`` product here, best of ``repeats`` (after one
    warm-up), with torch's current thread setting: what this machine's BLAS reaches on a
    model's own matrix shape.

    On a CPU the seconds are this process's CPU time: on a shared machine wall time counts the
    others' work too, in short runs and long ones unequally. Compare it with a tool's CPU
    seconds at the same thread count."""
    import torch

    generator = torch.Generator(device="cpu").manual_seed(0)
    a = torch.randn(m, k, generator=generator).to(device=device, dtype=getattr(torch, dtype))
    b = torch.randn(k, n, generator=generator).to(device=device, dtype=getattr(torch, dtype))
    clock = time.perf_counter if device.startswith("cuda") else time.process_time
    best = float("inf")
    for attempt in range(repeats + 1):
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        started = clock()
        for _ in range(3):
            a @ b
        if device.startswith("cuda"):
            torch.cuda.synchronize()
        if attempt:
            best = min(best, (clock() - started) / 3)
    return 2.0 * m * k * n / best


def floor(model, args) -> float:
    """FLOP/s of a plain matrix product with the model's MLP shape, 2048 rows, at ``args.dtype``
    on ``args.device``: the floor for the model's work."""
    config = model.config
    return matmul_flops_per_second(
        2048, config.hidden_size, config.intermediate_size, args.dtype, args.device
    )


def llama_flops(config, rows: list[tuple[int, int]], projected: int) -> float:
    """Forward FLOPs of a Llama-style decoder (multiply-adds x 2).

    ``rows``: ``(context, new)`` per computed sequence: ``new`` tokens computed after
    ``context`` tokens already cached; ``projected``: positions projected onto the
    vocabulary. Counts the matrix products (projections, MLP, attention scores and
    values); norms, activations and softmax are left out (a few percent at these widths).
    """
    hidden = config.hidden_size
    heads = config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or hidden // heads
    kv = (getattr(config, "num_key_value_heads", None) or heads) * head_dim
    per_token = config.num_hidden_layers * (
        2 * hidden * (heads * head_dim)  # q
        + 2 * 2 * hidden * kv  # k, v
        + 2 * (heads * head_dim) * hidden  # o
        + 3 * 2 * hidden * config.intermediate_size  # gate, up, down
    )
    # Attention: new token t attends to context + t + 1 positions (scores and values).
    attended = sum(new * context + new * (new + 1) / 2 for context, new in rows)
    attention = config.num_hidden_layers * 2 * 2 * heads * head_dim * attended
    tokens = sum(new for _, new in rows)
    return per_token * tokens + attention + 2.0 * hidden * config.vocab_size * projected


def bert_flops(config, lengths: list[int]) -> float:
    """Forward FLOPs of a BERT encoder with a classifier on [CLS], one unpadded sequence per
    length (the same products as ``llama_flops``: projections, MLP, attention)."""
    hidden, layers = config.hidden_size, config.num_hidden_layers
    per_token = layers * (4 * 2 * hidden * hidden + 2 * 2 * hidden * config.intermediate_size)
    attention = layers * 2 * 2 * hidden * sum(length * length for length in lengths)
    pooler = len(lengths) * (2 * hidden * hidden + 2 * hidden * config.num_labels)
    return per_token * sum(lengths) + attention + pooler


class FlopCounter:
    """FLOPs of every forward pass a causal LM runs (``llama_flops`` of the shapes it is given:
    rows x new tokens after the cache's length, and the positions projected onto the
    vocabulary), padding included: the work a tool did, whether it was needed or not."""

    def __init__(self, model) -> None:
        self.total = 0.0
        model.register_forward_pre_hook(self._count, with_kwargs=True)

    def reset(self) -> None:
        self.total = 0.0

    def _count(self, module, args, kwargs) -> None:
        ids = kwargs.get("input_ids")
        if ids is None and args:
            ids = args[0]
        if ids is None:
            return
        rows, new = ids.shape
        cache = kwargs.get("past_key_values", kwargs.get("cache"))
        past = int(cache.get_seq_length()) if cache is not None else 0
        keep = kwargs.get("logits_to_keep") or 0
        projected = rows * (min(int(keep), new) if keep else new)
        self.total += llama_flops(module.config, [(past, new)] * rows, projected)


def race(
    contestants: dict[str, Callable[[], object]],
    rounds: int = MIN_ROUNDS,
    out=sys.stdout,
) -> dict[str, dict]:
    """``interleave`` for plain functions (no phases): each contestant warmed up once, then run
    A B A B ...; per contestant its ``summary`` (wall seconds), CPU seconds (min and median) and
    the output of its last run."""

    timed_runs = {
        name: lambda function=function: timed(lambda: ({}, function(), {}))
        for name, function in contestants.items()
    }
    runs = interleave(timed_runs, rounds, contestants, out)
    return {
        name: {
            **summary(r),
            "cpu": summary(r, key=lambda run: run.cpu_seconds),
            "output": r[-1].output,
        }
        for name, r in runs.items()
    }


def race_table(results: dict[str, dict], baseline: str) -> str:
    """One line per contestant: min and median seconds, CPU seconds, load, and how many times
    faster than ``baseline`` (min / min and median / median)."""
    base = results[baseline]
    width = max(len(name) for name in results) + 2
    lines = [
        f"  {'':<{width}}{'min s':>10}{'median s':>10}{'CPU s':>9}  load       "
        f"{baseline} / this (min, median)"
    ]
    for name, entry in results.items():
        load = entry["load"] or ["?", "?"]
        lines.append(
            f"  {name:<{width}}{entry['min']:>10.3f}{entry['median']:>10.3f}{entry['cpu']['min']:>9.3f}"
            f"  {load[0]}-{load[1]:<6}  {base['min'] / entry['min']:.2f}x, "
            f"{base['median'] / entry['median']:.2f}x"
        )
    return "\n".join(lines)
