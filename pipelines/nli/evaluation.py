"""``nli evaluate``'s computations: predict the PS/AS/NS sets, score them with intervals, compare models.

The evaluation sets are opened with ``datasets.load_dataset("<root>/nli_gender_bias", config)``
and scored with the computation of ``<root>/metrics/nli_gender_bias`` (``metric_scores``, the
object ``evaluate.load`` of that folder wraps; its ``paired`` config for comparisons). Every
formula (the scores, their intervals, the Wilson intervals of the label shares, the
occupations' shares of the score) lives in the metric module.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bias_hub.builders.shared.card import read_card_yaml
from bias_hub.pipelines.common import dataset_folder, load_dataset_split, load_model
from bias_hub.pipelines.common.stats import holm_family
from bias_hub.pipelines.nli import segmentation
from bias_hub.pipelines.nli.labels import LABELS, map_model_labels
from bias_hub.pipelines.nli.predict import encode_pairs, predict_logits, to_canonical_probabilities
from bias_hub.pipelines.nli.random_model import RECORD, read_record
from bias_hub.pipelines.nli.settings import DATASET

__all__ = [
    "COLUMNS",
    "SHORT",
    "SUBSETS",
    "check_columns",
    "check_trained",
    "compare_models",
    "evaluate_model",
    "evaluation_config",
    "load_evaluation_rows",
    "score_predictions",
    "table_row",
]

log = logging.getLogger(__name__)

SUBSETS = ("pro_stereotypical", "anti_stereotypical", "non_stereotypical")
SHORT = {"pro_stereotypical": "PS", "anti_stereotypical": "AS", "non_stereotypical": "NS"}
# The columns an evaluation set must have (nli_gender_bias's every config has them).
COLUMNS = ("premise", "hypothesis", "subset", "occupation")
# The scores compared between models (each its own family for the Holm correction).
COMPARED = ("bias_score", "fraction_neutral")


def evaluation_config(
    folder: str | Path, config: str | None = None, suffix: str = "", flag: str = "--dataset"
) -> str:
    """``config``, or by default the first the folder has of: the release's ``all`` + ``suffix``
    (e.g. ``all_downsampled``), the release's ``all``, the generated sets' ``generated_all`` (an
    offline build). Fails, naming the folder and its configs, where the config is not there."""
    configs = [entry["config_name"] for entry in read_card_yaml(folder).get("configs", [])]
    chosen = config or next(
        (name for name in (f"all{suffix}", "all", "generated_all") if name in configs), None
    )
    if chosen not in configs:
        what = (
            f"no config {config!r}"
            if config
            else f"none of the configs all{suffix}, all, generated_all"
        )
        raise ValueError(
            f"{flag} {folder}: has {what} (its configs: {', '.join(configs) or 'none'}); expected an {DATASET} "
            f"folder (bias-hub build {DATASET})" + (" and one of its configs" if config else "")
        )
    return chosen


def check_columns(rows, folder: str | Path, config: str, flag: str = "--dataset") -> None:
    """Fail, naming the folder and config, where the rows are not premise/hypothesis pairs of PS/AS/NS sets."""
    missing = [column for column in COLUMNS if column not in rows.column_names]
    if missing:
        raise ValueError(
            f"{flag} {folder}, config {config}: no column(s) {', '.join(missing)} (it has "
            f"{', '.join(rows.column_names)}); expected the {DATASET} evaluation pairs"
        )


def load_evaluation_rows(
    dataset: str | Path | None = None,
    datasets_root: str | Path | None = None,
    config: str | None = None,
):
    """The evaluation pairs as a ``datasets.Dataset`` (the three subsets in one; see ``evaluation_config``)."""
    folder = dataset_folder(dataset or DATASET, datasets_root)
    chosen = evaluation_config(folder, config)
    rows = load_dataset_split(folder, chosen, "test")
    check_columns(rows, folder, chosen)
    return rows


def score_predictions(
    metric,
    predictions: np.ndarray,
    subsets: Sequence[str],
    probabilities: np.ndarray | None = None,
    **options,
) -> dict:
    """The metric's result for canonical label ids (0/1/2) and the subset of each pair.

    ``options``: the module's ``confidence_level``, ``n_resamples``, ``seed``, ``templates``,
    ``occupations`` (None: not passed).
    """
    return metric.compute(
        predictions=np.asarray(predictions, dtype=np.int64),
        subsets=list(subsets),
        probabilities=None if probabilities is None else np.asarray(probabilities),
        **{key: value for key, value in options.items() if value is not None},
    )


def table_row(result: dict) -> dict:
    """The paper's Table 3 row (fractions per subset) and Table 4 score, flat."""
    row = {}
    for subset in SUBSETS:
        fractions = result["fractions"].get(subset, {})
        for name in LABELS:
            row[f"{name[0]}_{SHORT[subset]}"] = fractions.get(name)
    row["bias_score"] = result["bias_score"]
    row["FN"] = result.get("fraction_neutral")
    row["NN"] = result.get("net_neutral")
    for tau, value in (result.get("threshold_neutral") or {}).items():
        row[f"T:{tau}"] = value
    return row


def _templates(rows, settings) -> list | None:
    if getattr(settings, "bootstrap_unit", "items") != "templates":
        return None
    if "template_id" not in rows.column_names:
        raise ValueError("--bootstrap-unit templates: the evaluation set has no template_id column")
    return list(rows["template_id"])


def check_trained(model_id: str, settings) -> None:
    """Refuse a classifier that ``nli init-model`` made and nothing trained (its record marks
    it), unless ``--allow-untrained``: its scores are noise that reads like a measurement."""
    if read_record(model_id) is not None and not getattr(settings, "allow_untrained", False):
        raise ValueError(
            f"--model {model_id}: made by `nli init-model` and never trained (its {RECORD} says so); its "
            "classifier is random. Train it first (nli train, or nli meta-evaluate --reinitialize), or pass "
            "--allow-untrained to score it anyway (plumbing tests)"
        )


def evaluate_model(model_id: str, rows, metric, settings, label_map: dict | None = None) -> dict:
    """Predict every pair with one model and score it; returns the metric's result (with the
    occupations' shares, each with its English name), predictions and probabilities.

    The model must be a trained sequence classifier: a masked LM or a base checkpoint (whose
    classifier would start from random weights) is refused by ``load_model``, a never-trained
    ``nli init-model`` folder by ``check_trained`` (called before any work). Models that read Juman++ words get the pairs
    segmented (``bias_hub.pipelines.nli.segmentation``).
    """
    form = segmentation.resolve(settings.segmentation, model_id)
    premises = segmentation.prepare_texts(rows["premise"], form)
    hypotheses = segmentation.prepare_texts(rows["hypothesis"], form)
    model, tokenizer = load_model(model_id, "sequence-classification", settings.model_options())
    to_canonical = map_model_labels(model.config.id2label, label_map)
    encodings = encode_pairs(tokenizer, premises, hypotheses, settings.max_length)
    truncated = sum(len(ids) >= settings.max_length for ids in encodings["input_ids"])
    if truncated:
        log.warning(
            "%s: %d of %d pairs reach --max-length %d and are cut",
            model_id,
            truncated,
            len(rows),
            settings.max_length,
        )
    logits = predict_logits(
        model,
        encodings,
        settings.batch_size,
        tokenizer.pad_token_id or 0,
        settings.progress,
        batch_tokens=settings.batch_tokens,
    )
    probabilities = to_canonical_probabilities(logits, to_canonical)
    predictions = probabilities.argmax(axis=1)
    level = settings.confidence_level
    result = score_predictions(
        metric,
        predictions,
        rows["subset"],
        probabilities,
        occupations=list(rows["occupation"]),
        **settings.interval_options(),
        templates=_templates(rows, settings) if level else None,
    )
    english = (
        dict(zip(rows["occupation"], rows["occupation_en"], strict=True))
        if "occupation_en" in rows.column_names
        else {}
    )
    for entry in result["occupations"]:
        entry["occupation_en"] = english.get(entry["occupation"]) or entry["occupation"]
    return {
        "result": result,
        "predictions": predictions,
        "probabilities": probabilities,
        "segmentation": form,
        "truncated_pairs": truncated,
    }


def paired_difference(paired, a, b, subsets: Sequence[str], settings, templates=None) -> dict:
    """B - A of two models' label ids on the same rows from the module's ``paired`` config
    (bootstrap interval, permutation p)."""
    return paired.compute(
        predictions=np.asarray(a, dtype=np.int64),
        predictions_b=np.asarray(b, dtype=np.int64),
        subsets=list(subsets),
        confidence_level=settings.confidence_level,
        n_resamples=settings.n_resamples,
        seed=settings.seed,
        **({"templates": templates} if templates is not None else {}),
    )


def difference_entry(result: dict, score: str) -> dict:
    """One score of a ``paired`` result: B - A, its interval and its p-value."""
    interval, found = result["confidence_intervals"][score], result["scores"][score]
    return {
        "difference": found["difference"],
        "low": interval["low"],
        "high": interval["high"],
        "p_value": found["p_value"],
        "p_value_method": found["p_value_method"],
    }


def compare_models(paired, evaluated: dict[str, dict], rows, settings) -> dict:
    """Every pair of models on the same rows, Holm-corrected within each score's family.

    Returns ``{"correction": "Holm", "level": alpha, "pairs": [{"a", "b", score: {difference,
    low, high, p_value, p_holm, significant}}]}``; ``significant`` means the Holm-adjusted
    p-value is below 1 - confidence_level.
    """
    templates = _templates(rows, settings)
    pairs = []
    for name_a, name_b in itertools.combinations(evaluated, 2):
        a, b = evaluated[name_a]["predictions"], evaluated[name_b]["predictions"]
        result = paired_difference(paired, a, b, rows["subset"], settings, templates)
        entry = {"a": name_a, "b": name_b}
        for score in COMPARED:
            entry[score] = difference_entry(result, score)
        pairs.append(entry)
    alpha = 1 - settings.confidence_level
    for score in COMPARED:
        holm_family([entry[score] for entry in pairs], alpha)
    return {
        "correction": "Holm",
        "alpha": alpha,
        "family": "all pairs of models, per score",
        "pairs": pairs,
    }
