"""Relative Negative Sentiment Bias (RNSB) as a word-set metric: KL divergence from uniform."""

import evaluate

# evaluate copies into its cache only the same-folder files this script imports: the
# computation (rnsb_scores.py) and both files it imports.
from .bias_hub_common import DirectCompute
from .bias_hub_intervals import (
    uncertainty_options,  # noqa: F401
)
from .rnsb_scores import RnsbScores

_DESCRIPTION = """\
RNSB (Sweeney and Najafian, 2019) as a word-set metric: a logistic regression is trained to
separate two word sets, every word of the other sets gets its probability of belonging to the
second training set, these probabilities normalised to sum to one form a distribution P, and
the score is KL(P || U), the Kullback-Leibler divergence from the uniform distribution over the
scored words. 0 means every scored word leans the same way; KL cannot say which way, so the
score does not tell stereotypical from anti-stereotypical bias.

`train_on`: "target_sets" (default; trained on X vs Y, the attribute words scored with
P(Y | w): RNSB as Kato and Miyao describe it, section 2.1.2) or "attribute_sets" (trained on
A vs B, the target words scored with P(B | w): WEFE's `RNSB.run_query` and Sweeney and
Najafian's original). Each iteration holds out the stratified 20 % split scikit-learn's
`train_test_split(..., random_state=seed + i)` draws, as WEFE does, so results compare with
WEFE at the same seed; divergences and probabilities are averaged over iterations. Input and
result shape are shared with `weat`.
"""

_KWARGS_DESCRIPTION = """
Args:
    words (`list` of `str`): the words whose vectors are given, one per row of `vectors`.
    vectors (`list` of `list` of `float`): one vector per word, all of one dimension, finite.
    target_sets (`dict[str, list[str]]`): named target sets; exactly two (X then Y) with
        train_on="target_sets", one or more with train_on="attribute_sets".
    attribute_sets (`dict[str, list[str]]`): named attribute sets; one or more with
        train_on="target_sets", exactly two (A then B) with train_on="attribute_sets".
        A word may appear in one set only, and once in `words`.
    train_on (`str`, default "target_sets"): "target_sets" (X negative, Y positive;
        attribute words scored, as the study's section 2.1.2) or "attribute_sets" (A
        labelled +1, B -1; target words scored, as WEFE's RNSB).
    iterations (`int`, default 10): classifiers trained (seeds seed .. seed + iterations - 1).
    seed (`int`, default 0): seeds the splits, the classifiers and the bootstrap.
    holdout (`bool`, default True): hold out a stratified `test_size` share of the training
        words (accuracy is measured on it); False trains on all and reports training accuracy.
    test_size (`float`, default 0.2).
    solver (`str`, default "liblinear"), C (`float`, default 1.0), tol (`float`, default
        1e-4), max_iter (`int`, default 10000; at least 1), fit_intercept (`bool`, default
        True): the `sklearn.linear_model.LogisticRegression` settings (WEFE's defaults; "lbfgs"
        leaves the intercept unpenalised).
    max_oov_share (`float`, default 0.2): refuse (ValueError) when a set loses more
        than this share of its words.
    confidence_level (`float`, optional): e.g. 0.95 for a 95 % bootstrap interval of the
        divergence; None (default) computes none.
    n_resamples (`int`, default 2000): bootstrap resamples.

Returns:
    score (`float`): the KL divergence (mean over iterations), in nats.
    score_name (`str`): "kl_divergence".
    kl_divergence (`float`), kl_per_iteration (`list[float]`),
    train_on (`str`), trained_on (`list[str]`): the two training sets' names,
    probability_of (`str`): the set whose probability is reported (the second trained on),
    probabilities (`dict[str, float]`): mean P(probability_of | word) per scored word,
    distribution (`dict[str, float]`): those probabilities normalised to sum to 1,
    classifier_accuracy (`float`): mean accuracy on the held-out (or training) words.
    words_used (`dict[str, list[str]]`) and oov (`dict[str, list[str]]`): per set.
    confidence_intervals (`dict`, with `confidence_level`): {"kl_divergence": {"low",
        "high", "confidence_level", "method" ("BCa" or "percentile"), "n_resamples",
        "unit" ("words"), "n_units", "reason"}}: the scored words of each scored set are
        resampled, the trained classifiers kept.

Examples:
    Attribute word "a" lies with X, "b" with Y, "c" on the mirror axis between them
    (the data are symmetric, so the boundary is that axis and P(Y | c) = 0.5):

    >>> import evaluate
    >>> metric = evaluate.load("metrics/rnsb")
    >>> result = metric.compute(
    ...     words=["x1", "x2", "y1", "y2", "a", "b", "c"],
    ...     vectors=[[-2, 1], [-1, -1], [2, 1], [1, -1], [-3, 0], [3, 0], [0, 0.5]],
    ...     target_sets={"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    ...     attribute_sets={"A": ["a", "b", "c"]},
    ...     holdout=False, iterations=1,
    ... )
    >>> result["probability_of"], result["probabilities"]["a"] < 0.5 < result["probabilities"]["b"]
    ('Y', True)
    >>> round(result["probabilities"]["c"], 6)
    0.5
    >>> result["score"] > 0, result["classifier_accuracy"]
    (True, 1.0)

    The other orientation trains on the attribute sets and scores the target words:

    >>> result = metric.compute(
    ...     words=["x1", "x2", "y1", "y2", "a", "b"],
    ...     vectors=[[-2, 1], [-1, -1], [2, 1], [1, -1], [-3, 0], [3, 0]],
    ...     target_sets={"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    ...     attribute_sets={"A": ["a"], "B": ["b"]},
    ...     train_on="attribute_sets", holdout=False, iterations=1,
    ... )
    >>> result["trained_on"], sorted(result["probabilities"])
    (['A', 'B'], ['x1', 'x2', 'y1', 'y2'])
    >>> result = metric.compute(
    ...     words=["x1", "x2", "y1", "y2", "a", "b", "c"],
    ...     vectors=[[-2, 1], [-1, -1], [2, 1], [1, -1], [-3, 0], [3, 0], [0, 0.5]],
    ...     target_sets={"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    ...     attribute_sets={"A": ["a", "b", "c"]},
    ...     holdout=False, iterations=1, confidence_level=0.9,
    ... )
    >>> interval = result["confidence_intervals"]["kl_divergence"]
    >>> interval["unit"], interval["n_units"], interval["low"] <= result["score"] <= interval["high"]
    ('words', 3, True)
"""

_CITATION = """\
@inproceedings{sweeney-najafian-2019-transparent,
  title={A Transparent Framework for Evaluating Unintended Demographic Bias in Word Embeddings},
  author={Sweeney, Chris and Najafian, Maryam},
  booktitle={Proceedings of the 57th Annual Meeting of the Association for Computational Linguistics},
  pages={1662--1667},
  year={2019}
}
@inproceedings{badilla2020wefe,
  title={WEFE: The Word Embeddings Fairness Evaluation Framework},
  author={Badilla, Pablo and Bravo-Marquez, Felipe and P{\\'e}rez, Jorge},
  booktitle={Proceedings of IJCAI 2020},
  pages={430--436},
  year={2020}
}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Rnsb(DirectCompute, evaluate.Metric):
    scores_class = RnsbScores
    card = (_DESCRIPTION, _KWARGS_DESCRIPTION, _CITATION)
    papers = ("https://aclanthology.org/P19-1162/", "https://aclanthology.org/2021.acl-long.150/")
