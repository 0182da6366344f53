"""``bias-hub export lm-eval --out DIR``: JBBQ and BBQ as lm-evaluation-harness 0.4 tasks.

``jbbq_<prompt>_<k>shot_gen`` / ``_mc``: the preset's prompts and layout, k few-shot examples
(lm-eval's own, so its table shows the n-shot), the reply generated and read by the preset's
answer reader, or the choice of highest log-likelihood. ``bbq_biashub_mc``: BBQ with lm-eval's
own prompt. Every task scores with ``bbq_bias`` through ``utils.py`` (``lm_eval_utils.py``, the
reader inlined). The questions go into ``data/``, read relative to the folder, so it can move
whole; JBBQ's licence forbids redistribution: the folder is for local runs only.
"""

from __future__ import annotations

import logging
import re
import string
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import yaml

from bias_hub.pipelines.common import RunFolder, dataset_folder
from bias_hub.pipelines.common.answer_reading import DEFAULT_READER, MAX_NEW_TOKENS, READERS
from bias_hub.pipelines.common.render import render
from bias_hub.pipelines.common.run_folder import check_run_folder
from bias_hub.pipelines.export.inlining import inline_module
from bias_hub.pipelines.export.lm_eval_utils import HIGHER_IS_BETTER, SCORES
from bias_hub.pipelines.export.settings import Settings
from bias_hub.pipelines.jbbq.prompting import DEFAULT_LAYOUT

__all__ = ["BBQ_PROMPT", "INSTALLED", "export", "installed_tasks", "lm_eval_prompt"]

log = logging.getLogger(__name__)

# lm-eval's own BBQ prompt (lm_eval/tasks/bbq/bbq_multiple_choice.yaml).
BBQ_PROMPT = "{{context}}\n\nQ: {{question}}\nA:"
# The question fields a data row keeps: what the prompts show and what bbq_bias needs.
_FIELDS = tuple(
    "example_id category question_index question_polarity context_condition context question "
    "ans0 ans1 ans2 label unknown_label stereotyped_label answer_info".split()
)
_FUNCTION = "__lm_eval_function__"
TASK_VERSION = "1.0"
# The task folder the package ships, for `lm-eval ... --include_path $(bias-hub export lm-eval-path)`.
INSTALLED = Path(__file__).with_name("lm_eval_tasks")


def _raw(text: str) -> str:
    """``text`` as literal Jinja (lm-eval renders doc_to_text with Jinja)."""
    if not text:
        return ""
    if "{% endraw %}" in text:
        raise ValueError(
            "a prompt holds the text '{% endraw %}', which cannot be written as a Jinja literal"
        )
    return "{% raw %}" + text + "{% endraw %}"


def _jinja(template: str, fields: dict[str, str]) -> str:
    """A ``str.format`` template as Jinja: literals kept verbatim, each placeholder replaced by
    ``fields[name]`` (Jinja text)."""
    parts = []
    for literal, name, spec, conversion in string.Formatter().parse(template):
        parts.append(_raw(literal))
        if name is not None:
            if spec or conversion:
                raise ValueError(
                    f"prompt placeholder {{{name}}}: format specs are not supported in an export"
                )
            parts.append(fields[name])
    return "".join(parts)


def _delimiters(prompt) -> tuple[str, str]:
    """How lm-eval must join a few-shot example to match ``prompt.plain_shot``: the example is
    lm-eval's question (``plain_query``) + target delimiter + answer + few-shot delimiter."""
    user, answer = "\x00user\x00", "\x00answer\x00"
    shot = prompt.plain_shot.format(user=user, assistant=answer)
    query = prompt.plain_query.format(user=user)
    before, found, after = shot.partition(answer)
    if not found or not before.startswith(query) or answer in after or user in after:
        raise ValueError(
            f"--prompt {prompt.name}: its few-shot example is not its question followed by the "
            "answer, so lm-eval cannot lay it out as jbbq evaluate does"
        )
    return before[len(query) :], after


def lm_eval_prompt(prompt, shots: list[dict]) -> dict:
    """The task fields that make lm-eval send ``prompt.plain(doc, shots)`` for a question
    ``doc``: ``description`` (the opening), ``doc_to_text`` (one question, Jinja), the
    generation target (Jinja), the two delimiters, and the few-shot configuration."""
    target_delimiter, fewshot_delimiter = _delimiters(prompt)
    question = {
        name: "{{" + name + "}}" for name in ("context", "question", "ans0", "ans1", "ans2")
    }
    fields = {
        "description": _raw(prompt.plain_header.format(system=prompt.system)),
        "doc_to_text": _jinja(prompt.plain_query, {"user": _jinja(prompt.user, question)}),
        "target": _jinja(prompt.assistant, {"answer": "{{label}}"}),
        "target_delimiter": target_delimiter,
        "fewshot_delimiter": fewshot_delimiter,
        "num_fewshot": len(shots),
    }
    if shots:
        fields["fewshot_config"] = {
            "sampler": "first_n",
            "samples": [data_row(shot, None) for shot in shots],
        }
    return fields


def _function(name: str) -> str:
    return f"{_FUNCTION}utils.{name}"


def _metric_list(categories: list[str]) -> list[dict]:
    metrics = []
    for suffix in ["", *(f"_{c}" for c in categories)]:
        for name in SCORES:
            metrics.append(
                {
                    "metric": f"{name}{suffix}",
                    "aggregation": _function(f"agg_{name}"),
                    "higher_is_better": HIGHER_IS_BETTER[name],
                }
            )
    return metrics


def _yaml(config: dict) -> str:
    text = yaml.safe_dump(
        config, allow_unicode=True, sort_keys=False, width=1_000_000, default_flow_style=False
    )
    return re.sub(rf"""['"]?{_FUNCTION}([\w.]+)['"]?""", r"!function \1", text)


@dataclass(frozen=True)
class Resolved:
    """The export's task settings after the preset: what ``jbbq evaluate`` would use."""

    prompts: list[str]
    split: str
    max_new_tokens: int
    layout: str
    reader: str


def resolve(settings: Settings) -> Resolved:
    """The prompts, split, reply length, layout and answer reader: each flag, else the preset's."""
    from bias_hub.pipelines.common.presets import load_preset

    preset = load_preset("jbbq evaluate", settings.preset).values
    prompts = settings.prompts or preset.get("prompts") or ["basic", "unknown", "paraphrase"]
    if prompts == ["all"]:
        from bias_hub.pipelines.jbbq.prompting import PROMPT_NAMES

        prompts = list(PROMPT_NAMES)
    split = settings.split or preset.get("split") or "test"
    # `is None`, not `or`: --max-new-tokens 0 is a value to refuse, not one to replace.
    max_new_tokens = (
        settings.max_new_tokens
        if settings.max_new_tokens is not None
        else preset.get("max_new_tokens") or 8
    )
    layout = settings.layout or preset.get("layout") or DEFAULT_LAYOUT
    reader = settings.answer_reader or preset.get("answer_reader") or DEFAULT_READER
    if (
        not settings.shots
        or any(k < 0 for k in settings.shots)
        or len(set(settings.shots)) != len(settings.shots)
    ):
        raise ValueError(f"--shots: expected distinct counts >= 0, got {settings.shots}")
    if settings.limit is not None and settings.limit < 1:
        raise ValueError(f"--limit must be >= 1, got {settings.limit}")
    if not 1 <= max_new_tokens <= MAX_NEW_TOKENS:
        raise ValueError(
            f"--max-new-tokens: expected an integer from 1 to {MAX_NEW_TOKENS:,} (a reply to a "
            f"multiple-choice question), got {max_new_tokens}"
        )
    if reader not in READERS:
        raise ValueError(f"--answer-reader: expected one of {', '.join(READERS)}, got {reader!r}")
    return Resolved(list(prompts), split, int(max_new_tokens), str(layout), reader)


def jbbq_questions(
    folder: Path, settings: Settings, split: str
) -> tuple[list[dict], list[dict], dict]:
    """The questions and few-shot pool of ``bias-hub jbbq evaluate`` (its own selection, so
    both evaluate the same questions with the same examples)."""
    from bias_hub.pipelines.jbbq.run import load_questions

    chosen = SimpleNamespace(
        config="all",
        split=split,
        categories=None,
        shots=list(settings.shots),
        shot_pool=settings.shot_pool,
        seed=settings.seed,
        limit=settings.limit,
    )
    return load_questions(folder, chosen)


def bbq_rows(folder: Path, split: str, limit: int | None) -> list[dict]:
    from bias_hub.pipelines.common.locations import dataset_rows

    rows, _ = dataset_rows(folder, "all", None if split == "all" else split)
    if limit:
        by_category: dict[str, list[dict]] = {}
        for row in rows:
            by_category.setdefault(row["category"], []).append(row)
        rows = [row for group in by_category.values() for row in group[:limit]]
    return rows


def data_row(row: dict, reader: str | None) -> dict:
    """A question as the tasks keep it, with the answer reader that reads its replies (``bias-hub
    score --from-lm-eval`` reads them the same way)."""
    data = {field: row[field] for field in _FIELDS if field in row}
    return data if reader is None else {**data, "answer_reader": reader}


def _task(
    name: str, tags: list[str], data: str, output_type: str, categories: list[str], **fields
) -> dict:
    return {
        "task": name,
        "tag": tags,
        # data/<data>.jsonl beside the task folder, found by utils.py (the folder can move)
        "custom_dataset": _function(f"{data}_dataset"),
        "test_split": "test",
        "output_type": output_type,
        **fields,
        "metric_list": _metric_list(categories),
        "metadata": {"version": TASK_VERSION},
    }


def _jbbq_tasks(
    spec, k: int, fields: dict, data: str, categories: list[str], task: Resolved
) -> list[dict]:
    """The generation and the multiple-choice task of one prompt at ``k`` shots."""
    fields = dict(fields)
    target = fields.pop("target")
    tags = ["jbbq", f"jbbq_{spec.name}"]
    gen = _task(
        f"jbbq_{spec.name}_{k}shot_gen",
        [*tags, "jbbq_gen"],
        data,
        "generate_until",
        categories,
        **fields,
        doc_to_target=target,
        generation_kwargs={"until": [], "max_gen_toks": task.max_new_tokens, "do_sample": False},
        process_results=_function("process_generation"),
    )
    mc = _task(
        f"jbbq_{spec.name}_{k}shot_mc",
        [*tags, "jbbq_mc"],
        data,
        "multiple_choice",
        categories,
        **fields,
        doc_to_choice=[spec.assistant_text(i) for i in range(3)],
        doc_to_target="label",
        process_results=_function("process_multiple_choice"),
    )
    return [gen, mc]


def _bbq_task(data: str, categories: list[str]) -> dict:
    return _task(
        "bbq_biashub_mc",
        ["bbq_biashub"],
        data,
        "multiple_choice",
        categories,
        doc_to_text=BBQ_PROMPT,
        doc_to_choice=_function("doc_to_answers"),
        doc_to_target="label",
        process_results=_function("process_multiple_choice"),
    )


def export(out_dir: str | Path, settings: Settings) -> dict:
    """Write the task folder; return what it holds (also written as ``tasks.json``)."""
    from bias_hub.pipelines.jbbq.prompting import load_prompt

    # The folder is lm-eval's --include_path, where a task of the user's own naturally goes:
    # a file the export would delete stops it before anything else is said or done.
    check_run_folder(out_dir)
    task = resolve(settings)
    specs = [load_prompt(name, task.layout) for name in task.prompts]
    jbbq_folder, bbq_folder = dataset_folders(settings)
    out = RunFolder(out_dir)
    with out:
        out.record_inputs(
            datasets=[(folder, "all") for folder in (jbbq_folder, bbq_folder) if folder],
            settings=settings,
        )
        questions, shots, few_shot = jbbq_questions(jbbq_folder, settings, task.split)
        out.write_jsonl("data/jbbq.jsonl", [data_row(row, task.reader) for row in questions])
        categories = sorted({row["category"] for row in questions})
        tasks = []
        for spec in specs:
            for k in settings.shots:
                fields = lm_eval_prompt(spec, shots[:k])
                for config in _jbbq_tasks(spec, k, fields, "jbbq", categories, task):
                    out.write_text(f"jbbq/{config['task']}.yaml", _yaml(config))
                    tasks.append(config["task"])
        record = {"jbbq": jbbq_record(jbbq_folder, settings, task, questions, specs, few_shot)}
        if bbq_folder is not None:
            rows = bbq_rows(bbq_folder, task.split, settings.limit)
            out.write_jsonl("data/bbq.jsonl", [data_row(row, None) for row in rows])
            record["bbq"] = questions_record(bbq_folder, task.split, rows)
            config = _bbq_task("bbq", record["bbq"]["categories"])
            out.write_text(f"bbq/{config['task']}.yaml", _yaml(config))
            tasks.append(config["task"])
        _write_utils(out)
        record["tasks"] = tasks
        out.write_json("tasks.json", record)
        out.write_text("README.md", render("export/templates/lm_eval_readme.md.j2", **record))
    log.info("wrote %s: %d lm-eval tasks (%s)", out_dir, len(tasks), ", ".join(tasks))
    return record


def installed_tasks() -> dict[str, str]:
    """``{file name: text}`` of the task folder the package ships (``INSTALLED``): the paper
    preset's prompts at 0 and 4 shots and BBQ, as ``export`` writes them, except that the
    questions and the few-shot pool are read when lm-eval runs, from the datasets built under
    bias-hub's data root (``custom_dataset``: a ``test`` and a ``fewshot`` split), so nothing of
    a user's JBBQ copy ships."""
    from bias_hub.builders.shared.benchmark import benchmark
    from bias_hub.pipelines.jbbq.prompting import load_prompt

    settings = Settings()
    task = resolve(settings)
    files = {}
    for spec in (load_prompt(name, task.layout) for name in task.prompts):
        for k in settings.shots:
            fields = lm_eval_prompt(spec, [])
            fields["num_fewshot"] = k
            if k:
                fields.update(fewshot_split="fewshot", fewshot_config={"sampler": "first_n"})
            categories = benchmark("jbbq")["categories"]
            for config in _jbbq_tasks(spec, k, fields, "installed_jbbq", categories, task):
                files[f"{config['task']}.yaml"] = _yaml(config)
    bbq = _bbq_task("installed_bbq", benchmark("bbq")["categories"])
    files[f"{bbq['task']}.yaml"] = _yaml(bbq)
    files["utils.py"] = (
        '"""The functions of the tasks beside this file: bias-hub\'s own, installed (lm-eval '
        'imports this file by its path)."""\n\n'
        "from bias_hub.pipelines.export.lm_eval_installed import (  # noqa: F401\n"
        "    installed_bbq_dataset,\n"
        "    installed_jbbq_dataset,\n"
        ")\n"
        "from bias_hub.pipelines.export.lm_eval_utils import *  # noqa: F403\n"
    )
    return files


def dataset_folders(settings: Settings) -> tuple[Path, Path | None]:
    """The JBBQ dataset folder and BBQ's (None when ``--bbq`` is not given and none is built),
    absolute: tasks.json records where the questions were read from (provenance only; the
    tasks read their copy under data/, so the folder stays copyable)."""
    jbbq_folder = dataset_folder(settings.jbbq, settings.datasets_root, "--jbbq").resolve()
    if settings.bbq is not None:
        return jbbq_folder, dataset_folder(settings.bbq, settings.datasets_root, "--bbq").resolve()
    try:
        return jbbq_folder, dataset_folder("bbq", settings.datasets_root).resolve()
    except FileNotFoundError:
        log.info(
            "no built bbq dataset: the folder holds JBBQ's tasks only (build it with `bias-hub build bbq`)"
        )
        return jbbq_folder, None


def questions_record(folder: Path, split: str, rows: list[dict]) -> dict:
    """tasks.json's account of where a benchmark's questions come from: the dataset folder, the
    split, how many questions and their categories."""
    return {
        "dataset": str(folder),
        "split": split,
        "questions": len(rows),
        "categories": sorted({row["category"] for row in rows}),
    }


def jbbq_record(
    folder: Path, settings: Settings, task: Resolved, questions, specs, few_shot
) -> dict:
    """tasks.json's account of the JBBQ tasks: where the questions come from and how they are asked and read."""
    return {
        **questions_record(folder, task.split, questions),
        "prompts": {s.name: s.version for s in specs},
        "layout": specs[0].layout if specs else task.layout,
        "answer_reader": task.reader,
        "shots": list(settings.shots),
        "few_shot": few_shot,
        "seed": settings.seed,
        "max_new_tokens": task.max_new_tokens,
        "preset": settings.preset,
        "limit": settings.limit,
    }


def _write_utils(out: RunFolder) -> None:
    """utils.py beside every task YAML (lm-eval resolves ``!function utils.x`` there), with
    the answer reader inlined, and the bbq_bias module it scores with."""
    import bias_hub.pipelines.export.lm_eval_utils as utils
    from bias_hub.pipelines.common.locations import metric_folder

    text = inline_module(utils)
    module = metric_folder("bbq_bias")
    for part in ("jbbq", "bbq"):
        if not (out.staging / part).is_dir():
            continue
        out.write_text(f"{part}/utils.py", text)
        for path in sorted(module.iterdir()):
            if path.is_file() and path.suffix in (".py", ".md", ".txt"):
                out.write_bytes(f"{part}/bbq_bias/{path.name}", path.read_bytes())
