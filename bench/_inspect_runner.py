"""Run inside bench/.venv-inspect by ``bench.inspect_bbq`` (imports Inspect AI, not bias-hub).

    python _inspect_runner.py TASKS_DIR PLAN.json OUT_DIR

``PLAN.json``: per BBQ question (``category/example_id``) the planted reply and the index of
the answer it states (null: none). Inspect's ``mockllm`` model answers each prompt with its
question's planted reply; two runs on the same questions:

1. the exported ``tasks.py@bbq`` (bias-hub's scorer, ``bbq_bias`` metrics);
2. inspect_evals 0.26.0's BBQ solver and scorer (``multiple_choice`` + ``choice``) on samples
   made by its own ``record_to_sample`` from the same questions, the mock answering
   ``ANSWER: <letter of the planted answer>`` (no letter where none is planted).

Writes ``OUT_DIR/summary.json``: the log file of run 1, its metrics, and run 2's accuracy.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from _harness import read_jsonl  # beside this script, which runs in Inspect's venv


def main(tasks_dir: str, plan_path: str, out_dir: str) -> None:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import choice
    from inspect_ai.solver import multiple_choice
    from inspect_evals.bbq.bbq import record_to_sample

    plan = json.loads(Path(plan_path).read_text(encoding="utf-8"))
    rows = read_jsonl(Path(tasks_dir) / "data" / "bbq.jsonl")

    def key(row: dict) -> str:
        return f"{row['category']}/{row['example_id']}"

    def find(text: str) -> dict:
        found = [r for r in rows if r["context"] in text and r["question"] in text]
        # the longest context wins where one question's context starts another's
        return max(found, key=lambda r: len(r["context"]) + len(r["question"]))

    def output(reply: str) -> ModelOutput:
        # with its usage given, mockllm counts no tokens (that would fetch tiktoken's tables)
        out = ModelOutput.from_content(model="mockllm", content=reply)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return out

    def ours(messages, tools, tool_choice, config):
        return output(plan[key(find(messages[-1].text))]["reply"])

    def theirs(messages, tools, tool_choice, config):
        index = plan[key(find(messages[-1].text))]["index"]
        return output("ANSWER: " + ("ABC"[index] if index is not None else ""))

    def metrics(log, failed: str) -> dict:
        """A finished run's metrics by name; ``failed``: what the error says when it failed."""
        if log.status != "success":
            raise RuntimeError(f"{failed}: {log.error.traceback if log.error else log.status}")
        return {name: m.value for score in log.results.scores for name, m in score.metrics.items()}

    out = Path(out_dir)
    (log,) = eval(
        f"{tasks_dir}/tasks.py@bbq",
        model=get_model("mockllm/model", custom_outputs=ours),
        log_dir=str(out / "ours"),
        log_format="json",  # .eval logs are zstd zips, which Python 3.11's zipfile cannot open
        display="none",
    )
    ours_metrics = metrics(log, "the exported task failed in Inspect")
    for row in rows:  # inspect_evals' record_to_sample wants BBQ's answer_info: a dict of pairs
        row["answer_info"] = {
            f"ans{i}": [a["text"], a["group"]] for i, a in enumerate(row["answer_info"])
        }
        row.setdefault("additional_metadata", {})  # only carried into the sample's metadata
    samples = [record_to_sample(row).model_copy(update={"id": key(row)}) for row in rows]
    (their_log,) = eval(
        Task(dataset=MemoryDataset(samples), solver=[multiple_choice()], scorer=choice()),
        model=get_model("mockllm/model", custom_outputs=theirs),
        log_dir=str(out / "inspect_evals"),
        display="none",
    )
    summary = {
        "log": log.location,
        "metrics": ours_metrics,
        "inspect_evals": metrics(their_log, "inspect_evals' BBQ failed"),
        "samples": len(rows),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main(*sys.argv[1:4])
