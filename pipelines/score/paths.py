"""Every metric's score path, declared as data: which columns feed which ``compute()`` argument.

``bias-hub score METRIC`` reads predictions made elsewhere (a file, or lm-evaluation-harness
logged samples), joins them to a built dataset on an id column and calls the metric module
with the arguments below. Nothing about a metric's inputs lives in code: a path names

- ``dataset``/``config``: the dataset folder and config read by default (``--dataset``,
  ``--config`` override them), and ``id_columns``: the id column candidates, first found wins
  (``--id-column`` overrides); ``qualifier``: a column that makes the id unique where the
  dataset numbers rows within it (BBQ and JBBQ number ``example_id`` within each category);
- ``dataset_columns``: ``{compute argument: dataset column}``;
- ``predictions``: ``{compute argument: Column}``, the first being the one
  ``--prediction-column`` renames;
- ``fixed``: constant keyword arguments (a config's choice such as RNSB's orientation);
- ``per_test``: the word-set metrics (WEAT, RNSB): the predictions file holds word vectors
  (``words``/``vectors``), and each dataset row is one test whose sets feed ``target_sets``
  and ``attribute_sets``; the metric runs once per test.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Column", "SCORE_PATHS", "ScorePath", "score_path"]

# The value kinds a prediction column may hold.
KINDS = ("choice", "label", "number", "numbers", "clusters")


@dataclass(frozen=True)
class Column:
    """One prediction column.

    ``kind``: ``choice`` an answer index or an answer text, matched to ``choices`` (dataset
    columns of the row, e.g. BBQ's ans0..ans2) or ``names`` (fixed label names, e.g. NLI's);
    ``label`` a text passed as it is; ``number`` a float; ``numbers`` a list of floats;
    ``clusters`` coreference clusters (a list of lists of [start, end] spans, JSON text in CSV).
    ``required`` False: the argument is left out when the file lacks the column. For the
    answer reader, ``unknown`` names the dataset column holding the index of the row's
    "cannot be determined" option and ``short_forms`` the one holding BBQ's ``answer_info``.
    """

    name: str
    kind: str
    choices: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    required: bool = True
    unknown: str | None = None
    short_forms: str | None = None


@dataclass(frozen=True)
class ScorePath:
    metric: str
    dataset: str
    config: str
    predictions: dict[str, Column]
    dataset_columns: dict[str, str] = field(default_factory=dict)
    id_columns: tuple[str, ...] = ("example_id", "id")
    qualifier: str | None = None
    config_name: str | None = None
    fixed: dict = field(default_factory=dict)
    # Several prediction rows may share an id (e.g. several judged fills of one sentence).
    many_per_id: bool = False
    per_test: bool = False
    # Which part of the result the report tabulates: the keys with a float value at this level.
    summary_keys: tuple[str, ...] = ()

    @property
    def main_prediction(self) -> str:
        return next(iter(self.predictions))


_NLI_LABELS = ("entailment", "neutral", "contradiction")
_WORD_VECTORS = {"words": Column("word", "label"), "vectors": Column("vector", "numbers")}

SCORE_PATHS: dict[str, ScorePath] = {
    "bbq_bias": ScorePath(
        metric="bbq_bias",
        dataset="jbbq",
        config="all",
        predictions={
            "predictions": Column(
                "prediction",
                "choice",
                choices=("ans0", "ans1", "ans2"),
                unknown="unknown_label",
                short_forms="answer_info",
            )
        },
        dataset_columns={
            "references": "label",
            "unknown_labels": "unknown_label",
            "stereotyped_labels": "stereotyped_label",
            "context_conditions": "context_condition",
            "categories": "category",
            "templates": "question_index",
        },
        id_columns=("example_id", "id"),
        qualifier="category",
        summary_keys=(
            "accuracy",
            "accuracy_ambiguous",
            "accuracy_disambiguated",
            "accuracy_gap",
            "bias_score_disambiguated",
            "bias_score_ambiguous",
            "unparsable_rate",
        ),
    ),
    "nli_gender_bias": ScorePath(
        metric="nli_gender_bias",
        dataset="nli_gender_bias",
        config="generated_all",
        predictions={
            "predictions": Column("prediction", "choice", names=_NLI_LABELS),
            "probabilities": Column("probabilities", "numbers", required=False),
        },
        dataset_columns={"subsets": "subset", "templates": "template_id"},
        id_columns=("id",),
        summary_keys=("bias_score", "fraction_neutral", "net_neutral"),
    ),
    "perplexity_gap": ScorePath(
        metric="perplexity_gap",
        dataset="stereoset_gender_swap",
        config="contexts",
        predictions={
            "male_perplexities": Column("male_perplexity", "number"),
            "female_perplexities": Column("female_perplexity", "number"),
        },
        id_columns=("id",),
        summary_keys=("mean_gap", "median_gap", "male_higher_rate", "wilcoxon_pvalue"),
    ),
    "gender_attention_gap": ScorePath(
        metric="gender_attention_gap",
        dataset="stereoset_gender_swap",
        config="contexts",
        predictions={
            "attention_to_gender": Column("attention_to_gender", "number"),
            "words": Column("word", "label"),
            "forms": Column("form", "label"),
        },
        id_columns=("id",),
        many_per_id=True,
        summary_keys=("mean_gap",),
    ),
    "speciesism_bias": ScorePath(
        metric="speciesism_bias",
        dataset="speciesism_templates",
        config="sentiment",
        config_name="negative_share",
        predictions={"labels": Column("label", "label")},
        dataset_columns={"animals": "animal", "templates": "template_id"},
        id_columns=("id",),
        many_per_id=True,
        summary_keys=("overall_negative_share",),
    ),
    "winobias_gap": ScorePath(
        metric="winobias_gap",
        dataset="winobias",
        config="all",
        predictions={"predictions": Column("clusters", "clusters")},
        dataset_columns={"references": "clusters", "condition": "condition"},
        id_columns=("document_id", "id"),
        summary_keys=("f1_gap", "precision_gap", "recall_gap"),
    ),
    "weat": ScorePath(
        metric="weat",
        dataset="weat_word_sets",
        config="en",
        predictions=dict(_WORD_VECTORS),
        id_columns=("test_id",),
        per_test=True,
        summary_keys=("effect_size", "p_value"),
    ),
    "rnsb": ScorePath(
        metric="rnsb",
        dataset="weat_word_sets",
        config="en",
        predictions=dict(_WORD_VECTORS),
        id_columns=("test_id",),
        per_test=True,
        fixed={"train_on": "attribute_sets"},
        summary_keys=("kl_divergence", "classifier_accuracy"),
    ),
}


def score_path(metric: str) -> ScorePath:
    """The declared path of ``metric``; a ValueError naming the known ones otherwise."""
    if metric not in SCORE_PATHS:
        raise ValueError(
            f"METRIC {metric!r}: no score path; expected one of {', '.join(sorted(SCORE_PATHS))}"
        )
    return SCORE_PATHS[metric]
