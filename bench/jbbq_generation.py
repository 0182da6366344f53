"""JBBQ generation throughput: bias-hub against lm-evaluation-harness ``generate_until``, paper preset.

    python -m bench.jbbq_generation --setup-lmeval   # once: lm_eval's own venv (needs PyPI)
    python -m bench.jbbq_generation                  # small Llama, CPU, 1 thread

The paper preset's generation (``presets.paper`` of pipelines/studies/jbbq.yaml: the three
prompts, 4 shots, plain prompts, greedy decoding, its ``max_new_tokens``) over ``--questions``
/ 3 questions, spread evenly over those of the built JBBQ sample that ``bias-hub jbbq evaluate
--preset paper`` evaluates (the shot templates' questions held out), under each of the three
prompts. Both tools get
the same prompt texts, the same model and the same greedy decoding:

- bias-hub: ``HFScorer.score(prompt, rows, shots, "generate")`` for each prompt, the
  pipeline's own path: the text all prompts share tokenized once and its key/value cache
  computed once; batches by token budget, longest first; each reply ending as soon as its
  answer index is complete; finished rows leaving the batch and the next prompts joining;
- lm-evaluation-harness 0.4.13 (HFLM in ``bench/.venv-lmeval``), a local ``generate_until``
  task on the prompt texts with ``max_gen_toks`` = the preset's limit, greedy, and the stop
  sequence a competent user would give it: the most eager of the candidates (``STOPS``) that
  leaves every answer as the preset's reader reads it. It is found from bias-hub's replies (each holds its
  reply up to the character that settles the answer: a stop string found before the answer's
  end would cut it), printed, and the answers are then compared with lm-eval's own replies.

The model has the ``--config`` shape with random weights but for its output layer, fitted here
(``teach_answers``, seconds) so that it answers each question with an index or "わかりません"
by a fixed rule, an index followed by a line break: replies vary (the bench prints how) and a
stop string matters, as with a model that answers.

Timing, phases and the floor as in ``bench.jbbq_throughput`` (``bench/_harness.py``): both
processes hold their model before timing; bias-hub's warm-up is a whole run (its replies
choose the stop string), lm-eval's one on ``--warm-up`` documents; then ``--rounds``
interleaved runs of each. Answers are identical when the parsed index of every question
under every prompt is the same; every bias-hub reply must also be the start of lm-eval's.
"""

from __future__ import annotations

import collections
import json
import sys
import tempfile
import time
import zlib
from pathlib import Path

from bench._harness import (
    FlopCounter,
    PhaseClock,
    describe_load,
    interleave,
    llama_flops,
    phase_table,
    split_phases,
    summary,
    timed,
)
from bench._lmeval import LmEvalProcess, lmeval_python, write_documents, write_task
from bench.jbbq_throughput import (
    PHASES,
    REPO_ROOT,
    describe_model,
    floor,
    floor_lines,
    parse_arguments,
)

# Stop strings a user would try, most eager first; none at all is the fallback.
STOPS = (["\n"], ["\n\n"], [])
# The reply the bench model gives where its answer is no index.
NO_INDEX = "わかりません"

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
  until: {until}
  do_sample: false
  max_gen_toks: {max_new_tokens}
metric_list:
  - metric: exact_match
"""


def paper_questions(dataset: Path, per_prompt: int) -> tuple[list, list[dict], list[dict], object]:
    """``(prompt specs, rows, shots, settings)`` of ``jbbq evaluate --preset paper`` on
    ``dataset``, ``per_prompt`` of its questions evenly spread over them."""
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
    spread = rows[:: max(1, len(rows) // per_prompt)][:per_prompt]  # across the categories
    return [load_prompt(name) for name in settings.prompts], spread, shots, settings


def target_reply(row: dict) -> str:
    """What the bench model answers: 0, 1, 2 or no index, by a hash of the options.

    Arbitrary on purpose: any fixed rule serves a throughput bench, and this one makes the
    replies vary from question to question."""
    value = zlib.crc32((row["ans0"] + row["ans2"]).encode("utf-8")) % 4
    return NO_INDEX if value == 3 else str(value)


def teach_answers(hf, texts: list[str], targets: list[str], steps: int = 300) -> float:
    """Fit the model's output layer (only it: a few hundred steps on a few hundred vectors)
    so that greedy decoding answers ``targets``: the state after each prompt gives the
    target's first token, and after a digit a blank line (two line breaks). The body keeps its random weights.
    Returns the smallest margin (top logit minus the next) over the fitted states."""
    import torch

    model, tokenizer = hf.model, hf.tokenizer
    newline = tokenizer.convert_tokens_to_ids(tokenizer.tokenize("\n"))[0]
    prompts = hf.encode_all(texts, chat=False)
    firsts = [tokenizer(t, add_special_tokens=False)["input_ids"][0] for t in targets]
    answered = [(p, f) for p, f, t in zip(prompts, firsts, targets, strict=True) if t != NO_INDEX]
    # After the digit a line break, and after that a second one: the blank line that ends an
    # answer for the llm-jp-eval reader (the paper preset's).
    rows = (
        [list(p) for p in prompts]
        + [list(p) + [f] for p, f in answered]
        + [list(p) + [f, newline] for p, f in answered]
    )
    wanted = firsts + [newline] * (len(rows) - len(prompts))
    head = model.get_output_embeddings()
    states = []
    # What the output layer reads: its input, at each row's last position.
    hook = head.register_forward_hook(lambda _m, args, _o: states.append(args[0][:, -1].float()))
    try:
        with torch.inference_mode():
            shared, cache = hf._shared_prefix(rows)
            states.clear()  # the prefix's own pass
            for start in range(0, len(rows), 16):
                kwargs = hf._batch_inputs(rows[start : start + 16], shared, cache, 0)
                model(**kwargs, logits_to_keep=1)
    finally:
        hook.remove()
    states, wanted = torch.cat(states).clone(), torch.tensor(wanted)
    if head.weight is model.get_input_embeddings().weight:  # tied (tiny): untie first
        head.weight = torch.nn.Parameter(head.weight.detach().clone())
        model.config.tie_word_embeddings = False
    weight = head.weight.detach().float().clone().requires_grad_(True)
    optimiser = torch.optim.Adam([weight], lr=1e-2)
    for _ in range(steps):
        loss = torch.nn.functional.cross_entropy(states @ weight.T, wanted)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        head.weight.copy_(weight.to(head.weight.dtype))
        logits = states @ weight.T
        top = logits.gather(1, wanted[:, None])[:, 0]
        logits[torch.arange(len(wanted)), wanted] = -float("inf")
        return float((top - logits.max(dim=1).values).min())


def choose_stop(
    replies: list[str], rows: list[dict], reader: str | None
) -> tuple[list[str], dict[str, int]]:
    """The most eager stop list of ``STOPS`` that cuts no reply before its answer ends, and
    per candidate how many answers it would change.

    ``replies`` are bias-hub's, each up to and including the character that settled its
    answer: the first number ends before that character, so a stop string found before the
    number's end would cut the answer, and one not found in the reply starts at or after it.
    """
    from bias_hub.pipelines.common.answer_reading import read_row_reply

    def answer(row: dict, reply: str) -> int:
        return read_row_reply(row, reply, reader).index

    changed = {}
    for stop in STOPS:
        count = 0
        for row, reply in zip(rows, replies, strict=True):
            cut = min((reply.find(s) for s in stop if s in reply), default=-1)
            if cut >= 0 and answer(row, reply[:cut]) != answer(row, reply):
                count += 1
        changed[json.dumps(stop)] = count
    chosen = next(stop for stop in STOPS if changed[json.dumps(stop)] == 0)
    return chosen, changed


class BiasHub:
    """bias-hub's side: the pipeline's generate path for each prompt, phases clocked."""

    def __init__(self, model, tokenizer, prompts, shots, settings, data: Path, args) -> None:
        from bias_hub.pipelines.jbbq.hf_backend import HFModel
        from bias_hub.pipelines.jbbq.scorers import HFScorer

        self.hf = HFModel(model=model, tokenizer=tokenizer, batch_tokens=args.batch_tokens)
        # the preset's reader, as `jbbq evaluate` gives it: it decides when a reply is settled
        self.scorer = HFScorer(
            self.hf,
            chat="no",
            max_new_tokens=settings.max_new_tokens,
            reader=settings.answer_reader,
            progress=False,
        )
        self.prompts, self.shots, self.data = prompts, shots, data
        self.clock, self.call = PhaseClock(), PhaseClock()
        self.clock.wrap(self.hf, "encode_all", "tokenize")
        self.clock.wrap(tokenizer, "batch_decode", "decode")
        self.call.wrap(self.hf, "encode_all", "call")
        self.call.wrap(self.hf, "generate", "call")
        self.clock.time_forward(model)
        self.flops = FlopCounter(model)

    def _run(self, limit: int | None):
        import datasets

        for clock in (self.clock, self.call):
            clock.reset()
        self.flops.reset()
        started = time.perf_counter()
        documents = datasets.load_dataset("json", data_files=str(self.data), split="train")
        by_prompt = collections.defaultdict(list)
        for document in documents if limit is None else documents.select(range(limit)):
            by_prompt[document["prompt_name"]].append(dict(document))
        items = []
        for prompt in self.prompts:
            if by_prompt[prompt.name]:
                items += self.scorer.score(prompt, by_prompt[prompt.name], self.shots, "generate")
        seconds = time.perf_counter() - started
        call = self.call.seconds["call"]
        extra = {
            "call_seconds": call,
            "call_cpu_seconds": self.call.cpu_seconds["call"],
            "flops": self.flops.total,
        }
        return split_phases(self.clock.seconds, call, seconds), items, extra

    def run(self, limit: int | None = None):
        return timed(lambda: self._run(limit))


def needed_flops(config, hf, texts: list[str], replies: list[str]) -> float:
    """The prompts' distinct tokens once (their shared prefix once) and the reply tokens
    bias-hub needed to settle each answer, each projected onto the vocabulary once."""
    from bias_hub.pipelines.jbbq.prefix_tokens import common_prefix_length

    ids = hf.encode_all(texts, chat=False)
    shared = min(common_prefix_length(ids), min(len(p) for p in ids) - 1)
    lengths = [len(hf.tokenizer(r, add_special_tokens=False)["input_ids"]) for r in replies]
    rows = [(0, shared)] + [(shared, len(p) - shared) for p in ids]
    rows += [(len(p), max(0, n - 1)) for p, n in zip(ids, lengths, strict=True)]
    return llama_flops(config, rows, projected=sum(max(1, n) for n in lengths))


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv, __doc__)
    import torch

    from bias_hub.pipelines.common.answer_reading import read_row_reply
    from bias_hub.pipelines.jbbq.random_model import build_tiny_model

    torch.set_num_threads(args.threads)
    python = lmeval_python(args)
    if python is None:
        return 2
    prompts, rows, shots, settings = paper_questions(
        REPO_ROOT / "datasets" / "jbbq", args.questions // 3
    )
    documents = [
        {**row, "prompt_name": prompt.name, "prompt": prompt.plain(row, shots), "label": ""}
        for prompt in prompts
        for row in rows
    ]
    texts = [d["prompt"] for d in documents]
    report: dict = {"settings": vars(args)}
    with tempfile.TemporaryDirectory(prefix="jbbq-generation-") as tmp:
        work = Path(tmp)
        model, tokenizer = build_tiny_model(
            work / "model",
            texts + [NO_INDEX],
            config=args.config,
            seed=args.seed,
            chat_template=False,
            dtype=args.dtype,
            device=args.device,
            save=False,
        )
        data = write_documents(work / "questions.jsonl", documents)
        ours = BiasHub(model, tokenizer, prompts, shots, settings, data, args)
        margin = teach_answers(ours.hf, texts, [target_reply(d) for d in documents])
        print(f"JBBQ generation (paper preset): {describe_model(model, args)}")
        print(
            f"{len(prompts)} prompts x {len(rows)} questions = {len(texts)} replies, "
            f"{settings.shots[0]}-shot, greedy, max_new_tokens {settings.max_new_tokens}; output "
            f"layer fitted to answer an index or {NO_INDEX} (smallest margin {margin:.1f}); "
            f"{describe_load()}"
        )
        print(f"bias-hub: HFScorer.score(..., 'generate'), token budget {args.batch_tokens}")
        warm = ours.run()  # whole: its replies choose lm-eval's stop string
        print(f"  warm-up bias-hub (all {len(texts)} replies): {warm.seconds:.2f} s")
        replies = [item["reply"] for item in warm.output]
        # each reply's question, in the order of the replies (prompt by prompt)
        item_rows = [row for _ in prompts for row in rows]
        stop, changed = choose_stop(replies, item_rows, settings.answer_reader)
        answers = collections.Counter(item["prediction"] for item in warm.output)
        print(
            "  answers: "
            + ", ".join(f"{k}: {answers[k]}" for k in (0, 1, 2, -1))
            + f" (-1 = no index); {len(set(replies))} distinct replies"
        )
        print(
            f"lm-eval stop configuration: until: {json.dumps(stop)} (plus its end-of-sequence "
            f"token); answers each candidate would change: "
            + ", ".join(f"until {k}: {v}" for k, v in changed.items())
        )
        theirs = None
        if not args.skip_lmeval:
            model.save_pretrained(work / "model")
            tokenizer.save_pretrained(work / "model")
            task = _TASK_YAML.replace("{until}", json.dumps(stop)).replace(
                "{max_new_tokens}", str(settings.max_new_tokens)
            )
            task_dir = write_task(work, task, data)
            print(
                f"lm-eval: HFLM(pretrained=<model>, batch_size={args.lmeval_batch_size}, "
                f"device={args.device}, dtype={args.dtype}), simple_evaluate(log_samples=True, "
                f"bootstrap_iters=0); task: generate_until, until {json.dumps(stop)}, "
                f"do_sample false, max_gen_toks {settings.max_new_tokens}"
            )
            theirs = LmEvalProcess(python, work / "model", task_dir, "generate_until", args, work)
        try:
            contestants = {"bias-hub": ours.run}
            warm_up = {}
            if theirs is not None:
                contestants["lm-eval"] = theirs.run
                warm_up["lm-eval"] = lambda: theirs.run(args.warm_up)
            floor_rate = floor(model, args)
            runs = interleave(contestants, args.rounds, warm_up)
            floor_rate = max(floor_rate, floor(model, args))
        finally:
            if theirs is not None:
                theirs.close()
        needed = needed_flops(model.config, ours.hf, texts, replies)
    fastest = {name: min(r, key=lambda run: run.seconds) for name, r in runs.items()}
    calls = {
        name: summary(r, key=lambda run: run.extra["call_seconds"]) for name, r in runs.items()
    }
    whole = {name: summary(r) for name, r in runs.items()}
    key = "call_seconds" if args.device.startswith("cuda") else "call_cpu_seconds"
    effort = {name: summary(r, key=lambda run: run.extra[key]) for name, r in runs.items()}
    report.update(
        stop=stop,
        stop_candidates=changed,
        answers={str(k): v for k, v in sorted(answers.items())},
        bias_hub=[run.record() for run in runs["bias-hub"]],
        calls=calls,
        end_to_end=whole,
        call_effort=effort,
        needed_gflop=needed / 1e9,
        floor_gflop_per_s=floor_rate / 1e9,
    )
    print(f"\nresults: min and median of {args.rounds} interleaved runs each; {describe_load()}")
    for name in runs:
        print(f"  {name}: ran at load {whole[name]['load'][0]}-{whole[name]['load'][1]}")
    lines = floor_lines(
        needed, floor_rate, {"bias-hub call": effort["bias-hub"]["min"]}, args.device
    )
    same = True
    if theirs is not None:
        from bench.jbbq_throughput import _ratio_line

        print(
            _ratio_line(
                "generation call (texts ready, model loaded)", calls["bias-hub"], calls["lm-eval"]
            )
        )
        print(
            _ratio_line(
                "end to end (questions file -> answers)", whole["bias-hub"], whole["lm-eval"]
            )
        )
        lines += floor_lines(
            needed, floor_rate, {"lm-eval call": effort["lm-eval"]["min"]}, args.device
        )[1:]
        ours_items = fastest["bias-hub"].output
        counts, starts = [], []
        for run in runs["lm-eval"]:
            counts.append(
                sum(
                    read_row_reply(row, reply, settings.answer_reader).index == item["prediction"]
                    for row, reply, item in zip(item_rows, run.output, ours_items, strict=True)
                )
            )
            starts.append(
                sum(
                    reply.startswith(item["reply"]) or item["reply"].startswith(reply)
                    for reply, item in zip(run.output, ours_items, strict=True)
                )
            )
        same = min(counts) == len(texts)
        report.update(
            ratio_call_min=calls["lm-eval"]["min"] / calls["bias-hub"]["min"],
            ratio_call_median=calls["lm-eval"]["median"] / calls["bias-hub"]["median"],
            ratio_end_to_end_min=whole["lm-eval"]["min"] / whole["bias-hub"]["min"],
            ratio_end_to_end_median=whole["lm-eval"]["median"] / whole["bias-hub"]["median"],
            identical_answers=same,
            lm_eval=[run.record() for run in runs["lm-eval"]],
            lm_eval_version=fastest["lm-eval"].extra["version"],
        )
    print("phases of the fastest run (seconds):")
    print(phase_table(fastest, PHASES))
    print("the floor:")
    print("\n".join(lines))
    if theirs is not None:
        print(
            f"identical answers: {same} ({min(counts)} of {len(texts)} parsed indices equal in "
            f"every lm-eval run; {min(starts)} of {len(texts)} replies agree up to the shorter, "
            f"lm-eval's cut at its stop string)"
        )
    if args.json:
        Path(args.json).write_text(
            json.dumps(report, indent=2, default=str) + "\n", encoding="utf-8"
        )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
