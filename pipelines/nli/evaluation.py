"""``bias-hub nli evaluate``: predict the PS/AS/NS sets, score them, write the report.

The evaluation sets are opened with ``datasets.load_dataset("<root>/nli_gender_bias", "all")``
and scored with ``evaluate.load("<root>/metrics/nli_gender_bias")``, exactly as a user would.
The run folder is written whole: nothing of an earlier run (another model list, another
``--limit``) survives beside the new one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from builders.console import stage
from builders.text import fmt, markdown_table
from pipelines.common import (
    RunFolder,
    RunSettings,
    check_model_name,
    dataset_folder,
    load_dataset_split,
    load_metric,
    load_model,
)
from pipelines.nli.labels import LABELS

__all__ = [
    "DATASET",
    "SUBSETS",
    "Settings",
    "evaluate_model",
    "load_evaluation_rows",
    "occupation_breakdown",
    "run",
    "score_predictions",
]

log = logging.getLogger(__name__)

SUBSETS = ("pro_stereotypical", "anti_stereotypical", "non_stereotypical")
SHORT = {"pro_stereotypical": "PS", "anti_stereotypical": "AS", "non_stereotypical": "NS"}
DATASET = "nli_gender_bias"
# Occupations listed per model in the report.
TOP_OCCUPATIONS = 5


@dataclass(kw_only=True)
class Settings(RunSettings):
    """``nli evaluate``'s settings; ``seed`` draws the ``limit`` sample."""

    # None: the release's `all` where the folder has it, else `generated_all`.
    config: str | None = None
    batch_size: int = 64
    max_length: int = 128
    # MODEL_LABEL=entailment,... for models whose label names are not NLI names.
    label_map: str | None = None
    threads: int | None = None
    limit: int | None = None


def evaluation_config(folder: str | Path, config: str | None = None, suffix: str = "") -> str:
    """``config``, or by default the release's ``all`` (+ ``suffix``, e.g. ``_downsampled``)
    where the folder has it and the generated sets' ``generated_all`` otherwise (an offline build)."""
    if config:
        return config
    from builders.card import read_card_yaml

    configs = {entry["config_name"] for entry in read_card_yaml(folder).get("configs", [])}
    return f"all{suffix}" if f"all{suffix}" in configs else "generated_all"


def load_evaluation_rows(dataset: str | Path | None = None, datasets_root: str | Path | None = None,
                         config: str | None = None):  # fmt: skip
    """The evaluation pairs as a ``datasets.Dataset`` (the three subsets in one; see ``evaluation_config``)."""
    folder = dataset_folder(dataset or DATASET, datasets_root)
    return load_dataset_split(folder, evaluation_config(folder, config), "test")


def score_predictions(metric, predictions: np.ndarray, subsets: Sequence[str],
                      probabilities: np.ndarray | None = None) -> dict:  # fmt: skip
    """The metric's result for canonical label ids (0/1/2) and the subset of each pair."""
    return metric.compute(
        predictions=[int(p) for p in predictions],
        subsets=list(subsets),
        probabilities=None if probabilities is None else np.asarray(probabilities).tolist(),
    )


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


def comparison_markdown(results: dict[str, dict]) -> str:
    rows = {name: table_row(result) for name, result in results.items()}
    columns = list(next(iter(rows.values())))
    return markdown_table(["model", *columns], [[name, *(fmt(r.get(c)) for c in columns)] for name, r in rows.items()])


def plot_label_fractions(results: dict[str, dict]):
    """Stacked bars of the predicted-label fractions: one panel per set, one bar per model."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(results)
    colours = {"entailment": "#4c72b0", "neutral": "#999999", "contradiction": "#dd8452"}
    figure, axes = plt.subplots(1, 3, figsize=(4 + 1.2 * len(names) * 3, 3.6), sharey=True)
    for axis, subset in zip(axes, SUBSETS, strict=True):
        bottom = np.zeros(len(names))
        for label in LABELS:
            heights = np.array([results[n]["fractions"].get(subset, {}).get(label, 0.0) for n in names])
            axis.bar(range(len(names)), heights, bottom=bottom, color=colours[label], label=label)
            bottom += heights
        axis.set_title(subset.replace("_", "-"))
        axis.set_xticks(range(len(names)), [Path(n).name[:18] for n in names], rotation=30, ha="right")
    axes[0].set_ylabel("fraction of predictions")
    axes[-1].legend(loc="upper right", fontsize="small")
    return figure


def evaluate_model(model_id: str, rows, metric, settings: Settings, label_map: dict | None = None) -> dict:
    """Predict every pair with one model and score it; returns result, predictions, breakdown.

    The model must be a trained sequence classifier: a masked LM or a base checkpoint (whose
    classifier would start from random weights) is refused by ``load_model``.
    """
    from pipelines.nli.labels import map_model_labels
    from pipelines.nli.predict import encode_pairs, predict_logits, to_canonical_probabilities

    model, tokenizer = load_model(model_id, "sequence-classification", settings.model_options())
    to_canonical = map_model_labels(model.config.id2label, label_map)
    encodings = encode_pairs(tokenizer, rows["premise"], rows["hypothesis"], settings.max_length)
    logits = predict_logits(model, encodings, settings.batch_size, tokenizer.pad_token_id or 0, settings.progress)
    probabilities = to_canonical_probabilities(logits, to_canonical)
    predictions = probabilities.argmax(axis=1)
    result = score_predictions(metric, predictions, rows["subset"], probabilities)
    breakdown = occupation_breakdown(predictions, rows["subset"], rows["occupation"], rows["occupation_en"])
    return {"result": result, "predictions": predictions, "probabilities": probabilities, "occupations": breakdown}


def write_report(folder: RunFolder, evaluated: dict[str, dict], rows, dataset: str, config: str) -> dict:
    """Write results.json, per_occupation.json, predictions, the figure and report.md; returns the results."""
    results = {name: item["result"] for name, item in evaluated.items()}
    summary = {
        "dataset": dataset,
        "config": config,
        "pairs": len(rows),
        "models": {name: {"table": table_row(result), **result} for name, result in results.items()},
    }
    folder.write_json("results.json", summary)
    folder.write_json("per_occupation.json", {name: item["occupations"] for name, item in evaluated.items()})
    ids, subsets = list(rows["id"]), list(rows["subset"])
    for index, (name, item) in enumerate(evaluated.items()):
        folder.write_jsonl(f"predictions_{index}.jsonl", (
            {"id": ids[i], "model": name, "subset": subsets[i],
             "prediction": LABELS[int(item["predictions"][i])],
             "probabilities": dict(zip(LABELS, item["probabilities"][i].round(6).tolist(), strict=True))}
            for i in range(len(rows))
        ))  # fmt: skip
    folder.write_figure("label_fractions.png", plot_label_fractions(results), dpi=110)
    lines = [
        "# NLI gender bias",
        "",
        f"{len(rows)} premise-hypothesis pairs (`{dataset}`, config `{config}`); gold label of "
        "every pair is neutral. Columns: fraction of predicted entailment / neutral / contradiction per "
        "set (PS pro-stereotypical, AS anti-stereotypical, NS non-stereotypical, the paper's Table 3), "
        "bias score s = (e_PS + c_AS + (1 - n_NS)) / 3 (Table 4; 0 = unbiased), Dev et al.'s fraction "
        "neutral FN, net neutral NN and threshold neutral T:τ.",
        "",
        comparison_markdown(results),
        "",
        "![label fractions](label_fractions.png)",
        "",
    ]
    for name, item in evaluated.items():
        lines += [f"## Occupations that drive the score: {name}", ""]
        lines.append(markdown_table(
            ["occupation", "en", "pairs", "share of s", "e on PS", "c on AS", "not n on NS"],
            [[o["occupation"], o["occupation_en"], o["pairs"], f"{o['score_share']:.4f}",
              fmt(o.get("PS", {}).get("entailment")), fmt(o.get("AS", {}).get("contradiction")),
              fmt(1 - o["NS"]["neutral"] if "NS" in o else None)] for o in item["occupations"][:TOP_OCCUPATIONS]],
        ))  # fmt: skip
        ordering = item["result"].get("ordering_holds")
        if ordering is not None:
            lines += ["", f"e_PS > e_AS: {ordering['entailment']}; c_AS > c_PS: {ordering['contradiction']} "
                      "(True: the model favours the stereotype-congruent label)."]
        lines.append("")
    lines.append("Files: `results.json`, `per_occupation.json`, `predictions_<i>.jsonl`, `label_fractions.png`.")
    folder.write_text("report.md", "\n".join(lines) + "\n")
    return summary


def run(model: str | Sequence[str], dataset: str | Path | None, out_dir: Path, settings: Settings) -> dict:
    """``bias-hub nli evaluate``: every model over the evaluation set, one report; returns results.json."""
    from pipelines.nli.labels import parse_label_map

    models = list(dict.fromkeys([model] if isinstance(model, str) else model))
    if not models:
        raise ValueError("--model: give at least one model")
    label_map = parse_label_map(settings.label_map)
    for name in models:
        check_model_name(name)
    with RunFolder(out_dir) as folder:
        if settings.threads:
            import torch

            torch.set_num_threads(settings.threads)
        with stage("load the evaluation set") as step:
            source = dataset_folder(dataset or DATASET, settings.datasets_root)
            config = evaluation_config(source, settings.config)
            rows = load_dataset_split(source, config, "test")
            if settings.limit:
                rows = rows.shuffle(seed=settings.seed).select(range(min(settings.limit, len(rows))))
            metric = load_metric(DATASET, settings.metrics_root)
            step["note"] = f"{len(rows):,} pairs from {source}"
        evaluated = {}
        for name in models:
            with stage(f"evaluate {name}"):
                evaluated[name] = evaluate_model(name, rows, metric, settings, label_map)
        with stage("write the report"):
            results = write_report(folder, evaluated, rows, source.name, config)
    log.info("%s", comparison_markdown({name: item["result"] for name, item in evaluated.items()}))
    log.info("report: %s", Path(out_dir) / "report.md")
    return results
