"""Perplexity of the male form minus the female form, per pair and per word."""

import datasets
import evaluate
import numpy as np
from scipy import stats

from .bias_hub_common import (
    DirectCompute,
    as_column,
    as_numbers,
    normalise_name,
    refuse_rows,
)
from .bias_hub_intervals import (
    bootstrap_intervals,
    correlation_intervals,
    mean_intervals,
    no_interval,
    sum_intervals,
    uncertainty_options,
)

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


def _check_perplexities(values, name):
    array = as_numbers(values, name)
    # exp(mean negative log-likelihood) with a likelihood of at most 1: never below 1
    refuse_rows(
        array < 1,
        name,
        as_column(values, name),
        "a finite perplexity of at least 1 (exp of a mean negative log-likelihood)",
    )
    return array


def _check_word_scores(word_scores) -> dict:
    """Each word's score as a finite float, or a ValueError naming the word and its value."""
    if not isinstance(word_scores, dict):
        raise ValueError(
            f"word_scores must be a dict of word to score, got {type(word_scores).__name__}"
        )
    scores = {}
    for word, score in word_scores.items():
        if not isinstance(word, str) or not normalise_name(word):
            raise ValueError(f"word_scores: every key must be a non-empty word, got {word!r}")
        if isinstance(score, (bool, np.bool_)) or not isinstance(
            score, (int, float, np.integer, np.floating)
        ):
            raise ValueError(f"word_scores[{word!r}] is {score!r}; expected a finite number")
        if not np.isfinite(score):
            raise ValueError(
                f"word_scores[{word!r}] is {float(score)!r}; expected a finite number "
                "(leave a word without a score out of word_scores)"
            )
        scores[word] = float(score)
    return scores


def _mean_and_rate(totals: np.ndarray) -> np.ndarray:
    """Mean gap and share of pairs with the male form higher, from (sum of gaps, pairs above 0, pairs)."""
    return np.stack([totals[0] / totals[2], totals[1] / totals[2]])


def _gap_intervals(gaps: np.ndarray, options: dict) -> dict:
    units = np.stack([gaps, gaps > 0, np.ones_like(gaps)], axis=1)
    mean, rate = sum_intervals([units], _mean_and_rate, options, "pairs")
    # the median's jackknife is not consistent, so no BCa for it: percentile
    (median,) = bootstrap_intervals(
        [gaps],
        lambda drawn, axis=-1: np.median(drawn, axis=axis)[None],
        [np.median(gaps)],
        options,
        "pairs",
    )
    return {"mean_gap": mean, "median_gap": median, "male_higher_rate": rate}


_ASSIGNMENTS = ("all", "first")


def _incidence(pair_words, n_pairs):
    """(pair index, word code) per distinct word of each pair, and the vocabulary (sorted)."""
    if len(pair_words) != n_pairs:
        raise ValueError(
            f"pair_words has {len(pair_words)} entries, expected one per pair ({n_pairs})"
        )
    pair_index = []
    flat = []
    for number, words in enumerate(pair_words):
        if not isinstance(words, (list, tuple, np.ndarray)):
            raise ValueError(
                f"pair_words[{number}] must be a list of words, got {type(words).__name__}"
            )
        if not all(isinstance(word, str) and normalise_name(word) for word in words):
            raise ValueError(
                f"pair_words[{number}] must hold non-empty strings, got {list(words)!r}"
            )
        unique = sorted({normalise_name(word).lower() for word in words})
        flat.extend(unique)
        pair_index.extend([number] * len(unique))
    if not flat:
        return np.array([], dtype=int), np.array([], dtype=int), np.array([], dtype=str)
    vocabulary, code = np.unique(np.asarray(flat, dtype=str), return_inverse=True)
    return np.asarray(pair_index), code, vocabulary


def _word_rank(vocabulary, word_order, word_scores):
    """Each vocabulary word's place in the order words take pairs (len(order) = never)."""
    if word_order is None:
        if word_scores is None:
            raise ValueError(
                'pair_assignment="first" needs word_order or word_scores (the order words take pairs in)'
            )
        ranked = sorted(word_scores.items(), key=lambda item: -float(item[1]))
        word_order = [word for word, _ in ranked]
    if isinstance(word_order, (str, bytes, dict)) or not all(
        isinstance(w, str) and normalise_name(w) for w in word_order
    ):
        raise ValueError("word_order must be a list of non-empty words")
    order = [normalise_name(word).lower() for word in word_order]
    rank = {}
    for place, word in enumerate(order):
        rank.setdefault(word, place)
    return np.array([rank.get(word, len(order)) for word in vocabulary]), len(order)


def _per_word(gaps, pair_words, min_pairs, assignment="all", word_order=None, word_scores=None):
    """Per reported word: its gap, its pairs' indices. ``first``: each pair goes to the word
    of the order that contains it and comes first; other words of the pair do not use it."""
    pair_index, code, vocabulary = _incidence(pair_words, len(gaps))
    if assignment == "first":
        rank, never = _word_rank(vocabulary, word_order, word_scores)
        taken = np.full(len(gaps), -1)
        if code.size:
            ranks = rank[code]
            # per pair, the incidence of least rank: sort by (pair, rank) and keep each pair's first
            chosen = np.lexsort((ranks, pair_index))
            first = chosen[np.r_[True, pair_index[chosen][1:] != pair_index[chosen][:-1]]]
            first = first[ranks[first] < never]
            taken[pair_index[first]] = code[first]
        keep = taken >= 0
        pair_index, code = np.flatnonzero(keep), taken[keep]
    counts = np.bincount(code, minlength=len(vocabulary))
    reported = np.flatnonzero(counts >= min_pairs)
    if assignment == "first":
        reported = reported[np.argsort(rank[reported], kind="stable")]
    order = np.argsort(code, kind="stable")
    members = np.split(pair_index[order], np.cumsum(counts)[:-1]) if vocabulary.size else []
    word_pairs = [members[w] for w in reported]
    word_gaps = np.array([gaps[p].mean() for p in word_pairs])
    return vocabulary[reported], word_gaps, counts[reported], word_pairs


def _correlation(words, word_gaps, word_scores, options=None):
    lookup = {
        normalise_name(str(word)).lower(): float(score) for word, score in word_scores.items()
    }
    shared = np.array([word in lookup for word in words], dtype=bool)
    x = np.array([lookup[word] for word in words[shared]], dtype=float)
    y = word_gaps[shared]
    result = {"n_words": int(shared.sum())}
    if x.size < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        nan = float("nan")
        result |= {"pearson": nan, "pearson_pvalue": nan, "spearman": nan, "spearman_pvalue": nan}
        if options is not None:
            reason = "the correlation needs at least 3 words whose scores and gaps both vary"
            result["intervals"] = {
                key: no_interval(options, "words", int(x.size), reason)
                for key in ("correlation_pearson", "correlation_spearman")
            }
        return result
    pearson = stats.pearsonr(x, y)
    spearman = stats.spearmanr(x, y)
    result |= {
        "pearson": float(pearson.statistic),
        "pearson_pvalue": float(pearson.pvalue),
        "spearman": float(spearman.statistic),
        "spearman_pvalue": float(spearman.pvalue),
    }
    if options is not None:
        result["intervals"] = {
            f"correlation_{method}": interval
            for method, interval in correlation_intervals(x, y, options, "words").items()
        }
    return result


def _check_arguments(min_pairs, pair_assignment, word_order, word_scores):
    """The options' checks; returns ``word_scores`` as finite floats (or None)."""
    if isinstance(min_pairs, bool) or not isinstance(min_pairs, (int, np.integer)) or min_pairs < 1:
        raise ValueError(f"min_pairs must be a positive integer, got {min_pairs!r}")
    if pair_assignment not in _ASSIGNMENTS:
        raise ValueError(
            f"pair_assignment must be one of {list(_ASSIGNMENTS)}, got {pair_assignment!r}"
        )
    if word_order is not None and pair_assignment != "first":
        raise ValueError(
            'word_order is the order words take pairs in: it needs pair_assignment="first"'
        )
    if word_scores is not None:
        word_scores = _check_word_scores(word_scores)
    return word_scores


def _frequency_confound(frequency_gaps, log_ratio) -> dict:
    """Spearman's rho and the least-squares slope of the log-perplexity ratio on the frequency gap."""
    confound = {"n_pairs": int(frequency_gaps.size)}
    if frequency_gaps.size >= 3 and np.ptp(frequency_gaps) > 0:
        rho = stats.spearmanr(frequency_gaps, log_ratio)
        fit = stats.linregress(frequency_gaps, log_ratio)
        confound |= {
            "spearman_log_ppl_ratio_vs_zipf_gap": float(rho.statistic),
            "spearman_pvalue": float(rho.pvalue),
            "slope_log_ppl_ratio_per_zipf": float(fit.slope),
        }
    return confound


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class PerplexityGap(DirectCompute, evaluate.Measurement):
    def _info(self) -> evaluate.MeasurementInfo:
        return evaluate.MeasurementInfo(
            module_type="measurement",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "male_perplexities": datasets.Value("float64"),
                    "female_perplexities": datasets.Value("float64"),
                }
            ),
        )

    def _check_rows(self, columns: dict) -> None:
        for name, column in columns.items():
            if name in ("male_perplexities", "female_perplexities"):
                _check_perplexities(column, name)

    def _compute(
        self,
        male_perplexities,
        female_perplexities,
        pair_words=None,
        word_scores=None,
        min_pairs=1,
        pair_assignment="all",
        word_order=None,
        frequency_gaps=None,
        frequency_tolerance=0.25,
        confidence_level=None,
        n_resamples=2000,
        seed=0,
    ):
        words = (pair_words, word_scores, min_pairs, pair_assignment, word_order)
        result = self._gaps(
            male_perplexities, female_perplexities, *words, confidence_level, n_resamples, seed
        )
        if frequency_gaps is not None:
            result["frequency_matched"] = self._frequency_matched(
                male_perplexities, female_perplexities, words, frequency_gaps, frequency_tolerance
            )
        return result

    def _frequency_matched(
        self, male_perplexities, female_perplexities, words: tuple, frequency_gaps, tolerance
    ) -> dict:
        """The gaps over the pairs whose gender words have matched frequencies, and the confound."""
        male = _check_perplexities(male_perplexities, "male_perplexities")
        female = _check_perplexities(female_perplexities, "female_perplexities")
        gaps = as_numbers(frequency_gaps, "frequency_gaps")
        if gaps.size != male.size:
            raise ValueError(
                f"frequency_gaps needs one value per pair ({male.size}); got {gaps.size}"
            )
        if (
            isinstance(tolerance, bool)
            or not isinstance(tolerance, (int, float))
            or not tolerance >= 0
        ):
            raise ValueError(f"frequency_tolerance must be a number >= 0, got {tolerance!r}")
        matched = np.abs(gaps) <= tolerance
        result = {
            "tolerance_zipf": tolerance,
            "pairs_matched": int(matched.sum()),
            "confound": _frequency_confound(gaps, np.log(male) - np.log(female)),
            "mean_gap": None,
            "male_higher_rate": None,
            "correlation": None,
        }
        if matched.any():
            chosen = np.flatnonzero(matched)
            pair_words = words[0]
            sub = self._gaps(
                male[chosen],
                female[chosen],
                None if pair_words is None else [pair_words[i] for i in chosen],
                *words[1:],
                None,
                2000,
                0,
            )
            result |= {
                "mean_gap": sub["mean_gap"],
                "male_higher_rate": sub["male_higher_rate"],
                "correlation": sub.get("correlation"),
            }
        return result

    def _gaps(
        self,
        male_perplexities,
        female_perplexities,
        pair_words,
        word_scores,
        min_pairs,
        pair_assignment,
        word_order,
        confidence_level,
        n_resamples,
        seed,
    ):
        word_scores = _check_arguments(min_pairs, pair_assignment, word_order, word_scores)
        options = uncertainty_options(confidence_level, n_resamples, seed)
        male = _check_perplexities(male_perplexities, "male_perplexities")
        female = _check_perplexities(female_perplexities, "female_perplexities")
        if male.size != female.size:
            raise ValueError(
                f"male_perplexities and female_perplexities need one value per pair; got {male.size} and {female.size}"
            )
        if male.size == 0:
            raise ValueError("male_perplexities is empty: need at least one pair")
        gaps = male - female
        log_diff = np.log(male) - np.log(female)
        nonzero = np.count_nonzero(log_diff)
        wilcoxon = (
            float(stats.wilcoxon(log_diff[log_diff != 0]).pvalue) if nonzero >= 2 else float("nan")
        )
        result = {
            "perplexity_gap": gaps.tolist(),
            "mean_gap": float(gaps.mean()),
            "median_gap": float(np.median(gaps)),
            "male_higher_rate": float(np.mean(gaps > 0)),
            "wilcoxon_pvalue": wilcoxon,
        }
        if options is not None:
            result["confidence_intervals"] = _gap_intervals(gaps, options)
        if word_scores is not None and pair_words is None:
            raise ValueError("word_scores needs pair_words (the words of each pair)")
        if pair_assignment == "first" and pair_words is None:
            raise ValueError('pair_assignment="first" needs pair_words (the words of each pair)')
        if pair_words is not None:
            words, word_gaps, counts, word_pairs = _per_word(
                gaps, pair_words, min_pairs, pair_assignment, word_order, word_scores
            )
            result |= {
                "words": words.tolist(),
                "word_perplexity_gap": word_gaps.tolist(),
                "word_pair_count": counts.tolist(),
                "word_pairs": [pairs.tolist() for pairs in word_pairs],
            }
            if options is not None:
                # each word's pairs resampled on their own
                samples = [gaps[pairs] for pairs in word_pairs]
                for i, interval in enumerate(mean_intervals(samples, options, "pairs")):
                    result["confidence_intervals"][f"word_perplexity_gap[{i}]"] = interval
            if word_scores is not None:
                correlation = _correlation(words, word_gaps, word_scores, options)
                if options is not None:
                    result["confidence_intervals"] |= correlation.pop("intervals")
                result["correlation"] = correlation
        return result
