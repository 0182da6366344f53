from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pytest

from bias_hub.pipelines.nli.data import load_table, prepare_nli_columns
from bias_hub.pipelines.nli.labels import map_model_labels, parse_label_map


def test_model_labels_are_mapped_by_name_in_any_order() -> None:
    mapping = map_model_labels({0: "CONTRADICTION", 1: "entailment", 2: "Neutral"})
    # Model output 0 is contradiction (canonical 2), 1 entailment (0), 2 neutral (1).
    assert mapping.tolist() == [2, 0, 1]


def test_unmappable_model_labels_name_what_was_found() -> None:
    with pytest.raises(ValueError, match=r"\['LABEL_0', 'LABEL_1', 'LABEL_2'\].*--label-map"):
        map_model_labels({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"})
    override = parse_label_map("LABEL_0=neutral,LABEL_1=contradiction,LABEL_2=entailment")
    assert map_model_labels({0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}, override).tolist() == [
        1,
        2,
        0,
    ]


def test_label_map_rejects_a_non_nli_name() -> None:
    with pytest.raises(ValueError, match="'maybe'"):
        parse_label_map("LABEL_0=maybe")


def _rows() -> list[dict]:
    return [
        {"sentence1": "看護師が歩いた。", "sentence2": "女性が歩いた。", "gold": "entailment"},
        {"sentence1": "医者が走った。", "sentence2": "男性が走った。", "gold": "contradiction"},
        {"sentence1": "庭師が座った。", "sentence2": "女性が座った。", "gold": "neutral"},
    ]


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_files_of_each_type_load_and_map(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"train{suffix}"
    table = datasets.Dataset.from_list(_rows())
    if suffix == ".jsonl":
        path.write_text(
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in _rows()), encoding="utf-8"
        )
    elif suffix == ".csv":
        table.to_csv(str(path), index=False)
    else:
        table.to_parquet(str(path))
    prepared = prepare_nli_columns(load_table(str(path)), "sentence1,sentence2,gold")
    assert prepared.column_names == ["premise", "hypothesis", "label"]
    assert prepared["label"] == [0, 2, 1]
    assert prepared.features["label"].names == ["entailment", "neutral", "contradiction"]


def test_custom_label_names_and_classlabel_columns() -> None:
    table = datasets.Dataset.from_dict(
        {"premise": ["a", "b"], "hypothesis": ["c", "d"], "label": ["C", "E"]}
    )
    assert prepare_nli_columns(table, label_names=["E", "N", "C"])["label"] == [2, 0]
    # A ClassLabel in another order (SNLI-like names in a different position) maps by name.
    features = datasets.Features(
        {
            "premise": datasets.Value("string"),
            "hypothesis": datasets.Value("string"),
            "label": datasets.ClassLabel(names=["neutral", "contradiction", "entailment"]),
        }
    )
    table = datasets.Dataset.from_dict(
        {"premise": ["a", "b"], "hypothesis": ["c", "d"], "label": [0, 2]}, features=features
    )
    assert prepare_nli_columns(table)["label"] == [1, 0]


def test_missing_column_is_named_with_the_columns_found() -> None:
    table = datasets.Dataset.from_list(_rows())
    with pytest.raises(
        ValueError,
        match=r"missing column\(s\) \['premise', 'hypothesis', 'label'\]; found \['sentence1'",
    ):
        prepare_nli_columns(table, where="train.jsonl")


def test_label_outside_the_mapping_names_value_and_row() -> None:
    rows = _rows() + [{"sentence1": "x", "sentence2": "y", "gold": "unknown"}]
    with pytest.raises(ValueError, match=r"\['unknown'\] outside the mapping \(first at row 3\)"):
        prepare_nli_columns(datasets.Dataset.from_list(rows), "sentence1,sentence2,gold")
    # Unlabelled rows (-1, as in MNLI's test split) are outside the mapping too.
    with pytest.raises(ValueError, match=r"\['-1'\]"):
        prepare_nli_columns(
            datasets.Dataset.from_dict({"premise": ["a"], "hypothesis": ["b"], "label": [-1]})
        )


def test_empty_split_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.parquet"
    datasets.Dataset.from_dict(
        {"premise": [], "hypothesis": [], "label": []},
        features=datasets.Features(
            {
                "premise": datasets.Value("string"),
                "hypothesis": datasets.Value("string"),
                "label": datasets.Value("string"),
            }
        ),
    ).to_parquet(str(path))
    with pytest.raises(ValueError, match="split 'train' is empty"):
        load_table(str(path))


def test_unknown_file_type_is_named(tmp_path: Path) -> None:
    path = tmp_path / "train.xlsx"
    path.write_text("x")
    with pytest.raises(ValueError, match="unknown file type '.xlsx'"):
        load_table(str(path))


def test_three_column_names_are_required() -> None:
    with pytest.raises(ValueError, match="--columns"):
        prepare_nli_columns(datasets.Dataset.from_list(_rows()), "sentence1,sentence2")
    assert np.array_equal(map_model_labels(["entailment", "neutral", "contradiction"]), [0, 1, 2])


def test_a_label_map_that_names_one_label_twice_says_which_and_how_to_fix_it() -> None:
    # The message used to say "(entailment, neutral found twice)" although nothing maps to
    # neutral, and told the user to pass the --label-map they had passed.
    names = ["entailment", "neutral", "contradiction"]
    override = parse_label_map(
        "entailment=entailment,neutral=entailment,contradiction=contradiction"
    )
    with pytest.raises(ValueError) as info:
        map_model_labels(names, override)
    message = str(info.value)
    assert (
        "(entailment mapped from 'entailment' and 'neutral'; neutral mapped from none)" in message
    )
    assert message.endswith("correct --label-map so that each NLI label is named once")
    assert "pass --label-map" not in message
