"""``bias-hub jbbq evaluate``: dataset rows x prompts x shot counts -> predictions -> ``bbq_bias``.

``run_evaluate(model, dataset, out_dir, settings)`` reads the questions as ``load_dataset`` gives
them (``dataset_rows``), scores with the ``bbq_bias`` computation that ``evaluate.load`` of the
metric wraps (``metric_scores``), and writes ``predictions.jsonl`` and
``results.json`` through one ``RunFolder``, created before the model is loaded or the first
paid request is sent. The task settings come from a study preset (``pipelines/studies/jbbq.yaml``);
each one given explicitly overrides it and is recorded as a departure.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import logging
import random
import time
from collections.abc import Sequence
from pathlib import Path

from bias_hub.builders.shared.api_cache import APIFailure
from bias_hub.builders.shared.api_cache_openai import ChatCompletions, TextCompletions
from bias_hub.builders.shared.console import stage
from bias_hub.builders.shared.files import to_jsonable
from bias_hub.builders.shared.secrets import redact
from bias_hub.builders.shared.text import with_interval
from bias_hub.pipelines.common import RunFolder, dataset_folder, metric_scores
from bias_hub.pipelines.common.answer_reading import RULES, UNPARSABLE, UNREAD_RULES
from bias_hub.pipelines.common.locations import dataset_rows
from bias_hub.pipelines.common.presets import (
    departures_from,
    load_preset,
    preset_names,
    preset_record,
)
from bias_hub.pipelines.common.settings import INTERVAL_FIELDS
from bias_hub.pipelines.jbbq.comparisons import compare_runs
from bias_hub.pipelines.jbbq.distributed import is_main_process, process_state, score_sharded
from bias_hub.pipelines.jbbq.openai_backend import API_KINDS
from bias_hub.pipelines.jbbq.prompting import (
    PROMPT_NAMES,
    PromptSpec,
    load_prompt,
    select_shots,
    template_key,
)
from bias_hub.pipelines.jbbq.report import render
from bias_hub.pipelines.jbbq.score_paths import bbq_bias_columns
from bias_hub.pipelines.jbbq.scorers import SCORING_MODES, APIScorer, HFScorer, Scorer
from bias_hub.pipelines.jbbq.settings import BACKENDS, COMMAND, PROMPTS_PER_REQUEST, Settings

__all__ = ["QUESTION_FIELDS", "Settings", "load_questions", "run_evaluate", "score_predictions"]

log = logging.getLogger(__name__)

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
# What a question row must hold: the prompt's fields and the scored columns.
QUESTION_FIELDS = ("context", "question", "ans0", "ans1", "ans2", *_KEPT)
# Settings that never go into results.json (a secret; console only).
_NOT_RECORDED = ("token", "progress")


def _with_preset_record(settings: Settings) -> Settings:
    """The departures from a built-in preset, worked out from the values in force (so a
    ``Settings`` built by hand is recorded as honestly as one from ``--preset``); a chat-completions
    API always takes chat messages, so the preset's plain-text prompt (``chat: no``) turns ``auto``
    there (``--api completions`` sends the plain prompt itself)."""
    if (
        settings.backend == "openai"
        and settings.api == "chat"
        and settings.chat == "no"
        and settings.preset is not None
    ):
        settings = dataclasses.replace(settings, chat="auto")
    if settings.preset is None or settings.preset not in preset_names(COMMAND):
        return settings  # no preset, or a preset file: `--preset` recorded its departures
    departures = departures_from(settings, load_preset(COMMAND, settings.preset))
    return dataclasses.replace(settings, departures=departures)


def _check(settings: Settings) -> None:
    """Every setting a user can get wrong, before anything is loaded or sent."""
    choices = {
        "backend": BACKENDS,
        "scoring": SCORING_MODES,
        "chat": ("auto", "yes", "no"),
        "max_tokens_field": ("max_tokens", "max_completion_tokens"),
        "api": API_KINDS,
    }
    for name, allowed in choices.items():
        if getattr(settings, name) not in allowed:
            raise ValueError(
                f"--{name.replace('_', '-')}: expected one of {', '.join(allowed)}, got {getattr(settings, name)!r}"
            )
    minimum = {
        "batch_size": 1,
        "batch_tokens": 1,
        "concurrency": 1,
        "prompts_per_request": 1,
        "max_retries": 0,
    }
    for name, low in minimum.items():
        if (value := getattr(settings, name)) is not None and value < low:
            raise ValueError(f"--{name.replace('_', '-')} must be >= {low}, got {value}")
    if settings.timeout <= 0:
        raise ValueError(f"--timeout must be > 0 seconds, got {settings.timeout}")
    # (a non-empty list of prompts and of counts >= 0: Settings checks them, _check_task)
    if len(set(settings.shots)) != len(settings.shots):
        raise ValueError(f"--shots: a count appears twice in {settings.shots}")
    if settings.limit is not None and settings.limit < 1:
        raise ValueError(f"--limit must be >= 1, got {settings.limit}")
    if settings.backend == "openai" and settings.api == "chat":
        if settings.chat == "no":
            raise ValueError(
                "--chat no: the chat-completions API always takes chat messages; pass --chat auto, "
                "or --api completions to send the plain prompt"
            )
        if (settings.prompts_per_request or 1) > 1:
            raise ValueError(
                f"--prompts-per-request {settings.prompts_per_request}: the chat-completions "
                "endpoint takes one conversation per request; --api completions takes lists of "
                "prompts"
            )
    if settings.backend == "openai" and settings.api == "completions":
        if settings.chat == "yes":
            raise ValueError(
                "--chat yes: --api completions sends the plain prompt (no chat template); "
                "use --api chat for the server's chat template"
            )
        if settings.max_tokens_field != "max_tokens":
            raise ValueError(
                f"--max-tokens-field {settings.max_tokens_field}: the completions API takes max_tokens"
            )
    if settings.backend != "hf" and process_state() is not None:
        raise ValueError("accelerate launch: only --backend hf runs data-parallel")


def _rows(folder: Path, settings: Settings, split: str) -> list[dict]:
    rows, _ = dataset_rows(folder, settings.config, split)
    missing = [name for name in QUESTION_FIELDS if rows and name not in rows[0]]
    if missing:
        raise ValueError(
            f"--dataset {folder} (config {settings.config!r}, split {split!r}): not a JBBQ-format QA dataset, "
            f"its rows have no field {', '.join(repr(m) for m in missing)}; expected {', '.join(QUESTION_FIELDS)}"
        )
    return rows


def load_questions(folder: Path, settings: Settings) -> tuple[list[dict], list[dict], dict]:
    """The evaluated questions, the few-shot pool, and how they were chosen.

    Returns ``(rows, shots, few_shot)``: ``rows`` are the split's questions of the wanted
    categories, ``shots`` the pool of ``settings.shot_pool`` training questions (a run with k
    shots uses the first k, so every run answers the same questions), and ``few_shot`` the record.

    The pool is drawn once per seed, whatever shot counts are asked for: from the train split,
    one question per template, never sharing a template with an evaluated question. When the
    evaluated split itself holds the training templates (``all``, ``train``), the pool is drawn
    from those templates and every question of a pool template is held out of the evaluation,
    at 0 shots as at 4, so the 0-shot questions of ``--shots 0`` and ``--shots 0,4`` are one
    set. With ``limit``, at most that many questions per category are kept, a seeded sample in
    dataset order.
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
    if k > settings.shot_pool:
        raise ValueError(
            f"--shots {k}: more than the --shot-pool of {settings.shot_pool} templates the few-shot "
            f"examples are drawn from; pass --shot-pool {k} (or more)"
        )
    try:
        train = _rows(folder, settings, "train")
    except ValueError:
        if k:
            raise
        train = []  # a folder without a train split answers 0-shot questions only
    evaluated = {template_key(row) for row in rows}
    templates = {template_key(row) for row in train}
    free = templates - evaluated
    # A pool as large as the train split allows: a count above it fails in select_shots, naming it.
    pool = min(settings.shot_pool, len(templates)) if k <= len(templates) else k
    # Templates enough outside the evaluated ones: drawn from those; else held out of the rows.
    shots = select_shots(train, pool, settings.seed, evaluated if len(free) >= pool else set())
    held_out = set() if len(free) >= pool else {template_key(shot) for shot in shots}
    before = len(rows)
    rows = [row for row in rows if template_key(row) not in held_out]
    if not rows:
        raise ValueError(
            f"--shot-pool {pool}: holding the pool's templates out leaves no question to evaluate"
        )
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
        "pool": len(shots),
        "examples": [
            {key: s[key] for key in ("category", "question_index", "example_id")} for s in shots
        ],
        "held_out_templates": [list(t) for t in sorted(held_out)],
        "held_out_questions": before - len(rows),
    }
    return chosen, shots, few_shot


def _columns(rows: Sequence[dict], settings: Settings) -> dict:
    return bbq_bias_columns(rows, templates=settings.bootstrap_unit == "templates")


def score_predictions(
    metric, rows: Sequence[dict], predictions: Sequence[int], settings: Settings
) -> dict:
    """``bbq_bias`` on the predictions, with intervals at ``settings.confidence_level``."""
    uncertainty = settings.interval_options() if settings.confidence_level else {}
    return metric.compute(predictions=list(predictions), **_columns(rows, settings), **uncertainty)


def _scorer(model: str, settings: Settings) -> Scorer:
    """The backend: a local model loaded as a causal LM, or the API client (key and cache checked)."""
    if settings.backend == "openai":
        endpoint = TextCompletions if settings.api == "completions" else ChatCompletions
        client = endpoint(
            model,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            cache_dir=settings.cache_dir,
            service="jbbq_openai",
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            backoff=settings.backoff,
            concurrency=settings.concurrency,
            **(
                {"prompts_per_request": settings.prompts_per_request or PROMPTS_PER_REQUEST}
                if settings.api == "completions"
                else {}
            ),
        )
        return APIScorer(
            client,
            max_new_tokens=settings.max_new_tokens,
            progress=settings.progress,
            max_tokens_field=settings.max_tokens_field,
            api=settings.api,
            reader=settings.answer_reader,
        )
    options = settings.model_options()
    state = process_state()
    if state is not None and settings.device is None and settings.device_map is None:
        options = dataclasses.replace(options, device=str(state.device))  # one device per process
    from bias_hub.pipelines.jbbq.hf_backend import HFModel  # the 'models' extra: torch

    hf = HFModel.load(
        model,
        options,
        batch_size=settings.batch_size,
        prefix_cache=settings.prefix_cache,
        batch_tokens=settings.batch_tokens,
    )
    return HFScorer(
        hf,
        chat=settings.chat,
        max_new_tokens=settings.max_new_tokens,
        progress=settings.progress,
        reader=settings.answer_reader,
    )


def run_evaluate(model: str, dataset: str | Path | None, out_dir: Path, settings: Settings) -> dict:
    """Evaluate ``model`` on every prompt x shot count; write the run folder; return results.json.

    ``model``: a Hub id or local folder of a causal LM (``--backend hf``), or the API's
    model name (``--backend openai``). ``dataset``: a JBBQ-format dataset folder or a
    name under ``settings.datasets_root`` (default ``jbbq``). Under ``accelerate launch``
    the questions are split across the processes and only the main process writes.
    """
    settings = _with_preset_record(settings)
    if settings.prompts == ["all"]:
        settings = dataclasses.replace(settings, prompts=list(PROMPT_NAMES))
    _check(settings)
    prompts = [load_prompt(name, settings.layout) for name in settings.prompts]
    main = is_main_process()
    # Before any model is loaded or request paid for: an unwritable --out fails here.
    folder = RunFolder(out_dir) if main else None
    with folder or contextlib.nullcontext():
        folder_path = dataset_folder(dataset or DATASET, settings.datasets_root)
        rows, shots, few_shot = load_questions(folder_path, settings)
        if folder is not None:
            model_input = (
                (model, settings.revision)
                if settings.backend == "hf"
                else {"id": model, "api": settings.base_url}
            )
            folder.record_inputs(
                datasets=[(folder_path, settings.config)],
                models=[model_input],
                settings=_recorded(settings),
            )
        metric = metric_scores("bbq_bias", settings.metrics_root)
        with stage(
            "loading the model" if settings.backend == "hf" else "checking the API key and cache",
            log,
        ):
            scorer = _scorer(model, settings)
        api = getattr(getattr(scorer, "client", None), "api", None)  # an API backend's client
        try:
            results, predictions = _evaluate(scorer, prompts, rows, shots, metric, settings, main)
        except APIFailure as err:
            if api is not None:
                log.warning("%s", redact(api.summary()))
            # Every registered secret (the Hub token, the API key) and URL userinfo as ***.
            raise APIFailure(redact(str(err))) from None
        if api is not None:
            results["api_usage"] = api.usage()
            log.log(logging.WARNING if api.retried else logging.INFO, "%s", redact(api.summary()))
        results = to_jsonable(
            {
                "part": "jbbq",
                "step": "evaluate",
                "model": settings.model_label or model,
                "backend": settings.backend,
                "scorer": scorer.description,
                "scoring": settings.scoring,
                # generated replies only: a log-likelihood choice is read from the scores
                "answer_reader": settings.answer_reader if settings.scoring == "generate" else None,
                "dataset": str(folder_path),
                "preset": _preset_entry(settings, folder.inputs if folder else None),
                "settings": _recorded(settings),
                "few_shot": few_shot,
                **results,
            }
        )
        if folder is not None:
            folder.write_jsonl("predictions.jsonl", predictions)
            folder.write_json("results.json", results)
            render(results, folder.staging)
    if main:
        log.info("wrote %s: results.json, predictions.jsonl, report.md and the figures", out_dir)
    return results


def _preset_entry(settings: Settings, inputs: dict | None) -> dict | None:
    """``presets.preset_record`` plus the study file and version the preset came from."""
    record = preset_record(settings, inputs)
    if record is not None and settings.preset in preset_names(COMMAND):
        record["source"] = load_preset(COMMAND, settings.preset).source
    return record


def _recorded(settings: Settings) -> dict:
    return {
        key: value
        for key, value in dataclasses.asdict(settings).items()
        if key not in _NOT_RECORDED and key not in INTERVAL_FIELDS
    }


def _evaluate(
    scorer: Scorer,
    prompts: Sequence[PromptSpec],
    rows: list[dict],
    shots: list[dict],
    metric,
    settings: Settings,
    main: bool,
) -> tuple[dict, list[dict]]:
    """Every prompt x shot count scored: ``({"prompts", "runs", "comparisons", "seconds"}, prediction rows)``."""
    started = time.perf_counter()
    runs: list[dict] = []
    answers: list[list[int]] = []
    prediction_rows: list[dict] = []
    # An API: the requests of all runs in flight together; each run (as many questions as the
    # others) is then given an equal share of that time, beside the time it takes itself.
    shared = 0.0
    prefetch = getattr(scorer, "prefetch", None)
    if prefetch is not None:
        jobs = [(prompt, shots[:k]) for prompt, k in itertools.product(prompts, settings.shots)]
        with stage(f"{len(jobs) * len(rows):,} replies of {len(jobs)} runs", log) as record:
            prefetch(jobs, rows, settings.scoring)
        shared = record["seconds"] / len(jobs)
    for prompt, k in itertools.product(prompts, settings.shots):
        what, shown = f"prompt {prompt.label}, {k}-shot", shots[:k]
        if main:  # what the progress lines below are about
            log.info("%s: %d questions ...", what, len(rows))
        run_started = time.perf_counter()
        scored = score_sharded(
            lambda part, prompt=prompt, shown=shown: scorer.score(
                prompt, part, shown, settings.scoring
            ),
            rows,
        )
        seconds = time.perf_counter() - run_started + shared
        predicted = [item["prediction"] for item in scored]
        metrics = score_predictions(metric, rows, predicted, settings)
        reading = reading_record(scored)
        if main:
            log.info("%s: %d questions in %.1f s (%s)", what, len(rows), seconds, _summary(metrics))
            _say_coverage(what, reading, settings.answer_reader)
        runs.append(
            {
                "prompt": prompt.name,
                "prompt_version": prompt.version,
                "layout": prompt.layout,
                "shots": k,
                # example_id is unique only within a category
                "shot_examples": [
                    {key: s[key] for key in ("category", "example_id")} for s in shown
                ],
                "n_questions": len(rows),
                "example_prompt": scorer.render_example(prompt, rows[0], shown),
                "seconds": round(seconds, 3),
                "questions_per_second": round(len(rows) / seconds, 3) if seconds > 0 else None,
                "metrics": metrics,
                "error_rates": metrics["error_rates"],
                "reading": reading,
            }
        )
        answers.append(predicted)
        prediction_rows += [
            {"prompt": prompt.name, "shots": k, **{key: row[key] for key in _KEPT}, **item}
            for row, item in zip(rows, scored, strict=True)
        ]
    comparisons = None
    if settings.confidence_level and len(runs) > 1 and main:
        with stage(f"paired comparisons of {len(runs)} runs", log):
            paired = metric_scores("bbq_bias", settings.metrics_root, config_name="paired")
            comparisons = compare_runs(
                paired,
                _columns(rows, settings),
                runs,
                answers,
                confidence_level=settings.confidence_level,
                n_resamples=settings.n_resamples,
                seed=settings.seed,
            )
    summary = {
        "prompts": {
            p.name: {
                "version": p.version,
                "layout": p.layout,
                "description": p.description,
                "file": p.path,
            }
            for p in prompts
        },
        "intervals": settings.interval_record(),
        "runs": runs,
        "comparisons": comparisons,
        "seconds": round(time.perf_counter() - started, 3),
    }
    return summary, prediction_rows


def reading_record(scored: Sequence[dict]) -> dict | None:
    """How the replies of one run were read: questions per rule of ``answer_reading`` and the
    share read (``coverage``); None for log-likelihood scoring (no reply to read)."""
    rules = [item["rule"] for item in scored if "rule" in item]
    if not rules:
        return None
    counts = {rule: rules.count(rule) for rule in RULES if rule in rules}
    read = sum(1 for item in scored if item.get("rule") and item["prediction"] != UNPARSABLE)
    return {"rules": counts, "read": read, "replies": len(rules), "coverage": read / len(rules)}


def _say_coverage(what: str, reading: dict | None, reader: str) -> None:
    if reading is not None and reading["read"] < reading["replies"]:
        unread = {r: n for r, n in reading["rules"].items() if r in UNREAD_RULES}
        log.warning(
            "%s: %d of %d replies (%.1f %%) were not read as an answer by the %s reader (%s); "
            "they count as unparsable (-1)",
            what,
            reading["replies"] - reading["read"],
            reading["replies"],
            100 * (1 - reading["coverage"]),
            reader,
            ", ".join(f"{rule} {n}" for rule, n in unread.items()),
        )


def _summary(metrics: dict) -> str:
    keys = (
        ("accuracy_ambiguous", "acc amb"),
        ("accuracy_disambiguated", "acc dis"),
        ("bias_score_disambiguated", "s_DIS"),
        ("bias_score_ambiguous", "s_AMB"),
    )
    return ", ".join(f"{title} {with_interval(metrics.get(key), None, 3)}" for key, title in keys)
