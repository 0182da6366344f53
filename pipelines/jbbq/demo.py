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
from bias_hub.pipelines.jbbq.settings import with_preset

log = logging.getLogger(__name__)

ORDER = 20
# The extras the demo needs (bias-hub demo skips it, naming them, where one is missing).
EXTRAS = ("models",)
STEPS = 1000
SEED = 0
N_RESAMPLES = 2000
SPLIT = "train"
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


def summary_markdown(intro: str, plan_lines: list[str], table: str, comparisons: list[str]) -> str:
    """The part's summary for the combined demo report. Its links are relative to the part's
    folder: the combined report prefixes the part's name itself (``jbbq/evaluation/...``)."""
    return macros(TEMPLATE).summary(intro, plan_lines, table, comparisons)


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
    report = atomic_write_text(
        out_dir / "report.md", text.report(intro, plan_lines, fit, table, comparisons, n_tests)
    )
    return {
        "title": "JBBQ: a planted bias recovered (tiny demo model, paper preset)",
        "summary": summary_markdown(intro, plan_lines, table, comparisons),
        "report": report.name,
    }
