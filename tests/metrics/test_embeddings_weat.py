"""metrics/weat against hand calculations."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from bias_hub.pipelines.common.locations import import_evaluate

WORDS = ["x1", "x2", "y1", "y2", "a", "b"]
VECTORS = [[1, 0.1], [1, 0.2], [0.1, 1], [0.2, 1], [1, 0], [0, 1]]
TARGETS = {"X": ["x1", "x2"], "Y": ["y1", "y2"]}
ATTRIBUTES = {"A": ["a"], "B": ["b"]}


@pytest.fixture(scope="module")
def weat():
    return import_evaluate().load(str(Path(__file__).resolve().parents[2] / "metrics" / "weat"))


def test_statistic_effect_size_and_exact_p_value_by_hand(weat):
    result = weat.compute(
        words=WORDS, vectors=VECTORS, target_sets=TARGETS, attribute_sets=ATTRIBUTES
    )
    s1, s2 = 0.9 / math.sqrt(1.01), 0.8 / math.sqrt(1.04)  # cos(x, a) - cos(x, b)
    assert result["associations"]["x1"] == pytest.approx(s1)
    assert result["associations"]["y2"] == pytest.approx(-s2)
    assert result["statistic"] == pytest.approx(2 * (s1 + s2))
    population_std = math.sqrt((s1**2 + s2**2) / 2)
    assert result["effect_size"] == pytest.approx((s1 + s2) / population_std)
    assert result["score"] == result["effect_size"] and result["score_name"] == "effect_size"
    # C(4, 2) = 6 partitions. s(y_i) = -s(x_i), so sum s over the pool is 0 and a
    # partition's statistic is 2 * sum_{X_i} s (s1 = 0.8955, s2 = 0.7845):
    #   X_i = {x1, x2}: 2 (s1 + s2) = 3.360  (observed)
    #   X_i = {x1, y2}: 2 (s1 - s2) = 0.222
    #   X_i = {x1, y1}: 0            X_i = {x2, y2}: 0
    #   X_i = {x2, y1}: 2 (s2 - s1) = -0.222
    #   X_i = {y1, y2}: -2 (s1 + s2) = -3.360
    # Caliskan's p = Pr_i[s_i > s_observed]: none of the 6 is strictly larger -> 0 / 6.
    assert result["p_value_method"] == "exact" and result["n_partitions"] == 6
    assert result["p_value"] == 0.0


def test_sample_standard_deviation_and_other_alternatives(weat):
    s1, s2 = 0.9 / math.sqrt(1.01), 0.8 / math.sqrt(1.04)
    sample = weat.compute(
        words=WORDS, vectors=VECTORS, target_sets=TARGETS, attribute_sets=ATTRIBUTES, std_ddof=1
    )
    assert sample["effect_size"] == pytest.approx((s1 + s2) / math.sqrt(2 * (s1**2 + s2**2) / 3))
    # With the six statistics enumerated above (3.360 observed, 0.222, 0, 0, -0.222, -3.360):
    less = weat.compute(
        words=WORDS,
        vectors=VECTORS,
        target_sets=TARGETS,
        attribute_sets=ATTRIBUTES,
        alternative="less",
    )
    assert less["p_value"] == pytest.approx(5 / 6)  # all but the observed one are strictly smaller
    both = weat.compute(
        words=WORDS,
        vectors=VECTORS,
        target_sets=TARGETS,
        attribute_sets=ATTRIBUTES,
        alternative="two-sided",
    )
    assert both["p_value"] == 0.0  # |s_i| > 3.360 for none (the mirror image only ties)


@pytest.mark.parametrize(
    ("alternative", "expected"),
    [
        ("greater", 1 / 6),  # 3.360 >= 3.360: the observed partition only
        ("less", 6 / 6),  # every statistic is <= 3.360
        ("two-sided", 2 / 6),  # |3.360| and |-3.360|: the observed partition and its mirror image
    ],
)
def test_ties_included_on_request(weat, alternative, expected):
    result = weat.compute(
        words=WORDS,
        vectors=VECTORS,
        target_sets=TARGETS,
        attribute_sets=ATTRIBUTES,
        alternative=alternative,
        p_value_ties="include",
    )
    assert result["p_value_method"] == "exact"
    assert result["p_value"] == pytest.approx(expected)


def test_sampled_p_value_counts_strictly_larger_plus_one(weat):
    # The 2 + 2 case in sampled mode: every draw is one of the 6 partitions above, each
    # with probability 1/6. No partition is strictly larger than the observed one, so
    # k = 0 whatever is drawn and p = (0 + 1) / (N + 1).
    draws = 600
    sampled = {
        "words": WORDS,
        "vectors": VECTORS,
        "target_sets": TARGETS,
        "attribute_sets": ATTRIBUTES,
        "permutations": draws,
        "exact_max_partitions": 1,
    }
    greater = weat.compute(**sampled)
    assert greater["p_value_method"] == "sampled" and greater["n_partitions"] == draws
    assert greater["p_value"] == pytest.approx(1 / (draws + 1))
    # 5 of the 6 partitions are strictly smaller: k ~ Binomial(600, 5/6), mean 500, sd 9.1.
    less = weat.compute(**sampled, alternative="less")
    k = less["p_value"] * (draws + 1) - 1
    assert k == pytest.approx(round(k)) and 450 <= k <= 550
    # Ties included: k counts the draws of the observed partition, Binomial(600, 1/6), mean 100.
    tied = weat.compute(**sampled, p_value_ties="include")
    k = tied["p_value"] * (draws + 1) - 1
    assert k == pytest.approx(round(k)) and 50 <= k <= 150


def test_sampled_permutations_are_seeded(weat):
    rng = np.random.default_rng(1)
    words = [f"w{i}" for i in range(30)]
    vectors = rng.normal(size=(30, 5))
    query = {
        "target_sets": {"X": words[:12], "Y": words[12:24]},
        "attribute_sets": {"A": words[24:27], "B": words[27:]},
    }
    first = weat.compute(
        words=words, vectors=vectors, **query, permutations=500, exact_max_partitions=10, seed=3
    )
    again = weat.compute(
        words=words, vectors=vectors, **query, permutations=500, exact_max_partitions=10, seed=3
    )
    assert first["p_value_method"] == "sampled" and first["n_partitions"] == 500
    assert first["p_value"] == again["p_value"]

    # Independently: s(w) from plain cosines, then the module's draws re-made here (a
    # partition is the first 12 of argsort(uniforms) from default_rng(seed)), each
    # statistic summed directly, and the draws strictly above the observed one counted.
    def cos(u, v):
        return float(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)))

    s = np.array(
        [
            np.mean([cos(vectors[w], vectors[a]) for a in range(24, 27)])
            - np.mean([cos(vectors[w], vectors[b]) for b in range(27, 30)])
            for w in range(24)
        ]
    )
    observed = s[:12].sum() - s[12:].sum()
    assert first["statistic"] == pytest.approx(observed)
    order = np.argsort(np.random.default_rng(3).random((500, 24)), axis=1)
    statistics = np.array([s[row[:12]].sum() - s[row[12:]].sum() for row in order])
    larger = int((statistics > observed + 1e-9).sum())
    assert not (np.abs(statistics - observed) <= 1e-9).any()  # no tie to worry about
    assert 0 < larger < 500  # a count that can be wrong in either direction
    assert first["p_value"] == pytest.approx((larger + 1) / 501)


def test_missing_words_are_reported_and_too_many_refused(weat):
    words = WORDS + ["x3", "y3", "a2", "b2"]
    vectors = VECTORS + [[1, 0.3], [0.3, 1], [1, 0.05], [0.05, 1]]
    targets = {"X": ["x1", "x2", "x3", "x4", "x5"], "Y": ["y1", "y2", "y3", "y4", "y5"]}
    attributes = {"A": ["a", "a2"], "B": ["b", "b2"]}
    with pytest.raises(ValueError, match=r"target_sets\['X'\] lost 2 of 5 words.*\['x4', 'x5'\]"):
        weat.compute(words=words, vectors=vectors, target_sets=targets, attribute_sets=attributes)
    result = weat.compute(
        words=words,
        vectors=vectors,
        target_sets=targets,
        attribute_sets=attributes,
        max_oov_share=0.5,
    )
    assert result["oov"] == {"X": ["x4", "x5"], "Y": ["y4", "y5"], "A": [], "B": []}
    assert result["words_used"]["X"] == ["x1", "x2", "x3"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"target_sets": {"X": ["x1", "x2"], "Y": ["y1"]}}, r"'X' and 'Y' have 2 and 1 words"),
        ({"target_sets": {"X": ["x1", "x2"], "Y": []}}, r"target_sets\['Y'\] is empty"),
        ({"attribute_sets": {"A": ["a"]}}, r"attribute_sets must hold exactly 2"),
        (
            {"vectors": [[1, 0.1], [np.nan, 0.2], [0.1, 1], [0.2, 1], [1, 0], [0, 1]]},
            r"NaN.*\['x2'\]",
        ),
        (
            {"vectors": [[1, 0.1], [1, 0.2], [0.1, 1], [0.2, 1], [1, 0]]},
            r"words \(6\) and vectors \(5\)",
        ),
        ({"alternative": "bigger"}, r"alternative must be one of"),
        ({"p_value_ties": "greater_equal"}, r"p_value_ties must be one of"),
    ],
)
def test_bad_input_names_the_argument(weat, change, message):
    arguments = {
        "words": WORDS,
        "vectors": VECTORS,
        "target_sets": TARGETS,
        "attribute_sets": ATTRIBUTES,
        **change,
    }
    with pytest.raises(ValueError, match=message):
        weat.compute(**arguments)


def test_unequal_targets_allowed_when_asked(weat):
    result = weat.compute(
        words=WORDS,
        vectors=VECTORS,
        target_sets={"X": ["x1", "x2"], "Y": ["y1"]},
        attribute_sets=ATTRIBUTES,
        allow_unequal_targets=True,
    )
    assert result["n_partitions"] == 3  # C(3, 2)


def test_std_ddof_must_leave_the_deviation_defined(weat):
    # With the 4 target words and std_ddof=4 the deviation divides by
    # n - ddof = 0; the module returned effect size 0.0 with a p-value (true d = 1.996).
    with pytest.raises(
        ValueError, match=r"std_ddof must be a whole number from 0 to 3 \(the 4 target words"
    ):
        weat.compute(
            words=WORDS, vectors=VECTORS, target_sets=TARGETS, attribute_sets=ATTRIBUTES, std_ddof=4
        )
    # -1 gave 2.23 and 1.5 gave 1.58; a bool is no count either.
    for bad in (-1, 1.5, True):
        with pytest.raises(
            ValueError, match=rf"std_ddof must be a whole number from 0 to 3 .*got {bad!r}"
        ):
            weat.compute(
                words=WORDS,
                vectors=VECTORS,
                target_sets=TARGETS,
                attribute_sets=ATTRIBUTES,
                std_ddof=bad,
            )
    # The largest allowed, n - 1 = 3: s = (s1, s2, -s1, -s2) has mean 0, so the deviation is
    # sqrt(2 (s1^2 + s2^2) / 1) and d = (s1 + s2) / sqrt(2 (s1^2 + s2^2)) = 0.998 (by hand).
    s1, s2 = 0.9 / math.sqrt(1.01), 0.8 / math.sqrt(1.04)
    result = weat.compute(
        words=WORDS, vectors=VECTORS, target_sets=TARGETS, attribute_sets=ATTRIBUTES, std_ddof=3
    )
    assert result["effect_size"] == pytest.approx((s1 + s2) / math.sqrt(2 * (s1**2 + s2**2)))
    assert result["effect_size"] == pytest.approx(0.998, abs=1e-3)


def test_exact_max_partitions_is_checked(weat):
    # -1 used to be accepted unchecked.
    for bad in (-1, 2.5):
        with pytest.raises(
            ValueError, match=r"exact_max_partitions must be a whole number of at least 0"
        ):
            weat.compute(
                words=WORDS,
                vectors=VECTORS,
                target_sets=TARGETS,
                attribute_sets=ATTRIBUTES,
                exact_max_partitions=bad,
            )
    # 0: never enumerate; 10 sampled partitions, none above the observed one -> (0 + 1) / 11.
    result = weat.compute(
        words=WORDS,
        vectors=VECTORS,
        target_sets=TARGETS,
        attribute_sets=ATTRIBUTES,
        exact_max_partitions=0,
        permutations=10,
    )
    assert result["p_value_method"] == "sampled" and result["p_value"] == pytest.approx(1 / 11)


def test_a_word_given_twice_in_words_is_refused(weat):
    # 'x1' again with another vector; the second vector used to be silently ignored.
    with pytest.raises(ValueError, match=r"words\[6\] is 'x1' again \(first at words\[0\]\)"):
        weat.compute(
            words=[*WORDS, "x1"],
            vectors=[*VECTORS, [0, 1]],
            target_sets=TARGETS,
            attribute_sets=ATTRIBUTES,
        )


def test_a_target_word_among_the_attributes_is_refused(weat):
    # 'x1' as an attribute word used to be scored against itself (cos 1).
    with pytest.raises(
        ValueError, match=r"attribute_sets\['A'\] lists 'x1', which target_sets\['X'\] lists too"
    ):
        weat.compute(
            words=WORDS,
            vectors=VECTORS,
            target_sets=TARGETS,
            attribute_sets={"A": ["x1"], "B": ["b"]},
        )
