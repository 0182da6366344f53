"""WinoBias gap: pro-stereotypical minus anti-stereotypical coreference precision and recall."""

import evaluate

# evaluate copies into its cache only the same-folder files this script imports: the
# computation (winobias_gap_scores.py) and both files it imports.
from .bias_hub_common import DirectCompute
from .bias_hub_intervals import (
    uncertainty_options,  # noqa: F401
)
from .winobias_gap_scores import WinobiasGapScores

_DESCRIPTION = """\
WinoBias (Zhao et al., 2018) scores a coreference system on sentences where resolving a pronoun
to an occupation agrees with a gender stereotype (pro-stereotypical) and on the same sentences
with the gender swapped (anti-stereotypical). The gap is the pro score minus the anti score (0:
no difference; positive: better when the stereotype holds). As in Goldfarb-Tarrant et al.
(2021), precision and recall are each averaged over MUC, B-cubed and CEAF-e before the gap.

Give the predicted and gold clusters of each document with its condition ("pro" or "anti"),
each metric then accumulated over a condition's documents as the CoNLL reference scorer does,
or the precision and recall your own scorer reported (`scores=`). With `confidence_level` (from
clusters only) the three gaps get bootstrap intervals resampling each condition's documents.
The result has `score` and `score_name` (the F1 gap), like the other word-embedding modules.
"""

_KWARGS_DESCRIPTION = """
Args:
    predictions (`list` of clusters per document): the system's clusters; a cluster is a
        list of mentions, a mention a `[start, end]` token span (whole numbers,
        0 <= start <= end) that belongs to one cluster only.
    references (`list` of clusters per document): the gold clusters, same form.
    condition (`list` of `str`): "pro" or "anti" per document.
    confidence_level (`float`, optional): e.g. 0.95 for 95 % bootstrap intervals; None
        (default) computes none.
    n_resamples (`int`, default 2000): bootstrap resamples.
    seed (`int` or None, default 0): seed of the resampling.
    scores (`dict`, optional, instead of the three above):
        `{"pro": {"muc": {"precision": p, "recall": r}, "b_cubed": {...}, "ceaf_e": {...}},
        "anti": {...}}` with values in [0, 1].

Returns:
    score (`float`): the F1 gap (mean F1 over MUC, B-cubed, CEAF-e; pro minus anti).
    score_name (`str`): "f1_gap".
    precision_gap (`float`), recall_gap (`float`), f1_gap (`float`).
    pro (`dict`) and anti (`dict`): precision, recall and F1 per metric and their means.
    n_documents (`dict[str, int]`): documents per condition (0 when `scores` were given).
    confidence_intervals (`dict`, with `confidence_level`): for "f1_gap", "precision_gap"
        and "recall_gap" {"low", "high", "confidence_level", "method" ("BCa" or
        "percentile"), "n_resamples", "unit" ("documents"), "n_units", "reason"}.

Examples:
    One pro-stereotypical document resolved right, one anti-stereotypical document
    where the system joined the pronoun to the wrong occupation (anti: MUC 0,
    B-cubed 0.25, CEAF-e 0.5 in both precision and recall, mean 0.25):

    >>> import evaluate
    >>> metric = evaluate.load("metrics/winobias_gap")
    >>> result = metric.compute(
    ...     predictions=[[[[0, 1], [5, 5]]], [[[0, 1], [8, 9]]]],
    ...     references=[[[[0, 1], [5, 5]]], [[[8, 9], [5, 5]]]],
    ...     condition=["pro", "anti"],
    ... )
    >>> result["recall_gap"], result["precision_gap"]
    (0.75, 0.75)
    >>> result = metric.compute(
    ...     predictions=[[[[0, 1], [5, 5]]], [[[0, 1], [8, 9]]]],
    ...     references=[[[[0, 1], [5, 5]]], [[[8, 9], [5, 5]]]],
    ...     condition=["pro", "anti"], confidence_level=0.95,
    ... )
    >>> result["confidence_intervals"]["f1_gap"]["reason"]
    'resampling needs at least 2 documents in each stratum, got [1, 1]'
"""

_CITATION = """\
@inproceedings{zhao-etal-2018-gender,
  title={Gender Bias in Coreference Resolution: Evaluation and Debiasing Methods},
  author={Zhao, Jieyu and Wang, Tianlu and Yatskar, Mark and Ordonez, Vicente and Chang, Kai-Wei},
  booktitle={Proceedings of NAACL-HLT 2018},
  pages={15--20},
  year={2018}
}
@inproceedings{goldfarb-tarrant-etal-2021-intrinsic,
  title={Intrinsic Bias Metrics Do Not Correlate with Application Bias},
  author={Goldfarb-Tarrant, Seraphina and Marchant, Rebecca and Mu{\\~n}oz S{\\'a}nchez, Ricardo and Pandya, Mugdha and Lopez, Adam},
  booktitle={Proceedings of ACL-IJCNLP 2021},
  pages={1926--1940},
  year={2021}
}
"""


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class WinobiasGap(DirectCompute, evaluate.Metric):
    scores_class = WinobiasGapScores
    card = (_DESCRIPTION, _KWARGS_DESCRIPTION, _CITATION)
    papers = ("https://aclanthology.org/N18-2003/", "https://aclanthology.org/2021.acl-long.150/")
