"""How ``bias-hub score speciesism_bias`` reads sentiment labels of the fill-mask words."""

from __future__ import annotations

from bias_hub.pipelines.common.score_path import Column, ScorePath

SCORE_PATHS = (
    ScorePath(
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
)
