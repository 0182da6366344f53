"""JBBQ loglikelihood throughput: bias-hub against lm-evaluation-harness, same model, same questions.

    python -m bench.jbbq_throughput --setup-lmeval            # once: lm_eval's own venv (PyPI)
    python -m bench.jbbq_throughput --config small --questions 96
    python -m bench.jbbq_throughput --device cuda --dtype bfloat16 --config llama-7b

Both tools score the same prompts (the ``basic`` prompt, plain layout, ``--shots`` few-shot
examples from train) and the choices "0", "1", "2" by log-probability, with the same model
(random weights of the ``--config`` shape, saved once to a temporary folder):

- bias-hub through the pipeline's own path, ``HFScorer.score`` (``--batch-tokens``);
- lm-evaluation-harness's HFLM in its own venv, the same questions as a local
  ``multiple_choice`` task, configured as its documentation suggests: ``logits_cache`` on
  (one forward pass serves the three one-token choices), ``--lmeval-batch-size``, no
  bootstrap of the metric's standard error.

Timing (``bench/_harness.py``): both processes hold their model, each tool is warmed up on
``--warm-up`` questions, then ``--rounds`` interleaved runs each. Two points are timed: the
scoring call (texts ready, model loaded) and end to end (questions file to accuracy), with
phases (``split_phases``). The job's FLOPs (every distinct token once, one vocabulary
projection per question) against a plain matrix product on the model's shape give each
tool's distance from the machine's floor. Predictions must be identical.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from bench._harness import (
    MIN_ROUNDS,
    FlopCounter,
    PhaseClock,
    Run,
    describe_load,
    floor,
    interleave,
    llama_flops,
    phase_table,
    save_json,
    split_phases,
    summary,
    timed,
)
from bench._lmeval import (
    REPO_ROOT,
    LmEvalProcess,
    add_lmeval_arguments,
    lmeval_python,
    write_task,
)
from bias_hub.builders.shared.files import write_jsonl

CHOICES = ["0", "1", "2"]
PHASES = ["tokenize", "forward", "decode", "score", "set-up"]


def questions(n: int, shots: int, seed: int) -> tuple[list[dict], list[dict]]:
    """``n`` rows of the built JBBQ sample (test, then dev and train, repeated as needed) and
    ``shots`` few-shot rows from train."""
    import datasets

    from bias_hub.pipelines.jbbq.prompting import select_shots

    folder = REPO_ROOT / "datasets" / "jbbq"
    if not (folder / "README.md").is_file():
        raise SystemExit(f"{folder}: no built JBBQ sample; run `bias-hub build jbbq` first")
    splits = {
        s: [dict(r) for r in datasets.load_dataset(str(folder), "all", split=s)]
        for s in ("train", "dev", "test")
    }
    evaluated = splits["test"] + splits["dev"] + splits["train"]
    rows = [evaluated[i % len(evaluated)] for i in range(n)]
    # Few-shot examples from train templates; with rows drawn from train too this is a
    # throughput run, not an evaluation.
    return rows, select_shots(splits["train"], shots, seed, exclude_templates=set())


class Clocked:
    """bias-hub's side of a JBBQ bench: the pipeline's scorer on the model with its phases, its
    call (the methods wrapped into ``call``) and its FLOPs counted; ``run(limit)`` is one timed
    ``_work(limit) -> (output, extra)``."""

    def _count(self, model) -> None:
        self.clock, self.call = PhaseClock(), PhaseClock()
        self.clock.time_forward(model)
        self.flops = FlopCounter(model)

    def _work(self, limit: int | None) -> tuple[object, dict]:
        raise NotImplementedError

    def run(self, limit: int | None = None) -> Run:
        def once():
            for counter in (self.clock, self.call, self.flops):
                counter.reset()
            started = time.perf_counter()
            output, extra = self._work(limit)
            seconds = time.perf_counter() - started
            call = self.call.seconds["call"]
            extra = {
                "call_seconds": call,
                "call_cpu_seconds": self.call.cpu_seconds["call"],
                "flops": self.flops.total,
                **extra,
            }
            return split_phases(self.clock.seconds, call, seconds), output, extra

        return timed(once)


class BiasHub(Clocked):
    """The pipeline's log-likelihood scorer."""

    def __init__(self, model, tokenizer, shots: list[dict], data: Path, args) -> None:
        from bias_hub.pipelines.jbbq.hf_backend import HFModel
        from bias_hub.pipelines.jbbq.prompting import load_prompt
        from bias_hub.pipelines.jbbq.scorers import HFScorer

        self.hf = HFModel(
            model=model,
            tokenizer=tokenizer,
            batch_tokens=args.batch_tokens,
            prefix_cache=not args.no_prefix_cache,
        )
        self.scorer = HFScorer(self.hf, chat="no", progress=False)
        self.prompt, self.shots, self.data = load_prompt("basic"), shots, data
        self._count(model)
        for method in ("encode_all", "continuation_ids"):
            self.clock.wrap(self.hf, method, "tokenize")
        for method in ("encode_all", "continuation_ids", "choice_logprobs"):
            self.call.wrap(self.hf, method, "call")

    def _work(self, limit: int | None) -> tuple[object, dict]:
        import datasets

        rows = datasets.load_dataset("json", data_files=str(self.data), split="train")
        rows = [dict(row) for row in (rows if limit is None else rows.select(range(limit)))]
        scored = self.scorer.score(self.prompt, rows, self.shots, "loglikelihood")
        predictions = np.array([item["prediction"] for item in scored])
        accuracy = float((predictions == np.array([row["label"] for row in rows])).mean())
        return np.array([item["logprobs"] for item in scored]), {"acc": accuracy}


def needed_flops(config, ids: list[list[int]], choice_ids: list[list[int]]) -> tuple[float, int]:
    """FLOPs the job needs and the shared prefix's length: the prefix every prompt shares
    once, each prompt's own tokens after it, each choice's tokens but its first after its
    prompt, and a vocabulary projection for each scored token."""
    from bias_hub.pipelines.jbbq.prefix_tokens import common_prefix_length

    shared = min(common_prefix_length(ids), min(len(p) for p in ids) - 1)
    rows = [(0, shared)] + [(shared, len(p) - shared) for p in ids]
    rows += [(len(p), len(c) - 1) for p in ids for c in choice_ids if len(c) > 1]
    scored = sum(len(c) for c in choice_ids) if any(len(c) > 1 for c in choice_ids) else 1
    return llama_flops(config, rows, projected=len(ids) * scored), shared


def _normalise(logprobs: np.ndarray) -> np.ndarray:
    """Log-probabilities renormalised over the three choices (removes shared terms)."""
    top = logprobs.max(axis=1, keepdims=True)
    return logprobs - (top + np.log(np.exp(logprobs - top).sum(axis=1, keepdims=True)))


def race_tools(ours, theirs, model, args, warm_ours: bool = True) -> tuple[dict, float]:
    """Both tools' interleaved runs (lm-eval's process closed after them) and the floor,
    measured before and after them (the higher: the less disturbed)."""
    try:
        contestants = {"bias-hub": ours.run}
        warm = {"bias-hub": lambda: ours.run(args.warm_up)} if warm_ours else {}
        if theirs is not None:
            contestants["lm-eval"] = theirs.run
            warm["lm-eval"] = lambda: theirs.run(args.warm_up)
        floor_rate = floor(model, args)
        runs = interleave(contestants, args.rounds, warm)
        return runs, max(floor_rate, floor(model, args))
    finally:
        if theirs is not None:
            theirs.close()


def compare(runs: dict, args, needed: float, floor_rate: float, call: str, end: str):
    """Print each tool's figures: the load, the ratios of the scoring ``call`` and of ``end`` to
    end (with lm-eval), the phases of the fastest run and the floor. Returns the fastest run of
    each tool and the figures for the report."""
    fastest = {name: min(r, key=lambda run: run.seconds) for name, r in runs.items()}
    calls = {
        name: summary(r, key=lambda run: run.extra["call_seconds"]) for name, r in runs.items()
    }
    whole = {name: summary(r) for name, r in runs.items()}
    print(f"\nresults: min and median of {args.rounds} interleaved runs each; {describe_load()}")
    for name in runs:
        print(f"  {name}: ran at load {whole[name]['load'][0]}-{whole[name]['load'][1]}")
    key = "call_seconds" if args.device.startswith("cuda") else "call_cpu_seconds"
    effort = {name: summary(r, key=lambda run: run.extra[key]) for name, r in runs.items()}
    tools = {f"{name} call": effort[name]["min"] for name in runs}
    lines = floor_lines(needed, floor_rate, tools, args.device)
    figures = {
        "bias_hub": [run.record() for run in runs["bias-hub"]],
        "calls": calls,
        "end_to_end": whole,
        "call_effort": effort,
        "needed_gflop": needed / 1e9,
        "floor_gflop_per_s": floor_rate / 1e9,
    }
    if "lm-eval" in runs:
        print(_ratio_line(call, calls["bias-hub"], calls["lm-eval"]))
        print(_ratio_line(end, whole["bias-hub"], whole["lm-eval"]))
        figures["lm_eval"] = [run.record() for run in runs["lm-eval"]]
        for point, table in (("call", calls), ("end_to_end", whole)):
            for statistic in ("min", "median"):
                ratio = table["lm-eval"][statistic] / table["bias-hub"][statistic]
                figures[f"ratio_{point}_{statistic}"] = ratio
        figures["lm_eval_version"] = fastest["lm-eval"].extra["version"]
    print(phase_table(fastest, PHASES))
    print("the floor:")
    print("\n".join(lines))
    return fastest, figures


def _ratio_line(label: str, ours: dict, theirs: dict) -> str:
    return (
        f"  {label:<44} bias-hub {ours['min']:8.2f} s min {ours['median']:8.2f} s median | "
        f"lm-eval {theirs['min']:8.2f} s min {theirs['median']:8.2f} s median | "
        f"ratio {theirs['min'] / ours['min']:5.2f}x (min) {theirs['median'] / ours['median']:5.2f}x (median)"
    )


def parse_arguments(argv: list[str] | None, doc: str = __doc__) -> argparse.Namespace:
    from bias_hub.pipelines.jbbq.hf_backend import DEFAULT_BATCH_TOKENS
    from bias_hub.pipelines.jbbq.random_model import MODEL_CONFIGS

    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=96)
    parser.add_argument("--shots", type=int, default=4, help="few-shot examples in every prompt")
    parser.add_argument(
        "--config",
        default="small",
        choices=sorted(MODEL_CONFIGS),
        help="model shape (default %(default)s; see docs/benches.md)",
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (both tools)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--rounds", type=int, default=MIN_ROUNDS, help="timed runs of each tool, interleaved"
    )
    parser.add_argument(
        "--warm-up", type=int, default=16, help="questions in each tool's untimed first run"
    )
    parser.add_argument(
        "--batch-tokens",
        type=int,
        default=DEFAULT_BATCH_TOKENS,
        help="bias-hub's token budget per batch (default %(default)s)",
    )
    parser.add_argument(
        "--no-prefix-cache",
        action="store_true",
        help="bias-hub without reusing the shared prompt prefix",
    )
    add_lmeval_arguments(parser)
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    return parser.parse_args(argv)


def describe_model(model, args) -> str:
    config = model.config
    parameters = sum(p.numel() for p in model.parameters())
    return (
        f"Llama '{args.config}' ({parameters / 1e6:.1f} M parameters: hidden {config.hidden_size}, "
        f"{config.num_hidden_layers} layers, intermediate {config.intermediate_size}, "
        f"vocabulary {config.vocab_size}; random weights) on {args.device} ({args.dtype}), "
        f"{args.threads} CPU thread(s)"
    )


def tiny_model(args, folder: Path, texts: list[str], save: bool):
    """``build_tiny_model`` of the ``--config`` shape, ``--seed``, ``--dtype`` and ``--device``,
    for plain prompts (no chat template)."""
    from bias_hub.pipelines.jbbq.random_model import build_tiny_model

    options = dict(config=args.config, seed=args.seed, dtype=args.dtype, device=args.device)
    return build_tiny_model(folder, texts, chat_template=False, save=save, **options)


def floor_lines(needed: float, floor_rate: float, tools: dict[str, float], device: str):
    """How far each tool's scoring call is from the floor: the needed FLOPs at the plain matrix
    product's rate. On a CPU in CPU seconds (see ``matmul_flops_per_second``)."""
    unit = "s" if device.startswith("cuda") else "CPU s"
    lines = [
        f"  the job needs {needed / 1e9:.1f} GFLOP; a plain matrix product on the model's shape "
        f"reaches {floor_rate / 1e9:.2f} GFLOP per {unit} here: the floor is "
        f"{needed / floor_rate:.2f} {unit}"
    ]
    for name, seconds in tools.items():
        lines.append(
            f"  {name}: {seconds:.2f} {unit} = {needed / seconds / 1e9:.2f} GFLOP of needed work "
            f"per {unit}, {seconds / (needed / floor_rate):.2f}x the floor"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv)
    import torch

    from bias_hub.pipelines.jbbq.prompting import load_prompt

    torch.set_num_threads(args.threads)
    python = lmeval_python(args)
    if python is None:
        return 2
    rows, shots = questions(args.questions, args.shots, args.seed)
    prompt = load_prompt("basic")
    texts = [prompt.plain(row, shots) for row in rows]
    report: dict = {"settings": vars(args)}
    with tempfile.TemporaryDirectory(prefix="jbbq-bench-") as tmp:
        work = Path(tmp)
        model, tokenizer = tiny_model(args, work / "model", texts, save=not args.skip_lmeval)
        data = write_jsonl(
            work / "questions.jsonl",
            [{**row, "prompt": t} for row, t in zip(rows, texts, strict=True)],
        )
        task_dir = write_task(
            work,
            data,
            output_type="multiple_choice",
            doc_to_choice=CHOICES,
            doc_to_target="label",
            target_delimiter="",
            metric_list=[{"metric": "acc"}],
        )
        ours = BiasHub(model, tokenizer, shots, data, args)
        ids = ours.hf.encode_all(texts, chat=False)
        choice_ids = [ours.hf.continuation_ids(texts[0], c, chat=False) for c in CHOICES]
        needed, shared = needed_flops(model.config, ids, choice_ids)
        lengths = [len(p) for p in ids]
        print(f"JBBQ loglikelihood: {describe_model(model, args)}")
        print(
            f"{len(texts)} questions, {args.shots}-shot, prompts of {min(lengths)}-{max(lengths)} "
            f"tokens (mean {np.mean(lengths):.0f}), {shared} of them shared by all; {describe_load()}"
        )
        print(
            f"bias-hub: HFScorer.score (encode_all; shared prefix computed once and its cache "
            f"reused: {not args.no_prefix_cache}; token budget {args.batch_tokens} per batch)"
        )
        theirs = None
        if not args.skip_lmeval:
            print(
                f"lm-eval: HFLM(pretrained=<model>, batch_size={args.lmeval_batch_size}, "
                f"device={args.device}, dtype={args.dtype}, logits_cache=True), "
                "simple_evaluate(limit=None, log_samples=True, bootstrap_iters=0); task: "
                'multiple_choice, doc_to_choice ["0", "1", "2"], target_delimiter ""'
            )
            theirs = LmEvalProcess(python, work / "model", task_dir, "loglikelihood", args, work)
        runs, floor_rate = race_tools(ours, theirs, model, args)
    fastest, figures = compare(
        runs,
        args,
        needed,
        floor_rate,
        "scoring call (texts ready, model loaded)",
        "end to end (questions file -> accuracy)",
    )
    report.update(figures)
    effort = figures["call_effort"]["bias-hub"]["min"]
    report["bias_hub_over_floor"] = effort / (needed / floor_rate)
    if theirs is not None:
        ours_lp = fastest["bias-hub"].output
        theirs_lp = np.asarray(fastest["lm-eval"].output, dtype=float)
        same = [
            bool((np.asarray(run.output, dtype=float).argmax(1) == ours_lp.argmax(1)).all())
            for run in runs["lm-eval"]
        ]
        diff = float(np.abs(_normalise(theirs_lp) - _normalise(ours_lp)).max())
        report.update(
            identical_predictions=all(same),
            max_abs_diff_normalised_logprob=diff,
            computed_gflop={name: run.extra["flops"] / 1e9 for name, run in fastest.items()},
        )
        computed = report["computed_gflop"]
        print(
            f"  computed: bias-hub {computed['bias-hub']:.1f} GFLOP, lm-eval {computed['lm-eval']:.1f} "
            f"GFLOP (padding, whole prompts, every position projected onto the vocabulary)"
        )
        print(
            f"identical predictions: {report['identical_predictions']} (every lm-eval run against "
            f"bias-hub's; max |diff| of choice log-probs renormalised: {diff:.2e})"
        )
    save_json(args.json, report, default=str)
    return 0 if theirs is None or report["identical_predictions"] else 1


if __name__ == "__main__":
    sys.exit(main())
