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
from bias_hub.pipelines.common import load_dataset_split, load_metric
from bias_hub.pipelines.common.locations import ensure_built
from bias_hub.pipelines.common.render import macros
from bias_hub.pipelines.jbbq.planted_model import (
    NO_ANSWER,
    Plan,
    planted_answers,
    train_planted_model,
)
from bias_hub.pipelines.jbbq.prompting import PROMPT_NAMES, load_prompt
from bias_hub.pipelines.jbbq.run import run_evaluate
from bias_hub.pipelines.jbbq.score_paths import bbq_bias_columns
from bias_hub.pipelines.jbbq.settings import with_preset

log = logging.getLogger(__name__)

ORDER = 20
# The extras the demo needs (bias-hub demo skips it, naming them, where one is missing).
EXTRAS = ("models",)
STEPS = 1000
SEED = 0
N_RESAMPLES = 2000
SPLIT = "train"
# The control's replies: ambiguous questions answered "unknown" but for a tenth each way, 90 % of
# disambiguated ones right whichever person the answer is: no stereotype to find. It learns them
# for the basic prompt alone, in 400 steps of 33 questions (fit 1.0 on the sample; 250: 0.33).
CONTROL = Plan(
    stereotyped_ambiguous=0.1, counter_ambiguous=0.1, correct_stereotyped=0.9, correct_counter=0.9
)
CONTROL_STEPS = 400
# The layout the planted model learns its replies in: a tiny line-level model learns them in
# bias-hub's compact layout within the demo's steps, not in llm-jp-eval's (measured on the test
# fixture: fit 1.0 against 0.36 after 400 steps), so the demo departs from the paper preset here.
PLANTED_LAYOUT = "compact"
# The report's and the summary's text.
TEMPLATE = "jbbq/templates/demo.md.j2"


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


def summary_markdown(
    intro: str, plan_lines: list[str], table: str, comparisons: list[str], board: str = ""
) -> str:
    """The part's summary for the combined demo report. Its links are relative to the part's
    folder: the combined report prefixes the part's name itself (``jbbq/evaluation/...``)."""
    return macros(TEMPLATE).summary(intro, plan_lines, table, comparisons, board)


def _leaderboard(out_dir: Path, dataset_dir: Path, rows: list[dict], planted_settings) -> str:
    """A control beside the planted model, their leaderboard (with the paper's printed rows) and
    the eval results a push would open, as a dry run on the stand-in data; the summary's text."""
    import dataclasses

    from bias_hub.pipelines.export.eval_results import Settings as EvalSettings
    from bias_hub.pipelines.export.eval_results import export
    from bias_hub.pipelines.leaderboard.run import run as leaderboard
    from bias_hub.pipelines.leaderboard.settings import Settings as BoardSettings

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
    files = [path for paths in written.values() for path in paths]
    ranked = sum(1 for table in tables for row in table.rows if row.ranks)
    return macros(TEMPLATE).board(CONTROL.describe()[0], ranked, files)


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
    columns = bbq_bias_columns(rows)
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
    text = macros(TEMPLATE)
    table = text.planted_table(results, planted)
    log.info("planted vs measured:\n%s", table)
    comparisons = text.comparisons(results).splitlines()
    intro = text.intro(SPLIT)
    plan_lines = [f"- {line}" for line in plan.describe()]
    fit = (
        f"Training: {STEPS} steps, {train_seconds:.1f} s; the model gives the planted reply as its most likely "
        f"token for {100 * trained['fit']:.1f} % of its {3 * len(items)} training prompts."
    )
    n_tests = (results.get("comparisons") or {}).get("n_tests", 0)
    board = _leaderboard(out_dir, dataset_dir, rows, settings)
    report = atomic_write_text(
        out_dir / "report.md",
        text.report(intro, plan_lines, fit, table, comparisons, n_tests, board),
    )
    return {
        "title": "JBBQ: a planted bias recovered (tiny demo model, paper preset)",
        "summary": summary_markdown(intro, plan_lines, table, comparisons, board),
        "report": report.name,
    }
