"""Per-word gap in the attention given to gender words between male and female forms."""

import datasets
import evaluate
import numpy as np

from .bias_hub_common import (
    DirectCompute,
    as_column,
    as_names,
    as_numbers,
)
from .bias_hub_intervals import (
    bootstrap_intervals,
    no_interval,
    uncertainty_options,
)

_DESCRIPTION = """\
For sentence pairs that differ only in gender words (a male form and a female form),
each word of a sentence gives some attention mass to the gender words of that sentence
(the attention from the word's pieces to the gender words' pieces, summed over the
gender words, averaged over heads). This measurement groups the words by their text and
returns, per word, the mean mass in male-form sentences, the mean in female-form
sentences, and their difference (the attention gap, male minus female), with how often
the word occurred in each form. A large positive gap marks a word that looks at the
gender words more when they are male. Gender words themselves should not be passed
(they differ between the forms); the pipeline drops them.

With `confidence_level`, the gap of every reported word and the mean gap get bootstrap
confidence intervals, resampling each word's occurrences within each form.
"""

_KWARGS_DESCRIPTION = """
Args:
    words (`list` of `str`): one entry per word occurrence (the word's text; compared
        after Unicode NFKC normalisation, whitespace trimming and lower-casing).
    attention_to_gender (`list` of `float`): the attention mass that occurrence gives to
        the gender words of its sentence, in [0, 1] for softmax attention.
    forms (`list` of `str`): "male" or "female": the form of the sentence the occurrence
        is in.
    min_count (`int`, default 1): report a word only if it occurs at least this often in
        each form.
    confidence_level (`float`, optional): e.g. 0.95 for 95 % bootstrap intervals; None
        (default) computes none.
    n_resamples (`int`, default 2000): bootstrap resamples.
    seed (`int` or None, default 0): seed of the resampling.
Returns:
    words (`list` of `str`): the reported words, by attention gap, largest first.
    male_mean (`list` of `float`), female_mean (`list` of `float`): mean mass per form.
    attention_gap (`list` of `float`): male_mean - female_mean.
    male_count (`list` of `int`), female_count (`list` of `int`): occurrences per form.
    mean_gap (`float`): mean attention_gap over the reported words (NaN if none, with a
        `note` saying that no word reached `min_count` in each form). Input with no
        occurrence in one of the forms is refused.
    confidence_intervals (`dict`, with `confidence_level`): for "mean_gap" and
        "attention_gap[i]" (the gap of words[i]) {"low", "high", "confidence_level", "method" ("BCa" or
        "percentile"), "n_resamples", "unit" ("occurrences"), "n_units", "reason"}; low and
        high are None, and reason says why, for a word with fewer than 2 occurrences in a form.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/gender_attention_gap")
    >>> result = metric.compute(
    ...     words=["is", "tall", "is", "tall", "tall"],
    ...     attention_to_gender=[0.5, 0.25, 0.25, 0.5, 0.0],
    ...     forms=["male", "male", "female", "female", "female"],
    ... )
    >>> result["words"]
    ['is', 'tall']
    >>> [round(g, 3) for g in result["attention_gap"]]
    [0.25, 0.0]
    >>> result["female_count"]
    [1, 2]

    "tall" occurs once in male sentences: its interval would only show the female
    occurrences' spread, so there is none.

    >>> result = metric.compute(
    ...     words=["is", "tall", "is", "tall", "tall", "is", "is"],
    ...     attention_to_gender=[0.5, 0.25, 0.25, 0.5, 0.0, 0.4, 0.3],
    ...     forms=["male", "male", "female", "female", "female", "male", "female"],
    ...     confidence_level=0.9,
    ... )
    >>> result["words"]
    ['is', 'tall']
    >>> result["confidence_intervals"]["attention_gap[1]"]["reason"]
    'needs at least 2 occurrences in each form, has 1 male and 2 female'
    >>> result["confidence_intervals"]["attention_gap[0]"]["unit"]
    'occurrences'
"""

_CITATION = """\
@inproceedings{clark-etal-2019-bert,
  title = {What Does {BERT} Look at? An Analysis of {BERT}'s Attention},
  author = {Clark, Kevin and Khandelwal, Urvashi and Levy, Omer and Manning, Christopher D.},
  booktitle = {Proceedings of the 2019 ACL Workshop BlackboxNLP},
  year = {2019},
  pages = {276--286}
}
"""

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
        entries = []
        for s, sample, sign in zip(varying, samples, signs, strict=True):
            shift = sign * ((sample.sum() - sample) / (sample.size - 1) - sample.mean())
            entries.append(
                (
                    [s // 2, n_words],
                    np.stack([gaps[s // 2] + shift, observed[-1] + shift / n_words]),
                )
            )
        return entries

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


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class GenderAttentionGap(DirectCompute, evaluate.Measurement):
    def _info(self) -> evaluate.MeasurementInfo:
        return evaluate.MeasurementInfo(
            module_type="measurement",
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {
                    "words": datasets.Value("string"),
                    "attention_to_gender": datasets.Value("float64"),
                    "forms": datasets.Value("string"),
                }
            ),
        )

    def _check_rows(self, columns: dict) -> None:
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
