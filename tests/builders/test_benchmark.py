"""Every benchmark dataset as a Hub Benchmark: the ``eval.yaml`` a build writes and its checks
(``publish`` pushing it: tests/pipelines/test_publish_command.py)."""

from __future__ import annotations

from pathlib import Path

import yaml

from bias_hub.builders.shared.benchmark import (
    EVAL_YAML,
    eval_yaml,
    eval_yaml_problems,
    eval_yaml_text,
    tasks,
)
from bias_hub.builders.shared.card import read_card_yaml

REPO = Path(__file__).resolve().parents[2]
SPLITS = ["train", "dev", "test"]


def test_jbbq_tasks_are_its_four_headline_scores_then_the_same_per_category() -> None:
    spec = eval_yaml("jbbq", {"all": SPLITS, "Age": SPLITS, "Gender_identity": ["test"]})
    headline = [
        "accuracy_ambiguous",
        "accuracy_disambiguated",
        "bias_score_ambiguous",
        "bias_score_disambiguated",
    ]
    assert spec["tasks"] == (
        [{"id": name, "config": "all", "split": "test"} for name in headline]
        + [{"id": f"{name}_Age", "config": "Age", "split": "test"} for name in headline]
        + [
            {"id": f"{name}_Gender_identity", "config": "Gender_identity", "split": "test"}
            for name in headline
        ]
    )
    assert spec["evaluation_framework"] == "bias-hub"
    lines = spec["description"].splitlines()
    # The Hub's file has no direction field: the description says it, task by task.
    assert any(
        line.startswith("- `bias_score_ambiguous`") and "best at 0" in line for line in lines
    )
    assert any(
        line.startswith("- `accuracy_ambiguous`") and "higher is better" in line for line in lines
    )
    assert yaml.safe_load(eval_yaml_text(spec)) == spec


def test_a_task_takes_the_first_of_its_configs_the_build_holds() -> None:
    assert {
        t.config for t in tasks("nli_gender_bias", {"all": ["test"], "generated_all": ["test"]})
    } == {"all"}
    assert [t.id for t in tasks("nli_gender_bias", {"generated_all": ["test"]})] == [
        "bias_score",
        "fraction_neutral",
    ]
    # A build holding none of a benchmark's configs (or a folder that is no benchmark): no file.
    assert eval_yaml("nli_gender_bias", {"pro_stereotypical": ["test"]}) is None
    assert eval_yaml("weat_word_sets", {"en": ["test"]}) is None


def test_eval_yaml_problems_name_the_file_the_task_and_what_is_wrong(tmp_path: Path) -> None:
    spec = {
        "name": "X",
        "description": "",
        "evaluation_framework": "bias-hub",
        "tasks": [
            {"id": "a", "config": "all", "split": "test"},
            {"id": "a", "config": "all", "split": "test"},
            {"id": "b", "config": "Age", "split": "test"},
            {"id": "c", "config": "all", "split": "validation"},
            {"id": "d", "config": "all"},
        ],
    }
    (tmp_path / EVAL_YAML).write_text(yaml.safe_dump(spec), encoding="utf-8")
    path = tmp_path / EVAL_YAML
    assert eval_yaml_problems(tmp_path, {"all": ["train", "test"]}) == [
        f"{path}: `description` is missing or empty",
        f"{path}, task 2: id `a` appears twice",
        f"{path}, task 3 (`b`): config `Age` is not built here (configs: all)",
        f"{path}, task 4 (`c`): config `all` has no split `validation` (splits: train, test)",
        f"{path}, task 5: expected `id`, `config` and `split`, each a text",
    ]
    (tmp_path / EVAL_YAML).write_text("- just\n- a list\n", encoding="utf-8")
    assert eval_yaml_problems(tmp_path, {}) == [
        f"{path}: expected a mapping with name, description, tasks"
    ]


def test_each_committed_eval_yaml_is_what_a_build_of_its_card_writes() -> None:
    found = []
    for card in sorted((REPO / "datasets").glob("*/README.md")):
        header = read_card_yaml(card.parent)
        configs = {
            c["config_name"]: [f["split"] for f in c["data_files"]] for c in header["configs"]
        }
        expected = eval_yaml(card.parent.name, configs)
        committed = card.parent / EVAL_YAML
        if expected is None:
            assert not committed.exists(), f"{committed}: not a benchmark's build"
            continue
        assert committed.read_text(encoding="utf-8") == eval_yaml_text(expected), committed
        assert eval_yaml_problems(card.parent, configs) == []
        found.append(card.parent.name)
    assert found == ["jbbq", "nli_gender_bias", "speciesism_templates", "stereoset_gender_swap"]
