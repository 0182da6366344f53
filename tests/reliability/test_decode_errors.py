"""A file that is not UTF-8 (Shift-JIS, as a Japanese spreadsheet saves it) is an error naming the file.

Every reader a builder uses is given Shift-JIS bytes; the error must name the file, the line,
the first byte that is not UTF-8 and its offset, and no dataset folder may be written.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

BUILDERS = Path(__file__).resolve().parents[2] / "builders"


def _shift_jis(path: Path, text: str) -> str:
    """Write ``text`` in Shift-JIS; return the message a reader must give for it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    # cp932: Shift-JIS as Windows writes it; characters it lacks (é) become "?".
    data = text.encode("cp932", errors="replace")
    path.write_bytes(data)
    # The first byte above 0x7f opens a Shift-JIS character; the ones here (0x82, 0x8d,
    # 0x90, ...) can only continue a character in UTF-8, so decoding fails right there.
    offset = next(i for i, byte in enumerate(data) if byte > 0x7F)
    line = data[:offset].count(b"\n") + 1
    return (
        f"{path}: not UTF-8 text (line {line}: byte 0x{data[offset]:02x} at offset {offset}); "
        "save it as UTF-8 (a Japanese spreadsheet may have saved Shift-JIS)"
    )


def _shipped(relative: str) -> str:
    return (BUILDERS / relative).read_text(encoding="utf-8")


def _jbbq_questions(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.jbbq import build

    row = {"example_id": 0, "context": "二人が待っていた。"}
    message = _shift_jis(tmp / "src" / "Age.jsonl", json.dumps(row, ensure_ascii=False) + "\n")
    return message, lambda: build(tmp / "out", source=tmp / "src")


def _jbbq_templates(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.jbbq import build

    message = _shift_jis(tmp / "src" / "Age.csv", _shipped("jbbq/sample_templates/Age.csv"))
    return message, lambda: build(tmp / "out", source=tmp / "src")


def _nli_authors(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.nli_gender_bias import build

    row = json.dumps({"id": 0, "sentence1": "看護師が歩いている。"}, ensure_ascii=False) + "\n"
    # The three set files of the release's untokenized folder, as its repository names them.
    names = ("1-prostereo_v1.1.json", "2-antistereo_v1.1.json", "3-nonstereo_v1.1.json")
    messages = [_shift_jis(tmp / "authors" / name, row) for name in names]
    return messages[0], lambda: build(tmp / "out", source="authors", authors_dir=tmp / "authors")


def _nli_reviews(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.nli_gender_bias.lexicon import load_reviews

    message = _shift_jis(tmp / "occupations.tsv", _shipped("nli_gender_bias/occupations.tsv"))
    return message, lambda: load_reviews(tmp / "occupations.tsv")


def _nli_templates(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.nli_gender_bias.lexicon import load_templates

    message = _shift_jis(tmp / "templates.tsv", _shipped("nli_gender_bias/templates.tsv"))
    return message, lambda: load_templates(tmp / "templates.tsv")


def _professions(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.nli_gender_bias.lexicon import read_professions

    message = _shift_jis(tmp / "professions.json", '[["看護師", 0.1, -0.9]]')
    return message, lambda: read_professions(tmp / "professions.json")


def _training_templates(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.nli_bias_controlled.rows import load_training_templates

    message = _shift_jis(tmp / "train.tsv", _shipped("nli_bias_controlled/templates.tsv"))
    return message, lambda: load_training_templates(tmp / "train.tsv")


def _bias_controlled_authors(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.nli_bias_controlled import build

    row = {
        "sentence1": "看護師が歩いている。",
        "sentence2": "女性が歩いている。",
        "label": "neutral",
    }
    message = _shift_jis(
        tmp / "authors" / "train_r-0.json", json.dumps(row, ensure_ascii=False) + "\n"
    )
    return message, lambda: build(tmp / "out", authors_dir=tmp / "authors")


def _speciesism(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.speciesism_templates import build

    message = _shift_jis(tmp / "templates.tsv", _shipped("speciesism_templates/templates.tsv"))
    return message, lambda: build(tmp / "out", templates=tmp / "templates.tsv")


def _stereoset(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.stereoset_gender_swap import build

    row = {
        "type": "intersentence",
        "context": "My mother is home.",
        "stereotype": "彼女は料理をする。",
    }
    message = _shift_jis(tmp / "test.jsonl", json.dumps(row, ensure_ascii=False) + "\n")
    return message, lambda: build(tmp / "out", source=tmp / "test.jsonl")


def _stereoset_lexicon(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.stereoset_gender_swap.lexicon import load_lexicon

    message = _shift_jis(
        tmp / "lexicon.tsv", "male\tfemale\tset\tnote\nking\tqueen\tstudy\t王と女王\n"
    )
    return message, lambda: load_lexicon(tmp / "lexicon.tsv")


def _weat(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.weat_word_sets import build

    message = _shift_jis(tmp / "weat.json", '[{"first_target": {"name": "花", "words": ["薔薇"]}}]')
    return message, lambda: build(tmp / "out", source=tmp / "weat.json")


def _weat_japanese(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.weat_word_sets.rows import japanese_rows

    message = _shift_jis(tmp / "weat_ja.tsv", _shipped("weat_word_sets/weat_ja.tsv"))
    return message, lambda: japanese_rows(tmp / "weat_ja.tsv")


CASES = {
    "jbbq questions (JSON lines)": _jbbq_questions,
    "jbbq template CSV": _jbbq_templates,
    "nli_gender_bias authors' files": _nli_authors,
    "nli_gender_bias occupations TSV": _nli_reviews,
    "nli_gender_bias templates TSV": _nli_templates,
    "professions list (JSON)": _professions,
    "nli_bias_controlled templates TSV": _training_templates,
    "nli_bias_controlled authors' files": _bias_controlled_authors,
    "speciesism templates TSV": _speciesism,
    "StereoSet copy (JSON lines)": _stereoset,
    "gender lexicon TSV": _stereoset_lexicon,
    "weat.json": _weat,
    "Japanese WEAT TSV": _weat_japanese,
}


@pytest.mark.parametrize("case", list(CASES))
def test_shift_jis_input_names_the_file_the_byte_and_its_offset(case: str, tmp_path: Path) -> None:
    message, call = CASES[case](tmp_path)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()
    assert not (tmp_path / "out").exists() or list((tmp_path / "out").iterdir()) == []


def test_the_offset_counts_bytes_of_the_whole_file(tmp_path: Path) -> None:
    from bias_hub.builders.shared.files import read_text

    # 20,000 ASCII bytes in 2,000 lines, then 性 in Shift-JIS (0x90 0xab): past any decoder's
    # first chunk, on line 2,001.
    path = tmp_path / "long.txt"
    path.write_bytes(b"aaaaaaaaa\n" * 2_000 + "性".encode("shift_jis"))
    with pytest.raises(
        ValueError,
        match=re.escape(f"{path}: not UTF-8 text (line 2001: byte 0x90 at offset 20000)"),
    ):
        read_text(path)


def test_newlines_and_byte_order_marks_are_read_as_open_reads_them(tmp_path: Path) -> None:
    from bias_hub.builders.shared.files import open_text, read_text

    path = tmp_path / "windows.csv"
    path.write_bytes("\ufeffa,b\r\nc,d\re\n".encode())
    assert read_text(path) == "a,b\nc,d\ne\n"
    assert read_text(path, newline="") == "a,b\r\nc,d\re\n"
    with open_text(path) as handle:
        assert handle.readlines() == ["a,b\n", "c,d\n", "e\n"]


# The pipelines' readers of files a user gives: the same message, prefixed with the flag
# where the reader knows it.


def _nli_training_csv(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.pipelines.nli.data import load_table

    message = _shift_jis(
        tmp / "train.csv", "premise,hypothesis,label\n看護師が歩く。,女性が歩く。,0\n"
    )
    return message, lambda: load_table(str(tmp / "train.csv"))


def _jsnli(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.pipelines.nli.data import read_jsnli

    message = _shift_jis(tmp / "dev.tsv", "entailment\t男性 が 歩く 。\t人 が 歩く 。\n")
    return message, lambda: read_jsnli(tmp / "dev.tsv")


def _vectors_text(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.pipelines.embeddings.vectors import load_word2vec_text

    message = _shift_jis(tmp / "chive.vec", "2 2\n男 0.1 0.2\n女 0.3 0.4\n")
    return message, lambda: load_word2vec_text(tmp / "chive.vec")


def _corpus(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.pipelines.embeddings.corpus import prepare_corpus

    message = _shift_jis(tmp / "corpus.txt", "a sentence\n看護師 が 歩く\n")
    return message, lambda: prepare_corpus(tmp / "corpus.txt", tmp / "tokens.txt", 1)


def _scores_table(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.pipelines.embeddings.correlate import read_score_table

    message = _shift_jis(tmp / "scores.csv", "embedding,weat\n日本語,0.1\n")
    return f"--scores {message}", lambda: read_score_table(tmp / "scores.csv")


def _preset(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.pipelines.common.presets import load_preset

    message = _shift_jis(tmp / "mine.yaml", "command: jbbq evaluate\n# 論文の設定\n")
    return message, lambda: load_preset("jbbq evaluate", str(tmp / "mine.yaml"))


def _study(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.pipelines.reproduce.study import load_study

    message = _shift_jis(tmp / "mine.yaml", "study: mine\ntitle: 日本語\n")
    return message, lambda: load_study(str(tmp / "mine.yaml"))


def _jbbq_results(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.pipelines.jbbq.report import load_results

    message = _shift_jis(tmp / "results.json", '{"model": "日本語"}')
    return message, lambda: load_results(tmp / "results.json")


def _review_sheet(tmp: Path) -> tuple[str, Callable]:
    from bias_hub.builders.jbbq.translate import apply_review

    message = _shift_jis(tmp / "review_sheet.csv", "file,Q_id,field,decision\nAge.csv,1,x,保持\n")
    return message, lambda: apply_review(tmp / "review_sheet.csv", tmp / "out")


PIPELINE_CASES = {
    "nli training CSV": _nli_training_csv,
    "JSNLI TSV": _jsnli,
    "word vectors (text)": _vectors_text,
    "embeddings corpus": _corpus,
    "embeddings correlate --scores": _scores_table,
    "--preset FILE": _preset,
    "reproduce study file": _study,
    "jbbq results file": _jbbq_results,
    "jbbq review sheet": _review_sheet,
}


@pytest.mark.parametrize("case", list(PIPELINE_CASES))
def test_the_pipelines_readers_name_the_file_the_byte_and_its_offset(
    case: str, tmp_path: Path
) -> None:
    message, call = PIPELINE_CASES[case](tmp_path)
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        call()


def test_a_byte_order_mark_changes_nothing_a_pipeline_reads(tmp_path: Path) -> None:
    from bias_hub.pipelines.embeddings.correlate import read_score_table
    from bias_hub.pipelines.embeddings.vectors import load_word2vec_text
    from bias_hub.pipelines.nli.data import is_jsnli, read_jsnli

    bom = "\ufeff"
    (tmp_path / "dev.tsv").write_text(f"{bom}entailment\t男性 が 歩く\t人 が 歩く\n", "utf-8")
    assert is_jsnli(tmp_path / "dev.tsv")
    assert read_jsnli(tmp_path / "dev.tsv")["label"] == [0]
    # With a BOM before it, "2 2" was no header: the file was read as header-less GloVe.
    (tmp_path / "v.vec").write_text(f"{bom}2 2\nman 0.1 0.2\nwoman 0.3 0.4\n", "utf-8")
    vectors = load_word2vec_text(tmp_path / "v.vec")
    assert vectors.words == ["man", "woman"] and vectors.matrix.shape == (2, 2)
    # Excel's CSV: the first column was "\ufeffembedding", so no 'embedding' column was found.
    (tmp_path / "s.csv").write_text(f"{bom}embedding,weat\ne1,0.5\n", "utf-8")
    assert read_score_table(tmp_path / "s.csv") == (["weat"], {"e1": {"weat": 0.5}})
