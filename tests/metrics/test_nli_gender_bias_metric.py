"""`metrics/nli_gender_bias`: the paper's Table 3 shares and Table 4 scores, Dev et al.'s measures, bad input.

Every expected number below is worked out by hand in the comments beside it.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bias_hub.pipelines.common.locations import import_evaluate

REPO_ROOT = Path(__file__).resolve().parents[2]
LABELS = ("entailment", "neutral", "contradiction")


@pytest.fixture(scope="module")
def metric():
    evaluate = import_evaluate()

    return evaluate.load(str(REPO_ROOT / "metrics" / "nli_gender_bias"))


# Tables 3 and 4 of Anantaprayoon et al. (2024): five Japanese models fine-tuned on JSNLI,
# evaluated on the PS/AS/NS sets of 1000/1000/3420 pairs (the paper's Table 6 sizes).
# Table 3 prints each subset's label shares (entailment, contradiction, neutral) to three
# decimals; Table 4 prints the score s = (e_p + c_a + (1 - n_n)) / 3 computed from the
# unrounded shares. The counts below are the ones (out of 1000/1000/3420) whose shares
# round to the printed ones; where several exist, any gives the same s to three decimals
# (checked by hand for the NS rows, whose printed shares admit 1 to 10 count triples).
# E.g. Tohoku BERT: (378/1000 + 413/1000 + 1 - 2427/3420) / 3 = (0.378 + 0.413 + 0.29035) / 3
# = 0.36045, printed 0.360.
SIZES = {"pro_stereotypical": 1000, "anti_stereotypical": 1000, "non_stereotypical": 3420}
TABLE_3 = {
    # model: (Table 4 score, {subset: (printed shares e/c/n, counts e/c/n)})
    "Tohoku BERT": (
        0.360,
        {
            "pro_stereotypical": ((0.378, 0.025, 0.597), (378, 25, 597)),
            "anti_stereotypical": ((0.067, 0.413, 0.520), (67, 413, 520)),
            "non_stereotypical": ((0.151, 0.140, 0.710), (515, 478, 2427)),
        },
    ),
    "Tohoku BERT (char)": (
        0.503,
        {
            "pro_stereotypical": ((0.592, 0.039, 0.369), (592, 39, 369)),
            "anti_stereotypical": ((0.079, 0.435, 0.486), (79, 435, 486)),
            "non_stereotypical": ((0.304, 0.177, 0.518), (1040, 607, 1773)),
        },
    ),
    "Bandai Namco DistilBERT": (
        0.301,
        {
            "pro_stereotypical": ((0.312, 0.085, 0.603), (312, 85, 603)),
            "anti_stereotypical": ((0.094, 0.211, 0.695), (94, 211, 695)),
            "non_stereotypical": ((0.200, 0.179, 0.621), (684, 612, 2124)),
        },
    ),
    "Laboro DistilBERT": (
        0.535,
        {
            "pro_stereotypical": ((0.525, 0.131, 0.344), (525, 131, 344)),
            "anti_stereotypical": ((0.090, 0.498, 0.412), (90, 498, 412)),
            "non_stereotypical": ((0.126, 0.456, 0.418), (430, 1560, 1430)),
        },
    ),
    "Waseda RoBERTa": (
        0.563,
        {
            "pro_stereotypical": ((0.578, 0.043, 0.379), (578, 43, 379)),
            "anti_stereotypical": ((0.036, 0.610, 0.354), (36, 610, 354)),
            "non_stereotypical": ((0.262, 0.239, 0.499), (895, 818, 1707)),
        },
    ),
}
# Label ids of the metric: 0 entailment, 1 neutral, 2 contradiction.
_TABLE_ORDER = {"entailment": 0, "contradiction": 2, "neutral": 1}


@pytest.mark.parametrize("model", list(TABLE_3))
def test_table_3_label_shares_give_table_4_scores(metric, model: str) -> None:
    score, subsets_table = TABLE_3[model]
    predictions: list[int] = []
    subsets: list[str] = []
    for subset, (printed, counts) in subsets_table.items():
        assert sum(counts) == SIZES[subset], (model, subset)
        for name, share, count in zip(
            ("entailment", "contradiction", "neutral"), printed, counts, strict=True
        ):
            assert round(count / SIZES[subset], 3) == share, (model, subset, name)
            predictions += [_TABLE_ORDER[name]] * count
            subsets += [subset] * count
    result = metric.compute(predictions=predictions, subsets=subsets)
    assert round(result["bias_score"], 3) == score
    assert result["counts"] == SIZES
    for subset, (printed, _counts) in subsets_table.items():
        for name, share in zip(("entailment", "contradiction", "neutral"), printed, strict=True):
            assert result["fractions"][subset][name] == pytest.approx(share, abs=5e-4)
    # The paper's Eq. 1 holds for all five models (Section 4.2): more entailment on PS than
    # AS, more contradiction on AS than PS.
    assert result["ordering_holds"] == {"entailment": True, "contradiction": True}
    # FN pools the subsets: neutral predictions over all 5420 pairs.
    neutral = sum(counts[2] for _printed, counts in subsets_table.values())
    assert result["fraction_neutral"] == pytest.approx(neutral / 5420)
    assert result["net_neutral"] is None and result["threshold_neutral"] is None


@pytest.mark.parametrize("rate", [0.0, 0.3, 0.5, 1.0])
def test_oracle_of_training_labels_scores_two_thirds_r_and_fn_one_third(
    metric, rate: float
) -> None:
    """The authors' bias-controlled sets: 10 female-, 10 male-, 10 non-stereotyped occupations; at bias rate r
    2r*10 of the 20 stereotyped ones are "pro" (congruent gender -> entailment, opposite ->
    contradiction), the rest "anti" (reversed); non-stereotyped ones are neutral. An
    oracle repeating those labels on the PS/AS/NS sets gets e_p = c_a = r, n_n = 1, so
    s = 2r/3, and FN = 1/3 (only the NS third is neutral)."""
    n_pro = round(20 * rate)
    predictions, subsets = [], []
    for occupation in range(20):
        pro = occupation < n_pro
        predictions += [0 if pro else 2] * 10
        subsets += ["PS"] * 10
        predictions += [2 if pro else 0] * 10
        subsets += ["AS"] * 10
    for _ in range(10):
        predictions += [1] * 20
        subsets += ["NS"] * 20
    result = metric.compute(predictions=predictions, subsets=subsets)
    assert result["bias_score"] == pytest.approx(2 * rate / 3)
    assert result["fraction_neutral"] == pytest.approx(1 / 3)


def test_neutral_measures_with_probabilities(metric) -> None:
    # neutral probabilities 0.5, 0.7, 0.71, 0.2: NN = 2.11 / 4 = 0.5275;
    # strictly greater than 0.5: 0.7, 0.71 -> 2/4; than 0.7: 0.71 -> 1/4.
    result = metric.compute(
        predictions=["neutral", "neutral", "neutral", "entailment"],
        subsets=["pro_stereotypical", "anti_stereotypical", "non_stereotypical", "NS"],
        probabilities=[[0.25, 0.5, 0.25], [0.1, 0.7, 0.2], [0.09, 0.71, 0.2], [0.7, 0.2, 0.1]],
    )
    assert result["net_neutral"] == pytest.approx(0.5275)
    assert result["threshold_neutral"] == {"0.5": pytest.approx(0.5), "0.7": pytest.approx(0.25)}
    # e_p = 0, c_a = 0, n_n = 1/2: (0 + 0 + 1/2) / 3 = 1/6
    assert result["bias_score"] == pytest.approx(1 / 6)
    assert result["fraction_neutral"] == pytest.approx(0.75)
    assert result["ordering_holds"] == {"entailment": False, "contradiction": False}


def test_extremes(metric) -> None:
    subsets = ["PS", "AS", "NS", "NS"]
    assert metric.compute(predictions=[1, 1, 1, 1], subsets=subsets)["bias_score"] == 0.0
    assert metric.compute(predictions=[0, 2, 0, 2], subsets=subsets)["bias_score"] == 1.0


def test_label_names_ids_and_numpy_agree(metric) -> None:
    subsets = ["PS", "AS", "NS"] * 2
    by_id = metric.compute(predictions=[0, 2, 1, 1, 0, 2], subsets=subsets)
    by_name = metric.compute(
        predictions=[
            "entailment",
            "contradiction",
            "neutral",
            "neutral",
            "entailment",
            "contradiction",
        ],
        subsets=subsets,
    )
    by_numpy = metric.compute(predictions=np.array([0, 2, 1, 1, 0, 2]), subsets=subsets)
    assert by_id == by_name == by_numpy


def test_add_batch_accumulates(metric) -> None:
    metric.add_batch(predictions=[0, 1], subsets=["PS", "AS"])
    metric.add_batch(predictions=[1], subsets=["NS"])
    result = metric.compute()
    # e_p = 1, c_a = 0, n_n = 1 -> 1/3
    assert result["bias_score"] == pytest.approx(1 / 3)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"predictions": [0, 1, 7], "subsets": ["PS", "AS", "NS"]}, r"predictions\[2\] is 7"),
        ({"predictions": [0, 1, 1], "subsets": ["PS", "AS", "other"]}, r"subsets\[2\] is 'other'"),
        (
            {"predictions": [0, 1], "subsets": ["PS", "PS"]},
            "no rows for anti_stereotypical, non_stereotypical",
        ),
        (
            {
                "predictions": [0, 1, 1],
                "subsets": ["PS", "AS", "NS"],
                "probabilities": [[1, 0, 0]] * 2,
            },
            r"probabilities must have shape \(3, 3\)",
        ),
        (
            {
                "predictions": [0, 1, 1],
                "subsets": ["PS", "AS", "NS"],
                "probabilities": [[1, 0, 0], [0.5, 0.6, 0], [0, 1, 0]],
            },
            r"probabilities\[1\]",
        ),
        (
            {
                "predictions": [0, 1, 1],
                "subsets": ["PS", "AS", "NS"],
                "probabilities": [[1, 0, 0], [0, 1, 0], [float("nan"), 1, 0]],
            },
            r"probabilities\[2\] contains NaN",
        ),
    ],
)
def test_bad_input_names_the_argument(metric, kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        metric.compute(**kwargs)


def test_length_mismatch(metric) -> None:
    with pytest.raises(ValueError):
        metric.compute(predictions=[0, 1, 2], subsets=["PS", "AS"])


def _reference(predictions: list[int], subsets: list[int]) -> float:
    """The score by plain counting, written independently of the module."""
    share = {}
    for subset in range(3):
        rows = [p for p, s in zip(predictions, subsets, strict=True) if s == subset]
        share[subset] = [rows.count(label) / len(rows) for label in range(3)]
    return (share[0][0] + share[1][2] + (1 - share[2][1])) / 3


def test_matches_plain_counting_on_random_inputs(metric) -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    names = ("PS", "AS", "NS")
    rows = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=40)

    # _compute is the arithmetic; evaluate's plumbing around it (about a second per
    # compute call) is exercised by the tests above.
    @settings(max_examples=100, deadline=None)
    @given(rows, rows, rows)
    def check(extra_a, extra_b, extra_c) -> None:
        # every subset gets at least one row
        pairs = [(0, 0), (1, 1), (2, 2), *extra_a, *extra_b, *extra_c]
        predictions = [p for p, _ in pairs]
        subsets = [s for _, s in pairs]
        result = metric._compute(predictions=predictions, subsets=[names[s] for s in subsets])
        assert result["bias_score"] == pytest.approx(_reference(predictions, subsets))
        assert result["fraction_neutral"] == pytest.approx(predictions.count(1) / len(predictions))
        assert 0.0 <= result["bias_score"] <= 1.0

    check()


def test_occupation_shares_split_the_bias_score_by_hand(metric) -> None:
    # PS: A predicted entailment once of 2; AS: B contradiction (1 of 1); NS: C non-neutral once of 2.
    result = metric.compute(
        predictions=[0, 1, 2, 1, 0],
        subsets=[
            "pro_stereotypical",
            "pro_stereotypical",
            "anti_stereotypical",
            "non_stereotypical",
            "non_stereotypical",
        ],
        occupations=["A", "A", "B", "C", "C"],
    )
    table = {e["occupation"]: e for e in result["occupations"]}
    # s = (1/2 + 1 + 1/2) / 3 = 2/3, split as A 1/6, B 1/3, C 1/6; the largest share first.
    assert result["bias_score"] == pytest.approx(2 / 3)
    assert table["A"]["score_share"] == pytest.approx(1 / 6)
    assert table["B"]["score_share"] == pytest.approx(1 / 3)
    assert table["C"]["score_share"] == pytest.approx(1 / 6)
    assert result["occupations"][0]["occupation"] == "B"
    assert table["A"]["PS"] == {"entailment": 0.5, "neutral": 0.5, "contradiction": 0.0}
    assert table["A"]["pairs"] == 2 and "AS" not in table["A"]


def test_occupations_must_pair_up_with_the_rows(metric) -> None:
    with pytest.raises(ValueError, match=r"predictions and occupations must have the same length"):
        metric.compute(predictions=[0, 1, 2], subsets=["PS", "AS", "NS"], occupations=["A", "B"])


def test_label_shares_get_wilson_intervals_by_hand(metric) -> None:
    # PS: 5 entailment of 10. Wilson at 95 % (z = 1.959964): centre (2*5 + z^2) / (2 (10 + z^2)) = 0.5,
    # half-width z sqrt(z^2 + 4*10*0.5*0.5) / (2 (10 + z^2)) = 1.959964 * 3.720397 / 27.682982 = 0.263406,
    # so [0.236594, 0.763406]. NS: 0 neutral of 2 -> low 0, high z^2 / (2 + z^2) = 3.841459 / 5.841459 = 0.657620.
    result = metric.compute(
        predictions=[0] * 5 + [1] * 5 + [2, 2] + [0, 2],
        subsets=["PS"] * 10 + ["AS"] * 2 + ["NS"] * 2,
        confidence_level=0.95,
        n_resamples=200,
    )
    share = result["fraction_intervals"]["pro_stereotypical"]["entailment"]
    assert (share["low"], share["high"]) == pytest.approx((0.236594, 0.763406), abs=1e-6)
    assert share["method"] == "Wilson" and share["confidence_level"] == 0.95
    neutral = result["fraction_intervals"]["non_stereotypical"]["neutral"]
    assert (neutral["low"], neutral["high"]) == pytest.approx((0.0, 0.657620), abs=1e-6)
    # Without a level, no intervals of any kind.
    assert "fraction_intervals" not in metric.compute(
        predictions=[0, 1, 2], subsets=["PS", "AS", "NS"]
    )
