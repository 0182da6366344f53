"""`bias-hub build bbq --source` on a BBQ checkout as it is laid out, and the split of every question.

(Named to run after test_builder_contract.py, whose log-capture check fails once any
earlier test has run `main`: pytest then also captures on the non-propagating "builders" logger.)
"""

from __future__ import annotations

import json
import tarfile
from pathlib import Path

import pytest
import yaml

from bias_hub.pipelines.cli import main


def _rows(category: str, n_templates: int, first_id: int = 0) -> list[dict]:
    """BBQ-format question rows, four per template (neg/nonneg x ambig/disambig)."""
    rows = []
    for q in range(1, n_templates + 1):
        info = {
            "ans0": ["grandfather", "old"],
            "ans1": ["Not known", "unknown"],
            "ans2": ["teenager", "nonOld"],
        }
        for polarity in ("neg", "nonneg"):
            for condition in ("ambig", "disambig"):
                rows.append(
                    {
                        "example_id": first_id + len(rows),
                        "question_index": str(q),
                        "question_polarity": polarity,
                        "context_condition": condition,
                        "category": category,
                        "answer_info": info,
                        "additional_metadata": {
                            "subcategory": "None",
                            "stereotyped_groups": ["old"],
                            "version": "a",
                            "source": "written for the tests",
                        },
                        "context": f"Template {q}: a grandfather and a teenager waited.",
                        "question": "Who was late?",
                        "ans0": "The grandfather",
                        "ans1": "Not known",
                        "ans2": "The teenager",
                        "label": 1 if condition == "ambig" else (0 if polarity == "neg" else 2),
                    }
                )
    return rows


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


def _checkout(root: Path) -> Path:
    """A BBQ checkout's layout: data/, results/UnifiedQA/preds_*.jsonl (same ids), templates/."""
    _write_jsonl(root / "data" / "Age.jsonl", _rows("Age", 5))
    _write_jsonl(root / "data" / "Religion.jsonl", _rows("Religion", 3))
    for category, n in (("Age", 5), ("Religion", 3)):
        preds = [{**row, "prediction": "The teenager"} for row in _rows(category, n)]
        _write_jsonl(root / "results" / "UnifiedQA" / f"preds_{category}.jsonl", preds)
    (root / "templates").mkdir()
    (root / "templates" / "new_templates - Filler_items.csv").write_text(
        "Q_id,Category,Notes,Context,Question_negative_stereotype,Question_non_negative,Ans0,Ans1,Ans2,"
        "Label_neg_ans,Label_non_neg_ans\n1,Age,,Two people met.,Who left?,Who stayed?,first,second,Unknown,0,1\n",
        encoding="utf-8",
    )
    (root / "README.md").write_text("a BBQ checkout written for the tests\n", encoding="utf-8")
    return root


def _sizes(folder: Path) -> dict[str, int]:
    card = yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---\n", 2)[1])
    return {
        info["config_name"]: sum(s["num_examples"] for s in info["splits"])
        for info in card["dataset_info"]
    }


@pytest.mark.parametrize("as_archive", [False, True])
def test_a_checkout_root_reads_data_only(tmp_path: Path, as_archive: bool, capsys) -> None:
    source = _checkout(tmp_path / "BBQ")
    if as_archive:
        archive = tmp_path / "BBQ.tar.gz"
        with tarfile.open(archive, "w:gz") as tar:
            tar.add(source, arcname="BBQ-main")
        source = archive
    out = tmp_path / "out"
    assert main(["build", "bbq", "--source", str(source), "--out-root", str(out)]) == 0
    # 5 and 3 templates of 4 questions; the predictions in results/ are not questions
    assert _sizes(out / "bbq") == {"Age": 20, "Religion": 12, "all": 32}
    error = capsys.readouterr().err
    assert (
        "ignored 2 other .jsonl file(s) such as " in error
        and "results/UnifiedQA/preds_Age.jsonl" in error
    )


def test_a_repeated_id_names_both_files(tmp_path: Path, capsys) -> None:
    _write_jsonl(tmp_path / "BBQ" / "data" / "Age.jsonl", _rows("Age", 3))
    _write_jsonl(tmp_path / "BBQ" / "data" / "Age_more.jsonl", _rows("Age", 1, first_id=11))
    assert (
        main(
            ["build", "bbq", "--source", str(tmp_path / "BBQ"), "--out-root", str(tmp_path / "out")]
        )
        == 2
    )
    error = capsys.readouterr().err
    assert "example_id 11 appears twice in category 'Age'" in error
    assert "Age.jsonl, line 12 and " in error and "Age_more.jsonl, line 1" in error
    assert not (tmp_path / "out" / "bbq").exists()


@pytest.mark.slow  # builds whole dataset folders end to end
def test_every_question_in_one_split(tmp_path: Path) -> None:
    import datasets

    _write_jsonl(tmp_path / "BBQ" / "data" / "Age.jsonl", _rows("Age", 10))
    _write_jsonl(tmp_path / "BBQ" / "data" / "Religion.jsonl", _rows("Religion", 4))
    out = tmp_path / "out"
    assert main(["build", "bbq", "--source", str(tmp_path / "BBQ"), "--out-root", str(out)]) == 0
    folder = str(out / "bbq")
    for config, n in (("all", 56), ("Age", 40), ("Religion", 16)):
        everything = datasets.load_dataset(folder, config, split="all")
        keys = list(zip(everything["category"], everything["example_id"], strict=True))
        assert len(keys) == len(set(keys)) == n
        by_split = datasets.load_dataset(folder, config)
        assert sorted(keys) == sorted(
            key
            for split in ("train", "dev", "test")
            for key in zip(by_split[split]["category"], by_split[split]["example_id"], strict=True)
        )
    card = (out / "bbq" / "README.md").read_text(encoding="utf-8")
    assert 'split="all"' in card and "56 in config `all`" in card
