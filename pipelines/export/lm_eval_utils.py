"""lm-evaluation-harness functions of the tasks ``bias-hub export lm-eval`` writes (its ``utils.py``).

Every evaluated question yields one item ``(category, context_condition, prediction, label,
unknown_label, stereotyped_label, question_index)``; the aggregations run bias-hub's own
``bbq_bias`` metric module (copied beside this file as ``bbq_bias/``) on the items, so
lm-eval's results table shows bias-hub's scores under the module's own names: ``accuracy``,
``accuracy_ambiguous``, ``accuracy_disambiguated``, ``bias_score_disambiguated``,
``bias_score_ambiguous`` and ``unparsable_rate``, overall and (suffixed ``_<category>``) per
category.

A multiple-choice question's prediction is the choice of highest log-likelihood (lm-eval's
``acc``); a generated reply is read by the answer reader named in its question
(``answer_reader``, written there by the export), the reader of ``bias-hub jbbq evaluate`` and
``bias-hub score``. An unread reply counts as -1 here, whatever the reader. This file is copied
into the task folder with the reader inlined (at the marked import), so the folder needs
nothing of bias-hub installed; ``jbbq_dataset`` and ``bbq_dataset`` load the questions from
``data/`` beside the task folder, wherever it is.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

from bias_hub.pipelines.common.answer_reading import (
    UNPARSABLE,
    read_row_reply,
)  # bias-hub export: inline

# The scores every task reports, under bbq_bias's own names (the one vocabulary; a category's
# copy is suffixed _<category>). lm-eval wants a direction: bias scores, best at 0, count as lower.
SCORES = (
    "accuracy",
    "accuracy_ambiguous",
    "accuracy_disambiguated",
    "bias_score_disambiguated",
    "bias_score_ambiguous",
    "unparsable_rate",
)
HIGHER_IS_BETTER = {name: name.startswith("accuracy") for name in SCORES}


def _item(doc: dict, prediction: int) -> tuple:
    return (
        str(doc["category"]),
        str(doc["context_condition"]),
        int(prediction),
        int(doc["label"]),
        int(doc["unknown_label"]),
        int(doc["stereotyped_label"]),
        str(doc["question_index"]),
    )


def _metrics(doc: dict, prediction: int) -> dict:
    item = _item(doc, prediction)
    values = {name: item for name in SCORES}
    values.update({f"{name}_{doc['category']}": item for name in SCORES})
    return values


def process_multiple_choice(doc: dict, results: list) -> dict:
    """``results``: one ``(log-likelihood, is_greedy)`` per choice."""
    scores = [float(result[0]) for result in results]
    finite = all(math.isfinite(score) for score in scores)
    prediction = (
        max(range(len(scores)), key=scores.__getitem__) if finite and scores else UNPARSABLE
    )
    return _metrics(doc, prediction)


def process_generation(doc: dict, results: list) -> dict:
    """``results``: the one generated reply, read by the question's ``answer_reader``."""
    return _metrics(doc, read_row_reply(doc, results[0]).index)


def _dataset(name: str):
    import datasets

    path = Path(__file__).resolve().parents[1] / "data" / f"{name}.jsonl"
    return datasets.DatasetDict(
        {"test": datasets.load_dataset("json", data_files=str(path), split="train")}
    )


def jbbq_dataset(**_metadata):
    """The JBBQ questions (``custom_dataset`` of the JBBQ tasks)."""
    return _dataset("jbbq")


def bbq_dataset(**_metadata):
    """The BBQ questions (``custom_dataset`` of the BBQ task)."""
    return _dataset("bbq")


def _metric_folder() -> Path:
    """An exported folder's copy of the module, else the installed package's."""
    beside = Path(__file__).resolve().parent / "bbq_bias"
    if beside.is_dir():
        return beside
    from bias_hub.pipelines.common.locations import metric_folder

    return metric_folder("bbq_bias")


@functools.lru_cache(maxsize=1)
def _metric():
    import evaluate

    return evaluate.load(str(_metric_folder()))


@functools.lru_cache(maxsize=256)
def _scores(items: tuple) -> dict:
    category, condition, prediction, label, unknown, stereotyped, _template = zip(
        *items, strict=True
    )
    return _metric().compute(
        predictions=list(prediction),
        references=list(label),
        unknown_labels=list(unknown),
        stereotyped_labels=list(stereotyped),
        context_conditions=list(condition),
        categories=list(category),
    )


def _aggregate(key: str, items: list) -> float:
    value = _scores(tuple(tuple(item) for item in items))[key]
    return float("nan") if value is None else float(value)


def agg_accuracy(items: list) -> float:
    return _aggregate("accuracy", items)


def agg_accuracy_ambiguous(items: list) -> float:
    return _aggregate("accuracy_ambiguous", items)


def agg_accuracy_disambiguated(items: list) -> float:
    return _aggregate("accuracy_disambiguated", items)


def agg_bias_score_disambiguated(items: list) -> float:
    return _aggregate("bias_score_disambiguated", items)


def agg_bias_score_ambiguous(items: list) -> float:
    return _aggregate("bias_score_ambiguous", items)


def agg_unparsable_rate(items: list) -> float:
    return _aggregate("unparsable_rate", items)


def doc_to_answers(doc: dict) -> list[str]:
    """BBQ's three answer texts, the choices of a multiple-choice task over texts."""
    return [doc["ans0"], doc["ans1"], doc["ans2"]]
