"""JBBQ loglikelihood throughput: bias-hub vs lm-evaluation-harness, same model, same questions.

    python -m bench.jbbq_throughput                       # tiny model, CPU, 2 threads
    python -m bench.jbbq_throughput --device cuda --dtype bfloat16 --config llama-7b

Both score the same prompts (the ``basic`` prompt, plain layout, ``--shots``
few-shot examples from train) and the choices "0", "1", "2" by
log-probability with the same model (random weights, saved once to a temporary
folder) and the same batch size. lm-evaluation-harness runs through its HF
backend on the questions as a local custom ``multiple_choice`` task, in its own
virtual environment (``bench/.venv-lmeval``, created by ``--setup-lmeval``;
``lm_eval`` is not a dependency of this project). Both timings exclude model
loading and include everything else each tool does to turn prompts into
scores. The script prints questions/second for both, the ratio, and whether
the predictions are identical.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO_ROOT = Path(__file__).resolve().parents[1]
LMEVAL_VENV = REPO_ROOT / "bench" / ".venv-lmeval"
LMEVAL_VERSION = "0.4.13"
CHOICES = ["0", "1", "2"]

_TASK_YAML = """\
task: jbbq_bench
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: multiple_choice
doc_to_text: prompt
doc_to_choice: ["0", "1", "2"]
doc_to_target: label
target_delimiter: ""
metric_list:
  - metric: acc
"""


def setup_lmeval(venv: Path) -> Path:
    """Create the baseline's own venv: torch (CPU wheel) first, then lm_eval[hf]."""
    python = venv / "bin" / "python"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "torch==2.13.0"], check=True)
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", f"lm_eval[hf]=={LMEVAL_VERSION}"],
        check=True,
    )
    return python


def questions(n: int, shots: int, seed: int) -> tuple[list[str], list[dict]]:
    """``n`` plain ``basic`` prompts from the built JBBQ sample (test, then dev and train)."""
    import datasets

    from bias_hub.pipelines.jbbq.prompting import load_prompt, select_shots

    folder = REPO_ROOT / "datasets" / "jbbq"
    if (folder / "README.md").is_file():
        splits = {
            s: [dict(r) for r in datasets.load_dataset(str(folder), "all", split=s)]
            for s in ("train", "dev", "test")
        }
    else:
        raise SystemExit(f"{folder}: no built JBBQ sample; run `bias-hub build jbbq` first")
    prompt = load_prompt("basic")
    evaluated = splits["test"] + splits["dev"] + splits["train"]
    rows = [evaluated[i % len(evaluated)] for i in range(n)]
    # Few-shot examples from train templates; with rows drawn from train too this is a
    # throughput run, not an evaluation.
    shot_rows = select_shots(splits["train"], shots, seed, exclude_templates=set())
    return [prompt.plain(row, shot_rows) for row in rows], rows


def run_ours(
    model, tokenizer, prompts: list[str], batch_size: int, prefix_cache: bool = True
) -> tuple[float, np.ndarray]:
    from bias_hub.pipelines.jbbq.hf_backend import HFModel

    scorer = HFModel(
        model=model, tokenizer=tokenizer, batch_size=batch_size, prefix_cache=prefix_cache
    )
    scorer.choice_logprobs(
        [scorer.encode(p, chat=False) for p in prompts[:batch_size]], CHOICES, progress=False
    )
    _sync(model)
    started = time.perf_counter()
    ids = [scorer.encode(p, chat=False) for p in prompts]
    choices = [
        scorer.continuation_ids(prompts[0], c, chat=False) for c in CHOICES
    ]  # as the pipeline does
    logprobs = scorer.choice_logprobs(ids, choices, progress=False)
    _sync(model)
    return time.perf_counter() - started, logprobs


def _sync(model) -> None:
    import torch

    if next(model.parameters()).is_cuda:
        torch.cuda.synchronize()


def add_lmeval_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of a bench that compares with lm_eval: where its venv is, whether to create it."""
    parser.add_argument(
        "--setup-lmeval", action="store_true", help=f"create {LMEVAL_VENV} first (needs PyPI)"
    )
    parser.add_argument("--lmeval-python", default=str(LMEVAL_VENV / "bin" / "python"))
    parser.add_argument("--skip-lmeval", action="store_true", help="time bias-hub only")


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


def run_lmeval(
    python: Path, model_dir: Path, prompts: list[str], rows: list[dict], args, work: Path
) -> dict:
    data = work / "questions.jsonl"
    with data.open("w", encoding="utf-8") as handle:
        for prompt, row in zip(prompts, rows, strict=True):
            handle.write(
                json.dumps({"prompt": prompt, "label": row["label"]}, ensure_ascii=False) + "\n"
            )
    task_dir = work / "task"
    task_dir.mkdir()
    (task_dir / "jbbq_bench.yaml").write_text(
        _TASK_YAML.format(data=json.dumps(str(data))), encoding="utf-8"
    )
    out = work / "lmeval.json"
    command = [
        str(python),
        str(REPO_ROOT / "bench" / "_jbbq_lmeval_runner.py"),
        "--model-dir",
        str(model_dir),
        "--task-dir",
        str(task_dir),
        "--out",
        str(out),
        "--batch-size",
        str(args.batch_size),
        "--device",
        args.device,
        "--dtype",
        args.dtype,
        "--threads",
        str(args.threads),
    ]
    env = dict(
        os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false"
    )
    subprocess.run(command, check=True, env=env)
    return json.loads(out.read_text(encoding="utf-8"))


def _normalise(logprobs: np.ndarray) -> np.ndarray:
    """Log-probabilities renormalised over the three choices (removes shared terms)."""
    top = logprobs.max(axis=1, keepdims=True)
    return logprobs - (top + np.log(np.exp(logprobs - top).sum(axis=1, keepdims=True)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=688, help="688 = every sample question")
    parser.add_argument("--shots", type=int, default=4, help="few-shot examples in every prompt")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--config", default="tiny", help="model shape: tiny or llama-7b")
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (both tools)")
    parser.add_argument("--seed", type=int, default=0)
    add_lmeval_arguments(parser)
    parser.add_argument(
        "--no-prefix-cache",
        action="store_true",
        help="bias-hub without reusing the shared prompt prefix",
    )
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    args = parser.parse_args(argv)

    import torch

    from bias_hub.pipelines.jbbq.random_model import build_tiny_model

    torch.set_num_threads(args.threads)
    python = lmeval_python(args)
    if python is None:
        return 2

    prompts, rows = questions(args.questions, args.shots, args.seed)
    with tempfile.TemporaryDirectory(prefix="jbbq-bench-") as tmp:
        work = Path(tmp)
        model_dir = work / "model"
        model, tokenizer = build_tiny_model(
            model_dir,
            prompts,
            config=args.config,
            seed=args.seed,
            chat_template=False,
            dtype=args.dtype,
            device=args.device,
            save=not args.skip_lmeval,
        )
        n_tokens = [len(tokenizer(p)["input_ids"]) for p in prompts]
        print(
            f"{len(prompts)} questions, {args.shots}-shot, prompt length {min(n_tokens)}-{max(n_tokens)} "
            f"tokens (mean {np.mean(n_tokens):.0f}); model {args.config} on {args.device} ({args.dtype}), "
            f"batch size {args.batch_size}, {args.threads} CPU threads"
        )
        ours_s, ours_lp = run_ours(
            model, tokenizer, prompts, args.batch_size, not args.no_prefix_cache
        )
        ours = {"seconds": ours_s, "questions_per_second": len(prompts) / ours_s}
        print(f"bias-hub loglikelihood: {ours_s:.2f} s, {ours['questions_per_second']:.1f} q/s")
        report: dict = {"settings": vars(args), "n_questions": len(prompts), "bias_hub": ours}
        if not args.skip_lmeval:
            del model  # free the device for lm_eval's copy
            if args.device.startswith("cuda"):
                torch.cuda.empty_cache()
            baseline = run_lmeval(python, model_dir, prompts, rows, args, work)
            theirs_lp = np.asarray(baseline["logprobs"], dtype=float)
            same = bool((theirs_lp.argmax(axis=1) == ours_lp.argmax(axis=1)).all())
            diff = float(np.abs(_normalise(theirs_lp) - _normalise(ours_lp)).max())
            theirs_qps = len(prompts) / baseline["seconds"]
            core_qps = len(prompts) / baseline["loglikelihood_seconds"]
            report["lm_eval"] = {
                "version": baseline["version"],
                "seconds": baseline["seconds"],
                "questions_per_second": theirs_qps,
                "loglikelihood_seconds": baseline["loglikelihood_seconds"],
                "loglikelihood_questions_per_second": core_qps,
            }
            report["ratio"] = ours["questions_per_second"] / theirs_qps
            report["ratio_vs_loglikelihood_call"] = ours["questions_per_second"] / core_qps
            report["identical_predictions"] = same
            report["max_abs_diff_normalised_logprob"] = diff
            print(
                f"lm-evaluation-harness {baseline['version']} (HF backend): simple_evaluate "
                f"{baseline['seconds']:.2f} s, {theirs_qps:.1f} q/s; its loglikelihood call alone "
                f"{baseline['loglikelihood_seconds']:.2f} s, {core_qps:.1f} q/s"
            )
            print(
                f"ratio bias-hub / lm_eval: {report['ratio']:.2f}x end to end, "
                f"{report['ratio_vs_loglikelihood_call']:.2f}x against its loglikelihood call alone"
            )
            print(
                f"identical predictions: {same} (max |diff| of choice log-probs renormalised: {diff:.2e})"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
