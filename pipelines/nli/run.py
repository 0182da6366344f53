"""``bias-hub nli train | evaluate | meta-evaluate | init-model``: settings and run functions.

Each model-running step is ``run_*(model, dataset, out_dir, settings) -> dict`` (the shared
pipeline shape); the computations live beside this module (``training``, ``evaluation``,
``meta``, ``scratch``) and the Markdown and figures in ``report``.
"""

from __future__ import annotations

import logging
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from builders.shared.console import stage
from builders.shared.files import ensure_writable_folder
from pipelines.common import (
    RunFolder,
    RunSettings,
    check_model_name,
    dataset_folder,
    load_dataset_split,
)

__all__ = [
    "EvaluateSettings",
    "InitSettings",
    "MetaSettings",
    "TrainSettings",
    "run_evaluate",
    "run_init_model",
    "run_meta_evaluate",
    "run_train",
]

log = logging.getLogger(__name__)

# Where the evaluation sets live by default, and the scores' interval level.
DATASET = "nli_gender_bias"
TRAINING_SETS = "nli_bias_controlled"
CONFIDENCE_LEVEL = 0.95


@dataclass(kw_only=True)
class TrainSettings(RunSettings):
    """``nli train``'s settings (the paper's defaults); ``dtype`` is the mixed precision."""

    tokenizer: str | None = None
    config: str | None = None
    split: str = "train"
    dataset_revision: str | None = None
    # "auto": JSNLI's header-less TSV is recognised; "jsnli" insists on it; "table": columns.
    dataset_format: str = "auto"
    # How text meets the tokenizer: see pipelines.nli.segmentation.
    segmentation: str = "auto"
    eval_dataset: str | None = None
    eval_split: str = "validation"
    columns: str = "premise,hypothesis,label"
    # The dataset's own values for entailment, neutral, contradiction (e.g. ("E", "N", "C")).
    label_names: tuple[str, ...] | None = None
    epochs: float = 5.0
    learning_rate: float = 2e-5
    batch_size: int = 32
    max_length: int = 128
    warmup_ratio: float = 0.0
    weight_decay: float = 0.0
    max_train_samples: int | None = None
    resume: bool = True
    seed: int = 42
    # A checkpoint per epoch; the meta-evaluation trains throw-away models and turns it off.
    save: bool = True
    logging_steps: int = 50
    # Share of ordinary tokens replaced by [UNK] in each training batch (0: off). For models
    # trained from scratch: it teaches them to read unknown context words, which is what words
    # of unseen evaluation templates become.
    token_dropout: float = 0.0


@dataclass(kw_only=True)
class EvaluateSettings(RunSettings):
    """``nli evaluate``'s settings; ``seed`` draws the ``limit`` sample and seeds the bootstrap."""

    # None: the release's `all` where the folder has it, else `generated_all`.
    config: str | None = None
    batch_size: int = 64
    max_length: int = 128
    # MODEL_LABEL=entailment,... for models whose label names are not NLI names.
    label_map: str | None = None
    segmentation: str = "auto"
    threads: int | None = None
    limit: int | None = None
    # None turns intervals and paired comparisons off.
    confidence_level: float | None = CONFIDENCE_LEVEL
    n_resamples: int = 2000
    # "items" (rows within their set) or "templates" (rows of one template together).
    bootstrap_unit: str = "items"


@dataclass(kw_only=True)
class MetaSettings(RunSettings):
    """``nli meta-evaluate``'s settings; ``seed`` draws the evaluation sample, ``seeds`` the runs."""

    # A built nli_bias_controlled folder (or its name under datasets_root).
    training_sets: str | Path | None = None
    # Evaluation config; None: the release's `all_downsampled`, else `generated_all` (drawn).
    config: str | None = None
    rates: Sequence[float] = tuple(k / 10 for k in range(11))
    seeds: Sequence[int] = (0, 1, 2)
    epochs: float = 3.0
    learning_rate: float = 2e-5
    batch_size: int = 32
    max_length: int = 128
    base_rate: float | None = None
    base_epochs: float = 10.0
    base_learning_rate: float | None = None
    reinitialize: bool = False
    # Pairs per set drawn from a config that is not already down-sampled.
    eval_per_subset: int = 200
    token_dropout: float = 0.0
    # Train each rate on a seeded sample of this many pairs (the same pairs at every rate).
    max_train_samples: int | None = None
    segmentation: str = "auto"
    workers: int = 1
    threads: int | None = None
    confidence_level: float | None = CONFIDENCE_LEVEL
    n_resamples: int = 2000
    # The report states whether the mean Spearman(r, s) over seeds reaches it (None: no criterion).
    target_spearman: float | None = None
    # Markdown at the top of the report (default: the model's name).
    description: str = ""


@dataclass(kw_only=True)
class InitSettings:
    """``nli init-model``'s settings: a from-scratch classifier and the tokenizer it reads with."""

    training_sets: str | Path | None = None
    datasets_root: Path | None = None
    # The rate whose training text the vocabulary comes from (every rate has the same pairs).
    rate: float = 0.5
    size: str = "tiny"
    tokenizer: str = "wordpiece"
    max_length: int = 128
    dropout: float = 0.1
    seed: int = 0


def _load_pairs(dataset: str | Path, split: str, settings: TrainSettings, flag: str):
    from pipelines.nli.data import load_training_table

    return load_training_table(dataset, split, settings, flag)


def run_train(model: str, dataset: str | Path | None, out_dir: Path, settings: TrainSettings) -> dict:
    """``bias-hub nli train``: fine-tune ``model`` on ``dataset``; the model folder is ``out_dir``.

    ``dataset``: a Hub dataset id, a dataset folder, JSNLI's TSV as distributed, or a
    .jsonl/.json/.csv/.tsv/.parquet file. Returns the summary written to ``train_results.json``.
    """
    from transformers import set_seed

    from pipelines.common import load_tokenizer
    from pipelines.nli import segmentation
    from pipelines.nli.training import (
        TRAIN_LOG,
        check_schedule,
        checkpoint_folder,
        fine_tune,
        load_for_training,
        tokenize_pairs,
    )

    if dataset is None:
        raise ValueError(
            "--dataset: nli train needs training data: a Hub dataset id, a dataset folder, JSNLI's "
            "train_w_filtering.tsv as distributed, or a .jsonl/.json/.csv/.tsv/.parquet file"
        )
    check_model_name(model)
    if settings.tokenizer:
        check_model_name(settings.tokenizer, "--tokenizer")
    out_dir = ensure_writable_folder(out_dir)
    checkpoints = checkpoint_folder(out_dir)
    check_schedule(settings)
    text_form = segmentation.resolve(settings.segmentation, settings.tokenizer or model)
    with stage("load the training data") as step:
        pairs = _load_pairs(dataset, settings.split, settings, "--dataset")
        if settings.max_train_samples:
            sample = pairs.table.shuffle(seed=settings.seed).select(range(min(settings.max_train_samples, len(pairs.table))))
            pairs = replace(pairs, table=sample)
        table = segmentation.prepare(pairs, text_form, "--dataset")
        evaluation = None
        if settings.eval_dataset:
            held_out = _load_pairs(settings.eval_dataset, settings.eval_split, settings, "--eval-dataset")
            evaluation = segmentation.prepare(held_out, text_form, "--eval-dataset")
        text = segmentation.describe(pairs, text_form)
        step["note"] = f"{len(table):,} pairs ({pairs.source_format}); text: {text}"
    if not settings.resume and checkpoints.is_dir():
        log.info("--no-resume: removing the earlier checkpoints in %s", checkpoints)
        shutil.rmtree(checkpoints)
    set_seed(settings.seed)
    with stage(f"load {model}"):
        flag = "--tokenizer" if settings.tokenizer else "--model"
        tokenizer = load_tokenizer(settings.tokenizer or model, settings.model_options(), flag)
        classifier, label_ids = load_for_training(model, settings)
        train_set = tokenize_pairs(table, tokenizer, settings.max_length, label_ids)
        eval_set = tokenize_pairs(evaluation, tokenizer, settings.max_length, label_ids) if evaluation is not None else None
    with stage("train") as step:
        step["note"] = f"checkpoints in {checkpoints}"
        trainer, result = fine_tune(classifier, tokenizer, train_set, checkpoints, settings, eval_dataset=eval_set)
    summary = {
        "model": model,
        "dataset": str(dataset),
        "train_rows": len(table),
        "dataset_format": pairs.source_format,
        "text": {"segmentation": text_form, "done": text},
        "settings": _public(settings),
        "global_step": result.global_step,
        "training_loss": result.training_loss,
        "metrics": result.metrics,
    }
    if eval_set is not None:
        summary["eval"] = trainer.evaluate()
    # Every process takes part in saving (sharded models gather their weights); the main one
    # then moves the files into the model folder and swaps it in whole.
    final = checkpoints / "final"
    if trainer.is_world_process_zero():
        shutil.rmtree(final, ignore_errors=True)
    trainer.save_model(str(final))
    if trainer.is_world_process_zero():
        with stage("write the model folder"), RunFolder(out_dir) as folder:
            for item in final.iterdir():
                os.replace(item, folder.path(item.name))
            final.rmdir()
            folder.write_json("train_results.json", summary)
            folder.write_jsonl(TRAIN_LOG, trainer.state.log_history)
        log.info("saved the fine-tuned model to %s", out_dir)
    return summary


def _public(settings: TrainSettings) -> dict:
    """The settings worth recording (never the token)."""
    return {key: value for key, value in asdict(settings).items() if key not in {"token", "progress"}}


def run_evaluate(model: str | Sequence[str], dataset: str | Path | None, out_dir: Path,
                 settings: EvaluateSettings) -> dict:  # fmt: skip
    """``bias-hub nli evaluate``: every model over the evaluation set, one report; returns results.json."""
    from pipelines.common import load_metric
    from pipelines.nli import evaluation, report
    from pipelines.nli.labels import parse_label_map

    models = list(dict.fromkeys([model] if isinstance(model, str) else model))
    if not models:
        raise ValueError("--model: give at least one model")
    evaluation.check_interval_settings(settings.confidence_level, settings.n_resamples, settings.bootstrap_unit)
    label_map = parse_label_map(settings.label_map)
    for name in models:
        check_model_name(name)
    with RunFolder(out_dir) as folder:
        if settings.threads:
            import torch

            torch.set_num_threads(settings.threads)
        with stage("load the evaluation set") as step:
            source = dataset_folder(dataset or DATASET, settings.datasets_root)
            config = evaluation.evaluation_config(source, settings.config)
            rows = load_dataset_split(source, config, "test")
            if settings.limit:
                rows = rows.shuffle(seed=settings.seed).select(range(min(settings.limit, len(rows))))
            metric = load_metric(DATASET, settings.metrics_root)
            step["note"] = f"{len(rows):,} pairs from {source} ({config})"
        evaluated = {}
        for name in models:
            with stage(f"evaluate {name}"):
                evaluated[name] = evaluation.evaluate_model(name, rows, metric, settings, label_map)
        comparisons = None
        if len(models) > 1 and settings.confidence_level:
            with stage(f"paired comparisons ({len(models) * (len(models) - 1) // 2} pairs)"):
                paired = load_metric(DATASET, settings.metrics_root, "paired")
                comparisons = evaluation.compare_models(paired, evaluated, rows, settings)
        with stage("write the report"):
            results = report.write_evaluation(folder, evaluated, rows, source, config, settings, comparisons)
    log.info("%s", report.comparison_markdown(results["models"]))
    log.info("report: %s", Path(out_dir) / "report.md")
    return results


def run_meta_evaluate(model: str, dataset: str | Path | None, out_dir: Path, settings: MetaSettings) -> dict:
    """``bias-hub nli meta-evaluate``: ``dataset`` is the evaluation set (default nli_gender_bias),
    ``settings.training_sets`` the bias-controlled training sets; returns results.json."""
    from pipelines.nli import evaluation, meta, report

    rates = [float(r) for r in settings.rates]
    if any(not 0 <= r <= 1 for r in rates):
        raise ValueError(f"--rates must lie in [0, 1], got {rates}")
    evaluation.check_interval_settings(settings.confidence_level, settings.n_resamples)
    check_model_name(model)
    with RunFolder(out_dir) as folder:
        with stage("load the training and evaluation sets") as step:
            training_folder = meta.training_sets_folder(settings.training_sets, settings.datasets_root)
            needed = sorted(set(rates) | ({settings.base_rate} if settings.base_rate is not None else set()))
            training = meta.load_training_sets(training_folder, needed)
            evaluation_folder = dataset_folder(dataset or DATASET, settings.datasets_root)
            chosen = meta.evaluation_rows(evaluation_folder, training, settings)
            step["note"] = f"{chosen.note}; {len(chosen.rows)} evaluation pairs"
        runs = len(settings.seeds) * len(rates)
        with stage(f"train and score {runs} models ({len(settings.seeds)} seeds x {len(rates)} rates)") as step:
            summary = meta.run_meta_evaluation(model, training, chosen.rows, settings)
        summary["provenance"] = meta.provenance(model, training_folder, training, chosen, settings)
        summary["stages"] = [{"stage": "train and score", "seconds": step["seconds"]}]
        results = report.write_meta(folder, summary, settings.description or f"Model: `{model}`.")
    log.info("%s", report.meta_summary_markdown(results))
    log.info("report: %s", Path(out_dir) / "report.md")
    return results


def run_init_model(out_dir: Path, settings: InitSettings) -> Path:
    """``bias-hub nli init-model``: a randomly initialised BERT NLI classifier with a Japanese
    tokenizer whose vocabulary comes from the training sets' text; returns the model folder."""
    from pipelines.nli import meta, scratch

    with RunFolder(out_dir) as folder:
        with stage("read the training text") as step:
            source = meta.training_sets_folder(settings.training_sets, settings.datasets_root)
            table = meta.load_training_sets(source, [settings.rate])[settings.rate]
            texts = [text for column in ("premise", "hypothesis") for text in table[column]]
            step["note"] = f"{len(table):,} pairs of {source} (r = {settings.rate})"
        with stage(f"create a {settings.size} BERT"):
            scratch.make_classifier(folder.path("."), texts, size=settings.size, seed=settings.seed,
                                    tokenizer_kind=settings.tokenizer, max_length=settings.max_length,
                                    dropout=settings.dropout)  # fmt: skip
            folder.write_json(scratch.RECORD, {
                **asdict(settings),
                "training_sets": str(Path(source).resolve()),
                "datasets_root": None if settings.datasets_root is None else str(settings.datasets_root),
                "training_pairs": len(table),
                "vocabulary": scratch.vocabulary_size(folder.path(".")),
                "note": "weights are random: fine-tune it (nli train) or let nli meta-evaluate "
                "--reinitialize draw them per seed",
            })  # fmt: skip
    log.info("wrote %s", out_dir)
    return Path(out_dir)
