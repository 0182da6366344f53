"""``run(model, dataset, out_dir, settings)``: masked LMs -> probabilities, scores, sentiment -> run folder.

The part's one step: ``results.json`` (``"part": "speciesism"``, ``"step": "run"``); ``report.py``
renders ``report.md`` and ``negative_share.png`` from it.
"""

from __future__ import annotations

import itertools
import logging
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bias_hub.builders.shared.console import stage
from bias_hub.pipelines.common import RunFolder, dataset_folder, load_dataset_split, metric_scores
from bias_hub.pipelines.common.presets import preset_record
from bias_hub.pipelines.common.stats import holm_family
from bias_hub.pipelines.speciesism.fill_mask import (
    MASK_MARKER,
    MaskedLM,
    load_masked_lm,
    mask_probabilities,
    name_pieces,
    token_strings,
    vocabulary_view,
    with_mask,
)
from bias_hub.pipelines.speciesism.report import render
from bias_hub.pipelines.speciesism.sentiment import DEFAULT_BACKEND, get_backend
from bias_hub.pipelines.speciesism.settings import CONFIGS, DATASET, TOKENS, Settings

__all__ = ["CONFIGS", "DATASET", "DIRECTIONS", "PART", "STEP", "Settings", "TOKENS", "run"]

log = logging.getLogger(__name__)
PART = "speciesism"
STEP = "run"
# The fill is judged in a sentence about a person, so the animal's name does not sway the classifier.
PERSON_SENTENCE = {"en": "A person is {fill}.", "ja": "その人は{fill}。"}
# The study's tables in its order: Table 1 (3 for BERT) starts from the object form,
# Table 2 (4) from the human form; each lists the words whose probability drops.
DIRECTIONS = ("object_to_human", "human_to_object")


def load_rows(settings: Settings, folder: Path, config: str) -> list[dict]:
    rows = list(load_dataset_split(folder, config, "test"))
    chosen = [
        row
        for row in rows
        if (row["animal"] in settings.animals)
        or (not settings.animals and row["animal_group"] in settings.groups)
    ]
    known = sorted({row["animal"] for row in rows})
    unknown = sorted(set(settings.animals) - set(known))
    if unknown or not chosen:
        raise ValueError(
            f"--animals/--groups: {unknown or 'they'} select no rows of {DATASET}/{config}; "
            f"known animals: {known}"
        )
    for row in chosen:
        if row["text"].count(MASK_MARKER) != 1:
            raise ValueError(f"{DATASET}/{config}, row {row['id']}: text lacks one {MASK_MARKER}")
        if row["text"].count(row["name"]) < 1:
            raise ValueError(
                f"{DATASET}/{config}, row {row['id']}: text lacks the name {row['name']!r}"
            )
    return chosen


def _split_on_name(text: str, name: str, language: str) -> tuple[str, str]:
    """Text before and after the (single) occurrence of the name."""
    pattern = (
        rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])" if language == "en" else re.escape(name)
    )
    found = list(re.finditer(pattern, text))
    if len(found) != 1:
        raise ValueError(
            f"text {text!r}: the name {name!r} occurs {len(found)} times; expected once"
        )
    return text[: found[0].start()], text[found[0].end() :]


def _unique(tokens: list[str]) -> list[str]:
    """The items' names for the metric, which needs each once: a token string twice in one
    tokenizer (an added token) gets its index appended."""
    seen = Counter(tokens)
    return [token if seen[token] == 1 else f"{token}#{index}" for index, token in enumerate(tokens)]


def change_rate_tables(settings: Settings, probs, rows, words, candidates, tokens) -> dict:
    """The study's tables per animal group: in each direction, the words above chance in
    the starting form whose probability drops most (and, apart, the largest gains). The metric
    ranks the model's items by their token strings (unique); each listed entry then gets its
    readable ``word`` (and, with ``--tokens raw``, its ``token``)."""
    tables, metric = {}, metric_scores("speciesism_bias", settings.metrics_root, "change_rate")
    groups = sorted({row["animal_group"] for row in rows}, key=lambda g: (g != "study", g))
    for group in groups:
        keep = [i for i, row in enumerate(rows) if row["animal_group"] == group]
        tables[group] = metric.compute(
            probabilities=probs[keep],
            forms=[rows[i]["form"] for i in keep],
            vocabulary=_unique(tokens),
            candidates=None if candidates is None else candidates.tolist(),
            top_k=settings.top_k,
            # The unit of the intervals: a template's sentences share its wording across animals.
            templates=[rows[i]["template_id"] for i in keep],
            **settings.interval_options(),
        )
        for entry in _entries(tables[group]):
            entry["word"] = words[entry["index"]]
        tables[group]["n_templates"] = {
            form: len({rows[i]["template_id"] for i in keep if rows[i]["form"] == form})
            for form in ("human", "object")
        }
    return tables


def associations(settings: Settings, lm: MaskedLM, rows: list[dict], table: dict) -> dict | None:
    """Kurita et al.'s log(p_target / p_prior) of the animal names with the top words."""
    if settings.association_words == 0:
        return None
    attributes = [
        (direction, entry["word"])
        for direction in DIRECTIONS
        for entry in table[direction][: settings.association_words]
    ]
    if not attributes:
        settings.warnings["association skipped: no listed word in either table"] += 1
        return None
    mask = lm.mask_token
    target_texts, targets, prior_texts, prior_targets, groups = [], [], [], [], []
    for row in rows:
        before, after = _split_on_name(row["text"], row["name"], settings.language)
        pieces = name_pieces(lm, before, row["name"])
        if len(pieces) > 1:
            settings.warnings[
                "animal name split into several pieces (product of piece probabilities)"
            ] += 1
        masked_name = before + mask * len(pieces) + after
        name_first = len(before) < masked_name.index(MASK_MARKER)
        # The prior (name and attribute both masked) is the same for every attribute.
        prior_texts.append(masked_name.replace(MASK_MARKER, mask))
        # -1 marks the attribute's own mask, which is predicted but not scored.
        prior_targets.append(pieces + [-1] if name_first else [-1] + pieces)
        target_texts += [masked_name.replace(MASK_MARKER, word) for _, word in attributes]
        targets += [pieces] * len(attributes)
        groups += [f"{row['form']}|{direction}" for direction, _ in attributes]
    bars = settings.progress
    p_target = mask_probabilities(
        lm, target_texts, settings.batch_size, "association (target)" if bars else None, targets
    )
    p_prior = mask_probabilities(
        lm, prior_texts, settings.batch_size, "association (prior)" if bars else None, prior_targets
    )
    p_prior = np.repeat(p_prior, len(attributes))
    metric = metric_scores("speciesism_bias", settings.metrics_root, "association")
    result = metric.compute(
        target_probabilities=np.clip(p_target, 1e-45, 1.0).tolist(),
        prior_probabilities=np.clip(p_prior, 1e-45, 1.0).tolist(),
        groups=groups,
        **settings.interval_options(),
    )
    result["attributes"] = [{"direction": d, "word": w} for d, w in attributes]
    del result["association"]
    return result


def sentiment(settings: Settings, folder: Path, lm: MaskedLM, backend, words, candidates) -> dict:
    """The top fills of "A <NAME> is <MASK>.", each judged in "A person is <fill>.", and the
    share judged negative per animal."""
    rows = load_rows(settings, folder, CONFIGS[settings.language][1])
    texts = [with_mask(row["text"], lm.mask_token) for row in rows]
    probs = mask_probabilities(
        lm, texts, settings.batch_size, "sentiment fills" if settings.progress else None
    )
    allowed = np.arange(probs.shape[1]) if candidates is None else np.flatnonzero(candidates)
    fills = []
    for row, dist in zip(rows, probs, strict=True):
        order = allowed[np.argsort(-dist[allowed], kind="stable")][: settings.sentiment_top_k]
        if len(order) < settings.sentiment_top_k:
            settings.warnings["fewer word-like fills than --sentiment-top-k"] += 1
        fills += [
            {
                "animal": row["animal"],
                "sentence": row["id"],
                "fill": words[index],
                "probability": float(dist[index]),
            }
            for index in order
        ]
    if not fills:
        raise ValueError(
            f"--model {lm.model_id}: no word-like fill to judge; the sentiment result is empty"
        )
    template = PERSON_SENTENCE[settings.language]
    judged = backend.judge([template.format(fill=fill["fill"]) for fill in fills])
    if len(judged) != len(fills):
        raise ValueError(
            f"sentiment backend {backend.name!r} returned {len(judged)} labels for {len(fills)} texts"
        )
    for fill, (label, score) in zip(fills, judged, strict=True):
        fill["label"], fill["score"] = label, float(score)
    metric = metric_scores("speciesism_bias", settings.metrics_root, "negative_share")
    animals, labels = [fill["animal"] for fill in fills], [fill["label"] for fill in fills]
    result = metric.compute(animals=animals, labels=labels)
    options = settings.interval_options() if settings.confidence_level is not None else {}
    if options:
        # Over all animals the unit is the sentence, so the fills of one sentence move
        # together; per animal it is the fill (all of an animal's fills come from its one
        # sentence), resampled within that animal alone.
        sentences = [fill["sentence"] for fill in fills]
        intervals = {
            "overall_negative_share": metric.compute(
                animals=animals, labels=labels, templates=sentences, **options
            )["confidence_intervals"]["overall_negative_share"]
        }
        for animal in result["negative_share"]:
            mine = [label for label, other in zip(labels, animals, strict=True) if other == animal]
            alone = metric.compute(animals=[animal] * len(mine), labels=mine, **options)
            intervals[f"negative_share.{animal}"] = alone["confidence_intervals"][
                "overall_negative_share"
            ]
        result["confidence_intervals"] = intervals
    return result | {"fills": fills, "backend": backend.name, "sentence": template}


def compare_models(settings: Settings, models: list[dict]) -> list[dict]:
    """Every pair of models: the difference of their negative shares on matched fills (the
    i-th fill of the same sentence), with paired intervals and permutation p-values, Holm-
    corrected over every comparison of the run."""
    options = settings.interval_options() if settings.confidence_level is not None else {}
    if len(models) < 2 or not options:
        return []
    metric = metric_scores("speciesism_bias", settings.metrics_root, "negative_share_paired")
    comparisons = []
    for first, second in itertools.combinations(models, 2):
        by_sentence = [{}, {}]
        for side, model in zip(by_sentence, (first, second), strict=True):
            for fill in model["sentiment"]["fills"]:
                side.setdefault(fill["sentence"], []).append(fill)
        pairs = [
            (a, b)
            for sentence, fills in by_sentence[0].items()
            for a, b in zip(fills, by_sentence[1].get(sentence, []), strict=False)
        ]
        if len(pairs) < 2:
            settings.warnings[
                f"{first['label']} vs {second['label']}: fewer than 2 matched fills, not compared"
            ] += 1
            continue
        columns = {
            "animals": [a["animal"] for a, _ in pairs],
            "labels": [a["label"] for a, _ in pairs],
            "labels_b": [b["label"] for _, b in pairs],
        }
        # Per animal the unit is the matched fill; over all animals the sentence (one per animal).
        per_fill = metric.compute(**columns, **options)
        per_sentence = metric.compute(
            **columns, templates=[a["sentence"] for a, _ in pairs], **options
        )
        overall = "overall_negative_share"
        comparisons.append(
            {
                "a": first["label"],
                "b": second["label"],
                "matched_fills": len(pairs),
                "scores": per_fill["scores"] | {overall: per_sentence["scores"][overall]},
                "confidence_intervals": per_fill["confidence_intervals"]
                | {overall: per_sentence["confidence_intervals"][overall]},
            }
        )
    tested = [s for c in comparisons for s in c["scores"].values() if s["p_value"] is not None]
    holm_family(tested, 1 - settings.confidence_level)
    return comparisons


def run_model(settings: Settings, folder: Path, model_id: str, backend) -> dict:
    with stage(f"{model_id}: load", log):
        lm = load_masked_lm(model_id, settings.model_options())
    rows = load_rows(settings, folder, CONFIGS[settings.language][0])
    texts = [with_mask(row["text"], lm.mask_token) for row in rows]
    with stage(f"{model_id}: probabilities at the mask ({len(texts)} templates)", log):
        probs = mask_probabilities(
            lm,
            texts,
            settings.batch_size,
            f"{model_id}: mask probabilities" if settings.progress else None,
        )
    words, word_like = vocabulary_view(lm, settings.language)
    candidates = None if settings.tokens == "raw" else word_like
    tokens = token_strings(lm)
    with stage(f"{model_id}: change rates", log):
        tables = change_rate_tables(settings, probs, rows, words, candidates, tokens)
    if settings.tokens == "raw":
        # The raw token beside its readable form: "ĠMarried" and "Married" both read "Married".
        for table in tables.values():
            for entry in _entries(table):
                entry["token"] = tokens[entry["index"]]
    main_group = next(iter(tables))
    main_rows = [row for row in rows if row["animal_group"] == main_group]
    with stage(f"{model_id}: association and sentiment", log):
        association = associations(settings, lm, main_rows, tables[main_group])
        judged = sentiment(settings, folder, lm, backend, words, candidates)
    return {
        "model": model_id,
        # A local folder is shown by its name, a Hub id as given.
        "label": Path(model_id).name if Path(model_id).is_dir() else model_id,
        "vocabulary_size": lm.vocabulary_size,
        "word_like_items": int(word_like.sum()),
        "rows": len(rows),
        "change_rate": tables,
        "association_group": main_group,
        "association": association,
        "sentiment": judged,
    }


def _entries(table: dict) -> list[dict]:
    return [entry for key in DIRECTIONS for entry in table[key] + table["gains"][key]]


def _models(model: str | Sequence[str] | None) -> list[str]:
    models = [model] if isinstance(model, str) else list(model or ())
    if not models:
        raise ValueError(
            "--model: give at least one masked language model id or path (or --preset paper "
            "for the paper's bert-large-uncased and roberta-large)"
        )
    return models


def run(
    model: str | Sequence[str] | None, dataset: str | Path | None, out_dir: Path, settings: Settings
) -> dict:
    """Score every model on the templates; write results.json and render report.md and the chart into ``out_dir``."""
    models = _models(model)
    settings.warnings.clear()
    folder = dataset_folder(dataset or DATASET, settings.datasets_root)
    backend = get_backend(
        settings.sentiment_backend or DEFAULT_BACKEND[settings.language], settings.language
    )
    if backend.language != settings.language:
        settings.warnings[
            f"sentiment backend {backend.name!r} is for {backend.language!r}, templates are {settings.language!r}"
        ] += 1
    with RunFolder(out_dir) as out:
        out.record_inputs(
            datasets=[(folder, config) for config in CONFIGS[settings.language]],
            models=[(model_id, settings.revision) for model_id in models],
            settings=settings,
        )
        results = {
            "part": PART,
            "step": STEP,
            "dataset": str(folder),
            "preset": preset_record(settings, out.inputs),
            "language": settings.language,
            "groups": list(settings.groups),
            "animals": list(settings.animals),
            "tokens": settings.tokens,
            "sentiment_backend": backend.name,
            "intervals": settings.interval_record(),
            "report_note": settings.report_note,
            "models": [run_model(settings, folder, model_id, backend) for model_id in models],
        }
        results["comparisons"] = compare_models(settings, results["models"])
        results["warnings"] = dict(settings.warnings)
        results["chart"] = "negative_share.png"
        out.write_json("results.json", results)
        render(results, out.staging)
    for entry in results["models"]:
        log.info(
            "%s: negative share of top fills %.2f",
            entry["model"],
            entry["sentiment"]["overall_negative_share"],
        )
    log.info("wrote %s", Path(out_dir) / "report.md")
    return results
