"""metrics/gender_attention_gap and metrics/perplexity_gap: hand-computed values and input checks."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from bias_hub.pipelines.common.locations import import_evaluate

METRICS = Path(__file__).resolve().parents[2] / "metrics"


@pytest.fixture(scope="module")
def attention_gap():
    return import_evaluate().load(str(METRICS / "gender_attention_gap"))


@pytest.fixture(scope="module")
def perplexity_gap():
    return import_evaluate().load(str(METRICS / "perplexity_gap"))


def test_attention_gap_by_hand(attention_gap):
    # "Kind": male 0.2 and 0.4 (mean 0.3), female 0.1 -> gap 0.2 (case folded).
    # "is": male 0.1, female 0.3 and 0.5 (mean 0.4) -> gap -0.3.
    # "tall": only in male sentences -> not reported.
    result = attention_gap.compute(
        words=["Kind", "kind", "kind", "is", "is", "is", "tall"],
        attention_to_gender=[0.2, 0.4, 0.1, 0.1, 0.3, 0.5, 0.9],
        forms=["male", "male", "female", "male", "female", "female", "male"],
    )
    assert result["words"] == ["kind", "is"]
    assert result["attention_gap"] == pytest.approx([0.2, -0.3])
    assert result["male_mean"] == pytest.approx([0.3, 0.1])
    assert result["female_mean"] == pytest.approx([0.1, 0.4])
    assert result["male_count"] == [2, 1] and result["female_count"] == [1, 2]
    assert result["mean_gap"] == pytest.approx(-0.05)


def test_attention_gap_min_count(attention_gap):
    result = attention_gap.compute(
        words=["a", "a", "a", "b", "b"],
        attention_to_gender=[0.1, 0.2, 0.3, 0.1, 0.2],
        forms=["male", "male", "female", "male", "female"],
        min_count=2,
    )
    assert result["words"] == [] and math.isnan(result["mean_gap"])


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"forms": ["male", "other"]}, "forms"),
        ({"attention_to_gender": [0.1, float("nan")]}, "attention_to_gender"),
        ({"min_count": 0}, "min_count"),
    ],
)
def test_attention_gap_rejects_bad_input(attention_gap, kwargs, message):
    inputs = {
        "words": ["a", "a"],
        "attention_to_gender": [0.1, 0.2],
        "forms": ["male", "female"],
    } | kwargs
    with pytest.raises(ValueError, match=message):
        attention_gap.compute(**inputs)


def test_perplexity_gap_by_hand(perplexity_gap):
    result = perplexity_gap.compute(
        male_perplexities=[10.0, 20.0, 30.0, 40.0],
        female_perplexities=[12.0, 15.0, 30.0, 20.0],
        pair_words=[["is", "tall", "Tall"], ["is", "kind"], ["tall"], ["kind"]],
    )
    assert result["perplexity_gap"] == [-2.0, 5.0, 0.0, 20.0]
    assert result["mean_gap"] == pytest.approx(5.75)
    assert result["median_gap"] == pytest.approx(2.5)
    assert result["male_higher_rate"] == pytest.approx(0.5)
    # "tall" counts once in pair 1 although it appears twice: (-2 + 0) / 2.
    assert dict(zip(result["words"], result["word_perplexity_gap"], strict=True)) == {
        "is": 1.5,
        "kind": 12.5,
        "tall": -1.0,
    }
    assert result["word_pair_count"] == [2, 2, 2]


def test_perplexity_gap_correlation_by_hand(perplexity_gap):
    # Word gaps: a = 1, b = 2, c = 3, d = 5 (one pair each); scores 1, 2, 3, 4.
    # Ranks agree -> Spearman 1. Pearson of (1,2,3,4) and (1,2,3,5):
    # deviations (-1.5,-.5,.5,1.5) and (-1.75,-.75,.25,2.25): sum of products 6.5,
    # sums of squares 5 and 8.75 -> r = 6.5 / sqrt(43.75) = 0.98271.
    result = perplexity_gap.compute(
        male_perplexities=[2.0, 3.0, 4.0, 6.0],
        female_perplexities=[1.0, 1.0, 1.0, 1.0],
        pair_words=[["a"], ["b"], ["c"], ["d"]],
        word_scores={"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0, "unseen": 9.0},
    )
    correlation = result["correlation"]
    assert correlation["n_words"] == 4
    assert correlation["spearman"] == pytest.approx(1.0)
    assert correlation["pearson"] == pytest.approx(6.5 / math.sqrt(43.75))
    # Every log ratio is positive: the exact two-sided signed-rank p for n = 4 is 2/16.
    assert result["wilcoxon_pvalue"] == pytest.approx(0.125)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"male_perplexities": [0.0, 2.0]}, "male_perplexities"),
        ({"female_perplexities": [1.0, float("inf")]}, "female_perplexities"),
        ({"pair_words": [["a"]]}, "pair_words"),
        ({"pair_words": ["ab", "c"]}, r"pair_words\[0\]"),
        ({"word_scores": {"a": 1.0}}, "word_scores needs pair_words"),
        ({"min_pairs": 0}, "min_pairs"),
    ],
)
def test_perplexity_gap_rejects_bad_input(perplexity_gap, kwargs, message):
    inputs = {"male_perplexities": [1.0, 2.0], "female_perplexities": [1.0, 2.0]} | kwargs
    with pytest.raises(ValueError, match=message):
        perplexity_gap.compute(**inputs)


def test_pairs_taken_without_duplication_by_hand(perplexity_gap):
    # Gaps per pair: -2, 5, 0, 20, 3. Order (largest score first): tall, is, kind, a.
    # tall takes pairs 0 and 2 (gaps -2, 0 -> -1); is: pair 0 is taken, takes 1 (5);
    # kind: 1 is taken, takes 3 (20); a: its only pair 3 is taken -> no pair, not reported.
    # Pair 4 holds only "b", which is in no order: it is used by no word.
    result = perplexity_gap.compute(
        male_perplexities=[10.0, 20.0, 30.0, 40.0, 8.0],
        female_perplexities=[12.0, 15.0, 30.0, 20.0, 5.0],
        pair_words=[["is", "tall"], ["is", "kind"], ["Tall"], ["kind", "a"], ["b"]],
        word_scores={"is": 0.5, "tall": 0.9, "kind": -1.0, "a": -2.0},
        pair_assignment="first",
    )
    assert result["words"] == ["tall", "is", "kind"]
    assert result["word_perplexity_gap"] == pytest.approx([-1.0, 5.0, 20.0])
    assert result["word_pair_count"] == [2, 1, 1]
    assert result["word_pairs"] == [[0, 2], [1], [3]]
    # the same pairs in an explicit order, "kind" first: kind takes 1 and 3 (12.5), is 0 (-2), tall 2 (0)
    ordered = perplexity_gap.compute(
        male_perplexities=[10.0, 20.0, 30.0, 40.0, 8.0],
        female_perplexities=[12.0, 15.0, 30.0, 20.0, 5.0],
        pair_words=[["is", "tall"], ["is", "kind"], ["Tall"], ["kind", "a"], ["b"]],
        pair_assignment="first",
        word_order=["kind", "is", "tall"],
    )
    assert ordered["words"] == ["kind", "is", "tall"]
    assert ordered["word_perplexity_gap"] == pytest.approx([12.5, -2.0, 0.0])
    # the default, "all": every pair counts for each of its words: is (-2 + 5) / 2
    every = perplexity_gap.compute(
        male_perplexities=[10.0, 20.0, 30.0, 40.0, 8.0],
        female_perplexities=[12.0, 15.0, 30.0, 20.0, 5.0],
        pair_words=[["is", "tall"], ["is", "kind"], ["Tall"], ["kind", "a"], ["b"]],
    )
    assert dict(zip(every["words"], every["word_perplexity_gap"], strict=True))[
        "is"
    ] == pytest.approx(1.5)


def test_word_and_correlation_intervals(perplexity_gap):
    # Word "x" has pairs with gaps 1, 2, 3, 4: its mean 2.5 lies inside its interval, which
    # stays within the smallest and largest gap; "y" has one pair: no interval.
    words = [["x"], ["x"], ["x"], ["x"], ["y"]] + [[f"w{i}"] for i in range(8)]
    female = [10.0] * 13
    male = [11.0, 12.0, 13.0, 14.0, 10.5] + [10.0 + i for i in range(1, 9)]
    scores = {"x": 0.0, "y": 0.1} | {f"w{i}": float(i) for i in range(8)}
    result = perplexity_gap.compute(
        male_perplexities=male,
        female_perplexities=female,
        pair_words=words,
        word_scores=scores,
        confidence_level=0.9,
        n_resamples=500,
    )
    place = result["words"].index("x")
    interval = result["confidence_intervals"][f"word_perplexity_gap[{place}]"]
    assert interval["unit"] == "pairs" and interval["n_units"] == 4
    assert 1.0 <= interval["low"] < 2.5 < interval["high"] <= 4.0
    lonely = result["confidence_intervals"][f"word_perplexity_gap[{result['words'].index('y')}]"]
    assert lonely["low"] is None and lonely["reason"] == "needs at least 2 pairs, has 1"
    spearman = result["confidence_intervals"]["correlation_spearman"]
    assert spearman["unit"] == "words" and spearman["n_units"] == 10
    assert spearman["low"] <= result["correlation"]["spearman"] <= spearman["high"] <= 1.0


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"pair_assignment": "once"}, "pair_assignment must be one of"),
        ({"pair_assignment": "first"}, "needs pair_words"),
        (
            {"pair_assignment": "first", "pair_words": [["a"], ["b"]]},
            "needs word_order or word_scores",
        ),
        ({"word_order": ["a"], "pair_words": [["a"], ["b"]]}, 'needs pair_assignment="first"'),
    ],
)
def test_pair_assignment_rejects_bad_input(perplexity_gap, kwargs, message):
    inputs = {"male_perplexities": [1.0, 2.0], "female_perplexities": [1.0, 2.0]} | kwargs
    with pytest.raises(ValueError, match=message):
        perplexity_gap.compute(**inputs)


def test_attention_gap_refuses_input_with_one_form_only(attention_gap):
    # Every occurrence male used to give {'words': [], 'mean_gap': nan} without a word.
    with pytest.raises(
        ValueError, match="forms: no occurrence is in the female form; a gap compares"
    ):
        attention_gap.compute(
            words=["a", "a"], attention_to_gender=[0.1, 0.2], forms=["male", "male"]
        )


def test_attention_gap_says_why_no_word_is_reported(attention_gap):
    result = attention_gap.compute(
        words=["a", "b"], attention_to_gender=[0.1, 0.2], forms=["male", "female"]
    )
    assert (
        result["words"] == []
        and result["note"] == "no word occurs at least 1 time(s) in each form: no gap to report"
    )


def test_a_perplexity_below_one_is_refused(perplexity_gap):
    # 0.5 is no perplexity (exp of a mean negative log-likelihood is >= 1).
    with pytest.raises(
        ValueError,
        match=r"male_perplexities\[0\] is 0.5; expected a finite perplexity of at least 1",
    ):
        perplexity_gap.compute(male_perplexities=[0.5, 20.0], female_perplexities=[12.0, 15.0])


@pytest.mark.parametrize(
    ("score", "message"),
    [
        (float("nan"), r"word_scores\['is'\] is nan; expected a finite number"),
        (float("inf"), r"word_scores\['is'\] is inf; expected a finite number"),
        ("high", r"word_scores\['is'\] is 'high'; expected a finite number"),
    ],
    ids=["nan", "inf", "not a number"],
)
def test_a_word_score_that_is_no_finite_number_is_refused_naming_the_word(
    perplexity_gap, score, message
):
    with pytest.raises(ValueError, match=message):
        perplexity_gap.compute(
            male_perplexities=[10.0, 20.0, 30.0],
            female_perplexities=[12.0, 15.0, 20.0],
            pair_words=[["is"], ["tall"], ["kind"]],
            word_scores={"is": score, "tall": 1.0, "kind": 2.0},
        )


def test_frequency_matched_view_by_hand(perplexity_gap):
    # Gaps -2, 5, 0, 20; frequency gaps 0.1, 0.5, -0.2, 0.0: within 0.25 are pairs 0, 2, 3.
    # Their mean gap (-2 + 0 + 20) / 3 = 6, one of three male-higher; per word (all): a -2,
    # c 0, d 20 against scores 1, 3, 4: Spearman 1 over 3 words.
    # Confound over all four pairs: log ratios ln(10/12), ln(20/15), 0, ln 2 rank 1, 3, 2, 4;
    # frequency gaps rank 3, 4, 1, 2: sum d^2 = 10, rho = 1 - 60 / 60 = 0. Least squares:
    # x - mean(x) = 0, 0.4, -0.3, -0.1 (Sxx 0.26); Sxy = 0.4 * 0.088055 + 0.3 * 0.199627
    # - 0.1 * 0.493520 = 0.045758; slope 0.175993.
    result = perplexity_gap.compute(
        male_perplexities=[10.0, 20.0, 30.0, 40.0],
        female_perplexities=[12.0, 15.0, 30.0, 20.0],
        pair_words=[["a"], ["b"], ["c"], ["d"]],
        word_scores={"a": 1.0, "b": 2.0, "c": 3.0, "d": 4.0},
        frequency_gaps=[0.1, 0.5, -0.2, 0.0],
    )
    matched = result["frequency_matched"]
    assert matched["pairs_matched"] == 3 and matched["tolerance_zipf"] == 0.25
    assert matched["mean_gap"] == pytest.approx(6.0) and matched[
        "male_higher_rate"
    ] == pytest.approx(1 / 3)
    assert matched["correlation"]["n_words"] == 3 and matched["correlation"][
        "spearman"
    ] == pytest.approx(1.0)
    assert matched["confound"]["n_pairs"] == 4
    assert matched["confound"]["spearman_log_ppl_ratio_vs_zipf_gap"] == pytest.approx(
        0.0, abs=1e-12
    )
    assert matched["confound"]["slope_log_ppl_ratio_per_zipf"] == pytest.approx(0.175993, abs=1e-6)
    assert result["mean_gap"] == pytest.approx(23 / 4)  # the view leaves the main result alone
