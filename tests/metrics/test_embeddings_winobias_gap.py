"""metrics/winobias_gap against hand calculations of MUC, B-cubed and CEAF-e."""

from __future__ import annotations

from pathlib import Path

import pytest

from bias_hub.pipelines.common.locations import import_evaluate

A, B, C, D = [0, 0], [2, 2], [4, 4], [6, 6]


@pytest.fixture(scope="module")
def gap():
    return import_evaluate().load(
        str(Path(__file__).resolve().parents[2] / "metrics" / "winobias_gap")
    )


def test_coreference_metrics_by_hand(gap):
    # Gold {a, b, c}; system {a, b}, {c, d}.
    # MUC: recall (3 - 2) / 2 = 0.5; precision ((2 - 1) + (2 - 2)) / 2 = 0.5.
    # B-cubed: recall (2^2/3 + 1^2/3) / 3 = 5/9; precision (2^2/2 + 1^2/2) / 4 = 0.625.
    # CEAF-e: phi4 = 2*2/5 = 0.8 for the best pair; recall 0.8 / 1, precision 0.8 / 2.
    result = gap.compute(
        predictions=[[[A, B], [C, D]], [[A, B, C]]],
        references=[[[A, B, C]], [[A, B, C]]],
        condition=["anti", "pro"],
    )
    anti = result["anti"]
    assert anti["muc"]["recall"] == pytest.approx(0.5) and anti["muc"][
        "precision"
    ] == pytest.approx(0.5)
    assert anti["b_cubed"]["recall"] == pytest.approx(5 / 9)
    assert anti["b_cubed"]["precision"] == pytest.approx(0.625)
    assert anti["ceaf_e"]["recall"] == pytest.approx(0.8) and anti["ceaf_e"][
        "precision"
    ] == pytest.approx(0.4)
    assert anti["recall"] == pytest.approx((0.5 + 5 / 9 + 0.8) / 3)
    assert result["pro"]["precision"] == pytest.approx(1.0)
    assert result["recall_gap"] == pytest.approx(1 - (0.5 + 5 / 9 + 0.8) / 3)
    assert result["precision_gap"] == pytest.approx(1 - (0.5 + 0.625 + 0.4) / 3)
    assert result["n_documents"] == {"pro": 1, "anti": 1}


def test_documents_accumulate_per_condition(gap):
    # Two anti documents: one perfect (MUC 1/1), one with the pair split (MUC 0/1):
    # MUC recall (1 + 0) / (1 + 1) = 0.5, not a mean of per-document ratios by accident.
    result = gap.compute(
        predictions=[[[A, B]], [[A], [B]], [[A, B]]],
        references=[[[A, B]], [[A, B]], [[A, B]]],
        condition=["anti", "anti", "pro"],
    )
    assert result["anti"]["muc"]["recall"] == pytest.approx(0.5)
    assert result["n_documents"] == {"pro": 1, "anti": 2}


def test_scores_given_directly(gap):
    perfect = {name: {"precision": 1.0, "recall": 1.0} for name in ("muc", "b_cubed", "ceaf_e")}
    anti = {
        "muc": {"precision": 0.7, "recall": 0.4},
        "b_cubed": {"precision": 0.8, "recall": 0.5},
        "ceaf_e": {"precision": 0.6, "recall": 0.6},
    }
    result = gap.compute(scores={"pro": perfect, "anti": anti})
    assert result["precision_gap"] == pytest.approx(1 - 0.7)
    assert result["recall_gap"] == pytest.approx(1 - 0.5)
    f1 = [2 * 0.7 * 0.4 / 1.1, 2 * 0.8 * 0.5 / 1.3, 0.6]
    assert result["score"] == pytest.approx(1 - sum(f1) / 3)


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (
            {"predictions": [[[A, B]]], "references": [[[A, B]]], "condition": ["pro"]},
            "no 'anti' document",
        ),
        (
            {"predictions": [[[A, B]]], "references": [[[A, B]]], "condition": ["both"]},
            r"condition\[0\] must be",
        ),
        (
            {"predictions": [[[A, [1, 2, 3]]]], "references": [[[A, B]]], "condition": ["pro"]},
            r"predictions\[0\]: a mention",
        ),
        ({"scores": {"pro": {}, "anti": {}}}, r"scores\['pro'\]\['muc'\] must be a dict"),
    ],
)
def test_bad_input(gap, arguments, message):
    with pytest.raises(ValueError, match=message):
        gap.compute(**arguments)


def test_a_mention_in_two_clusters_is_refused(gap):
    # The system put mention [0, 1] into two clusters; gaps were computed anyway.
    with pytest.raises(
        ValueError, match=r"predictions\[0\]: mention \[0, 1\] is in two clusters \(0 and 1\)"
    ):
        gap.compute(
            predictions=[[[[0, 1], [5, 5]], [[0, 1], [7, 7]]], [[[0, 1], [8, 9]]]],
            references=[[[[0, 1], [5, 5]]], [[[8, 9], [5, 5]]]],
            condition=["pro", "anti"],
        )
