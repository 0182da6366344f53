"""``run(model, dataset, out_dir, settings)``: attention gaps, perplexity gaps and their correlation.

``model`` is the encoder whose attentions are read (any BERT-like checkpoint) and
``settings.lm`` the causal LM whose perplexities are compared. The defaults follow the
study (Ueno, §4.2): the last layer's attention, heads averaged, from each of BERT's
tokens to the gender words, averaged per token over its occurrences (``--min-count 1``);
periods left out; then, in attention-gap order, each word takes the pairs that hold it
and that no earlier word took, and its perplexity gap is the mean over those pairs.
``--preset paper`` adds the study's models (bert-base-uncased, gpt2). The run folder gets
``results.json``, ``words.jsonl``, ``top_words.jsonl``, ``figure2.png``, ``plot.png`` and
``report.md``.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np

from builders.shared.console import stage
from builders.shared.errors import UserError
from pipelines.common import (
    RunFolder,
    RunSettings,
    dataset_folder,
    load_dataset_split,
    load_metric,
    load_model,
)

__all__ = ["DATASET", "PRESETS", "Settings", "apply_preset", "load_models", "load_pairs", "measure", "run"]

log = logging.getLogger(__name__)
DATASET = "stereoset_gender_swap"
LEVELS = ("token", "word")
EXCLUDES = ("period", "punctuation")
ASSIGNMENTS = ("first", "all")
ORDERS = ("signed", "absolute")

# The study's settings (§4.2): bert-base-uncased's last layer, heads averaged, BERT's tokens,
# every token kept (min count 1), periods excluded, pairs taken without duplication.
PRESETS = {
    "paper": {
        "model": "bert-base-uncased",
        "lm": "gpt2",
        "config": "contexts",
        "layer": -1,
        "heads": None,
        "level": "token",
        "min_count": 1,
        "exclude": "period",
        "pair_assignment": "first",
    }
}


@dataclass(kw_only=True)
class Settings(RunSettings):
    """``bias-hub stereoset attention``'s own settings (the shared ones come from ``RunSettings``)."""

    lm: str | None = None
    preset: str | None = None
    config: str = "contexts"
    layer: int = -1
    heads: list[int] | None = None
    level: str = "token"
    exclude: str = "period"
    pair_assignment: str = "first"
    order: str = "signed"
    min_count: int = 1
    batch_size: int = 32
    top_k: int = 15
    frequency_tolerance: float = 0.25
    max_pairs: int | None = None
    confidence_level: float | None = 0.95
    n_resamples: int = 2000
    # How the report names the models (default: as given) and what it says about the LM.
    encoder_label: str | None = None
    lm_label: str | None = None
    lm_note: str = ""
    notes: list[str] = field(default_factory=list)


def apply_preset(model: str | None, settings: Settings) -> tuple[str, Settings]:
    """The model and settings a preset asks for.

    The preset's models are defaults (``--model`` / ``--lm`` may name others: the study's
    method on another model); any other setting given otherwise is an error.
    """
    if settings.preset is None:
        if not model:
            raise ValueError("--model: give the encoder (Hub id or local folder), or --preset paper")
        return model, settings
    if settings.preset not in PRESETS:
        raise ValueError(f"--preset must be one of {', '.join(PRESETS)}, got {settings.preset!r}")
    values = PRESETS[settings.preset]
    model = model or values["model"]
    settings = replace(settings, lm=settings.lm or values["lm"])
    for name, wanted in values.items():
        if name in ("model", "lm"):
            continue
        given = getattr(settings, name)
        if given != wanted:
            flag = "--" + name.replace("_", "-")
            raise ValueError(f"--preset {settings.preset} uses {flag} {wanted}, got {given}: drop {flag} or the preset")
    return model, settings


def _check(settings: Settings) -> None:
    if not settings.lm:
        raise ValueError("--lm: give the causal LM whose perplexities are compared (Hub id or local path)")
    for name, allowed in (("level", LEVELS), ("exclude", EXCLUDES), ("pair_assignment", ASSIGNMENTS), ("order", ORDERS)):
        if getattr(settings, name) not in allowed:
            raise ValueError(f"--{name.replace('_', '-')} must be one of {', '.join(allowed)}, got {getattr(settings, name)!r}")
    for name in ("batch_size", "min_count", "top_k"):
        if getattr(settings, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1, got {getattr(settings, name)}")
    if settings.max_pairs is not None and settings.max_pairs < 1:
        raise ValueError(f"--max-pairs must be at least 1, got {settings.max_pairs}")
    level = settings.confidence_level
    if level is not None and not 0 < level < 1:
        raise ValueError(f"--confidence-level must be between 0 and 1 (or 0 / none for no intervals), got {level}")
    if settings.n_resamples < 100:
        raise ValueError(f"--n-resamples must be at least 100, got {settings.n_resamples}")


def load_pairs(folder: Path, config: str) -> list[dict]:
    try:
        return load_dataset_split(folder, config, "test").to_list()
    except ValueError as err:
        raise ValueError(f"--config: {err}") from None


def load_models(model: str, settings: Settings):
    """The encoder (eager attention) and the causal LM, each with its tokenizer, checked for their kind."""
    encoder, encoder_tokenizer = load_model(model, "encoder", settings.model_options(attentions=True))
    lm, lm_tokenizer = load_model(settings.lm, "causal-lm", settings.model_options(), flag="--lm")
    return encoder, encoder_tokenizer, lm, lm_tokenizer


def run(model: str | None, dataset: str | Path | None, out_dir: Path, settings: Settings) -> dict:
    """Load the pairs and both models, measure, and write the run folder."""
    model, settings = apply_preset(model, settings)
    _check(settings)
    pairs = load_pairs(dataset_folder(dataset or DATASET, settings.datasets_root), settings.config)
    with RunFolder(out_dir) as out:
        with stage("load models", log):
            encoder, encoder_tokenizer, lm, lm_tokenizer = load_models(model, settings)
        labels = {"encoder_label": settings.encoder_label or model, "lm_label": settings.lm_label or settings.lm}
        result = measure(pairs, encoder, encoder_tokenizer, lm, lm_tokenizer, out, replace(settings, **labels))
    log.info("%s", result["summary"])
    log.info("wrote %s", Path(out_dir) / "report.md")
    return result["results"]


def _kept(word: str, exclude: str) -> bool:
    """Whether a token or word counts: the study leaves out periods; "punctuation" every mark."""
    if exclude == "period":
        return word != "."
    return any(ch.isalnum() for ch in word)


def _uncertainty(settings: Settings) -> dict:
    if settings.confidence_level is None:
        return {}
    return {"confidence_level": settings.confidence_level, "n_resamples": settings.n_resamples, "seed": settings.seed}


def _zipf_gap(gender_words: list[dict]) -> float:
    """Mean Zipf frequency of the male gender words minus that of the female ones."""
    from wordfreq import zipf_frequency

    male = [zipf_frequency(w["male_word"].lower(), "en") for w in gender_words]
    female = [zipf_frequency(w["female_word"].lower(), "en") for w in gender_words]
    return float(np.mean(male) - np.mean(female))


def attention_gaps(pairs: list[dict], encoder, tokenizer, settings: Settings, counts: Counter) -> dict:
    """Attention mass to the gender words per token (or word) and form, folded into per-word gaps.

    Returns the metric's result plus ``kept`` (indices of aligned pairs) and ``pair_words``
    (the counted tokens or words of each kept pair's male form).
    """
    from pipelines.stereoset.attention import gender_attention

    male_spans = [[(w["male_start"], w["male_end"]) for w in p["gender_words"]] for p in pairs]
    female_spans = [[(w["female_start"], w["female_end"]) for w in p["gender_words"]] for p in pairs]
    skipped: Counter = Counter()
    attention = gender_attention(
        encoder, tokenizer,
        [p["male_sentence"] for p in pairs] + [p["female_sentence"] for p in pairs],
        male_spans + female_spans,
        layer=settings.layer, heads=settings.heads, batch_size=settings.batch_size,
        progress=settings.progress, skipped=skipped, level=settings.level,
    )  # fmt: skip
    male_attention, female_attention = attention[: len(pairs)], attention[len(pairs) :]
    words, masses, forms = [], [], []
    pair_words: list[list[str]] = []
    kept = []
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
    counts["pairs_aligned"] = len(kept)
    counts.update({f"skipped_{k}": v for k, v in skipped.items()})
    if not kept:
        raise UserError(f"no pair could be aligned to the encoder's pieces ({dict(skipped)})")
    metric = load_metric("gender_attention_gap", settings.metrics_root)
    gaps = metric.compute(words=words, attention_to_gender=masses, forms=forms, min_count=settings.min_count,
                          **_uncertainty(settings))  # fmt: skip
    return {**gaps, "kept": kept, "pair_words": pair_words}


def taking_order(gaps: dict, order: str) -> list[str]:
    """The order words take pairs in: the attention-gap order (largest first), or by |gap|."""
    words = gaps["words"]
    if order == "signed":
        return list(words)
    magnitude = np.abs(np.asarray(gaps["attention_gap"], dtype=float))
    return [words[i] for i in np.argsort(-magnitude, kind="stable")]


def frequency_view(kept_pairs: list[dict], scored: np.ndarray, male_ppl: np.ndarray, female_ppl: np.ndarray,
                   pair_words: list[list[str]], word_gap: dict, order: list[str], metric, settings: Settings) -> dict:  # fmt: skip
    """The perplexity gap on pairs whose gender words have matched frequencies.

    Gender words differ in frequency (he 6.69 vs she 6.26 on the Zipf scale), and a rarer
    word makes a sentence less likely whatever its gender.
    """
    from scipy import stats

    zipf_gap = np.array([_zipf_gap(kept_pairs[i]["gender_words"]) for i in scored])
    log_ratio = np.log(male_ppl[scored]) - np.log(female_ppl[scored])
    confound = {"n_pairs": int(len(scored))}
    if len(scored) >= 3 and np.ptp(zipf_gap) > 0:
        rho = stats.spearmanr(zipf_gap, log_ratio)
        fit = stats.linregress(zipf_gap, log_ratio)
        confound |= {
            "spearman_log_ppl_ratio_vs_zipf_gap": float(rho.statistic),
            "spearman_pvalue": float(rho.pvalue),
            "slope_log_ppl_ratio_per_zipf": float(fit.slope),
        }
    matched = np.abs(zipf_gap) <= settings.frequency_tolerance
    matched_result = None
    if matched.sum() >= 1:
        assignment = {"pair_assignment": settings.pair_assignment}
        if settings.pair_assignment == "first":
            assignment["word_order"] = order
        matched_result = metric.compute(
            male_perplexities=male_ppl[scored][matched].tolist(),
            female_perplexities=female_ppl[scored][matched].tolist(),
            pair_words=[pair_words[i] for i in scored[matched]],
            word_scores=word_gap,
            **assignment,
        )
    return {
        "tolerance_zipf": settings.frequency_tolerance,
        "pairs_matched": int(matched.sum()),
        "confound": confound,
        "mean_gap": matched_result["mean_gap"] if matched_result else None,
        "male_higher_rate": matched_result["male_higher_rate"] if matched_result else None,
        "correlation": matched_result["correlation"] if matched_result else None,
    }


def word_table(gaps: dict, ppl: dict, kept_pairs: list[dict], scored: np.ndarray, male_ppl: np.ndarray,
               female_ppl: np.ndarray) -> list[dict]:  # fmt: skip
    """One row per word in attention-gap order: its gaps with their intervals and its pairs."""
    intervals = gaps.get("confidence_intervals", {})
    ppl_intervals = ppl.get("confidence_intervals", {})
    by_word = {word: i for i, word in enumerate(ppl["words"])}
    rows = []
    for i, word in enumerate(gaps["words"]):
        j = by_word.get(word)
        pairs = [int(scored[p]) for p in ppl["word_pairs"][j]] if j is not None else []
        rows.append({
            "rank": i + 1,
            "word": word,
            "attention_gap": gaps["attention_gap"][i],
            "attention_gap_interval": intervals.get(f"attention_gap[{i}]"),
            "male_mean": gaps["male_mean"][i],
            "female_mean": gaps["female_mean"][i],
            "male_count": gaps["male_count"][i],
            "female_count": gaps["female_count"][i],
            "perplexity_gap": ppl["word_perplexity_gap"][j] if j is not None else None,
            "perplexity_gap_interval": ppl_intervals.get(f"word_perplexity_gap[{j}]") if j is not None else None,
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
        })  # fmt: skip
    return rows


def measure(pairs: list[dict], encoder, encoder_tokenizer, lm, lm_tokenizer, out: RunFolder, settings: Settings) -> dict:
    """The measurements on loaded models; writes the run's files into ``out``."""
    from pipelines.stereoset.perplexity import sentence_perplexities
    from pipelines.stereoset.report import figure2, report_markdown, summary_table, top_figure

    counts: Counter = Counter(pairs_in_dataset=len(pairs))
    if settings.max_pairs is not None and settings.max_pairs < len(pairs):
        chosen = np.sort(np.random.default_rng(settings.seed).choice(len(pairs), settings.max_pairs, replace=False))
        pairs = [pairs[i] for i in chosen]
    counts["pairs_used"] = len(pairs)
    if not pairs:
        raise ValueError("no sentence pairs to study")

    with stage(f"attention ({len(pairs)} pairs)", log):
        gaps = attention_gaps(pairs, encoder, encoder_tokenizer, settings, counts)
    kept, pair_words = gaps["kept"], gaps["pair_words"]
    word_gap = dict(zip(gaps["words"], gaps["attention_gap"], strict=True))
    order = taking_order(gaps, settings.order)

    kept_pairs = [pairs[i] for i in kept]
    sentences = [p["male_sentence"] for p in kept_pairs] + [p["female_sentence"] for p in kept_pairs]
    with stage(f"perplexity ({len(sentences)} sentences)", log):
        perplexity = sentence_perplexities(lm, lm_tokenizer, sentences, batch_size=settings.batch_size,
                                           progress=settings.progress)  # fmt: skip
    male_ppl, female_ppl = perplexity[: len(kept)], perplexity[len(kept) :]
    finite = np.isfinite(male_ppl) & np.isfinite(female_ppl)
    counts["pairs_without_perplexity"] = int((~finite).sum())
    scored = np.flatnonzero(finite)
    if scored.size == 0:
        raise UserError("--lm: no pair got a perplexity in both forms (every sentence too short to score?)")
    perplexity_metric = load_metric("perplexity_gap", settings.metrics_root)
    assignment = {"pair_assignment": settings.pair_assignment}
    if settings.pair_assignment == "first":
        assignment["word_order"] = order
    with stage("perplexity gaps and intervals", log):
        ppl = perplexity_metric.compute(
            male_perplexities=male_ppl[scored].tolist(),
            female_perplexities=female_ppl[scored].tolist(),
            pair_words=[pair_words[i] for i in scored],
            word_scores=word_gap,
            **assignment,
            **_uncertainty(settings),
        )
    matched = frequency_view(kept_pairs, scored, male_ppl, female_ppl, pair_words, word_gap, order, perplexity_metric,
                             settings)  # fmt: skip
    words = word_table(gaps, ppl, kept_pairs, scored, male_ppl, female_ppl)
    ppl_intervals = ppl.get("confidence_intervals", {})
    preset = {"name": settings.preset, "values": PRESETS[settings.preset]} if settings.preset else None
    results = {
        "settings": {key: value for key, value in asdict(settings).items() if key != "token"},
        "preset": preset,
        "counts": dict(counts),
        "attention": {
            "n_words": len(gaps["words"]),
            "mean_gap": gaps["mean_gap"],
            "mean_gap_interval": gaps.get("confidence_intervals", {}).get("mean_gap"),
            "words": gaps["words"],
            "attention_gap": gaps["attention_gap"],
            "male_count": gaps["male_count"],
            "female_count": gaps["female_count"],
        },
        "perplexity": {
            "n_pairs": len(scored),
            "pairs_used_by_a_word": len({p for w in ppl["word_pairs"] for p in w}),
            "words_with_pairs": len(ppl["words"]),
            "taking_order": settings.order,
            "mean_gap": ppl["mean_gap"],
            "median_gap": ppl["median_gap"],
            "male_higher_rate": ppl["male_higher_rate"],
            "wilcoxon_pvalue": ppl["wilcoxon_pvalue"],
            "intervals": {key: ppl_intervals.get(key) for key in ("mean_gap", "median_gap", "male_higher_rate")},
            "pair_ids": [kept_pairs[i]["id"] for i in scored],
            "male_perplexity": male_ppl[scored],
            "female_perplexity": female_ppl[scored],
        },
        "correlation": ppl["correlation"] | {
            "pearson_interval": ppl_intervals.get("correlation_pearson"),
            "spearman_interval": ppl_intervals.get("correlation_spearman"),
        },
        "frequency_matched": matched,
    }
    summary = summary_table(results)
    out.write_jsonl("words.jsonl", [{k: v for k, v in row.items() if k != "pairs"} for row in words])
    top_rows = [row for row in words if row["rank"] <= settings.top_k or row["rank"] > len(words) - settings.top_k]
    out.write_jsonl("top_words.jsonl", [row | {"pairs": row["pairs"][:3]} for row in top_rows])
    out.write_figure("figure2.png", figure2(words, results["correlation"], settings))
    out.write_figure("plot.png", top_figure(words, results["correlation"], settings))
    out.write_json("results.json", results)
    out.write_text("report.md", report_markdown(results, words, summary, settings))
    return {"results": results, "summary": summary, "words": words}

