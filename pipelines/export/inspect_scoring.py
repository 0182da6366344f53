"""The scoring half of bias-hub's Inspect AI tasks: the installed package's task module imports
it, and ``bias-hub export inspect`` writes it as ``scoring.py`` with the answer reader inlined at
the marked import. It needs no Inspect, so a test can run it alone.

A question's reply is read by the question's own ``answer_reader`` (``read_row_reply``); the
score of a sample keeps the columns ``bbq_bias`` needs, and ``bbq_bias_scores`` runs bias-hub's
``bbq_bias`` module (copied beside this file as ``bbq_bias/``) on the samples' scores. An unread
reply counts as -1 here, whatever the reader (``bias-hub score --from-inspect`` reads the log
again, and leaves unread replies out under the ``bbq`` reader, as BBQ's analysis does).
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from bias_hub.pipelines.common.answer_reading import read_row_reply  # bias-hub export: inline

HERE = Path(__file__).resolve().parent
# The scores the tasks report, under bbq_bias's own names (the one vocabulary).
SCORES = (
    "accuracy",
    "accuracy_ambiguous",
    "accuracy_disambiguated",
    "bias_score_disambiguated",
    "bias_score_ambiguous",
    "unparsable_rate",
)
# The question columns a score keeps for bbq_bias.
_KEPT = ("category", "context_condition", "label", "unknown_label", "stereotyped_label")


def questions(name: str) -> list[dict]:
    """The questions of ``data/<name>.jsonl`` beside this file."""
    path = HERE / "data" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def variant(name: str) -> dict:
    """A JBBQ prompt variant of ``prompts.json`` (a prompt at a few-shot count): the opening and
    examples every question shares (``prefix``), and the question's layout (``question``:
    ``["text", literal]`` and ``["field", name]`` pieces)."""
    variants = json.loads((HERE / "prompts.json").read_text(encoding="utf-8"))
    if name not in variants:
        raise ValueError(f"no prompt variant {name!r}; this folder has {', '.join(variants)}")
    return variants[name]


def prompt_text(question: dict, shape: dict) -> str:
    """The plain prompt of ``question`` (what ``bias-hub jbbq evaluate --chat no`` sends)."""
    pieces = [text if kind == "text" else str(question[text]) for kind, text in shape["question"]]
    return shape["prefix"] + "".join(pieces)


def score_item(question: dict, reply: str) -> dict:
    """What a sample's score keeps: the index read from ``reply``, the rule, and the columns."""
    reading = read_row_reply(question, reply)
    return {
        "prediction": reading.index,
        "rule": reading.rule,
        **{key: question[key] for key in _KEPT},
        "template": str(question["question_index"]),
    }


@functools.lru_cache(maxsize=1)
def _metric():
    import evaluate

    # An exported folder holds its copy of the module; the installed package its metrics/.
    beside = HERE / "bbq_bias"
    return evaluate.load(
        str(beside if beside.is_dir() else HERE.parents[1] / "metrics" / "bbq_bias")
    )


def bbq_bias_scores(items: list[dict]) -> dict:
    """``bbq_bias`` on the kept columns of every sample."""
    return _metric().compute(
        predictions=[int(item["prediction"]) for item in items],
        references=[int(item["label"]) for item in items],
        unknown_labels=[int(item["unknown_label"]) for item in items],
        stereotyped_labels=[int(item["stereotyped_label"]) for item in items],
        context_conditions=[str(item["context_condition"]) for item in items],
        categories=[str(item["category"]) for item in items],
    )
