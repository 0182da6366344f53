"""Bootstrap intervals and paired comparisons of the metric modules.

Coverage is checked by simulation against scores known by construction; BCa against
scipy.stats.bootstrap's own; the paired permutation p-values against counts by hand.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bias_hub.pipelines.common.locations import import_evaluate, import_scores_module

METRICS = Path(__file__).resolve().parents[2] / "metrics"
INTERVAL_KEYS = {
    "low",
    "high",
    "confidence_level",
    "method",
    "n_resamples",
    "unit",
    "n_units",
    "reason",
}


def _module(name: str):
    return import_scores_module(METRICS / name)


@pytest.fixture(scope="module")
def nli():
    return import_evaluate().load(str(METRICS / "nli_gender_bias"))


@pytest.fixture(scope="module")
def bbq():
    return import_evaluate().load(str(METRICS / "bbq_bias"))


def _bbq_rows(predictions, stereotyped, conditions=None, references=None, category="Age"):
    n = len(predictions)
    return {
        "predictions": list(predictions),
        "references": list(references if references is not None else [0] * n),
        "unknown_labels": [2] * n,
        "stereotyped_labels": list(stereotyped),
        "context_conditions": list(conditions if conditions is not None else ["disambig"] * n),
        "categories": [category] * n,
    }


# --- BCa: our O(n) jackknife gives scipy's BCa interval -------------------------------


def test_bca_of_a_ratio_equals_scipy_bca():
    from scipy import stats

    module = _module("bbq_bias")
    rng = np.random.default_rng(3)
    numerator = (rng.random(300) < 0.3).astype(float)
    denominator = np.maximum(numerator, (rng.random(300) < 0.6).astype(float))
    options = {"confidence_level": 0.9, "n_resamples": 999, "seed": 11}
    (ours,) = module.sum_intervals(
        [np.stack([numerator, denominator], axis=1)],
        lambda t: (t[0] / t[1])[None],
        options,
        "items",
    )
    reference = stats.bootstrap(
        (numerator, denominator),
        lambda a, b, axis=-1: a.sum(axis) / b.sum(axis),
        paired=True,
        vectorized=True,
        n_resamples=999,
        batch=2_000_000 // 300,
        confidence_level=0.9,
        method="BCa",
        rng=np.random.default_rng(11),
    )
    assert ours["method"] == "BCa"
    assert ours["low"] == pytest.approx(reference.confidence_interval.low, rel=1e-12)
    assert ours["high"] == pytest.approx(reference.confidence_interval.high, rel=1e-12)


def test_bca_with_strata_equals_scipy_multi_sample_bca():
    """Strata are scipy's independent samples; the acceleration sums over them (scipy's formula)."""
    from scipy import stats

    module = _module("nli_gender_bias")
    rng = np.random.default_rng(4)
    first, second = rng.exponential(1.0, 40), rng.exponential(2.0, 60)
    # columns: sum and count of each stratum, so a unit left out changes its stratum's mean
    strata = [
        np.stack([first, np.ones(40), np.zeros(40), np.zeros(40)], axis=1),
        np.stack([np.zeros(60), np.zeros(60), second, np.ones(60)], axis=1),
    ]
    options = {"confidence_level": 0.95, "n_resamples": 500, "seed": 5}
    (ours,) = module.sum_intervals(
        strata, lambda t: ((t[0] / t[1]) / (t[2] / t[3]))[None], options, "items"
    )
    reference = stats.bootstrap(
        (first, second),
        lambda a, b, axis=-1: a.mean(axis) / b.mean(axis),
        vectorized=True,
        n_resamples=500,
        batch=2_000_000 // 100,
        method="BCa",
        rng=np.random.default_rng(5),
    )
    assert ours["low"] == pytest.approx(reference.confidence_interval.low, rel=1e-12)
    assert ours["high"] == pytest.approx(reference.confidence_interval.high, rel=1e-12)


def test_attention_gap_interval_of_one_word_equals_scipy_two_sample_bca():
    from scipy import stats

    module = _module("gender_attention_gap")
    rng = np.random.default_rng(6)
    male, female = rng.beta(2, 5, 30), rng.beta(2, 4, 25)
    mass = np.concatenate([male, female])
    word = np.zeros(55, dtype=np.int64)
    is_male = np.arange(55) < 30
    options = {"confidence_level": 0.95, "n_resamples": 800, "seed": 8}
    gap, mean_gap = module._gap_intervals(mass, word, is_male, np.array([0]), options)
    reference = stats.bootstrap(
        (male, female),
        lambda a, b, axis=-1: a.mean(axis) - b.mean(axis),
        vectorized=True,
        n_resamples=800,
        batch=2_000_000 // 55,
        method="BCa",
        rng=np.random.default_rng(8),
    )
    for interval in (gap, mean_gap):  # one word: the mean gap is its gap
        assert (
            interval["method"] == "BCa"
            and interval["unit"] == "occurrences"
            and interval["n_units"] == 55
        )
        assert interval["low"] == pytest.approx(reference.confidence_interval.low, rel=1e-12)
        assert interval["high"] == pytest.approx(reference.confidence_interval.high, rel=1e-12)


def test_weat_intervals_equal_scipy_bca_over_the_four_word_sets():
    from scipy import stats

    module = _module("weat")
    rng = np.random.default_rng(7)
    cosines = rng.uniform(-1, 1, (10, 9))  # 5 + 5 target words x 4 + 5 attribute words
    options = {"confidence_level": 0.95, "n_resamples": 400, "seed": 2}
    s = cosines[:, :4].mean(axis=1) - cosines[:, 4:].mean(axis=1)
    observed = [(s[:5].mean() - s[5:].mean()) / s.std(), s[:5].sum() - s[5:].sum()]
    ours = module._intervals(cosines, 5, 4, 0, observed, options)

    def associations(x, y, a, b):
        s_all = np.moveaxis(cosines[:, a].mean(-1) - cosines[:, 4 + b].mean(-1), 0, -1)
        return np.take_along_axis(s_all, x, -1), np.take_along_axis(s_all, 5 + y, -1)

    def effect_size(x, y, a, b, axis=-1):
        s_x, s_y = associations(x, y, a, b)
        return (s_x.mean(-1) - s_y.mean(-1)) / np.concatenate([s_x, s_y], -1).std(-1)

    def statistic(x, y, a, b, axis=-1):
        s_x, s_y = associations(x, y, a, b)
        return s_x.sum(-1) - s_y.sum(-1)

    samples = (np.arange(5), np.arange(5), np.arange(4), np.arange(5))
    for interval, function in zip(ours, (effect_size, statistic), strict=True):
        reference = stats.bootstrap(
            samples,
            function,
            vectorized=True,
            n_resamples=400,
            batch=2_000_000 // 19,
            method="BCa",
            rng=np.random.default_rng(2),
        )
        assert (
            interval["method"] == "BCa"
            and interval["unit"] == "words"
            and interval["n_units"] == 19
        )
        assert interval["low"] == pytest.approx(reference.confidence_interval.low, rel=1e-10)
        assert interval["high"] == pytest.approx(reference.confidence_interval.high, rel=1e-10)


def test_degenerate_distribution_falls_back_to_percentile(bbq):
    # Every item answered with the stereotyped person: s_DIS is 1 in every resample; BCa's
    # bias correction is undefined, the percentile interval is [1, 1].
    result = bbq.compute(**_bbq_rows([0, 1, 0, 1], [0, 1, 0, 1]), confidence_level=0.95)
    interval = result["confidence_intervals"]["bias_score_disambiguated"]
    assert (interval["low"], interval["high"], interval["method"]) == (1.0, 1.0, "percentile")


# --- coverage on synthetic data with a known score -------------------------------------


def _coverage(compute, simulations: int = 400) -> float:
    return float(np.mean([compute(i) for i in range(simulations)]))


@pytest.mark.slow
def test_nli_bias_score_interval_covers_the_truth_95_percent_of_the_time(nli):
    # Per subset, each row's label is drawn from fixed shares: e_p = 0.4, c_a = 0.3, n_n = 0.6,
    # so the population bias score is (0.4 + 0.3 + (1 - 0.6)) / 3 = 1.1 / 3.
    truth = 1.1 / 3
    shares = {"PS": [0.4, 0.4, 0.2], "AS": [0.5, 0.2, 0.3], "NS": [0.25, 0.6, 0.15]}
    rng = np.random.default_rng(2024)

    def covered(seed: int) -> bool:
        predictions, subsets = [], []
        for subset, p in shares.items():
            predictions += rng.choice(3, size=150, p=p).tolist()
            subsets += [subset] * 150
        result = nli.compute(
            predictions=predictions,
            subsets=subsets,
            confidence_level=0.95,
            n_resamples=1000,
            seed=seed,
        )
        interval = result["confidence_intervals"]["bias_score"]
        assert interval["method"] == "BCa"
        return interval["low"] <= truth <= interval["high"]

    rate = _coverage(covered)
    assert 0.93 <= rate <= 0.97, rate


@pytest.mark.slow
def test_bbq_bias_score_interval_covers_the_truth_95_percent_of_the_time(bbq):
    # Disambiguated items; the answer is the stereotyped person with probability 0.45, the
    # other person 0.35, unknown 0.2: s_DIS = 2 * 0.45 / 0.8 - 1 = 0.125.
    truth = 2 * 0.45 / 0.8 - 1
    rng = np.random.default_rng(2025)

    def covered(seed: int) -> bool:
        stereotyped = rng.integers(0, 2, 300)
        kind = rng.choice(3, size=300, p=[0.45, 0.35, 0.2])  # stereotyped, other, unknown
        predictions = np.where(kind == 0, stereotyped, np.where(kind == 1, 1 - stereotyped, 2))
        result = bbq.compute(
            **_bbq_rows(predictions.tolist(), stereotyped.tolist()),
            confidence_level=0.95,
            n_resamples=1000,
            seed=seed,
        )
        interval = result["confidence_intervals"]["bias_score_disambiguated"]
        assert interval["method"] == "BCa"
        return interval["low"] <= truth <= interval["high"]

    rate = _coverage(covered)
    assert 0.93 <= rate <= 0.97, rate


# --- cluster resampling ----------------------------------------------------------------


def _templated_items(rng, correlated: bool, templates: int = 40, per_template: int = 10):
    """Items of 40 templates; with ``correlated`` each template has its own chance of a biased answer."""
    chance = rng.beta(1, 1, templates) if correlated else np.full(templates, 0.5)
    template = np.repeat(np.arange(templates), per_template)
    stereotyped = rng.integers(0, 2, template.size)
    biased = rng.random(template.size) < chance[template]
    predictions = np.where(biased, stereotyped, 1 - stereotyped)
    return _bbq_rows(predictions.tolist(), stereotyped.tolist()), template.tolist()


@pytest.mark.parametrize("correlated", [True, False])
def test_resampling_templates_widens_intervals_only_when_items_of_a_template_agree(bbq, correlated):
    rng = np.random.default_rng(9)
    ratios = []
    for _ in range(20):
        rows, templates = _templated_items(rng, correlated)
        by_item = bbq.compute(**rows, confidence_level=0.95, n_resamples=1000)
        by_template = bbq.compute(
            **rows, templates=templates, confidence_level=0.95, n_resamples=1000
        )
        item = by_item["confidence_intervals"]["bias_score_disambiguated"]
        template = by_template["confidence_intervals"]["bias_score_disambiguated"]
        assert (item["unit"], item["n_units"]) == ("items", 400)
        assert (template["unit"], template["n_units"]) == ("templates", 40)
        assert by_item["bias_score_disambiguated"] == by_template["bias_score_disambiguated"]
        ratios.append((template["high"] - template["low"]) / (item["high"] - item["low"]))
    ratio = float(np.mean(ratios))
    # Template chances ~ Beta(1, 1): intra-template correlation 1/3, design effect
    # 1 + 9/3 = 4, so intervals about twice as wide; independent items: about as wide
    # (one data set's ratio varies by some 15 % with 40 templates, so 20 are averaged).
    if correlated:
        assert ratio > 1.6, ratio
    else:
        assert 0.85 < ratio < 1.15, ratio


def test_templates_are_numbered_within_a_category(bbq):
    rows = _bbq_rows([0, 1, 0, 1, 0, 1, 0, 1], [0, 0, 0, 0, 1, 1, 1, 1])
    rows["categories"] = ["Age"] * 4 + ["SES"] * 4
    result = bbq.compute(**rows, templates=[1, 1, 2, 2, 1, 1, 2, 2], confidence_level=0.95)
    assert result["confidence_intervals"]["accuracy"]["n_units"] == 4  # Age/1, Age/2, SES/1, SES/2
    assert result["per_category"]["SES"]["confidence_intervals"]["accuracy"]["n_units"] == 2


# --- undefined scores and too few units ------------------------------------------------


def test_undefined_score_has_no_interval_and_says_why(bbq):
    # Only "unknown" answers to ambiguous items: s_AMB is undefined.
    result = bbq.compute(
        **_bbq_rows(
            [2, 2, 0, 1],
            [0, 1, 0, 1],
            conditions=["ambig", "ambig", "disambig", "disambig"],
            references=[2, 2, 0, 1],
        ),
        confidence_level=0.95,
    )
    assert result["bias_score_ambiguous"] is None
    interval = result["confidence_intervals"]["bias_score_ambiguous"]
    assert interval["low"] is None and interval["reason"] == "the score itself is undefined"
    assert result["confidence_intervals"]["accuracy"]["reason"] is None


def test_score_undefined_in_some_resamples_has_no_interval(bbq):
    # One ambiguous item of five answered non-unknown: a resample without it leaves s_AMB undefined.
    rows = _bbq_rows([0, 2, 2, 2, 2], [0, 0, 0, 0, 0], conditions=["ambig"] * 5, references=[2] * 5)
    interval = bbq.compute(**rows, confidence_level=0.95)["confidence_intervals"][
        "bias_score_ambiguous"
    ]
    assert interval["low"] is None
    assert (
        interval["reason"].startswith("the score is undefined in ")
        and "resamples (too few items)" in interval["reason"]
    )


def test_nli_subset_with_one_row_cannot_be_resampled(nli):
    result = nli.compute(
        predictions=[0, 1, 2, 1], subsets=["PS", "AS", "NS", "NS"], confidence_level=0.95
    )
    assert result["confidence_intervals"]["bias_score"]["reason"] == (
        "resampling needs at least 2 items in each stratum, got [1, 1, 2]"
    )


# --- paired comparisons ----------------------------------------------------------------


@pytest.fixture(scope="module")
def bbq_paired():
    return import_evaluate().load(str(METRICS / "bbq_bias"), "paired")


def test_paired_p_value_of_three_items_all_won_by_b(bbq_paired):
    # A wrong, B right on each of 3 items: each swap moves the accuracy difference by 2/3.
    # Of the 2^3 sign patterns only +++ (difference 1) and --- (-1) reach |1|: p = 2/8.
    rows = _bbq_rows([1, 1, 0], [0, 1, 0], references=[0, 0, 1])
    result = bbq_paired.compute(**rows, predictions_b=[0, 0, 1])
    accuracy = result["scores"]["accuracy"]
    assert (accuracy["a"], accuracy["b"], accuracy["difference"]) == (0.0, 1.0, 1.0)
    assert accuracy["p_value"] == pytest.approx(2 / 8)
    assert accuracy["p_value_method"] == "exact" and accuracy["n_permutations"] == 8


def test_paired_p_value_of_four_items_three_to_one(bbq_paired):
    # B right where A is wrong on items 1-3, A right where B is wrong on item 4: difference
    # (3 - 1) / 4 = 0.5; a swap pattern gives (sum of four signs) / 4. Sums >= 2: 4 (1 way)
    # and 2 (4 ways), so P(>= 0.5) = 5/16; two-sided (scipy: twice the smaller tail) 10/16.
    rows = _bbq_rows([1, 1, 1, 0], [0, 0, 0, 0], references=[0, 0, 0, 0])
    result = bbq_paired.compute(**rows, predictions_b=[0, 0, 0, 1])
    accuracy = result["scores"]["accuracy"]
    assert accuracy["difference"] == pytest.approx(0.5)
    assert accuracy["p_value"] == pytest.approx(10 / 16)


def test_paired_identical_predictions_differ_by_nothing(bbq_paired):
    rows = _bbq_rows([0, 1, 2, 0, 1], [0, 0, 0, 1, 1], references=[0, 1, 0, 0, 1])
    result = bbq_paired.compute(**rows, predictions_b=rows["predictions"])
    accuracy = result["scores"]["accuracy"]
    assert accuracy["difference"] == 0.0 and accuracy["p_value"] == 1.0
    interval = result["confidence_intervals"]["accuracy"]
    assert (interval["low"], interval["high"]) == (0.0, 0.0)


def test_paired_nli_by_hand():
    # A always neutral (bias 0), B always the biased label (bias 1): each row moves the
    # difference by 1/6; only the unswapped pattern of 2^6 reaches 1: two-sided p = 2/64.
    paired = import_evaluate().load(str(METRICS / "nli_gender_bias"), "paired")
    result = paired.compute(
        predictions=[1] * 6,
        predictions_b=[0, 0, 2, 2, 0, 2],
        subsets=["PS", "PS", "AS", "AS", "NS", "NS"],
    )
    for key in ("bias_score", "fraction_neutral"):
        assert result["scores"][key]["p_value"] == pytest.approx(2 / 64)
    assert result["scores"]["fraction_neutral"]["difference"] == -1.0
    assert result["confidence_intervals"]["bias_score"]["unit"] == "items"


def test_paired_needs_the_second_prediction_set(bbq_paired):
    rows = _bbq_rows([0, 1], [0, 0])
    with pytest.raises(ValueError, match=r"missing argument\(s\) \['predictions_b'\]"):
        bbq_paired.compute(**rows)
    with pytest.raises(ValueError, match=r"^predictions_b\[1\] is 0.5"):
        bbq_paired.compute(**rows, predictions_b=[0, 0.5])


def test_paired_add_batch_path(bbq_paired):
    rows = _bbq_rows([1, 1, 0], [0, 1, 0], references=[0, 0, 1])
    bbq_paired.add_batch(**{k: v[:2] for k, v in rows.items()}, predictions_b=[0, 0])
    bbq_paired.add_batch(**{k: v[2:] for k, v in rows.items()}, predictions_b=[1])
    assert bbq_paired.compute()["scores"]["accuracy"]["p_value"] == pytest.approx(2 / 8)


# --- one interval shape in every module --------------------------------------------------


SMALL = {
    ("nli_gender_bias", None): {
        "predictions": [0, 1, 2, 1, 0, 2],
        "subsets": ["PS", "PS", "AS", "AS", "NS", "NS"],
    },
    ("bbq_bias", None): _bbq_rows([0, 1, 2, 0], [0, 0, 1, 1]),
    ("gender_attention_gap", None): {
        "words": ["a"] * 4,
        "attention_to_gender": [0.1, 0.3, 0.2, 0.25],
        "forms": ["male", "male", "female", "female"],
    },
    ("perplexity_gap", None): {
        "male_perplexities": [10.0, 20.0, 30.0],
        "female_perplexities": [12.0, 15.0, 28.0],
    },
    ("speciesism_bias", None): {
        "probabilities": [[0.6, 0.4], [0.7, 0.3], [0.2, 0.8], [0.3, 0.7]],
        "forms": ["human", "human", "object", "object"],
    },
    ("speciesism_bias", "association"): {
        "target_probabilities": [0.5, 0.2, 0.3],
        "prior_probabilities": [0.25, 0.25, 0.5],
    },
    ("speciesism_bias", "negative_share"): {
        "animals": ["pig"] * 4,
        "labels": ["negative", "neutral", "negative", "positive"],
    },
    ("weat", None): {
        "words": ["x1", "x2", "y1", "y2", "a1", "a2", "b1", "b2"],
        "vectors": [[1, 0.1], [1, 0.3], [0.1, 1], [0.4, 1], [1, 0], [1, 0.2], [0, 1], [0.1, 1]],
        "target_sets": {"X": ["x1", "x2"], "Y": ["y1", "y2"]},
        "attribute_sets": {"A": ["a1", "a2"], "B": ["b1", "b2"]},
    },
    ("rnsb", None): {
        "words": ["x1", "x2", "y1", "y2", "a", "b", "c"],
        "vectors": [[-2, 1], [-1, -1], [2, 1], [1, -1], [-3, 0], [3, 0], [0, 0.5]],
        "target_sets": {"X": ["x1", "x2"], "Y": ["y1", "y2"]},
        "attribute_sets": {"A": ["a", "b", "c"]},
        "holdout": False,
        "iterations": 1,
    },
    ("winobias_gap", None): {
        "predictions": [
            [[[0, 1], [5, 5]]],
            [[[0, 1], [5, 5]]],
            [[[0, 1], [8, 9]]],
            [[[0, 1], [5, 5]]],
        ],
        "references": [
            [[[0, 1], [5, 5]]],
            [[[0, 1], [5, 5]]],
            [[[8, 9], [5, 5]]],
            [[[0, 1], [5, 5]]],
        ],
        "condition": ["pro", "pro", "anti", "anti"],
    },
}


@pytest.mark.parametrize(("name", "config"), list(SMALL))
def test_every_module_returns_the_same_interval_shape(name, config):
    metric = import_evaluate().load(str(METRICS / name), config)
    plain = metric.compute(**SMALL[name, config])
    assert "confidence_intervals" not in plain  # off by default
    result = metric.compute(**SMALL[name, config], confidence_level=0.9, n_resamples=200, seed=1)
    intervals = result["confidence_intervals"]
    assert intervals
    for key, interval in intervals.items():
        assert set(interval) == INTERVAL_KEYS, key
        assert interval["confidence_level"] == 0.9 and interval["n_resamples"] == 200
        if interval["reason"] is None:
            assert interval["method"] in ("BCa", "percentile")
            assert interval["low"] <= interval["high"]
        else:
            assert interval["low"] is None and interval["high"] is None
    again = metric.compute(**SMALL[name, config], confidence_level=0.9, n_resamples=200, seed=1)
    assert again["confidence_intervals"] == intervals  # seeded


def test_the_bootstrap_draws_are_scipys_for_the_same_seed():
    """Two strata of different sizes, resampled in batches of 7 (the last one short): the
    statistic on each resample equals scipy.stats.bootstrap's bootstrap_distribution."""
    from scipy import stats

    from bias_hub.metrics._common.bias_hub_intervals import bootstrap_distribution

    rng = np.random.default_rng(8)
    first, second = rng.normal(size=5), rng.normal(size=9)

    def statistic(a, b, axis=-1):
        return np.stack([a.mean(axis), b.max(axis)])

    ours = bootstrap_distribution([first, second], statistic, 30, 7, 13)
    reference = stats.bootstrap(
        (first, second),
        statistic,
        vectorized=True,
        n_resamples=30,
        batch=7,
        method="percentile",
        rng=np.random.default_rng(13),
    )
    assert ours.shape == (2, 30)
    assert np.array_equal(ours, reference.bootstrap_distribution)
