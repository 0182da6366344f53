"""``report.md``, the paper's Figure 1 and Table 4 for one or several JBBQ evaluations.

Figure 1 (Yanaka et al., 2024) puts, for each model side by side: accuracy per category
on ambiguous and on disambiguated contexts for each prompt, then the accuracy difference
and the bias scores for the basic prompt, with a red dotted line at the chance rate 1/3.
``figure_one`` draws that layout, with error bars where the results carry intervals.
Table 4 gives accuracy with the error (unparsable) rate per category and context
condition, in percent.

``render(results, folder)`` is the one writer of report.md and the figures: from the
results.json of a ``jbbq evaluate`` run (``"step": "evaluate"``) or of ``jbbq figure``
(``"step": "figure"``), so a report can be drawn again without re-running anything.
``PAPER_LAYOUTS`` put our numbers beside the paper's printed ones (``pipelines/studies/jbbq.yaml``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from bias_hub.builders.shared.files import atomic_write_text, read_text
from bias_hub.builders.shared.text import code_span, markdown_table, table_cell, with_interval
from bias_hub.pipelines.common.answer_reading import RULES
from bias_hub.pipelines.common.presets import preset_markdown
from bias_hub.pipelines.common.run_folder import RunFolder

__all__ = [
    "CHANCE",
    "PAPER_LAYOUTS",
    "render",
    "category_label",
    "comparisons_table",
    "figure_one",
    "figures",
    "format_cell",
    "load_results",
    "prompt_label",
    "report",
    "run_table",
    "table4",
    "write_figure_folder",
]

CHANCE = 1 / 3
# The paper's names for the prompts and the categories.
PROMPT_LABELS = {"basic": "BasicP", "unknown": "UnkP", "paraphrase": "ParaP"}
CATEGORY_LABELS = {
    "Disability_status": "Disability",
    "Gender_identity": "Gender",
    "Physical_appearance": "Physical",
    "Sexual_orientation": "Sexual",
}
# (result key, column title) of the per-run tables.
COLUMNS = [
    ("accuracy_ambiguous", "acc amb"),
    ("accuracy_disambiguated", "acc dis"),
    ("accuracy_gap", "acc diff"),
    ("bias_score_disambiguated", "s_DIS"),
    ("bias_score_ambiguous", "s_AMB"),
]
SCORE_NAMES = {
    "accuracy": "accuracy",
    "accuracy_ambiguous": "accuracy (amb)",
    "accuracy_disambiguated": "accuracy (dis)",
    "accuracy_gap": "accuracy difference",
    "bias_score_disambiguated": "s_DIS",
    "bias_score_ambiguous": "s_AMB",
}


def _number(value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return math.nan


def format_cell(value: object) -> str:
    number = _number(value)
    return "n/a" if math.isnan(number) else f"{number:.3f}"


def _interval(scores: dict, key: str) -> dict | None:
    return (scores.get("confidence_intervals") or {}).get(key)


def prompt_label(name: str) -> str:
    return PROMPT_LABELS.get(name, name)


def category_label(name: str) -> str:
    return CATEGORY_LABELS.get(name, name)


def run_table(run: dict) -> str:
    """One run (prompt x shots): a row per category, then all categories together."""
    metrics = run["metrics"]
    rows = []
    for category, scores in sorted(metrics.get("per_category", {}).items()):
        rows.append(
            [table_cell(category)]
            + [with_interval(scores.get(key), _interval(scores, key)) for key, _ in COLUMNS]
            + [format_cell(scores.get("unparsable_rate"))]
        )
    rows.append(
        ["**all**"]
        + [with_interval(metrics.get(key), _interval(metrics, key)) for key, _ in COLUMNS]
        + [format_cell(metrics.get("unparsable_rate"))]
    )
    return markdown_table(["category"] + [title for _, title in COLUMNS] + ["unparsable"], rows)


def table4(columns: Sequence[tuple[str, dict]]) -> str:
    """The paper's Table 4 layout: rows ``<category>-Amb`` / ``-Dis``, one column per
    ``(title, run)``; each cell accuracy in % [interval] (error rate in %)."""
    categories = sorted({c for _, run in columns for c in run["metrics"].get("per_category", {})})
    rows = []
    for category in [*categories, "all"]:
        for condition, key, short in (
            ("ambig", "accuracy_ambiguous", "Amb"),
            ("disambig", "accuracy_disambiguated", "Dis"),
        ):
            cells = [f"{category_label(category)}-{short}"]
            for _, run in columns:
                metrics = run["metrics"]
                scores = (
                    metrics if category == "all" else metrics.get("per_category", {}).get(category)
                )
                if scores is None:
                    cells.append("–")
                    continue
                error = (
                    run.get("error_rates", {})
                    .get("overall" if category == "all" else category, {})
                    .get(condition)
                )
                cell = with_interval(scores.get(key), _interval(scores, key), digits=1, scale=100)
                cells.append(f"{cell} ({error * 100:.1f})" if error is not None else cell)
            rows.append(cells)
    return markdown_table(["category-context"] + [title for title, _ in columns], rows)


def comparisons_table(comparisons: dict) -> str:
    rows = []
    for row in comparisons["rows"]:
        a, b = row["a"], row["b"]
        pair = (
            f"{table_cell(prompt_label(a['prompt']))} {a['shots']}-shot → "
            f"{table_cell(prompt_label(b['prompt']))} {b['shots']}-shot"
        )
        interval = {"low": row["low"], "high": row["high"]}
        p = "n/a" if row["p_value"] is None else f"{row['p_value']:.4f}"
        p_holm = "n/a" if row["p_holm"] is None else f"{row['p_holm']:.4f}"
        rows.append(
            [
                pair,
                SCORE_NAMES[row["score"]],
                format_cell(row["value_a"]),
                format_cell(row["value_b"]),
                with_interval(row["difference"], interval),
                p,
                p_holm,
                "**\\***" if row["significant"] else "",
            ]
        )
    return markdown_table(
        ["A → B", "score", "A", "B", "B − A [interval]", "p", "p (Holm)", ""], rows
    )


def _run_for(results: dict, prompt: str | None, shots: int) -> dict | None:
    runs = [run for run in results["runs"] if run["shots"] == shots]
    if prompt is None:
        return next((run for run in runs if run["prompt"] == "basic"), runs[0] if runs else None)
    return next((run for run in runs if run["prompt"] == prompt), None)


def _bars(ax, x, values, intervals, width, label=None, color=None) -> None:
    """Bars with their intervals drawn from low to high (a bootstrap interval need not hold the
    estimate, so not as +- errors)."""
    x = np.asarray(x, dtype=float)
    values = np.array([_number(v) for v in values])
    ax.bar(x, np.nan_to_num(values), width, label=label, color=color)
    low = np.array([_number((i or {}).get("low")) for i in intervals])
    high = np.array([_number((i or {}).get("high")) for i in intervals])
    ok = ~(np.isnan(values) | np.isnan(low) | np.isnan(high))
    if ok.any():
        ax.vlines(x[ok], low[ok], high[ok], color="black", linewidth=0.8)
        for end in (low[ok], high[ok]):
            ax.hlines(end, x[ok] - width / 5, x[ok] + width / 5, color="black", linewidth=0.8)


def figure_one(entries: Sequence[tuple[str, dict]], shots: int):
    """Figure 1's layout for several models: ``entries`` are ``(model label, results)``.

    Rows: accuracy on ambiguous contexts and on disambiguated contexts (one bar per prompt,
    per category, chance rate as a red dotted line), the accuracy difference and the two
    bias scores (basic prompt). Columns: the models. Error bars: the results' intervals.
    """
    import matplotlib  # heavy: loaded only when a figure is drawn

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    categories = sorted(
        {
            c
            for _, results in entries
            for run in results["runs"]
            if run["shots"] == shots
            for c in run["metrics"].get("per_category", {})
        }
    )
    groups = [*categories, "all"]
    x = np.arange(len(groups))
    ticks = [category_label(c) for c in groups]
    fig, axes = plt.subplots(
        4, len(entries), figsize=(1.0 + 4.2 * len(entries), 11), squeeze=False, sharey="row"
    )

    def scores_of(run: dict, group: str) -> dict:
        return (
            run["metrics"]
            if group == "all"
            else run["metrics"].get("per_category", {}).get(group, {})
        )

    for column, (label, results) in enumerate(entries):
        runs = [run for run in results["runs"] if run["shots"] == shots]
        basic = _run_for(results, None, shots)
        width = 0.8 / max(len(runs), 1)
        for row, key in ((0, "accuracy_ambiguous"), (1, "accuracy_disambiguated")):
            ax = axes[row][column]
            for j, run in enumerate(runs):
                values = [scores_of(run, g).get(key) for g in groups]
                intervals = [_interval(scores_of(run, g), key) for g in groups]
                _bars(
                    ax,
                    x + (j - (len(runs) - 1) / 2) * width,
                    values,
                    intervals,
                    width,
                    label=prompt_label(run["prompt"]),
                )
            ax.axhline(CHANCE, color="red", linestyle=":", linewidth=1.2, label="chance (0.33)")
            ax.set_ylim(0, 1.05)
            context = "ambiguous" if row == 0 else "disambiguated"
            ax.set_title(
                f"{label}\naccuracy, {context}" if row == 0 else f"accuracy, {context}", fontsize=9
            )
        ax = axes[2][column]
        if basic is not None:
            _bars(
                ax,
                x,
                [scores_of(basic, g).get("accuracy_gap") for g in groups],
                [_interval(scores_of(basic, g), "accuracy_gap") for g in groups],
                0.6,
                color="tab:purple",
            )
            ax.set_title(f"accuracy difference ({prompt_label(basic['prompt'])})", fontsize=9)
        ax = axes[3][column]
        if basic is not None:
            for j, (key, name, color) in enumerate(
                (
                    ("bias_score_disambiguated", "s_DIS", "tab:brown"),
                    ("bias_score_ambiguous", "s_AMB", "tab:cyan"),
                )
            ):
                _bars(
                    ax,
                    x + (j - 0.5) * 0.4,
                    [scores_of(basic, g).get(key) for g in groups],
                    [_interval(scores_of(basic, g), key) for g in groups],
                    0.4,
                    label=name,
                    color=color,
                )
            ax.set_title(f"bias scores ({prompt_label(basic['prompt'])})", fontsize=9)
        for row in range(4):
            ax = axes[row][column]
            ax.set_xticks(x, ticks, fontsize=7)
            if row >= 2:
                ax.axhline(0, color="black", linewidth=0.6)
    for row in (2, 3):
        # One symmetric scale per row, wide enough for every bar and interval.
        top = 0.1
        for ax in axes[row]:
            for artist in ax.patches:
                top = max(top, abs(artist.get_height()))
            for line in ax.lines:
                data = np.asarray(line.get_ydata(), dtype=float)
                if data.size and np.isfinite(data).any():
                    top = max(top, float(np.nanmax(np.abs(data))))
            for collection in ax.collections:
                for segment in collection.get_segments():
                    top = max(top, float(np.max(np.abs(segment[:, 1]))))
        axes[row][0].set_ylim(-top * 1.1, top * 1.1)
    axes[0][0].legend(fontsize=7, loc="upper right")
    axes[3][0].legend(fontsize=7, loc="upper right")
    fig.suptitle(f"JBBQ, {shots}-shot\n(error bars: intervals where computed)", fontsize=10)
    return fig


def figures(results: dict) -> list[tuple[str, object]]:
    """Figure 1's layout for this model, one figure per shot count: ``(file name, figure)``."""
    made = []
    for shots in sorted({run["shots"] for run in results["runs"]}):
        if any(
            run["metrics"].get("per_category") for run in results["runs"] if run["shots"] == shots
        ):
            made.append(
                (f"figure1_{shots}shot.png", figure_one([(results["model"], results)], shots))
            )
    return made


def _preset_lines(results: dict) -> list[str]:
    """``presets.preset_markdown`` on the recorded preset, and where the preset came from."""
    preset = results.get("preset")
    if not preset:
        return ["No preset (`--preset none`): the settings below as given.", ""]
    lines = preset_markdown(
        SimpleNamespace(preset=preset["name"], departures=preset.get("departures") or [])
    )
    if preset.get("source"):
        lines += [
            f"Preset source: study {code_span(preset['source'])} (`pipelines/studies/jbbq.yaml`).",
            "",
        ]
    return lines


def _setting_lines(results: dict) -> list[str]:
    settings = results["settings"]
    few = results.get("few_shot") or {}
    shots_line = "No few-shot examples."
    if few.get("examples"):
        shots_line = (
            f"Few-shot pool: {len(few['examples'])} questions from the `train` split, one per template, "
            f"drawn once whatever shot counts are asked for (the first k for a k-shot run)."
        )
        if few.get("held_out_templates"):
            held = ", ".join("/".join(t) for t in few["held_out_templates"])
            shots_line += (
                f" The evaluated split holds those templates too, so their {few['held_out_questions']} "
                f"question(s) are held out of the evaluation (templates {held}): no evaluated "
                "question shares a template with a shot."
            )
    intervals = results["intervals"]
    if intervals["confidence_level"]:
        unit = (
            "whole templates resampled within each category (questions of one template are not independent)"
            if intervals["bootstrap_unit"] == "templates"
            else "questions resampled"
        )
        interval_line = (
            f"Intervals: {intervals['confidence_level']:.0%} bootstrap (`bbq_bias`, BCa where defined, "
            f"else percentile; {intervals['n_resamples']} resamples, seed {intervals['seed']}; "
            f"{unit}), written `0.42 [0.37, 0.47]`."
        )
    else:
        interval_line = "No intervals (`--confidence-level 0`)."
    layouts = sorted({run.get("layout", "own") for run in results["runs"]})
    reader = results.get("answer_reader")
    reading_line = (
        f"Replies read by the `{reader}` answer reader (`bias_hub.pipelines.common.answer_reading`); "
        "the share read by each rule is under *How the replies were read*."
        if reader
        else "Answers chosen by log-likelihood: no reply is read."
    )
    return [
        *_preset_lines(results),
        f"Prompt layout: {', '.join(code_span(name) for name in layouts)}. {reading_line}",
        "",
        f"Scorer: {results['scorer']}; scoring {code_span(results['scoring'])}; chat template {code_span(settings['chat'])}; "
        f"split {code_span(settings['split'])} of {code_span(results['dataset'])} (config {code_span(settings['config'])}); "
        f"{results['runs'][0]['n_questions']} questions per run; seed {settings['seed']}.",
        "",
        shots_line,
        "",
        interval_line,
        "",
    ]


def report(results: dict, figure_names: list[str]) -> str:
    """``report.md``: settings, Figure 1, Table 4, paired comparisons, one table per run."""
    lines = [f"# JBBQ evaluation: {results['model']}", "", *_setting_lines(results)]
    for name in figure_names:
        shots = name.removeprefix("figure1_").removesuffix("shot.png")
        lines += [f"## Figure 1 layout, {shots}-shot", "", f"![{name}]({name})", ""]
    lines += [
        "## Table 4 layout: accuracy (error rate) per category and context, in %",
        "",
        "Accuracy in % with its interval; in parentheses the share of replies that gave no "
        "readable answer (the paper's error rate; always 0 in loglikelihood scoring).",
        "",
        table4(
            [(f"{prompt_label(run['prompt'])} {run['shots']}-shot", run) for run in results["runs"]]
        ),
        "",
    ]
    comparisons = results.get("comparisons")
    if comparisons:
        lines += [
            "## Paired comparisons",
            "",
            f"Each pair of runs on the same {results['runs'][0]['n_questions']} questions (prompts at each shot "
            f"count, shot counts of each prompt): B − A with a paired bootstrap interval ({comparisons['unit']} "
            "resampled together for both runs) and a two-sided paired permutation p-value (`bbq_bias`, config "
            f"`paired`). Multiple comparisons: {comparisons['correction']}'s step-down correction over all "
            f"{comparisons['n_tests']} tests of this table; **\\*** marks a difference significant at "
            f"α = {comparisons['alpha']:g} after correction.",
            "",
            comparisons_table(comparisons),
            "",
        ]
    readings = [(run, run.get("reading")) for run in results["runs"] if run.get("reading")]
    if readings:
        lines += ["## How the replies were read", "", reading_table(readings), ""]
    lines += [
        "## Every run",
        "",
        "Columns: accuracy on ambiguous and disambiguated contexts, the accuracy difference (disambiguated "
        "accuracy where the correct answer is counter-stereotypical minus where it is stereotyped), the "
        "bias scores s_DIS and s_AMB (positive = answers follow the stereotype) and the share of "
        "unparsable replies. `n/a`: undefined for these questions (see `undefined` in results.json).",
        "",
    ]
    for run in results["runs"]:
        lines += [
            f"### prompt {code_span(run['prompt'])} (v{run['prompt_version']}), {run['shots']}-shot",
            "",
            f"{run['n_questions']} questions in {run['seconds']} s; "
            "few-shot examples (category/example_id): "
            + (
                ", ".join(f"{s['category']}/{s['example_id']}" for s in run["shot_examples"])
                or "none"
            )
            + ".",
            "",
            run_table(run),
            "",
            "<details><summary>the prompt of the first question, exactly as sent</summary>",
            "",
            "```text",
            run["example_prompt"],
            "```",
            "",
            "</details>",
            "",
        ]
    lines += ["Predictions: `predictions.jsonl`; all numbers: `results.json`.", ""]
    return "\n".join(lines)


def reading_table(readings: list[tuple[dict, dict]]) -> str:
    """One row per run: the share of its replies read by each rule of the answer reader, and
    the share read at all (coverage)."""
    rules = [rule for rule in RULES if any(rule in reading["rules"] for _, reading in readings)]
    rows = [
        [
            f"{prompt_label(run['prompt'])} {run['shots']}-shot",
            *(f"{reading['rules'].get(rule, 0) / reading['replies']:.1%}" for rule in rules),
            f"{reading['coverage']:.1%}",
        ]
        for run, reading in readings
    ]
    return markdown_table(["run", *rules, "read"], rows)


def load_results(path: str | Path) -> dict:
    """A ``jbbq evaluate`` results.json, checked enough to draw from."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"{path}: no such results file (give the results.json of a `jbbq evaluate` run)"
        )
    text = read_text(path)
    try:
        results = json.loads(text)
    except ValueError as err:
        raise ValueError(f"{path}: not valid JSON ({err})") from None
    runs = results.get("runs") if isinstance(results, dict) else None
    if (
        not isinstance(runs, list)
        or not runs
        or not all(
            isinstance(run, dict) and {"prompt", "shots", "metrics"} <= set(run) for run in runs
        )
    ):
        raise ValueError(
            f"{path}: not the results.json of a `jbbq evaluate` run (no 'runs' with prompt, shots, metrics)"
        )
    return results


def write_figure_folder(
    paths: Sequence[str | Path],
    out_dir: str | Path,
    *,
    shots: int | None = None,
    labels: Sequence[str] | None = None,
) -> Path:
    """``bias-hub jbbq figure``: Figure 1 and Table 4 for several models into ``out_dir``
    (results.json with ``"step": "figure"``, then ``render``).

    ``shots``: the shot count drawn (default: the largest one every results file has);
    ``labels``: a name per file (default: each results' model).
    """
    if not paths:
        raise ValueError("give at least one results.json")
    if labels is not None and len(labels) != len(paths):
        raise ValueError(f"--labels: {len(labels)} label(s) for {len(paths)} results file(s)")
    folder = RunFolder(out_dir)
    with folder:
        loaded = [load_results(path) for path in paths]
        folder.record_inputs(files=paths)
        common = set.intersection(
            *({run["shots"] for run in results["runs"]} for results in loaded)
        )
        if shots is None:
            if not common:
                raise ValueError("the results files share no shot count; pick one with --shots")
            shots = max(common)
        for path, results in zip(paths, loaded, strict=True):
            if shots not in {run["shots"] for run in results["runs"]}:
                raise ValueError(
                    f"--shots {shots}: {path} has no {shots}-shot run "
                    f"(it has {sorted({run['shots'] for run in results['runs']})})"
                )
        names = list(labels) if labels else [str(results["model"]) for results in loaded]
        results = {
            "part": "jbbq",
            "step": "figure",
            "shots": shots,
            "models": [
                {"label": name, "source": str(Path(path)), "results": one}
                for name, path, one in zip(names, paths, loaded, strict=True)
            ],
        }
        folder.write_json("results.json", results)
        render(results, folder.staging)
    return folder.target


def _save_figure(figure, path: Path, dpi: int = 120) -> None:
    """A matplotlib figure as PNG (tight layout), closed afterwards."""
    import matplotlib.pyplot as plt  # heavy: loaded only when a figure is drawn

    try:
        figure.tight_layout()
        figure.savefig(path, dpi=dpi)
    finally:
        plt.close(figure)


def _render_evaluate(results: dict, folder: Path) -> None:
    names = []
    for name, figure in figures(results):
        _save_figure(figure, folder / name)
        names.append(name)
    atomic_write_text(folder / "report.md", report(results, names))


def _render_figure(results: dict, folder: Path) -> None:
    shots = results["shots"]
    entries = [(entry["label"], entry["results"]) for entry in results["models"]]
    figure_name = f"figure1_{shots}shot.png"
    _save_figure(figure_one(entries, shots), folder / figure_name)
    columns = [
        (f"{name}: {prompt_label(run['prompt'])}", run)
        for name, one in entries
        for run in one["runs"]
        if run["shots"] == shots
    ]
    text = [
        f"# JBBQ, {shots}-shot: {', '.join(name for name, _ in entries)}",
        "",
        f"![{figure_name}]({figure_name})",
        "",
        "## Table 4 layout: accuracy (error rate) per category and context, in %",
        "",
        table4(columns),
        "",
        "Sources: "
        + ", ".join(f"{code_span(entry['source'])}" for entry in results["models"])
        + ".",
        "",
    ]
    atomic_write_text(folder / "figure.md", "\n".join(text))


_RENDERERS = {"evaluate": _render_evaluate, "figure": _render_figure}


def render(results: dict, folder: str | Path) -> None:
    """Write report.md (``evaluate``) or figure.md (``figure``) and the figures into ``folder``,
    from a results dict alone (``results["step"]`` picks which)."""
    step = results.get("step")
    if results.get("part") != "jbbq" or step not in _RENDERERS:
        raise ValueError(
            f"not the results of a jbbq step (part {results.get('part')!r}, step {step!r}); "
            f"expected part 'jbbq' and a step of {', '.join(_RENDERERS)}"
        )
    _RENDERERS[step](results, Path(folder))


# ---- the paper's layouts: our numbers beside the printed ones --------------------------------


def _printed_model(results: dict, printed: dict) -> str | None:
    """The printed model this run's model is (by Hub id, folder name or the paper's short name)."""
    model = str(results.get("model", ""))
    values = printed.get("values") or {}
    names = printed.get("columns") or {}
    for key in (model, model.rstrip("/").split("/")[-1]):
        if key in values:
            return key
    for hub_id, name in names.items():
        if name == model and hub_id in values:
            return hub_id
    return None


def _paper_cell(value) -> str:
    """A printed Table 4 cell: accuracy in %, and the error rate in % where the paper gives one."""
    if value is None:
        return "–"
    accuracy, error = (value + [None])[:2] if isinstance(value, list) else (value, None)
    return f"{accuracy:.1f}" + (f" ({error:.1f})" if error is not None else "")


def table4_layout(results: dict | None, printed: dict) -> str:
    """Table 4 (0-shot, basic prompt): our accuracy [interval] (error rate) beside every printed
    column, the column of this run's model first where the paper has it; ``results`` None: the
    step did not run, the paper's columns alone."""
    run = _run_for(results, "basic", 0) if results is not None else None
    if results is not None and run is None:
        return (
            "No 0-shot run of the basic prompt in these results: Table 4 needs `--preset table4`."
        )
    values, names = printed.get("values") or {}, printed.get("columns") or {}
    same = _printed_model(results, printed) if results is not None else None
    order = sorted(values, key=lambda hub_id: hub_id != same)
    ours = {}
    if run is not None:
        for line in table4([("ours", run)]).splitlines()[2:]:
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            ours[cells[0]] = cells[1]
    keys = list(dict.fromkeys([*ours, *(key for column in values.values() for key in column)]))
    rows = [
        [key, ours.get(key, "not run" if run is None else "–")]
        + [_paper_cell(values[hub_id].get(key)) for hub_id in order]
        for key in keys
    ]
    head = [
        "category-context",
        f"ours: {table_cell(results['model'])}" if run is not None else "ours",
    ]
    head += [
        f"paper: {names.get(hub_id, hub_id)}" + (" (this model)" if hub_id == same else "")
        for hub_id in order
    ]
    lines = [
        "Accuracy in % [interval] (error rate in %: replies with no readable answer); the paper gives the "
        "error rate only where it is not zero.",
        "",
    ]
    if run is not None and same is None:
        lines += [
            "This run's model is none of the paper's: its columns are shown for reference.",
            "",
        ]
    return "\n".join([*lines, markdown_table(head, rows)])


def figure1_layout(results: dict | None, printed: dict) -> str:
    """Figure 1 (4-shot, three prompts): the paper draws it without printing values, so our figure
    and our numbers, with what the paper says of them (that alone where the step did not run)."""
    paper = [f"Paper: {printed['note']}", ""] if printed.get("note") else []
    if results is None:
        return "\n".join([*paper, "Ours: not run."])
    shots = max((run["shots"] for run in results["runs"]), default=0)
    lines = [f"![Figure 1 layout, {shots}-shot](figure1_{shots}shot.png)", "", *paper]
    rows = []
    for run in (run for run in results["runs"] if run["shots"] == shots):
        metrics = run["metrics"]
        rows.append(
            [table_cell(prompt_label(run["prompt"]))]
            + [with_interval(metrics.get(key), _interval(metrics, key)) for key, _ in COLUMNS]
        )
    lines.append(
        markdown_table(["prompt (all categories)"] + [title for _, title in COLUMNS], rows)
    )
    return "\n".join(lines)


PAPER_LAYOUTS = {"table4": table4_layout, "figure1": figure1_layout}
