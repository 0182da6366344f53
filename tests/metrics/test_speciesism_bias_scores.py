"""speciesism_bias: change rates, association and negative shares on hand-made numbers."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bias_hub.pipelines.common.locations import import_evaluate

# Two human-form rows and one object-form row over a vocabulary of 4 (chance 1/4).
# Mean human A = [0.375, 0.375, 0.125, 0.125]; object B = [0.125, 0.25, 0.5, 0.125].
HUMAN = [[0.5, 0.25, 0.25, 0.0], [0.25, 0.5, 0.0, 0.25]]
OBJECT = [[0.125, 0.25, 0.5, 0.125]]
WORDS = ["kind", "big", "dried", "eaten"]


METRIC = str(Path(__file__).resolve().parents[2] / "metrics" / "speciesism_bias")


@pytest.fixture(scope="module")
def change():
    return import_evaluate().load(METRIC)


def test_change_rate_by_hand(change):
    result = change.compute(
        probabilities=HUMAN + OBJECT, forms=["human", "human", "object"], vocabulary=WORDS
    )
    assert result["chance"] == 0.25
    assert result["n_rows"] == {"human": 2, "object": 1}
    # Above chance in the human form: kind and big (0.375); in the object form: dried only
    # (big sits exactly at chance, 0.25, and chance is a strict bound).
    assert result["n_above_chance"] == {"human": 2, "object": 1}
    # The study's tables list drops, most negative first. From the human form:
    # kind (0.125 - 0.375) / 0.375 = -2/3, then big (0.25 - 0.375) / 0.375 = -1/3.
    human_to_object = [(r["word"], r["change_rate"]) for r in result["human_to_object"]]
    assert [w for w, _ in human_to_object] == ["kind", "big"]
    assert human_to_object[0][1] == pytest.approx(-2 / 3)
    assert human_to_object[1][1] == pytest.approx(-1 / 3)
    # dried: (0.125 - 0.5) / 0.5 = -0.75
    (entry,) = result["object_to_human"]
    assert entry["word"] == "dried"
    assert entry["change_rate"] == pytest.approx(-0.75)
    assert entry["p_start"] == pytest.approx(0.5)
    assert entry["p_end"] == pytest.approx(0.125)
    # Nothing above chance in either starting form rises.
    assert result["gains"] == {"human_to_object": [], "object_to_human": []}


def test_gains_are_listed_apart_from_the_drops(change):
    # Human mean [0.45, 0.3, 0.05, 0.2], object mean [0.1, 0.4, 0.3, 0.2], chance 1/4.
    # From the human form: kind 0.45 -> 0.1 drops (-7/9), big 0.3 -> 0.4 rises (+1/3).
    # From the object form: dried 0.3 -> 0.05 (-5/6) and big 0.4 -> 0.3 (-1/4) drop.
    result = change.compute(
        probabilities=[[0.45, 0.3, 0.05, 0.2], [0.1, 0.4, 0.3, 0.2]],
        forms=["human", "object"],
        vocabulary=WORDS,
    )
    assert [(r["word"], r["change_rate"]) for r in result["human_to_object"]] == [
        ("kind", pytest.approx(-7 / 9))
    ]
    assert [(r["word"], r["change_rate"]) for r in result["object_to_human"]] == [
        ("dried", pytest.approx(-5 / 6)),
        ("big", pytest.approx(-1 / 4)),
    ]
    assert [(r["word"], r["change_rate"]) for r in result["gains"]["human_to_object"]] == [
        ("big", pytest.approx(1 / 3))
    ]
    assert result["gains"]["object_to_human"] == []


def test_candidates_and_top_k(change):
    result = change.compute(
        probabilities=HUMAN + OBJECT,
        forms=["human", "human", "object"],
        vocabulary=WORDS,
        candidates=[False, True, True, True],
        top_k=1,
    )
    # kind would come first (-2/3) but may not be listed; big (-1/3) is next.
    assert [r["word"] for r in result["human_to_object"]] == ["big"]


def test_other_form_names(change):
    result = change.compute(
        probabilities=[[0.75, 0.25], [0.25, 0.75]],
        forms=["she", "it"],
        from_form="she",
        to_form="it",
    )
    # chance 1/2; from "she" only item 0 (0.75 -> 0.25): -2/3; from "it" only item 1: -2/3
    assert result["she_to_it"][0]["word"] == "0"
    assert result["she_to_it"][0]["change_rate"] == pytest.approx(-2 / 3)
    assert result["it_to_she"][0]["index"] == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"forms": ["human", "human", "thing"]}, "forms: unknown form"),
        ({"forms": ["human", "human", "human"]}, "no row has the form 'object'"),
        ({"vocabulary": ["a", "b"]}, "vocabulary: expected 4"),
        ({"top_k": 0}, "top_k"),
        ({"candidates": [True]}, "candidates"),
    ],
)
def test_change_rate_bad_input(change, kwargs, message):
    arguments = {"probabilities": HUMAN + OBJECT, "forms": ["human", "human", "object"], **kwargs}
    with pytest.raises(ValueError, match=message):
        change.compute(**arguments)


def test_negative_probability_is_rejected(change):
    with pytest.raises(ValueError, match="probabilities"):
        change.compute(probabilities=[[1.5, -0.5], [0.5, 0.5]], forms=["human", "object"])


def test_association_by_hand():
    association = import_evaluate().load(METRIC, "association")
    result = association.compute(
        target_probabilities=[0.5, 0.1, 0.2],
        prior_probabilities=[0.25, 0.1, 0.4],
        groups=["a", "a", "b"],
    )
    assert result["association"] == pytest.approx([math.log(2), 0.0, math.log(0.5)])
    assert result["mean_association"] == pytest.approx(0.0)
    assert result["by_group"]["a"] == {"mean": pytest.approx(math.log(2) / 2), "n": 2}
    assert result["by_group"]["b"]["mean"] == pytest.approx(-math.log(2))
    with pytest.raises(ValueError, match="prior_probabilities"):
        association.compute(target_probabilities=[0.5], prior_probabilities=[0.0])


def test_negative_share_by_hand():
    share = import_evaluate().load(METRIC, "negative_share")
    result = share.compute(
        animals=["pig", "pig", "pig", "dog"], labels=["negative", "negative", "positive", "neutral"]
    )
    assert result["negative_share"] == {"dog": 0.0, "pig": pytest.approx(2 / 3)}
    assert result["positive_share"]["pig"] == pytest.approx(1 / 3)
    assert result["neutral_share"]["dog"] == 1.0
    assert result["n"] == {"dog": 1, "pig": 3}
    assert result["overall_negative_share"] == 0.5
    with pytest.raises(ValueError, match="labels: unknown label"):
        share.compute(animals=["pig"], labels=["bad"])


def test_template_intervals_resample_templates_within_each_form(change):
    # 2 human-form templates and 3 object-form templates, 2 animals each. Resampled
    # together, 5 templates would leave out both human ones in (3/5)^5 = 8 % of the
    # resamples (the rates then undefined); within each form every resample keeps both forms.
    human = [[0.6, 0.2, 0.2], [0.5, 0.3, 0.2], [0.7, 0.2, 0.1], [0.6, 0.3, 0.1]]
    object_ = [
        [0.2, 0.2, 0.6],
        [0.1, 0.3, 0.6],
        [0.2, 0.1, 0.7],
        [0.3, 0.2, 0.5],
        [0.2, 0.2, 0.6],
        [0.1, 0.4, 0.5],
    ]
    templates = ["h1", "h1", "h2", "h2", "o1", "o1", "o2", "o2", "o3", "o3"]
    result = change.compute(
        probabilities=human + object_,
        forms=["human"] * 4 + ["object"] * 6,
        vocabulary=["kind", "big", "dried"],
        templates=templates,
        confidence_level=0.9,
        n_resamples=500,
    )
    interval = result["confidence_intervals"]["human_to_object[0]"]
    assert result["human_to_object"][0]["word"] == "kind"
    assert interval["unit"] == "templates" and interval["n_units"] == 5
    assert interval["reason"] is None
    # kind's rate in any resample lies between its most extreme template pairs:
    # human means per template 0.55 / 0.65, object 0.15 / 0.25 / 0.2.
    assert (0.15 - 0.65) / 0.65 <= interval["low"] <= interval["high"] <= (0.25 - 0.55) / 0.55


def test_paired_negative_shares_by_hand():
    paired = import_evaluate().load(METRIC, "negative_share_paired")
    # Matched fills of two animals. pig: A 1 of 3 negative, B 3 of 3; dog: A 1 of 2, B 0 of 2.
    result = paired.compute(
        animals=["pig", "pig", "pig", "dog", "dog"],
        labels=["negative", "neutral", "positive", "negative", "neutral"],
        labels_b=["negative", "negative", "negative", "neutral", "neutral"],
        n_resamples=1000,
    )
    scores = result["scores"]
    assert scores["negative_share.pig"]["difference"] == pytest.approx(3 / 3 - 1 / 3)
    assert scores["negative_share.dog"]["difference"] == pytest.approx(0 / 2 - 1 / 2)
    assert scores["overall_negative_share"]["difference"] == pytest.approx(3 / 5 - 2 / 5)
    # Exact test over 2^5 = 32 swaps. Fills that differ: pig 2 and 3 (B negative) and dog 1
    # (A negative); each swap moves the overall difference by 2/5. Observed +1/5 = (2 - 1)/5;
    # |D| >= 1/5 in every arrangement (3 moving fills give D in {±1/5, ±3/5}): p = 1.
    assert scores["overall_negative_share"]["p_value"] == pytest.approx(1.0)
    assert scores["overall_negative_share"]["p_value_method"] == "exact"
    # pig alone: D = (k_B - k_A)/3 over its 2 moving fills, |D| >= 2/3 in 2 of 4: p = 0.5
    assert scores["negative_share.pig"]["p_value"] == pytest.approx(0.5)
    assert result["n"] == {"dog": 2, "pig": 3}
    with pytest.raises(ValueError, match="labels_b: expected 5 labels"):
        paired.compute(animals=["pig"] * 5, labels=["negative"] * 5, labels_b=["negative"] * 4)
    with pytest.raises(ValueError, match="at least 2 fills"):
        paired.compute(animals=["pig"], labels=["negative"], labels_b=["neutral"])


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        # 'kind' twice gave a table listing it twice with different values
        (
            {"vocabulary": ["kind", "kind", "dried", "eaten"]},
            r"vocabulary\[1\] is 'kind', as vocabulary\[0\]",
        ),
        # a non-string item used to be accepted
        (
            {"vocabulary": ["kind", 2, "dried", "eaten"]},
            r"vocabulary\[1\] is 2; expected the item's name",
        ),
        # a row of probabilities summing to 3 passed the per-value check
        (
            {"probabilities": [[1, 1, 1, 0], [0.1, 0.4, 0.3, 0.2]]},
            r"probabilities\[0\] sums to 3.0; a row is one distribution",
        ),
    ],
    ids=["an item twice", "an item not a string", "a row summing to 3"],
)
def test_change_rate_refuses_a_vocabulary_or_rows_that_are_no_distribution(change, edit, message):
    inputs = {
        "probabilities": [[0.45, 0.3, 0.05, 0.2], [0.1, 0.4, 0.3, 0.2]],
        "forms": ["human", "object"],
        "vocabulary": ["kind", "big", "dried", "eaten"],
    } | edit
    with pytest.raises(ValueError, match=message):
        change.compute(**inputs)
