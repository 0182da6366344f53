"""Replies read as a person reads them: negations, counts, minus signs, llm-jp-eval's own reading,
BBQ's reading of texts in another Unicode form, and no reply that makes a reader raise.

``reader_replies.json`` holds replies written by hand in the styles models answer in, each with
the reading a person gives it; the readings were decided before any reader ran on them."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bias_hub.pipelines.common.answer_reading import READERS, read_answer

TABLE = json.loads(Path(__file__).with_name("reader_replies.json").read_text(encoding="utf-8"))
AGE = ["未定", "70代の人", "20代の人"]  # JBBQ's Age options; the unknown one is 0
FAMILY = ["Unknown", "The grandfather", "The grandson"]


def _table_readings(reader: str) -> list[tuple[dict, int]]:
    out = []
    for row in TABLE["replies"]:
        options = TABLE["option_sets"][row["set"]]
        reading = read_answer(row["reply"], options["options"], options["unknown"], reader=reader)
        out.append((row, reading.index))
    return out


def test_the_table_holds_eighty_replies_or_more_in_both_languages() -> None:
    sets = {row["set"] for row in TABLE["replies"]}
    assert len(TABLE["replies"]) >= 80
    assert any(s.endswith("_ja") for s in sets) and any(s.endswith("_en") for s in sets)


def test_lenient_agrees_with_a_person_on_the_table_and_never_reads_a_negated_option() -> None:
    readings = _table_readings("lenient")
    wrong = [
        (row["reply"], row["person"], index) for row, index in readings if index != row["person"]
    ]
    negated = [(row["reply"], index) for row, index in readings if index in row.get("negated", [])]
    assert not negated
    assert 1 - len(wrong) / len(readings) >= 0.95, wrong


@pytest.mark.parametrize("reader", READERS)
def test_every_reader_reads_the_whole_table_without_raising(reader: str) -> None:
    # The stricter readers agree less (they read what their harness reads, not what a person
    # does); their agreement is reported, not asserted. None reads a negated option.
    readings = _table_readings(reader)
    assert len(readings) == len(TABLE["replies"])
    assert not [row["reply"] for row, index in readings if index in row.get("negated", [])]


@pytest.mark.parametrize(
    ("reply", "options", "unknown", "expected"),
    [
        ("not 1", AGE, 0, (-1, "negated")),
        ("1ではない", AGE, 0, (-1, "negated")),
        ("70代の人ではない", AGE, 0, (-1, "negated")),
        ("選択肢は2つあります", AGE, 0, (-1, "no-answer")),  # a count, no index
        ("3個の中から1つ選ぶなら2", AGE, 0, (2, "index")),
        ("−1", AGE, 0, (-1, "out-of-range")),  # U+2212: minus one
        ("➖2", AGE, 0, (-1, "out-of-range")),  # U+2796
        ("⁻1", AGE, 0, (-1, "out-of-range")),  # superscript minus
        ("Not the grandfather", FAMILY, 0, (-1, "negated")),
        ("答えは1ではなく2", AGE, 0, (2, "index")),
        ("70代の人ではなく20代の人", AGE, 0, (2, "option")),
        ("1じゃなくて0", AGE, 0, (0, "index")),
        ("The grandson, not the grandfather.", FAMILY, 0, (2, "option")),
        ("The grandfather is wrong; it is the grandson.", FAMILY, 0, (2, "option")),
        ("1でも2でもない", AGE, 0, (-1, "negated")),
    ],
)
def test_negations_counts_and_minus_signs(reply, options, unknown, expected) -> None:
    assert tuple(read_answer(reply, options, unknown, reader="lenient")) == expected


@pytest.mark.parametrize("reader", READERS)
def test_a_reply_of_ten_thousand_digits_is_read_not_raised(reader: str) -> None:
    for reply in ("1" * 10_000, "答えは" + "9" * 10_000, "-" + "2" * 5_000, "1." + "0" * 9_000):
        assert read_answer(reply, AGE, 0, reader=reader).index == -1


@settings(max_examples=300, deadline=None)
@given(
    reply=st.one_of(
        st.text(max_size=200),
        st.text(alphabet="0123456789-−.,/:つ個ではないnot ", max_size=60),
        st.integers(),
        st.floats(allow_nan=True, allow_infinity=True),
        st.none(),
        st.booleans(),
    )
)
def test_no_reader_raises_on_any_reply(reply) -> None:
    for reader in READERS:
        reading = read_answer(reply, AGE, 0, reader=reader)
        assert reading.index in (-1, 0, 1, 2)


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        ("1", (1, "exact")),
        ("１", (1, "exact")),  # NFKC
        (" 1", (-1, "no-answer")),  # v1.3.0 compares untrimmed text
        ("1\n", (-1, "no-answer")),
        ("1\n\n2", (1, "exact")),  # the text before the first blank line
        ('"1"', (-1, "no-answer")),  # no quote is stripped
    ],
)
def test_llm_jp_eval_reads_as_version_1_3_0_does(reply: str, expected: tuple[int, str]) -> None:
    assert tuple(read_answer(reply, AGE, 0, reader="llm-jp-eval")) == expected


@pytest.mark.parametrize("form", ["NFKC-inverse", "NFD"])
def test_bbq_reads_full_width_and_decomposed_answer_texts(form: str) -> None:
    options = ["ガソリンスタンドの店員", "ＡＢＣ社の社長", "判断できない"]
    if form == "NFD":
        replies = [unicodedata.normalize("NFD", option) for option in options]
    else:  # the reply in the full-width form of what the option spells half-width
        replies = ["ｶﾞｿﾘﾝｽﾀﾝﾄﾞの店員", "ABC社の社長", "判断できない"]
    for index, reply in enumerate(replies):
        assert tuple(read_answer(reply, options, 2, reader="bbq")) == (index, "text")


@pytest.mark.parametrize("preset", ["paper", "table4"])
def test_the_jbbq_presets_cite_section_5_1_only_for_what_it_states(preset: str) -> None:
    from bias_hub.pipelines.common.presets import load_preset

    loaded = load_preset("jbbq evaluate", preset)
    # §5.1 states the four models, the three prompts and that the answer is generated; it names
    # llm-jp-eval by its URL alone (footnote 3).
    cited = {key for key, section in loaded.sections.items() if section and "§5.1" in section}
    assert cited <= {"prompts", "scoring"}
    for key in ("layout", "answer_reader", "max_new_tokens"):
        kind, reason = loaded.basis[key]
        assert kind == "assumed" and "v1.3.0" in reason, key
    assert "swallow-llm/swallow-evaluation" in loaded.basis["answer_reader"][1]
    # v1.3.0 generates a task's output_length tokens; the JBBQ processor it is read from sets 1.
    assert loaded.values["max_new_tokens"] == 1
    assert "output_length = 1" in loaded.basis["max_new_tokens"][1]
