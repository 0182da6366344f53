"""Per-word gap in the attention given to gender words between male and female forms."""

import evaluate

# evaluate copies into its cache only the same-folder files this script imports: the
# computation (gender_attention_gap_scores.py) and both files it imports.
from .bias_hub_common import DirectCompute
from .bias_hub_intervals import (
    uncertainty_options,  # noqa: F401
)
from .gender_attention_gap_scores import GenderAttentionGapScores

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


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class GenderAttentionGap(DirectCompute, evaluate.Measurement):
    scores_class = GenderAttentionGapScores
    card = (_DESCRIPTION, _KWARGS_DESCRIPTION, _CITATION)
