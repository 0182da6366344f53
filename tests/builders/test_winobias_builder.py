"""bias-hub build winobias from files in the upstream CoNLL format; the CoNLL reader by hand."""

from __future__ import annotations

import shutil
from pathlib import Path

import datasets
import pytest

from bias_hub.builders.shared.conll import read_conll
from bias_hub.builders.shared.sources import SourceError
from bias_hub.builders.winobias import build
from bias_hub.pipelines import cli


@pytest.fixture(scope="module")
def built(tmp_path_factory, winobias_source) -> Path:
    return build(tmp_path_factory.mktemp("winobias_out"), source=winobias_source)


def test_configs_hold_every_sentence_with_its_cluster(built):
    every = datasets.load_dataset(str(built), "all")
    assert {split: len(rows) for split, rows in every.items()} == {"validation": 20, "test": 20}
    anti = datasets.load_dataset(str(built), "type2_anti", split="test")
    assert len(anti) == 5 and set(anti["condition"]) == {"anti"} and set(anti["type"]) == {2}
    # The fixture's third sentence: "The guard called the hairdresser and thanked he ." (anti),
    # the pronoun at 7 refers to "the hairdresser" at 3-4.
    row = anti[2]
    assert row["document_id"] == "nw/test_type2/not_stereotype//2"
    assert row["sentence"] == "The guard called the hairdresser and thanked he ."
    assert row["clusters"] == [[[3, 4], [7, 7]]]
    assert (row["antecedent"], row["antecedent_span"], row["pronoun"], row["pronoun_span"]) == (
        "the hairdresser",
        [3, 4],
        "he",
        [7, 7],
    )


def test_card_records_the_files_and_flags_copies_that_are_not_upstream(built):
    card = (built / "README.md").read_text(encoding="utf-8")
    assert "| type1_pro | 5 | 5 |" in card and "| all | 20 | 20 |" in card
    # The fixture files are not the upstream files: their checksums differ from the pins.
    assert card.count("| **no** |") == 8
    assert "MIT" in card and "0 of 40" in card  # no fixture sentence has a second pronoun


def test_missing_files_and_malformed_lines_are_named(tmp_path, winobias_source):
    copy = tmp_path / "copy"
    shutil.copytree(winobias_source / "WinoBias" / "wino" / "data" / "conll_format", copy)
    (copy / "test_type2_anti_stereotype.v4_auto_conll").unlink()
    with pytest.raises(
        FileNotFoundError, match=r"missing \['test_type2_anti_stereotype.v4_auto_conll'\]"
    ):
        build(tmp_path / "out", source=copy)
    (copy / "test_type2_anti_stereotype.v4_auto_conll").write_text(
        "#begin document (nw/test_type2/not_stereotype//0); part 000\nk 0 0 The - - (1\n#end document\n",
        encoding="utf-8",
    )
    with pytest.raises(
        ValueError,
        match=r"test_type2_anti_stereotype.v4_auto_conll, line 3: .*entities \[1\] never close",
    ):
        build(tmp_path / "out", source=copy)
    assert not (tmp_path / "out" / "winobias").exists()


def test_without_source_and_downloads_the_error_says_to_give_one(tmp_path, monkeypatch):
    monkeypatch.setenv("BIAS_HUB_NO_URL", "1")
    monkeypatch.setenv("BIAS_HUB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(SourceError, match=r"(?s)winobias_dev_type1_pro.*--source PATH"):
        build(tmp_path / "out")
    # `bias-hub build all` (make datasets) leaves it out: it needs the network or a copy.
    assert cli.builder_commands()["winobias"].IN_ALL is False


def test_conll_reader_by_hand(tmp_path):
    # Two documents; in the first, entity 7 spans 0-1 and 5, entity 2 spans 1-3 (nested, its
    # tags share a token with 7's) and 4; the second has no mention.
    path = tmp_path / "system.conll"
    path.write_text(
        "#begin document (doc/a); part 000\n"
        "doc/a 0 0 The x x x x x x x x x x (7\n"
        "doc/a 0 1 big x x x x x x x x x x 7)|(2\n"
        "doc/a 0 2 red x x x x x x x x x x -\n"
        "\n"
        "doc/a 0 0 dog x x x x x x x x x x 2)\n"
        "doc/a 0 1 it x x x x x x x x x x (2)\n"
        "doc/a 0 2 he x x x x x x x x x x (7)\n"
        "#end document\n"
        "#begin document (doc/b); part 001\n"
        "doc/b 0 0 Nothing x x x x x x x x x x -\n"
        "#end document\n",
        encoding="utf-8",
    )
    first, second = read_conll(path)
    assert (first.key, first.part, first.name) == ("doc/a", 0, "doc/a; part 000")
    assert first.tokens == [
        "The",
        "big",
        "red",
        "dog",
        "it",
        "he",
    ]  # positions run across sentences
    assert first.clusters == [[[1, 3], [4, 4]], [[0, 1], [5, 5]]]  # entity 2, then entity 7
    assert (second.part, second.tokens, second.clusters) == (1, ["Nothing"], [])
    path.write_text(
        "#begin document (d); part 000\nd 0 0 A x x x x x x x x x x 3)\n#end document\n",
        encoding="utf-8",
    )
    with pytest.raises(
        ValueError, match=r"system.conll, line 2: entity 3 closes a mention that never opened"
    ):
        read_conll(path)
    path.write_text(
        "#begin document (d); part 000\nd 0 0 A x x x x x x x x x x (x)\n", encoding="utf-8"
    )
    with pytest.raises(ValueError, match=r"line 2: coreference tag '\(x\)' is none of"):
        read_conll(path)
