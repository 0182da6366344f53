"""The served path: bias-hub against lm-evaluation-harness's ``local-completions``, one server.

    python -m bench.jbbq_served --setup-lmeval   # once: lm_eval's own venv (needs PyPI)
    python -m bench.jbbq_served                  # the defaults below

Users with 7B-70B models serve them (``vllm serve``) and point a client at the server's
OpenAI-compatible completions endpoint. This bench serves one on 127.0.0.1, a stand-in whose
cost is declared instead of computed: a request takes ``--latency`` seconds plus the tokens it
generates (all its prompts') at ``--token-rate`` tokens a second, and each prompt gets a fixed
reply chosen by a hash of its text ("0", "1", "2" or "わかりません", one token per character,
ended as a model ends it). It takes at most ``--max-requests`` requests and runs at most
``--max-seconds``. Both tools run as their users run them, each a whole process:

- ``bias-hub jbbq evaluate --backend openai --api completions`` with the paper preset (three
  prompts, 4 shots, generated answers, intervals and paired comparisons), ``--limit`` questions
  per category, ``--concurrency`` requests in flight, ``--prompts-per-request`` prompts a request,
  an empty response cache each run;
- ``lm-eval run --model local-completions`` (0.4.13, ``bench/.venv-lmeval``) on a local
  ``generate_until`` task whose documents are the very prompts bias-hub sends (rendered by the
  pipeline's own code), ``num_concurrent`` = the same concurrency, ``batch_size`` = the same
  prompts a request (its README's recipe for a local server), ``--log_samples``.

Timed as every bench (``bench/_harness.py``). Per run: the process's wall and CPU seconds, the
serving window (first request to last reply) and the ideal: the sum of the requests' costs /
the concurrency, the wall time of a client that costs nothing and always keeps
``concurrency`` requests in flight. Both tools must send the same prompts and read the replies
to identical predictions.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from bench._harness import OFFLINE, Run, describe_load, interleave, read_jsonl, run_process, summary
from bench._lmeval import add_lmeval_arguments, lmeval_python, write_task
from bias_hub.builders.shared.files import write_jsonl

MODEL = "served-model"
REPLIES = ("0", "1", "2", "わかりません")
QUIET = {**OFFLINE, "TOKENIZERS_PARALLELISM": "false", "OMP_NUM_THREADS": "1"}


def reply_for(prompt: str) -> str:
    return REPLIES[zlib.crc32(prompt.encode("utf-8")) % len(REPLIES)]


class Server:
    """The stand-in completions endpoint; ``requests`` holds ``(start, end, prompts, cost)`` of
    every request since the last ``reset``, ``prompts`` every prompt text received."""

    def __init__(self, latency: float, token_rate: float, max_requests: int, max_seconds: float):
        self.latency, self.token_rate = latency, token_rate
        self.max_requests, self.deadline = max_requests, time.monotonic() + max_seconds
        self.lock = threading.Lock()
        self.total = 0
        self.reset()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as vLLM's server

            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                status, reply = server.answer(body)
                payload = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def reset(self) -> None:
        with self.lock:
            self.requests: list[tuple[float, float, int, float]] = []
            self.prompts: list[str] = []

    def answer(self, body: dict) -> tuple[int, dict]:
        started = time.perf_counter()
        with self.lock:
            self.total += 1
            if self.total > self.max_requests or time.monotonic() > self.deadline:
                return 503, {"error": {"message": "the bench's bound on requests or time"}}
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        replies = [reply_for(prompt)[: body.get("max_tokens", 16)] for prompt in prompts]
        cost = self.latency + sum(len(reply) for reply in replies) / self.token_rate
        time.sleep(cost)
        with self.lock:
            self.requests.append((started, time.perf_counter(), len(prompts), cost))
            self.prompts.extend(prompts)
        choices = [
            {"index": i, "text": reply, "finish_reason": "stop", "logprobs": None}
            for i, reply in enumerate(replies)
        ]
        return 200, {"object": "text_completion", "model": MODEL, "choices": choices}

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def questions(dataset: Path, limit: int):
    """``(settings, rows, documents)`` of ``jbbq evaluate --preset paper --limit`` on ``dataset``:
    one document per prompt and question, holding the plain prompt bias-hub sends for it."""
    from bias_hub.pipelines.jbbq.prompting import load_prompt
    from bias_hub.pipelines.jbbq.run import load_questions
    from bias_hub.pipelines.jbbq.settings import with_preset

    settings = with_preset("paper", backend="openai", api="completions", limit=limit)
    if settings.scoring != "generate" or settings.chat != "no" or len(settings.shots) != 1:
        raise SystemExit(f"presets.paper changed shape ({settings.scoring=}, {settings.shots=})")
    rows, shots, _ = load_questions(dataset, settings)
    shown = shots[: settings.shots[0]]
    documents = [
        {
            "prompt_name": name,
            "key": f"{row['category']}/{row['example_id']}",
            "prompt": load_prompt(name, settings.layout).plain(row, shown),
        }
        for name in settings.prompts
        for row in rows
    ]
    return settings, rows, documents


def timed_process(command: list[str], server: Server, concurrency: int, read) -> Run:
    """One whole-process run of ``command`` against ``server``; ``read()`` its predictions."""
    server.reset()
    run = run_process(command, env={**os.environ, **QUIET})
    requests, prompts = list(server.requests), list(server.prompts)
    window = max(end for _, end, _, _ in requests) - min(start for start, _, _, _ in requests)
    run.phases = {"serving": window, "start-up and scoring": run.seconds - window}
    run.output = read()
    ideal = sum(cost for *_, cost in requests) / concurrency
    run.extra = {"requests": len(requests), "prompts": sorted(prompts), "ideal": ideal}
    return run


def ours(args, server: Server, dataset: Path, work: Path, count: list[int]):
    def run() -> Run:
        count[0] += 1
        out = work / f"bias-hub-{count[0]}"
        command = [sys.executable, "-m", "bias_hub", "jbbq", "evaluate", "--backend", "openai"]
        command += ["--api", "completions", "--model", MODEL, "--base-url", server.url]
        command += ["--dataset", str(dataset), "--limit", str(args.limit), "--out", str(out)]
        command += ["--concurrency", str(args.concurrency), "--cache-dir", str(out) + ".cache"]
        command += ["--prompts-per-request", str(args.prompts_per_request), "-q"]

        def read() -> dict:
            rows = read_jsonl(out / "predictions.jsonl")
            return {
                (r["prompt"], f"{r['category']}/{r['example_id']}"): (r["reply"], r["prediction"])
                for r in rows
            }

        return timed_process(command, server, args.concurrency, read)

    return run


def lm_eval(args, python: Path, server: Server, task: Path, rows, settings, count: list[int]):
    from bias_hub.pipelines.jbbq.scorers import read_replies

    by_key = {f"{row['category']}/{row['example_id']}": row for row in rows}

    def run() -> Run:
        count[0] += 1
        out = task.parent / f"lm-eval-{count[0]}"
        model_args = (
            f"model={MODEL},base_url={server.url}/completions,num_concurrent={args.concurrency},"
            "max_retries=3,tokenized_requests=False,tokenizer_backend=None"
        )
        command = [str(python), "-m", "lm_eval", "run", "--model", "local-completions"]
        command += ["--model_args", model_args, "--tasks", "jbbq_served"]
        command += ["--batch_size", str(args.prompts_per_request)]
        command += ["--include_path", str(task), "--output_path", str(out), "--log_samples"]

        def read() -> dict:
            (samples,) = out.rglob("samples_jbbq_served_*.jsonl")
            found = read_jsonl(samples)
            keys = [(s["doc"]["prompt_name"], s["doc"]["key"]) for s in found]
            replies = [s["resps"][0][0] for s in found]
            read = read_replies([by_key[k] for _, k in keys], replies, settings.answer_reader)
            return {key: (r["reply"], r["prediction"]) for key, r in zip(keys, read, strict=True)}

        return timed_process(command, server, args.concurrency, read)

    return run


def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_lmeval_arguments(parser)
    parser.add_argument("--limit", type=int, default=20, help="questions per category (5 here)")
    parser.add_argument("--concurrency", type=int, default=8, help="requests in flight, both")
    parser.add_argument("--prompts-per-request", type=int, default=8, help="both tools")
    parser.add_argument("--latency", type=float, default=1.0, help="seconds a request costs")
    parser.add_argument("--token-rate", type=float, default=20.0, help="tokens a second")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--max-requests", type=int, default=5000)
    parser.add_argument("--max-seconds", type=float, default=1800.0)
    parser.add_argument("--dataset", type=Path, help="a built JBBQ folder (default: the sample)")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_arguments(argv)
    python = lmeval_python(args)
    if python is None:
        return 1
    from bias_hub.pipelines.common.locations import ensure_built

    dataset = args.dataset or ensure_built("jbbq")
    settings, rows, documents = questions(dataset, args.limit)
    server = Server(args.latency, args.token_rate, args.max_requests, args.max_seconds)
    with tempfile.TemporaryDirectory(prefix="bench-served-") as tmp:
        work = Path(tmp)
        data = write_jsonl(work / "documents.jsonl", documents)
        write_task(
            work,
            data,
            "jbbq_served",
            output_type="generate_until",
            doc_to_target="prompt_name",
            generation_kwargs={
                "until": ["\n\n"],
                "do_sample": False,
                "max_gen_toks": settings.max_new_tokens,
            },
            metric_list=[{"metric": "exact_match"}],
        )
        print(
            f"{len(documents)} prompts ({len(rows)} questions x {len(settings.prompts)} prompts), "
            f"{args.concurrency} requests in flight, {args.prompts_per_request} prompts a request; "
            f"a request costs {args.latency} s + its tokens at {args.token_rate}/s; "
            f"{describe_load()}",
            flush=True,
        )
        contestants = {
            "bias-hub": ours(args, server, dataset, work, [0]),
            "lm-eval": lm_eval(args, python, server, work / "task", rows, settings, [0]),
        }
        try:
            runs = interleave(contestants, args.rounds, warm_up=contestants)
        finally:
            server.close()
    return report(runs, documents, args)


def report(runs: dict[str, list[Run]], documents: list[dict], args) -> int:
    sent = sorted(document["prompt"] for document in documents)
    answers = {name: [run.output for run in tool_runs] for name, tool_runs in runs.items()}
    same_prompts = all(run.extra["prompts"] == sent for r in runs.values() for run in r)
    first = answers["bias-hub"][0]
    same_answers = all(output == first for outputs in answers.values() for output in outputs)
    print(f"\nevery run sent the same {len(sent)} prompts: {same_prompts}")
    print(f"identical replies and predictions in every run of both tools: {same_answers}")
    table = {name: summary(tool_runs) for name, tool_runs in runs.items()}
    for name, tool_runs in runs.items():
        best = min(tool_runs, key=lambda run: run.seconds)
        ideal = best.extra["ideal"]
        print(
            f"  {name}: wall min {table[name]['min']:.2f} s, median {table[name]['median']:.2f} s "
            f"(load {table[name]['load']}); CPU {best.cpu_seconds:.2f} s; {best.extra['requests']} "
            f"requests; serving {best.phases['serving']:.2f} s; ideal {ideal:.2f} s = "
            f"{ideal / best.seconds:.0%} of the whole run, {ideal / best.phases['serving']:.0%} "
            "of its serving window"
        )
    for statistic in ("min", "median"):
        ratio = table["lm-eval"][statistic] / table["bias-hub"][statistic]
        print(f"lm-eval / bias-hub, {statistic} wall: {ratio:.2f}x")
    return 0 if same_prompts and same_answers else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
