"""bias-hub build weat_word_sets: the English tests, the study's variant and the Japanese sets."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest

from bias_hub.builders.weat_word_sets import build
from bias_hub.builders.weat_word_sets.rows import ROLES, japanese_rows


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("weat_sets")
    return build(root)


def test_english_config_holds_caliskan_tests_and_the_variant(built):
    rows = {row["test_id"]: row for row in datasets.load_dataset(str(built), "en", split="test")}
    assert list(rows) == [f"weat{i}" for i in range(1, 11)] + ["weat6_gender_terms"]
    # WEAT 7 as printed in Caliskan et al. (2017), Supplementary Material.
    assert rows["weat7"]["target_x_words"] == [
        "math",
        "algebra",
        "geometry",
        "calculus",
        "equations",
        "computation",
        "numbers",
        "addition",
    ]
    assert rows["weat7"]["original_d"] == pytest.approx(0.82)
    variant = rows["weat6_gender_terms"]
    assert variant["target_x_words"] == rows["weat7"]["attribute_a_words"]
    assert variant["target_y_words"] == rows["weat7"]["attribute_b_words"]
    assert variant["attribute_a_words"] == rows["weat6"]["attribute_a_words"]
    assert "Tremayne" in rows["weat4"]["removed_words"]


def test_japanese_config_has_balanced_sets(built):
    rows = datasets.load_dataset(str(built), "ja", split="test")
    assert rows["test_id"] == ["weat6", "weat7", "weat8"]
    for row in rows:
        for role in ROLES:
            assert len(row[f"{role}_words"]) == 8, (row["test_id"], role)
        assert not set(row["target_x_words"]) & set(row["target_y_words"])
    assert "数学" in rows[1]["target_x_words"] and "彼女" in rows[2]["attribute_b_words"]


def test_card_counts_come_from_the_build(built):
    card = (built / "README.md").read_text(encoding="utf-8")
    assert "config_name: en" in card and "config_name: ja" in card
    assert (
        "| weat6_gender_terms | Male terms vs Female terms / Career vs Family | 8 | 8 | 8 | 8 |"
        in card
    )


def test_bad_japanese_file_names_the_row(tmp_path):
    bad = tmp_path / "bad.tsv"
    bad.write_text(
        "test_id\trole\tset_name\tword\tgloss\nweat6\ttarget_z\tX\t太郎\tname\n", encoding="utf-8"
    )
    with pytest.raises(ValueError, match=r"bad.tsv, row 2: role must be one of"):
        japanese_rows(bad)


@pytest.mark.slow  # reads ja-ginza's whole chiVe table
def test_japanese_words_all_have_distinct_chive_vectors():
    import numpy as np

    from bias_hub.pipelines.embeddings.vectors import load_chive

    rows = japanese_rows()
    words = sorted({w for row in rows for role in ROLES for w in row[f"{role}_words"]})
    vectors = load_chive(words)
    assert set(vectors.words) == set(words)
    for row in rows:  # chiVe in ja-ginza shares rows between similar words; no test may tie two
        _, matrix = vectors.lookup([w for role in ROLES for w in row[f"{role}_words"]])
        assert len(np.unique(matrix, axis=0)) == 32, row["test_id"]


def _upstream_tests() -> list:
    import json

    from bias_hub.builders.shared.sources import resolve

    return json.loads(Path(resolve("weat_word_sets").path).read_text(encoding="utf-8"))


def _build_from(tests, tmp_path):
    import json

    source = tmp_path / "weat.json"
    source.write_text(json.dumps(tests), encoding="utf-8")
    return build(tmp_path / "out", source=source)


def test_a_word_twice_in_a_set_is_refused_as_the_metric_would(tmp_path):
    # WEAT 7's first Math word appended to Math again was built, and refused only
    # when metrics/weat scored the test.
    tests = _upstream_tests()
    tests[6]["first_target"]["words"].append(tests[6]["first_target"]["words"][0])
    with pytest.raises(ValueError, match=r"weat.json: test 7: set 'Math' lists 'math' twice"):
        _build_from(tests, tmp_path)
    assert not (tmp_path / "out" / "weat_word_sets").exists()


def test_a_word_in_two_sets_of_a_test_is_refused(tmp_path):
    # An Arts word added to Math was accepted.
    tests = _upstream_tests()
    arts = tests[6]["second_target"]["words"][0]
    tests[6]["first_target"]["words"].append(arts)
    with pytest.raises(ValueError, match=rf"test 7: set 'Arts' lists '{arts}' and in 'Math'"):
        _build_from(tests, tmp_path)


def test_a_word_that_is_no_string_is_refused(tmp_path):
    # The number 5 silently became the word '5'.
    tests = _upstream_tests()
    tests[6]["first_target"]["words"][0] = 5
    with pytest.raises(
        ValueError, match=r"test 7, first_target: word 0 is 5; expected a non-empty string"
    ):
        _build_from(tests, tmp_path)


def test_a_file_that_is_no_list_of_tests_says_what_it_holds(tmp_path, capsys):
    # '[1,2,3]' gave "expected a list ..., got list".
    from bias_hub.pipelines.cli import main

    source = tmp_path / "w.json"
    source.write_text("[1,2,3]", encoding="utf-8")
    code = main(
        ["build", "weat_word_sets", "--source", str(source), "--out-root", str(tmp_path / "out")]
    )
    err = capsys.readouterr().err
    assert (
        code == 2
        and "expected a list of the 10 WEAT tests" in err
        and "got a list of 3 items" in err
    )
    assert len(err.strip().splitlines()) == 1
    with pytest.raises(
        ValueError, match=r"weat.json: test 1 is 0; expected an object with first_target"
    ):
        _build_from(list(range(10)), tmp_path)
