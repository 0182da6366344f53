"""Perplexity of the male form minus the female form, per pair and per word."""

import evaluate

# evaluate copies into its cache only the same-folder files this script imports: the
# computation (perplexity_gap_scores.py) and both files it imports.
from .bias_hub_common import DirectCompute
from .bias_hub_intervals import (
    uncertainty_options,  # noqa: F401
)
from .perplexity_gap_scores import PerplexityGapScores

_DESCRIPTION = """\
For sentence pairs that differ only in gender words, a causal language model gives each
form a perplexity. The perplexity gap of a pair is the male form's perplexity minus the
female form's: positive when the model finds the male form less natural. Given the words
of each pair, the measurement also averages the gap over the pairs each word occurs in
(the word's perplexity gap), and given a score per word (for example the attention gap
of `metrics/gender_attention_gap`) it correlates the two over the words they share
(Pearson and Spearman, with two-sided p-values).

`pair_assignment="first"` follows the study this module was written for (§4.2): words
take pairs in order (by `word_order`, else by `word_scores`, largest first), each pair
is used by the first word that contains it and by no later word, and a word's gap is the
mean over the pairs it took. The default, "all", counts every pair for every word in it.

With `confidence_level`, the mean gap, the median gap and the share of pairs whose male
form has the higher perplexity get bootstrap confidence intervals, resampling pairs.
"""

_KWARGS_DESCRIPTION = """
Args:
    male_perplexities (`list` of `float`): perplexity of each pair's male form (>= 1: a
        perplexity is the exponential of a mean negative log-likelihood).
    female_perplexities (`list` of `float`): perplexity of each pair's female form (>= 1).
    pair_words (`list` of `list` of `str`, optional): the words of each pair (gender
        words left out); a word counts once per pair; compared after Unicode NFKC
        normalisation, whitespace trimming and lower-casing (as gender_attention_gap does).
    word_scores (`dict` of `str` to `float`, optional): a finite score per word to
        correlate with the words' perplexity gaps; needs `pair_words`. A NaN, an infinity or
        a value that is no number is refused, naming the word.
    min_pairs (`int`, default 1): a word is reported only if it has this many pairs.
    pair_assignment (`str`, default "all"): "all": a word's gap averages every pair it
        occurs in; "first": each pair is used only by the first word, in the order words
        take pairs, that occurs in it (needs `pair_words`, and `word_order` or `word_scores`).
    word_order (`list` of `str`, optional): with "first", the order words take pairs in;
        default: the words of `word_scores`, largest score first. Words missing from the
        order take no pair.
    frequency_gaps (`list` of `float`, optional): per pair, how much more frequent its male
        gender words are than its female ones (e.g. mean Zipf frequency of the male words minus
        that of the female words; 0 for a pair without gender words). A rarer word makes a
        sentence less likely whatever its gender, so this adds the frequency-matched view.
    frequency_tolerance (`float`, default 0.25): a pair is frequency-matched when
        |frequency gap| <= this.
    confidence_level (`float`, optional): e.g. 0.95 for 95 % bootstrap intervals; None
        (default) computes none.
    n_resamples (`int`, default 2000): bootstrap resamples.
    seed (`int` or None, default 0): seed of the resampling.
Returns:
    perplexity_gap (`list` of `float`): male minus female, per pair.
    mean_gap (`float`), median_gap (`float`): over pairs.
    male_higher_rate (`float`): share of pairs whose male form has the higher perplexity.
    wilcoxon_pvalue (`float`): two-sided Wilcoxon signed-rank test of the log-perplexity
        differences (NaN with fewer than two non-zero differences).
    words, word_perplexity_gap, word_pair_count, word_pairs: per word, when `pair_words`
        is given: sorted by word ("all") or in the order words took pairs ("first");
        word_pairs holds the indices of the pairs each word's gap averages.
    correlation: when `word_scores` is given, `{"n_words", "pearson", "pearson_pvalue",
        "spearman", "spearman_pvalue"}` (NaN with fewer than three shared words).
    frequency_matched (with `frequency_gaps`): {"tolerance_zipf", "pairs_matched",
        "confound": {"n_pairs", and with 3 pairs whose frequency gaps vary:
        "spearman_log_ppl_ratio_vs_zipf_gap", "spearman_pvalue",
        "slope_log_ppl_ratio_per_zipf" (least squares)}, "mean_gap", "male_higher_rate",
        "correlation"}: the mean gap, share and correlation (as above) over the matched pairs
        alone (None without a matched pair).
    confidence_intervals (`dict`, with `confidence_level`): for "mean_gap", "median_gap"
        and "male_higher_rate" {"low", "high", "confidence_level", "method" ("BCa", or
        "percentile": always for the median, whose jackknife is not consistent),
        "n_resamples", "unit" ("pairs"), "n_units", "reason"}; for
        "word_perplexity_gap[i]" (unit "pairs": the word's own pairs resampled; none
        below 2 pairs); for "correlation_pearson" and "correlation_spearman" (unit
        "words": each word's score and gap drawn together).
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/perplexity_gap")
    >>> result = metric.compute(
    ...     male_perplexities=[10.0, 20.0, 30.0],
    ...     female_perplexities=[12.0, 15.0, 30.0],
    ...     pair_words=[["is", "tall"], ["is", "kind"], ["tall"]],
    ...     word_scores={"is": 0.5, "tall": -0.25, "kind": 1.0},
    ... )
    >>> result["perplexity_gap"]
    [-2.0, 5.0, 0.0]
    >>> result["mean_gap"]
    1.0
    >>> dict(zip(result["words"], result["word_perplexity_gap"]))
    {'is': 1.5, 'kind': 5.0, 'tall': -1.0}
    >>> round(result["correlation"]["spearman"], 3)
    1.0

    The study's rule: "kind" (score 1.0) takes the second pair, "is" (0.5) then only the
    first, "tall" (-0.25) the third; every pair is used once.

    >>> result = metric.compute(
    ...     male_perplexities=[10.0, 20.0, 30.0],
    ...     female_perplexities=[12.0, 15.0, 30.0],
    ...     pair_words=[["is", "tall"], ["is", "kind"], ["tall"]],
    ...     word_scores={"is": 0.5, "tall": -0.25, "kind": 1.0},
    ...     pair_assignment="first",
    ... )
    >>> result["words"], result["word_perplexity_gap"], result["word_pairs"]
    (['kind', 'is', 'tall'], [5.0, -2.0, 0.0], [[1], [0], [2]])
    >>> result = metric.compute(
    ...     male_perplexities=[10.0, 20.0, 30.0, 41.0],
    ...     female_perplexities=[12.0, 15.0, 30.0, 40.0],
    ...     confidence_level=0.95,
    ... )
    >>> interval = result["confidence_intervals"]["median_gap"]
    >>> interval["method"], interval["unit"], interval["n_units"]
    ('percentile', 'pairs', 4)
"""

_CITATION = """\
@inproceedings{nadeem-etal-2021-stereoset,
  title = {{StereoSet}: Measuring stereotypical bias in pretrained language models},
  author = {Nadeem, Moin and Bethke, Anna and Reddy, Siva},
  booktitle = {Proceedings of ACL-IJCNLP 2021},
  year = {2021},
  pages = {5356--5371}
}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class PerplexityGap(DirectCompute, evaluate.Measurement):
    scores_class = PerplexityGapScores
    card = (_DESCRIPTION, _KWARGS_DESCRIPTION, _CITATION)
