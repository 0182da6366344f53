from __future__ import annotations

from pathlib import Path

import datasets
import pytest
import yaml

from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder
from bias_hub.builders.shared.card import size_category

FEATURES = datasets.Features(
    {
        "text": datasets.Value("string"),
        "label": datasets.ClassLabel(names=["entailment", "neutral", "contradiction"]),
    }
)
META = CardMetadata(
    pretty_name="Tiny", license="mit", language=["ja"], task_categories=["text-classification"]
)


def _configs(n: int) -> dict:
    rows = [{"text": f"row {i}", "label": i % 3} for i in range(n)]
    return {
        "first": {"test": datasets.Dataset.from_list(rows, features=FEATURES)},
        "second": {
            "train": datasets.Dataset.from_list(rows[:2], features=FEATURES),
            "test": datasets.Dataset.from_list(rows[2:], features=FEATURES),
        },
    }


def test_written_folder_loads_offline_with_typed_features(tmp_path: Path) -> None:
    folder = write_dataset_folder(tmp_path / "tiny", _configs(5), META, "# Tiny\n")
    loaded = datasets.load_dataset(str(folder), "second")
    assert loaded["train"].num_rows == 2 and loaded["test"].num_rows == 3
    assert loaded["test"].features["label"].names == ["entailment", "neutral", "contradiction"]
    card = yaml.safe_load((folder / "README.md").read_text().split("---")[1])
    assert [c["config_name"] for c in card["configs"]] == ["first", "second"]
    splits = card["dataset_info"][1]["splits"]
    assert [(s["name"], s["num_examples"]) for s in splits] == [("train", 2), ("test", 3)]
    assert all(isinstance(s["num_bytes"], int) and s["num_bytes"] > 0 for s in splits)
    assert card["size_categories"] == ["n<1K"]


def test_loading_keeps_the_card_split_counts(tmp_path: Path, caplog) -> None:
    folder = write_dataset_folder(tmp_path / "tiny", _configs(5), META, "# Tiny\n")
    builder = datasets.load_dataset_builder(str(folder), "second")
    assert builder.info.splits["test"].num_examples == 3
    assert "Ignoring part of dataset_info" not in caplog.text


def test_rebuilt_folder_loads_the_new_rows(tmp_path: Path) -> None:
    features = datasets.Features({"x": datasets.Value("int64")})
    folder = tmp_path / "rebuilt"
    for values in ([1, 2, 3], [7, 8, 9]):
        configs = {"a": {"test": datasets.Dataset.from_dict({"x": values}, features=features)}}
        write_dataset_folder(folder, configs, META, "# rebuilt")
        assert datasets.load_dataset(str(folder), "a")["test"]["x"][:] == values


def test_failed_build_leaves_previous_folder_untouched(tmp_path: Path, monkeypatch) -> None:
    folder = write_dataset_folder(tmp_path / "tiny", _configs(4), META, "# Old\n")
    before = sorted(p.relative_to(folder) for p in folder.rglob("*"))

    def broken(self, path):
        Path(path).write_bytes(b"half")
        raise OSError("disk full")

    monkeypatch.setattr(datasets.Dataset, "to_parquet", broken)
    with pytest.raises(OSError, match="disk full"):
        write_dataset_folder(tmp_path / "tiny", _configs(6), META, "# New\n")
    assert sorted(p.relative_to(folder) for p in folder.rglob("*")) == before
    assert (folder / "README.md").read_text().endswith("# Old\n")
    assert [p.name for p in tmp_path.iterdir()] == ["tiny"]


def test_empty_split_is_refused_by_name(tmp_path: Path) -> None:
    empty = datasets.Dataset.from_dict({"text": [], "label": []}, features=FEATURES)
    configs = {"only": {"test": empty}}
    with pytest.raises(ValueError, match="'only', split 'test' is empty"):
        write_dataset_folder(tmp_path / "tiny", configs, META, "")


@pytest.mark.parametrize(
    ("rows", "bucket"),
    [
        (0, "n<1K"),
        (999, "n<1K"),
        (1000, "1K<n<10K"),
        (54_000, "10K<n<100K"),
        (9_999_999, "1M<n<10M"),
        (10_000_000, "10M<n<100M"),
        (10**12, "n>1T"),
    ],
)
def test_size_category_bounds(rows: int, bucket: str) -> None:
    assert size_category(rows) == bucket


def test_one_size_table_with_the_hubs_names() -> None:
    from bias_hub.builders.shared.card import SIZE_CATEGORIES
    from bias_hub.pipelines.publish import hub_rules

    assert (
        hub_rules.size_category is size_category
    )  # publish checks with the table cards are written with
    # DatasetCardData's documented options (huggingface_hub), in order; "other" is for no count.
    assert [name for _, name in SIZE_CATEGORIES] + ["n>1T"] == [
        "n<1K",
        "1K<n<10K",
        "10K<n<100K",
        "100K<n<1M",
        "1M<n<10M",
        "10M<n<100M",
        "100M<n<1B",
        "1B<n<10B",
        "10B<n<100B",
        "100B<n<1T",
        "n>1T",
    ]
