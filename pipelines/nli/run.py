"""``bias-hub nli train | evaluate | meta-evaluate | init-model``: the part's steps, each
``run_<step>(model, dataset, out_dir, settings) -> dict``; the computations live beside this
module (``training``, ``evaluation``, ``meta_evaluation``, ``random_model``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Sequence
from dataclasses import asdict, replace
from pathlib import Path

from bias_hub.builders.shared.console import stage
from bias_hub.builders.shared.files import write_json
from bias_hub.pipelines.common import (
    RunFolder,
    check_model_name,
    dataset_folder,
    load_dataset_split,
    load_tokenizer,
    metric_scores,
    package_versions,
)
from bias_hub.pipelines.common.presets import preset_record
from bias_hub.pipelines.common.provenance import mark_stand_in
from bias_hub.pipelines.common.run_folder import check_run_folder
from bias_hub.pipelines.nli import evaluation, meta_evaluation, random_model, report, segmentation
from bias_hub.pipelines.nli.data import load_training_table
from bias_hub.pipelines.nli.labels import LABELS, parse_label_map
from bias_hub.pipelines.nli.settings import (
    DATASET,
    PART,
    VERSIONS,
    EvaluateSettings,
    InitSettings,
    MetaSettings,
    TrainSettings,
)
from bias_hub.pipelines.nli.training import (
    TRAIN_LOG,
    check_schedule,
    checkpoint_folder,
    fine_tune,
    load_for_training,
    tokenize_pairs,
)

__all__ = ["run_evaluate", "run_init_model", "run_meta_evaluate", "run_train"]

log = logging.getLogger(__name__)

# What a checkpoint folder was trained from: a resumed run must train on the same data.
CHECKPOINT_RECORD = "bias_hub_training.json"


def _public(settings) -> dict:
    """The settings worth recording (never the token)."""
    return {
        key: value for key, value in asdict(settings).items() if key not in {"token", "progress"}
    }


def _fingerprint(table) -> str:
    """sha256 of the training pairs as trained on (premise, hypothesis, label of every row)."""
    digest = hashlib.sha256()
    for premise, hypothesis, label in zip(
        table["premise"], table["hypothesis"], table["label"], strict=True
    ):
        digest.update(json.dumps([premise, hypothesis, int(label)], ensure_ascii=False).encode())
    return digest.hexdigest()


def _check_resume(checkpoints: Path, record: dict) -> None:
    """Refuse to resume checkpoints that were trained on other data or from another model."""
    from transformers.trainer_utils import get_last_checkpoint  # transformers: heavy, loaded on use

    last = get_last_checkpoint(str(checkpoints)) if checkpoints.is_dir() else None
    if last is None:
        return
    path = checkpoints / CHECKPOINT_RECORD
    earlier = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    if earlier is None:
        raise ValueError(
            f"--out: {checkpoints} holds checkpoints without a record of what they were trained on; resuming "
            "could continue another dataset's training. Pass --no-resume to start over, or give another --out"
        )
    changes = [
        f"{key}: {earlier.get(key)} then, {record[key]} now"
        for key in ("model", "dataset")
        if earlier.get(key) != record[key]
    ]
    if earlier.get("fingerprint") != record["fingerprint"] and not any(
        change.startswith("dataset:") for change in changes
    ):
        changes.append(f"the pairs of {record['dataset']} differ from the ones trained on")
    if changes:
        raise ValueError(
            f"--out: {checkpoints} holds checkpoints of another training ({'; '.join(changes)}); "
            "resuming would train on neither. Pass --no-resume to start over on this data, or give "
            "another --out"
        )


def _training_data(dataset: str | Path, settings: TrainSettings, text_form: str):
    """The training pairs as read, as trained on (sampled, segmented), and the held-out ones (or None)."""
    pairs = load_training_table(dataset, settings.split, settings, "--dataset")
    if settings.max_train_samples:
        sample = pairs.table.shuffle(seed=settings.seed).select(
            range(min(settings.max_train_samples, len(pairs.table)))
        )
        pairs = replace(pairs, table=sample)
    table = segmentation.prepare(pairs, text_form, "--dataset")
    held_out = None
    if settings.eval_dataset:
        held_out = load_training_table(
            settings.eval_dataset, settings.eval_split, settings, "--eval-dataset"
        )
        held_out = segmentation.prepare(held_out, text_form, "--eval-dataset")
    return pairs, table, held_out


def run_train(
    model: str, dataset: str | Path | None, out_dir: Path, settings: TrainSettings
) -> dict:
    """``bias-hub nli train``: fine-tune ``model`` on ``dataset``; the model folder is ``out_dir``."""
    from transformers import set_seed  # transformers: heavy, loaded on use

    if dataset is None:
        raise ValueError(
            "--dataset: nli train needs training data: a Hub dataset id, a dataset folder, JSNLI's "
            "train_w_filtering.tsv as distributed, or a .jsonl/.json/.csv/.tsv/.parquet file"
        )
    check_model_name(model)
    if settings.tokenizer:
        check_model_name(settings.tokenizer, "--tokenizer")
    # The model folder is written at the end: what it would replace, and an input inside it
    # that the swap would delete, are checked before training.
    out_dir = check_run_folder(
        out_dir, inputs=[dataset, settings.eval_dataset, model, settings.tokenizer]
    )
    checkpoints = checkpoint_folder(out_dir)
    check_schedule(settings)
    text_form = segmentation.resolve(settings.segmentation, settings.tokenizer or model)
    with stage("load the training data") as step:
        pairs, table, held_out = _training_data(dataset, settings, text_form)
        text = segmentation.describe(pairs, text_form)
        step["note"] = f"{len(table):,} pairs ({pairs.source_format}); text: {text}"
    record = {
        "model": model,
        "dataset": str(Path(dataset).resolve()) if Path(dataset).exists() else str(dataset),
        "config": settings.config,
        "split": settings.split,
        "rows": len(table),
        "fingerprint": _fingerprint(table),
    }
    if not settings.resume and checkpoints.is_dir():
        log.info("--no-resume: removing the earlier checkpoints in %s", checkpoints)
        shutil.rmtree(checkpoints)
    _check_resume(checkpoints, record)
    checkpoints.mkdir(parents=True, exist_ok=True)
    write_json(checkpoints / CHECKPOINT_RECORD, record)
    set_seed(settings.seed)
    with stage(f"load {model}"):
        flag = "--tokenizer" if settings.tokenizer else "--model"
        tokenizer = load_tokenizer(settings.tokenizer or model, settings.model_options(), flag)
        classifier, label_ids = load_for_training(model, settings)
        train_set = tokenize_pairs(table, tokenizer, settings.max_length, label_ids)
        eval_set = (
            tokenize_pairs(held_out, tokenizer, settings.max_length, label_ids)
            if held_out is not None
            else None
        )
    with stage("train") as step:
        step["note"] = f"checkpoints in {checkpoints}"
        trainer, result = fine_tune(
            classifier, tokenizer, train_set, checkpoints, settings, eval_dataset=eval_set
        )
    results = {
        "part": PART,
        "step": "train",
        "model": model,
        "dataset": str(dataset),
        "train_rows": len(table),
        "fingerprint": record["fingerprint"],
        "dataset_format": pairs.source_format,
        "text": {"segmentation": text_form, "done": text},
        "settings": _public(settings),
        "preset": preset_record(settings),
        "global_step": result.global_step,
        "training_loss": result.training_loss,
        "metrics": result.metrics,
    }
    if eval_set is not None:
        results["eval"] = trainer.evaluate()
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
            folder.record_inputs(
                datasets=[
                    (data, settings.config) for data in (dataset, settings.eval_dataset) if data
                ],
                models=[(name, settings.revision) for name in (model, settings.tokenizer) if name],
                settings=_public(settings),
            )
            folder.write_json("results.json", results)
            folder.write_jsonl(TRAIN_LOG, trainer.state.log_history)
            report.render(results, folder.path("."))
        log.info("saved the fine-tuned model to %s", out_dir)
    return results


def _evaluation_rows(dataset: str | Path | None, settings: EvaluateSettings):
    source = dataset_folder(dataset or DATASET, settings.datasets_root)
    config = evaluation.evaluation_config(source, settings.config)
    rows = load_dataset_split(source, config, "test")
    evaluation.check_columns(rows, source, config)
    if settings.limit is not None:
        rows = rows.shuffle(seed=settings.seed).select(range(min(settings.limit, len(rows))))
    return source, config, rows


def run_evaluate(
    model: str | Sequence[str],
    dataset: str | Path | None,
    out_dir: Path,
    settings: EvaluateSettings,
) -> dict:
    """``bias-hub nli evaluate``: every model over the evaluation set, one report; returns results.json."""
    models = list(dict.fromkeys([model] if isinstance(model, str) else model or []))
    if not models:
        raise ValueError("--model: give at least one model")
    label_map = parse_label_map(settings.label_map)
    # --out first (an unwritable or busy folder fails before anything else), then the models.
    with RunFolder(out_dir) as folder:
        for name in models:
            check_model_name(name)
            evaluation.check_trained(name, settings)
        if settings.threads is not None:
            import torch  # torch: heavy, loaded on use

            torch.set_num_threads(settings.threads)
        with stage("load the evaluation set") as step:
            source, config, rows = _evaluation_rows(dataset, settings)
            folder.record_inputs(
                datasets=[(source, config)],
                models=[(name, settings.revision) for name in models],
                settings=_public(settings),
            )
            metric = metric_scores(DATASET, settings.metrics_root)
            step["note"] = f"{len(rows):,} pairs from {source} ({config})"
        evaluated = {}
        for name in models:
            with stage(f"evaluate {name}"):
                evaluated[name] = evaluation.evaluate_model(name, rows, metric, settings, label_map)
        comparisons = None
        if len(models) > 1 and settings.confidence_level:
            with stage(f"paired comparisons ({len(models) * (len(models) - 1) // 2} pairs)"):
                paired = metric_scores(DATASET, settings.metrics_root, "paired")
                comparisons = evaluation.compare_models(paired, evaluated, rows, settings)
        with stage("write the report"):
            results = {
                "part": PART,
                "step": "evaluate",
                "dataset": str(Path(source).resolve()),
                "config": config,
                "pairs": len(rows),
                "intervals": settings.interval_record(),
                "preset": preset_record(settings, folder.inputs),
                "models": {
                    name: {
                        "table": evaluation.table_row(item["result"]),
                        "segmentation": item["segmentation"],
                        "truncated_pairs": item["truncated_pairs"],
                        **item["result"],
                    }
                    for name, item in evaluated.items()
                },
                "comparisons": comparisons,
                "versions": package_versions(VERSIONS),
            }
            folder.write_json("results.json", results)
            folder.write_json(
                "per_occupation.json",
                {name: item["result"]["occupations"] for name, item in evaluated.items()},
            )
            ids, subsets = list(rows["id"]), list(rows["subset"])
            for index, (name, item) in enumerate(evaluated.items()):
                folder.write_jsonl(
                    f"predictions_{index}.jsonl",
                    (
                        {
                            "id": ids[i],
                            "model": name,
                            "subset": subsets[i],
                            "prediction": LABELS[int(item["predictions"][i])],
                            "probabilities": dict(
                                zip(LABELS, item["probabilities"][i].round(6).tolist(), strict=True)
                            ),
                        }
                        for i in range(len(rows))
                    ),
                )
            report.render(results, folder.path("."))
    log.info("%s", report.comparison_markdown(results["models"]))
    log.info("report: %s", Path(out_dir) / "report.md")
    return results


def run_meta_evaluate(
    model: str, dataset: str | Path | None, out_dir: Path, settings: MetaSettings
) -> dict:
    """``bias-hub nli meta-evaluate``: ``dataset`` is the evaluation set (default nli_gender_bias),
    ``settings.training_sets`` the bias-controlled training sets; returns results.json."""
    rates = [float(r) for r in settings.rates]
    check_model_name(model)
    with RunFolder(out_dir) as folder:
        with stage("load the training and evaluation sets") as step:
            training_folder = meta_evaluation.training_sets_folder(
                settings.training_sets, settings.datasets_root
            )
            needed = sorted(
                set(rates) | ({settings.base_rate} if settings.base_rate is not None else set())
            )
            training = meta_evaluation.load_training_sets(training_folder, needed)
            evaluation_folder = dataset_folder(dataset or DATASET, settings.datasets_root)
            chosen = meta_evaluation.evaluation_rows(evaluation_folder, training, settings)
            folder.record_inputs(
                datasets=[training_folder, (evaluation_folder, chosen.config)],
                models=[(model, settings.revision)],
                settings=_public(settings),
            )
            step["note"] = f"{chosen.note}; {len(chosen.rows)} evaluation pairs"
        runs = len(settings.seeds) * len(rates)
        with stage(
            f"train and score {runs} models ({len(settings.seeds)} seeds x {len(rates)} rates)"
        ) as step:
            summary = meta_evaluation.run_meta_evaluation(model, training, chosen.rows, settings)
        train_log = summary.pop("train_log")
        results = {
            "part": PART,
            "step": "meta-evaluate",
            "description": settings.description or f"Model: `{settings.model_label or model}`.",
            "preset": preset_record(settings, folder.inputs),
            **summary,
            "provenance": meta_evaluation.provenance(
                model, training_folder, training, chosen, settings
            ),
            "numerics": meta_evaluation.numerics(settings),
            "stages": [{"stage": "train and score", "seconds": step["seconds"]}],
        }
        folder.write_json("results.json", results)
        folder.write_jsonl(TRAIN_LOG, train_log)
        report.render(results, folder.path("."))
    log.info("%s", report.meta_summary_markdown(results))
    log.info("report: %s", Path(out_dir) / "report.md")
    return results


def run_init_model(
    model: str | None, dataset: str | Path | None, out_dir: Path, settings: InitSettings
) -> dict:
    """``bias-hub nli init-model``: a random BERT NLI classifier whose tokenizer's vocabulary
    comes from the training text of ``dataset`` (a built nli_bias_controlled folder); ``model``
    must be None. Its ``init_model.json`` marks it as never trained."""
    if model is not None:
        raise ValueError(f"nli init-model makes its model; got --model {model}")
    with RunFolder(out_dir) as folder:
        with stage("read the training text") as step:
            source = meta_evaluation.training_sets_folder(dataset, settings.datasets_root)
            table = meta_evaluation.load_training_sets(source, [settings.rate])[settings.rate]
            folder.record_inputs(datasets=[source], settings=_public(settings))
            texts = [text for column in ("premise", "hypothesis") for text in table[column]]
            step["note"] = f"{len(table):,} pairs of {source} (r = {settings.rate})"
        with stage(f"create a {settings.size} BERT"):
            random_model.make_classifier(
                folder.path("."),
                texts,
                size=settings.size,
                seed=settings.seed,
                tokenizer_kind=settings.tokenizer,
                max_length=settings.max_length,
                dropout=settings.dropout,
            )
            mark_stand_in(
                folder.path("."), f"a {settings.size} BERT made from scratch, not a pretrained one"
            )
            chosen = ("rate", "size", "tokenizer", "max_length", "dropout", "seed")
            record = {
                **{key: getattr(settings, key) for key in chosen},
                "training_sets": str(Path(source).resolve()),
                "datasets_root": None
                if settings.datasets_root is None
                else str(settings.datasets_root),
                "training_pairs": len(table),
                "vocabulary": random_model.vocabulary_size(folder.path(".")),
                "note": "weights are random: fine-tune it (nli train) or let nli meta-evaluate "
                "--reinitialize draw them per seed; nli evaluate refuses it without --allow-untrained",
            }
            folder.write_json(random_model.RECORD, record)
            results = {"part": PART, "step": "init-model", **record}
            folder.write_json("results.json", results)
            report.render(results, folder.path("."))
    log.info("wrote %s", out_dir)
    return results
