"""Run folders of any part and origin, read as the rows of a benchmark's leaderboard.

An ``Entry`` is one model under one setting on one benchmark: the values of the benchmark's
tasks with their intervals, the model's record, the setting that decides whether two rows
compare, and where its per-question answers are, for paired tests. ``read_entries`` takes a
bias-hub run folder, a results file lm-evaluation-harness wrote, or ``study:NAME`` (the values
a paper printed, labelled as the paper's).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from bias_hub.builders.shared.benchmark import Task, benchmark, tasks, vocabulary
from bias_hub.pipelines.common.run_folder import MANIFEST, edited_files

__all__ = ["STUDY_PREFIX", "Entry", "Score", "read_entries", "verify_run_folder"]

STUDY_PREFIX = "study:"
# The keys a setting is told by, in the order a label lists them.
SETTING_KEYS = tuple("prompt shots layout scoring answer_reader preset split config".split())
# lm-evaluation-harness's own `bbq` names -> the vocabulary's (a task suffixes a category).
_LM_EVAL_NAMES = {
    info["lm_eval_bbq"]: score
    for score, info in vocabulary()["bbq_bias"].items()
    if info.get("lm_eval_bbq")
}
_LM_EVAL_TASK = re.compile(r"^jbbq_(?P<prompt>.+)_(?P<shots>\d+)shot_(?P<kind>gen|mc)$")


@dataclass
class Score:
    value: float
    low: float | None = None
    high: float | None = None
    level: float | None = None  # the interval's confidence level


@dataclass
class Entry:
    """One model under one setting on one benchmark."""

    benchmark: str
    model: str
    run: str
    origin: str
    scores: dict[str, Score]
    model_record: dict = field(default_factory=dict)
    setting: dict = field(default_factory=dict)
    # sha256 over the dataset files the run read (None: unknown, e.g. a paper's or lm-eval's)
    dataset: str | None = None
    dataset_kind: str = "unknown"
    dataset_detail: str = ""
    date: str | None = None
    paper: str | None = None
    # Why the run answers only part of its questions (a --limit, an incomplete log), or None.
    partial: str | None = None
    # (predictions.jsonl, {column: value} selecting this entry's rows): for paired tests
    items: tuple[Path, dict] | None = None
    departures: list[str] = field(default_factory=list)

    @property
    def group(self) -> tuple:
        """What rows must share to be ranked together: the benchmark, the dataset build, the
        questions (split, config) and how they are asked and read (preset, answer reader)."""
        s = self.setting
        return (
            self.benchmark,
            self.dataset,
            s.get("split"),
            s.get("preset"),
            s.get("answer_reader"),
        )

    def setting_label(self, leave_out: tuple[str, ...] = ()) -> str:
        """``prompt basic, shots 4, ...``: the setting's keys that are set, but ``leave_out``."""
        parts = [
            f"{key.replace('_', ' ')} {self.setting[key]}"
            for key in SETTING_KEYS
            if self.setting.get(key) not in (None, "") and key not in leave_out
        ]
        return ", ".join(parts)


def _read_json(path: Path, what: str) -> dict:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as err:
        raise ValueError(f"{path}: {what} that cannot be read ({err})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: {what} that is not a JSON object")
    return data


def verify_run_folder(folder: Path) -> list[str]:
    """Each file the manifest lists that is gone or no longer has the sha256 it was written with
    (``run_folder.edited_files``, the one check reuse and ``report`` make), one line each."""
    if not (folder / MANIFEST).is_file():
        return [f"{folder}: no manifest.json, so nothing says what the run wrote"]
    return [f"{folder}: {line}" for line in edited_files(folder)]


def _date(manifest: dict) -> str | None:
    try:
        return datetime.strptime(manifest["started"], "%Y-%m-%dT%H:%M:%S%z").isoformat()
    except (KeyError, TypeError, ValueError):
        return None


def _dataset(manifest: dict) -> tuple[str | None, dict]:
    """The benchmark's name, a fingerprint of its files, and the record of the dataset read."""
    datasets = (manifest.get("inputs") or {}).get("datasets") or []
    if not datasets:
        return None, {}
    record = datasets[0]
    files = record.get("files") or {}
    digest = hashlib.sha256(
        "".join(f"{k}\0{v}\n" for k, v in sorted(files.items())).encode()
    ).hexdigest()
    return record.get("name"), {
        "dataset": digest[:12] if files else None,
        "dataset_kind": (record.get("origin") or {}).get("kind", "unknown"),
        "dataset_detail": (record.get("origin") or {}).get("detail", ""),
    }


def _model_record(manifest: dict, name: str | None) -> dict:
    models = (manifest.get("inputs") or {}).get("models") or []
    for record in models:
        if name is None or record.get("id") == name or record.get("path") == name:
            return dict(record)
    return {}


def _interval(intervals: dict | None, key: str) -> tuple[float | None, float | None, float | None]:
    found = (intervals or {}).get(key) or {}
    return found.get("low"), found.get("high"), found.get("confidence_level")


def _scores(result: dict, found: list[Task], level: str | None = None) -> dict[str, Score]:
    """The values of ``found`` in one metric result (``level``: a category of ``per_category``)."""
    if level is not None:
        result = (result.get("per_category") or {}).get(level) or {}
    scores = {}
    for task in found:
        value = result.get(task.score)
        if isinstance(value, (int, float)) and value == value:  # NaN: undefined, left out
            scores[task.id] = Score(
                float(value), *_interval(result.get("confidence_intervals"), task.score)
            )
    return scores


def _bbq_scores(name: str, result: dict, config: str) -> dict[str, Score]:
    """A bbq_bias result on ``config``: its tasks, and with ``all`` each category's too."""
    categories = {c: ["test"] for c in result.get("per_category") or {}}
    known = tasks(name, {"all": ["test"], config: ["test"], **categories})
    on = [t for t in known if t.config == config]
    scores = _scores(result, on)
    if config == "all":
        for category in result.get("per_category") or {}:
            scores.update(_scores(result, [t for t in known if t.config == category], category))
    return scores


def _config_tasks(name: str, config: str, metric: str) -> list[Task]:
    return [t for t in tasks(name, {config: ["test"]}) if t.metric == metric]


def _preset(results: dict) -> tuple[str | None, list[str]]:
    preset = results.get("preset") or {}
    departures = [
        f"{d['setting']} {d.get('used')!r} (preset: {d.get('preset')!r})"
        for d in preset.get("departures") or []
    ]
    return preset.get("name"), departures


def _jbbq(folder: Path, results: dict, manifest: dict, base: dict) -> list[Entry]:
    settings = results.get("settings") or {}
    name = base["benchmark"]
    preset, departures = _preset(results)
    partial = None
    if settings.get("limit"):
        partial = f"--limit {settings['limit']} questions per category"
    elif settings.get("categories"):
        partial = f"--categories {', '.join(settings['categories'])}"
    backend = results.get("backend", "hf")
    model_record = _model_record(manifest, None)
    origin = "bias-hub jbbq evaluate" + (
        f" (API at {model_record.get('api')})" if backend == "openai" else ""
    )
    entries = []
    for run in results.get("runs") or []:
        setting = {
            "prompt": run.get("prompt"),
            "shots": run.get("shots"),
            "layout": run.get("layout"),
            "scoring": results.get("scoring"),
            "answer_reader": results.get("answer_reader"),
            "preset": preset,
            "split": settings.get("split"),
            "config": settings.get("config"),
        }
        entries.append(
            Entry(
                **base,
                model=str(results.get("model") or model_record.get("id")),
                origin=origin,
                scores=_bbq_scores(name, run.get("metrics") or {}, settings.get("config", "all")),
                model_record=model_record,
                setting=setting,
                partial=partial,
                departures=departures,
                items=(
                    folder / "predictions.jsonl",
                    {"prompt": run.get("prompt"), "shots": run.get("shots")},
                ),
            )
        )
    return entries


def _score(folder: Path, results: dict, manifest: dict, base: dict) -> list[Entry]:
    metric, result = results.get("metric"), results.get("result") or {}
    source = results.get("predictions") or {}
    name = base["benchmark"]
    if name is None:
        # Questions scored from a log's docs: the exported task's name says the benchmark.
        file = Path(source.get("file") or "").name
        name = "bbq" if "bbq" in file and "jbbq" not in file else "jbbq"
        base = {**base, "benchmark": name}
    config = (results.get("dataset") or {}).get("config") or "all"
    coverage = results.get("coverage") or {}
    reader = results.get("answer_reader") or {}
    if metric == "bbq_bias":
        scores = _bbq_scores(name, result, config)
    else:
        scores = _scores(result, _config_tasks(name, config, metric))
    record = _model_record(manifest, None)
    return [
        Entry(
            **base,
            model=str(results.get("model") or record.get("id") or "(model not recorded)"),
            origin=f"bias-hub score of {source.get('format', 'predictions')}",
            scores=scores,
            model_record=record,
            setting={
                "answer_reader": reader.get("name"),
                "split": ", ".join((results.get("dataset") or {}).get("splits") or []) or None,
                "config": config,
            },
            partial=None
            if coverage.get("complete", True)
            else f"answers {coverage.get('answered')} of {coverage.get('expected')}",
        )
    ]


def _nli(folder: Path, results: dict, manifest: dict, base: dict) -> list[Entry]:
    preset, departures = _preset(results)
    found = _config_tasks(base["benchmark"], results.get("config") or "", "nli_gender_bias")
    return [
        Entry(
            **base,
            model=name,
            origin="bias-hub nli evaluate",
            scores=_scores(result, found),
            model_record=_model_record(manifest, name),
            setting={"preset": preset, "split": "test", "config": results.get("config")},
            departures=departures,
        )
        for name, result in (results.get("models") or {}).items()
    ]


def _stereoset(folder: Path, results: dict, manifest: dict, base: dict) -> list[Entry]:
    config = (results.get("dataset") or {}).get("config") or ""
    models = (manifest.get("inputs") or {}).get("models") or []
    settings = results.get("settings") or {}
    attention = results.get("attention") or {}
    perplexity = results.get("perplexity") or {}
    values = {
        "gender_attention_gap": (attention.get("mean_gap"), attention.get("mean_gap_interval")),
        "perplexity_gap": (
            perplexity.get("mean_gap"),
            (perplexity.get("intervals") or {}).get("mean_gap"),
        ),
    }
    entries = []
    # The attention model first, the language model second (the order the run records them).
    for record, metric in zip(models, ("gender_attention_gap", "perplexity_gap"), strict=False):
        value, interval = values[metric]
        found = _config_tasks(base["benchmark"], config, metric)
        if value is None or not found:
            continue
        entries.append(
            Entry(
                **base,
                model=str(record.get("id")),
                origin="bias-hub stereoset",
                scores={found[0].id: Score(float(value), *_interval({"v": interval}, "v"))},
                model_record=dict(record),
                setting={"split": "test", "config": config, "preset": settings.get("preset")},
            )
        )
    return entries


def _speciesism(folder: Path, results: dict, manifest: dict, base: dict) -> list[Entry]:
    suffix = "" if results.get("language", "en") == "en" else f"_{results['language']}"
    entries = []
    for model in results.get("models") or []:
        scores = {}
        for key, config in (("association", "probability"), ("sentiment", "sentiment")):
            found = _config_tasks(base["benchmark"], config + suffix, "speciesism_bias")
            scores.update(_scores(model.get(key) or {}, found))
        entries.append(
            Entry(
                **base,
                model=str(model.get("label") or model.get("model")),
                origin="bias-hub speciesism",
                scores=scores,
                model_record=_model_record(manifest, model.get("model")),
                setting={"split": "test", "preset": (results.get("preset") or {}).get("name")},
            )
        )
    return entries


_READERS = {
    ("jbbq", "evaluate"): _jbbq,
    ("score", "score"): _score,
    ("nli", "evaluate"): _nli,
    ("stereoset", "attention"): _stereoset,
    ("speciesism", "run"): _speciesism,
}
# A part's own dataset, where its manifest names none.
_DEFAULT_BENCHMARK = {
    "jbbq": "jbbq",
    "nli": "nli_gender_bias",
    "stereoset": "stereoset_gender_swap",
    "speciesism": "speciesism_templates",
}


def _run_folder(folder: Path) -> list[Entry]:
    unverified = verify_run_folder(folder)
    if unverified:  # as `report` and `export eval-results` do: only what a run wrote is shown
        raise ValueError(f"{unverified[0]}; a leaderboard shows only what runs wrote: run it again")
    results = _read_json(folder / "results.json", "a results.json")
    manifest_path = folder / "manifest.json"
    manifest = _read_json(manifest_path, "a manifest") if manifest_path.is_file() else {}
    key = (results.get("part"), results.get("step"))
    reader = _READERS.get(key)
    if reader is None:
        raise ValueError(
            f"{folder}: a `{key[0]} {key[1]}` run holds no benchmark task's score (runs of: "
            + ", ".join(f"{part} {step}" for part, step in _READERS)
            + ")"
        )
    name, dataset = _dataset(manifest)
    if name is not None and benchmark(name) is None:
        name = None
    base = {
        "benchmark": name or _DEFAULT_BENCHMARK.get(key[0]),
        "run": str(folder),
        "date": _date(manifest),
        **dataset,
    }
    entries = [entry for entry in reader(folder, results, manifest, base) if entry.scores]
    if not entries:
        raise ValueError(f"{folder}: its results hold no value of a task of {base['benchmark']}")
    return entries


def _lm_eval_results(path: Path) -> list[Entry]:
    """A results file lm-evaluation-harness wrote: its tables under our names or its ``bbq``
    task's; no intervals (lm-eval computes none for these), no per-question answers."""
    data = _read_json(path, "an lm-eval results file")
    args = str((data.get("config") or {}).get("model_args") or "")
    pairs = dict(item.partition("=")[::2] for item in args.split(",") if "=" in item)
    model = pairs.get("pretrained") or pairs.get("model") or data.get("model_name") or "(unnamed)"
    entries = []
    for task, table in (data.get("results") or {}).items():
        name = "bbq" if task.startswith("bbq") else "jbbq"
        found = {t.id: t for t in tasks(name, {"all": ["test"]})}
        scores = {}
        for key, value in table.items():
            metric, _, _filter = key.partition(",")
            ours = _LM_EVAL_NAMES.get(metric, metric)
            if ours in found and isinstance(value, (int, float)) and value == value:
                scores[ours] = Score(float(value))
        if not scores:
            continue
        shape = _LM_EVAL_TASK.match(task)
        setting = {"config": "all"}
        if shape:
            setting.update(
                prompt=shape["prompt"],
                shots=int(shape["shots"]),
                scoring="generate" if shape["kind"] == "gen" else "loglikelihood",
            )
        entries.append(
            Entry(
                benchmark=name,
                model=model,
                run=f"{path} ({task})",
                origin="lm-eval results file",
                scores=scores,
                model_record={
                    "id": model,
                    **({"revision": pairs["revision"]} if "revision" in pairs else {}),
                },
                setting=setting,
            )
        )
    if not entries:
        raise ValueError(f"{path}: no task of the file reports a JBBQ or BBQ score")
    return entries


def _study(name: str) -> list[Entry]:
    """The values a study's paper printed for its models, for the tasks they are values of."""
    from bias_hub.pipelines.reproduce.study import load_study

    study = load_study(name)
    citation = " ".join(study.paper["citation"].split())
    names = {m["id"]: m.get("name", m["id"]) for m in study.models}
    entries = []
    for table in study.tables:
        rows = _PRINTED.get((study.name, table["id"]))
        for model, benchmark_name, setting, scores in rows(table["printed"]) if rows else []:
            entries.append(
                Entry(
                    benchmark=benchmark_name,
                    model=model,
                    run=f"{STUDY_PREFIX}{study.name}",
                    origin=f"as printed ({table['title'].split(':')[0]}, as {names.get(model, model)})",
                    scores=scores,
                    model_record={"id": model},
                    setting=setting,
                    paper=citation,
                )
            )
    if not entries:
        raise ValueError(
            f"{STUDY_PREFIX}{name}: its paper prints no value of a benchmark task (only word lists, "
            "correlations or figures); studies with printed task values: "
            + ", ".join(sorted({s for s, _ in _PRINTED}))
        )
    return entries


def _jbbq_table4(printed: dict):
    """JBBQ Table 4: accuracy in % per category and context (0-shot, basic prompt)."""
    condition = {"Amb": "accuracy_ambiguous", "Dis": "accuracy_disambiguated"}
    category = {
        "Age": "Age",
        "Disability": "Disability_status",
        "Gender": "Gender_identity",
        "Physical": "Physical_appearance",
        "Sexual": "Sexual_orientation",
    }
    for model, cells in printed["values"].items():
        scores = {}
        for cell, values in cells.items():
            group, _, context = cell.partition("-")
            scores[f"{condition[context]}_{category[group]}"] = Score(values[0] / 100)
        yield model, "jbbq", {"prompt": "basic", "shots": 0, "preset": "table4"}, scores


def _nli_table4(printed: dict):
    """NLI Table 4: the bias score s of each model."""
    for model, cell in printed.items():
        yield model, "nli_gender_bias", {"split": "test"}, {"bias_score": Score(cell["score"])}


_PRINTED = {("jbbq", "table4"): _jbbq_table4, ("nli_gender_bias", "table4"): _nli_table4}


def read_entries(source: str | Path) -> list[Entry]:
    """The entries of a run folder, an lm-eval results file or ``study:NAME``."""
    text = str(source)
    if text.startswith(STUDY_PREFIX):
        return _study(text[len(STUDY_PREFIX) :])
    path = Path(source)
    if path.is_dir():
        if not (path / "results.json").is_file():
            raise FileNotFoundError(
                f"{path}: no results.json; expected a bias-hub run folder, an lm-eval results_*.json "
                f"file or {STUDY_PREFIX}NAME"
            )
        return _run_folder(path)
    if path.is_file() and path.suffix == ".json":
        return _lm_eval_results(path)
    raise FileNotFoundError(
        f"{path}: no such run folder or lm-eval results file (or {STUDY_PREFIX}NAME for a paper's values)"
    )
