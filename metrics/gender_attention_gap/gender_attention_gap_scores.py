"""Per-word gap in the attention given to gender words between male and female forms.

The computation alone (no ``evaluate``, no ``datasets``): pipelines call it as it is, and
``gender_attention_gap.py`` wraps it for ``evaluate.load``.
"""

import numpy as np

from .bias_hub_common import (
    Scores,
    as_column,
    as_names,
    as_numbers,
)
from .bias_hub_intervals import (
    bootstrap_intervals,
    no_interval,
    uncertainty_options,
)

_FORMS = {"male": 0, "female": 1}


def _words(words) -> tuple[np.ndarray, np.ndarray]:
    """Codes of the words (normalised, lower-cased) and the vocabulary, sorted."""
    codes, names = as_names(words, "words")
    vocabulary, merged = np.unique(
        np.array([name.lower() for name in names], dtype=str), return_inverse=True
    )
    return merged[codes], vocabulary


def _gap_intervals(mass, word, male, reported, options) -> list[dict]:
    """Intervals for each reported word's gap and for the mean gap.

    Each word's occurrences are resampled within each form (a stratum), so every word
    keeps its counts; strata of one occurrence cannot vary and stay fixed.
    """
    n_words = reported.size
    position = np.full(word.max() + 1, -1)
    position[reported] = np.arange(n_words)
    keep = position[word] >= 0
    stratum = position[word[keep]] * 2 + (~male[keep])
    values = mass[keep]
    size = np.bincount(stratum, minlength=2 * n_words)
    means = np.bincount(stratum, weights=values, minlength=2 * n_words) / np.maximum(size, 1)
    varying = np.flatnonzero(size >= 2)
    order = np.argsort(stratum, kind="stable")
    members = np.split(values[order], np.cumsum(size)[:-1])
    samples = [members[s] for s in varying]
    signs = np.where(varying % 2 == 0, 1.0, -1.0)

    def statistic(*drawn, axis=-1):
        table = np.repeat(means[:, None], drawn[0].shape[0], axis=1)
        table[varying] = np.stack([sample.mean(axis=-1) for sample in drawn])
        resampled = table[0::2] - table[1::2]
        return np.vstack([resampled, resampled.mean(axis=0, keepdims=True)])

    gaps = means[0::2] - means[1::2]
    observed = np.append(gaps, gaps.mean())

    def jackknife():
        # an occurrence left out moves only its word's gap and, by 1 / n_words of that, the mean
        shifts = [
            sign * ((sample.sum() - sample) / (sample.size - 1) - sample.mean())
            for sample, sign in zip(samples, signs, strict=True)
        ]
        return [
            ([s // 2, n_words], np.stack([gaps[s // 2] + shift, observed[-1] + shift / n_words]))
            for s, shift in zip(varying, shifts, strict=True)
        ]

    if not samples:
        reason = "no word occurs at least twice in a form"
        intervals = [
            no_interval(options, "occurrences", int(values.size), reason) for _ in observed
        ]
    else:
        intervals = bootstrap_intervals(
            samples, statistic, observed, options, "occurrences", jackknife
        )
    for w in range(n_words):
        male_count, female_count = size[2 * w], size[2 * w + 1]
        if min(male_count, female_count) < 2:
            reason = f"needs at least 2 occurrences in each form, has {male_count} male and {female_count} female"
            intervals[w] = no_interval(
                options, "occurrences", int(male_count + female_count), reason
            )
        else:
            intervals[w] = {**intervals[w], "n_units": int(male_count + female_count)}
    return intervals


def _checked_occurrences(words, attention_to_gender, forms, min_count):
    """The masses and a male-form mask, after every check of the occurrence columns."""
    if isinstance(min_count, bool) or not isinstance(min_count, (int, np.integer)) or min_count < 1:
        raise ValueError(f"min_count must be a positive integer, got {min_count!r}")
    columns = {"words": words, "attention_to_gender": attention_to_gender, "forms": forms}
    sizes = {name: len(as_column(value, name)) for name, value in columns.items()}
    if len(set(sizes.values())) > 1:
        raise ValueError(
            f"words, attention_to_gender and forms need one value per occurrence; got lengths {sizes}"
        )
    if not sizes["words"]:
        raise ValueError("words is empty: there are no word occurrences to compare")
    mass = as_numbers(attention_to_gender, "attention_to_gender")
    male = as_names(forms, "forms", _FORMS)[0] == 0
    for form, present in (("male", male.any()), ("female", (~male).any())):
        if not present:
            raise ValueError(
                f"forms: no occurrence is in the {form} form; a gap compares the male and the "
                "female form of the same sentences, so both are needed"
            )
    return mass, male


class GenderAttentionGapScores(Scores):
    name = "gender_attention_gap"

    def columns(self) -> dict:
        return {"words": "string", "attention_to_gender": "float64", "forms": "string"}

    def check_rows(self, columns: dict) -> None:
        for name, column in columns.items():
            if name == "words":
                as_names(column, name)
            elif name == "attention_to_gender":
                as_numbers(column, name)
            elif name == "forms":
                as_names(column, name, _FORMS)

    def _compute(
        self,
        words,
        attention_to_gender,
        forms,
        min_count=1,
        confidence_level=None,
        n_resamples=2000,
        seed=0,
    ):
        options = uncertainty_options(confidence_level, n_resamples, seed)
        mass, male = _checked_occurrences(words, attention_to_gender, forms, min_count)
        index, vocabulary = _words(words)
        size = len(vocabulary)
        male_count = np.bincount(index[male], minlength=size)
        female_count = np.bincount(index[~male], minlength=size)
        male_sum = np.bincount(index[male], weights=mass[male], minlength=size)
        female_sum = np.bincount(index[~male], weights=mass[~male], minlength=size)
        keep = (male_count >= min_count) & (female_count >= min_count)
        male_mean = male_sum[keep] / male_count[keep]
        female_mean = female_sum[keep] / female_count[keep]
        gap = male_mean - female_mean
        order = np.argsort(-gap, kind="stable")
        reported = np.flatnonzero(keep)[order]
        result = {
            "words": vocabulary[reported].tolist(),
            "male_mean": male_mean[order].tolist(),
            "female_mean": female_mean[order].tolist(),
            "attention_gap": gap[order].tolist(),
            "male_count": male_count[reported].tolist(),
            "female_count": female_count[reported].tolist(),
            "mean_gap": float(gap.mean()) if gap.size else float("nan"),
        }
        if not gap.size:
            result["note"] = (
                f"no word occurs at least {min_count} time(s) in each form: no gap to report"
            )
        if options is not None:
            if reported.size:
                intervals = _gap_intervals(mass, index, male, reported, options)
            else:
                intervals = [no_interval(options, "occurrences", 0, "no word is reported")]
            keys = [f"attention_gap[{i}]" for i in range(reported.size)] + ["mean_gap"]
            result["confidence_intervals"] = dict(zip(keys, intervals, strict=True))
        return result
