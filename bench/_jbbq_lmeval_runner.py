"""Runs inside bench/.venv-lmeval: score the bench task with lm-evaluation-harness.

Called by ``bench/jbbq_throughput.py`` (``--request loglikelihood``) and
``bench/jbbq_generation.py`` (``--request generate_until``); writes the time of
``simple_evaluate`` (model already loaded; ``cpu_seconds``: the CPU time this process
used for it), the time of its request call alone (``<request>_seconds``), and per question the choice log-likelihoods (``logprobs``)
or the generated reply (``replies``) as JSON.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--task-dir", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--batch-size", type=int, required=True)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument(
        "--request", choices=("loglikelihood", "generate_until"), default="loglikelihood"
    )
    parser.add_argument(
        "--repeats", type=int, default=1, help="run it this many times; the fastest run counts"
    )
    args = parser.parse_args()

    import lm_eval
    import torch
    from lm_eval.models.huggingface import HFLM
    from lm_eval.tasks import TaskManager

    torch.set_num_threads(args.threads)
    lm = HFLM(
        pretrained=args.model_dir, batch_size=args.batch_size, device=args.device, dtype=args.dtype
    )
    manager = TaskManager(include_path=args.task_dir)
    if args.request == "generate_until":
        # One greedy step first, as the other side warms its model up before timing.
        lm.model.generate(
            input_ids=torch.ones((1, 8), dtype=torch.long, device=lm.device),
            max_new_tokens=2,
            do_sample=False,
            pad_token_id=lm.tokenizer.pad_token_id,
        )
    # Also time the request call alone (tokenizing, batching, forward passes), without
    # the task set-up around it.
    core = {"seconds": 0.0}
    scoring = getattr(lm, args.request)

    def timed_request(requests, *a, **kw):
        begun = time.perf_counter()
        try:
            return scoring(requests, *a, **kw)
        finally:
            core["seconds"] += time.perf_counter() - begun

    setattr(lm, args.request, timed_request)
    seconds, request_seconds, cpu_seconds = [], [], []
    for _ in range(args.repeats):
        core["seconds"] = 0.0
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        started, cpu_started = time.perf_counter(), time.process_time()
        results = lm_eval.simple_evaluate(
            model=lm,
            tasks=["jbbq_bench"],
            task_manager=manager,
            log_samples=True,
            verbosity="WARNING",
        )
        if args.device.startswith("cuda"):
            torch.cuda.synchronize()
        seconds.append(time.perf_counter() - started)
        cpu_seconds.append(time.process_time() - cpu_started)
        request_seconds.append(core["seconds"])
    seconds, core["seconds"] = min(seconds), min(request_seconds)
    samples = sorted(results["samples"]["jbbq_bench"], key=lambda s: s["doc_id"])
    if args.request == "loglikelihood":
        answers = {
            "logprobs": [
                [float(resp[0]) for resp in sample["filtered_resps"]] for sample in samples
            ]
        }
    else:
        answers = {"replies": [sample["resps"][0][0] for sample in samples]}
    Path(args.out).write_text(
        json.dumps(
            {
                "seconds": seconds,
                "cpu_seconds": min(cpu_seconds),
                f"{args.request}_seconds": core["seconds"],
                **answers,
                "version": lm_eval.__version__,
            }
        ),
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
