"""``report.md``, the paper's Figure 1 and Table 4 for one or several JBBQ evaluations.

``render(results, folder)`` is the one writer of report.md and the figures, from the
results.json of ``jbbq evaluate`` or ``jbbq figure`` alone, so a report can be drawn again
without re-running anything. The text is in ``jbbq/templates/``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bias_hub.builders.shared.files import read_text
from bias_hub.pipelines.common.answer_reading import RULES
from bias_hub.pipelines.common.render import (
    draw_intervals,
    macros,
    paper_layouts,
    pyplot,
    save_figure,
    write_report,
)
from bias_hub.pipelines.common.run_folder import RunFolder

__all__ = [
    "CHANCE",
    "PAPER_LAYOUTS",
    "figure_one",
    "load_results",
    "render",
    "run_table",
    "table4",
    "write_figure_folder",
]

CHANCE = 1 / 3
TABLES = "jbbq/templates/tables.md.j2"


def _number(value: object) -> float:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return math.nan


def run_table(run: dict) -> str:
    """One run (prompt x shots): a row per category, then all categories together."""
    return macros(TABLES).run_table(run)


def table4(columns: Sequence[tuple[str, dict]]) -> str:
    """The paper's Table 4 layout: rows ``<category>-Amb`` / ``-Dis``, one column per
    ``(title, run)``; each cell accuracy in % [interval] (error rate in %)."""
    return macros(TABLES).table4(columns)


def figure_one(entries: Sequence[tuple[str, dict]], shots: int):
    """Figure 1's layout for several models: ``entries`` are ``(model label, results)``.

    Rows: accuracy on ambiguous contexts and on disambiguated contexts (one bar per prompt,
    per category, chance rate as a red dotted line), the accuracy difference and the two
    bias scores (basic prompt). Columns: the models. Error bars: the results' intervals.
    """
    plt = pyplot()

    drawn = [run for _, results in entries for run in results["runs"] if run["shots"] == shots]
    categories = sorted({c for run in drawn for c in run["metrics"].get("per_category", {})})
    groups = [*categories, "all"]
    x = np.arange(len(groups))
    labels = macros(TABLES)
    ticks = [labels.category_label(c) for c in groups]
    fig, axes = plt.subplots(
        4, len(entries), figsize=(1.0 + 4.2 * len(entries), 11), squeeze=False, sharey="row"
    )

    def bars(ax, run: dict, key: str, offset: float, width: float, label=None, color=None):
        """``key`` of ``run`` per group as bars (an undefined score as none), with its intervals."""
        per_category = run["metrics"].get("per_category", {})
        scores = [run["metrics"] if g == "all" else per_category.get(g, {}) for g in groups]
        values = np.nan_to_num([_number(s.get(key)) for s in scores])
        ax.bar(x + offset, values, width, label=label, color=color)
        intervals = [(s.get("confidence_intervals") or {}).get(key) for s in scores]
        draw_intervals(ax, x + offset, intervals, cap=2 * width / 5)

    for column, (label, results) in enumerate(entries):
        runs = [run for run in results["runs"] if run["shots"] == shots]
        basic = next((run for run in runs if run["prompt"] == "basic"), runs[0] if runs else None)
        width = 0.8 / max(len(runs), 1)
        for row, key in ((0, "accuracy_ambiguous"), (1, "accuracy_disambiguated")):
            ax = axes[row][column]
            for j, run in enumerate(runs):
                offset = (j - (len(runs) - 1) / 2) * width
                bars(ax, run, key, offset, width, label=labels.prompt_label(run["prompt"]))
            ax.axhline(CHANCE, color="red", linestyle=":", linewidth=1.2, label="chance (0.33)")
            ax.set_ylim(0, 1.05)
            context = "ambiguous" if row == 0 else "disambiguated"
            ax.set_title(
                f"{label}\naccuracy, {context}" if row == 0 else f"accuracy, {context}", fontsize=9
            )
        if basic is not None:
            prompt = labels.prompt_label(basic["prompt"])
            bars(axes[2][column], basic, "accuracy_gap", 0, 0.6, color="tab:purple")
            axes[2][column].set_title(f"accuracy difference ({prompt})", fontsize=9)
            for j, (key, name, color) in enumerate(
                (
                    ("bias_score_disambiguated", "s_DIS", "tab:brown"),
                    ("bias_score_ambiguous", "s_AMB", "tab:cyan"),
                )
            ):
                bars(axes[3][column], basic, key, (j - 0.5) * 0.4, 0.4, label=name, color=color)
            axes[3][column].set_title(f"bias scores ({prompt})", fontsize=9)
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
        counts = [{run["shots"] for run in results["runs"]} for results in loaded]
        if shots is None:
            if not set.intersection(*counts):
                raise ValueError("the results files share no shot count; pick one with --shots")
            shots = max(set.intersection(*counts))
        for path, has in zip(paths, counts, strict=True):
            if shots not in has:
                raise ValueError(
                    f"--shots {shots}: {path} has no {shots}-shot run (it has {sorted(has)})"
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


def _render_evaluate(results: dict, folder: Path) -> None:
    """report.md and Figure 1's layout for this model, one figure per shot count."""
    names = []
    for shots in sorted({run["shots"] for run in results["runs"]}):
        runs = [run for run in results["runs"] if run["shots"] == shots]
        if any(run["metrics"].get("per_category") for run in runs):
            names.append(f"figure1_{shots}shot.png")
            save_figure(figure_one([(results["model"], results)], shots), folder / names[-1])
    write_report(
        folder, "jbbq/templates/evaluate.md.j2", results=results, figures=names, rules=RULES
    )


def _render_figure(results: dict, folder: Path) -> None:
    shots = results["shots"]
    entries = [(entry["label"], entry["results"]) for entry in results["models"]]
    name = f"figure1_{shots}shot.png"
    save_figure(figure_one(entries, shots), folder / name)
    write_report(
        folder, "jbbq/templates/figure.md.j2", name="figure.md", results=results, figure=name
    )


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


PAPER_LAYOUTS = paper_layouts(
    "jbbq/templates/paper.md.j2", "table4", "figure1", printed_model=_printed_model
)
