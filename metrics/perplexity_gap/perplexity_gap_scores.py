"""Perplexity of the male form minus the female form, per pair and per word.

The computation alone (no ``evaluate``, no ``datasets``): pipelines call it as it is, and
``perplexity_gap.py`` wraps it for ``evaluate.load``. ``scipy.stats`` is imported where it is used: importing it costs about a second.
"""

import numpy as np

from .bias_hub_common import (
    Scores,
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
    pair_index, flat = [], []
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
    rank: dict[str, int] = {}
    for place, word in enumerate(order):
        rank.setdefault(word, place)  # a word listed twice keeps its first place
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
    from scipy import stats

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
    for method, test in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr)):
        found = test(x, y)
        result |= {method: float(found.statistic), f"{method}_pvalue": float(found.pvalue)}
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
    from scipy import stats

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


class PerplexityGapScores(Scores):
    name = "perplexity_gap"

    def columns(self) -> dict:
        return {"male_perplexities": "float64", "female_perplexities": "float64"}

    def check_rows(self, columns: dict) -> None:
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
            result |= {key: sub.get(key) for key in ("mean_gap", "male_higher_rate", "correlation")}
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
        from scipy import stats

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
