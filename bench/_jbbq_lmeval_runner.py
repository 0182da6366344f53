"""Runs inside bench/.venv-lmeval: lm-evaluation-harness's side of the JBBQ benches.

Started once by ``bench._lmeval.LmEvalProcess``, it loads the model (HFLM) and keeps it while
the bench interleaves its timed runs with bias-hub's. Commands on stdin, one per line, each
answered by ``done`` on stdout: ``run OUT [LIMIT]`` (one timed ``simple_evaluate`` of the task,
of its first LIMIT documents when given; OUT: JSON with the times, phases, FLOPs, load and
per document the choice log-likelihoods or the reply, as ``LmEvalProcess.run`` reads them)
and ``quit``. Only the standard library, torch, lm_eval and ``_harness.py`` beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _harness import FlopCounter, PhaseClock, load_average  # noqa: E402  (a script in its own venv)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--task-dir", required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--request", choices=("loglikelihood", "generate_until"), default="loglikelihood"
    )
    args = parser.parse_args()

    import lm_eval
    import torch
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    torch.set_num_threads(args.threads)
    lm = HFLM(
        pretrained=args.model_dir,
        batch_size=args.batch_size,
        device=args.device,
        dtype=args.dtype,
        logits_cache=True,
    )
    manager = TaskManager(include_path=args.task_dir)
    clock = PhaseClock()
    clock.wrap(lm, "tok_encode", "tokenize")
    clock.wrap(lm, "tok_batch_encode", "tokenize")
    clock.wrap(lm, "tok_decode", "decode")
    clock.time_forward(lm.model)
    flops = FlopCounter(lm.model)
    call = PhaseClock()  # the request call alone
    call.wrap(lm, args.request, "call")

    for line in sys.stdin:
        command = line.split()
        if not command or command[0] == "quit":
            break
        out, limit = Path(command[1]), (int(command[2]) if len(command) > 2 else None)
        for counter in (clock, call, flops):
            counter.reset()
        load_before = load_average()
        started, cpu_started = time.perf_counter(), time.process_time()
        results = lm_eval.simple_evaluate(
            model=lm,
            tasks=["jbbq_bench"],
            task_manager=manager,
            limit=limit,
            log_samples=True,
            bootstrap_iters=0,
            verbosity="ERROR",
        )
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        samples = sorted(results["samples"]["jbbq_bench"], key=lambda s: s["doc_id"])
        result = {
            "seconds": seconds,
            "cpu_seconds": cpu,
            "call_seconds": call.seconds["call"],
            "call_cpu_seconds": call.cpu_seconds["call"],
            "phases": clock.split(seconds),
            "flops": flops.total,
            "load_before": load_before,
            "load_after": load_average(),
            "version": lm_eval.__version__,
        }
        if args.request == "loglikelihood":
            result["logprobs"] = [[float(r[0]) for r in s["filtered_resps"]] for s in samples]
        else:
            result["replies"] = [s["resps"][0][0] for s in samples]
        out.write_text(json.dumps(result), encoding="utf-8")
        print("done", flush=True)


if __name__ == "__main__":
    main()
