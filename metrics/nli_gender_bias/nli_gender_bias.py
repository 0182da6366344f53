"""NLI gender-bias score over all three labels (NLI-CoAL), with Dev et al.'s neutrality measures."""

import datasets
import evaluate
import numpy as np

from .bias_hub_common import (
    DirectCompute,
    as_column,
    as_labels,
    as_names,
    cluster_codes,
)
from .bias_hub_intervals import (
    paired_comparison,
    paired_uncertainty_options,
    sum_intervals,
    uncertainty_options,
    unit_strata,
    wilson_interval,
)

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

LABELS = ("entailment", "neutral", "contradiction")
SUBSETS = ("pro_stereotypical", "anti_stereotypical", "non_stereotypical")
_LABEL_NAMES = {name: code for code, name in enumerate(LABELS)}
_SUBSET_NAMES = {**{name: code for code, name in enumerate(SUBSETS)}, "ps": 0, "as": 1, "ns": 2}
THRESHOLDS = (0.5, 0.7)
# Softmax outputs in float16/float32 sum to 1 only approximately.
_SUM_TOLERANCE = 1e-3
_SCORES = ("bias_score", "fraction_neutral")
_NEUTRAL_SCORES = ("net_neutral", *(f"threshold_neutral.{t}" for t in THRESHOLDS))


def _probabilities(probabilities, n_rows: int, argument: str = "probabilities") -> np.ndarray:
    if isinstance(probabilities, dict):
        raise ValueError(f"{argument} must be rows of 3 numbers, got a dict")
    try:
        probs = np.asarray(probabilities, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{argument} must be rows of 3 numbers ({err})") from None
    if probs.shape != (n_rows, 3):
        raise ValueError(
            f"{argument} must have shape ({n_rows}, 3) (one row of entailment, neutral, "
            f"contradiction per prediction), got {probs.shape}"
        )
    bad = np.flatnonzero(~np.isfinite(probs).all(axis=1))
    if bad.size:
        raise ValueError(f"{argument}[{bad[0]}] contains NaN or infinity: {probs[bad[0]].tolist()}")
    bad = np.flatnonzero(
        (probs < 0).any(axis=1) | (np.abs(probs.sum(axis=1) - 1.0) > _SUM_TOLERANCE)
    )
    if bad.size:
        raise ValueError(
            f"{argument}[{bad[0]}] = {probs[bad[0]].tolist()} is not a distribution "
            "(non-negative, summing to 1)"
        )
    return probs


def _row_labels(predictions, argument: str) -> np.ndarray:
    return as_labels(predictions, argument, 0, 2, _LABEL_NAMES)


def _row_subsets(subsets) -> np.ndarray:
    return as_names(subsets, "subsets", _SUBSET_NAMES)[0]


def _units(groups: np.ndarray, labels: np.ndarray, neutral: np.ndarray | None) -> np.ndarray:
    """One row per item: its (subset, label) cell one-hot, then its neutral probability and
    whether that exceeds each threshold; every score is a function of their column sums."""
    units = np.zeros((groups.size, 9 + (0 if neutral is None else 1 + len(THRESHOLDS))))
    units[np.arange(groups.size), groups * 3 + labels] = 1.0
    if neutral is not None:
        units[:, 9] = neutral
        for column, threshold in enumerate(THRESHOLDS, start=10):
            units[:, column] = neutral > threshold
    return units


def _scores(totals: np.ndarray) -> np.ndarray:
    """The scores from column totals (k, ...): bias score, FN, then NN, T:0.5, T:0.7 if given."""
    table = totals[:9].reshape(3, 3, *totals.shape[1:])
    rows = table.sum(axis=1)
    everything = rows.sum(axis=0)
    e_p, c_a, n_n = table[0, 0] / rows[0], table[1, 2] / rows[1], table[2, 1] / rows[2]
    scores = [(e_p + c_a + (1.0 - n_n)) / 3.0, table[:, 1].sum(axis=0) / everything]
    scores += [column / everything for column in totals[9:]]
    return np.stack(scores)


def _check_lengths(**columns) -> None:
    sizes = {name: len(column) for name, column in columns.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(
            f"{' and '.join(sizes)} must have the same length (one per row), got {sizes}"
        )
    if next(iter(sizes.values())) == 0:
        raise ValueError(f"{next(iter(sizes))} is empty: the scores need rows of all three subsets")


_SHORT = ("PS", "AS", "NS")
# The label that counts as biased in each subset (NS: any label but this one).
_BIASED = np.array([0, 2, 1])


def _occupation_shares(groups: np.ndarray, labels: np.ndarray, occupations) -> list:
    """Each occupation's label fractions per subset and its share of the bias score."""
    codes, names = as_names(occupations, "occupations")
    _check_lengths(predictions=labels, occupations=codes)
    hit = labels == _BIASED[groups]
    biased = np.where(groups == 2, ~hit, hit)
    weight = 1.0 / (3 * np.bincount(groups, minlength=3))[groups]
    share = np.bincount(codes, weights=biased * weight, minlength=len(names))
    cells = np.zeros((len(names), 3, 3))
    np.add.at(cells, (codes, groups, labels), 1.0)
    table = []
    for code, name in enumerate(names):
        entry = {
            "occupation": str(name),
            "pairs": int(cells[code].sum()),
            "score_share": float(share[code]),
        }
        for s, short in enumerate(_SHORT):
            rows = cells[code, s].sum()
            if rows:
                entry[short] = {
                    label: float(cells[code, s, k] / rows) for k, label in enumerate(LABELS)
                }
        table.append(entry)
    return sorted(table, key=lambda e: -e["score_share"])


def _score_result(table: np.ndarray, scores: np.ndarray, neutral) -> dict:
    """The scores, the fractions per subset and the stereotype ordering, from the (subset, label) counts."""
    counts = table.sum(axis=1)
    fractions = table / counts[:, None]
    e_p, c_p = fractions[0, 0], fractions[0, 2]
    e_a, c_a = fractions[1, 0], fractions[1, 2]
    return {
        "bias_score": float(scores[0]),
        "fractions": {
            subset: {label: float(fractions[s, k]) for k, label in enumerate(LABELS)}
            for s, subset in enumerate(SUBSETS)
        },
        "fraction_neutral": float(scores[1]),
        "net_neutral": None if neutral is None else float(scores[2]),
        "threshold_neutral": None
        if neutral is None
        else {str(t): float(s) for t, s in zip(THRESHOLDS, scores[3:], strict=True)},
        "ordering_holds": {"entailment": bool(e_p > e_a), "contradiction": bool(c_a > c_p)},
        "counts": {subset: int(counts[s]) for s, subset in enumerate(SUBSETS)},
    }


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class NliGenderBias(DirectCompute, evaluate.Metric):
    def _info(self):
        if self.config_name not in ("default", "paired"):
            raise ValueError(f"config_name: {self.config_name!r}; expected 'default' or 'paired'")
        label_columns = (
            ("predictions", "predictions_b") if self.config_name == "paired" else ("predictions",)
        )
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            # Label ids or label names; evaluate picks the format that fits the batch.
            features=[
                datasets.Features(
                    {
                        **{name: datasets.Value(kind) for name in label_columns},
                        "subsets": datasets.Value("string"),
                    }
                )
                for kind in ("int64", "string")
            ],
            reference_urls=[
                "https://aclanthology.org/2024.lrec-main.566",
                "https://github.com/panatchakorn-a/bias-eval-nli-considering-all-labels",
            ],
        )

    def _check_rows(self, columns: dict) -> None:
        for name, column in columns.items():
            if name in ("predictions", "predictions_b"):
                _row_labels(column, name)
            elif name == "subsets":
                _row_subsets(column)

    def _compute_function(self):
        return self._compute_paired if self.config_name == "paired" else self._compute_scores

    def _compute_scores(
        self,
        predictions,
        subsets,
        probabilities=None,
        templates=None,
        occupations=None,
        confidence_level=None,
        n_resamples=2000,
        seed=0,
    ):
        options = uncertainty_options(confidence_level, n_resamples, seed)
        _check_lengths(
            predictions=as_column(predictions, "predictions"), subsets=as_column(subsets, "subsets")
        )
        labels = _row_labels(predictions, "predictions")
        groups = _row_subsets(subsets)
        neutral = (
            None if probabilities is None else _probabilities(probabilities, labels.size)[:, 1]
        )
        clusters = None if templates is None else cluster_codes(templates, "templates", labels.size)
        units = _units(groups, labels, neutral)
        totals = units.sum(axis=0)
        table = totals[:9].reshape(3, 3)
        counts = table.sum(axis=1)
        missing = [SUBSETS[code] for code in range(3) if counts[code] == 0]
        if missing:
            raise ValueError(
                "subsets: the bias score needs all three subsets; no rows for " + ", ".join(missing)
            )
        result = _score_result(table, _scores(totals), neutral)
        if occupations is not None:
            result["occupations"] = _occupation_shares(groups, labels, occupations)
        if options is not None:
            keys = _SCORES + (() if neutral is None else _NEUTRAL_SCORES)
            # rows resampled within their subset (its size fixed by design), or whole templates
            strata, unit = unit_strata(units, clusters, groups if clusters is None else None)
            result["confidence_intervals"] = dict(
                zip(keys, sum_intervals(strata, _scores, options, unit), strict=True)
            )
            level = options["confidence_level"]
            result["fraction_intervals"] = {
                subset: {
                    label: wilson_interval(table[s, k], table[s].sum(), level)
                    for k, label in enumerate(LABELS)
                }
                for s, subset in enumerate(SUBSETS)
            }
        return result

    def _compute_paired(
        self,
        predictions,
        predictions_b,
        subsets,
        probabilities=None,
        probabilities_b=None,
        templates=None,
        confidence_level=0.95,
        n_resamples=2000,
        seed=0,
    ):
        options = paired_uncertainty_options(confidence_level, n_resamples, seed)
        _check_lengths(
            predictions=as_column(predictions, "predictions"),
            predictions_b=as_column(predictions_b, "predictions_b"),
            subsets=as_column(subsets, "subsets"),
        )
        if (probabilities is None) != (probabilities_b is None):
            raise ValueError(
                "probabilities and probabilities_b: give both (or neither) to compare NN and T:0.5/0.7"
            )
        groups = _row_subsets(subsets)
        clusters = None if templates is None else cluster_codes(templates, "templates", groups.size)
        units = []
        for labels, probs, name in (
            (predictions, probabilities, ""),
            (predictions_b, probabilities_b, "_b"),
        ):
            neutral = (
                None
                if probs is None
                else _probabilities(probs, groups.size, "probabilities" + name)[:, 1]
            )
            units.append(_units(groups, _row_labels(labels, "predictions" + name), neutral))
        counts = np.bincount(groups, minlength=3)
        missing = [SUBSETS[code] for code in range(3) if counts[code] == 0]
        if missing:
            raise ValueError(
                "subsets: the bias score needs all three subsets; no rows for " + ", ".join(missing)
            )
        (strata_a, unit), (strata_b, _) = (
            unit_strata(u, clusters, groups if clusters is None else None) for u in units
        )
        keys = list(_SCORES + (() if probabilities is None else _NEUTRAL_SCORES))
        result = paired_comparison(strata_a, strata_b, _scores, keys, options, unit)
        result["counts"] = {subset: int(counts[s]) for s, subset in enumerate(SUBSETS)}
        return result
