"""Relative Negative Sentiment Bias (RNSB) as a word-set metric: KL divergence from uniform.

The computation alone (no ``evaluate``, no ``datasets``): pipelines call it as it is, and
``rnsb.py`` wraps it for ``evaluate.load``.
"""

import math

import numpy as np
from scipy import special
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split

from .bias_hub_common import (
    Scores,
    disjoint_sets,
    lookup_sets,
    named_sets,
    vector_table,
)
from .bias_hub_intervals import (
    bootstrap_intervals,
    leave_one_out,
    uncertainty_options,
    whole_number,
)

_ORIENTATIONS = ("target_sets", "attribute_sets")


def _check_options(
    train_on, iterations, seed, classifier: dict, holdout, test_size, max_oov_share
) -> None:
    if train_on not in _ORIENTATIONS:
        raise ValueError(f"train_on must be one of {_ORIENTATIONS}, got {train_on!r}")
    if not whole_number(iterations) or iterations < 1:
        raise ValueError(f"iterations must be a positive int, got {iterations!r}")
    if not whole_number(seed):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    if not classifier["C"] > 0:
        raise ValueError(f"C must be positive, got {classifier['C']!r}")
    if not classifier["tol"] > 0:
        raise ValueError(f"tol must be positive, got {classifier['tol']!r}")
    if not whole_number(classifier["max_iter"]) or classifier["max_iter"] < 1:
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
    features, classified = matrix[first_rows + second_rows], matrix[scored_rows]
    # Per iteration: the divergence, P(second training set | scored word), the accuracy.
    kls, per_iteration, accuracies = [], [], []
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
        per_iteration.append(p_second)
    probabilities = np.array(per_iteration)
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


class RnsbScores(Scores):
    name = "rnsb"

    def columns(self) -> dict:
        return {"words": "string", "vectors": ["float64"]}

    def check_rows(self, columns: dict) -> None:
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
