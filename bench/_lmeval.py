"""lm-evaluation-harness as the JBBQ benches run it: its own venv, a local task, and one
process that keeps its model loaded between the bench's interleaved runs.

``lm_eval`` is not a dependency of this project: ``--setup-lmeval`` creates
``bench/.venv-lmeval`` (torch's CPU wheel first, then ``lm_eval[hf,api]``, both from the
registry: ``api`` for ``local-completions``), and ``bench/_jbbq_lmeval_runner.py`` runs there.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from pathlib import Path

from bench._harness import OFFLINE, REPO_ROOT, Run, make_venv, split_phases

LMEVAL_VENV = REPO_ROOT / "bench" / ".venv-lmeval"
LMEVAL_VERSION = "0.4.13"
RUNNER = REPO_ROOT / "bench" / "_jbbq_lmeval_runner.py"


def setup_lmeval(venv: Path) -> Path:
    """Create the baseline's own venv: torch (CPU wheel) first, then lm_eval[hf,api] and
    bias-hub."""
    # bias-hub too: the task folder the package ships reads its questions through it.
    lm_eval = [f"lm_eval[hf,api]=={LMEVAL_VERSION}", "-e", str(REPO_ROOT)]
    return make_venv(venv, ["torch==2.13.0"], lm_eval)


def add_lmeval_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of a bench that compares with lm_eval: where its venv is, whether to create it."""
    parser.add_argument(
        "--setup-lmeval", action="store_true", help=f"create {LMEVAL_VENV} first (needs PyPI)"
    )
    parser.add_argument("--lmeval-python", default=str(LMEVAL_VENV / "bin" / "python"))
    parser.add_argument("--skip-lmeval", action="store_true", help="time bias-hub only")
    parser.add_argument(
        "--lmeval-batch-size",
        type=int,
        default=16,
        help="lm-eval's batch size (HFLM batch_size; default %(default)s)",
    )


def lmeval_python(args: argparse.Namespace) -> Path | None:
    """lm_eval's Python after those flags (its venv created first with ``--setup-lmeval``);
    None, with a line saying what to do, when it is needed and missing."""
    python = setup_lmeval(LMEVAL_VENV) if args.setup_lmeval else Path(args.lmeval_python)
    if not args.skip_lmeval and not python.exists():
        print(
            f"no lm_eval environment at {python}: run with --setup-lmeval (needs PyPI) or --skip-lmeval"
        )
        return None
    return python


def write_task(work: Path, data: Path, name: str = "jbbq_bench", **fields) -> Path:
    """A local lm-eval task folder: ``<name>.yaml`` over the questions file ``data`` (each
    question's ``prompt`` the text sent), ``fields`` the rest of the task; written as JSON,
    which YAML reads as it is."""
    task = {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data)}},
        "test_split": "test",
        "doc_to_text": "prompt",
        **fields,
    }
    task_dir = work / "task"
    task_dir.mkdir()
    (task_dir / f"{name}.yaml").write_text(json.dumps(task, ensure_ascii=False), encoding="utf-8")
    return task_dir


class LmEvalProcess:
    """The runner in lm_eval's venv with its model loaded; ``run()`` is one timed
    ``simple_evaluate`` there (the bench's process waits, idle, meanwhile)."""

    def __init__(
        self, python: Path, model_dir: Path, task_dir: Path, request: str, args, work: Path
    ):
        self.work = work
        self.count = 0
        self.log = work / "lm_eval.log"
        command = [str(python), str(RUNNER), "--model-dir", str(model_dir), "--task-dir"]
        command += [str(task_dir), "--batch-size", str(args.lmeval_batch_size), "--device"]
        command += [args.device, "--dtype", args.dtype, "--threads", str(args.threads)]
        command += ["--request", request]
        env = dict(
            os.environ, **OFFLINE, TOKENIZERS_PARALLELISM="false", OMP_NUM_THREADS=str(args.threads)
        )
        self._log = self.log.open("w", encoding="utf-8")
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            text=True,
            env=env,
        )

    def run(self, limit: int | None = None) -> Run:
        self.count += 1
        out = self.work / f"lm_eval-run-{self.count}.json"
        self.process.stdin.write(f"run {out}{'' if limit is None else f' {limit}'}\n")
        self.process.stdin.flush()
        for line in self.process.stdout:
            if line.strip() == "done":
                break
        else:
            tail = self.log.read_text(encoding="utf-8", errors="replace")[-3000:]
            raise RuntimeError(f"lm_eval's process ended without an answer; its log ends:\n{tail}")
        result = json.loads(out.read_text(encoding="utf-8"))
        return Run(
            result["seconds"],
            result["cpu_seconds"],
            split_phases(result["phases"], result["call_seconds"], result["seconds"]),
            result["load_before"],
            result["load_after"],
            result.get("logprobs", result.get("replies")),
            {k: result[k] for k in ("call_seconds", "call_cpu_seconds", "flops", "version")},
        )

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("quit\n")
            self.process.stdin.flush()
            self.process.wait(timeout=60)
        self._log.close()
