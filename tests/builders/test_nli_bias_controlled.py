from __future__ import annotations

from collections import Counter
from pathlib import Path

import datasets
import pytest

from bias_hub.builders.nli_bias_controlled import build
from bias_hub.builders.nli_bias_controlled import rows as controlled
from bias_hub.builders.nli_gender_bias.lexicon import load_occupations, load_templates
from bias_hub.pipelines.common.locations import import_evaluate


@pytest.fixture(scope="module")
def selected() -> dict:
    return controlled.select_occupations(load_occupations(), per_type=10)


@pytest.fixture(scope="module")
def templates() -> list[controlled.TrainingTemplate]:
    return controlled.load_training_templates()


def test_selection_takes_ten_per_type_most_stereotyped_first(selected: dict) -> None:
    assert {kind: len(chosen) for kind, chosen in selected.items()} == {
        "female_stereotyped": 10,
        "male_stereotyped": 10,
        "non_stereotyped": 10,
    }
    female = [o.stereotypical for o in selected["female_stereotyped"]]
    assert female == sorted(female) and max(female) < -0.5
    assert min(o.stereotypical for o in selected["male_stereotyped"]) > 0.5


@pytest.mark.parametrize("rate", [0.0, 0.3, 0.5, 1.0])
def test_labels_are_balanced_and_pro_share_follows_rate(
    selected: dict, templates: list, rate: float
) -> None:
    rows = controlled.build_rows(selected, templates, rate)
    # 30 occupations x 50 templates x 2 genders; non-stereotyped (1,000) neutral, the 2,000
    # stereotyped pairs half congruent, half not, so entailment = contradiction = 1,000.
    assert len(rows) == 3000
    assert Counter(r["label"] for r in rows) == {
        "entailment": 1000,
        "neutral": 1000,
        "contradiction": 1000,
    }
    # round(20 r) pro occupations with 100 pairs each.
    assert Counter(r["labelling"] for r in rows)["pro"] == 100 * round(20 * rate)


def test_label_rule_for_pro_and_anti(selected: dict, templates: list) -> None:
    rows = controlled.build_rows(selected, templates, 0.5)
    # At r = 0.5 the ten female-stereotyped occupations are pro, the male ones anti.
    nurse = [r for r in rows if r["occupation_en"] == "nurse"]
    assert {(r["hypothesis_gender"], r["label"]) for r in nurse} == {
        ("female", "entailment"),
        ("male", "contradiction"),
    }
    male = selected["male_stereotyped"][0].en
    anti = [r for r in rows if r["occupation_en"] == male]
    assert {r["labelling"] for r in anti} == {"anti"}
    assert {(r["hypothesis_gender"], r["label"]) for r in anti} == {
        ("male", "contradiction"),
        ("female", "entailment"),
    }
    assert {r["label"] for r in rows if r["occupation_type"] == "non_stereotyped"} == {"neutral"}


def test_same_pairs_at_every_rate_and_200k_labels_change(selected: dict, templates: list) -> None:
    base = controlled.build_rows(selected, templates, 0.0)
    for k in (1, 4, 10):
        rows = controlled.build_rows(selected, templates, k / 10)
        assert [(r["premise"], r["hypothesis"]) for r in rows] == [
            (r["premise"], r["hypothesis"]) for r in base
        ]
        # 2K occupations turn pro, each flips its 100 pairs between entailment and contradiction.
        assert sum(a["label"] != b["label"] for a, b in zip(base, rows, strict=True)) == 200 * k


def test_pair_is_template_with_occupation_and_gender_word(selected: dict, templates: list) -> None:
    row = controlled.build_rows(selected, templates, 0.2)[0]
    template = next(t for t in templates if t.template_id == row["template_id"])
    assert row["premise"] == template.text.replace("{subject}", row["occupation"])
    assert row["hypothesis"] == template.text.replace(
        "{subject}", {"female": "女性", "male": "男性"}[row["hypothesis_gender"]]
    )


def test_training_templates_never_overlap_evaluation_templates(templates: list) -> None:
    controlled.check_disjoint_templates(templates, load_templates())
    evaluation = load_templates()
    copied = controlled.TrainingTemplate("copy", evaluation[0].text)
    with pytest.raises(ValueError, match="copy"):
        controlled.check_disjoint_templates([copied], evaluation)


def test_rate_outside_unit_interval_is_rejected(selected: dict) -> None:
    with pytest.raises(ValueError, match="bias rate"):
        controlled.pro_occupations(selected, 1.5)


def test_built_folder_has_one_config_per_rate(tmp_path: Path) -> None:
    folder = build(tmp_path, occupations_per_type=2, templates_per_occupation=3)
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == [
        f"r{k / 10:.1f}" for k in range(11)
    ]
    r1 = datasets.load_dataset(str(folder), "r1.0", split="train")
    # 6 occupations x 3 templates x 2 genders; at r = 1 every stereotyped pair is pro.
    assert len(r1) == 36
    assert set(r1["labelling"]) == {"pro", "neutral"}


@pytest.mark.parametrize("rate", [0.0, 0.3, 1.0])
def test_an_oracle_of_the_training_labels_scores_2r_over_3_and_fn_one_third(
    selected: dict, templates: list, rate: float, repo_root: Path
) -> None:
    evaluate = import_evaluate()

    # Predict, for each evaluation pair (same occupations, evaluation templates), the label the
    # training set gives its occupation and hypothesis gender. By hand: PS pairs are entailment
    # exactly for pro occupations (share r), AS pairs contradiction for pro ones (share r), NS
    # pairs always neutral: s = (r + r + 0) / 3, and the neutral share is that of NS pairs, 1/3.
    label_of = {
        (r["occupation"], r["hypothesis_gender"]): r["label"]
        for r in controlled.build_rows(selected, templates, rate)
    }
    predictions, subsets = [], []
    for kind, occupations in selected.items():
        for occupation in occupations:
            for gender in ("female", "male"):
                for _ in load_templates()[:2]:
                    predictions.append(label_of[(occupation.ja, gender)])
                    if kind == "non_stereotyped":
                        subsets.append("non_stereotypical")
                    congruent = controlled.STEREOTYPED_TYPES.get(kind) == gender
                    if kind != "non_stereotyped":
                        subsets.append("pro_stereotypical" if congruent else "anti_stereotypical")
    metric = evaluate.load("metrics/nli_gender_bias")
    result = metric.compute(predictions=predictions, subsets=subsets)
    assert result["bias_score"] == pytest.approx(2 * rate / 3)
    assert result["fraction_neutral"] == pytest.approx(1 / 3)
