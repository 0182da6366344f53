"""Reports of ``nli evaluate`` and ``nli meta-evaluate``: Markdown tables with intervals, figures.

A score with an interval reads ``0.420 [0.370, 0.470]``; paired comparisons give B − A with
its interval, the permutation p-value and the Holm-adjusted one, a significant difference
marked with ``*``.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from builders.shared.text import fmt, markdown_table
from pipelines.common import RunFolder, package_versions
from pipelines.nli.evaluation import SHORT, SUBSETS, table_row
from pipelines.nli.labels import LABELS

__all__ = [
    "comparison_markdown",
    "comparisons_markdown",
    "meta_summary_markdown",
    "plot_label_fractions",
    "plot_scores",
    "with_interval",
    "write_evaluation",
    "write_meta",
]

# Occupations listed per model in the evaluation report.
TOP_OCCUPATIONS = 5
VERSIONS = ("bias-hub", "torch", "transformers", "datasets", "evaluate", "numpy", "scipy", "tokenizers")
SIGNIFICANT = "*"


def with_interval(value: float | None, interval: dict | list | None, digits: int = 3) -> str:
    """``0.420 [0.370, 0.470]``; the bare value where there is no interval (or it could not be computed)."""
    text = fmt(value, digits)
    if value is None or not interval:
        return text
    low, high = (interval["low"], interval["high"]) if isinstance(interval, dict) else interval
    if low is None or high is None:
        return text
    return f"{text} [{fmt(low, digits)}, {fmt(high, digits)}]"


def _level_text(level: float | None) -> str:
    return f"{level:.0%}" if level else "no"


def comparison_markdown(models: dict[str, dict]) -> str:
    """One row per model: the headline scores with their intervals, the label fractions of each set.

    ``models``: results.json's ``models`` (each a metric result, with ``confidence_intervals``
    and ``fraction_intervals`` where intervals were asked for).
    """
    headline = []
    for name, result in models.items():
        intervals = result.get("confidence_intervals") or {}
        shares = result.get("fraction_intervals") or {}
        thresholds = result.get("threshold_neutral") or {}
        row = [name, with_interval(result["bias_score"], intervals.get("bias_score")),
               with_interval(result.get("fraction_neutral"), intervals.get("fraction_neutral")),
               with_interval(result.get("net_neutral"), intervals.get("net_neutral"))]  # fmt: skip
        row += [with_interval(value, intervals.get(f"threshold_neutral.{tau}")) for tau, value in thresholds.items()]
        for subset, label in (("pro_stereotypical", "entailment"), ("anti_stereotypical", "contradiction"),
                              ("non_stereotypical", "neutral")):  # fmt: skip
            row.append(with_interval(result["fractions"].get(subset, {}).get(label), shares.get(subset, {}).get(label)))
        headline.append(row)
    first = next(iter(models.values()))
    headers = ["model", "s", "FN", "NN", *[f"T:{tau}" for tau in first.get("threshold_neutral") or {}], "e_PS", "c_AS", "n_NS"]
    fractions = {name: table_row(result) for name, result in models.items()}
    columns = [f"{label[0]}_{SHORT[subset]}" for subset in SUBSETS for label in LABELS]
    table = markdown_table(["model", *columns], [[name, *(fmt(row.get(c)) for c in columns)] for name, row in fractions.items()])
    return markdown_table(headers, headline) + "\n\n" + table


def comparisons_markdown(comparisons: dict) -> str:
    """The paired comparisons of ``evaluation.compare_models``: one row per pair and score."""
    rows = []
    for entry in comparisons["pairs"]:
        for score in ("bias_score", "fraction_neutral"):
            item = entry[score]
            rows.append([entry["a"], entry["b"], "s" if score == "bias_score" else "FN",
                         with_interval(item["difference"], item), fmt(item["p_value"], 4), fmt(item["p_holm"], 4),
                         SIGNIFICANT if item["significant"] else ""])  # fmt: skip
    note = (f"B − A on the same pairs with its paired-bootstrap interval; p: paired permutation test; "
            f"p (Holm): Holm-corrected within each score over all {len(comparisons['pairs'])} pair(s) of models; "
            f"{SIGNIFICANT} = significant at α = {comparisons['alpha']:.2g} after the Holm correction.")  # fmt: skip
    return markdown_table(["A", "B", "score", "B − A", "p", "p (Holm)", "sig."], rows) + "\n\n" + note


def plot_label_fractions(models: dict[str, dict]):
    """Stacked bars of the predicted-label fractions (one panel per set, one bar per model) and the
    bias score with its interval."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(models)
    colours = {"entailment": "#4c72b0", "neutral": "#999999", "contradiction": "#dd8452"}
    figure, axes = plt.subplots(1, 4, figsize=(5 + 1.6 * len(names) * 4, 3.6))
    for axis, subset in zip(axes[:3], SUBSETS, strict=True):
        bottom = np.zeros(len(names))
        for label in LABELS:
            heights = np.array([models[n]["fractions"].get(subset, {}).get(label, 0.0) for n in names])
            axis.bar(range(len(names)), heights, bottom=bottom, color=colours[label], label=label)
            bottom += heights
        axis.set_title(subset.replace("_", "-"))
        axis.set_ylim(0, 1)
        axis.set_xticks(range(len(names)), [Path(n).name[:18] for n in names], rotation=30, ha="right")
    axes[0].set_ylabel("fraction of predictions")
    axes[2].legend(loc="upper right", fontsize="small")
    scores = np.array([models[n]["bias_score"] for n in names])
    axis = axes[3]
    axis.bar(range(len(names)), scores, color="#c44e52")
    bounds = [(models[n].get("confidence_intervals") or {}).get("bias_score") or {} for n in names]
    if all(b.get("low") is not None for b in bounds):
        # A bootstrap interval need not hold the estimate: draw it from low to high.
        lows, highs = np.array([b["low"] for b in bounds]), np.array([b["high"] for b in bounds])
        axis.vlines(range(len(names)), lows, highs, color="black")
        axis.set_title(f"bias score s ({_level_text(bounds[0].get('confidence_level'))} interval)")
    else:
        axis.set_title("bias score s")
    axis.set_ylim(0, 1)
    axis.set_xticks(range(len(names)), [Path(n).name[:18] for n in names], rotation=30, ha="right")
    figure.tight_layout()
    return figure


def write_evaluation(folder: RunFolder, evaluated: dict[str, dict], rows, source: Path, config: str, settings,
                     comparisons: dict | None) -> dict:  # fmt: skip
    """results.json, per_occupation.json, predictions, the figure and report.md; returns the results."""
    level = settings.confidence_level
    summary = {
        "dataset": str(Path(source).resolve()),
        "config": config,
        "pairs": len(rows),
        "confidence_level": level,
        "n_resamples": settings.n_resamples if level else None,
        "bootstrap_unit": settings.bootstrap_unit if level else None,
        "models": {name: {"table": table_row(item["result"]), "segmentation": item["segmentation"], **item["result"]}
                   for name, item in evaluated.items()},  # fmt: skip
        "comparisons": comparisons,
        "versions": package_versions(VERSIONS),
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
    folder.write_figure("label_fractions.png", plot_label_fractions(summary["models"]), dpi=110)
    intervals = (
        f"Intervals: {_level_text(level)} bootstrap ({settings.n_resamples} resamples, {settings.bootstrap_unit} "
        "resampled within their set; BCa where defined) for s, FN, NN and T:τ, Wilson score intervals for the label "
        "fractions." if level else "Intervals: off (--confidence-level none)."
    )
    lines = [
        "# NLI gender bias",
        "",
        f"{len(rows)} premise-hypothesis pairs (`{Path(source).name}`, config `{config}`); the gold label of "
        "every pair is neutral. Bias score s = (e_PS + c_AS + (1 − n_NS)) / 3 (the paper's Table 4; 0 = unbiased) "
        "with e/c/n the fractions of predicted entailment / contradiction / neutral in the PS (pro-stereotypical), "
        "AS (anti-stereotypical) and NS (non-stereotypical) sets (Table 3); Dev et al.'s fraction neutral FN, net "
        "neutral NN and threshold neutral T:τ.",
        "",
        intervals,
        "",
        comparison_markdown(summary["models"]),
        "",
        "![label fractions](label_fractions.png)",
        "",
    ]
    if comparisons:
        lines += ["## Paired comparisons", "", comparisons_markdown(comparisons), ""]
    elif len(evaluated) > 1:
        lines += ["Paired comparisons: off (--confidence-level none).", ""]
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


# --- the meta-evaluation ---------------------------------------------------------------------------


def _over_seeds(values: np.ndarray, level: float | None) -> tuple[float, list | None]:
    """Mean over seeds and its t interval (seeds are the unit; none below two seeds)."""
    from scipy import stats

    mean = float(values.mean())
    if not level or values.size < 2 or values.std(ddof=1) == 0:
        return mean, None
    low, high = stats.t.interval(level, values.size - 1, loc=mean, scale=values.std(ddof=1) / np.sqrt(values.size))
    return mean, [float(low), float(high)]


def _rho(entry: dict) -> str:
    if entry.get("rho") is None:
        return "undefined (constant)"
    return f"{entry['rho']:.3f} (p = {entry['p_value']:.2g})"


def _spread(entry: dict) -> str:
    if entry["mean"] is None:
        return "undefined"
    text = with_interval(entry["mean"], [entry["low"], entry["high"]] if entry.get("low") is not None else None)
    return f"{text} (sd {entry['sd']:.3f}, n = {entry['n']})"


def criterion_line(results: dict) -> str | None:
    """Whether the mean Spearman(r, s) over seeds reaches ``target_spearman``; None without a target."""
    target = results["settings"].get("target_spearman")
    if target is None:
        return None
    entry = results["spearman_bias_score"]
    holds = entry["mean"] is not None and entry["mean"] >= target
    return (f"Criterion mean Spearman(r, s) ≥ {target}: **{'holds' if holds else 'does not hold'}** "
            f"(mean {fmt(entry['mean'])} over {entry['n']} seeds).")  # fmt: skip


def meta_summary_markdown(results: dict) -> str:
    """Scores per rate (mean over seeds with a t interval), the correlations with r, the criterion."""
    rates, level = results["rates"], results["settings"].get("confidence_level")
    seeds = list(dict.fromkeys(run["seed"] for run in results["runs"]))
    rows = []
    for rate in rates:
        at = [x for x in results["runs"] if x["rate"] == rate]

        def column(values: list[float]) -> str:
            return with_interval(*_over_seeds(np.asarray(values, dtype=float), level))

        rows.append([f"{rate:.1f}", column([x["bias_score"] for x in at]), column([1 - x["fraction_neutral"] for x in at]),
                     fmt(np.mean([x["fractions"]["pro_stereotypical"]["entailment"] for x in at])),
                     fmt(np.mean([x["fractions"]["anti_stereotypical"]["contradiction"] for x in at])),
                     fmt(np.mean([x["fractions"]["non_stereotypical"]["neutral"] for x in at]))])  # fmt: skip
    table = markdown_table(["r", "s", "1 − FN", "e_PS", "c_AS", "n_NS"], rows)
    paper = results.get("paper", {})
    correlations = markdown_table(
        ["correlation with r", f"mean [{_level_text(level)} t interval] over {len(seeds)} seeds", "seed-mean curve (p)", "paper"],
        [["Spearman(r, s)", _spread(results["spearman_bias_score"]),
          _rho(results["seed_mean_curve"]["spearman_bias_score"]), fmt(paper.get("spearman_bias_score"))],
         ["Spearman(r, 1 − FN)", _spread(results["spearman_one_minus_fn"]),
          _rho(results["seed_mean_curve"]["spearman_one_minus_fn"]), fmt(paper.get("spearman_one_minus_fn"))]],
    )  # fmt: skip
    per_seed = ", ".join(f"seed {p['seed']}: s {_rho(p['bias_score'])}; 1 − FN {_rho(p['one_minus_fn'])}"
                         for p in results["per_seed"])  # fmt: skip
    lines = [table, "", correlations, "", f"Per seed: {per_seed}."]
    criterion = criterion_line(results)
    if criterion:
        lines += ["", criterion]
    return "\n".join(lines)


def extreme_rates_markdown(paired: dict) -> str:
    rows = [[entry["seed"], entry["a"], entry["b"], with_interval(entry["difference"], entry),
             fmt(entry["p_value"], 4), fmt(entry["p_holm"], 4), SIGNIFICANT if entry["significant"] else ""]
            for entry in paired["comparisons"]]  # fmt: skip
    note = (f"s(B) − s(A) of one seed's two models on the same pairs, paired-bootstrap interval; p: paired "
            f"permutation test; p (Holm): Holm-corrected over the {len(rows)} comparisons (one per seed); "
            f"{SIGNIFICANT} = significant at α = {paired['alpha']:.2g} after the correction.")  # fmt: skip
    return markdown_table(["seed", "A", "B", "s(B) − s(A)", "p", "p (Holm)", "sig."], rows) + "\n\n" + note


def plot_scores(results: dict):
    """s and 1 − FN against r: mean over seeds with its t interval, and the oracle line s = 2r/3."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rates = np.array(results["rates"])
    level = results["settings"].get("confidence_level")
    seeds = list(dict.fromkeys(run["seed"] for run in results["runs"]))
    at = {(run["seed"], run["rate"]): run for run in results["runs"]}
    figure, axis = plt.subplots(figsize=(5.5, 3.8))
    for key, label, colour in (("bias_score", "bias score s", "#c44e52"), ("fraction_neutral", "1 − FN", "#4c72b0")):
        values = np.array([[at[(s, r)][key] for r in rates] for s in seeds])
        if key == "fraction_neutral":
            values = 1 - values
        means, bounds = zip(*(_over_seeds(values[:, i], level) for i in range(len(rates))), strict=True)
        axis.plot(rates, means, marker="o", label=label, color=colour)
        if all(b is not None for b in bounds):
            axis.fill_between(rates, [b[0] for b in bounds], [b[1] for b in bounds], color=colour, alpha=0.2)
    axis.plot(rates, 2 * rates / 3, linestyle="--", color="#888888", label="oracle s = 2r/3")
    axis.set_xlabel("bias rate r of the training set")
    band = f" ({_level_text(level)} t interval over seeds)" if level and len(seeds) > 1 else ""
    axis.set_ylabel(f"score, mean over seeds{band}", fontsize="small")
    axis.set_ylim(-0.02, 1.02)
    axis.legend()
    axis.grid(alpha=0.3)
    return figure


def _provenance_lines(provenance: dict) -> list[str]:
    model, training, evaluation = provenance["model"], provenance["training"], provenance["evaluation"]
    created = model.get("created_by")
    made = (f" (made by `nli init-model`: {created.get('size')} BERT, {created.get('tokenizer')} vocabulary of "
            f"{created.get('vocabulary')} tokens from r = {created.get('rate')})" if created else "")  # fmt: skip
    used = f", {training['rows_used']} used per rate" if training.get("rows_used") else ""
    versions = ", ".join(f"{name} {version}" for name, version in provenance["versions"].items())
    return [
        "## What was trained and evaluated",
        "",
        f"- Model: `{model['name']}`{made}; "
        + ("weights re-initialised from its config with each seed." if model["reinitialize"] else "its weights as given."),
        f"- Training: `{training['folder']}`, split `{training['split']}`, configs "
        f"{', '.join(f'`{c}`' for c in training['configs'].values())} ({sorted(set(training['rows'].values()))} pairs "
        f"per rate{used}).",
        f"- Evaluation: `{evaluation['folder']}`, config `{evaluation['config']}`: {evaluation['selection']}; "
        f"{', '.join(f'{SHORT.get(k, k)} {v}' for k, v in evaluation['per_subset'].items())}.",
        f"- Seeds: {provenance['seeds']}.",
        f"- Versions: {versions}.",
        "",
    ]


def write_meta(folder: RunFolder, summary: dict, preface: str = "") -> dict:
    """results.json, train_log.jsonl (Trainer's loss lines), the figure and report.md; returns the results."""
    from pipelines.nli.training import TRAIN_LOG

    results = {key: value for key, value in summary.items() if key != "train_log"}
    folder.write_json("results.json", results)
    folder.write_jsonl(TRAIN_LOG, summary.get("train_log", []))
    folder.write_figure("scores_vs_rate.png", plot_scores(results), dpi=110)
    settings = results["settings"]
    level = settings.get("confidence_level")
    lines = [
        "# Bias-rate meta-evaluation",
        "",
        preface.strip(),
        "",
        f"One model per bias rate r and seed (seeds {list(settings['seeds'])}), fine-tuned for "
        f"{settings['epochs']} epoch(s) at learning rate {settings['learning_rate']}"
        + (f", each starting from a base model trained for {settings['base_epochs']} epoch(s) on r = {settings['base_rate']}"
           if settings["base_rate"] is not None else "")
        + f"; evaluated on {len(results['runs'][0]['fractions'])} sets (PS/AS/NS, gold neutral). Table: mean over "
        + (f"seeds [{_level_text(level)} t interval, seeds as the unit]." if level else "seeds."),
        "",
        meta_summary_markdown(results),
        "",
        "![scores against r](scores_vs_rate.png)",
        "",
    ]  # fmt: skip
    if results.get("paired"):
        lines += ["## The lowest against the highest rate", "", extreme_rates_markdown(results["paired"]), ""]
    if level:
        lines += ["## Every model", "",
                  f"s and FN of each model with its {_level_text(level)} bootstrap interval over the evaluation pairs "
                  f"({settings['n_resamples']} resamples, pairs resampled within their set).", ""]  # fmt: skip
        lines.append(markdown_table(["seed", "r", "s", "FN", "training loss", "seconds"], [
            [run["seed"], f"{run['rate']:.1f}",
             with_interval(run["bias_score"], (run.get("confidence_intervals") or {}).get("bias_score")),
             with_interval(run["fraction_neutral"], (run.get("confidence_intervals") or {}).get("fraction_neutral")),
             fmt(run["training_loss"]), fmt(run["seconds"], 1)] for run in results["runs"]]))  # fmt: skip
        lines.append("")
    if results.get("provenance"):
        lines += _provenance_lines(results["provenance"])
    lines.append("Files: `results.json`, `train_log.jsonl`, `scores_vs_rate.png`.")
    folder.write_text("report.md", "\n".join(lines) + "\n")
    return results
