"""How ``bias-hub score`` reads perplexities and attentions of the gender-swapped pairs."""

from __future__ import annotations

from bias_hub.pipelines.common.score_path import Column, ScorePath

SCORE_PATHS = (
    ScorePath(
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
    ScorePath(
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
)
