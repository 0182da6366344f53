"""One answer reader on every path: ``jbbq evaluate``'s scorer, ``bias-hub score``, the lm-eval
export's ``utils.py`` and the Inspect export's ``scoring.py`` read the same replies to the same
questions the same way; and forty replies stating the gold answer in the forms a chat model
writes score, with ``--answer-reader lenient``, to exactly the share of readable replies."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from jbbq_fixtures import fixture_rows, write_fixture_dataset

from bias_hub.pipelines.cli import main
from bias_hub.pipelines.common.answer_reading import READERS
from bias_hub.pipelines.common.score_path import score_path
from bias_hub.pipelines.export import inspect_scoring, lm_eval_utils
from bias_hub.pipelines.export.inlining import inline_module
from bias_hub.pipelines.export.lm_eval import data_row
from bias_hub.pipelines.jbbq.prompting import load_prompt
from bias_hub.pipelines.jbbq.scorers import APIScorer
from bias_hub.pipelines.score.run import metric_inputs

FULL_WIDTH = "０１２"


def _gold_reply(number: int, row: dict) -> tuple[str, str]:
    """A reply stating ``row``'s gold answer, in one of twelve forms; and the rule that reads it."""
    gold = row["label"]
    text = row[f"ans{gold}"]
    if gold == row["unknown_label"] and number % 3 == 0:
        return ["わからない", "判断できません。", "不明です", "Cannot be determined."][
            number % 4
        ], "unknown"
    forms = [
        (f"{gold}", "index"),
        (f"答えは{gold}です", "index"),
        (f"回答: {gold}", "index"),
        (f"{gold}.", "index"),
        (f"選択肢{gold}", "index"),
        (f"ans{gold}", "index"),
        (FULL_WIDTH[gold], "index"),
        (f"{gold}: {text}", "index"),
        (text, "option"),
        (f"{text}。", "option"),
        (f"{text}です", "option"),
        (f"{text}.", "option"),
    ]
    return forms[number % len(forms)]


# Replies no reader can take as an answer: out of range, empty, two answers at once.
UNREAD = [
    ("3", "out-of-range"),
    ("7", "out-of-range"),
    ("-1", "out-of-range"),
    ("10", "out-of-range"),
    ("", "empty"),
    ("  ", "empty"),
    ("\n", "empty"),
    ("0と1", "two-answers"),
]


def _extra_rows() -> list[dict]:
    """Eight more questions (a copy of template a1 as template x1) for the unread replies."""
    rows = [row for row in fixture_rows()["all"] if row["question_index"] == "a1"] * 2
    return [dict(row, question_index="x1", example_id=1000 + i) for i, row in enumerate(rows)]


def _fixture() -> list[tuple[dict, str, str]]:
    """(question, reply, rule the lenient reader reads it by)."""
    questions = fixture_rows()["all"]
    assert len(questions) == 40
    shared = [(row, *_gold_reply(i, row)) for i, row in enumerate(questions)]
    return shared + [
        (row, reply, rule) for row, (reply, rule) in zip(_extra_rows(), UNREAD, strict=True)
    ]


@pytest.mark.slow  # writes a dataset folder and runs bias-hub score on it
def test_forty_stated_answers_score_to_the_share_read(tmp_path: Path) -> None:
    folder = write_fixture_dataset(tmp_path / "jbbq", _extra_rows())
    fixture = _fixture()
    predictions = tmp_path / "replies.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"example_id": row["example_id"], "reply": reply}, ensure_ascii=False) + "\n"
            for row, reply, _ in fixture
        ),
        encoding="utf-8",
    )
    out = tmp_path / "run"
    flags = ["--prediction-column", "reply", "--dataset", str(folder), "--config", "all"]
    code = main(
        [
            "score",
            "bbq_bias",
            "--predictions",
            str(predictions),
            *flags,
            "--out",
            str(out),
            "--confidence-level",
            "none",
            "--answer-reader",
            "lenient",
            "-q",
        ]
    )
    assert code == 0  # no reply aborts the file
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    # every gold statement is read, and right; the eight others are unparsable
    assert results["result"]["accuracy"] == pytest.approx(40 / 48, abs=1e-12)
    assert results["result"]["unparsable_rate"] == pytest.approx(8 / 48, abs=1e-12)
    # in a predictions file "-1" is an index given (a CSV cell has no type): unparsable as given
    rules = ["given" if reply == "-1" else rule for _, reply, rule in fixture]
    expected_rules = {rule: rules.count(rule) for rule in dict.fromkeys(rules)}
    reading = results["reading"]["predictions"]
    assert reading["rules"] == expected_rules and reading["coverage"] == pytest.approx(40 / 48)
    written = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [w["reply_rule"] for w in written] == rules


class _Replies:
    """An OpenAI-compatible client that answers every request with the next reply of a list."""

    base_url = "http://127.0.0.1:1/v1"

    def __init__(self, replies: list[str]):
        self.replies = replies

    def complete(self, bodies, progress=True, desc=""):
        assert len(bodies) == len(self.replies)
        return [{"choices": [{"message": {"content": reply}}]} for reply in self.replies]


def _load(path: Path, name: str):
    """A written module imported from its file alone, as lm-eval and Inspect import them."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    saved = sys.modules.pop("bias_hub", None)
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is not None:
            sys.modules["bias_hub"] = saved
    return module


@pytest.mark.parametrize("reader", [r for r in READERS if r != "bbq"])
def test_evaluate_score_and_the_exports_read_each_reply_alike(reader: str, tmp_path: Path) -> None:
    fixture = _fixture() + [
        (row, reply, "")
        for row in fixture_rows()["all"][:4]
        for reply in ("1\n\n### 入力:", " 2 ", "01", "２です", "0.5", "回答", "判断できない", "２")
    ]
    questions = [row for row, _, _ in fixture]
    replies = [reply for _, reply, _ in fixture]

    scorer = APIScorer(_Replies(replies), reader=reader, progress=False)
    evaluate = [
        p["prediction"] for p in scorer.score(load_prompt("basic"), questions, [], "generate")
    ]

    path = score_path("bbq_bias")
    pairs = [({"prediction": reply}, row) for row, reply in zip(questions, replies, strict=True)]
    _, _, per_row = metric_inputs(pairs, path, dict(path.predictions), "fixture", reader, True)
    score = [readings[0].index for readings in per_row]

    (tmp_path / "utils.py").write_text(inline_module(lm_eval_utils), encoding="utf-8")
    utils = _load(tmp_path / "utils.py", "lm_eval_task_utils")
    docs = [data_row(row, reader) for row in questions]
    lm_eval = [
        utils.process_generation(doc, [r])["accuracy"][2]
        for doc, r in zip(docs, replies, strict=True)
    ]

    (tmp_path / "scoring.py").write_text(inline_module(inspect_scoring), encoding="utf-8")
    scoring = _load(tmp_path / "scoring.py", "inspect_task_scoring")
    inspect = [
        scoring.score_item(doc, r)["prediction"] for doc, r in zip(docs, replies, strict=True)
    ]

    assert evaluate == score == lm_eval == inspect
    assert -1 in evaluate and len(set(evaluate)) >= 3  # read and unread replies both occur
    if reader == "lenient":
        assert evaluate[:48] == [row["label"] for row in questions[:40]] + [-1] * 8
