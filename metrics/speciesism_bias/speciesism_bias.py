"""Speciesism bias of a masked language model: probability change rates between
human-form and object-form templates, Kurita et al.'s log-probability
association, and the share of negative fills per animal."""

import evaluate

# evaluate copies into its cache only the same-folder files this script imports: the
# computation (speciesism_bias_scores.py) and both files it imports.
from .bias_hub_common import DirectCompute
from .bias_hub_intervals import (
    uncertainty_options,  # noqa: F401
)
from .speciesism_bias_scores import SpeciesismBiasScores

_DESCRIPTION = """
Three scores for speciesist bias in masked language models, one per config, and a paired
comparison of two models' negative shares.

`change_rate` (default): from the probability distributions at the mask of human-form ("She is
a pig who is [MASK].") and object-form ("It is a pig that is [MASK].") sentences, the mean
probability per form, A (starting) and B (other), and the change rate (B - A) / A of the items
above chance in the starting form (A > 1 / |V|). `<start>_to_<end>` lists the items whose
probability drops, most negative first: Takeshita, Rzepka and Araki's Tables 1-4
(`object_to_human` their Tables 1 and 3); `gains` the items whose probability rises most.
`association`: Kurita et al. (2019)'s log(p_target / p_prior). `negative_share`: the share of
fills judged negative (and positive, neutral) per animal. `negative_share_paired`: two models'
labels for the same fills, B - A with a paired bootstrap interval and a paired permutation test.

With `confidence_level`, bootstrap intervals resample template sentences within each form (or
whole `templates`), pairs for the association, fills (or templates) for the shares.
"""

_KWARGS_DESCRIPTION = """
Args (config `change_rate`):
    probabilities (`list` of `list` of `float`): one row per template sentence, the
        probability of every vocabulary item at the mask; all rows have the same length |V|,
        and a row sums to at most 1 (one distribution at the mask).
    forms (`list` of `str`): the form of each row, `from_form` or `to_form`.
    vocabulary (`list` of `str`, optional): the item names, length |V|, each a distinct
        non-empty string (token strings; show a readable form beside them afterwards);
        default: "0", "1", ...
    from_form (`str`, default "human") and to_form (`str`, default "object"): the two forms.
    top_k (`int`, default 15, as the study): how many items to list per direction.
    candidates (`list` of `bool`, optional): which items may be listed (for example,
        whole words only); chance stays 1/|V| over the whole vocabulary.
    templates (`list` of `int` or `str`, optional): the template of each row (shared by
        the sentences of one template across animals); with it the bootstrap resamples
        whole templates, within each form where every template has a single form.
Args (config `association`):
    target_probabilities (`list` of `float`): p_target, each in (0, 1].
    prior_probabilities (`list` of `float`): p_prior, each in (0, 1].
    groups (`list` of `str`, optional): a group per pair; means are reported per group.
Args (config `negative_share`):
    animals (`list` of `str`): the animal each judged fill belongs to.
    labels (`list` of `str`): `negative`, `neutral` or `positive` per fill.
    templates (`list` of `int` or `str`, optional): the template each fill came from;
        with it the bootstrap resamples whole templates.
Args (config `negative_share_paired`):
    animals, labels (model A), templates: as for `negative_share`.
    labels_b (`list` of `str`): model B's label for the same fills, row by row.
Args (every config):
    confidence_level (`float`, optional): e.g. 0.95 for 95 % bootstrap intervals; None
        (default) computes none (`negative_share_paired`: default 0.95, required).
    n_resamples (`int`, default 2000): bootstrap resamples.
    seed (`int` or None, default 0): seed of the resampling.
Returns (config `change_rate`):
    vocabulary_size, chance (1/|V|), n_rows per form, n_above_chance per form;
    `<from>_to_<to>` and `<to>_to_<from>`: the study's tables, lists of {word, index,
    p_start, p_end, change_rate} of the items above chance in the starting form whose
    probability drops, most negative change rate first (ties by index);
    gains: {`<from>_to_<to>`, `<to>_to_<from>`}: the items above chance in the starting
    form whose probability rises, highest change rate first.
Returns (config `association`):
    association (list, one per pair), mean_association, by_group ({group: {mean, n}}).
Returns (config `negative_share`):
    negative_share, positive_share, neutral_share, n ({animal: value}),
    overall_negative_share (over all fills).
Returns (config `negative_share_paired`):
    scores: {"overall_negative_share" and "negative_share.<animal>": {"a", "b",
    "difference" (B - A), "p_value", "p_value_method" ("exact" when 2^units <=
    n_resamples, else "sampled"), "n_permutations", "reason"}}, confidence_intervals of
    the differences (units resampled together for A and B), n_units, n ({animal: fills}).
Returns (every config, with `confidence_level`):
    confidence_intervals: {score: {"low", "high", "confidence_level", "method" ("BCa" or
    "percentile"), "n_resamples", "unit", "n_units", "reason"}}, a score named by its
    place in the result: "<from>_to_<to>[i]" (the change rate of the i-th listed item),
    "gains.<from>_to_<to>[i]",
    "mean_association", "by_group.<group>.mean", "overall_negative_share",
    "negative_share.<animal>". low and high are None, and reason says why, where a score
    is undefined in the data or in some resamples.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/speciesism_bias")
    >>> result = metric.compute(
    ...     probabilities=[[0.45, 0.3, 0.05, 0.2], [0.1, 0.4, 0.3, 0.2]],
    ...     forms=["human", "object"],
    ...     vocabulary=["kind", "big", "dried", "eaten"],
    ... )
    >>> result["chance"]
    0.25
    >>> [(r["word"], round(r["change_rate"], 2)) for r in result["object_to_human"]]
    [('dried', -0.83), ('big', -0.25)]
    >>> [(r["word"], round(r["change_rate"], 2)) for r in result["human_to_object"]]
    [('kind', -0.78)]
    >>> [(r["word"], round(r["change_rate"], 2)) for r in result["gains"]["human_to_object"]]
    [('big', 0.33)]
    >>> association = evaluate.load("metrics/speciesism_bias", "association")
    >>> out = association.compute(target_probabilities=[0.2, 0.05], prior_probabilities=[0.1, 0.1])
    >>> [round(a, 3) for a in out["association"]]
    [0.693, -0.693]
    >>> share = evaluate.load("metrics/speciesism_bias", "negative_share")
    >>> out = share.compute(animals=["pig", "pig", "dog"], labels=["negative", "positive", "neutral"])
    >>> out["negative_share"]
    {'dog': 0.0, 'pig': 0.5}
    >>> out = share.compute(
    ...     animals=["pig"] * 4 + ["dog"] * 4,
    ...     labels=["negative", "negative", "positive", "neutral"] * 2,
    ...     confidence_level=0.95,
    ... )
    >>> interval = out["confidence_intervals"]["overall_negative_share"]
    >>> interval["unit"], interval["n_units"], interval["low"] <= 0.5 <= interval["high"]
    ('fills', 8, True)
    >>> paired = evaluate.load("metrics/speciesism_bias", "negative_share_paired")
    >>> out = paired.compute(
    ...     animals=["pig"] * 4,
    ...     labels=["negative", "neutral", "neutral", "neutral"],
    ...     labels_b=["negative"] * 4,
    ...     n_resamples=100,
    ... )
    >>> overall = out["scores"]["overall_negative_share"]
    >>> overall["difference"], overall["p_value"], overall["p_value_method"]
    (0.75, 0.25, 'exact')
"""

_CITATION = """
@misc{takeshita-rzepka-araki-speciesist-bias-ja,
  title = {英語の言語モデルに内在する種差別的バイアスの分析 [An analysis of speciesist bias in {E}nglish language models]},
  author = {Takeshita, Masashi and Rzepka, Rafal and Araki, Kenji},
  note = {Hokkaido University. The paper this project follows (its Tables 1-4 and Figure 1); its text prints no venue or year}
}
@article{takeshita-etal-2022-speciesist,
  title = {Speciesist Language and Nonhuman Animal Bias in {E}nglish Masked Language Models},
  author = {Takeshita, Masashi and Rzepka, Rafal and Araki, Kenji},
  journal = {Information Processing \\& Management},
  volume = {59},
  number = {5},
  pages = {103050},
  year = {2022}
}
@inproceedings{kurita-etal-2019-measuring,
  title = {Measuring Bias in Contextualized Word Representations},
  author = {Kurita, Keita and Vyas, Nidhi and Pareek, Ayush and Black, Alan W and Tsvetkov, Yulia},
  booktitle = {Proceedings of the First Workshop on Gender Bias in Natural Language Processing},
  pages = {166--172},
  year = {2019}
}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SpeciesismBias(DirectCompute, evaluate.Metric):
    scores_class = SpeciesismBiasScores
    card = (_DESCRIPTION, _KWARGS_DESCRIPTION, _CITATION)
    papers = ("https://doi.org/10.1016/j.ipm.2022.103050",)
