"""``run(model, dataset, out_dir, settings)``: the one step of ``bias-hub stereoset attention``.

``model`` is the encoder whose attentions are read (a causal one is refused), ``settings.lm``
the causal LM whose perplexities are compared. The defaults follow the study (Ueno, §4.2; see
``settings``); in attention-gap order, each word takes the pairs that hold it and that no
earlier word took, and its perplexity gap is the mean over those pairs. Writes
``results.json``, ``words.jsonl`` and ``top_words.jsonl``; ``report.py`` renders the rest.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from bias_hub.builders.shared.console import stage
from bias_hub.builders.shared.errors import UserError
from bias_hub.pipelines.common import (
    RunFolder,
    dataset_folder,
    load_dataset_split,
    load_model,
    metric_scores,
)
from bias_hub.pipelines.common.presets import preset_record
from bias_hub.pipelines.common.settings import INTERVAL_FIELDS
from bias_hub.pipelines.stereoset.attention import check_bidirectional, gender_attention
from bias_hub.pipelines.stereoset.perplexity import sentence_perplexities
from bias_hub.pipelines.stereoset.report import render, summary_table
from bias_hub.pipelines.stereoset.settings import DATASET, Settings

__all__ = ["DATASET", "PART", "STEP", "Settings", "load_models", "load_pairs", "measure", "run"]

log = logging.getLogger(__name__)
PART = "stereoset"
STEP = "attention"


def load_pairs(folder: Path, config: str) -> list[dict]:
    try:
        return load_dataset_split(folder, config, "test").to_list()
    except ValueError as err:
        raise ValueError(f"--config: {err}") from None


def load_models(model: str, settings: Settings):
    """The encoder (eager attention; a causal model refused) and the causal LM, each with its tokenizer."""
    encoder, encoder_tokenizer = load_model(
        model, "encoder", settings.model_options(attentions=True)
    )
    check_bidirectional(encoder, model)
    lm, lm_tokenizer = load_model(settings.lm, "causal-lm", settings.model_options(), flag="--lm")
    return encoder, encoder_tokenizer, lm, lm_tokenizer


def _one_model(model) -> str | None:
    """The encoder: one id or folder (a preset's model list holds exactly one)."""
    if isinstance(model, (list, tuple)):
        if len(model) > 1:
            raise ValueError(f"--model: one encoder, got {len(model)} ({', '.join(model)})")
        return model[0] if model else None
    return model


def run(
    model: str | list[str] | None, dataset: str | Path | None, out_dir: Path, settings: Settings
) -> dict:
    """Load the pairs and both models, measure, write the run folder and render its report."""
    model = _one_model(model)
    if not model:
        raise ValueError("--model: give the encoder (Hub id or local folder), or --preset paper")
    if not settings.lm:
        raise ValueError(
            "--lm: give the causal LM whose perplexities are compared (Hub id or local path)"
        )
    source = dataset_folder(dataset or DATASET, settings.datasets_root)
    pairs = load_pairs(source, settings.config)
    left_out = left_out_at_build(source, settings.config)
    with RunFolder(out_dir) as out:
        out.record_inputs(
            datasets=[(source, settings.config)],
            models=[(model, settings.revision), (settings.lm, settings.revision)],
            settings=settings,
        )
        with stage("load models", log):
            models = load_models(model, settings)
        # The report names the models as given unless told otherwise.
        labelled = replace(
            settings,
            encoder_label=settings.encoder_label or model,
            lm_label=settings.lm_label or settings.lm,
        )
        results = measure(pairs, *models, out, labelled, left_out=left_out)
        render(results, out.staging)
    log.info("%s", summary_table(results))
    log.info("wrote %s", Path(out_dir) / "report.md")
    return results


def _kept(word: str, exclude: str) -> bool:
    """Whether a token or word counts: the study leaves out periods; "punctuation" every mark."""
    if exclude == "period":
        return word != "."
    return any(ch.isalnum() for ch in word)


def _zipf_gap(gender_words: list[dict]) -> float:
    """Mean Zipf frequency of the male gender words minus that of the female ones (0 without any:
    an identical pair of the paper population)."""
    if not gender_words:
        return 0.0
    from wordfreq import zipf_frequency  # the 'models' extra: loaded when a run needs it

    male = [zipf_frequency(w["male_word"].lower(), "en") for w in gender_words]
    female = [zipf_frequency(w["female_word"].lower(), "en") for w in gender_words]
    return float(np.mean(male) - np.mean(female))


def _occurrences(male_attention, female_attention, settings: Settings, counts: Counter) -> tuple:
    """Per aligned pair, every kept token's (word, mass, form); and each pair's male-form words."""
    words, masses, forms, pair_words, kept = [], [], [], [], []
    for index, (male, female) in enumerate(zip(male_attention, female_attention, strict=True)):
        if male is None or female is None:
            counts["pairs_skipped_unaligned"] += 1
            continue
        kept.append(index)
        these = []
        for form, sentence in (("male", male), ("female", female)):
            for word, mass in zip(sentence.words, sentence.mass, strict=True):
                if not np.isfinite(mass):
                    continue
                if not _kept(word, settings.exclude):
                    counts[f"{settings.level}s_excluded_{settings.exclude}"] += 1
                    continue
                words.append(word.lower())
                masses.append(float(mass))
                forms.append(form)
                if form == "male":
                    these.append(word.lower())
        pair_words.append(these)
    return words, masses, forms, pair_words, kept


def attention_gaps(
    pairs: list[dict], encoder, tokenizer, settings: Settings, counts: Counter
) -> dict:
    """Attention mass to the gender words per token (or word) and form, folded into per-word gaps.

    Returns the metric's result plus ``kept`` (indices of aligned pairs) and ``pair_words``
    (the counted tokens or words of each kept pair's male form).
    """
    skipped: Counter = Counter()
    attention = gender_attention(
        encoder,
        tokenizer,
        [p[f"{form}_sentence"] for form in ("male", "female") for p in pairs],
        [
            [(w[f"{form}_start"], w[f"{form}_end"]) for w in p["gender_words"]]
            for form in ("male", "female")
            for p in pairs
        ],
        layer=settings.layer,
        heads=settings.heads,
        batch_size=settings.batch_size,
        progress=settings.progress,
        skipped=skipped,
        level=settings.level,
    )
    words, masses, forms, pair_words, kept = _occurrences(
        attention[: len(pairs)], attention[len(pairs) :], settings, counts
    )
    counts["pairs_aligned"] = len(kept)
    counts.update({f"skipped_{k}": v for k, v in skipped.items()})
    if not kept:
        raise UserError(f"no pair could be aligned to the encoder's pieces ({dict(skipped)})")
    metric = metric_scores("gender_attention_gap", settings.metrics_root)
    gaps = metric.compute(
        words=words,
        attention_to_gender=masses,
        forms=forms,
        min_count=settings.min_count,
        **settings.interval_options(),
    )
    return {**gaps, "kept": kept, "pair_words": pair_words}


def taking_order(gaps: dict, order: str) -> list[str]:
    """The order words take pairs in: the attention-gap order (largest first), or by |gap|."""
    words = gaps["words"]
    if order == "signed":
        return list(words)
    magnitude = np.abs(np.asarray(gaps["attention_gap"], dtype=float))
    return [words[i] for i in np.argsort(-magnitude, kind="stable")]


def word_table(
    gaps: dict,
    ppl: dict,
    kept_pairs: list[dict],
    scored: np.ndarray,
    male_ppl: np.ndarray,
    female_ppl: np.ndarray,
) -> list[dict]:
    """One row per word in attention-gap order: its gaps with their intervals and its pairs."""
    intervals = gaps.get("confidence_intervals", {})
    ppl_intervals = ppl.get("confidence_intervals", {})
    by_word = {word: i for i, word in enumerate(ppl["words"])}
    rows = []
    for i, word in enumerate(gaps["words"]):
        j = by_word.get(word)
        pairs = [int(scored[p]) for p in ppl["word_pairs"][j]] if j is not None else []
        rows.append(
            {
                "rank": i + 1,
                "word": word,
                "attention_gap": gaps["attention_gap"][i],
                "attention_gap_interval": intervals.get(f"attention_gap[{i}]"),
                "male_mean": gaps["male_mean"][i],
                "female_mean": gaps["female_mean"][i],
                "male_count": gaps["male_count"][i],
                "female_count": gaps["female_count"][i],
                "perplexity_gap": ppl["word_perplexity_gap"][j] if j is not None else None,
                "perplexity_gap_interval": ppl_intervals.get(f"word_perplexity_gap[{j}]")
                if j is not None
                else None,
                "n_pairs": len(pairs),
                "pairs": [
                    {
                        "id": kept_pairs[p]["id"],
                        "male_sentence": kept_pairs[p]["male_sentence"],
                        "female_sentence": kept_pairs[p]["female_sentence"],
                        "male_perplexity": float(male_ppl[p]),
                        "female_perplexity": float(female_ppl[p]),
                        "perplexity_gap": float(male_ppl[p] - female_ppl[p]),
                    }
                    for p in pairs
                ],
            }
        )
    return rows


def _correlations(correlation: dict | None, intervals: dict) -> dict | None:
    """The metric's per-word correlations in the shared shape of ``bias_hub.pipelines.common.stats.correlation``:
    ``{"pearson": {...}, "spearman": {...}}``, each ``{"method", "statistic", "p_value", "n",
    "interval", "note"}`` (statistic and p-value None, with a note, where undefined)."""
    if correlation is None:
        return None
    shaped = {}
    for method in ("pearson", "spearman"):
        value, p_value = correlation[method], correlation[f"{method}_pvalue"]
        defined = value is not None and np.isfinite(value)
        shaped[method] = {
            "method": method,
            "statistic": float(value) if defined else None,
            "p_value": float(p_value) if defined else None,
            "n": correlation["n_words"],
            "interval": intervals.get(f"correlation_{method}"),
            "note": None if defined else "undefined: fewer than 3 words, or a constant side",
        }
    return shaped


def _name_list(pairs: list[dict]) -> str | None:
    """The first-name list the dataset config's rows record (None: the config records none; its card
    says which names were gender words)."""
    lists = sorted({p["name_list"] for p in pairs if p.get("name_list")})
    return "; ".join(lists) or None


def _identical(pair: dict) -> bool:
    """A pair without a gender word: the same sentence twice (the paper population's contexts without one)."""
    return not pair["gender_words"]


def _sample(pairs: list[dict], settings: Settings, counts: Counter) -> list[dict]:
    """The pairs the statistics use: identical ones left out unless ``identical_pairs="include"``,
    then ``max_pairs`` of them drawn (seeded); both counts of the dataset config are recorded."""
    identical = sum(_identical(pair) for pair in pairs)
    counts["pairs_in_dataset"] = len(pairs)
    counts["pairs_identical_in_dataset"] = identical
    counts["pairs_differing_in_dataset"] = len(pairs) - identical
    if settings.identical_pairs == "exclude":
        pairs = [pair for pair in pairs if not _identical(pair)]
        if identical and not pairs:
            raise UserError(
                f"--config {settings.config}: all {identical} pairs are identical (no gender word), "
                "so there is no attention to gender words or perplexity gap to study; "
                "--identical-pairs include studies them anyway"
            )
    if settings.max_pairs is not None and settings.max_pairs < len(pairs):
        rng = np.random.default_rng(settings.seed)
        chosen = np.sort(rng.choice(len(pairs), settings.max_pairs, replace=False))
        pairs = [pairs[i] for i in chosen]
    counts["pairs_used"] = len(pairs)
    counts["pairs_identical_used"] = sum(_identical(pair) for pair in pairs)
    if not pairs:
        raise ValueError("no sentence pairs to study")
    return pairs


def left_out_at_build(folder: Path, config: str) -> dict[str, int]:
    """The contexts the build of ``config`` left out, by reason, as its card records them
    (``bias_hub_provenance.left_out``; ``mixed_gender``: words of both genders); {} when the card
    records none."""
    from bias_hub.builders.shared.card import read_card_yaml

    recorded = (read_card_yaml(folder).get("bias_hub_provenance") or {}).get("left_out") or {}
    counts = recorded.get(config) if isinstance(recorded, dict) else None
    return {str(k): int(v) for k, v in counts.items()} if isinstance(counts, dict) else {}


def _perplexities(
    kept_pairs: list[dict], lm, lm_tokenizer, settings: Settings, counts: Counter
) -> tuple:
    sentences = [p[f"{form}_sentence"] for form in ("male", "female") for p in kept_pairs]
    with stage(f"perplexity ({len(sentences)} sentences)", log):
        perplexity = sentence_perplexities(
            lm, lm_tokenizer, sentences, batch_size=settings.batch_size, progress=settings.progress
        )
    male_ppl, female_ppl = perplexity[: len(kept_pairs)], perplexity[len(kept_pairs) :]
    finite = np.isfinite(male_ppl) & np.isfinite(female_ppl)
    counts["pairs_without_perplexity"] = int((~finite).sum())
    scored = np.flatnonzero(finite)
    if scored.size == 0:
        raise UserError(
            "--lm: no pair got a perplexity in both forms (every sentence too short to score?)"
        )
    return male_ppl, female_ppl, scored


def measure(
    pairs: list[dict],
    encoder,
    encoder_tokenizer,
    lm,
    lm_tokenizer,
    out: RunFolder,
    settings: Settings,
    left_out: dict[str, int] | None = None,
) -> dict:
    """The measurements on loaded models; writes results.json, words.jsonl and top_words.jsonl
    into ``out``. ``left_out``: the contexts the dataset's build left out, by reason."""
    counts: Counter = Counter()
    pairs = _sample(pairs, settings, counts)
    with stage(f"attention ({len(pairs)} pairs)", log):
        gaps = attention_gaps(pairs, encoder, encoder_tokenizer, settings, counts)
    kept, pair_words = gaps["kept"], gaps["pair_words"]
    word_gap = dict(zip(gaps["words"], gaps["attention_gap"], strict=True))
    kept_pairs = [pairs[i] for i in kept]
    male_ppl, female_ppl, scored = _perplexities(kept_pairs, lm, lm_tokenizer, settings, counts)
    assignment = {"pair_assignment": settings.pair_assignment}
    if settings.pair_assignment == "first":
        assignment["word_order"] = taking_order(gaps, settings.order)
    with stage("perplexity gaps and intervals", log):
        ppl = metric_scores("perplexity_gap", settings.metrics_root).compute(
            male_perplexities=male_ppl[scored].tolist(),
            female_perplexities=female_ppl[scored].tolist(),
            pair_words=[pair_words[i] for i in scored],
            word_scores=word_gap,
            **assignment,
            frequency_gaps=[_zipf_gap(kept_pairs[i]["gender_words"]) for i in scored],
            frequency_tolerance=settings.frequency_tolerance,
            **settings.interval_options(),
        )
    words = word_table(gaps, ppl, kept_pairs, scored, male_ppl, female_ppl)
    ppl_intervals = ppl.get("confidence_intervals", {})
    matched = ppl["frequency_matched"]
    results = {
        "part": PART,
        "step": STEP,
        "settings": {
            key: value
            for key, value in asdict(settings).items()
            if key not in {"token", "departures", *INTERVAL_FIELDS}
        },
        "preset": preset_record(settings, out.inputs),
        "intervals": settings.interval_record(),
        # The dataset config and both of its counts: pairs that differ and identical pairs, and
        # whether the identical ones were studied; the contexts its build left out, by reason.
        "dataset": {
            "config": settings.config,
            "name_list": _name_list(pairs),
            "pairs": counts["pairs_in_dataset"],
            "differing_pairs": counts["pairs_differing_in_dataset"],
            "identical_pairs": counts["pairs_identical_in_dataset"],
            "identical_pairs_studied": settings.identical_pairs == "include",
            "left_out_at_build": left_out or {},
        },
        "counts": dict(counts),
        "attention": {
            "n_words": len(gaps["words"]),
            "mean_gap": gaps["mean_gap"],
            "mean_gap_interval": gaps.get("confidence_intervals", {}).get("mean_gap"),
            **{k: gaps[k] for k in ("words", "attention_gap", "male_count", "female_count")},
        },
        "perplexity": {
            "n_pairs": len(scored),
            "pairs_used_by_a_word": len({p for w in ppl["word_pairs"] for p in w}),
            "words_with_pairs": len(ppl["words"]),
            "taking_order": settings.order,
            **{
                k: ppl[k] for k in ("mean_gap", "median_gap", "male_higher_rate", "wilcoxon_pvalue")
            },
            "intervals": {
                key: ppl_intervals.get(key)
                for key in ("mean_gap", "median_gap", "male_higher_rate")
            },
            "pair_ids": [kept_pairs[i]["id"] for i in scored],
            "male_perplexity": male_ppl[scored].tolist(),
            "female_perplexity": female_ppl[scored].tolist(),
        },
        "correlation": _correlations(ppl["correlation"], ppl_intervals),
        "frequency_matched": matched | {"correlation": _correlations(matched["correlation"], {})},
    }
    out.write_jsonl(
        "words.jsonl", [{k: v for k, v in row.items() if k != "pairs"} for row in words]
    )
    top_rows = [
        row
        for row in words
        if row["rank"] <= settings.top_k or row["rank"] > len(words) - settings.top_k
    ]
    out.write_jsonl("top_words.jsonl", [row | {"pairs": row["pairs"][:3]} for row in top_rows])
    out.write_json("results.json", results)
    return results
