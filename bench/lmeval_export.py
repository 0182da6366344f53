"""`bias-hub export lm-eval` checked against lm-evaluation-harness 0.4 on a tiny model.

    python -m bench.lmeval_export                 # needs bench/.venv-lmeval (--setup-lmeval creates it)
    python -m bench.lmeval_export --limit 4 --prompt basic --bbq-source path/to/bbq_release.tgz

1. ``bias-hub export lm-eval`` of the built JBBQ sample (``datasets/jbbq``; and BBQ built from
   ``--bbq-source`` when given), ``--limit`` questions per category, the chosen prompts, 0 and 4
   shots; the folder is then moved elsewhere (the export's own path no longer exists), as a
   user copies it to a cluster;
2. ``lm-eval ls tasks`` and ``lm-eval validate`` on the moved folder: every exported task listed
   and valid; lm-eval's table gives each task the n-shot its name says;
3. a tiny Llama, taught seeded replies (an index) to the exported prompts
   (``--random-model``: random weights), answers with ``bias-hub jbbq evaluate``
   (``--chat no``, ``--scoring generate`` and ``loglikelihood``, the same prompts, shots, limit and
   seed) and with ``lm-eval run`` on the exported ``_gen`` and ``_mc`` tasks (``--log_samples``);
4. per task, the two tools' predictions question by question; then ``bias-hub score bbq_bias
   --from-lm-eval`` on lm-eval's samples against ``jbbq evaluate``'s own scores and against the
   scores in lm-eval's results table.

Prints one line per task and exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench._harness import OFFLINE, REPO_ROOT, read_jsonl, save_json
from bench._lmeval import LMEVAL_VENV, setup_lmeval
from bench.bbq_unifiedqa_score import SCORES as BBQ_SCORES

# The exported tasks' metrics: bbq_bias's own names.
SCORES = (*BBQ_SCORES, "unparsable_rate")
ENV = dict(os.environ, **OFFLINE, TOKENIZERS_PARALLELISM="false", MPLBACKEND="Agg")


def _run(command: list[str], **kwargs) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(command, check=True, cwd=REPO_ROOT, env=ENV, text=True, **kwargs)
    except subprocess.CalledProcessError as err:
        raise RuntimeError(
            f"{Path(command[0]).name} {command[1]} failed:\n{(err.stderr or '')[-3000:]}"
        ) from None


def _bias_hub(*args: str) -> None:
    _run([sys.executable, "-m", "bias_hub", *args])


def _same(a, b) -> bool:
    """Equal to 1e-9, None and NaN (no value) equal to each other only."""
    a, b = (math.nan if x is None else x for x in (a, b))
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= 1e-9


def _model(folder: Path, tasks_dir: Path, prompts: list[str], seed: int, asked=None) -> str:
    """The tiny model both tools run. ``asked``: ``(dataset folder, jbbq evaluate's Settings)``
    whose every question, under each prompt and shot count, the model is taught a seeded index
    (``taught_model.teach_lessons``), so that generation gives answers rather than noise; None:
    a random one. No reply without an index is taught: it would leave the three choices' log-
    likelihoods tied (each taught the same margin below), and ties break apart between tools."""
    import random

    from bias_hub.pipelines.jbbq.prompting import load_prompt

    if asked is None:
        from bias_hub.pipelines.jbbq.random_model import build_tiny_model

        docs = read_jsonl(tasks_dir / "data" / "jbbq.jsonl")
        texts = [d["context"] + d["question"] + d["ans0"] + d["ans1"] + d["ans2"] for d in docs]
        build_tiny_model(
            folder, texts + [load_prompt(p).system for p in prompts], seed=seed, chat_template=False
        )
        return "random tiny Llama (bias_hub.pipelines.jbbq.random_model)"
    from bias_hub.pipelines.jbbq.run import load_questions
    from bias_hub.pipelines.jbbq.taught_model import Lesson, teach_lessons

    source, settings = asked
    rows, shots, _ = load_questions(source, settings)
    rng = random.Random(seed)
    lessons = [
        Lesson(
            settings,
            load_prompt(prompt, settings.layout),
            rows,
            shots[:k],
            [rng.choice("012") for _ in rows],
        )
        for prompt in prompts
        for k in settings.shots
    ]
    # two tokens per reply: "taught-wide" fits 384 replies (random_model.MODEL_CONFIGS)
    taught = teach_lessons(lessons, seed=seed, config="taught-wide")
    taught.model.save_pretrained(folder)
    taught.tokenizer.save_pretrained(folder)
    fit = 1 - taught.wrong / taught.questions
    return (
        f"tiny Llama taught planted replies (bias_hub.pipelines.jbbq.taught_model), fit {fit:.2f}"
    )


def check(
    work: Path,
    lmeval: Path,
    prompts: list[str],
    limit: int,
    bbq_source: Path | None,
    seed: int = 0,
    planted: bool = True,
    datasets_root: Path | None = None,
) -> dict:
    """Run the whole comparison in ``work`` on the JBBQ under ``datasets_root`` (default: the
    checkout's datasets/); return the report (``ok`` False on any difference)."""
    roots = ["--datasets-root", str(datasets_root or REPO_ROOT / "datasets")]
    bbq_args: list[str] = []
    if bbq_source is not None:
        _bias_hub("build", "bbq", "--source", str(bbq_source), "--out-root", str(work / "ds"))
        bbq_args = ["--bbq", str(work / "ds" / "bbq")]
    tasks_dir = work / "tasks"
    _bias_hub(
        *["export", "lm-eval", "--out", str(tasks_dir), "--prompt", *prompts, "--shots", "0", "4"],
        *["--limit", str(limit), "--seed", str(seed), *roots, *bbq_args],
    )
    # Moved whole, as to a cluster: nothing may still point at the export's own path.
    moved = work / "elsewhere" / "tasks"
    moved.parent.mkdir()
    tasks_dir.rename(moved)
    tasks_dir = moved
    exported = json.loads((tasks_dir / "tasks.json").read_text(encoding="utf-8"))
    tasks = exported["tasks"]
    lm_eval = str(lmeval.parent / "lm-eval")
    listed = _run(
        [lm_eval, "ls", "tasks", "--include_path", str(tasks_dir)], capture_output=True
    ).stdout
    missing = [task for task in tasks if f"|{task} " not in listed]
    validated = _run(
        [lm_eval, "validate", "--tasks", ",".join(tasks), "--include_path", str(tasks_dir)],
        capture_output=True,
    ).stdout
    report: dict = {
        "tasks": tasks,
        "not_listed": missing,
        "validated": "valid" in validated,
        "runs": {},
    }

    jbbq = exported["jbbq"]
    asked = None
    if planted:
        from bias_hub.pipelines.jbbq.settings import with_preset

        settings = with_preset(
            jbbq["preset"],
            prompts=prompts,
            shots=[0, 4],
            scoring="generate",
            chat="no",
            split=jbbq["split"],
            max_new_tokens=jbbq["max_new_tokens"],
            limit=limit,
            seed=seed,
        )
        asked = (Path(roots[1]) / "jbbq", settings)
    model = work / "model"
    report["model"] = _model(model, tasks_dir, prompts, seed, asked)

    ours = {}
    for scoring, kind in (("generate", "gen"), ("loglikelihood", "mc")):
        out = work / f"evaluate_{kind}"
        _bias_hub(
            *["jbbq", "evaluate", "--model", str(model), "--prompt", ",".join(prompts)],
            *["--shots", "0,4", "--scoring", scoring, "--chat", "no", "--split", jbbq["split"]],
            *["--max-new-tokens", str(jbbq["max_new_tokens"]), "--preset", jbbq["preset"]],
            *["--limit", str(limit), "--seed", str(seed), "--device", "cpu"],
            *["--confidence-level", "0", "--batch-size", "8", *roots, "--out", str(out), "-q"],
        )
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        predictions = read_jsonl(out / "predictions.jsonl")
        for run in results["runs"]:
            name = f"jbbq_{run['prompt']}_{run['shots']}shot_{kind}"
            mine = [
                p
                for p in predictions
                if p["prompt"] == run["prompt"] and p["shots"] == run["shots"]
            ]
            ours[name] = {
                "metrics": run["metrics"],
                "answers": {(p["category"], p["example_id"]): p["prediction"] for p in mine},
                "replies": {(p["category"], p["example_id"]): p.get("reply") for p in mine},
            }

    runs = {
        name: names
        for name in ("jbbq", "bbq")
        if (names := [t for t in tasks if t.startswith(f"{name}_")])
    }
    table: dict = {}
    n_shot: dict = {}
    started = time.perf_counter()
    for name, names in runs.items():
        command = [lm_eval, "run", "--model", "hf", "--model_args"]
        command += [f"pretrained={model},dtype=float32", "--device", "cpu", "--batch_size"]
        command += ["8", "--tasks", ",".join(names), "--include_path", str(tasks_dir)]
        command += ["--log_samples", "--output_path", str(work / "lmeval_out" / name)]
        _run(command, capture_output=True)
        newest = sorted((work / "lmeval_out" / name).rglob("results_*.json"))[-1]
        results = json.loads(newest.read_text(encoding="utf-8"))
        table.update(results["results"])
        n_shot.update(results["n-shot"])
    report["lm_eval_seconds"] = round(time.perf_counter() - started, 1)
    # a `_<k>shot_` task shows n-shot k in lm-eval's table; BBQ's task is 0-shot
    report["n_shot"] = {task: n_shot.get(task) for task in tasks}
    report["n_shot_matches"] = all(
        n_shot.get(task)
        == (int(task.split("shot_")[0].rsplit("_", 1)[1]) if "shot_" in task else 0)
        for task in tasks
    )
    output = work / "lmeval_out"
    ok = not missing and report["validated"] and report["n_shot_matches"]
    for task in tasks:
        samples_file = sorted(output.rglob(f"samples_{task}_*.jsonl"))[-1]
        scored = work / "score" / task
        _bias_hub(
            *["score", "bbq_bias", "--from-lm-eval", str(samples_file), "--out", str(scored)],
            *["--confidence-level", "none", "-q"],
        )
        score = json.loads((scored / "results.json").read_text(encoding="utf-8"))["result"]
        samples = read_jsonl(samples_file)
        entry: dict = {"questions": len(samples)}
        lm_table = {name: table[task].get(f"{name},none") for name in SCORES}
        entry["table_equals_score"] = all(_same(lm_table[k], score[k]) for k in SCORES)
        for category, values in score["per_category"].items():
            entry["table_equals_score"] &= all(
                _same(table[task].get(f"{k}_{category},none"), values[k]) for k in SCORES
            )
        if task in ours:
            from bias_hub.pipelines.common.answer_reading import read_row_reply
            from bias_hub.pipelines.score.predictions import read_lm_eval_samples

            logged = read_lm_eval_samples(samples_file)
            # a generation sample logs the reply: read it as the task's utils.py does
            theirs = {
                (r["category"], r["example_id"]): read_row_reply(r, r["prediction"]).index
                if isinstance(r["prediction"], str)
                else r["prediction"]
                for r in logged
            }
            mine = ours[task]["answers"]
            entry["same_questions"] = set(theirs) == set(mine)
            entry["differing_predictions"] = sum(theirs[key] != mine.get(key) for key in theirs)
            # the generated texts themselves, not only the index read from them
            if task.endswith("_gen"):
                replies = ours[task]["replies"]
                entry["differing_replies"] = sum(
                    r["reply"] != replies.get((r["category"], r["example_id"])) for r in logged
                )
                ok &= not entry["differing_replies"]
            entry["score_equals_evaluate"] = all(
                _same(score[k], ours[task]["metrics"][k]) for k in SCORES
            )
            entry["prediction_counts"] = {
                str(v): list(theirs.values()).count(v) for v in (-1, 0, 1, 2)
            }
            ok &= (
                entry["same_questions"]
                and not entry["differing_predictions"]
                and entry["score_equals_evaluate"]
            )
        ok &= entry["table_equals_score"]
        entry["scores"] = {k: score[k] for k in SCORES}
        report["runs"][task] = entry
    report["ok"] = bool(ok)
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--prompt", dest="prompts", nargs="+", default=["basic", "unknown", "paraphrase"]
    )
    parser.add_argument("--limit", type=int, default=8, help="questions per category")
    parser.add_argument(
        "--bbq-source", type=Path, help="also export and run BBQ built from this release"
    )
    parser.add_argument(
        "--random-model",
        action="store_true",
        help="a random tiny model instead of one taught planted replies (faster; its replies hold no index)",
    )
    parser.add_argument(
        "--setup-lmeval", action="store_true", help=f"create {LMEVAL_VENV} first (needs PyPI)"
    )
    parser.add_argument("--lmeval-python", type=Path, default=LMEVAL_VENV / "bin" / "python")
    parser.add_argument("--json", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    python = setup_lmeval(LMEVAL_VENV) if args.setup_lmeval else args.lmeval_python
    if not python.exists():
        print(f"no lm_eval environment at {python}: run with --setup-lmeval (needs PyPI)")
        return 2
    if not (REPO_ROOT / "datasets" / "jbbq" / "all").is_dir():
        print("no built JBBQ sample: run `bias-hub build all` first")
        return 2
    with tempfile.TemporaryDirectory(prefix="lmeval-export-") as tmp:
        report = check(
            Path(tmp),
            python,
            args.prompts,
            args.limit,
            args.bbq_source,
            planted=not args.random_model,
        )
    print(f"model: {report['model']}")
    print(
        f"{len(report['tasks'])} tasks exported and moved; listed by lm-eval ls: {not report['not_listed']}; "
        f"lm-eval validate: {report['validated']}; n-shot as named: {report['n_shot_matches']}; "
        f"lm-eval run {report['lm_eval_seconds']} s"
    )
    for task, entry in report["runs"].items():
        same = ""
        if "differing_predictions" in entry:
            replies = entry.get("differing_replies")
            same = (
                f"predictions differing from jbbq evaluate {entry['differing_predictions']}/"
                f"{entry['questions']}{'' if replies is None else f' (reply texts {replies})'}, "
                f"score = jbbq evaluate {entry['score_equals_evaluate']}, "
            )
        scores = ", ".join(
            f"{n} {v:.3f}" if v is not None else f"{n} n/a" for n, v in entry["scores"].items()
        )
        print(
            f"{task}: {same}lm-eval table = bias-hub score {entry['table_equals_score']}; {scores}"
        )
    print("all equal" if report["ok"] else "DIFFERENCES FOUND")
    save_json(args.json, report, ensure_ascii=False)
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
