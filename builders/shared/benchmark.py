"""Benchmark datasets as Hugging Face Hub Benchmarks, and the one vocabulary of their scores.

A dataset repo with an ``eval.yaml`` at its root (``name``, ``description``,
``evaluation_framework``, ``tasks`` of ``id`` / ``config`` / ``split``) is a Hub Benchmark;
model repos then report values of its tasks in ``.eval_results/*.yaml``. What each benchmark's
tasks are is data (``benchmarks.yaml`` beside this file): ``eval_yaml`` turns it into the file
a build writes beside its card, for the configs that build holds; ``eval_yaml_problems`` checks
a folder's file before anything is pushed; ``tasks`` and ``score_info`` tell the exports and the
leaderboard which number of a run is which task and which way it is better.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "EVAL_YAML",
    "FRAMEWORK",
    "Task",
    "benchmark",
    "eval_yaml",
    "eval_yaml_problems",
    "eval_yaml_text",
    "find_task",
    "read_eval_yaml",
    "score_info",
    "tasks",
    "vocabulary",
]

EVAL_YAML = "eval.yaml"
FRAMEWORK = "bias-hub"
_DATA = Path(__file__).with_name("benchmarks.yaml")
# How each direction reads in a description.
_BEST = {
    "high": "higher is better",
    "low": "lower is better",
    "zero": "best at 0, whatever its sign",
}


@functools.cache
def _declared() -> dict:
    import yaml

    return yaml.safe_load(_DATA.read_text(encoding="utf-8"))


def benchmark(name: str) -> dict | None:
    """The declaration of benchmark ``name`` (a dataset folder's name), or None."""
    return _declared()["benchmarks"].get(name)


def vocabulary() -> dict[str, dict[str, dict]]:
    """``{metric module: {score: {"best", "says", "lm_eval_bbq"?}}}``: one name per quantity."""
    return _declared()["scores"]


def score_info(metric: str, score: str) -> dict:
    """What ``score`` of ``metric`` is and which way it is better (a KeyError for an unknown one)."""
    return vocabulary()[metric][score]


@dataclass(frozen=True)
class Task:
    """One task of a benchmark: the score ``score`` of the metric module ``metric`` on the
    questions of ``config`` / ``split``."""

    id: str
    config: str
    split: str
    metric: str
    score: str
    # The config's name where the task is a per-category copy of a headline task.
    category: str | None = None

    @property
    def best(self) -> str:
        return score_info(self.metric, self.score)["best"]


def tasks(name: str, configs: Mapping[str, Collection[str]]) -> list[Task]:
    """The tasks of benchmark ``name`` on a build holding ``configs`` (``{config: splits}``):
    each declared task on its config (the first of a list the build holds; left out where it
    holds none), then, with ``per_category``, the same tasks on each other config."""
    declared = benchmark(name)
    if declared is None:
        return []
    split = declared["split"]
    found: list[Task] = []
    for item in declared["tasks"]:
        choices = item["config"] if isinstance(item["config"], list) else [item["config"]]
        config = next((c for c in choices if split in configs.get(c, ())), None)
        if config is not None:
            metric = item.get("metric", declared.get("metric"))
            found.append(Task(item["id"], config, split, metric, item.get("score", item["id"])))
    if declared.get("per_category"):
        used = {task.config for task in found}
        found += [
            Task(f"{task.id}_{config}", config, split, task.metric, task.score, config)
            for config in configs
            if config not in used and split in configs[config]
            for task in found[: len(declared["tasks"])]
        ]
    return found


def find_task(name: str, task_id: str) -> Task | None:
    """The task ``task_id`` of benchmark ``name`` (a per-category id names its category's
    config), or None. A task declared on several configs names the first."""
    declared = benchmark(name)
    for item in (declared or {}).get("tasks", []):
        config = item["config"][0] if isinstance(item["config"], list) else item["config"]
        metric = item.get("metric", declared.get("metric"))
        score = item.get("score", item["id"])
        if item["id"] == task_id:
            return Task(task_id, config, declared["split"], metric, score)
        if declared.get("per_category") and task_id.startswith(f"{item['id']}_"):
            category = task_id[len(item["id"]) + 1 :]
            return Task(task_id, category, declared["split"], metric, score, category)
    return None


def _description(declared: dict, found: list[Task]) -> str:
    lines = [" ".join(declared["summary"].split()), ""]
    lines.append(f"Tasks (split `{found[0].split}`), each a score of bias-hub's metric modules:")
    for task in (t for t in found if t.category is None):
        info = score_info(task.metric, task.score)
        lines.append(
            f"- `{task.id}` (config `{task.config}`, {task.metric}): {info['says']}; {_BEST[info['best']]}."
        )
    copies = [t for t in found if t.category is not None]
    if copies:
        lines.append(
            f"- `<task>_<category>`: the same score on one category's config (e.g. `{copies[0].id}`)."
        )
    return "\n".join(lines) + "\n"


def eval_yaml(name: str, configs: Mapping[str, Collection[str]]) -> dict | None:
    """The ``eval.yaml`` of benchmark ``name`` built with ``configs`` ({config: splits}), or
    None when ``name`` is no benchmark or the build holds none of its tasks' configs."""
    declared = benchmark(name)
    found = tasks(name, configs)
    if declared is None or not found:
        return None
    return {
        "name": declared["name"],
        "description": _description(declared, found),
        "evaluation_framework": FRAMEWORK,
        "tasks": [{"id": t.id, "config": t.config, "split": t.split} for t in found],
    }


def eval_yaml_text(spec: Mapping) -> str:
    """``spec`` as YAML, the description as a literal block (it reads as written on the Hub)."""
    import yaml

    class Dumper(yaml.SafeDumper):
        pass

    def text(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
        style = "|" if "\n" in value else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)

    Dumper.add_representer(str, text)
    return yaml.dump(dict(spec), Dumper=Dumper, sort_keys=False, allow_unicode=True, width=1000)


def read_eval_yaml(folder: str | Path) -> dict:
    """A folder's ``eval.yaml``; a ValueError naming the file when it is not a YAML mapping."""
    import yaml

    path = Path(folder) / EVAL_YAML
    try:
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise ValueError(f"{path}: not YAML ({str(err).splitlines()[0]})") from None
    if not isinstance(spec, dict):
        raise ValueError(f"{path}: expected a mapping with name, description, tasks")
    return spec


def eval_yaml_problems(folder: str | Path, configs: Mapping[str, Collection[str]]) -> list[str]:
    """What would make the Hub refuse ``folder``'s ``eval.yaml``, or make its leaderboard point at
    questions the folder does not hold: each a line naming the file and the field or task."""
    path = Path(folder) / EVAL_YAML
    try:
        spec = read_eval_yaml(folder)
    except ValueError as err:
        return [str(err)]
    problems = [
        f"{path}: `{key}` is missing or empty"
        for key in ("name", "description", "evaluation_framework")
        if not isinstance(spec.get(key), str) or not spec[key].strip()
    ]
    listed = spec.get("tasks")
    if not isinstance(listed, list) or not listed:
        return [*problems, f"{path}: `tasks` must be a non-empty list"]
    seen: set[str] = set()
    for number, task in enumerate(listed, start=1):
        where = f"{path}, task {number}"
        if not isinstance(task, dict) or not all(
            isinstance(task.get(k), str) and task[k] for k in ("id", "config", "split")
        ):
            problems.append(f"{where}: expected `id`, `config` and `split`, each a text")
            continue
        if task["id"] in seen:
            problems.append(f"{where}: id `{task['id']}` appears twice")
        seen.add(task["id"])
        if task["config"] not in configs:
            problems.append(
                f"{where} (`{task['id']}`): config `{task['config']}` is not built here "
                f"(configs: {', '.join(configs) or 'none'})"
            )
        elif task["split"] not in configs[task["config"]]:
            problems.append(
                f"{where} (`{task['id']}`): config `{task['config']}` has no split `{task['split']}` "
                f"(splits: {', '.join(configs[task['config']])})"
            )
    return problems
