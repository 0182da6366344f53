"""The bias-rate meta-evaluation: does a bias score follow the bias a model was trained on?

For every seed: start from a checkpoint (optionally re-initialised, optionally trained first on
one base bias rate), fine-tune a copy on each bias-controlled training set r = 0.0 .. 1.0,
predict the evaluation pairs (by default the authors' down-sampled sets) and score them. A
valid bias score rises with r: the paper reports Spearman(r, s) = 0.820 for its score s and
-0.114 for Dev et al.'s fraction neutral (as 1 - FN).

The tasks (a base model per seed, then one fine-tune per seed and rate) run in ``workers``
spawned processes; the pairs are tokenised once here, and the scores computed here from the
predictions the tasks return. The same command gives the same numbers on any x86-64 machine:
each worker pins its numerics before torch loads (``numerics``), and the data order and token
dropout come from generators seeded per task.
"""

from __future__ import annotations

import logging
import logging.handlers
import multiprocessing
import os
import tempfile
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np

from bias_hub.builders.shared import console
from bias_hub.builders.shared.card import read_card_yaml
from bias_hub.pipelines.common import (
    RunSettings,
    dataset_folder,
    load_dataset_split,
    load_tokenizer,
    metric_folder,
    metric_scores,
    package_versions,
    resolve_device,
)
from bias_hub.pipelines.common.locations import default_datasets_root
from bias_hub.pipelines.common.settings import INTERVAL_FIELDS
from bias_hub.pipelines.common.stats import correlation, holm_family
from bias_hub.pipelines.nli import segmentation, training, training_loop
from bias_hub.pipelines.nli.evaluation import (
    SUBSETS,
    difference_entry,
    evaluation_config,
    paired_difference,
    score_predictions,
)
from bias_hub.pipelines.nli.labels import HEAD, map_model_labels
from bias_hub.pipelines.nli.predict import encode_pairs, predict_logits, to_canonical_probabilities
from bias_hub.pipelines.nli.random_model import read_record
from bias_hub.pipelines.nli.settings import DATASET, TRAINING_SETS, VERSIONS

__all__ = [
    "PAPER",
    "EvaluationChoice",
    "Plan",
    "rate_configs",
    "downsample_evaluation",
    "evaluation_rows",
    "extreme_rates_compared",
    "load_training_sets",
    "numerics",
    "provenance",
    "recorded_settings",
    "run_meta_evaluation",
    "summarise",
    "training_occupations",
    "training_sets_folder",
]

log = logging.getLogger(__name__)

PAPER = {"spearman_bias_score": 0.820, "spearman_one_minus_fn": -0.114}
BASE = "base"
# What each run keeps of the metric's result (results.json "runs").
RUN_SCORES = ("bias_score", "fraction_neutral", "net_neutral", "fractions", "confidence_intervals")


def training_sets_folder(spec: str | Path | None, datasets_root: str | Path | None = None) -> Path:
    """The built ``nli_bias_controlled`` folder the models are trained on."""
    try:
        return dataset_folder(spec or TRAINING_SETS, datasets_root)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"--training-sets {spec or TRAINING_SETS}: not a built dataset folder (no README.md card), "
            f"neither as given nor under {datasets_root or default_datasets_root()}; build it with "
            f"`bias-hub build {TRAINING_SETS}` (the authors' released bias-controlled-set_v1.1: "
            f"`bias-hub build {TRAINING_SETS} --authors-dir DIR --train-on-dev --out-root D`) and point "
            "--training-sets at it"
        ) from None


def rate_configs(folder: str | Path) -> dict[float, str]:
    """``{rate: config}`` of a built training-sets folder, read from the folder itself: each
    config with a ``train`` split whose Parquet rows carry one ``bias_rate``."""
    import pyarrow.parquet as pq  # pyarrow comes with datasets; only this reads Parquet directly

    found = {}
    for entry in read_card_yaml(folder).get("configs", []):
        files = [
            item["path"] for item in entry.get("data_files", []) if item.get("split") == "train"
        ]
        paths = [path for pattern in files for path in sorted(Path(folder).glob(pattern))]
        if not paths:
            continue
        values = {
            round(float(v), 6)
            for path in paths
            for v in pq.read_table(path, columns=["bias_rate"])["bias_rate"].to_pylist()
        }
        if len(values) == 1:
            found[values.pop()] = entry["config_name"]
    return found


def load_training_sets(folder: str | Path, rates: Sequence[float]) -> dict[float, object]:
    """``{rate: Dataset}``: the ``train`` split of each rate's config of a built folder."""
    configs = rate_configs(folder)
    loaded = {}
    for rate in rates:
        config = configs.get(round(float(rate), 6))
        if config is None:
            raise ValueError(
                f"--training-sets {folder}: no training set for r = {rate} (its rates: "
                f"{', '.join(str(r) for r in sorted(configs)) or 'none'})"
            )
        loaded[rate] = load_dataset_split(folder, config, "train")
    return loaded


def training_occupations(
    training: dict[float, object], evaluation_occupations: Sequence[str]
) -> set[str]:
    """The occupations the training sets cover: their ``occupation`` column, or else (the
    authors' files carry none) every evaluation occupation whose name occurs in a premise."""
    first = next(iter(training.values()))
    named = {o for o in first["occupation"] if o} if "occupation" in first.column_names else set()
    if named:
        return named
    premises = "\n".join(first["premise"])
    # Longest names first, so that 作業員 is not claimed by a premise about 建設作業員.
    found = set()
    for name in sorted(set(evaluation_occupations), key=len, reverse=True):
        if name in premises:
            found.add(name)
            premises = premises.replace(name, "\0")
    if not found:
        raise ValueError(
            "no evaluation occupation occurs in the training premises; are they the same language?"
        )
    return found


def downsample_evaluation(
    rows, occupations: set[str], per_subset: int = 200, seed: int = 0
) -> np.ndarray:
    """Indices of ``per_subset`` pairs per subset (all of them when fewer) over ``occupations``."""
    subsets = np.asarray(rows["subset"], dtype=object)
    covered = np.isin(np.asarray(rows["occupation"], dtype=object), list(occupations))
    rng = np.random.default_rng(seed)
    chosen = []
    for subset in SUBSETS:
        pool = np.flatnonzero(covered & (subsets == subset))
        if pool.size == 0:
            raise ValueError(
                f"the evaluation set has no {subset} pair for the training occupations"
            )
        chosen.append(np.sort(rng.choice(pool, size=min(per_subset, pool.size), replace=False)))
    return np.concatenate(chosen)


@dataclass
class EvaluationChoice:
    """The pairs the models are scored on and how they were chosen (for the report)."""

    rows: object
    folder: Path
    config: str
    selection: str
    note: str
    occupations: list[str]
    uncovered: list[str] = field(default_factory=list)


def evaluation_rows(folder: Path, training: dict[float, object], settings) -> EvaluationChoice:
    """The evaluation pairs: every row of the authors' down-sampled sets (``all_downsampled``,
    200 per set over the training occupations) where the folder has them, else
    ``eval_per_subset`` pairs per set drawn with ``seed`` over the training occupations."""
    config = evaluation_config(folder, settings.config, "_downsampled")
    rows = load_dataset_split(folder, config, "test")
    occupations = training_occupations(training, rows["occupation"])
    listed = np.asarray(rows["occupation"], dtype=object)
    covered = np.isin(listed, list(occupations))
    uncovered = sorted(set(listed[~covered]))
    if "downsampled" in config:
        if uncovered:
            rows = rows.select(np.flatnonzero(covered))
            selection = (
                f"the {len(rows)} rows of `{config}` whose occupation is in the training sets "
                f"({len(uncovered)} evaluation occupation(s) are not: {', '.join(uncovered[:10])})"
            )
        else:
            selection = (
                f"all {len(rows)} rows of `{config}` (the down-sampled sets the authors recommend)"
            )
    else:
        rows = rows.select(
            downsample_evaluation(rows, occupations, settings.eval_per_subset, seed=settings.seed)
        )
        selection = (
            f"{settings.eval_per_subset} pairs per set of `{config}` over the {len(occupations)} training "
            f"occupations, drawn with seed {settings.seed}"
        )
    note = f"{len(occupations)} training occupations; {config}"
    return EvaluationChoice(
        rows, Path(folder), config, selection, note, sorted(occupations), uncovered
    )


# --- the shared inputs of every task -----------------------------------------------------------


@dataclass
class Plan:
    """What every task needs, tokenised once: distinct pairs padded into arrays, each rate's
    rows as indices into them with their labels, and the evaluation rows."""

    model_id: str
    settings: object
    ids: np.ndarray
    types: np.ndarray
    lengths: np.ndarray
    pad_token_id: int
    unk_token_id: int
    special_ids: np.ndarray
    training: dict[float, tuple[np.ndarray, np.ndarray]]
    evaluation: np.ndarray
    work_dir: str = ""


def _plan(model_id: str, training: dict[float, object], evaluation, settings) -> Plan:
    tokenizer = load_tokenizer(model_id, settings.model_options())
    form = segmentation.resolve(settings.segmentation, model_id)
    pairs: dict[tuple[str, str], int] = {}

    def index(table) -> np.ndarray:
        premises = segmentation.prepare_texts(table["premise"], form)
        hypotheses = segmentation.prepare_texts(table["hypothesis"], form)
        return np.fromiter(
            (pairs.setdefault(p, len(pairs)) for p in zip(premises, hypotheses, strict=True)),
            dtype=np.int64,
            count=len(premises),
        )

    rows = {}
    for rate, table in training.items():
        if settings.max_train_samples and settings.max_train_samples < len(table):
            # The same pairs at every rate (they share them), drawn with the run's seed.
            keep = np.sort(
                np.random.default_rng(settings.seed).choice(
                    len(table), settings.max_train_samples, replace=False
                )
            )
            table = table.select(keep)
        rows[rate] = (index(table), np.asarray(table["label"], dtype=np.int64))
    evaluation_index = index(evaluation)
    distinct = list(pairs)
    encoded = encode_pairs(
        tokenizer, [p for p, _ in distinct], [h for _, h in distinct], settings.max_length
    )
    lengths = np.fromiter(
        (len(x) for x in encoded["input_ids"]), dtype=np.int64, count=len(distinct)
    )
    ids = np.full((len(distinct), int(lengths.max())), tokenizer.pad_token_id or 0, dtype=np.int64)
    types = np.zeros_like(ids)
    for i, sequence in enumerate(encoded["input_ids"]):
        ids[i, : len(sequence)] = sequence
        if "token_type_ids" in encoded:
            types[i, : len(sequence)] = encoded["token_type_ids"][i]
    return Plan(
        model_id=model_id,
        settings=settings,
        ids=ids,
        types=types,
        lengths=lengths,
        pad_token_id=tokenizer.pad_token_id or 0,
        unk_token_id=tokenizer.unk_token_id if tokenizer.unk_token_id is not None else 0,
        special_ids=np.array(sorted(set(tokenizer.all_special_ids)), dtype=np.int64),
        training=rows,
        evaluation=evaluation_index,
    )


class _Batches:
    """A training set as row indices; the collator cuts padded arrays to each batch's longest
    pair and replaces ``token_dropout`` of the ordinary tokens by [UNK]."""

    def __init__(self, plan: Plan, index: np.ndarray, labels: np.ndarray) -> None:
        self.plan, self.index, self.labels = plan, index, labels

    def __len__(self) -> int:
        return len(self.index)

    def collate(self, rows: list[int], generator) -> dict:
        """The batch of ``rows``; ``generator`` draws the token dropout."""
        import torch

        plan = self.plan
        chosen = self.index[rows]
        width = int(plan.lengths[chosen].max())
        ids = torch.from_numpy(plan.ids[chosen, :width])
        dropout = plan.settings.token_dropout
        if dropout:
            drop = (torch.rand(ids.shape, generator=generator) < dropout) & ~torch.isin(
                ids, torch.from_numpy(plan.special_ids)
            )
            ids = ids.masked_fill(drop, plan.unk_token_id)
        mask = torch.from_numpy(np.arange(width)[None, :] < plan.lengths[chosen][:, None]).long()
        return {
            "input_ids": ids,
            "token_type_ids": torch.from_numpy(plan.types[chosen, :width]),
            "attention_mask": mask,
            "labels": torch.from_numpy(self.labels[rows]),
        }


# --- tasks ---------------------------------------------------------------------------------------

_WORKER: dict = {}


def _starting_model(plan: Plan, seed: int):
    """The model a seed starts from, and its label order; ``reinitialize``: random weights."""
    # torch and transformers load lazily: importing this module (the CLI, the report) stays cheap.
    import torch
    from transformers import AutoConfig, AutoModelForSequenceClassification

    settings = plan.settings
    if not settings.reinitialize:
        return training.load_for_training(plan.model_id, settings)
    config = AutoConfig.from_pretrained(
        plan.model_id,
        token=settings.token,
        revision=settings.revision,
        trust_remote_code=settings.trust_remote_code,
    )
    config.update(HEAD)
    torch.manual_seed(seed)
    return AutoModelForSequenceClassification.from_config(config), np.arange(3)


def _train(plan: Plan, model, label_ids: np.ndarray, rate, seed: int) -> tuple[float, list[dict]]:
    """Train on ``rate``'s set with the fine-tuning schedule, or ``BASE``: on the base rate's
    with the base model's."""
    settings = plan.settings
    base = rate == BASE
    index, labels = plan.training[settings.base_rate if base else rate]
    return training_loop.train(
        model,
        _Batches(plan, index, label_ids[labels]),
        epochs=settings.base_epochs if base else settings.epochs,
        learning_rate=(settings.base_learning_rate if base else None) or settings.learning_rate,
        batch_size=settings.batch_size,
        seed=seed,
        dtype=training.training_dtype(settings.dtype),
        device=resolve_device(settings.device),
    )


def _predict(plan: Plan, model) -> np.ndarray:
    model.eval()
    chosen = plan.evaluation
    encodings = {
        "input_ids": [plan.ids[i, : plan.lengths[i]].tolist() for i in chosen],
        "token_type_ids": [plan.types[i, : plan.lengths[i]].tolist() for i in chosen],
    }
    logits = predict_logits(model, encodings, 128, plan.pad_token_id, progress=False)
    return to_canonical_probabilities(logits, map_model_labels(model.config.id2label)).astype(
        np.float32
    )


def _run_task(task: tuple) -> dict:
    """One base model (returns the path of its weights) or one fine-tune (returns predictions)."""
    import torch
    from safetensors.torch import load_file, save_file
    from transformers import set_seed

    plan = _WORKER["plan"]
    seed, rate, base_weights = task
    started = time.perf_counter()
    set_seed(seed)
    model, label_ids = _starting_model(plan, seed)
    if base_weights:
        model.load_state_dict(load_file(base_weights))
    loss, lines = _train(plan, model, label_ids, rate, seed)
    if rate == BASE:
        path = str(Path(plan.work_dir) / f"base-{seed}.safetensors")
        save_file({k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}, path)
        outcome = {"weights": path}
    else:
        with torch.inference_mode():
            outcome = {"probabilities": _predict(plan, model)}
    return {
        "seed": seed,
        "rate": rate,
        "training_loss": loss,
        "log": lines,
        "seconds": round(time.perf_counter() - started, 1),
        **outcome,
    }


def numerics(settings) -> dict:
    """What the worker processes pin before torch loads, so that the numbers do not depend on
    the machine (see the module's docstring); recorded in results.json."""
    return {
        "threads_per_worker": settings.threads,
        "deterministic_algorithms": True,
        # MKL's one code path for Intel and AMD processors alike (SSE2 without approximate
        # reciprocals); any other branch is chosen per processor and rounds differently.
        "MKL_CBWR": "COMPATIBLE",
        # torch's vectorised CPU kernels at the AVX2 level: a processor with AVX-512 would
        # otherwise sum in wider lanes, in another order.
        "ATEN_CPU_CAPABILITY": "avx2",
        # oneDNN's kernels (some of a small layer's weight gradients) at the AVX2 level too:
        # without it, an AVX-512 processor gave other scores from the same seed (s at r = 1.0:
        # 0.358 for 0.457; tests/pipelines/test_nli_same_numbers.py).
        "ONEDNN_MAX_CPU_ISA": "AVX2",
    }


def _start_worker(queue, verbosity: int, plan: Plan) -> None:
    import torch

    console.configure(verbosity)
    handler = logging.handlers.QueueHandler(queue)
    for name in console.OWN:
        logging.getLogger(name).handlers = [handler]
    torch.set_num_threads(plan.settings.threads)
    torch.use_deterministic_algorithms(True)
    _WORKER["plan"] = plan


class _Forward(logging.Handler):
    """Hand a worker's log record to this process's logger of the same name."""

    def emit(self, record: logging.LogRecord) -> None:
        logging.getLogger(record.name).handle(record)


def _tasks(plan: Plan, on_done) -> None:
    """Run every task: base models first, each seed's fine-tunes as soon as its base is ready;
    ``on_done`` gets every outcome (a base model's too).

    A pool of ``workers`` spawned processes (each with ``threads`` torch threads, numerics
    pinned) takes tasks as they come, so that every core stays busy whatever the number of
    seeds. On a small CPU several single-threaded trainings beat one multi-threaded one, whose
    threads wait on each other at every small matrix product.
    """
    settings = plan.settings
    rates = [float(r) for r in settings.rates]
    bases = list(settings.seeds)[:1] if settings.shared_base else list(settings.seeds)
    first = (
        [(seed, BASE, None) for seed in bases]
        if settings.base_rate is not None
        else [(seed, rate, None) for seed in settings.seeds for rate in rates]
    )

    def follow(outcome: dict) -> list[tuple]:
        on_done(outcome)
        if outcome["rate"] != BASE:
            return []
        seeds = settings.seeds if settings.shared_base else [outcome["seed"]]
        return [(seed, rate, outcome["weights"]) for seed in seeds for rate in rates]

    pinned = {
        key: str(value)
        for key, value in numerics(settings).items()
        if key.isupper()  # the environment variables
    }
    threads = str(settings.threads)
    pinned.update(OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    # Spawned processes take this process's environment when they start: set it for them
    # (torch is loaded here already, so this process's own numerics do not change).
    before = {key: os.environ.get(key) for key in pinned}
    os.environ.update(pinned)
    try:
        _in_workers(plan, first, follow)
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def _in_workers(plan: Plan, first: list[tuple], follow) -> None:
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    listener = logging.handlers.QueueListener(queue, _Forward())
    listener.start()
    try:
        with ProcessPoolExecutor(
            plan.settings.workers,
            mp_context=context,
            initializer=_start_worker,
            initargs=(queue, console.verbosity(), plan),
        ) as pool:
            try:
                pending = {pool.submit(_run_task, task) for task in first}
                while pending:
                    done, pending = wait(pending, return_when=FIRST_COMPLETED)
                    for future in done:
                        pending |= {
                            pool.submit(_run_task, task) for task in follow(future.result())
                        }
            except BaseException:
                # Ctrl-C, or a task that failed: the queued trainings are dropped and the running
                # ones stopped (leaving the pool would wait for every queued training first).
                # (The processes are taken first: shutting down forgets them.)
                workers = list((getattr(pool, "_processes", None) or {}).values())
                pool.shutdown(wait=False, cancel_futures=True)
                for process in workers:
                    process.terminate()
                raise
    finally:
        listener.stop()


# --- scoring and summary --------------------------------------------------------------------------


def run_meta_evaluation(
    model_id: str, training: dict[float, object], evaluation, settings, work_dir: Path | None = None
) -> dict:
    """Train and score one model per (seed, rate); returns per-run scores, intervals and correlations."""
    rates = [float(r) for r in settings.rates]
    if len(rates) < 3:
        raise ValueError(f"--rates: a correlation needs at least three bias rates, got {rates}")
    if settings.base_rate is not None and settings.base_rate not in training:
        raise ValueError(
            f"--base-rate {settings.base_rate} has no training set (loaded: {sorted(training)})"
        )
    # Loaded when the first model is done, so that loading overlaps the workers' training; a
    # missing module folder still fails here, before any training.
    metric_folder(DATASET, settings.metrics_root)
    metrics: dict = {}
    subsets = list(evaluation["subset"])
    level = settings.confidence_level
    runs, train_log, predictions = [], [], {}

    def on_done(outcome: dict) -> None:
        train_log.extend(
            {"seed": outcome["seed"], "rate": outcome["rate"], **line} for line in outcome["log"]
        )
        if outcome["rate"] == BASE:
            log.info(
                "seed %d base model (r=%.1f): loss=%.3f",
                outcome["seed"],
                settings.base_rate,
                outcome["training_loss"],
            )
            return
        probabilities = outcome["probabilities"]
        labels = probabilities.argmax(axis=1)
        if not metrics:
            metrics["score"] = metric_scores(DATASET, settings.metrics_root)
        result = score_predictions(
            metrics["score"], labels, subsets, probabilities, **settings.interval_options()
        )
        predictions[(outcome["seed"], outcome["rate"])] = labels
        runs.append(
            {
                "seed": outcome["seed"],
                "rate": outcome["rate"],
                **{key: result.get(key) for key in RUN_SCORES},
                "training_loss": outcome["training_loss"],
                "seconds": outcome["seconds"],
            }
        )
        log.info(
            "seed %d r=%.1f: s=%.3f FN=%.3f loss=%.3f",
            outcome["seed"],
            outcome["rate"],
            result["bias_score"],
            result["fraction_neutral"],
            outcome["training_loss"],
        )

    bases = 0 if settings.base_rate is None else 1 if settings.shared_base else len(settings.seeds)
    models = len(settings.seeds) * len(rates) + bases
    with (
        tempfile.TemporaryDirectory(dir=work_dir) as scratch,
        console.progress_meter(
            "meta-evaluation", total=models, unit="model", enabled=settings.progress
        ) as advance,
    ):
        plan = _plan(model_id, training, evaluation, settings)
        plan.work_dir = scratch

        def counted(outcome: dict) -> None:
            on_done(outcome)
            advance(1)

        _tasks(plan, counted)
    runs.sort(key=lambda run: (list(settings.seeds).index(run["seed"]), run["rate"]))
    summary = summarise(runs, rates, settings)
    if level:
        summary["paired"] = extreme_rates_compared(predictions, subsets, rates, settings)
    summary["train_log"] = train_log
    return summary


def extreme_rates_compared(
    predictions: dict, subsets: list[str], rates: list[float], settings
) -> dict:
    """Per seed, the lowest-rate model against the highest-rate one on the same pairs (paired
    bootstrap interval and permutation p-value of s_high - s_low), Holm-corrected over seeds."""
    paired = metric_scores(DATASET, settings.metrics_root, "paired")
    low, high = min(rates), max(rates)
    entries = []
    for seed in settings.seeds:
        result = paired_difference(
            paired, predictions[(seed, low)], predictions[(seed, high)], subsets, settings
        )
        entries.append(
            {
                "seed": seed,
                "a": f"r = {low}",
                "b": f"r = {high}",
                **difference_entry(result, "bias_score"),
            }
        )
    alpha = 1 - settings.confidence_level
    holm_family(entries, alpha)
    return {
        "score": "bias_score",
        "correction": "Holm",
        "family": "one comparison per seed",
        "alpha": alpha,
        "comparisons": entries,
    }


def recorded_settings(settings) -> dict:
    """The meta-evaluation's own settings, for results.json (the shared ones are in the manifest,
    the interval ones under ``"intervals"``)."""
    shared = {item.name for item in fields(RunSettings)} | {"description", "model_label"}
    shared |= INTERVAL_FIELDS
    return {
        item.name: getattr(settings, item.name)
        for item in fields(settings)
        if item.name not in shared
    }


def summarise(runs: list[dict], rates: list[float], settings) -> dict:
    """Per-seed and seed-averaged Spearman correlations of s and 1 - FN with r; the mean over
    seeds with its t interval (seeds are the unit), cut to [-1, 1] where a correlation lies."""
    # scipy loads with the intervals, here and not at import (a second the CLI does without)
    from bias_hub.metrics._common.bias_hub_intervals import t_interval

    seeds = list(dict.fromkeys(run["seed"] for run in runs))
    at = {(run["seed"], run["rate"]): run for run in runs}
    score = np.array([[at[(s, r)]["bias_score"] for r in rates] for s in seeds])
    one_minus_fn = 1 - np.array([[at[(s, r)]["fraction_neutral"] for r in rates] for s in seeds])
    per_seed = [
        {
            "seed": s,
            "bias_score": correlation(rates, score[i].tolist()),
            "one_minus_fn": correlation(rates, one_minus_fn[i].tolist()),
        }
        for i, s in enumerate(seeds)
    ]

    def spread(key: str) -> dict:
        values = np.array(
            [p[key]["statistic"] if p[key]["statistic"] is not None else np.nan for p in per_seed],
            dtype=float,
        )
        return t_interval(values, settings.confidence_level, bounds=(-1.0, 1.0))

    return {
        "settings": recorded_settings(settings),
        "intervals": settings.interval_record(),
        "rates": rates,
        "runs": runs,
        "per_seed": per_seed,
        "spearman_bias_score": spread("bias_score"),
        "spearman_one_minus_fn": spread("one_minus_fn"),
        "seed_mean_curve": {
            "bias_score": score.mean(axis=0).tolist(),
            "one_minus_fn": one_minus_fn.mean(axis=0).tolist(),
            "spearman_bias_score": correlation(rates, score.mean(axis=0).tolist()),
            "spearman_one_minus_fn": correlation(rates, one_minus_fn.mean(axis=0).tolist()),
        },
        "paper": PAPER,
    }


def provenance(
    model: str,
    training_folder: Path,
    training: dict[float, object],
    chosen: EvaluationChoice,
    settings,
) -> dict:
    """What the models were trained and evaluated on, with what, for results.json and the report."""
    subsets = list(chosen.rows["subset"])
    configs = rate_configs(training_folder)
    return {
        "model": {
            "name": settings.model_label or model,
            "reinitialize": settings.reinitialize,
            "created_by": read_record(model),
        },
        "training": {
            "folder": str(Path(training_folder).resolve()),
            "configs": {str(rate): configs[round(float(rate), 6)] for rate in training},
            "split": "train",
            "rows": {str(rate): len(table) for rate, table in training.items()},
            "rows_used": settings.max_train_samples,
            "card": read_card_yaml(training_folder).get("bias_hub_provenance"),
        },
        "evaluation": {
            "folder": str(chosen.folder.resolve()),
            "config": chosen.config,
            "selection": chosen.selection,
            "rows": len(chosen.rows),
            "per_subset": {subset: subsets.count(subset) for subset in dict.fromkeys(subsets)},
            "occupations": len(chosen.occupations),
            "not_in_training": chosen.uncovered,
            "card": read_card_yaml(chosen.folder).get("bias_hub_provenance"),
        },
        "seeds": list(settings.seeds),
        "versions": package_versions((*VERSIONS, "accelerate", "fugashi", "unidic-lite")),
    }
