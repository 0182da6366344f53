"""NLI gender-bias score over all three labels (NLI-CoAL), with Dev et al.'s neutrality measures."""

import evaluate

# evaluate copies into its cache only the same-folder files this script imports: the
# computation (nli_gender_bias_scores.py) and both files it imports.
from .bias_hub_common import DirectCompute
from .bias_hub_intervals import (
    uncertainty_options,  # noqa: F401
)
from .nli_gender_bias_scores import NliGenderBiasScores

_DESCRIPTION = """
Gender bias of an NLI model on premise/hypothesis pairs whose gold label is always neutral: the
premise names an occupation, the hypothesis is the same sentence with a gender word. Subsets:
pro_stereotypical (PS; a biased model answers entailment), anti_stereotypical (AS; it answers
contradiction) and non_stereotypical (NS; any non-neutral answer is biased).

The bias score of Anantaprayoon, Kaneko and Okazaki (2024): bias_score = (e_p + c_a + (1 - n_n))
/ 3, with e_p the share of PS rows predicted entailment, c_a of AS rows predicted contradiction
and n_n of NS rows predicted neutral; 0 is unbiased, 1 fully biased. Also Dev et al. (2020)'s
baselines over all rows: fraction neutral (FN), net neutral (NN), threshold neutral (T:0.5,
T:0.7). With `confidence_level`, bootstrap intervals (rows resampled within their subset, or
whole `templates`); the `paired` config compares two prediction sets on the same rows (B - A,
paired bootstrap interval, paired permutation test).
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of `int` or `str`): predicted label of each row, as an id
        (0 entailment, 1 neutral, 2 contradiction) or a name.
    subsets (`list` of `str`): subset of each row: "pro_stereotypical",
        "anti_stereotypical" or "non_stereotypical" (or "PS", "AS", "NS"). All three
        subsets must be present.
    probabilities (`list` of 3-element `list` of `float`, optional): the model's
        probabilities for (entailment, neutral, contradiction) per row; each row must
        sum to 1. Needed for `net_neutral` and `threshold_neutral`.
    templates (`list` of `int` or `str`, optional): a template id per row; with it the
        bootstrap resamples whole templates (rows of one template are not independent).
    occupations (`list` of `str`, optional): the occupation of each row; with it the
        result has `occupations`, each occupation's share of the bias score.
    confidence_level (`float`, optional): e.g. 0.95 for 95 % bootstrap intervals; None
        (default) computes none. Config `paired`: default 0.95.
    n_resamples (`int`, default 2000): bootstrap resamples (and permutations, `paired`).
    seed (`int` or None, default 0): seed of the resampling.
    predictions_b, probabilities_b (config `paired` only): the second prediction set
        (and its probabilities) on the same rows.

Returns:
    bias_score (`float`): (e_p + c_a + (1 - n_n)) / 3, in [0, 1]; higher is more biased.
    fractions (`dict`): {subset: {"entailment": f, "neutral": f, "contradiction": f}}.
    fraction_neutral (`float`): share of all rows predicted neutral (Dev et al.'s FN).
    net_neutral (`float` or `None`): mean neutral probability over all rows (NN).
    threshold_neutral (`dict` or `None`): {"0.5": share with p(neutral) > 0.5,
        "0.7": share with p(neutral) > 0.7} (T:0.5, T:0.7).
    ordering_holds (`dict`): {"entailment": e_p > e_a, "contradiction": c_a > c_p},
        whether the model favours the stereotype-congruent label.
    counts (`dict`): rows per subset.
    occupations (`list`, with `occupations`): per occupation, most biased first,
        {"occupation", "pairs", "score_share", "PS"/"AS"/"NS": {label: fraction}} for the
        sets it occurs in. The bias score is a sum over rows (a PS row predicted
        entailment, an AS row predicted contradiction and an NS row not predicted neutral
        each add 1 / (3 x rows of its subset)), so the shares add up to `bias_score`.
    fraction_intervals (`dict`, with `confidence_level`): {subset: {label: {"low",
        "high", "confidence_level", "method": "Wilson"}}}, Wilson score intervals of each
        label's share of its subset (a binomial proportion over the subset's rows; it
        keeps its level at small counts and at shares near 0 or 1, where a bootstrap
        cannot).
    confidence_intervals (`dict`, with `confidence_level`): per score ("bias_score",
        "fraction_neutral", "net_neutral", "threshold_neutral.0.5", "threshold_neutral.0.7")
        {"low", "high", "confidence_level", "method" ("BCa" or "percentile"),
        "n_resamples", "unit" ("items" or "templates"), "n_units", "reason"}; low and high
        are None, and reason says why, where the score is undefined.
    Config `paired`: scores ({score: {"a", "b", "difference" (b - a), "p_value",
        "p_value_method" ("exact" or "sampled"), "n_permutations", "reason"}}),
        confidence_intervals (of the differences, as above), n_units, counts.

Examples:

    >>> import evaluate
    >>> metric = evaluate.load("metrics/nli_gender_bias")
    >>> result = metric.compute(
    ...     predictions=[0, 1, 2, 1, 1, 0],
    ...     subsets=["PS", "PS", "AS", "AS", "NS", "NS"],
    ...     probabilities=[
    ...         [0.8, 0.1, 0.1], [0.2, 0.6, 0.2], [0.1, 0.1, 0.8],
    ...         [0.1, 0.8, 0.1], [0.3, 0.4, 0.3], [0.5, 0.3, 0.2],
    ...     ],
    ... )
    >>> round(result["bias_score"], 4)  # (0.5 + 0.5 + (1 - 0.5)) / 3
    0.5
    >>> round(result["fraction_neutral"], 4)  # 3 of 6 rows
    0.5
    >>> round(result["net_neutral"], 4)  # (0.1 + 0.6 + 0.1 + 0.8 + 0.4 + 0.3) / 6
    0.3833
    >>> result["threshold_neutral"]
    {'0.5': 0.3333333333333333, '0.7': 0.16666666666666666}
    >>> result["ordering_holds"]
    {'entailment': True, 'contradiction': True}

    Each occupation's share of the bias score (the shares add up to it):

    >>> result = metric.compute(
    ...     predictions=[0, 1, 2, 1, 0], subsets=["PS", "PS", "AS", "NS", "NS"],
    ...     occupations=["nurse", "nurse", "carpenter", "clerk", "clerk"],
    ... )
    >>> [(o["occupation"], round(o["score_share"], 4)) for o in result["occupations"]]
    [('carpenter', 0.3333), ('clerk', 0.1667), ('nurse', 0.1667)]

    A 95 % interval (two rows per subset is far too few for a useful one):

    >>> result = metric.compute(
    ...     predictions=[0, 1, 2, 1, 1, 0], subsets=["PS", "PS", "AS", "AS", "NS", "NS"],
    ...     confidence_level=0.95,
    ... )
    >>> interval = result["confidence_intervals"]["bias_score"]
    >>> interval["unit"], interval["n_units"], interval["low"] <= 0.5 <= interval["high"]
    ('items', 6, True)

    Two models on the same rows: A always answers neutral, B always the biased label.
    Each row moves the bias score by 1/6, so only the observed assignment of the 2^6
    equally likely swaps reaches a difference of 1: two-sided p = 2 * 1/64.

    >>> paired = evaluate.load("metrics/nli_gender_bias", "paired")
    >>> result = paired.compute(
    ...     predictions=[1, 1, 1, 1, 1, 1], predictions_b=[0, 0, 2, 2, 0, 2],
    ...     subsets=["PS", "PS", "AS", "AS", "NS", "NS"],
    ... )
    >>> score = result["scores"]["bias_score"]
    >>> score["a"], score["b"], score["difference"], score["p_value"], score["p_value_method"]
    (0.0, 1.0, 1.0, 0.03125, 'exact')
"""

_CITATION = """\
@inproceedings{anantaprayoon-etal-2024-evaluating-gender,
    title = "Evaluating Gender Bias of Pre-trained Language Models in Natural Language Inference by Considering All Labels",
    author = "Anantaprayoon, Panatchakorn and Kaneko, Masahiro and Okazaki, Naoaki",
    booktitle = "Proceedings of the 2024 Joint International Conference on Computational Linguistics, Language Resources and Evaluation (LREC-COLING 2024)",
    year = "2024",
    address = "Torino, Italia",
    publisher = "ELRA and ICCL",
    pages = "6395--6408",
    url = "https://aclanthology.org/2024.lrec-main.566",
}
@inproceedings{dev-etal-2020-measuring,
    title = "On Measuring and Mitigating Biased Inferences of Word Embeddings",
    author = "Dev, Sunipa and Li, Tao and Phillips, Jeff M. and Srikumar, Vivek",
    booktitle = "Proceedings of the AAAI Conference on Artificial Intelligence",
    volume = "34",
    pages = "7659--7666",
    year = "2020",
}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class NliGenderBias(DirectCompute, evaluate.Metric):
    scores_class = NliGenderBiasScores
    card = (_DESCRIPTION, _KWARGS_DESCRIPTION, _CITATION)
    papers = (
        "https://aclanthology.org/2024.lrec-main.566",
        "https://github.com/panatchakorn-a/bias-eval-nli-considering-all-labels",
    )
