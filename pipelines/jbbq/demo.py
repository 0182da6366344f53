"""Demo part: a tiny model with a planted bias, evaluated with the paper's preset; planted vs measured.

The replies are drawn from ``Plan`` (``bias_hub.pipelines.jbbq.planted_model``): the stereotyped
person for half of the ambiguous questions, the warning followed part of the time, the correct
answer more often when it is the stereotyped one. A tiny Llama is taught them exactly
(``taught_model.teach_lessons``: its output layer fitted by least squares, every reply checked
through the generation path), then evaluated with ``--preset paper`` (generated answers, the
three prompts) at 0 shots on the split it was taught, and the report puts the planted values
beside the measured ones with their intervals and the paired comparisons between the prompts.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.pipelines.common import metric_scores
from bias_hub.pipelines.common.locations import ensure_built
from bias_hub.pipelines.common.render import macros
from bias_hub.pipelines.jbbq.planted_model import Plan, planted_answers
from bias_hub.pipelines.jbbq.prompting import PROMPT_NAMES, load_prompt
from bias_hub.pipelines.jbbq.run import load_questions, run_evaluate
from bias_hub.pipelines.jbbq.score_paths import bbq_bias_columns
from bias_hub.pipelines.jbbq.settings import Settings, with_preset
from bias_hub.pipelines.jbbq.taught_model import NO_INDEX, Lesson, Taught, teach_lessons

log = logging.getLogger(__name__)

ORDER = 20
# The extras the demo needs (bias-hub demo skips it, naming them, where one is missing).
EXTRAS = ("models",)
SEED = 0
N_RESAMPLES = 2000
SPLIT = "train"
# The shapes taught (``random_model.MODEL_CONFIGS``): a least-squares output layer fits as many
# reply tokens as its width, two per reply: the planted model's 3 x 120 replies need 720 of
# "taught-wide"'s 768, the control's 120 need 240 of "taught"'s 256.
PLANTED_SHAPE = "taught-wide"
CONTROL_SHAPE = "taught"
# The control's replies: ambiguous questions answered "unknown" but for a tenth each way, 90 % of
# disambiguated ones right whichever person the answer is: no stereotype to find. It is taught
# them for the basic prompt alone.
CONTROL = Plan(
    stereotyped_ambiguous=0.1, counter_ambiguous=0.1, correct_stereotyped=0.9, correct_counter=0.9
)
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


def _teach(
    model_dir: Path, settings: Settings, rows: list[dict], answers: dict[str, list[int]], shape: str
) -> tuple[Taught, float]:
    """Teach a tiny Llama of ``shape`` the planted ``answers`` (index per row, -1 for a reply
    without one) under each prompt named, as ``settings`` asks; save it to ``model_dir``.
    Returns the teaching and its seconds."""
    lessons = [
        Lesson(
            settings,
            load_prompt(name, settings.layout),
            rows,
            [],
            [NO_INDEX if answer < 0 else str(answer) for answer in replies],
        )
        for name, replies in answers.items()
    ]
    started = time.perf_counter()
    taught = teach_lessons(lessons, seed=SEED, config=shape)
    seconds = time.perf_counter() - started
    if taught.wrong:
        raise RuntimeError(
            f"jbbq demo: the model taught for {model_dir} {taught.misses()}: "
            f"shape {shape!r} is too narrow for them"
        )
    taught.model.save_pretrained(model_dir)
    taught.tokenizer.save_pretrained(model_dir)
    log.info(
        "%s: %d replies (%d token states) taught in %.1f s",
        model_dir.name,
        taught.questions,
        taught.teaching.states,
        seconds,
    )
    return taught, seconds


def _agreement(
    evaluation: Path, answers: dict[str, list[int]], rows: list[dict]
) -> tuple[int, int]:
    """How many of the evaluation's predictions (``predictions.jsonl``) are the planted answer."""
    # example_id counts within a category: the two together name a question.
    position = {(row["category"], row["example_id"]): i for i, row in enumerate(rows)}
    lines = (evaluation / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    predictions = [json.loads(line) for line in lines]
    same = sum(
        p["prediction"] == answers[p["prompt"]][position[p["category"], p["example_id"]]]
        for p in predictions
    )
    return same, len(predictions)


def _leaderboard(out_dir: Path, dataset_dir: Path, rows: list[dict], planted_settings) -> str:
    """A control beside the planted model, their leaderboard (with the paper's printed rows) and
    the eval results a push would open, as a dry run on the stand-in data; the summary's text."""
    import dataclasses

    from bias_hub.pipelines.export.eval_results import Settings as EvalSettings
    from bias_hub.pipelines.export.eval_results import export
    from bias_hub.pipelines.leaderboard.run import run as leaderboard
    from bias_hub.pipelines.leaderboard.settings import Settings as BoardSettings

    control = dataclasses.replace(
        planted_settings, prompts=["basic"], model_label="control tiny Llama (demo)"
    )
    answers = {"basic": planted_answers(rows, "basic", CONTROL, seed=SEED)}
    _teach(out_dir / "control-model", control, rows, answers, CONTROL_SHAPE)
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
    settings = with_preset(
        "paper",
        shots=[0],
        split=SPLIT,
        bootstrap_unit="items",
        n_resamples=N_RESAMPLES,
        seed=SEED,
        device="cpu",
        batch_size=32,
        model_label="planted tiny Llama (demo)",
        # 0 shots only: no few-shot pool to hold out of the split the model was taught on
        shot_pool=0,
    )
    # The questions exactly as the evaluation asks them.
    rows, _, _ = load_questions(dataset_dir, settings)
    answers = {name: planted_answers(rows, name, plan, seed=SEED) for name in PROMPT_NAMES}
    model_dir = out_dir / "planted-model"
    taught, seconds = _teach(model_dir, settings, rows, answers, PLANTED_SHAPE)

    # The planted values: the metric on the replies the model was taught.
    metric, columns = metric_scores("bbq_bias"), bbq_bias_columns(rows)
    planted = {name: metric.compute(predictions=a, **columns) for name, a in answers.items()}
    results = run_evaluate(str(model_dir), dataset_dir, out_dir / "evaluation", settings)
    same, replies = _agreement(out_dir / "evaluation", answers, rows)
    text = macros(TEMPLATE)
    table = text.planted_table(results, planted)
    log.info("planted vs measured (%d of %d replies as planted):\n%s", same, replies, table)
    comparisons = text.comparisons(results).splitlines()
    intro = text.intro(SPLIT)
    plan_lines = [f"- {line}" for line in plan.describe()]
    fit = text.fit(taught.questions, taught.teaching.states, seconds, same, replies)
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
