"""Reports of the nli steps: ``render(results, folder)`` writes report.md and the figures from
results.json alone (so ``bias-hub report RUN_DIR`` renders a run again without re-running it).
The text is ``nli/templates/``: ``tables.md.j2`` (every table), one template per step and
``paper.md.j2`` (``PAPER_LAYOUTS``: our numbers beside the paper's printed tables,
``pipelines/studies/nli_gender_bias.yaml``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from bias_hub.pipelines.common.render import (
    draw_intervals,
    macros,
    paper_layouts,
    pyplot,
    save_figure,
    write_report,
)
from bias_hub.pipelines.nli.evaluation import SHORT, SUBSETS, table_row
from bias_hub.pipelines.nli.labels import LABELS

__all__ = [
    "PAPER_LAYOUTS",
    "comparison_markdown",
    "meta_summary_markdown",
    "plot_label_fractions",
    "plot_scores",
    "ranks",
    "render",
]

EVALUATION_FIGURE = "label_fractions.png"
META_FIGURE = "scores_vs_rate.png"
TABLES = "nli/templates/tables.md.j2"


def ranks(models: dict[str, dict]) -> dict[str, int]:
    """Each model's rank by bias score, 1 = most biased (the paper's Table 4, descending); ties share a rank."""
    from bias_hub.metrics._common.bias_hub_intervals import ranks as by_score

    return by_score({name: result["bias_score"] for name, result in models.items()})


def _rate_rows(results: dict) -> list[dict]:
    """Per bias rate: s and 1 - FN over seeds (with their t intervals: seeds are the unit, none
    below two seeds) and the mean fractions."""
    from bias_hub.metrics._common.bias_hub_intervals import t_interval  # loads scipy

    level, rows = results["intervals"]["confidence_level"], []
    for rate in results["rates"]:
        at = [x for x in results["runs"] if x["rate"] == rate]
        rows.append(
            {
                "rate": rate,
                "s": t_interval([x["bias_score"] for x in at], level),
                "fn": t_interval([1 - x["fraction_neutral"] for x in at], level),
                "e": np.mean([x["fractions"]["pro_stereotypical"]["entailment"] for x in at]),
                "c": np.mean([x["fractions"]["anti_stereotypical"]["contradiction"] for x in at]),
                "n": np.mean([x["fractions"]["non_stereotypical"]["neutral"] for x in at]),
            }
        )
    return rows


HELPERS = {
    "SHORT": SHORT,
    "SUBSETS": SUBSETS,
    "LABELS": LABELS,
    "table_row": table_row,
    "ranks": ranks,
    "rate_rows": _rate_rows,
}


def comparison_markdown(models: dict[str, dict]) -> str:
    """One row per model: the headline scores with their intervals, the label fractions of each set."""
    return macros(TABLES, **HELPERS).comparison(models)


def meta_summary_markdown(results: dict) -> str:
    """Scores per rate (mean over seeds with a t interval), the correlations with r, the criterion."""
    return macros(TABLES, **HELPERS).meta_summary(results)


def plot_label_fractions(models: dict[str, dict]):
    """Stacked bars of the predicted-label fractions (one panel per set, one bar per model) and the
    bias score with its interval."""
    plt = pyplot()

    names = list(models)
    ticks = (range(len(names)), [Path(n).name[:18] for n in names])
    colours = {"entailment": "#4c72b0", "neutral": "#999999", "contradiction": "#dd8452"}
    figure, axes = plt.subplots(1, 4, figsize=(5 + 1.6 * len(names) * 4, 3.6))
    for axis, subset in zip(axes[:3], SUBSETS, strict=True):
        bottom = np.zeros(len(names))
        for label in LABELS:
            heights = np.array(
                [models[n]["fractions"].get(subset, {}).get(label, 0.0) for n in names]
            )
            axis.bar(range(len(names)), heights, bottom=bottom, color=colours[label], label=label)
            bottom += heights
        axis.set_title(subset.replace("_", "-"))
        axis.set_ylim(0, 1)
        axis.set_xticks(*ticks, rotation=30, ha="right")
    axes[0].set_ylabel("fraction of predictions")
    axes[2].legend(loc="upper right", fontsize="small")
    scores = np.array([models[n]["bias_score"] for n in names])
    axis = axes[3]
    axis.bar(range(len(names)), scores, color="#c44e52")
    bounds = [(models[n].get("confidence_intervals") or {}).get("bias_score") or {} for n in names]
    if all(b.get("low") is not None for b in bounds):
        draw_intervals(axis, range(len(names)), bounds, linewidth=1.5)
        level = bounds[0].get("confidence_level")
        axis.set_title(f"bias score s ({f'{level:.0%}' if level else 'no'} interval)")
    else:
        axis.set_title("bias score s")
    axis.set_ylim(0, 1)
    axis.set_xticks(*ticks, rotation=30, ha="right")
    return figure


def plot_scores(results: dict):
    """s and 1 − FN against r: mean over seeds with its t interval, and the oracle line s = 2r/3."""
    plt = pyplot()

    from bias_hub.metrics._common.bias_hub_intervals import t_interval

    rates = np.array(results["rates"])
    level = results["intervals"]["confidence_level"]
    seeds = list(dict.fromkeys(run["seed"] for run in results["runs"]))
    at = {(run["seed"], run["rate"]): run for run in results["runs"]}
    figure, axis = plt.subplots(figsize=(5.5, 3.8))
    for key, label, colour in (
        ("bias_score", "bias score s", "#c44e52"),
        ("fraction_neutral", "1 − FN", "#4c72b0"),
    ):
        values = np.array([[at[(s, r)][key] for r in rates] for s in seeds])
        if key == "fraction_neutral":
            values = 1 - values
        bounds = [t_interval(values[:, i], level) for i in range(len(rates))]
        axis.plot(rates, [b["mean"] for b in bounds], marker="o", label=label, color=colour)
        if all(b["low"] is not None for b in bounds):
            axis.fill_between(
                rates,
                [b["low"] for b in bounds],
                [b["high"] for b in bounds],
                color=colour,
                alpha=0.2,
            )
    axis.plot(rates, 2 * rates / 3, linestyle="--", color="#888888", label="oracle s = 2r/3")
    axis.set_xlabel("bias rate r of the training set")
    band = f" ({level:.0%} t interval over seeds)" if level and len(seeds) > 1 else ""
    axis.set_ylabel(f"score, mean over seeds{band}", fontsize="small")
    axis.set_ylim(-0.02, 1.02)
    axis.legend()
    axis.grid(alpha=0.3)
    return figure


def render(results: dict, folder: Path) -> None:
    """report.md (and the step's figure) in ``folder`` from a step's results.json."""
    steps = {
        "evaluate": "evaluate",
        "meta-evaluate": "meta",
        "train": "train",
        "init-model": "init",
    }
    step = results.get("step")
    if step not in steps:
        raise ValueError(f"results.json: step {step!r} is not an nli step ({', '.join(steps)})")
    context = {}
    if step == "evaluate":
        context = {"figure": EVALUATION_FIGURE, "dataset_name": Path(results["dataset"]).name}
        save_figure(plot_label_fractions(results["models"]), Path(folder) / EVALUATION_FIGURE, 110)
    elif step == "meta-evaluate":
        context["figure"] = META_FIGURE
        save_figure(plot_scores(results), Path(folder) / META_FIGURE, 110)
    write_report(
        folder, f"nli/templates/{steps[step]}.md.j2", results=results, **context, **HELPERS
    )


# --- the paper's tables (pipelines/studies/nli_gender_bias.yaml) ------------------------------------


def _printed_model(name: str, printed: dict) -> str | None:
    """The printed model a run's model stands for: its Hub id, or a folder whose path ends with it
    (``{out}/models/<hub id>``, as the study's train step writes them)."""
    for hub_id in printed:
        if name == hub_id or Path(name).as_posix().rstrip("/").endswith("/" + hub_id):
            return hub_id
    return None


def _rows_by_printed_model(
    results: dict | None, printed: dict
) -> list[tuple[str, str | None, dict | None]]:
    """``(row label, printed model or None, our result or None)``: every printed model in the
    paper's order (ours where one of our models stands for it), then our models the paper lacks."""
    ours = dict((results or {}).get("models") or {})
    matched = {name: _printed_model(name, printed) for name in ours}
    rows = []
    for hub_id in printed:
        mine = [name for name, match in matched.items() if match == hub_id]
        if not mine:
            rows.append((hub_id, hub_id, None))
        rows += [(name, hub_id, ours[name]) for name in mine]
    rows += [(name, None, ours[name]) for name, match in matched.items() if match is None]
    return rows


PAPER_LAYOUTS = paper_layouts(
    "nli/templates/paper.md.j2",
    "table2",
    "table3",
    "table4",
    rows_by_printed_model=_rows_by_printed_model,
    META_FIGURE=META_FIGURE,
    EVALUATION_FIGURE=EVALUATION_FIGURE,
    **HELPERS,
)
