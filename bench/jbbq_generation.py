"""JBBQ generation throughput: bias-hub against lm-evaluation-harness ``generate_until``, paper preset.

    python -m bench.jbbq_generation --setup-lmeval   # once: lm_eval's own venv (needs PyPI)
    python -m bench.jbbq_generation                  # small Llama, CPU, 1 thread

The paper preset's generation (three prompts, 4 shots, plain prompts, greedy; 8 new tokens,
not its 1) over ``--questions`` / 3 of the questions ``jbbq evaluate --preset paper``
evaluates, under each prompt, with the same prompt texts, model and decoding in both tools:

- bias-hub: ``HFScorer.score(prompt, rows, shots, "generate")``, the pipeline's own path;
- lm-evaluation-harness 0.4.13 (HFLM in ``bench/.venv-lmeval``), a local ``generate_until``
  task with the stop sequence a competent user would give it: the most eager of ``STOPS``
  that cuts none of bias-hub's replies (each ends at the character that settles its answer)
  before its answer ends.

The model has the ``--config`` shape with random weights but for the output rows the replies
use, fitted (``taught_model.teach_answers``, least squares) so that it answers each question
with an index or "わかりません" by a fixed rule (``target_reply``), then a blank line: replies
vary and a stop string matters, as with a model that answers. The bench gives no ratio unless
bias-hub's replies read exactly as taught by the preset's reader: two unread replies are equal
answers too, and say nothing about reading the same ones. (At ``--config tiny`` a linear output
layer cannot teach 96 questions their answers; 48 fit.)

Timing, phases and the floor as in ``bench.jbbq_throughput``; bias-hub's warm-up is a whole
run (its replies choose the stop string). Answers are identical when every parsed index is the
same in every run and every run of both tools reads as taught.
"""

from __future__ import annotations

import collections
import json
import sys
import tempfile
import zlib
from pathlib import Path

from bench._harness import (
    Run,
    describe_load,
    llama_flops,
    save_json,
)
from bench._lmeval import LmEvalProcess, lmeval_python, write_task
from bench.jbbq_throughput import (
    REPO_ROOT,
    Clocked,
    compare,
    describe_model,
    parse_arguments,
    race_tools,
    tiny_model,
)
from bias_hub.builders.shared.files import write_jsonl
from bias_hub.pipelines.common.answer_reading import UNPARSABLE
from bias_hub.pipelines.jbbq.taught_model import (
    NO_INDEX,
    taught_index,
    taught_reply,
    teach_answers,
)

# Stop strings a user would try, most eager first; none at all is the fallback.
STOPS = (["\n"], ["\n\n"], [])


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
    # 8 new tokens, not the preset's 1: one token would leave the loop this bench times unused.
    settings = with_preset("paper", max_new_tokens=8)
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

    def changes(stop: list[str], row: dict, reply: str) -> bool:
        cut = min((reply.find(s) for s in stop if s in reply), default=-1)
        return cut >= 0 and answer(row, reply[:cut]) != answer(row, reply)

    pairs = list(zip(rows, replies, strict=True))
    changed = {json.dumps(stop): sum(changes(stop, *pair) for pair in pairs) for stop in STOPS}
    chosen = next(stop for stop in STOPS if changed[json.dumps(stop)] == 0)
    return chosen, changed


def tally(rows: list[dict], replies: list[str], targets: list[str], reader: str) -> dict:
    """How ``reader`` reads ``replies``: how many it reads as an index, how many it leaves
    unread, and how many it reads as taught (the target's index; unread for ``NO_INDEX``)."""
    from bias_hub.pipelines.common.answer_reading import read_row_reply

    indices = [
        read_row_reply(row, reply, reader).index for row, reply in zip(rows, replies, strict=True)
    ]
    read = sum(index != UNPARSABLE for index in indices)
    return {
        "read": read,
        "unread": len(indices) - read,
        "as taught": sum(
            index == taught_index(t) for index, t in zip(indices, targets, strict=True)
        ),
    }


def describe_tally(counts: dict, targets: list[str], name: str = "bias-hub") -> str:
    intended = sum(t != NO_INDEX for t in targets)
    return (
        f"{name}: {counts['read']} replies read, {counts['unread']} unread (taught: {intended} "
        f"indices, {len(targets) - intended} {NO_INDEX}); {counts['as taught']} of "
        f"{len(targets)} read as taught"
    )


class BiasHub(Clocked):
    """The pipeline's generate path, for each prompt."""

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
        self._count(model)
        self.clock.wrap(self.hf, "encode_all", "tokenize")
        self.clock.wrap(tokenizer, "batch_decode", "decode")
        self.call.wrap(self.hf, "encode_all", "call")
        self.call.wrap(self.hf, "generate", "call")

    def _work(self, limit: int | None) -> tuple[object, dict]:
        import datasets

        documents = datasets.load_dataset("json", data_files=str(self.data), split="train")
        by_prompt = collections.defaultdict(list)
        for document in documents if limit is None else documents.select(range(limit)):
            by_prompt[document["prompt_name"]].append(dict(document))
        items = []
        for prompt in self.prompts:
            if by_prompt[prompt.name]:
                items += self.scorer.score(prompt, by_prompt[prompt.name], self.shots, "generate")
        return items, {}


def needed_flops(config, hf, texts: list[str], groups: list[str], replies: list[str]) -> float:
    """The prompts' distinct tokens once (the prefix each group's prompts share once: one
    group per prompt, the unit ``HFScorer.score`` shares a prefix over) and the reply tokens
    bias-hub needed to settle each answer, each projected onto the vocabulary once."""
    from bias_hub.pipelines.jbbq.prefix_tokens import common_prefix_length

    rows = []
    for group in dict.fromkeys(groups):
        ids = hf.encode_all([t for t, g in zip(texts, groups, strict=True) if g == group], False)
        shared = min(common_prefix_length(ids), min(len(p) for p in ids) - 1)
        rows += [(0, shared)] + [(shared, len(p) - shared) for p in ids]
    lengths = [len(hf.tokenizer(r, add_special_tokens=False)["input_ids"]) for r in replies]
    contexts = [context + new for context, new in rows if context]  # each prompt's length
    rows += [(length, max(0, n - 1)) for length, n in zip(contexts, lengths, strict=True)]
    return llama_flops(config, rows, projected=sum(max(1, n) for n in lengths))


def main(argv: list[str] | None = None) -> int:
    args = parse_arguments(argv, __doc__)
    import torch

    from bias_hub.pipelines.common.answer_reading import read_row_reply

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
        model, tokenizer = tiny_model(args, work / "model", texts + [NO_INDEX], save=False)
        data = write_jsonl(work / "questions.jsonl", documents)
        ours = BiasHub(model, tokenizer, prompts, shots, settings, data, args)
        targets = [target_reply(d) for d in documents]
        groups = [d["prompt_name"] for d in documents]
        teaching = teach_answers(
            ours.hf,
            texts,
            [taught_reply(t) for t in targets],
            groups,
        )
        print(f"JBBQ generation (paper preset): {describe_model(model, args)}")
        print(
            f"{len(prompts)} prompts x {len(rows)} questions = {len(texts)} replies, "
            f"{settings.shots[0]}-shot, greedy, max_new_tokens {settings.max_new_tokens}, "
            f"read by the {settings.answer_reader} reader; {describe_load()}"
        )
        print(
            f"output layer: the rows of the taught replies' tokens fitted (least squares) so that "
            f"each question is answered with an index or {NO_INDEX}, then a blank line: "
            f"{teaching.states} states, {teaching.wrong} wrong, smallest margin "
            f"{teaching.margin:.1f} logits"
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
        read = tally(item_rows, replies, targets, settings.answer_reader)
        print(f"  {describe_tally(read, targets)}")
        if read["as taught"] < len(texts):
            print(
                f"no ratio: bias-hub's replies are not the taught ones ({read['as taught']} of "
                f"{len(texts)}), so identical answers would not show that both tools read the "
                f"same answers; the fitted model is broken",
                file=sys.stderr,
            )
            return 1
        print(
            f"lm-eval stop configuration: until: {json.dumps(stop)} (plus its end-of-sequence "
            f"token); answers each candidate would change: "
            + ", ".join(f"until {k}: {v}" for k, v in changed.items())
        )
        theirs = None
        if not args.skip_lmeval:
            model.save_pretrained(work / "model")
            tokenizer.save_pretrained(work / "model")
            task_dir = write_task(
                work,
                data,
                output_type="generate_until",
                doc_to_target="label",
                generation_kwargs={
                    "until": stop,
                    "do_sample": False,
                    "max_gen_toks": settings.max_new_tokens,
                },
                metric_list=[{"metric": "exact_match"}],
            )
            print(
                f"lm-eval: HFLM(pretrained=<model>, batch_size={args.lmeval_batch_size}, "
                f"device={args.device}, dtype={args.dtype}), simple_evaluate(log_samples=True, "
                f"bootstrap_iters=0); task: generate_until, until {json.dumps(stop)}, "
                f"do_sample false, max_gen_toks {settings.max_new_tokens}"
            )
            theirs = LmEvalProcess(python, work / "model", task_dir, "generate_until", args, work)
        # bias-hub's warm-up was its whole run above
        runs, floor_rate = race_tools(ours, theirs, model, args, warm_ours=False)
        needed = needed_flops(model.config, ours.hf, texts, groups, replies)
    report.update(
        stop=stop,
        stop_candidates=changed,
        answers={str(k): v for k, v in sorted(answers.items())},
    )
    fastest, figures = compare(
        runs,
        args,
        needed,
        floor_rate,
        "generation call (texts ready, model loaded)",
        "end to end (questions file -> answers)",
    )
    report.update(figures)

    # The run of each tool whose replies read least as taught, by the preset's reader.
    def readings(run: Run) -> dict:
        replies = [item["reply"] if isinstance(item, dict) else item for item in run.output]
        return tally(item_rows, replies, targets, settings.answer_reader)

    worst = {
        name: min(map(readings, r), key=lambda counts: counts["as taught"])
        for name, r in runs.items()
    }
    report["replies"] = worst
    same = True
    if theirs is not None:
        ours_items = fastest["bias-hub"].output
        equal, starts = [], []
        for run in runs["lm-eval"]:
            equal.append(
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
        # Equal answers count only where both tools read what the model was taught: two
        # unread replies are equal too, and say nothing about reading the same answer.
        same = min(equal) == len(texts) and all(
            worst[name]["as taught"] == len(texts) for name in worst
        )
        report["identical_answers"] = same
    print(f"replies the {settings.answer_reader} reader reads (the least taught-like run of each):")
    for name, readings in worst.items():
        print(f"  {describe_tally(readings, targets, name)}")
    if theirs is not None:
        print(
            f"identical answers: {same} ({min(equal)} of {len(texts)} parsed indices equal in "
            f"every lm-eval run; {min(starts)} of {len(texts)} replies agree up to the shorter, "
            f"lm-eval's cut at its stop string; "
            + ", ".join(f"{n} {c['as taught']}" for n, c in worst.items())
            + f" of {len(texts)} read as taught)"
        )
    save_json(args.json, report, default=str)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
