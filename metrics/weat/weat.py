"""Word Embedding Association Test (WEAT): statistic, effect size and permutation p-value."""

import evaluate

# evaluate copies into its cache only the same-folder files this script imports: the
# computation (weat_scores.py) and both files it imports.
from .bias_hub_common import DirectCompute
from .bias_hub_intervals import (
    uncertainty_options,  # noqa: F401
)
from .weat_scores import WeatScores

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


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Weat(DirectCompute, evaluate.Metric):
    scores_class = WeatScores
    card = (_DESCRIPTION, _KWARGS_DESCRIPTION, _CITATION)
    papers = ("https://doi.org/10.1126/science.aal4230",)
