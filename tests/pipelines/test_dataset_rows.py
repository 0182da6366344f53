"""A built folder's rows without `datasets`: the card's features and each Parquet file's, compared
in our own small form, decide as `datasets` decides; anything else is left to `datasets`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder
from bias_hub.builders.shared.card import read_card_yaml
from bias_hub.pipelines.common import load_dataset_split
from bias_hub.pipelines.common.locations import (
    _card_features,
    _schema_features,
    built_rows,
    dataset_rows,
)

REPO_CARDS = sorted((Path(__file__).resolve().parents[2] / "datasets").glob("*/README.md"))
META = CardMetadata(pretty_name="t", license="mit", language=["en"], task_categories=["other"])


def _features(**changes):
    """Every kind of feature our builders write; ``changes`` replace or add columns."""
    import datasets

    string, int32 = datasets.Value("string"), datasets.Value("int32")
    columns = {
        "id": string,
        "label": datasets.ClassLabel(names=["no", "yes"]),
        "score": datasets.Value("float32"),
        "words": datasets.Sequence(string),
        "span": datasets.List(int32, length=2),
        "answer": {"text": string, "start": int32},
        "answers": datasets.List({"text": string, "group": string}),
    }
    return datasets.Features({**columns, **changes})


def _rows() -> list[dict]:
    return [
        dict(
            id="a",
            label=1,
            score=0.1,
            words=["x", "y"],
            span=[0, 2],
            answer=dict(text="x", start=3),
            answers=[dict(text="p", group="g")],
        ),
        dict(
            id="b",
            label=0,
            score=-2.5,
            words=[],
            span=[1, 1],
            answer=dict(text="", start=0),
            answers=[],
        ),
    ]


def _file_schema(features, folder: Path):
    """The schema of a Parquet file `datasets` writes with ``features``, as read back."""
    import datasets
    import pyarrow.parquet as pq

    path = folder / f"{len(list(folder.glob('*.parquet')))}.parquet"
    datasets.Dataset.from_dict({name: [] for name in features}, features=features).to_parquet(
        str(path)
    )
    return pq.read_schema(path)


def test_every_committed_cards_features_read_as_datasets_reads_them(tmp_path: Path) -> None:
    import datasets

    for card_path in REPO_CARDS:
        card = read_card_yaml(card_path.parent)
        ours = _card_features(card)
        infos = datasets.info.DatasetInfosDict.from_dataset_card_data(card)
        assert list(ours) == list(infos), card_path
        for config, info in infos.items():
            schema = _file_schema(info.features, tmp_path)
            assert datasets.Features.from_arrow_schema(schema) == info.features
            assert ours[config] is not None and ours[config] == _schema_features(schema), (
                f"{card_path}: {config}"
            )
    # Read off the committed cards' YAML by hand: a list of two-field structs, a list of two.
    jbbq = _card_features(read_card_yaml(REPO_CARDS[0].parent.parent / "jbbq"))["all"]
    text = ("Value", "string")
    assert jbbq["answer_info"] == ("List", {"text": text, "group": text}, -1)
    assert jbbq["additional_metadata"]["stereotyped_groups"] == ("List", text, -1)
    winobias = _card_features(read_card_yaml(REPO_CARDS[0].parent.parent / "winobias"))["all"]
    assert winobias["pronoun_span"] == ("List", ("Value", "int32"), 2)


VARIANTS = {
    "base": {},
    "the struct's fields in another order": {"answer": {"start": "int32", "text": "string"}},
    "other label names": {"label": ["yes", "no"]},
    "another number type": {"score": "float64"},
    "another list length": {"span": 3},
    "a string, not a list": {"words": "string"},
    "one more column": {"extra": "bool"},
    "a nested field of another type": {"answers": "large_string"},
}


def _variant(name: str):
    import datasets

    change = VARIANTS[name]
    if name == "the struct's fields in another order":
        return _features(answer={k: datasets.Value(v) for k, v in change["answer"].items()})
    if name == "other label names":
        return _features(label=datasets.ClassLabel(names=change["label"]))
    if name == "another list length":
        return _features(span=datasets.List(datasets.Value("int32"), length=change["span"]))
    if name == "a nested field of another type":
        text = datasets.Value(change["answers"])
        return _features(answers=datasets.List({"text": text, "group": datasets.Value("string")}))
    return _features(**{key: datasets.Value(value) for key, value in change.items()})


def test_our_form_and_datasets_agree_on_which_features_are_the_cards(tmp_path: Path) -> None:
    import datasets

    decisions = {}
    for card_name in VARIANTS:
        card_features = _variant(card_name)
        card = {"dataset_info": [{"config_name": "c", "features": card_features._to_yaml_list()}]}
        ours = _card_features(card)["c"]
        for file_name in VARIANTS:
            schema = _file_schema(_variant(file_name), tmp_path)
            theirs = datasets.Features.from_arrow_schema(
                schema
            ) == datasets.Features._from_yaml_list(card_features._to_yaml_list())
            assert (ours == _schema_features(schema)) == theirs, (card_name, file_name)
            decisions[card_name, file_name] = theirs
    # Worked out by hand: the same features, or a struct's fields in another order (a struct is
    # a dict to datasets), agree; every other change is another feature.
    same = {"base", "the struct's fields in another order"}
    for (card_name, file_name), decision in decisions.items():
        assert decision == (card_name == file_name or {card_name, file_name} == same)


def _folder(tmp_path: Path) -> Path:
    import datasets

    rows = _rows()
    splits = {"train": rows[:1], "test": rows[1:] + rows[:1]}
    return write_dataset_folder(
        tmp_path / "d",
        {
            "c": {
                name: datasets.Dataset.from_list(r, features=_features())
                for name, r in splits.items()
            }
        },
        META,
        "# t",
    )


def test_a_file_whose_features_are_not_the_cards_is_read_by_load_dataset(tmp_path: Path) -> None:
    import datasets

    folder = _folder(tmp_path)
    assert built_rows(folder, "c", "test") is not None
    # The same columns and Arrow types, but other label names recorded in the file.
    path = folder / "c" / "test-00000-of-00001.parquet"
    path.unlink()
    datasets.Dataset.from_list(_rows(), features=_variant("other label names")).to_parquet(
        str(path)
    )
    assert built_rows(folder, "c", "test") is None
    rows, splits = dataset_rows(folder, "c", "test")
    assert splits == ["test"]
    assert rows == load_dataset_split(folder, "c", "test").to_list()
    assert [row["label"] for row in rows] == [1, 0]  # as written; datasets casts nothing here


READ_ROWS = """
import json, sys
from pathlib import Path
from bias_hub.pipelines.common.locations import dataset_folder, dataset_rows
folder = dataset_folder(sys.argv[1])
read = {split: dataset_rows(folder, "c", split) for split in ("train", "test", "all")}
read[None] = dataset_rows(folder, "c", None)
loaded = sorted(m for m in ("datasets", "huggingface_hub.repocard", "pandas") if m in sys.modules)
print(json.dumps([[split, rows, names] for split, (rows, names) in read.items()] + [loaded]))
"""


def test_reading_a_built_folders_rows_imports_no_datasets_card_classes_or_pandas(
    tmp_path: Path,
) -> None:
    folder = _folder(tmp_path)
    done = subprocess.run(
        [sys.executable, "-c", READ_ROWS, str(folder)], capture_output=True, text=True, check=True
    )
    *read, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == [], done.stderr[-2000:]
    every = load_dataset_split(folder, "c", None)
    train, test = every["train"].to_list(), every["test"].to_list()
    assert read == [
        ["train", train, ["train"]],
        ["test", test, ["test"]],
        ["all", load_dataset_split(folder, "c", "all").to_list(), ["all"]],
        [None, train + test, ["train", "test"]],
    ]
    # The rows as written (float32 0.1 read back as datasets gives it, within 1e-8).
    assert [row["id"] for row in train + test] == ["a", "b", "a"]
    assert test[0]["span"] == [1, 1] and test[1]["answers"] == [{"text": "p", "group": "g"}]
    assert abs(train[0]["score"] - 0.1) < 1e-8


@pytest.mark.parametrize(
    "card",
    [
        {"dataset_info": {"features": [{"name": "x", "dtype": "string"}]}},  # one config: default
        {"dataset_info": [{"config_name": "c", "features": [{"name": "x", "dtype": "string"}]}]},
    ],
)
def test_a_card_with_one_dataset_info_or_a_list_of_them(card: dict) -> None:
    config = "default" if isinstance(card["dataset_info"], dict) else "c"
    assert _card_features(card) == {config: {"x": ("Value", "string")}}


def test_kinds_outside_our_form_are_left_to_datasets() -> None:
    image = {"dataset_info": [{"config_name": "c", "features": [{"name": "x", "dtype": "image"}]}]}
    # One config outside our form leaves every config to datasets, which reads the card whole.
    other = {"config_name": "d", "features": [{"name": "x", "dtype": "string"}]}
    assert _card_features(image) == {}
    assert _card_features({"dataset_info": image["dataset_info"] + [other]}) == {}
    missing_id = {"name": "y", "dtype": {"class_label": {"names": {"0": "a", "2": "b"}}}}
    assert _card_features({"dataset_info": [{"features": [missing_id]}]}) == {}
    no_counts = {"features": [{"name": "x", "dtype": "string"}], "splits": [{"name": "test"}]}
    assert _card_features({"dataset_info": [no_counts]}) == {}
