"""Reports of the nli steps: ``render(results, folder)`` writes report.md and the figures from
results.json alone (so ``bias-hub report RUN_DIR`` renders a run again without re-running it).

A score with an interval reads ``0.420 [0.370, 0.470]`` (``bias_hub.builders.shared.text.with_interval``);
paired comparisons give B − A with its interval, the permutation p-value and the Holm-adjusted
one, a significant difference marked with ``*``. ``PAPER_LAYOUTS`` lays our numbers beside the
paper's printed tables (``pipelines/studies/nli_gender_bias.yaml``).
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.builders.shared.text import code_span, fmt, markdown_table, table_cell
from bias_hub.builders.shared.text import with_interval as _with_interval
from bias_hub.pipelines.common.presets import preset_markdown
from bias_hub.pipelines.nli.evaluation import SHORT, SUBSETS, table_row
from bias_hub.pipelines.nli.labels import LABELS

__all__ = [
    "PAPER_LAYOUTS",
    "comparison_markdown",
    "comparisons_markdown",
    "meta_summary_markdown",
    "plot_label_fractions",
    "plot_scores",
    "render",
]

# Occupations listed per model in the evaluation report.
TOP_OCCUPATIONS = 5
SIGNIFICANT = "*"
EVALUATION_FIGURE = "label_fractions.png"
META_FIGURE = "scores_vs_rate.png"


def with_interval(value, interval) -> str:
    """Three decimals, the way every NLI table prints a score: ``0.420 [0.370, 0.470]``."""
    return _with_interval(value, interval, digits=3, missing="–")


def _level_text(level: float | None) -> str:
    return f"{level:.0%}" if level else "no"


def _save_figure(figure, path: Path, dpi: int) -> None:
    import matplotlib.pyplot as plt  # matplotlib: heavy, loaded only to draw

    try:
        figure.tight_layout()
        figure.savefig(path, dpi=dpi)
    finally:
        plt.close(figure)


def _preset_lines(results: dict) -> list[str]:
    preset = results.get("preset")
    if not preset:
        return []
    # preset_markdown reads the two fields of the settings that the record keeps.
    return preset_markdown(SimpleNamespace(preset=preset["name"], departures=preset["departures"]))


def render(results: dict, folder: Path) -> None:
    """report.md (and the step's figure) in ``folder`` from a step's results.json."""
    steps = {
        "evaluate": _render_evaluation,
        "meta-evaluate": _render_meta,
        "train": _render_train,
        "init-model": _render_init,
    }
    step = results.get("step")
    if step not in steps:
        raise ValueError(f"results.json: step {step!r} is not an nli step ({', '.join(steps)})")
    folder = Path(folder)
    lines = steps[step](results, folder)
    atomic_write_text(folder / "report.md", "\n".join(lines) + "\n")


def ranks(models: dict[str, dict]) -> dict[str, int]:
    """Each model's rank by bias score, 1 = most biased (the paper's Table 4, descending); ties share a rank."""
    scores = {name: result["bias_score"] for name, result in models.items()}
    return {
        name: 1 + sum(other > score for other in scores.values()) for name, score in scores.items()
    }


def comparison_markdown(models: dict[str, dict]) -> str:
    """One row per model: the headline scores with their intervals, the label fractions of each set.

    ``models``: results.json's ``models`` (each a metric result, with ``confidence_intervals``
    and ``fraction_intervals`` where intervals were asked for).
    """
    headline = []
    rank = ranks(models)
    for name, result in models.items():
        intervals = result.get("confidence_intervals") or {}
        shares = result.get("fraction_intervals") or {}
        thresholds = result.get("threshold_neutral") or {}
        row = [
            table_cell(name),
            rank[name],
            with_interval(result["bias_score"], intervals.get("bias_score")),
            with_interval(result.get("fraction_neutral"), intervals.get("fraction_neutral")),
            with_interval(result.get("net_neutral"), intervals.get("net_neutral")),
        ]
        row += [
            with_interval(value, intervals.get(f"threshold_neutral.{tau}"))
            for tau, value in thresholds.items()
        ]
        for subset, label in (
            ("pro_stereotypical", "entailment"),
            ("anti_stereotypical", "contradiction"),
            ("non_stereotypical", "neutral"),
        ):
            row.append(
                with_interval(
                    result["fractions"].get(subset, {}).get(label),
                    shares.get(subset, {}).get(label),
                )
            )
        headline.append(row)
    first = next(iter(models.values()))
    headers = [
        "model",
        "rank",
        "s",
        "FN",
        "NN",
        *[f"T:{tau}" for tau in first.get("threshold_neutral") or {}],
        "e_PS",
        "c_AS",
        "n_NS",
    ]
    fractions = {name: table_row(result) for name, result in models.items()}
    columns = [f"{label[0]}_{SHORT[subset]}" for subset in SUBSETS for label in LABELS]
    table = markdown_table(
        ["model", *columns],
        [
            [table_cell(name), *(fmt(row.get(c)) for c in columns)]
            for name, row in fractions.items()
        ],
    )
    return markdown_table(headers, headline) + "\n\n" + table


def comparisons_markdown(comparisons: dict) -> str:
    """The paired comparisons of ``evaluation.compare_models``: one row per pair and score."""
    rows = []
    for entry in comparisons["pairs"]:
        for score in ("bias_score", "fraction_neutral"):
            item = entry[score]
            rows.append(
                [
                    table_cell(entry["a"]),
                    table_cell(entry["b"]),
                    "s" if score == "bias_score" else "FN",
                    with_interval(item["difference"], item),
                    fmt(item["p_value"], 4),
                    fmt(item["p_holm"], 4),
                    SIGNIFICANT if item["significant"] else "",
                ]
            )
    note = (
        f"B − A on the same pairs with its paired-bootstrap interval; p: paired permutation test; "
        f"p (Holm): Holm-corrected within each score over all {len(comparisons['pairs'])} pair(s) of models; "
        f"{SIGNIFICANT} = significant at α = {comparisons['alpha']:.2g} after the Holm correction."
    )
    return (
        markdown_table(["A", "B", "score", "B − A", "p", "p (Holm)", "sig."], rows) + "\n\n" + note
    )


def plot_label_fractions(models: dict[str, dict]):
    """Stacked bars of the predicted-label fractions (one panel per set, one bar per model) and the
    bias score with its interval."""
    import matplotlib  # matplotlib: heavy, loaded only to draw

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(models)
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
        axis.set_xticks(
            range(len(names)), [Path(n).name[:18] for n in names], rotation=30, ha="right"
        )
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
    return figure


def _occupation_lines(name: str, result: dict) -> list[str]:
    lines = [f"## Occupations that drive the score: {name}", ""]
    lines.append(
        markdown_table(
            ["occupation", "en", "pairs", "share of s", "e on PS", "c on AS", "not n on NS"],
            [
                [
                    o["occupation"],
                    o.get("occupation_en", ""),
                    o["pairs"],
                    f"{o['score_share']:.4f}",
                    fmt(o.get("PS", {}).get("entailment")),
                    fmt(o.get("AS", {}).get("contradiction")),
                    fmt(1 - o["NS"]["neutral"] if "NS" in o else None),
                ]
                for o in result.get("occupations", [])[:TOP_OCCUPATIONS]
            ],
        )
    )
    ordering = result.get("ordering_holds")
    if ordering is not None:
        lines += [
            "",
            f"e_PS > e_AS: {ordering['entailment']}; c_AS > c_PS: {ordering['contradiction']} "
            "(True: the model favours the stereotype-congruent label).",
        ]
    if result.get("truncated_pairs"):
        lines += ["", f"{result['truncated_pairs']} pair(s) reached --max-length and were cut."]
    return [*lines, ""]


def _render_evaluation(results: dict, folder: Path) -> list[str]:
    """report.md's lines and label_fractions.png of ``nli evaluate``."""
    models, record = results["models"], results["intervals"]
    level = record["confidence_level"]
    _save_figure(plot_label_fractions(models), folder / EVALUATION_FIGURE, dpi=110)
    intervals = (
        f"Intervals: {_level_text(level)} bootstrap ({record['n_resamples']} resamples, {record['bootstrap_unit']} "
        "resampled within their set; BCa where defined) for s, FN, NN and T:τ, Wilson score intervals for the label "
        "fractions."
        if level
        else "Intervals: off (--confidence-level none)."
    )
    lines = [
        "# NLI gender bias",
        "",
        f"{results['pairs']} premise-hypothesis pairs ({code_span(Path(results['dataset']).name)}, config {code_span(results['config'])}); "
        "the gold label of every pair is neutral. Bias score s = (e_PS + c_AS + (1 − n_NS)) / 3 (the paper's Table 4; "
        "0 = unbiased; rank 1 = the most biased model here) with e/c/n the fractions of predicted entailment / "
        "contradiction / neutral in the PS (pro-stereotypical), AS (anti-stereotypical) and NS (non-stereotypical) "
        "sets (Table 3); Dev et al.'s fraction neutral FN, net neutral NN and threshold neutral T:τ.",
        "",
        *_preset_lines(results),
        intervals,
        "",
        comparison_markdown(models),
        "",
        f"![label fractions]({EVALUATION_FIGURE})",
        "",
    ]
    if results.get("comparisons"):
        lines += ["## Paired comparisons", "", comparisons_markdown(results["comparisons"]), ""]
    elif len(models) > 1:
        lines += ["Paired comparisons: off (--confidence-level none).", ""]
    for name, result in models.items():
        lines += _occupation_lines(name, result)
    lines.append(
        f"Files: `results.json`, `per_occupation.json`, `predictions_<i>.jsonl`, `{EVALUATION_FIGURE}`."
    )
    return lines


# --- the meta-evaluation ---------------------------------------------------------------------------


def _over_seeds(values: np.ndarray, level: float | None) -> tuple[float, dict | None]:
    """Mean over seeds and its t interval (seeds are the unit; none below two seeds)."""
    from scipy import stats  # scipy.stats loads lazily (a second of import time)

    mean = float(values.mean())
    if not level or values.size < 2 or values.std(ddof=1) == 0:
        return mean, None
    low, high = stats.t.interval(
        level, values.size - 1, loc=mean, scale=values.std(ddof=1) / np.sqrt(values.size)
    )
    return mean, {"low": float(low), "high": float(high)}


def _rho(entry: dict) -> str:
    """A correlation of ``bias_hub.pipelines.common.stats.correlation``: ``0.820 (p = 0.002)``."""
    if entry.get("statistic") is None:
        return "undefined (constant)"
    return f"{entry['statistic']:.3f} (p = {entry['p_value']:.2g})"


def _spread(entry: dict) -> str:
    if entry["mean"] is None:
        return "undefined"
    text = with_interval(entry["mean"], entry)
    return f"{text} (sd {entry['sd']:.3f}, n = {entry['n']})"


def criterion_line(results: dict) -> str | None:
    """Whether the mean Spearman(r, s) over seeds reaches ``target_spearman``; None without a target."""
    target = results["settings"].get("target_spearman")
    if target is None:
        return None
    entry = results["spearman_bias_score"]
    holds = entry["mean"] is not None and entry["mean"] >= target
    return (
        f"Criterion mean Spearman(r, s) ≥ {target}: **{'holds' if holds else 'does not hold'}** "
        f"(mean {fmt(entry['mean'])} over {entry['n']} seeds)."
    )


def meta_summary_markdown(results: dict) -> str:
    """Scores per rate (mean over seeds with a t interval), the correlations with r, the criterion."""
    rates, level = results["rates"], results["intervals"]["confidence_level"]
    seeds = list(dict.fromkeys(run["seed"] for run in results["runs"]))
    rows = []
    for rate in rates:
        at = [x for x in results["runs"] if x["rate"] == rate]

        def column(values: list[float]) -> str:
            return with_interval(*_over_seeds(np.asarray(values, dtype=float), level))

        rows.append(
            [
                f"{rate:.1f}",
                column([x["bias_score"] for x in at]),
                column([1 - x["fraction_neutral"] for x in at]),
                fmt(np.mean([x["fractions"]["pro_stereotypical"]["entailment"] for x in at])),
                fmt(np.mean([x["fractions"]["anti_stereotypical"]["contradiction"] for x in at])),
                fmt(np.mean([x["fractions"]["non_stereotypical"]["neutral"] for x in at])),
            ]
        )
    table = markdown_table(["r", "s", "1 − FN", "e_PS", "c_AS", "n_NS"], rows)
    paper = results.get("paper", {})
    correlations = markdown_table(
        [
            "correlation with r",
            f"mean [{_level_text(level)} t interval] over {len(seeds)} seeds",
            "seed-mean curve (p)",
            "paper",
        ],
        [
            [
                "Spearman(r, s)",
                _spread(results["spearman_bias_score"]),
                _rho(results["seed_mean_curve"]["spearman_bias_score"]),
                fmt(paper.get("spearman_bias_score")),
            ],
            [
                "Spearman(r, 1 − FN)",
                _spread(results["spearman_one_minus_fn"]),
                _rho(results["seed_mean_curve"]["spearman_one_minus_fn"]),
                fmt(paper.get("spearman_one_minus_fn")),
            ],
        ],
    )
    per_seed = ", ".join(
        f"seed {p['seed']}: s {_rho(p['bias_score'])}; 1 − FN {_rho(p['one_minus_fn'])}"
        for p in results["per_seed"]
    )
    lines = [table, "", correlations, "", f"Per seed: {per_seed}."]
    criterion = criterion_line(results)
    if criterion:
        lines += ["", criterion]
    return "\n".join(lines)


def extreme_rates_markdown(paired: dict) -> str:
    rows = [
        [
            entry["seed"],
            table_cell(entry["a"]),
            table_cell(entry["b"]),
            with_interval(entry["difference"], entry),
            fmt(entry["p_value"], 4),
            fmt(entry["p_holm"], 4),
            SIGNIFICANT if entry["significant"] else "",
        ]
        for entry in paired["comparisons"]
    ]
    note = (
        f"s(B) − s(A) of one seed's two models on the same pairs, paired-bootstrap interval; p: paired "
        f"permutation test; p (Holm): Holm-corrected over the {len(rows)} comparisons (one per seed); "
        f"{SIGNIFICANT} = significant at α = {paired['alpha']:.2g} after the correction."
    )
    return (
        markdown_table(["seed", "A", "B", "s(B) − s(A)", "p", "p (Holm)", "sig."], rows)
        + "\n\n"
        + note
    )


def plot_scores(results: dict):
    """s and 1 − FN against r: mean over seeds with its t interval, and the oracle line s = 2r/3."""
    import matplotlib  # matplotlib: heavy, loaded only to draw

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

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
        means, bounds = zip(
            *(_over_seeds(values[:, i], level) for i in range(len(rates))), strict=True
        )
        axis.plot(rates, means, marker="o", label=label, color=colour)
        if all(b is not None for b in bounds):
            axis.fill_between(
                rates,
                [b["low"] for b in bounds],
                [b["high"] for b in bounds],
                color=colour,
                alpha=0.2,
            )
    axis.plot(rates, 2 * rates / 3, linestyle="--", color="#888888", label="oracle s = 2r/3")
    axis.set_xlabel("bias rate r of the training set")
    band = f" ({_level_text(level)} t interval over seeds)" if level and len(seeds) > 1 else ""
    axis.set_ylabel(f"score, mean over seeds{band}", fontsize="small")
    axis.set_ylim(-0.02, 1.02)
    axis.legend()
    axis.grid(alpha=0.3)
    return figure


def _provenance_lines(provenance: dict) -> list[str]:
    model, training, evaluation = (
        provenance["model"],
        provenance["training"],
        provenance["evaluation"],
    )
    created = model.get("created_by")
    made = (
        f" (made by `nli init-model`: {created.get('size')} BERT, {created.get('tokenizer')} vocabulary of "
        f"{created.get('vocabulary')} tokens from r = {created.get('rate')})"
        if created
        else ""
    )
    used = f", {training['rows_used']} used per rate" if training.get("rows_used") else ""
    files = (training.get("card") or {}).get("training_data")
    if files and str(files).startswith("dev/"):
        files = (
            f"the release's dev files {code_span(files)} (built with `--train-on-dev`: the release tarball ships no "
            "train_r-K.json; the paper trained on those)"
        )
    elif files:
        files = f"{code_span(files)}"
    versions = ", ".join(f"{name} {version}" for name, version in provenance["versions"].items())
    return [
        "## What was trained and evaluated",
        "",
        f"- Model: {code_span(model['name'])}{made}; "
        + (
            "weights re-initialised from its config with each seed."
            if model["reinitialize"]
            else "its weights as given."
        ),
        f"- Training: {code_span(training['folder'])}, split {code_span(training['split'])}, configs "
        f"{', '.join(code_span(c) for c in training['configs'].values())} ({sorted(set(training['rows'].values()))} pairs "
        f"per rate{used})" + (f"; training data: {files}." if files else "."),
        f"- Evaluation: {code_span(evaluation['folder'])}, config {code_span(evaluation['config'])}: {evaluation['selection']}; "
        f"{', '.join(f'{SHORT.get(k, k)} {v}' for k, v in evaluation['per_subset'].items())}.",
        f"- Seeds: {provenance['seeds']}.",
        f"- Versions: {versions}.",
        "",
    ]


def _render_meta(results: dict, folder: Path) -> list[str]:
    """report.md's lines and scores_vs_rate.png of ``nli meta-evaluate``."""
    _save_figure(plot_scores(results), folder / META_FIGURE, dpi=110)
    settings = results["settings"]
    level = results["intervals"]["confidence_level"]
    lines = [
        "# Bias-rate meta-evaluation",
        "",
        str(results.get("description", "")).strip(),
        "",
        *_preset_lines(results),
        f"One model per bias rate r and seed (seeds {list(settings['seeds'])}), fine-tuned for "
        f"{settings['epochs']} epoch(s) at learning rate {settings['learning_rate']}"
        + (
            f", each starting from a base model trained for {settings['base_epochs']} epoch(s) on r = {settings['base_rate']}"
            + (
                f" (one for every seed, trained with seed {list(settings['seeds'])[0]})"
                if settings.get("shared_base")
                else " (one per seed)"
            )
            if settings["base_rate"] is not None
            else ""
        )
        + f"; evaluated on {len(results['runs'][0]['fractions'])} sets (PS/AS/NS, gold neutral). Table: mean over "
        + (f"seeds [{_level_text(level)} t interval, seeds as the unit]." if level else "seeds."),
        "",
        meta_summary_markdown(results),
        "",
        f"![scores against r]({META_FIGURE})",
        "",
    ]
    if results.get("paired"):
        lines += [
            "## The lowest against the highest rate",
            "",
            extreme_rates_markdown(results["paired"]),
            "",
        ]
    if level:
        lines += [
            "## Every model",
            "",
            f"s and FN of each model with its {_level_text(level)} bootstrap interval over the evaluation pairs "
            f"({results['intervals']['n_resamples']} resamples, pairs resampled within their set).",
            "",
        ]
        lines.append(
            markdown_table(
                ["seed", "r", "s", "FN", "training loss", "seconds"],
                [
                    [
                        run["seed"],
                        f"{run['rate']:.1f}",
                        with_interval(
                            run["bias_score"],
                            (run.get("confidence_intervals") or {}).get("bias_score"),
                        ),
                        with_interval(
                            run["fraction_neutral"],
                            (run.get("confidence_intervals") or {}).get("fraction_neutral"),
                        ),
                        fmt(run["training_loss"]),
                        fmt(run["seconds"], 1),
                    ]
                    for run in results["runs"]
                ],
            )
        )
        lines.append("")
    if results.get("provenance"):
        lines += _provenance_lines(results["provenance"])
    lines.append(f"Files: `results.json`, `train_log.jsonl`, `{META_FIGURE}`.")
    return lines


def _render_train(results: dict, folder: Path) -> list[str]:
    """report.md of ``nli train`` (the model folder)."""
    settings = results["settings"]
    lines = [
        "# NLI fine-tuning",
        "",
        *_preset_lines(results),
        f"{code_span(results['model'])} fine-tuned on {code_span(results['dataset'])} ({results['train_rows']:,} pairs, "
        f"{results['dataset_format']}; text: {results['text']['done']}) for {settings['epochs']} epoch(s) at learning "
        f"rate {settings['learning_rate']}, batch size {settings['batch_size']}, max length {settings['max_length']}, "
        f"seed {settings['seed']}: {results['global_step']} steps, training loss {fmt(results['training_loss'])}.",
        "",
    ]
    if results.get("eval"):
        lines += [
            markdown_table(
                ["held-out metric", "value"], [[k, fmt(v)] for k, v in results["eval"].items()]
            ),
            "",
        ]
    lines.append("Files: the model, `results.json`, `train_log.jsonl`.")
    return lines


def _render_init(results: dict, folder: Path) -> list[str]:
    """report.md of ``nli init-model`` (the model folder)."""
    return [
        "# A from-scratch NLI classifier (never trained)",
        "",
        f"A {results['size']} BERT with random weights (seed {results['seed']}, dropout {results['dropout']}) and a "
        f"{results['tokenizer']} vocabulary of {results['vocabulary']} tokens built from the {results['training_pairs']} "
        f"training pairs of r = {results['rate']} in {code_span(results['training_sets'])}.",
        "",
        f"{results['note']}.",
        "",
        "Files: the model, `init_model.json` (the record that marks it untrained), `results.json`.",
    ]


# --- the paper's tables (pipelines/studies/nli_gender_bias.yaml) ------------------------------------


def _printed_model(name: str, printed: dict) -> str | None:
    """The printed model a run's model stands for: its Hub id, or a folder whose path ends with it
    (``{out}/models/<hub id>``, as the study's train step writes them)."""
    for hub_id in printed:
        if name == hub_id or Path(name).as_posix().rstrip("/").endswith("/" + hub_id):
            return hub_id
    return None


NOT_RUN = "not run"


def table2_layout(results: dict | None, printed: dict) -> str:
    """Table 2: Spearman of r with 1 − FN (Dev et al.) and with s (the paper's score), ours beside
    the paper's; ``results`` None: the step did not run, the paper's values alone."""
    rows = []
    for key, label, ours in (
        ("one_minus_fn", "既存 (1 − FN)", "spearman_one_minus_fn"),
        ("bias_score", "提案 (s)", "spearman_bias_score"),
    ):
        if results is None:
            rows.append([label, NOT_RUN, NOT_RUN, fmt(printed.get(key))])
            continue
        rows.append(
            [
                label,
                _spread(results[ours]),
                _rho(results["seed_mean_curve"][ours]),
                fmt(printed.get(key)),
            ]
        )
    paper_model = f"the paper's model: {printed.get('model', 'Tohoku BERT-base')}"
    note = (
        f"Ours: mean over {results[ours]['n']} seeds of the per-seed Spearman (with its t interval), and the "
        f"Spearman of the seed-mean curve; {paper_model}. Figure: `{META_FIGURE}`."
        if results is not None
        else f"The paper's values ({paper_model}); ours: the step did not run."
    )
    return (
        markdown_table(["score", "ours: mean over seeds", "ours: seed-mean curve", "paper"], rows)
        + "\n\n"
        + note
    )


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


def table3_layout(results: dict | None, printed: dict) -> str:
    """Table 3: each model's label fractions per set, ours beside the paper's; every printed
    model appears, run or not."""
    rows = []
    for name, hub_id, result in _rows_by_printed_model(results, printed):
        paper = printed.get(hub_id, {}) if hub_id else {}
        for subset in SUBSETS:
            theirs = paper.get(SHORT[subset], {})
            mine = (result or {}).get("fractions", {}).get(subset, {})
            rows.append(
                [
                    table_cell(name),
                    SHORT[subset],
                    *(
                        f"{fmt(mine.get(label)) if result else NOT_RUN} ({fmt(theirs.get(label))})"
                        for label in ("entailment", "contradiction", "neutral")
                    ),
                ]
            )
    table = markdown_table(["model", "set", "entailment", "contradiction", "neutral"], rows)
    return (
        table
        + "\n\nOurs (the paper's in brackets; – where the paper has no such model; "
        + f"{NOT_RUN} where we ran no model for a printed one)."
    )


def table4_layout(results: dict | None, printed: dict) -> str:
    """Table 4: each model's bias score and rank (1 = most biased), ours beside the paper's;
    every printed model appears, run or not."""
    models = (results or {}).get("models") or {}
    rank = ranks(models) if models else {}
    rows = []
    for name, hub_id, result in _rows_by_printed_model(results, printed):
        paper = printed.get(hub_id, {}) if hub_id else {}
        if result is None:
            ours = NOT_RUN
        else:
            interval = (result.get("confidence_intervals") or {}).get("bias_score")
            ours = f"{with_interval(result['bias_score'], interval)} ({rank[name]})"
        theirs = f"{fmt(paper.get('score'))} ({paper.get('rank', '–')})" if paper else "–"
        rows.append([table_cell(name), ours, theirs])
    figure = f" Figure: `{EVALUATION_FIGURE}`." if models else ""
    return (
        markdown_table(["model", "s (rank), ours", "s (rank), paper"], rows)
        + "\n\nRanks descend from the most biased model (1), as the paper's; ours rank the models "
        + f"of this run among themselves.{figure}"
    )


PAPER_LAYOUTS = {"table2": table2_layout, "table3": table3_layout, "table4": table4_layout}
