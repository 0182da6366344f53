"""How ``bias-hub score bbq_bias`` reads answers to BBQ or JBBQ questions made elsewhere."""

from __future__ import annotations

from collections.abc import Sequence

from bias_hub.pipelines.common.score_path import Column, ScorePath

SCORE_PATHS = (
    ScorePath(
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
)


def bbq_bias_columns(rows: Sequence[dict], templates: bool = False) -> dict[str, list]:
    """``bbq_bias``'s arguments other than the predictions, from question rows, as ``bias-hub
    score`` feeds them (``templates``: the column a bootstrap over templates resamples)."""
    names = dict(SCORE_PATHS[0].dataset_columns)
    if not templates:
        del names["templates"]
    return {argument: [row[name] for row in rows] for argument, name in names.items()}
