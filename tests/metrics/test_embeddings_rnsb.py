"""metrics/rnsb against hand calculations."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from bias_hub.pipelines.common.locations import import_evaluate, import_scores_module

METRIC = Path(__file__).resolve().parents[2] / "metrics" / "rnsb"


@pytest.fixture(scope="module")
def rnsb():
    return import_evaluate().load(str(METRIC))


@pytest.fixture(scope="module")
def module():
    return import_scores_module(METRIC)


def test_one_dimensional_fit_by_hand(rnsb):
    # X at -1, Y at +1, C = 1, n = 2: by symmetry b = 0 and w solves w = 2 sigmoid(-w),
    # whose fixed point is w = 0.6749 (iterated by hand), so P(Y | -1) = sigmoid(-w) = 0.3374
    # (section 2.1.2: X negative, Y positive, the positive probability is scored).
    result = rnsb.compute(
        words=["x", "y", "a", "b"],
        vectors=[[-1.0], [1.0], [-1.0], [1.0]],
        target_sets={"X": ["x"], "Y": ["y"]},
        attribute_sets={"A": ["a", "b"]},
        holdout=False,
        iterations=1,
    )
    assert result["trained_on"] == ["X", "Y"] and result["probability_of"] == "Y"
    assert result["probabilities"]["a"] == pytest.approx(0.3374, abs=2e-4)
    assert result["probabilities"]["b"] == pytest.approx(1 - 0.3374, abs=2e-4)
    p = result["distribution"]["a"]
    assert p == pytest.approx(0.3374, abs=2e-4)  # the two probabilities sum to one here
    assert result["kl_divergence"] == pytest.approx(
        p * math.log(2 * p) + (1 - p) * math.log(2 * (1 - p))
    )


def test_attribute_orientation_trains_on_the_attribute_sets_by_hand(rnsb):
    # WEFE's orientation: A (at -1) and B (at +1) train the classifier, the target words are
    # scored with P(B | w): the same fit as above, so P(B | x at -1) = 0.3374, P(B | y) = 0.6626.
    result = rnsb.compute(
        words=["x", "y", "a", "b"],
        vectors=[[-1.0], [1.0], [-1.0], [1.0]],
        target_sets={"X": ["x"], "Y": ["y"]},
        attribute_sets={"A": ["a"], "B": ["b"]},
        train_on="attribute_sets",
        holdout=False,
        iterations=1,
    )
    assert result["trained_on"] == ["A", "B"] and result["probability_of"] == "B"
    assert result["probabilities"] == pytest.approx({"x": 0.3374, "y": 0.6626}, abs=2e-4)


def test_orientations_differ_on_a_weat_query_and_swap_into_each_other(rnsb):
    rng = np.random.default_rng(3)
    words = [f"w{i}" for i in range(24)]
    vectors = rng.normal(size=(24, 5))
    targets = {"X": words[:6], "Y": words[6:12]}
    attributes = {"A": words[12:18], "B": words[18:]}
    common = dict(words=words, vectors=vectors, iterations=2, seed=4)
    on_attributes = rnsb.compute(
        **common, target_sets=targets, attribute_sets=attributes, train_on="attribute_sets"
    )
    on_targets = rnsb.compute(
        **common, target_sets=targets, attribute_sets=attributes, train_on="target_sets"
    )
    assert sorted(on_attributes["probabilities"]) == sorted(words[:12])
    assert sorted(on_targets["probabilities"]) == sorted(words[12:])
    assert on_attributes["score"] != pytest.approx(on_targets["score"])
    # Training on the targets is training on the attributes of the query with the roles exchanged.
    exchanged = rnsb.compute(
        **common, target_sets=attributes, attribute_sets=targets, train_on="attribute_sets"
    )
    assert exchanged["probabilities"] == pytest.approx(on_targets["probabilities"], abs=1e-12)
    assert exchanged["kl_per_iteration"] == pytest.approx(on_targets["kl_per_iteration"], abs=1e-12)


def test_equally_placed_attribute_words_give_zero(rnsb):
    # Attribute words on the mirror axis of symmetric targets: all P(Y | w) = 0.5, KL = 0.
    result = rnsb.compute(
        words=["x1", "x2", "y1", "y2", "a", "b"],
        vectors=[[-2, 1], [-1, -1], [2, 1], [1, -1], [0, 3], [0, -2]],
        target_sets={"X": ["x1", "x2"], "Y": ["y1", "y2"]},
        attribute_sets={"A": ["a"], "B": ["b"]},
        holdout=False,
        iterations=1,
    )
    assert result["probabilities"] == pytest.approx({"a": 0.5, "b": 0.5})
    assert result["score"] == pytest.approx(0.0, abs=1e-12)
    assert result["classifier_accuracy"] == 1.0


def test_stratified_holdout_sizes_and_seeds(module):
    labels = np.repeat([0, 1], [8, 8])
    # ceil(0.2 * 16) = 4 held out, 2 per class; 6 per class train.
    train, test = module._stratified_holdout(labels, 0.2, 0)
    assert train.sum() == 12 and test.sum() == 4 and not (train & test).any()
    assert np.bincount(labels[test]).tolist() == [2, 2]
    again, _ = module._stratified_holdout(labels, 0.2, 0)
    other, _ = module._stratified_holdout(labels, 0.2, 1)
    assert (again == train).all() and (other != train).any()


def test_iterations_average_seeded_runs(rnsb):
    rng = np.random.default_rng(0)
    words = [f"w{i}" for i in range(24)]
    query = dict(
        words=words,
        vectors=rng.normal(size=(24, 6)),
        target_sets={"X": words[:8], "Y": words[8:16]},
        attribute_sets={"A": words[16:]},
    )
    result = rnsb.compute(**query, iterations=3, seed=5)
    assert len(result["kl_per_iteration"]) == 3
    assert result["score"] == pytest.approx(np.mean(result["kl_per_iteration"]))
    single = rnsb.compute(**query, iterations=1, seed=6)
    assert single["score"] == pytest.approx(result["kl_per_iteration"][1])


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target_sets": {"X": ["x"]}}, r"target_sets must hold exactly 2"),
        ({"attribute_sets": {}}, r"attribute_sets must hold at least one"),
        (
            {"attribute_sets": {"A": ["a", "q1", "q2"]}},
            r"attribute_sets\['A'\] lost 2 of 3 words.*\['q1', 'q2'\]",
        ),
        (
            {"vectors": [[-1.0], [1.0], [np.inf], [1.0]]},
            r"NaN or infinite values for the words \['a'\]",
        ),
        ({"C": 0}, r"C must be positive"),
        ({"train_on": "targets"}, r"train_on must be one of \('target_sets', 'attribute_sets'\)"),
        ({"train_on": "attribute_sets"}, r"attribute_sets must hold exactly 2 named sets, got 1"),
    ],
)
def test_bad_input_names_the_argument(rnsb, change, message):
    arguments = dict(
        words=["x", "y", "a", "b"],
        vectors=[[-1.0], [1.0], [-1.0], [1.0]],
        target_sets={"X": ["x"], "Y": ["y"]},
        attribute_sets={"A": ["a", "b"]},
        holdout=False,
        iterations=1,
    )
    arguments.update(change)
    with pytest.raises(ValueError, match=message):
        rnsb.compute(**arguments)


WEAT_WORDS = ["x1", "x2", "y1", "y2", "a", "b"]
WEAT_QUERY = {
    "target_sets": {"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    "attribute_sets": {"A": ["a"], "B": ["b"]},
}


def test_training_sets_with_the_same_vectors_are_refused(rnsb):
    # A = {a} and B = {b} at the same point [1, 0]: the classifier can only say 0.5
    # for every target word, which came out as KL 0.0, "no bias".
    vectors = [[1, 0.1], [1, 0.2], [0.1, 1], [0.2, 1], [1, 0], [1, 0]]
    with pytest.raises(
        ValueError, match=r"attribute_sets\['A'\] and attribute_sets\['B'\] have the same vectors"
    ):
        rnsb.compute(
            words=WEAT_WORDS,
            vectors=vectors,
            **WEAT_QUERY,
            train_on="attribute_sets",
            holdout=False,
            iterations=1,
        )


def test_a_word_given_twice_in_words_is_refused(rnsb):
    # The second vector of 'a' used to be silently ignored.
    vectors = [[1, 0.1], [1, 0.2], [0.1, 1], [0.2, 1], [1, 0], [0, 1], [0, 1]]
    with pytest.raises(ValueError, match=r"words\[6\] is 'a' again \(first at words\[4\]\)"):
        rnsb.compute(
            words=[*WEAT_WORDS, "a"], vectors=vectors, **WEAT_QUERY, holdout=False, iterations=1
        )


def test_an_untrained_classifier_is_refused(rnsb):
    # max_iter=0 left the classifier untrained; its 0.5 everywhere read as KL 0.0.
    vectors = [[1, 0.1], [1, 0.2], [0.1, 1], [0.2, 1], [1, 0], [0, 1]]
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match=rf"max_iter must be a positive int .*got {bad!r}"):
            rnsb.compute(
                words=WEAT_WORDS,
                vectors=vectors,
                **WEAT_QUERY,
                holdout=False,
                iterations=1,
                max_iter=bad,
            )
