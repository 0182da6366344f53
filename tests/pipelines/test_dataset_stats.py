from __future__ import annotations

from pathlib import Path

import datasets

from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder
from bias_hub.pipelines.dataset_stats.demo import run_demo
from bias_hub.pipelines.dataset_stats.stats import statistics_markdown


def test_statistics_count_rows_per_config_and_split(tmp_path: Path) -> None:
    features = datasets.Features({"x": datasets.Value("int64")})
    configs = {
        "a": {"test": datasets.Dataset.from_dict({"x": [1, 2, 3]}, features=features)},
        "b": {
            "train": datasets.Dataset.from_dict({"x": [1]}, features=features),
            "test": datasets.Dataset.from_dict({"x": [1, 2]}, features=features),
        },
    }
    meta = CardMetadata(pretty_name="T", license="mit", language=["en"], task_categories=["other"])
    write_dataset_folder(tmp_path / "datasets" / "toy", configs, meta, "# toy")
    summary = run_demo(tmp_path / "out", datasets_root=tmp_path / "datasets")
    assert summary["summary"].splitlines() == [
        "| dataset | config | train | test | total |",
        "|---|---|---:|---:|---:|",
        "| toy | a | – | 3 | 3 |",
        "| toy | b | 1 | 2 | 3 |",
    ]
    assert (tmp_path / "out" / "report.md").is_file()


def test_statistics_table_has_one_row_per_config_and_a_column_per_split() -> None:
    stats = {
        "jbbq": {"all": {"test": 448, "train": 1200}},
        "nli": {"jsnli": {"validation": 3916, "train": 533005}, "r0.5": {"extra": 7, "test": 20}},
    }
    assert statistics_markdown(stats).splitlines() == [
        "| dataset | config | train | validation | test | extra | total |",
        "|---|---|---:|---:|---:|---:|---:|",
        "| jbbq | all | 1,200 | – | 448 | – | 1,648 |",
        "| nli | jsnli | 533,005 | 3,916 | – | – | 536,921 |",
        "| nli | r0.5 | – | – | 20 | 7 | 27 |",
    ]
    assert "`bias-hub build all`" in statistics_markdown({})
