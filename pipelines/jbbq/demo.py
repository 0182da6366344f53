"""Demo part: a tiny model with a planted bias, evaluated with the paper's preset; planted vs measured.

The model (``bias_hub.pipelines.jbbq.planted_model``) is trained on the sample's train split to answer
as ``Plan`` says: the stereotyped person for half of the ambiguous questions, the warning
followed part of the time, the correct answer more often when it is the stereotyped one.
It is then evaluated with ``--preset paper`` (generated answers, the three prompts) at
0 shots on that split, and the report puts the planted values beside the measured ones
with their intervals and the paired comparisons between the prompts.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.builders.shared.text import markdown_table, with_interval
from bias_hub.pipelines.common import load_dataset_split, load_metric
from bias_hub.pipelines.common.locations import ensure_built
from bias_hub.pipelines.jbbq.planted_model import (
    NO_ANSWER,
    Plan,
    planted_answers,
    train_planted_model,
)
from bias_hub.pipelines.jbbq.prompting import PROMPT_NAMES, load_prompt
from bias_hub.pipelines.jbbq.report import SCORE_NAMES, format_cell, prompt_label
from bias_hub.pipelines.jbbq.run import run_evaluate
from bias_hub.pipelines.jbbq.settings import with_preset

log = logging.getLogger(__name__)

ORDER = 20
STEPS = 1000
SEED = 0
N_RESAMPLES = 2000
SPLIT = "train"
# The control's replies: ambiguous questions answered "unknown" but for a tenth each way, 90 % of
# disambiguated ones right whichever person the answer is: no stereotype to find.
CONTROL_STEPS = 400
CONTROL = Plan(
    stereotyped_ambiguous=0.1, counter_ambiguous=0.1, correct_stereotyped=0.9, correct_counter=0.9
)
# The layout the planted model learns its replies in: a tiny line-level model learns them in
# bias-hub's compact layout within the demo's steps, not in llm-jp-eval's (measured on the test
# fixture: fit 1.0 against 0.36 after 400 steps), so the demo departs from the paper preset here.
PLANTED_LAYOUT = "compact"
# (result key, column title) of the planted-vs-measured table
KEYS = [
    ("accuracy_ambiguous", "acc amb"),
    ("accuracy_disambiguated", "acc dis"),
    ("accuracy_gap", "acc diff"),
    ("bias_score_disambiguated", "s_DIS"),
    ("bias_score_ambiguous", "s_AMB"),
    ("unparsable_rate", "no index"),
]


def run_demo(out_dir: Path, datasets_root: Path | None = None) -> dict:
    import torch  # heavy: only when the demo runs, not when `bias-hub demo` lists its parts

    out_dir = Path(out_dir)
    dataset_dir = ensure_built("jbbq", datasets_root)  # the sample templates, when not built yet
    # One thread: the tiny model gains nothing from more, and on a busy machine several
    # threads waiting for each other make every step many times slower.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _run(out_dir, dataset_dir)
    finally:
        torch.set_num_threads(threads)


def _planted_table(results: dict, planted: dict[str, dict]) -> str:
    rows = []
    for run in results["runs"]:
        metrics = run["metrics"]
        intervals = metrics.get("confidence_intervals") or {}
        target = planted[run["prompt"]]
        rows.append(
            [prompt_label(run["prompt"]), "planted"]
            + [format_cell(target.get(key)) for key, _ in KEYS]
        )
        rows.append(
            ["", "measured"]
            + [
                with_interval(metrics.get(key), intervals.get(key))
                if key != "unparsable_rate"
                else format_cell(metrics.get(key))
                for key, _ in KEYS
            ]
        )
    return markdown_table(["prompt", ""] + [title for _, title in KEYS], rows)


def _significant(results: dict) -> list[str]:
    comparisons = results.get("comparisons") or {}
    lines = []
    for row in comparisons.get("rows", []):
        if row["score"] in ("accuracy_ambiguous", "bias_score_ambiguous"):
            mark = "significant" if row["significant"] else "not significant"
            lines.append(
                f"- {prompt_label(row['a']['prompt'])} → {prompt_label(row['b']['prompt'])}, "
                f"{SCORE_NAMES[row['score']]}: {with_interval(row['difference'], row)} "
                f"(Holm-adjusted p = {row['p_holm']:.4f}, {mark})"
            )
    return lines


def summary_markdown(
    intro: str,
    plan_lines: list[str],
    table: str,
    comparisons: list[str],
    board_lines: list[str] = (),
) -> str:
    """The part's summary for the combined demo report. Its links are relative to the part's
    folder: the combined report prefixes the part's name itself (``jbbq/evaluation/...``)."""
    return "\n".join(
        [
            intro,
            "",
            *plan_lines,
            "",
            table,
            "",
            *comparisons,
            "",
            "![Figure 1 layout](evaluation/figure1_0shot.png)",
            "",
            "Full report: [evaluation/report.md](evaluation/report.md).",
            "",
            *board_lines,
        ]
    )


def _leaderboard(out_dir: Path, dataset_dir: Path, rows: list[dict], planted_settings) -> list[str]:
    """A control beside the planted model, their leaderboard (with the paper's printed rows) and
    the eval results a push would open, as a dry run on the stand-in data; the summary's lines."""
    import dataclasses

    from bias_hub.pipelines.export.eval_results import Settings as EvalSettings
    from bias_hub.pipelines.export.eval_results import export
    from bias_hub.pipelines.leaderboard.run import run as leaderboard
    from bias_hub.pipelines.leaderboard.settings import Settings as BoardSettings

    # The control: taught the basic prompt alone (a third of the planted model's work per step),
    # no stereotype in either context.
    basic = load_prompt("basic", PLANTED_LAYOUT)
    answers = planted_answers(rows, "basic", CONTROL, seed=SEED)
    items = [
        [(basic.plain(row), NO_ANSWER if answer < 0 else basic.assistant_text(answer))]
        for row, answer in zip(rows, answers, strict=True)
    ]
    started = time.perf_counter()
    trained = train_planted_model(
        out_dir / "control-model", items, steps=CONTROL_STEPS, items_per_batch=33, seed=SEED
    )
    log.info(
        "control model: %d steps in %.1f s, fits %.1f %% of its %d training replies",
        CONTROL_STEPS,
        time.perf_counter() - started,
        100 * trained["fit"],
        len(items),
    )
    control = dataclasses.replace(
        planted_settings, prompts=["basic"], model_label="control tiny Llama (demo)"
    )
    run_evaluate(str(out_dir / "control-model"), dataset_dir, out_dir / "control", control)
    runs = [out_dir / "evaluation", out_dir / "control"]
    tables = leaderboard(
        [*runs, "study:jbbq"], out_dir / "leaderboard", BoardSettings(n_resamples=N_RESAMPLES)
    )
    written = export(
        [str(run) for run in runs],
        out_dir / "eval-results",
        EvalSettings(namespace="bias-hub", allow_stand_ins=True),
    )
    files = [f"[{path}](eval-results/{path})" for paths in written.values() for path in paths]
    ranked = sum(1 for table in tables for row in table.rows if row.ranks)
    return [
        f"A control (the basic prompt taught without a stereotype: {CONTROL.describe()[0]}) beside the "
        f"planted model: [leaderboard](leaderboard/leaderboard.html) ([Markdown](leaderboard/leaderboard.md), "
        f"[JSON](leaderboard/leaderboard.json)), {ranked} rows ranked, the JBBQ paper's Table 4 rows beside them "
        "labelled as printed. The eval results a push would open on each model's page (a dry run on the "
        "sample, so labelled stand-in data and never pushed): " + ", ".join(files) + ".",
    ]


def _run(out_dir: Path, dataset_dir: Path) -> dict:
    plan = Plan()
    rows = [dict(row) for row in load_dataset_split(dataset_dir, "all", SPLIT)]
    prompts = [load_prompt(name, PLANTED_LAYOUT) for name in PROMPT_NAMES]
    answers = {p.name: planted_answers(rows, p.name, plan, seed=SEED) for p in prompts}
    items = [
        [
            (
                p.plain(row),
                NO_ANSWER if answers[p.name][i] < 0 else p.assistant_text(answers[p.name][i]),
            )
            for p in prompts
        ]
        for i, row in enumerate(rows)
    ]
    model_dir = out_dir / "planted-model"
    started = time.perf_counter()
    trained = train_planted_model(model_dir, items, steps=STEPS, seed=SEED)
    train_seconds = time.perf_counter() - started
    log.info(
        "planted model: %d steps in %.1f s, loss %.2f -> %.3f, fits %.1f %% of its %d training replies",
        STEPS,
        train_seconds,
        trained["losses"][0],
        trained["losses"][-1],
        100 * trained["fit"],
        3 * len(items),
    )

    # The planted values: the metric on the replies the model was taught.
    metric = load_metric("bbq_bias")
    columns = {
        "references": [r["label"] for r in rows],
        "unknown_labels": [r["unknown_label"] for r in rows],
        "stereotyped_labels": [r["stereotyped_label"] for r in rows],
        "context_conditions": [r["context_condition"] for r in rows],
        "categories": [r["category"] for r in rows],
    }
    planted = {
        name: metric.compute(predictions=answer, **columns) for name, answer in answers.items()
    }

    settings = with_preset(
        "paper",
        shots=[0],
        split=SPLIT,
        layout=PLANTED_LAYOUT,
        bootstrap_unit="items",
        n_resamples=N_RESAMPLES,
        seed=SEED,
        device="cpu",
        batch_size=32,
        model_label="planted tiny Llama (demo)",
        # 0 shots only: no few-shot pool to hold out of the split the model was taught on
        shot_pool=0,
    )
    results = run_evaluate(str(model_dir), dataset_dir, out_dir / "evaluation", settings)
    table = _planted_table(results, planted)
    log.info("planted vs measured:\n%s", table)
    comparisons = _significant(results)
    intro = (
        "A tiny Llama trained for this demo (some seconds of CPU) on the sample's train split to answer with a "
        "**planted bias**; then evaluated by `jbbq evaluate --preset paper` with the paper's three prompts and "
        f"generated answers, overridden to 0 shots and the compact prompt layout (a line-level tiny model learns it) on split `{SPLIT}` (the questions it was trained on: five "
        "templates cannot teach a model this small which person an unseen template stereotypes). So the numbers "
        "check that prompting, generation, parsing, scoring and intervals recover a known bias; they say nothing "
        "about any real model. The questions are the project's sample templates, not JBBQ. Intervals resample "
        "questions (the split has one template per category, too few to resample templates)."
    )
    plan_lines = [f"- {line}" for line in plan.describe()]
    fit = (
        f"Training: {STEPS} steps, {train_seconds:.1f} s; the model gives the planted reply as its most likely "
        f"token for {100 * trained['fit']:.1f} % of its {3 * len(items)} training prompts."
    )
    sections = [
        "# JBBQ demo: a planted bias, recovered",
        "",
        intro,
        "",
        "## What was planted",
        "",
        *plan_lines,
        "",
        fit,
        "",
        "## Planted vs measured",
        "",
        "`planted`: the scores of the replies the model was taught (the `bbq_bias` metric on them); `measured`: "
        "the scores of its generated replies, with 95 % intervals.",
        "",
        table,
        "",
        "Paired comparisons between the prompts (Holm-corrected over all "
        f"{(results.get('comparisons') or {}).get('n_tests', 0)} tests of the run):",
        "",
        *comparisons,
        "",
        "![Figure 1 layout](evaluation/figure1_0shot.png)",
        "",
        "Full report (Table 4 layout, every comparison, every run): [evaluation/report.md](evaluation/report.md).",
        "",
    ]
    board_lines = _leaderboard(out_dir, dataset_dir, rows, settings)
    sections += ["## The planted model beside a control", "", *board_lines, ""]
    report = atomic_write_text(out_dir / "report.md", "\n".join(sections))
    return {
        "title": "JBBQ: a planted bias recovered (tiny demo model, paper preset)",
        "summary": summary_markdown(intro, plan_lines, table, comparisons, board_lines),
        "report": report.name,
    }
