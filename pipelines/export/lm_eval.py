"""``bias-hub export lm-eval --out DIR``: JBBQ and BBQ as lm-evaluation-harness tasks.

The folder is for ``lm-eval run ... --include_path DIR`` (lm-evaluation-harness 0.4):

- ``jbbq_<prompt>_<k>shot_gen`` and ``jbbq_<prompt>_<k>shot_mc``: the paper's prompts
  (``pipelines/jbbq/prompts/*.yaml``, the plain layout: what ``bias-hub jbbq evaluate --chat
  no`` sends), k few-shot examples, the answer generated and read as an index (``gen``, the
  paper's way) or chosen among "0", "1", "2" by log-likelihood (``mc``). The few-shot examples
  are rendered into the prompt as ``jbbq evaluate`` renders them (lm-eval's own few-shot
  sampler is not used: ``--num_fewshot`` stays 0). Tags ``jbbq``, ``jbbq_gen``, ``jbbq_mc``.
- ``bbq_biashub_mc``: BBQ, 0-shot, the answer texts as choices (lm-eval's own BBQ prompt).

Every task's ``utils.py`` (``pipelines/export/lm_eval_utils.py``) scores with bias-hub's
``bbq_bias`` module, copied into the folder: accuracy, accuracy in ambiguous and
disambiguated contexts, s_DIS, s_AMB and the error rate, overall and per category. The
questions are written into ``data/`` (JBBQ's licence forbids redistribution: the folder is
for local runs only) and the tasks name them by absolute path; export again after moving it.
"""

from __future__ import annotations

import inspect
import logging
import re
import string
from pathlib import Path
from types import SimpleNamespace

import yaml

from bias_hub.pipelines.common import RunFolder, dataset_folder
from bias_hub.pipelines.common.run_folder import refuse_losing_files_it_did_not_write
from bias_hub.pipelines.export.lm_eval_utils import HIGHER_IS_BETTER, SCORES
from bias_hub.pipelines.export.settings import Settings

__all__ = ["BBQ_PROMPT", "export", "jinja_prompt", "task_names"]

log = logging.getLogger(__name__)

# lm-eval's own BBQ prompt (lm_eval/tasks/bbq/bbq_multiple_choice.yaml).
BBQ_PROMPT = "{{context}}\n\nQ: {{question}}\nA:"
# The question fields a data row keeps: what the prompts show and what bbq_bias needs.
_FIELDS = (
    "example_id",
    "category",
    "question_index",
    "question_polarity",
    "context_condition",
    "context",
    "question",
    "ans0",
    "ans1",
    "ans2",
    "label",
    "unknown_label",
    "stereotyped_label",
)
_FUNCTION = "__lm_eval_function__"
TASK_VERSION = "1.0"


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


def jinja_prompt(prompt, shots: list[dict]) -> str:
    """The Jinja ``doc_to_text`` that renders ``prompt.plain(doc, shots)`` for a question ``doc``."""
    prefix = prompt.plain_header.format(system=prompt.system)
    for shot in shots:
        prefix += prompt.plain_shot.format(
            user=prompt.user_text(shot), assistant=prompt.assistant_text(shot["label"])
        )
    question = {
        name: "{{" + name + "}}" for name in ("context", "question", "ans0", "ans1", "ans2")
    }
    return _raw(prefix) + _jinja(prompt.plain_query, {"user": _jinja(prompt.user, question)})


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


def task_names(prompts: list[str], shots: list[int], bbq: bool) -> list[str]:
    names = [f"jbbq_{p}_{k}shot_{kind}" for p in prompts for k in shots for kind in ("gen", "mc")]
    return names + (["bbq_biashub_mc"] if bbq else [])


def _resolve(settings: Settings) -> tuple[list[str], str, int]:
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
    if (
        not settings.shots
        or any(k < 0 for k in settings.shots)
        or len(set(settings.shots)) != len(settings.shots)
    ):
        raise ValueError(f"--shots: expected distinct counts >= 0, got {settings.shots}")
    if settings.limit is not None and settings.limit < 1:
        raise ValueError(f"--limit must be >= 1, got {settings.limit}")
    if max_new_tokens < 1:
        raise ValueError(f"--max-new-tokens must be >= 1, got {max_new_tokens}")
    return list(prompts), split, int(max_new_tokens)


def _jbbq_questions(
    folder: Path, settings: Settings, split: str
) -> tuple[list[dict], list[dict], dict]:
    """The questions and shots of ``bias-hub jbbq evaluate --shots <all counts>`` (its own
    selection, so both evaluate the same questions with the same examples)."""
    from bias_hub.pipelines.jbbq.run import load_questions

    chosen = SimpleNamespace(
        config="all",
        split=split,
        categories=None,
        shots=list(settings.shots),
        seed=settings.seed,
        limit=settings.limit,
    )
    return load_questions(folder, chosen)


def _bbq_rows(folder: Path, split: str, limit: int | None) -> list[dict]:
    from bias_hub.pipelines.score.run import load_rows

    rows, _ = load_rows(folder, "all", None if split == "all" else split)
    if limit:
        by_category: dict[str, list[dict]] = {}
        for row in rows:
            by_category.setdefault(row["category"], []).append(row)
        rows = [row for group in by_category.values() for row in group[:limit]]
    return rows


def _data_row(row: dict) -> dict:
    return {field: row[field] for field in _FIELDS}


def _task(
    name: str, tags: list[str], data: Path, output_type: str, categories: list[str], **fields
) -> dict:
    config = {
        "task": name,
        "tag": tags,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data)}},
        "test_split": "test",
        "output_type": output_type,
        **fields,
        "metric_list": _metric_list(categories),
        "metadata": {"version": TASK_VERSION},
    }
    return config


def export(out_dir: str | Path, settings: Settings) -> dict:
    """Write the task folder; return what it holds (also written as ``tasks.json``)."""
    from bias_hub.pipelines.jbbq.prompting import load_prompt

    # The folder is lm-eval's --include_path, where a task of the user's own naturally goes.
    refuse_losing_files_it_did_not_write(out_dir, "an export")
    prompts, split, max_new_tokens = _resolve(settings)
    specs = [load_prompt(name) for name in prompts]
    jbbq_folder = dataset_folder(settings.jbbq, settings.datasets_root)
    bbq_folder = None
    if settings.bbq is not None:
        bbq_folder = dataset_folder(settings.bbq, settings.datasets_root)
    else:
        try:
            bbq_folder = dataset_folder("bbq", settings.datasets_root)
        except FileNotFoundError:
            log.info(
                "no built bbq dataset: the folder holds JBBQ's tasks only (build it with `bias-hub build bbq`)"
            )
    out = RunFolder(out_dir)
    target = out.target.resolve()
    with out:
        out.record_inputs(
            datasets=[(folder, "all") for folder in (jbbq_folder, bbq_folder) if folder],
            settings=settings,
        )
        questions, shots, few_shot = _jbbq_questions(jbbq_folder, settings, split)
        data = target / "data" / "jbbq.jsonl"
        out.write_jsonl("data/jbbq.jsonl", [_data_row(row) for row in questions])
        categories = sorted({row["category"] for row in questions})
        tasks = []
        for spec in specs:
            for k in settings.shots:
                text = jinja_prompt(spec, shots[:k])
                tags = ["jbbq", f"jbbq_{spec.name}"]
                gen = _task(
                    f"jbbq_{spec.name}_{k}shot_gen",
                    [*tags, "jbbq_gen"],
                    data,
                    "generate_until",
                    categories,
                    doc_to_text=text,
                    doc_to_target="{{label}}",
                    generation_kwargs={
                        "until": [],
                        "max_gen_toks": max_new_tokens,
                        "do_sample": False,
                    },
                    process_results=_function("process_generation"),
                )
                mc = _task(
                    f"jbbq_{spec.name}_{k}shot_mc",
                    [*tags, "jbbq_mc"],
                    data,
                    "multiple_choice",
                    categories,
                    doc_to_text=text,
                    doc_to_choice=[spec.assistant_text(i) for i in range(3)],
                    doc_to_target="label",
                    target_delimiter="",
                    process_results=_function("process_multiple_choice"),
                )
                for task in (gen, mc):
                    out.write_text(f"jbbq/{task['task']}.yaml", _yaml(task))
                    tasks.append(task["task"])
        record = {
            "jbbq": {
                "dataset": str(jbbq_folder.resolve()),
                "split": split,
                "questions": len(questions),
                "categories": categories,
                "prompts": {s.name: s.version for s in specs},
                "shots": list(settings.shots),
                "few_shot": few_shot,
                "seed": settings.seed,
                "max_new_tokens": max_new_tokens,
                "preset": settings.preset,
                "limit": settings.limit,
            }
        }
        if bbq_folder is not None:
            rows = _bbq_rows(bbq_folder, split, settings.limit)
            out.write_jsonl("data/bbq.jsonl", [_data_row(row) for row in rows])
            bbq_categories = sorted({row["category"] for row in rows})
            task = _task(
                "bbq_biashub_mc",
                ["bbq_biashub"],
                target / "data" / "bbq.jsonl",
                "multiple_choice",
                bbq_categories,
                doc_to_text=BBQ_PROMPT,
                doc_to_choice=_function("doc_to_answers"),
                doc_to_target="label",
                process_results=_function("process_multiple_choice"),
            )
            out.write_text(f"bbq/{task['task']}.yaml", _yaml(task))
            tasks.append(task["task"])
            record["bbq"] = {
                "dataset": str(bbq_folder.resolve()),
                "split": split,
                "questions": len(rows),
                "categories": bbq_categories,
            }
        _write_utils(out)
        record["tasks"] = tasks
        out.write_json("tasks.json", record)
        out.write_text("README.md", _readme(target, record))
    log.info("wrote %s: %d lm-eval tasks (%s)", out_dir, len(tasks), ", ".join(tasks))
    return record


def _write_utils(out: RunFolder) -> None:
    """utils.py beside every task YAML (lm-eval resolves ``!function utils.x`` there), with
    the answer parser inlined, and the bbq_bias module it scores with."""
    import bias_hub.pipelines.export.lm_eval_utils as utils
    import bias_hub.pipelines.jbbq.parsing as parsing
    from bias_hub.pipelines.common.locations import metric_folder

    parser = inspect.getsource(parsing)
    parser = parser.split('"""', 2)[2].replace("from __future__ import annotations\n", "")
    parser = re.sub(r"__all__ = \[.*?\]\n", "", parser, flags=re.S)
    text = inspect.getsource(utils)
    marker = re.compile(
        r"^from bias_hub\.pipelines\.jbbq\.parsing import .*# bias-hub export: inline\n", re.M
    )
    if not marker.search(text):
        raise RuntimeError("pipelines/export/lm_eval_utils.py lost its inlined-import marker")
    text = marker.sub(
        lambda _: (
            "# The answer parser of `bias-hub jbbq evaluate` (pipelines/jbbq/parsing.py).\n"
            + parser.strip()
            + "\n"
        ),
        text,
    )
    module = metric_folder("bbq_bias")
    for part in ("jbbq", "bbq"):
        if not (out.staging / part).is_dir():
            continue
        out.write_text(f"{part}/utils.py", text)
        for path in sorted(module.iterdir()):
            if path.is_file() and path.suffix in (".py", ".md", ".txt"):
                out.write_bytes(f"{part}/bbq_bias/{path.name}", path.read_bytes())


def _readme(folder: Path, record: dict) -> str:
    tasks = record["tasks"]
    lines = [
        "# bias-hub tasks for lm-evaluation-harness",
        "",
        "Written by `bias-hub export lm-eval`; run with lm-evaluation-harness 0.4:",
        "",
        "```",
        f"lm-eval ls tasks --include_path {folder}",
        f"lm-eval run --model hf --model_args pretrained=MODEL --tasks jbbq_gen --include_path {folder} "
        "--log_samples --output_path results",
        "```",
        "",
        f"JBBQ: {record['jbbq']['questions']} questions of `{record['jbbq']['dataset']}` (split "
        f"{record['jbbq']['split']}); the data files under data/ are for local use only (JBBQ may not be "
        "redistributed). Score logged samples with `bias-hub score bbq_bias --from-lm-eval SAMPLES.jsonl --out DIR`.",
        "",
        "Tasks: " + ", ".join(f"`{t}`" for t in tasks),
        "",
    ]
    return "\n".join(lines)
