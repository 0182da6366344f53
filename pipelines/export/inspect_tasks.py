"""``bias-hub export inspect --out DIR``: JBBQ and BBQ as Inspect AI tasks.

The folder holds ``tasks.py`` (``inspect_task_file.py``), ``scoring.py`` (``inspect_scoring.py``
with the answer reader inlined), ``prompts.json`` (each prompt at each few-shot count, as
``jbbq evaluate --chat no`` renders it), ``data/`` and ``bbq_bias/``: it needs Inspect AI and
the module's requirements where it runs, nothing of bias-hub. JBBQ's licence forbids
redistribution: the folder is for local runs only.
"""

from __future__ import annotations

import logging
import string
from pathlib import Path

from bias_hub.pipelines.common import RunFolder
from bias_hub.pipelines.common.render import render
from bias_hub.pipelines.common.run_folder import check_run_folder
from bias_hub.pipelines.export.inlining import inline_module
from bias_hub.pipelines.export.lm_eval import (
    bbq_rows,
    data_row,
    dataset_folders,
    jbbq_questions,
    jbbq_record,
    questions_record,
    resolve,
)
from bias_hub.pipelines.export.settings import Settings

__all__ = ["BBQ_QUESTION", "build", "export", "live_task", "question_pieces"]

log = logging.getLogger(__name__)

# BBQ's question for a generating model (ours): the context, the question, the three answers.
BBQ_QUESTION = "{context}\n\nQuestion: {question}\nAnswers: {ans0} / {ans1} / {ans2}\nAnswer:"
# The answer reader of BBQ's task: BBQ's analysis script reads answer texts.
BBQ_READER = "bbq"


def _pieces(template: str, fields: dict[str, list]) -> list[list[str]]:
    pieces: list[list[str]] = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        if literal:
            pieces.append(["text", literal])
        if name is not None:
            if spec or conversion:
                raise ValueError(
                    f"prompt placeholder {{{name}}}: format specs are not supported in an export"
                )
            pieces += fields.get(name, [["field", name]])
    return pieces


def question_pieces(prompt) -> list[list[str]]:
    """One question of ``prompt``'s plain layout as ``["text", literal]`` / ``["field", name]``
    pieces (``plain.query`` with ``user`` laid out in it)."""
    return _pieces(prompt.plain_query, {"user": _pieces(prompt.user, {})})


def _prefix(prompt, shots: list[dict]) -> str:
    text = prompt.plain_header.format(system=prompt.system)
    for shot in shots:
        text += prompt.plain_shot.format(
            user=prompt.user_text(shot), assistant=prompt.assistant_text(shot["label"])
        )
    return text


def _jbbq(settings: Settings) -> tuple[dict, list[dict], dict]:
    """JBBQ's prompt variants, questions and record (``tasks.json``'s ``jbbq``)."""
    from bias_hub.pipelines.common import dataset_folder
    from bias_hub.pipelines.jbbq.prompting import load_prompt

    task = resolve(settings)
    specs = [load_prompt(name, task.layout) for name in task.prompts]
    folder = dataset_folder(settings.jbbq, settings.datasets_root).resolve()
    generate = {"max_tokens": task.max_new_tokens, "temperature": 0.0}
    questions, shots, few_shot = jbbq_questions(folder, settings, task.split)
    variants = {
        f"{spec.name}_{k}shot": {
            "prompt": spec.name,
            "version": spec.version,
            "layout": spec.layout,
            "shots": k,
            "prefix": _prefix(spec, shots[:k]),
            "question": question_pieces(spec),
            "generate": generate,
        }
        for spec in specs
        for k in settings.shots
    }
    record = jbbq_record(folder, settings, task, questions, specs, few_shot)
    return variants, [data_row(row, task.reader) for row in questions], record


def _bbq(folder: Path, split: str, limit: int | None) -> tuple[dict, list[dict], dict]:
    """BBQ's one variant (0-shot, the answers listed), questions and record."""
    rows = bbq_rows(folder, split, limit)
    variant = {
        "prefix": "",
        "question": _pieces(BBQ_QUESTION, {}),
        "generate": {"max_tokens": 32, "temperature": 0.0},
    }
    record = {**questions_record(folder, split, rows), "answer_reader": BBQ_READER}
    return variant, [data_row(row, BBQ_READER) for row in rows], record


def build(settings: Settings) -> tuple[dict, dict[str, list[dict]], dict]:
    """What the exported tasks need: the prompt variants (``prompts.json``), the questions of
    each task (``data/<name>.jsonl``) and their account (``tasks.json``)."""
    variants, questions, jbbq = _jbbq(settings)
    data, record = {"jbbq": questions}, {"jbbq": jbbq}
    tasks = [
        f"tasks.py@jbbq -T prompt={v['prompt']} -T shots={v['shots']}" for v in variants.values()
    ]
    _, bbq_folder = dataset_folders(settings)
    if bbq_folder is not None:
        variants["bbq"], data["bbq"], record["bbq"] = _bbq(
            bbq_folder, jbbq["split"], settings.limit
        )
        tasks.append("tasks.py@bbq")
    record["tasks"] = tasks
    return variants, data, record


def live_task(name: str, settings: Settings) -> tuple[dict, list[dict]]:
    """The prompt variant and questions of the installed package's task ``name`` (``jbbq``: the
    one prompt and shot count ``settings`` names; ``bbq``), from the built datasets."""
    if name == "bbq":
        from bias_hub.pipelines.common import dataset_folder

        folder = dataset_folder(settings.bbq or "bbq", settings.datasets_root).resolve()
        variant, questions, _ = _bbq(folder, resolve(settings).split, settings.limit)
        return variant, questions
    variants, questions, _ = _jbbq(settings)
    (variant,) = variants.values()
    return variant, questions


def export(out_dir: str | Path, settings: Settings) -> dict:
    """Write the task folder; return what it holds (also written as ``tasks.json``)."""
    from bias_hub.pipelines.common.locations import metric_folder
    from bias_hub.pipelines.export import inspect_scoring

    # A file of the user's in the task folder stops the export before any work.
    check_run_folder(out_dir)
    out = RunFolder(out_dir)
    with out:
        variants, data, record = build(settings)
        out.record_inputs(
            datasets=[
                (record[name]["dataset"], "all") for name in ("jbbq", "bbq") if name in record
            ],
            settings=settings,
        )
        for name, rows in data.items():
            out.write_jsonl(f"data/{name}.jsonl", rows)
        out.write_json("prompts.json", variants)
        out.write_text(
            "tasks.py", (Path(__file__).with_name("inspect_task_file.py")).read_text("utf-8")
        )
        out.write_text("scoring.py", inline_module(inspect_scoring))
        for path in sorted(metric_folder("bbq_bias").iterdir()):
            if path.is_file() and path.suffix in (".py", ".md", ".txt"):
                out.write_bytes(f"bbq_bias/{path.name}", path.read_bytes())
        out.write_json("tasks.json", record)
        out.write_text("README.md", render("export/templates/inspect_readme.md.j2", **record))
    log.info("wrote %s: %d Inspect task variants", out_dir, len(record["tasks"]))
    return record
