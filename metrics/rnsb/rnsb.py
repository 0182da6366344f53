"""Relative Negative Sentiment Bias (RNSB) as a word-set metric: KL divergence from uniform."""

import math

import datasets
import evaluate
import numpy as np
from scipy import special
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from .bias_hub_common import (
    DirectCompute,
    disjoint_sets,
    lookup_sets,
    named_sets,
    vector_table,
)
from .bias_hub_intervals import (
    bootstrap_intervals,
    leave_one_out,
    uncertainty_options,
)

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


_ORIENTATIONS = ("target_sets", "attribute_sets")


def _whole(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_options(
    train_on, iterations, seed, classifier: dict, holdout, test_size, max_oov_share
) -> None:
    if train_on not in _ORIENTATIONS:
        raise ValueError(f"train_on must be one of {_ORIENTATIONS}, got {train_on!r}")
    if not _whole(iterations) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    if not _whole(seed):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not classifier["C"] > 0:
        raise ValueError(f"C must be positive, got {classifier['C']!r}")
    if not classifier["tol"] > 0:
        raise ValueError(f"tol must be positive, got {classifier['tol']!r}")
    if not _whole(classifier["max_iter"]) or classifier["max_iter"] < 1:
        raise ValueError(
            f"max_iter must be a positive int (an untrained classifier gives every word 0.5, "
            f"which would read as no bias), got {classifier['max_iter']!r}"
        )
    if holdout and not 0 < test_size < 1:
        raise ValueError(f"test_size must be in (0, 1), got {test_size!r}")
    if not 0 <= max_oov_share < 1:
        raise ValueError(f"max_oov_share must be in [0, 1), got {max_oov_share!r}")


def _check_separable(training: dict, matrix: np.ndarray, train_on: str) -> None:
    """Refuse two training sets whose words have the same vectors: no classifier can tell them
    apart, and the 0.5 it gives every word would read as a divergence of 0, no bias."""
    (first, first_rows), (second, second_rows) = training.items()
    first_vectors = {matrix[row].tobytes() for row in first_rows}
    if first_vectors == {matrix[row].tobytes() for row in second_rows}:
        raise ValueError(
            f"{train_on}[{first!r}] and {train_on}[{second!r}] have the same vectors, so no "
            "classifier can tell them apart (its 0.5 for every word would read as no bias)"
        )


def _stratified_holdout(
    labels: np.ndarray, test_size: float, seed: int
) -> tuple[np.ndarray, np.ndarray]:
    """Train/test masks of scikit-learn's stratified split (WEFE's, for the same seed)."""
    n = labels.shape[0]
    n_test = math.ceil(test_size * n)
    if n - n_test < 2 or n_test < 2:
        raise ValueError(
            f"test_size={test_size} leaves {n - n_test} training and {n_test} held-out words; need 2 each"
        )
    train_rows, test_rows = train_test_split(
        np.arange(n), test_size=test_size, stratify=labels, shuffle=True, random_state=seed
    )
    train, test = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    train[train_rows], test[test_rows] = True, True
    return train, test


def _kl_from_uniform(probabilities: np.ndarray) -> np.ndarray:
    """KL(P || U) of probabilities normalised along the last axis, in nats."""
    distribution = probabilities / probabilities.sum(axis=-1, keepdims=True)
    return special.rel_entr(distribution, 1.0 / distribution.shape[-1]).sum(axis=-1)


def _classify(
    features, labels, classified, iterations, seed, holdout, test_size, classifier
) -> tuple:
    """Per iteration: the divergence, P(second training set | scored word), the accuracy."""
    kls, probabilities, accuracies = [], [], []
    for iteration in range(iterations):
        if holdout:
            train, test = _stratified_holdout(labels, test_size, seed + iteration)
        else:
            train = test = np.ones(labels.shape[0], dtype=bool)
        model = LogisticRegression(**classifier, random_state=seed + iteration)
        try:
            model.fit(features[train], labels[train])
        except ValueError as err:
            raise ValueError(
                f"the classifier (solver={classifier['solver']!r}) cannot be fitted: {err}"
            ) from None
        accuracies.append(float(model.score(features[test], labels[test])))
        p_second = model.predict_proba(classified)[:, list(model.classes_).index(0)]
        kls.append(float(_kl_from_uniform(p_second)))
        probabilities.append(p_second)
    return kls, np.array(probabilities), accuracies


def _divergence_interval(
    probabilities: np.ndarray, set_sizes: list, observed: float, options: dict
) -> dict:
    """The divergence's interval, resampling each scored set's words (classifiers fixed).

    ``probabilities``: iterations x scored words (set after set).
    """
    offsets = np.cumsum([0, *set_sizes[:-1]])
    samples = [np.arange(size) for size in set_sizes]

    def statistic(*drawn, axis=-1):
        columns = np.concatenate(
            [offset + rows for offset, rows in zip(offsets, drawn, strict=True)], axis=-1
        )
        return _kl_from_uniform(probabilities[:, columns]).mean(axis=0)[None]

    return bootstrap_intervals(
        samples, statistic, [observed], options, "words", lambda: leave_one_out(samples, statistic)
    )[0]


def _divergence(words, matrix, training, scored, iterations, seed, holdout, test_size, classifier):
    """The classifier's divergence over the scored words: the result's score fields, and the
    per-iteration probabilities the interval resamples."""
    (first_name, first_rows), (second_name, second_rows) = training.items()
    # The second set is class 0 and the first class 1, as WEFE's labels (-1, +1) sort:
    # the stratified split then draws the same words as WEFE's for the same seed.
    labels = np.repeat([1, 0], [len(first_rows), len(second_rows)])
    scored_rows = [row for rows in scored.values() for row in rows]
    kls, probabilities, accuracies = _classify(
        matrix[first_rows + second_rows],
        labels,
        matrix[scored_rows],
        iterations,
        seed,
        holdout,
        test_size,
        classifier,
    )
    mean_p, scored_words = probabilities.mean(axis=0), [words[row] for row in scored_rows]
    result = {
        "score": float(np.mean(kls)),
        "score_name": "kl_divergence",
        "kl_divergence": float(np.mean(kls)),
        "kl_per_iteration": kls,
        "trained_on": [first_name, second_name],
        "probability_of": second_name,
        "probabilities": dict(zip(scored_words, mean_p.tolist(), strict=True)),
        "distribution": dict(zip(scored_words, (mean_p / mean_p.sum()).tolist(), strict=True)),
        "classifier_accuracy": float(np.mean(accuracies)),
    }
    return result, probabilities


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Rnsb(DirectCompute, evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "words": datasets.Value("string"),
                    "vectors": datasets.Sequence(datasets.Value("float64")),
                }
            ),
            reference_urls=[
                "https://aclanthology.org/P19-1162/",
                "https://aclanthology.org/2021.acl-long.150/",
            ],
        )

    def _check_rows(self, columns: dict) -> None:
        vector_table(columns.get("words"), columns.get("vectors"), allow_zero=True)

    def _compute(
        self,
        words=None,
        vectors=None,
        target_sets=None,
        attribute_sets=None,
        train_on: str = "target_sets",
        iterations: int = 10,
        seed: int = 0,
        holdout: bool = True,
        test_size: float = 0.2,
        solver: str = "liblinear",
        C: float = 1.0,
        tol: float = 1e-4,
        max_iter: int = 10000,
        fit_intercept: bool = True,
        max_oov_share: float = 0.2,
        confidence_level: float | None = None,
        n_resamples: int = 2000,
    ) -> dict:
        options = uncertainty_options(confidence_level, n_resamples, seed)
        classifier = dict(
            solver=solver, C=C, tol=tol, max_iter=max_iter, fit_intercept=fit_intercept
        )
        _check_options(train_on, iterations, seed, classifier, holdout, test_size, max_oov_share)
        on_targets = train_on == "target_sets"
        targets = named_sets(target_sets, "target_sets", 2 if on_targets else None)
        attributes = named_sets(attribute_sets, "attribute_sets", None if on_targets else 2)
        disjoint_sets(targets, attributes)
        index, matrix = vector_table(words, vectors, allow_zero=True)
        target_rows, target_oov = lookup_sets(targets, "target_sets", index, max_oov_share)
        attribute_rows, attribute_oov = lookup_sets(
            attributes, "attribute_sets", index, max_oov_share
        )
        training, scored = (
            (target_rows, attribute_rows) if on_targets else (attribute_rows, target_rows)
        )
        _check_separable(training, matrix, train_on)
        result, probabilities = _divergence(
            words, matrix, training, scored, iterations, seed, holdout, test_size, classifier
        )
        result["train_on"] = train_on
        result["words_used"] = {
            n: [words[r] for r in rows] for n, rows in {**target_rows, **attribute_rows}.items()
        }
        result["oov"] = {**target_oov, **attribute_oov}
        if options is not None:
            sizes = [len(rows) for rows in scored.values()]
            interval = _divergence_interval(probabilities, sizes, result["score"], options)
            result["confidence_intervals"] = {"kl_divergence": interval}
        return result
