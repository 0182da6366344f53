"""``nli evaluate``'s computations: predict the PS/AS/NS sets, score them with intervals, compare models.

The evaluation sets are opened with ``datasets.load_dataset("<root>/nli_gender_bias", config)``
and scored with ``evaluate.load("<root>/metrics/nli_gender_bias")`` (its ``paired`` config for
comparisons), exactly as a user would.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from pipelines.common import dataset_folder, holm, load_dataset_split, load_model
from pipelines.nli.labels import LABELS

__all__ = [
    "SHORT",
    "SUBSETS",
    "check_interval_settings",
    "compare_models",
    "evaluate_model",
    "evaluation_config",
    "fraction_intervals",
    "holm",
    "load_evaluation_rows",
    "occupation_breakdown",
    "score_predictions",
    "table_row",
]

SUBSETS = ("pro_stereotypical", "anti_stereotypical", "non_stereotypical")
SHORT = {"pro_stereotypical": "PS", "anti_stereotypical": "AS", "non_stereotypical": "NS"}
BOOTSTRAP_UNITS = ("items", "templates")
# The scores compared between models (each its own family for the Holm correction).
COMPARED = ("bias_score", "fraction_neutral")


def evaluation_config(folder: str | Path, config: str | None = None, suffix: str = "") -> str:
    """``config``, or by default the first the folder has of: the release's ``all`` + ``suffix``
    (e.g. ``all_downsampled``), the release's ``all``, the generated sets' ``generated_all`` (an
    offline build)."""
    if config:
        return config
    from builders.shared.card import read_card_yaml

    configs = {entry["config_name"] for entry in read_card_yaml(folder).get("configs", [])}
    return next((name for name in (f"all{suffix}", "all") if name in configs), "generated_all")


def load_evaluation_rows(dataset: str | Path | None = None, datasets_root: str | Path | None = None,
                         config: str | None = None):  # fmt: skip
    """The evaluation pairs as a ``datasets.Dataset`` (the three subsets in one; see ``evaluation_config``)."""
    from pipelines.nli.run import DATASET

    folder = dataset_folder(dataset or DATASET, datasets_root)
    return load_dataset_split(folder, evaluation_config(folder, config), "test")


def check_interval_settings(confidence_level: float | None, n_resamples: int, unit: str = "items") -> None:
    """Fail before any model is loaded on an unusable ``--confidence-level`` / ``--n-resamples``."""
    if confidence_level is not None and not 0 < confidence_level < 1:
        raise ValueError(f"--confidence-level {confidence_level}: expected a level in (0, 1) such as 0.95, or none")
    if n_resamples < 100:
        raise ValueError(f"--n-resamples {n_resamples}: expected at least 100")
    if unit not in BOOTSTRAP_UNITS:
        raise ValueError(f"--bootstrap-unit {unit!r}: expected one of {', '.join(BOOTSTRAP_UNITS)}")


def score_predictions(metric, predictions: np.ndarray, subsets: Sequence[str],
                      probabilities: np.ndarray | None = None, **intervals) -> dict:  # fmt: skip
    """The metric's result for canonical label ids (0/1/2) and the subset of each pair.

    ``intervals``: the module's ``confidence_level``, ``n_resamples``, ``seed``, ``templates``.
    """
    return metric.compute(
        predictions=np.asarray(predictions, dtype=np.int64),
        subsets=list(subsets),
        probabilities=None if probabilities is None else np.asarray(probabilities),
        **{key: value for key, value in intervals.items() if value is not None},
    )


def fraction_intervals(predictions: np.ndarray, subsets: Sequence[str], confidence_level: float) -> dict:
    """Wilson score intervals of each label's share per set: ``{subset: {label: [low, high]}}``.

    A share is a binomial proportion over the set's rows (items), for which the Wilson interval
    keeps its level at small counts and at shares near 0 or 1 where a bootstrap cannot.
    """
    from scipy.stats import binomtest

    predictions = np.asarray(predictions)
    subsets = np.asarray(subsets, dtype=object)
    table = {}
    for subset in SUBSETS:
        rows = predictions[subsets == subset]
        if rows.size == 0:
            continue
        counts = np.bincount(rows, minlength=3)[:3]
        table[subset] = {}
        for label, count in zip(LABELS, counts, strict=True):
            interval = binomtest(int(count), int(rows.size)).proportion_ci(confidence_level, method="wilson")
            table[subset][label] = [float(interval.low), float(interval.high)]
    return table


def occupation_breakdown(predictions: np.ndarray, subsets: Sequence[str], occupations: Sequence[str],
                         occupations_en: Sequence[str] | None = None) -> list[dict]:  # fmt: skip
    """Each occupation's label fractions and its share of the bias score.

    The bias score s = (e_PS + c_AS + (1 - n_NS)) / 3 is a sum over pairs: a PS pair predicted
    entailment, an AS pair predicted contradiction and an NS pair not predicted neutral each add
    1 / (3 x size of its subset). Summing that per occupation splits s exactly, so the rows with
    the largest ``score_share`` are the occupations that drive the score.
    """
    predictions = np.asarray(predictions)
    subsets = np.asarray(subsets, dtype=object)
    occupations = np.asarray(occupations, dtype=object)
    english = np.asarray(occupations_en if occupations_en is not None else occupations, dtype=object)
    biased = np.zeros(len(predictions), dtype=bool)
    weight = np.zeros(len(predictions), dtype=np.float64)
    for subset, label, flip in (("pro_stereotypical", 0, False), ("anti_stereotypical", 2, False),
                                ("non_stereotypical", 1, True)):  # fmt: skip
        rows = subsets == subset
        if rows.any():
            hit = predictions[rows] == label
            biased[rows] = ~hit if flip else hit
            weight[rows] = 1.0 / (3 * rows.sum())
    table = []
    for occupation in np.unique(occupations):
        rows = occupations == occupation
        entry = {
            "occupation": str(occupation),
            "occupation_en": str(english[rows][0]),
            "pairs": int(rows.sum()),
            "score_share": float((biased[rows] * weight[rows]).sum()),
        }
        for subset in SUBSETS:
            part = rows & (subsets == subset)
            if part.any():
                fractions = np.bincount(predictions[part], minlength=3)[:3] / part.sum()
                entry[SHORT[subset]] = {name: float(f) for name, f in zip(LABELS, fractions, strict=True)}
        table.append(entry)
    return sorted(table, key=lambda e: -e["score_share"])


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


def evaluate_model(model_id: str, rows, metric, settings, label_map: dict | None = None) -> dict:
    """Predict every pair with one model and score it; returns result, predictions, breakdown.

    The model must be a trained sequence classifier: a masked LM or a base checkpoint (whose
    classifier would start from random weights) is refused by ``load_model``. Models that read
    Juman++ words get the pairs segmented (``pipelines.nli.segmentation``).
    """
    from pipelines.nli import segmentation
    from pipelines.nli.labels import map_model_labels
    from pipelines.nli.predict import encode_pairs, predict_logits, to_canonical_probabilities

    form = segmentation.resolve(settings.segmentation, model_id)
    premises = segmentation.prepare_texts(rows["premise"], form)
    hypotheses = segmentation.prepare_texts(rows["hypothesis"], form)
    model, tokenizer = load_model(model_id, "sequence-classification", settings.model_options())
    to_canonical = map_model_labels(model.config.id2label, label_map)
    encodings = encode_pairs(tokenizer, premises, hypotheses, settings.max_length)
    logits = predict_logits(model, encodings, settings.batch_size, tokenizer.pad_token_id or 0, settings.progress)
    probabilities = to_canonical_probabilities(logits, to_canonical)
    predictions = probabilities.argmax(axis=1)
    level = settings.confidence_level
    result = score_predictions(metric, predictions, rows["subset"], probabilities, confidence_level=level,
                               n_resamples=settings.n_resamples if level else None, seed=settings.seed if level else None,
                               templates=_templates(rows, settings) if level else None)  # fmt: skip
    if level:
        result["fraction_intervals"] = fraction_intervals(predictions, rows["subset"], level)
    breakdown = occupation_breakdown(predictions, rows["subset"], rows["occupation"], rows["occupation_en"])
    return {"result": result, "predictions": predictions, "probabilities": probabilities, "occupations": breakdown,
            "segmentation": form}  # fmt: skip


def paired_difference(paired, a: dict, b: dict, subsets: Sequence[str], settings, templates=None) -> dict:
    """B - A on the same rows from the module's ``paired`` config (bootstrap interval, permutation p)."""
    return paired.compute(
        predictions=np.asarray(a["predictions"], dtype=np.int64),
        predictions_b=np.asarray(b["predictions"], dtype=np.int64),
        subsets=list(subsets),
        confidence_level=settings.confidence_level,
        n_resamples=settings.n_resamples,
        seed=settings.seed,
        **({"templates": templates} if templates is not None else {}),
    )


def compare_models(paired, evaluated: dict[str, dict], rows, settings) -> dict:
    """Every pair of models on the same rows, Holm-corrected within each score's family.

    Returns ``{"correction": "Holm", "level": alpha, "pairs": [{"a", "b", score: {difference,
    low, high, p_value, p_holm, significant}}]}``; ``significant`` means the Holm-adjusted
    p-value is below 1 - confidence_level.
    """
    templates = _templates(rows, settings)
    pairs = []
    for name_a, name_b in itertools.combinations(evaluated, 2):
        result = paired_difference(paired, evaluated[name_a], evaluated[name_b], rows["subset"], settings, templates)
        entry = {"a": name_a, "b": name_b}
        for score in COMPARED:
            interval = result["confidence_intervals"][score]
            entry[score] = {"difference": result["scores"][score]["difference"], "low": interval["low"],
                            "high": interval["high"], "p_value": result["scores"][score]["p_value"],
                            "p_value_method": result["scores"][score]["p_value_method"]}  # fmt: skip
        pairs.append(entry)
    alpha = 1 - settings.confidence_level
    for score in COMPARED:
        adjusted = holm([entry[score]["p_value"] for entry in pairs])
        for entry, p in zip(pairs, adjusted, strict=True):
            entry[score]["p_holm"] = p
            entry[score]["significant"] = p is not None and p < alpha
    return {"correction": "Holm", "alpha": alpha, "family": "all pairs of models, per score", "pairs": pairs}
