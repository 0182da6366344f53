"""JSNLI as distributed (header-less TSV of Juman++-segmented text) and what each model reads."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from bias_hub.pipelines.nli import segmentation
from bias_hub.pipelines.nli.data import is_jsnli, load_training_table, read_jsnli

# Three lines in JSNLI's layout: label, premise, hypothesis; words separated by single spaces.
JSNLI_LINES = [
    "entailment\t男性 が 自転車 で 坂 を 下って いる 。\t男性 が 自転車 に 乗って いる 。",
    "contradiction\t2 人 の 子供 が New York の 公園 で 遊んで いる 。\t子供 たち が 眠って いる 。",
    "neutral\t女性 が 駅 で 電車 を 待って いる 。\t女性 は 仕事 に 行く ところ だ 。",
]


def _jsnli(path: Path, lines: list[str] = JSNLI_LINES) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _settings(**overrides) -> SimpleNamespace:
    base = {
        "dataset_format": "auto",
        "config": None,
        "token": None,
        "dataset_revision": None,
        "columns": "premise,hypothesis,label",
        "label_names": None,
    }
    return SimpleNamespace(**{**base, **overrides})


def test_jsnli_is_read_as_distributed(tmp_path: Path) -> None:
    path = _jsnli(tmp_path / "train_w_filtering.tsv")
    assert is_jsnli(path)
    table = read_jsnli(path)
    assert table["label"] == [0, 2, 1]
    # The text is kept as shipped: segmentation is the model's business.
    assert table["premise"][0] == "男性 が 自転車 で 坂 を 下って いる 。"
    pairs = load_training_table(path, "train", _settings())
    assert (pairs.source_format, pairs.segmented, len(pairs.table)) == ("jsnli", True, 3)


def test_a_tsv_with_a_header_is_a_table_not_jsnli(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text(
        "premise\thypothesis\tlabel\n看護師が歩いた。\t女性が歩いた。\tentailment\n",
        encoding="utf-8",
    )
    assert not is_jsnli(path)
    pairs = load_training_table(path, "train", _settings())
    assert (pairs.source_format, pairs.segmented) == ("table", False)
    assert pairs.table["premise"] == ["看護師が歩いた。"]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "entailment\t男性 が 歩く 。",
            r"line 2: JSNLI lines are label<TAB>premise<TAB>hypothesis, found 2",
        ),
        (
            "maybe\t男性 が 歩く 。\t男性 が いる 。",
            r"line 2: label 'maybe' is not one of entailment, neutral, contradiction",
        ),
    ],
)
def test_a_bad_jsnli_line_is_named_by_its_number(tmp_path: Path, line: str, message: str) -> None:
    path = _jsnli(tmp_path / "dev.tsv", [JSNLI_LINES[0], line])
    with pytest.raises(ValueError, match=message):
        load_training_table(path, "train", _settings(dataset_format="jsnli"))


def test_format_jsnli_on_a_missing_file_names_the_file(tmp_path: Path) -> None:
    with pytest.raises(
        FileNotFoundError, match=r"--dataset .*nowhere.tsv: --format jsnli needs JSNLI's .tsv file"
    ):
        load_training_table(tmp_path / "nowhere.tsv", "train", _settings(dataset_format="jsnli"))


def test_joining_juman_words_gives_back_the_sentence() -> None:
    # Spaces go except between two Latin letters or digits ("New York" keeps its space).
    assert (
        segmentation.join_words("2 人 の 子供 が New York の 公園 で 遊んで いる 。")
        == "2人の子供がNew Yorkの公園で遊んでいる。"
    )
    assert segmentation.join_words(" 男性 が 歩く 。 ") == "男性が歩く。"


@pytest.mark.parametrize(
    ("model", "form"),
    [
        ("nlp-waseda/roberta-base-japanese", "jumanpp"),
        ("ku-nlp/deberta-v2-base-japanese", "jumanpp"),
        ("ku-nlp/deberta-v2-base-japanese-with-auto-jumanpp", "raw"),
        ("tohoku-nlp/bert-base-japanese-v3", "raw"),
        ("/models/local-bert", "raw"),
    ],
)
def test_auto_segmentation_follows_the_model(model: str, form: str) -> None:
    assert segmentation.resolve("auto", model) == form


def test_each_form_prepares_jsnli_and_raw_text_as_the_model_reads(tmp_path: Path) -> None:
    pairs = load_training_table(_jsnli(tmp_path / "train.tsv"), "train", _settings())
    joined = segmentation.prepare(pairs, "raw")
    assert joined["premise"][0] == "男性が自転車で坂を下っている。"
    assert joined["label"] == [0, 2, 1]
    # A Juman++ model reads JSNLI's words as they are, and no segmenter is needed for them.
    assert (
        segmentation.prepare(pairs, "jumanpp")["premise"][0]
        == "男性 が 自転車 で 坂 を 下って いる 。"
    )
    # Raw text (the evaluation sets) is segmented, each distinct sentence once.
    calls = []

    def fake(text: str) -> str:
        calls.append(text)
        return " ".join(text)

    assert segmentation.prepare_texts(
        ["看護師。", "看護師。", "大工。"], "jumanpp", segmenter=fake
    ) == ["看 護 師 。", "看 護 師 。", "大 工 。"]
    assert calls == ["看護師。", "大工。"]


def test_juman_without_the_program_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(segmentation.shutil, "which", lambda name: None)
    with pytest.raises(ValueError) as caught:
        segmentation.prepare_texts(["看護師が歩いた。"], "jumanpp")
    message = str(caught.value)
    assert "\n" not in message
    assert "the jumanpp program (not on PATH)" in message and "pip install rhoknp" in message
