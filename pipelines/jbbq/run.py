"""``bias-hub jbbq evaluate``: dataset rows x prompts x shot counts -> predictions -> ``bbq_bias``.

``run(model, dataset, out_dir, settings)`` is the part's one entry point (the CLI,
the demo and the tests call it). It opens the questions with ``datasets.load_dataset``
on the dataset folder and the scores with ``evaluate.load`` on the metric module,
exactly as a user would, and writes ``results.json``, ``predictions.jsonl``, the
figure(s) and ``report.md`` into ``out_dir`` through one ``RunFolder``: all or
nothing, created before the model is loaded or the first paid request is sent.

The task settings come from a preset (``presets/<name>.yaml``; ``paper`` by default,
the paper's main setting), and every one given explicitly overrides it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from builders.shared.api_cache_openai import OPENAI_URL
from builders.shared.console import stage
from builders.shared.files import to_jsonable
from pipelines.common import RunFolder, RunSettings, dataset_folder, load_dataset_split, load_metric
from pipelines.jbbq.distributed import is_main_process, process_state, score_sharded
from pipelines.jbbq.presets import TASK_DEFAULTS, load_preset, resolve_task
from pipelines.jbbq.prompting import (
    PROMPT_NAMES,
    PromptSpec,
    load_prompt,
    select_shots,
    template_key,
)
from pipelines.jbbq.scorers import SCORING_MODES, Scorer

__all__ = ["BACKENDS", "RESAMPLE_UNITS", "Settings", "load_questions", "resolve_settings", "run", "score_predictions"]

log = logging.getLogger(__name__)

BACKENDS = ("hf", "openai")
RESAMPLE_UNITS = ("templates", "items")
DATASET = "jbbq"
# The columns every prediction row carries over from its question.
_KEPT = (
    "example_id",
    "category",
    "question_index",
    "question_polarity",
    "context_condition",
    "label",
    "unknown_label",
    "stereotyped_label",
)
# Settings that never go into results.json (a secret; console only).
_NOT_RECORDED = ("token", "progress")


@dataclass(kw_only=True)
class Settings(RunSettings):
    """What to evaluate and how.

    The task fields left at ``None`` (prompts, shots, scoring, chat, max_new_tokens, split)
    take the preset's value (default preset ``paper``: the paper's Figure 1 setting), or
    ``presets.TASK_DEFAULTS`` with ``preset=None``.
    """

    backend: str = "hf"
    preset: str | None = "paper"
    # the task (None: from the preset)
    prompts: list[str] | None = None
    shots: list[int] | None = None
    scoring: str | None = None
    chat: str | None = None
    max_new_tokens: int | None = None
    split: str | None = None
    config: str = "all"
    categories: list[str] | None = None
    limit: int | None = None
    # uncertainty: None or 0 turns intervals and paired comparisons off
    confidence_level: float | None = 0.95
    n_resamples: int = 2000
    resample: str = "templates"
    # a local model (--backend hf)
    batch_size: int = 16
    prefix_cache: bool = True
    # an OpenAI-compatible API (--backend openai)
    base_url: str = OPENAI_URL
    api_key_env: str = "OPENAI_API_KEY"
    concurrency: int = 4
    max_retries: int = 6
    backoff: float = 1.0
    timeout: float = 60.0
    max_tokens_field: str = "max_tokens"
    cache_dir: Path | None = None
    # The model's name in the report (default: --model).
    model_label: str | None = None


def resolve_settings(settings: Settings) -> tuple[Settings, dict | None]:
    """The settings with every task field filled in, and the record of the preset used."""
    preset = None if settings.preset in (None, "", "none") else load_preset(settings.preset)
    explicit = {key: getattr(settings, key) for key in TASK_DEFAULTS}
    values, overridden = resolve_task(preset, explicit)
    if settings.backend == "openai" and explicit["chat"] is None:
        values["chat"] = "auto"  # a chat-completions API takes chat messages whatever the preset says
    if values["prompts"] == "all" or values["prompts"] == ["all"]:
        values["prompts"] = list(PROMPT_NAMES)
    record = None
    if preset is not None:
        record = {"name": preset.name, "version": preset.version, "description": preset.description,
                  "source": preset.source, "file": preset.path, "settings": preset.settings,
                  "overridden": overridden}  # fmt: skip
    level = settings.confidence_level
    return dataclasses.replace(settings, **values, confidence_level=level or None), record


def _check(settings: Settings) -> None:
    """Every setting a user can get wrong, before anything is loaded or sent."""
    choices = {"backend": BACKENDS, "scoring": SCORING_MODES, "chat": ("auto", "yes", "no"),
               "max_tokens_field": ("max_tokens", "max_completion_tokens"), "resample": RESAMPLE_UNITS}  # fmt: skip
    for name, allowed in choices.items():
        if getattr(settings, name) not in allowed:
            raise ValueError(f"--{name.replace('_', '-')}: expected one of {', '.join(allowed)}, got {getattr(settings, name)!r}")
    minimum = {"batch_size": 1, "max_new_tokens": 1, "concurrency": 1, "max_retries": 0, "n_resamples": 100}
    for name, low in minimum.items():
        if getattr(settings, name) < low:
            raise ValueError(f"--{name.replace('_', '-')} must be >= {low}, got {getattr(settings, name)}")
    level = settings.confidence_level
    if level is not None and not 0 < level < 1:
        raise ValueError(f"--confidence-level must be between 0 and 1 (e.g. 0.95), or 0 for none; got {level}")
    if settings.timeout <= 0:
        raise ValueError(f"--timeout must be > 0 seconds, got {settings.timeout}")
    if not settings.prompts:
        raise ValueError("--prompt: no prompt to evaluate")
    if not settings.shots or any(k < 0 for k in settings.shots):
        raise ValueError(f"--shots: expected one or more counts >= 0, got {settings.shots}")
    if len(set(settings.shots)) != len(settings.shots):
        raise ValueError(f"--shots: a count appears twice in {settings.shots}")
    if settings.limit is not None and settings.limit < 1:
        raise ValueError(f"--limit must be >= 1, got {settings.limit}")
    if settings.backend == "openai" and settings.chat == "no":
        raise ValueError("--chat no: the chat-completions API always takes chat messages; pass --chat auto")
    if settings.backend != "hf" and process_state() is not None:
        raise ValueError("accelerate launch: only --backend hf runs data-parallel")


def _rows(folder: Path, settings: Settings, split: str) -> list[dict]:
    return [dict(row) for row in load_dataset_split(folder, settings.config, split)]


def load_questions(folder: Path, settings: Settings) -> tuple[list[dict], list[dict], dict]:
    """The evaluated questions, the few-shot examples, and how they were chosen.

    Returns ``(rows, shots, few_shot)``: ``rows`` are the split's questions of the wanted
    categories, ``shots`` ``max(settings.shots)`` training questions (a run with k shots
    uses the first k, so every run answers the same questions), and ``few_shot`` the record.

    Few-shot examples come from the train split only, one per template, and never share a
    template with an evaluated question. When the evaluated split itself holds the training
    templates (``all``, ``train``), the shots are drawn from those templates and every
    question of a shot template is held out of the evaluation. With ``limit``, at most that
    many questions per category are kept, a seeded sample in dataset order.
    """
    rows = _rows(folder, settings, settings.split)
    present = sorted({row["category"] for row in rows})
    wanted = settings.categories or present
    missing = [c for c in wanted if c not in present]
    if missing:
        raise ValueError(
            f"--categories: no {settings.split!r} questions for {missing} in {folder} "
            f"(config {settings.config!r}); categories with questions: {present}"
        )
    rows = [row for row in rows if row["category"] in wanted]
    k = max(settings.shots)
    shots: list[dict] = []
    held_out: set[tuple[str, str]] = set()
    if k:
        train = _rows(folder, settings, "train")
        evaluated = {template_key(row) for row in rows}
        free = {template_key(row) for row in train} - evaluated
        if len(free) >= k:
            shots = select_shots(train, k, settings.seed, evaluated)
        else:
            shots = select_shots(train, k, settings.seed, set())
            held_out = {template_key(shot) for shot in shots}
    before = len(rows)
    rows = [row for row in rows if template_key(row) not in held_out]
    if not rows:
        raise ValueError(f"--shots {k}: holding the shot templates out leaves no question to evaluate")
    rng = random.Random(settings.seed)
    chosen: list[dict] = []
    for category in wanted:
        in_category = [row for row in rows if row["category"] == category]
        if settings.limit and settings.limit < len(in_category):
            keep = sorted(rng.sample(range(len(in_category)), settings.limit))
            in_category = [in_category[i] for i in keep]
        chosen.extend(in_category)
    few_shot = {
        "source_split": "train",
        "examples": [{"category": s["category"], "question_index": s["question_index"],
                      "example_id": s["example_id"]} for s in shots],  # fmt: skip
        "held_out_templates": [list(t) for t in sorted(held_out)],
        "held_out_questions": before - len(rows),
    }
    return chosen, shots, few_shot


def _columns(rows: Sequence[dict], settings: Settings) -> dict:
    """The metric's inputs other than the predictions."""
    columns = {
        "references": [row["label"] for row in rows],
        "unknown_labels": [row["unknown_label"] for row in rows],
        "stereotyped_labels": [row["stereotyped_label"] for row in rows],
        "context_conditions": [row["context_condition"] for row in rows],
        "categories": [row["category"] for row in rows],
    }
    if settings.resample == "templates":
        columns["templates"] = [row["question_index"] for row in rows]
    return columns


def score_predictions(metric, rows: Sequence[dict], predictions: Sequence[int], settings: Settings) -> dict:
    """``bbq_bias`` on the predictions, with intervals at ``settings.confidence_level``."""
    uncertainty = {}
    if settings.confidence_level:
        uncertainty = {"confidence_level": settings.confidence_level, "n_resamples": settings.n_resamples,
                       "seed": settings.seed}  # fmt: skip
    return metric.compute(predictions=list(predictions), **_columns(rows, settings), **uncertainty)


def error_rates(rows: Sequence[dict], predictions: Sequence[int]) -> dict:
    """Share of unparsable answers (-1) per category and context condition (the paper's
    Table 4 error rate), plus ``overall``."""
    counts: dict[tuple[str, str], list[int]] = {}
    for row, prediction in zip(rows, predictions, strict=True):
        for key in ((row["category"], row["context_condition"]), ("overall", row["context_condition"])):
            tally = counts.setdefault(key, [0, 0])
            tally[0] += prediction == -1
            tally[1] += 1
    out: dict[str, dict[str, float]] = {}
    for (category, condition), (errors, total) in sorted(counts.items()):
        out.setdefault(category, {})[condition] = errors / total
    return out


def _scorer(model: str, settings: Settings) -> Scorer:
    """The backend: a local model loaded as a causal LM, or the API client (key and cache checked)."""
    from pipelines.jbbq.scorers import APIScorer, HFScorer

    if settings.backend == "openai":
        from builders.shared.api_cache_openai import ChatCompletions

        client = ChatCompletions(
            model, base_url=settings.base_url, api_key_env=settings.api_key_env, cache_dir=settings.cache_dir,
            service="jbbq_openai", timeout=settings.timeout, max_retries=settings.max_retries,
            backoff=settings.backoff, concurrency=settings.concurrency,
        )  # fmt: skip
        return APIScorer(client, max_new_tokens=settings.max_new_tokens, progress=settings.progress,
                         max_tokens_field=settings.max_tokens_field)  # fmt: skip
    from pipelines.jbbq.hf_backend import HFModel

    options = settings.model_options()
    state = process_state()
    if state is not None and settings.device is None and settings.device_map is None:
        options = dataclasses.replace(options, device=str(state.device))  # one device per process
    hf = HFModel.load(model, options, batch_size=settings.batch_size, prefix_cache=settings.prefix_cache)
    return HFScorer(hf, chat=settings.chat, max_new_tokens=settings.max_new_tokens, progress=settings.progress)


def run(model: str, dataset: str | Path | None, out_dir: Path, settings: Settings) -> dict:
    """Evaluate ``model`` on every prompt x shot count; write the run folder; return results.json.

    ``model``: a Hub id or local folder of a causal LM (``--backend hf``), or the API's
    model name (``--backend openai``). ``dataset``: a JBBQ-format dataset folder or a
    name under ``settings.datasets_root`` (default ``jbbq``). Under ``accelerate launch``
    the questions are split across the processes and only the main process writes.
    """
    settings, preset = resolve_settings(settings)
    _check(settings)
    prompts = [load_prompt(name) for name in settings.prompts]
    main = is_main_process()
    # Before any model is loaded or request paid for: an unwritable --out fails here.
    folder = RunFolder(out_dir) if main else None
    names: list[str] = []
    with folder or contextlib.nullcontext():
        folder_path = dataset_folder(dataset or DATASET, settings.datasets_root)
        rows, shots, few_shot = load_questions(folder_path, settings)
        metric = load_metric("bbq_bias", settings.metrics_root)
        with stage("loading the model" if settings.backend == "hf" else "checking the API key and cache", log):
            scorer = _scorer(model, settings)
        results, predictions = _evaluate(scorer, prompts, rows, shots, metric, settings, main)
        results = to_jsonable({"model": settings.model_label or model, "backend": settings.backend,
                               "scorer": scorer.description, "scoring": settings.scoring,
                               "dataset": str(folder_path), "preset": preset, "settings": _recorded(settings),
                               "few_shot": few_shot, **results})  # fmt: skip
        if folder is not None:
            from pipelines.jbbq.report import figures, report

            folder.write_jsonl("predictions.jsonl", predictions)
            folder.write_json("results.json", results)
            names = [folder.write_figure(name, figure).name for name, figure in figures(results)]
            folder.write_text("report.md", report(results, names))
    if main:
        log.info("wrote %s: results.json, predictions.jsonl, report.md, %d figure(s)", out_dir, len(names))
    return results


def _recorded(settings: Settings) -> dict:
    return {key: value for key, value in dataclasses.asdict(settings).items() if key not in _NOT_RECORDED}


def _evaluate(scorer: Scorer, prompts: Sequence[PromptSpec], rows: list[dict], shots: list[dict], metric,
              settings: Settings, main: bool) -> tuple[dict, list[dict]]:  # fmt: skip
    """Every prompt x shot count scored: ``({"prompts", "runs", "comparisons", "seconds"}, prediction rows)``."""
    started = time.perf_counter()
    runs: list[dict] = []
    answers: list[list[int]] = []
    prediction_rows: list[dict] = []
    for prompt in prompts:
        for k in settings.shots:
            run_started = time.perf_counter()
            scored = score_sharded(
                lambda part, prompt=prompt, shown=shots[:k]: scorer.score(prompt, part, shown, settings.scoring), rows
            )
            seconds = time.perf_counter() - run_started
            predicted = [item["prediction"] for item in scored]
            metrics = score_predictions(metric, rows, predicted, settings)
            if main:
                log.info("prompt %s, %d-shot: %d questions in %.1f s (%s)", prompt.label, k, len(rows), seconds,
                         _summary(metrics))  # fmt: skip
            runs.append({
                "prompt": prompt.name,
                "prompt_version": prompt.version,
                "shots": k,
                # example_id is unique only within a category
                "shot_examples": [{"category": s["category"], "example_id": s["example_id"]} for s in shots[:k]],
                "n_questions": len(rows),
                "example_prompt": scorer.render_example(prompt, rows[0], shots[:k]),
                "seconds": round(seconds, 3),
                "questions_per_second": round(len(rows) / seconds, 3) if seconds > 0 else None,
                "metrics": metrics,
                "error_rates": error_rates(rows, predicted),
            })  # fmt: skip
            answers.append(predicted)
            for row, item in zip(rows, scored, strict=True):
                prediction_rows.append({"prompt": prompt.name, "shots": k, **{key: row[key] for key in _KEPT}, **item})
    comparisons = None
    if settings.confidence_level and len(runs) > 1 and main:
        from pipelines.jbbq.comparisons import compare_runs

        with stage(f"paired comparisons of {len(runs)} runs", log):
            paired = load_metric("bbq_bias", settings.metrics_root, config_name="paired")
            comparisons = compare_runs(paired, _columns(rows, settings), runs, answers,
                                       confidence_level=settings.confidence_level,
                                       n_resamples=settings.n_resamples, seed=settings.seed)  # fmt: skip
    summary = {
        "prompts": {p.name: {"version": p.version, "description": p.description, "file": p.path} for p in prompts},
        "uncertainty": {"confidence_level": settings.confidence_level, "n_resamples": settings.n_resamples,
                        "unit": settings.resample, "seed": settings.seed},  # fmt: skip
        "runs": runs,
        "comparisons": comparisons,
        "seconds": round(time.perf_counter() - started, 3),
    }
    return summary, prediction_rows


def _summary(metrics: dict) -> str:
    from pipelines.jbbq.report import format_cell

    keys = (("accuracy_ambiguous", "acc amb"), ("accuracy_disambiguated", "acc dis"),
            ("bias_score_disambiguated", "s_DIS"), ("bias_score_ambiguous", "s_AMB"))  # fmt: skip
    return ", ".join(f"{title} {format_cell(metrics.get(key))}" for key, title in keys)
