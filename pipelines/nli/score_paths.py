"""How ``bias-hub score nli_gender_bias`` reads NLI predictions made elsewhere."""

from __future__ import annotations

from bias_hub.pipelines.common.score_path import Column, ScorePath
from bias_hub.pipelines.nli.labels import LABELS

SCORE_PATHS = (
    ScorePath(
        metric="nli_gender_bias",
        dataset="nli_gender_bias",
        config="generated_all",
        predictions={
            "predictions": Column("prediction", "choice", names=LABELS),
            "probabilities": Column("probabilities", "numbers", required=False),
        },
        dataset_columns={"subsets": "subset", "templates": "template_id"},
        id_columns=("id",),
        summary_keys=("bias_score", "fraction_neutral", "net_neutral"),
    ),
)
