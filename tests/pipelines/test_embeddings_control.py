"""Bias control: ATTRACT-REPEL constraints, specialisation direction, expansion, families."""

from __future__ import annotations

import numpy as np
import pytest

from bias_hub.pipelines.embeddings.control import (
    AttractRepelConfig,
    FamilyMember,
    attract_repel,
    bias_constraints,
    expand_sets,
    make_family,
)
from bias_hub.pipelines.embeddings.vectors import WordVectors

TARGETS = {"X": ["x1", "x2", "x3"], "Y": ["y1", "y2", "y3"]}
ATTRIBUTES = {"A": ["a1", "a2", "a3"], "B": ["b1", "b2", "b3"]}


@pytest.fixture(scope="module")
def vectors() -> WordVectors:
    rng = np.random.default_rng(0)
    words = [w for s in [*TARGETS.values(), *ATTRIBUTES.values()] for w in s] + [
        f"other{i}" for i in range(20)
    ]
    return WordVectors(words, rng.normal(size=(len(words), 16)), name="random")


def weat_d(vectors: WordVectors) -> float:
    unit = vectors.matrix / np.linalg.norm(vectors.matrix, axis=1, keepdims=True)
    rows = {w: unit[vectors.index[w]] for w in vectors.words}

    def s(w):
        return np.mean([rows[w] @ rows[a] for a in ATTRIBUTES["A"]]) - np.mean(
            [rows[w] @ rows[b] for b in ATTRIBUTES["B"]]
        )

    values = np.array([s(w) for w in TARGETS["X"] + TARGETS["Y"]])
    return float((values[:3].mean() - values[3:].mean()) / values.std())


def test_constraints_are_the_stereotypical_and_anti_stereotypical_pairs():
    attract, repel = bias_constraints(TARGETS, ATTRIBUTES, "reduce")
    assert len(attract) == len(repel) == 2 * 3 * 3
    assert ("x1", "b2") in attract and ("y3", "a1") in attract  # X x B and Y x A pulled together
    assert ("x1", "a2") in repel and ("y1", "b1") in repel  # X x A and Y x B pushed apart
    assert bias_constraints(TARGETS, ATTRIBUTES, "amplify") == (repel, attract)
    with pytest.raises(ValueError, match="direction must be"):
        bias_constraints(TARGETS, ATTRIBUTES, "neutral")


def test_reduce_and_amplify_move_weat_in_opposite_directions(vectors):
    config = AttractRepelConfig(epochs=10, batch_size=8)
    reduced = attract_repel(vectors, *bias_constraints(TARGETS, ATTRIBUTES, "reduce"), config)
    amplified = attract_repel(vectors, *bias_constraints(TARGETS, ATTRIBUTES, "amplify"), config)
    assert weat_d(reduced) < -1.5 and weat_d(amplified) > 1.5
    # Words in no constraint keep their direction; every row is unit length.
    original = vectors.matrix[vectors.index["other3"]]
    assert np.allclose(
        reduced.matrix[reduced.index["other3"]], original / np.linalg.norm(original), atol=1e-6
    )
    assert np.allclose(np.linalg.norm(reduced.matrix, axis=1), 1, atol=1e-5)


def test_expansion_adds_nearest_neighbours_to_their_nearest_set():
    words = ["a", "a_near", "b", "b_near", "far"]
    matrix = np.array(
        [[1, 0, 0], [0.99, 0.1, 0], [0, 1, 0], [0.1, 0.99, 0], [0, 0, 1]], dtype=float
    )
    vectors = WordVectors(words, matrix)
    expanded = expand_sets(vectors, {"A": ["a"], "B": ["b"]}, neighbours=1)
    assert expanded == {"A": ["a", "a_near"], "B": ["b", "b_near"]}
    assert expand_sets(vectors, {"A": ["a"], "B": ["b"]}, neighbours=0) == {"A": ["a"], "B": ["b"]}


def test_family_strength_grades_the_bias(vectors):
    members = [
        FamilyMember("original"),
        FamilyMember("amplify-0.1", "amplify", strength=0.1),
        FamilyMember("amplify-1", "amplify", strength=1.0),
    ]
    family = make_family(
        vectors,
        [(TARGETS, ATTRIBUTES)],
        members,
        AttractRepelConfig(epochs=10, batch_size=8),
        progress=False,
    )
    scores = [weat_d(member_vectors) for _, member_vectors in family]
    assert [member.name for member, _ in family] == ["original", "amplify-0.1", "amplify-1"]
    assert scores[0] < scores[1] < scores[2]
