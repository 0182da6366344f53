"""JBBQ generation throughput: bias-hub vs lm-evaluation-harness ``generate_until``, the paper preset.

    python -m bench.jbbq_generation --setup-lmeval   # once: lm_eval's own venv (needs PyPI)
    python -m bench.jbbq_generation                  # tiny model trained here, CPU, 1 thread

The paper preset's generation (``presets.paper`` of pipelines/studies/jbbq.yaml: the
three prompts, 4 shots, plain prompts, greedy decoding, its ``max_new_tokens``) over
the questions of the built JBBQ sample (``python -m bias_hub build all``), chosen
exactly as ``bias-hub jbbq evaluate --preset paper`` chooses them (the shot templates'
questions held out). Both tools get the same prompt texts, the same model (saved once
to a temporary folder) and the same batch size:

- bias-hub: ``HFScorer.score(prompt, rows, shots, "generate")`` for each prompt, the
  pipeline's own path: rendering; tokenizing, the text all prompts share read once;
  prompts taken longest first; the few-shot prefix computed once and its key/value cache
  reused; each reply ending as soon as its answer index is complete; finished rows
  leaving the batch and the next prompts joining the rows still going; reading the replies.
- lm-evaluation-harness 0.4.13 through its HF backend (``bench/.venv-lmeval``, see
  ``bench.jbbq_throughput``), a local ``generate_until`` task on the prompt texts with
  ``max_gen_toks`` = the preset's limit, greedy, no stop string but the model's end of
  sequence: the replies the paper's setting reads, run to the token limit.

Timings exclude model loading and include everything else each tool does to turn
prompt texts into replies; each tool runs ``--repeats`` times and its fastest run counts
(on a shared machine, the run least slowed by others). The model is a tiny random Llama trained here for a few
hundred steps so that its replies vary (see ``train_varied_replies``); the script says
how varied they were. Answers are identical when the parsed index of every question
under every prompt is the same; each bias-hub reply is also checked to be the start of
lm-eval's reply for that question.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

from bench.jbbq_throughput import REPO_ROOT, _sync, add_lmeval_arguments, lmeval_python

_TASK_YAML = """\
task: jbbq_bench
dataset_path: json
dataset_kwargs:
  data_files:
    test: {data}
test_split: test
output_type: generate_until
doc_to_text: prompt
doc_to_target: label
generation_kwargs:
  until: []
  do_sample: false
  max_gen_toks: {max_new_tokens}
metric_list:
  - metric: exact_match
"""
# The reply a trained question gets when its target is no index (parsed as unparsable).
NO_INDEX = "わかりません"


def paper_questions(dataset: Path) -> tuple[list, list[dict], list[dict], object]:
    """``(prompt specs, rows, shots, settings)`` of ``jbbq evaluate --preset paper`` on ``dataset``."""
    from bias_hub.pipelines.jbbq.prompting import load_prompt
    from bias_hub.pipelines.jbbq.run import load_questions
    from bias_hub.pipelines.jbbq.settings import with_preset

    if not (dataset / "README.md").is_file():
        raise SystemExit(
            f"{dataset}: no built JBBQ sample; run `python -m bias_hub build all` first"
        )
    settings = with_preset("paper")
    if settings.chat != "no" or settings.scoring != "generate" or len(settings.shots) != 1:
        raise SystemExit(
            f"presets.paper changed shape ({settings.chat=}, {settings.scoring=}, {settings.shots=})"
        )
    rows, shots, _ = load_questions(dataset, settings)
    return [load_prompt(name) for name in settings.prompts], rows, shots, settings


def target_reply(row: dict) -> str:
    """What the bench model is trained to answer: 0, 1, 2 or no index, by a hash of the options.

    Arbitrary on purpose: the gold labels need reasoning a 2-layer model cannot learn in
    a few hundred steps (it answers one index for everything), while the options sit just
    before the reply, where it learns to look.
    """
    value = zlib.crc32((row["ans0"] + row["ans2"]).encode("utf-8")) % 4
    return NO_INDEX if value == 3 else str(value)


def train_varied_replies(
    model,
    tokenizer,
    texts: list[str],
    targets: list[str],
    steps: int,
    seed: int,
    batch_size: int = 8,
    learning_rate: float = 3e-3,
) -> float:
    """Train ``model`` in place: next-token loss on ``text + target + "\\n\\n"`` plus the
    cross-entropy of the target's first token; returns the seconds it took."""
    import torch
    import torch.nn.functional as F

    started = time.perf_counter()
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    lengths = [len(tokenizer(text)["input_ids"]) for text in texts]
    model.train()
    padding_side = tokenizer.padding_side
    tokenizer.padding_side = "right"
    try:
        for _ in range(steps):
            chosen = torch.randint(len(texts), (batch_size,), generator=generator).tolist()
            batch = tokenizer(
                [texts[i] + targets[i] + "\n\n" for i in chosen], return_tensors="pt", padding=True
            )
            logits = model(**batch).logits[:, :-1]
            following = batch["input_ids"][:, 1:].masked_fill(
                batch["attention_mask"][:, 1:] == 0, -100
            )
            language = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), following.reshape(-1))
            at = torch.tensor([lengths[i] for i in chosen])
            rows = torch.arange(batch_size)
            answer = F.cross_entropy(logits[rows, at - 1], batch["input_ids"][rows, at])
            (language + answer).backward()
            optimiser.step()
            optimiser.zero_grad()
    finally:
        tokenizer.padding_side = padding_side
        model.eval()
    return time.perf_counter() - started


def run_ours(
    model, tokenizer, prompts, rows, shots, settings, batch_size: int, repeats: int = 1
) -> tuple[float, float, list[list[dict]]]:
    """Wall-clock and CPU seconds (the fastest of ``repeats`` runs) and scored items (per
    prompt, per question) of the pipeline's generate path."""
    from bias_hub.pipelines.jbbq.hf_backend import HFModel
    from bias_hub.pipelines.jbbq.scorers import HFScorer

    hf = HFModel(model=model, tokenizer=tokenizer, batch_size=batch_size)
    scorer = HFScorer(
        hf, chat=settings.chat, max_new_tokens=settings.max_new_tokens, progress=False
    )
    scorer.score(prompts[0], rows[:batch_size], shots, "generate")  # warm-up
    times, cpu_times = [], []
    for _ in range(repeats):
        _sync(model)
        started, cpu_started = time.perf_counter(), time.process_time()
        scored = [scorer.score(prompt, rows, shots, "generate") for prompt in prompts]
        _sync(model)
        times.append(time.perf_counter() - started)
        cpu_times.append(time.process_time() - cpu_started)
    return min(times), min(cpu_times), scored


def run_lmeval(
    python: Path, model_dir: Path, texts: list[str], max_new_tokens: int, args, work: Path
) -> dict:
    data = work / "questions.jsonl"
    with data.open("w", encoding="utf-8") as handle:
        for text in texts:
            handle.write(json.dumps({"prompt": text, "label": ""}, ensure_ascii=False) + "\n")
    task_dir = work / "task"
    task_dir.mkdir()
    task = _TASK_YAML.format(data=json.dumps(str(data)), max_new_tokens=max_new_tokens)
    (task_dir / "jbbq_bench.yaml").write_text(task, encoding="utf-8")
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
        "--request",
        "generate_until",
        "--repeats",
        str(args.repeats),
    ]
    env = dict(
        os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false"
    )
    subprocess.run(command, check=True, env=env)
    return json.loads(out.read_text(encoding="utf-8"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--dataset", default=str(REPO_ROOT / "datasets" / "jbbq"), help="built JBBQ folder"
    )
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--config", default="tiny", help="model shape: tiny or llama-7b")
    parser.add_argument(
        "--train-steps", type=int, default=300, help="training steps that make replies vary"
    )
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (both tools)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--repeats", type=int, default=3, help="timed runs of each tool; the fastest counts"
    )
    add_lmeval_arguments(parser)
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    args = parser.parse_args(argv)

    import torch

    from bias_hub.pipelines.common.answer_reading import read_row_reply
    from bias_hub.pipelines.jbbq.random_model import build_tiny_model

    torch.set_num_threads(args.threads)
    python = lmeval_python(args)
    if python is None:
        return 2

    prompts, rows, shots, settings = paper_questions(Path(args.dataset))
    texts = [prompt.plain(row, shots) for prompt in prompts for row in rows]
    with tempfile.TemporaryDirectory(prefix="jbbq-generation-") as tmp:
        work = Path(tmp)
        model_dir = work / "model"
        model, tokenizer = build_tiny_model(
            model_dir,
            texts + [NO_INDEX],
            config=args.config,
            seed=args.seed,
            chat_template=False,
            dtype=args.dtype,
            device=args.device,
            save=False,
        )
        targets = [target_reply(row) for _ in prompts for row in rows]
        trained = train_varied_replies(
            model, tokenizer, texts, targets, args.train_steps, args.seed
        )
        if not args.skip_lmeval:
            model.save_pretrained(model_dir)
            tokenizer.save_pretrained(model_dir)
        n_tokens = [len(tokenizer(t)["input_ids"]) for t in texts]
        print(
            f"paper preset: {len(prompts)} prompts x {len(rows)} questions = {len(texts)} replies, "
            f"{settings.shots[0]}-shot, greedy, max_new_tokens {settings.max_new_tokens}; prompt length "
            f"{min(n_tokens)}-{max(n_tokens)} tokens; model {args.config} on {args.device} ({args.dtype}), "
            f"trained {args.train_steps} steps ({trained:.0f} s); batch size {args.batch_size}, "
            f"{args.threads} CPU thread(s); fastest of {args.repeats} runs each"
        )
        ours_s, ours_cpu, scored = run_ours(
            model, tokenizer, prompts, rows, shots, settings, args.batch_size, args.repeats
        )
        ours_items = [item for per_prompt in scored for item in per_prompt]
        ours = {
            "seconds": ours_s,
            "cpu_seconds": ours_cpu,
            "questions_per_second": len(texts) / ours_s,
        }
        answers = collections.Counter(item["prediction"] for item in ours_items)
        print(
            f"bias-hub generate: {ours_s:.2f} s, {ours['questions_per_second']:.1f} q/s (CPU time {ours_cpu:.2f} s)"
        )
        print(
            "answers: "
            + ", ".join(f"{k}: {answers[k]}" for k in (0, 1, 2, -1))
            + f" (-1 = no index); {len({item['reply'] for item in ours_items})} distinct replies"
        )
        report: dict = {
            "settings": vars(args),
            "n_replies": len(texts),
            "bias_hub": ours,
            "answers": {str(k): v for k, v in sorted(answers.items())},
        }
        if not args.skip_lmeval:
            del model  # free the device for lm_eval's copy
            if args.device.startswith("cuda"):
                torch.cuda.empty_cache()
            baseline = run_lmeval(python, model_dir, texts, settings.max_new_tokens, args, work)
            theirs = baseline["replies"]
            # lm-eval's replies read by the reader that read ours (the preset's)
            item_rows = [row for _ in prompts for row in rows]
            same = [
                read_row_reply(row, reply, settings.answer_reader).index == item["prediction"]
                for row, reply, item in zip(item_rows, theirs, ours_items, strict=True)
            ]
            starts = sum(
                reply.startswith(item["reply"])
                for reply, item in zip(theirs, ours_items, strict=True)
            )
            whole_qps = len(texts) / baseline["seconds"]
            core_qps = len(texts) / baseline["generate_until_seconds"]
            report["lm_eval"] = {
                "version": baseline["version"],
                "seconds": baseline["seconds"],
                "cpu_seconds": baseline["cpu_seconds"],
                "questions_per_second": whole_qps,
                "generate_until_seconds": baseline["generate_until_seconds"],
                "generate_until_questions_per_second": core_qps,
            }
            report["ratio_vs_generate_until"] = ours["questions_per_second"] / core_qps
            report["ratio_end_to_end"] = ours["questions_per_second"] / whole_qps
            report["ratio_cpu_time"] = baseline["cpu_seconds"] / ours_cpu
            report["identical_answers"] = all(same)
            report["replies_that_start_lm_eval_reply"] = starts
            print(
                f"lm-evaluation-harness {baseline['version']} (HF backend): simple_evaluate "
                f"{baseline['seconds']:.2f} s, {whole_qps:.1f} q/s (CPU time {baseline['cpu_seconds']:.2f} s); "
                f"its generate_until call alone "
                f"{baseline['generate_until_seconds']:.2f} s, {core_qps:.1f} q/s"
            )
            print(
                f"ratio bias-hub / lm_eval: {report['ratio_end_to_end']:.2f}x end to end, "
                f"{report['ratio_vs_generate_until']:.2f}x against its generate_until call alone, "
                f"{report['ratio_cpu_time']:.2f}x in CPU time end to end"
            )
            print(
                f"identical answers: {all(same)} ({sum(same)} of {len(same)} parsed indices equal; "
                f"{starts} of {len(same)} bias-hub replies are the start of lm_eval's)"
            )
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
