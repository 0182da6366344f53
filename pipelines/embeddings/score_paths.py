"""How ``bias-hub score`` reads coreference clusters (WinoBias) and word vectors (WEAT, RNSB)."""

from __future__ import annotations

from bias_hub.pipelines.common.score_path import Column, ScorePath

_WORD_VECTORS = {"words": Column("word", "label"), "vectors": Column("vector", "numbers")}

SCORE_PATHS = (
    ScorePath(
        metric="winobias_gap",
        dataset="winobias",
        config="all",
        predictions={"predictions": Column("clusters", "clusters")},
        dataset_columns={"references": "clusters", "condition": "condition"},
        id_columns=("document_id", "id"),
        summary_keys=("f1_gap", "precision_gap", "recall_gap"),
    ),
    ScorePath(
        metric="weat",
        dataset="weat_word_sets",
        config="en",
        predictions=dict(_WORD_VECTORS),
        id_columns=("test_id",),
        per_test=True,
        summary_keys=("effect_size", "p_value"),
    ),
    ScorePath(
        metric="rnsb",
        dataset="weat_word_sets",
        config="en",
        predictions=dict(_WORD_VECTORS),
        id_columns=("test_id",),
        per_test=True,
        fixed={"train_on": "attribute_sets"},
        summary_keys=("kl_divergence", "classifier_accuracy"),
    ),
)
