"""Word Embedding Association Test (WEAT): statistic, effect size and permutation p-value."""

import itertools
import math

import datasets
import evaluate
import numpy as np

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
WEAT (Caliskan et al., 2017) asks whether two sets of target words X and Y (male and female
names) differ in how strongly they associate with two sets of attribute words A and B (career
and family words). Each target word w gets s(w, A, B) = mean_{a in A} cos(w, a) -
mean_{b in B} cos(w, b); the test gives the statistic sum_X s - sum_Y s (the "WEAT value" of
Kato and Miyao's RNSB-vs-WinoBias study, which grows with the set sizes), the effect size
(mean_X s - mean_Y s) / std_{X u Y} s, and Caliskan et al.'s one-sided permutation p-value:
the share of equal-size re-partitions of X u Y whose statistic is strictly larger. It is exact
(enumerated, possibly 0) when the partitions are few, else (k + 1) / (N + 1) over `permutations`
seeded draws, as in WEFE; `p_value_ties="include"` counts ties too. WEFE's own sampled p-value
draws with replacement and estimates a different quantity (see the card). A zero spread leaves
the effect size and p-value None, with the reason in `undefined`.

With `confidence_level`, the effect size and the statistic get bootstrap intervals that resample
each of the four word sets independently. Input and result shape are shared with `rnsb`.
"""

_KWARGS_DESCRIPTION = """
Args:
    words (`list` of `str`): the words whose vectors are given, one per row of `vectors`.
        Words of the sets that are not among them are out of vocabulary (OOV).
    vectors (`list` of `list` of `float`): one vector per word, all of one dimension, finite.
    target_sets (`dict[str, list[str]]`): exactly two named target sets, X then Y.
    attribute_sets (`dict[str, list[str]]`): exactly two named attribute sets, A then B.
    permutations (`int`, default 10000): random partitions drawn when the exact
        test would need more than `exact_max_partitions` partitions.
    exact_max_partitions (`int`, default 200000): enumerate every partition up to this many
        (0: always sample).
    seed (`int`, default 0): seed of the sampled permutation test.
    alternative (`str`, default "greater"): "greater" (Caliskan's one-sided test),
        "less" or "two-sided" (|statistic| compared).
    p_value_ties (`str`, default "exclude"): "exclude" counts only partitions strictly
        more extreme than the observed statistic (Caliskan et al.'s ">"); "include" also
        counts those exactly as extreme, the observed partition among them (">=", more
        conservative; the exact p-value is then at least 1 / n_partitions).
    std_ddof (`int`, default 0): delta degrees of freedom of the effect size's standard
        deviation (0: population, as WEFE and responsibly; 1: sample); a whole number from 0
        to n - 1 for the n target words used, so that the deviation is defined.
    max_oov_share (`float`, default 0.2): refuse (ValueError) when a set loses more
        than this share of its words.
    allow_unequal_targets (`bool`, default False): WEAT's permutation test assumes
        |X| = |Y|; unequal sizes (after OOV removal) are an error unless this is set.
    confidence_level (`float`, optional): e.g. 0.95 for a 95 % bootstrap interval of the
        effect size; None (default) computes none.
    n_resamples (`int`, default 2000): bootstrap resamples (they use `seed` too).

Returns:
    score (`float` or None): the effect size (the headline number; positive: X~A, Y~B).
    score_name (`str`): "effect_size".
    effect_size (`float` or None); statistic (`float`): sum_X s - sum_Y s, the WEAT value
        c(X, A) + c(Y, B) - c(X, B) - c(Y, A); p_value (`float` or None): exact:
        k / n_partitions; sampled: (k + 1) / (n_partitions + 1), k partitions counted as
        more extreme. None where undefined.
    p_value_method (`str` or None): "exact" or "sampled"; n_partitions (`int`): partitions
        evaluated.
    undefined (`dict[str, str]`): why a score is None ({} normally).
    confidence_intervals (`dict`, with `confidence_level`): for "effect_size" and
        "statistic" {"low", "high", "confidence_level", "method" ("BCa" or "percentile"),
        "n_resamples", "unit" ("words"), "n_units", "reason"}.
    associations (`dict[str, float]`): s(w, A, B) for every target word used.
    words_used (`dict[str, list[str]]`) and oov (`dict[str, list[str]]`): per set.

Examples:
    Two target words near "a" and two near "b" (2-d vectors). By hand:
    s(x1) = 0.9 / sqrt(1.01) = 0.8955, s(x2) = 0.8 / sqrt(1.04) = 0.7845, s(y_i) = -s(x_i),
    so the effect size is 1.68 / 0.8418 = 1.996. The sum of s over the pool is 0, so a
    partition's statistic is 2 * sum_{X_i} s; the 6 partitions' X_i give
    {x1, x2}: 3.360 (observed), {x1, y2}: 0.222, {x1, y1} and {x2, y2}: 0,
    {x2, y1}: -0.222, {y1, y2}: -3.360. None is larger than the observed one, so p = 0/6;
    with p_value_ties="include" the observed one counts, p = 1/6. The statistic is
    c(X, A) + c(Y, B) - c(X, B) - c(Y, A) = (0.9950 + 0.9806) + (0.9806 + 0.9950)
    - (0.0995 + 0.1961) - (0.1961 + 0.0995) = 3.360:

    >>> import evaluate
    >>> metric = evaluate.load("metrics/weat")
    >>> result = metric.compute(
    ...     words=["x1", "x2", "y1", "y2", "a", "b"],
    ...     vectors=[[1, 0.1], [1, 0.2], [0.1, 1], [0.2, 1], [1, 0], [0, 1]],
    ...     target_sets={"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    ...     attribute_sets={"A": ["a"], "B": ["b"]},
    ... )
    >>> round(result["effect_size"], 3), round(result["statistic"], 3)
    (1.996, 3.36)
    >>> result["p_value"], result["p_value_method"]
    (0.0, 'exact')
    >>> result = metric.compute(
    ...     words=["x1", "x2", "y1", "y2", "a", "b"],
    ...     vectors=[[1, 0.1], [1, 0.2], [0.1, 1], [0.2, 1], [1, 0], [0, 1]],
    ...     target_sets={"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    ...     attribute_sets={"A": ["a"], "B": ["b"]},
    ...     p_value_ties="include",
    ... )
    >>> result["p_value"]
    0.1666666666666666...

    Identical target vectors leave nothing to test:

    >>> result = metric.compute(
    ...     words=["x1", "y1", "a", "b"], vectors=[[1, 1], [1, 1], [1, 0], [0, 1]],
    ...     target_sets={"X": ["x1"], "Y": ["y1"]}, attribute_sets={"A": ["a"], "B": ["b"]},
    ... )
    >>> result["effect_size"], result["p_value"], result["undefined"]["p_value"]
    (None, None, 'every target word has the same association s(w, A, B): all partitions tie')
"""

_CITATION = """\
@article{caliskan2017semantics,
  title={Semantics derived automatically from language corpora contain human-like biases},
  author={Caliskan, Aylin and Bryson, Joanna J. and Narayanan, Arvind},
  journal={Science},
  volume={356},
  number={6334},
  pages={183--186},
  year={2017}
}
"""

_ALTERNATIVES = ("greater", "less", "two-sided")
# Spreads of s(w, A, B) below this are rounding noise: the words' associations are equal.
_FLAT = 1e-12
_TIES = ("exclude", "include")
_UNDEFINED = "every target word has the same association s(w, A, B)"


def _whole(value) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _check_options(
    alternative, p_value_ties, permutations, exact_max_partitions, max_oov_share
) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    if p_value_ties not in _TIES:
        raise ValueError(f"p_value_ties must be one of {_TIES}, got {p_value_ties!r}")
    if not _whole(permutations) or permutations < 1:
        raise ValueError(f"permutations must be a positive int, got {permutations!r}")
    if not _whole(exact_max_partitions) or exact_max_partitions < 0:
        raise ValueError(
            f"exact_max_partitions must be a whole number of at least 0 (0: always sample), "
            f"got {exact_max_partitions!r}"
        )
    if not 0 <= max_oov_share < 1:
        raise ValueError(f"max_oov_share must be in [0, 1), got {max_oov_share!r}")


def _check_targets(target_rows: dict, target_oov: dict, allow_unequal: bool, std_ddof) -> None:
    """Equal target sets (unless allowed) and a std_ddof that leaves the deviation defined."""
    (x_name, x_rows), (y_name, y_rows) = target_rows.items()
    if len(x_rows) != len(y_rows) and not allow_unequal:
        raise ValueError(
            f"target_sets {x_name!r} and {y_name!r} have {len(x_rows)} and {len(y_rows)} words in the "
            f"vocabulary; WEAT's permutation test needs equal sizes (OOV: {target_oov}). "
            "Balance the sets or pass allow_unequal_targets=True."
        )
    n = len(x_rows) + len(y_rows)
    if not _whole(std_ddof) or not 0 <= std_ddof <= n - 1:
        raise ValueError(
            f"std_ddof must be a whole number from 0 to {n - 1} (the {n} target words used minus 1), "
            f"so that the standard deviation of their associations is defined; got {std_ddof!r}"
        )


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _partition_sums(associations: np.ndarray, n_first: int, settings: dict):
    """Sums of s over the first part of every (or of sampled) re-partitions of the pool."""
    n = associations.shape[0]
    if math.comb(n, n_first) <= settings["exact_max_partitions"]:
        combos = itertools.combinations(range(n), n_first)
        chosen = np.fromiter(itertools.chain.from_iterable(combos), dtype=np.int32).reshape(
            -1, n_first
        )
        return associations[chosen].sum(axis=1), "exact"
    rng = np.random.default_rng(settings["seed"])
    chosen = np.argsort(rng.random((settings["permutations"], n)), axis=1)[:, :n_first]
    return associations[chosen].sum(axis=1), "sampled"


def _p_value(associations: np.ndarray, n_x: int, statistic: float, settings: dict) -> tuple:
    """(p-value, "exact" or "sampled", partitions evaluated) of the permutation test."""
    sums, method = _partition_sums(associations, n_x, settings)
    resampled = 2 * sums - associations.sum()
    # Statistics within `slack` of the observed one are ties (the observed partition itself,
    # recomputed here with other rounding, is one): "exclude" leaves them out (Caliskan's
    # strict ">"), "include" counts them (">=").
    slack = 1e-12 * max(1.0, float(np.abs(associations).sum()))
    if settings["p_value_ties"] == "include":
        slack = -slack
    alternative = settings["alternative"]
    if alternative == "greater":
        extreme = resampled - statistic
    elif alternative == "less":
        extreme = statistic - resampled
    else:
        extreme = np.abs(resampled) - abs(statistic)
    count = int((extreme > slack).sum())
    # Sampled: (k + 1) / (N + 1), the observed partition counted once with the draws, so an
    # estimate from finitely many draws is never 0.
    p_value = count / len(resampled) if method == "exact" else (count + 1) / (len(resampled) + 1)
    return float(p_value), method, len(resampled)


def _intervals(
    cosines: np.ndarray, n_x: int, n_a: int, std_ddof: int, observed: list, options: dict
) -> list:
    """Intervals of the effect size and the statistic, resampling the members of X, Y, A and
    B independently (each resample keeps the four sets' sizes).

    ``cosines``: target words (X then Y) x attribute words (A then B).
    """
    n_y, n_b = cosines.shape[0] - n_x, cosines.shape[1] - n_a
    samples = [np.arange(n) for n in (n_x, n_y, n_a, n_b)]

    def statistic(x, y, a, b, axis=-1):
        to_a = cosines[:, a].mean(axis=-1)  # (targets, ...resamples)
        to_b = cosines[:, n_a + b].mean(axis=-1)
        s = np.moveaxis(to_a - to_b, 0, -1)  # (...resamples, targets)
        s_x = np.take_along_axis(s, x, axis=-1)
        s_y = np.take_along_axis(s, n_x + y, axis=-1)
        spread = np.concatenate([s_x, s_y], axis=-1).std(axis=-1, ddof=std_ddof)
        with np.errstate(divide="ignore", invalid="ignore"):
            effect = (s_x.mean(axis=-1) - s_y.mean(axis=-1)) / np.where(
                spread > _FLAT, spread, np.nan
            )
        return np.stack([effect, s_x.sum(axis=-1) - s_y.sum(axis=-1)])

    return bootstrap_intervals(
        samples, statistic, observed, options, "words", lambda: leave_one_out(samples, statistic)
    )


def _scores(associations: np.ndarray, n_x: int, std_ddof: int, settings: dict) -> dict:
    """Effect size, statistic and p-value of the associations (X's first), with `undefined`."""
    s_x, s_y = associations[:n_x], associations[n_x:]
    scores = {
        "effect_size": None,
        "statistic": float(s_x.sum() - s_y.sum()),
        "p_value": None,
        "p_value_method": None,
        "n_partitions": 0,
        "undefined": {},
    }
    spread = associations.std(ddof=std_ddof)
    if not spread > _FLAT:
        scores["undefined"] = {
            "effect_size": f"{_UNDEFINED}: the spread is 0",
            "p_value": f"{_UNDEFINED}: all partitions tie",
        }
        return scores
    scores["effect_size"] = float((s_x.mean() - s_y.mean()) / spread)
    p_value, method, n_partitions = _p_value(associations, n_x, scores["statistic"], settings)
    scores.update(p_value=p_value, p_value_method=method, n_partitions=int(n_partitions))
    return scores


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Weat(DirectCompute, evaluate.Metric):
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
            reference_urls=["https://doi.org/10.1126/science.aal4230"],
        )

    def _check_rows(self, columns: dict) -> None:
        vector_table(columns.get("words"), columns.get("vectors"), allow_zero=True)

    def _compute(
        self,
        words=None,
        vectors=None,
        target_sets=None,
        attribute_sets=None,
        permutations: int = 10000,
        exact_max_partitions: int = 200000,
        seed: int = 0,
        alternative: str = "greater",
        p_value_ties: str = "exclude",
        std_ddof: int = 0,
        max_oov_share: float = 0.2,
        allow_unequal_targets: bool = False,
        confidence_level: float | None = None,
        n_resamples: int = 2000,
    ) -> dict:
        options = uncertainty_options(confidence_level, n_resamples, seed)
        targets = named_sets(target_sets, "target_sets", 2)
        attributes = named_sets(attribute_sets, "attribute_sets", 2)
        disjoint_sets(targets, attributes)
        _check_options(alternative, p_value_ties, permutations, exact_max_partitions, max_oov_share)
        index, matrix = vector_table(words, vectors, allow_zero=False)
        target_rows, target_oov = lookup_sets(targets, "target_sets", index, max_oov_share)
        attribute_rows, attribute_oov = lookup_sets(
            attributes, "attribute_sets", index, max_oov_share
        )
        _check_targets(target_rows, target_oov, allow_unequal_targets, std_ddof)
        x_rows, y_rows = target_rows.values()
        a_rows, b_rows = attribute_rows.values()
        unit = _unit(matrix)
        cosines = unit[x_rows + y_rows] @ unit[a_rows + b_rows].T
        a_side, b_side = cosines[:, : len(a_rows)], cosines[:, len(a_rows) :]
        associations = a_side.mean(axis=1) - b_side.mean(axis=1)
        settings = dict(
            exact_max_partitions=exact_max_partitions,
            permutations=permutations,
            seed=seed,
            p_value_ties=p_value_ties,
            alternative=alternative,
        )
        scores = _scores(associations, len(x_rows), std_ddof, settings)
        used = {
            n: [words[r] for r in rows] for n, rows in {**target_rows, **attribute_rows}.items()
        }
        target_words = [words[row] for row in x_rows + y_rows]
        result = {"score": scores["effect_size"], "score_name": "effect_size", **scores}
        result["associations"] = dict(zip(target_words, associations.tolist(), strict=True))
        result["words_used"] = used
        result["oov"] = {**target_oov, **attribute_oov}
        if options is not None:
            effect_size = scores["effect_size"]
            observed = [np.nan if effect_size is None else effect_size, scores["statistic"]]
            effect, total = _intervals(
                cosines, len(x_rows), len(a_rows), std_ddof, observed, options
            )
            result["confidence_intervals"] = {"effect_size": effect, "statistic": total}
        return result
