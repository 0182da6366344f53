"""How much of BBQ's released data our template expander reproduces, next to BBQ's own generator.

    python -m bench.bbq_generator_overlap RELEASE [--seeds 0,1,2,3,4]
    python -m bench.bbq_generator_overlap RELEASE --bbq-generator BBQ_CHECKOUT --setup-bbq

``RELEASE`` is a BBQ checkout root or an archive of one (``data/*.jsonl`` and ``templates/``;
or ``$BBQ_RELEASE``). Our expander (the ``load_rows`` of ``bias-hub build bbq --source
templates/``) expands every template once per seed; per category the script prints the row
counts and the share of released rows reproduced, compared on question id, polarity, context
condition, context, question, the two non-unknown answers (in any order) and the correct one;
duplicates count once each (multiset intersection / released rows).

BBQ's generator draws with unseeded ``random``, so the baseline is BBQ's generator re-run on
the same templates: with ``--bbq-generator`` (a BBQ checkout or its bare git directory) its
two scripts run unchanged once per ``--bbq-seeds`` value, in ``bench/.venv-bbq``
(``--setup-bbq``); without it the numbers of one earlier re-run are printed, labelled so.
Exits 1 when a category's row count differs from the release.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from bench._harness import REPO_ROOT, load_average, make_venv, read_jsonl

BBQ_VENV = REPO_ROOT / "bench" / ".venv-bbq"
# Re-running BBQ's generator with another seed (the project's FINDINGS, 2026-11-23).
FINDINGS_REFERENCE = {
    "Age": "84 %",
    "Disability_status": "83 %",
    "Nationality": "4 %",
    "Physical_appearance": "64-69 %",
    "Religion": "47 %",
    "Sexual_orientation": "88 %",
}
_SCRIPTS = (
    "generate_from_template_all_categories.py",
    "generate_from_template_intersectional_cats.py",
    "utils.py",
)
_ANSWERS = ("ans0", "ans1", "ans2")


def row_key(row: dict) -> tuple:
    """A question up to answer order and the unknown answer's wording.

    Accepts BBQ's rows (``answer_info`` a dict of [text, group]) and ours
    (``answer_info`` a list of {text, group})."""
    info = row["answer_info"]
    groups = (
        [info[k][1] for k in _ANSWERS] if isinstance(info, dict) else [a["group"] for a in info]
    )
    unknown = groups.index("unknown")
    answers = tuple(sorted(row[k] for i, k in enumerate(_ANSWERS) if i != unknown))
    correct = "<unknown>" if row["label"] == unknown else row[_ANSWERS[row["label"]]]
    return (
        str(row["question_index"]),
        row["question_polarity"],
        row["context_condition"],
        row["context"],
        row["question"],
        answers,
        correct,
    )


def overlap(released: list[dict], generated: list[dict]) -> float:
    """Share of released rows found among the generated ones (multiset intersection)."""
    common = Counter(map(row_key, released)) & Counter(map(row_key, generated))
    return sum(common.values()) / len(released)


def run_ours(templates: Path, seed: int) -> dict[str, list[dict]]:
    from bias_hub.builders.jbbq.bbq_format import load_rows
    from bias_hub.builders.jbbq.schema import BBQ_CATEGORIES

    built = load_rows(templates, BBQ_CATEGORIES, language="en", seed=seed)
    by_category: dict[str, list[dict]] = {}
    for row in built.rows:
        by_category.setdefault(row["category"], []).append(row)
    return by_category


def _generator_source(checkout: Path, name: str) -> str:
    if (checkout / name).exists():
        return (checkout / name).read_text(encoding="utf-8")
    if (checkout / "HEAD").exists() and (checkout / "objects").is_dir():  # a bare git directory
        done = subprocess.run(
            ["git", "--git-dir", str(checkout), "show", f"HEAD:{name}"],
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout
    raise FileNotFoundError(
        f"--bbq-generator {checkout}: no {name} (expected a checkout of nyu-mll/BBQ)"
    )


def run_bbq(
    checkout: Path, python: Path, templates: Path, seed: int, work: Path
) -> dict[str, list[dict]]:
    """BBQ's two generator scripts, unchanged, in the folder layout they expect
    (``BBQ_full/templates``, ``BBQ_full/data``, ``BBQ_Full/utils.py``)."""
    root = work / f"bbq-seed{seed}"
    (root / "BBQ_Full").mkdir(parents=True)
    (root / "BBQ_full" / "data").mkdir(parents=True)
    shutil.copytree(templates, root / "BBQ_full" / "templates")
    for name in _SCRIPTS:
        target = root / ("BBQ_Full" if name == "utils.py" else ".") / name
        target.write_text(_generator_source(checkout, name), encoding="utf-8")
    for script in _SCRIPTS[:2]:
        command = (
            "import random, runpy, numpy; "
            f"random.seed({seed}); numpy.random.seed({seed}); runpy.run_path({script!r}, run_name='__main__')"
        )
        with open(root / f"{script}.log", "w", encoding="utf-8") as log:
            subprocess.run(
                [str(python), "-c", command],
                cwd=root,
                stdout=log,
                stderr=subprocess.STDOUT,
                check=True,
            )
    return {
        path.stem: read_jsonl(path) for path in sorted((root / "BBQ_full" / "data").glob("*.jsonl"))
    }


def _spread(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.1%}"
    return f"{statistics.mean(values):.1%} ({min(values):.1%}-{max(values):.1%})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "release",
        nargs="?",
        default=os.environ.get("BBQ_RELEASE"),
        help="BBQ checkout root or archive with data/*.jsonl and templates/ (or $BBQ_RELEASE)",
    )
    parser.add_argument(
        "--seeds", default="0,1,2,3,4", help="seeds of our expander (comma-separated)"
    )
    parser.add_argument(
        "--bbq-generator", default=None, help="a checkout (or bare git dir) of nyu-mll/BBQ"
    )
    parser.add_argument(
        "--bbq-seeds", default="1", help="seeds for BBQ's generator runs (comma-separated)"
    )
    parser.add_argument("--bbq-python", default=str(BBQ_VENV / "bin" / "python"))
    parser.add_argument(
        "--setup-bbq", action="store_true", help=f"create {BBQ_VENV} with pandas first (PyPI)"
    )
    parser.add_argument("--json", default=None, help="also write the numbers to this file")
    args = parser.parse_args(argv)
    if not args.release:
        parser.error(
            "give the BBQ release (checkout root or archive) as RELEASE or in $BBQ_RELEASE"
        )
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    from bias_hub.builders.jbbq.bbq_format import opened_source
    from bias_hub.builders.jbbq.schema import BBQ_CATEGORIES

    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    bbq_seeds = [int(s) for s in args.bbq_seeds.split(",") if s.strip()]
    with (
        opened_source(args.release) as root,
        tempfile.TemporaryDirectory(prefix="bbq-overlap-") as tmp,
    ):
        data = sorted(root.rglob("data/*.jsonl"))
        templates = next((p.parent for p in root.rglob("templates/vocabulary.csv")), None)
        if not data or templates is None:
            raise FileNotFoundError(
                f"{args.release}: expected data/*.jsonl and templates/vocabulary.csv inside"
            )
        released = {path.stem: read_jsonl(path) for path in data}
        python = None
        if args.bbq_generator:
            python = Path(args.bbq_python)
            if args.setup_bbq:  # BBQ's generator needs pandas: its own venv
                python = make_venv(python.parent.parent, ["pandas"])
            if not python.exists():
                raise FileNotFoundError(
                    f"{python}: no Python for BBQ's generator; pass --setup-bbq"
                )
        # Ours and BBQ's generator in turn, seed by seed, each run timed with the load around it.
        ours, times, theirs, their_times, loads = [], [], [], [], []
        for index in range(max(len(seeds), len(bbq_seeds) if python else 0)):
            if index < len(seeds):
                loads.append(load_average())
                started = time.perf_counter()
                ours.append(run_ours(templates, seeds[index]))
                times.append(time.perf_counter() - started)
            if python is not None and index < len(bbq_seeds):
                loads.append(load_average())
                started = time.perf_counter()
                theirs.append(
                    run_bbq(
                        Path(args.bbq_generator), python, templates, bbq_seeds[index], Path(tmp)
                    )
                )
                their_times.append(time.perf_counter() - started)
        loads.append(load_average())

    baseline = (
        f"BBQ's generator, seeds {args.bbq_seeds}"
        if theirs
        else "FINDINGS (BBQ's generator re-run once)"
    )
    print(f"release: {args.release}")
    print(
        f"ours: seeds {args.seeds}; overlap = share of released rows reproduced, mean (min-max) over seeds\n"
    )
    header = f"{'category':22} {'released':>8} {'ours':>8} {'BBQ gen':>8}  {'ours overlap':>24}  {baseline}"
    print(header)
    print("-" * len(header))
    results: dict[str, dict] = {}
    failed = False
    for category in BBQ_CATEGORIES:
        counts = sorted({len(run.get(category, [])) for run in ours})
        their_counts = sorted({len(run.get(category, [])) for run in theirs})
        rel = released.get(category)
        results[category] = {"ours_rows": counts, "bbq_generator_rows": their_counts}
        rows = f"{'/'.join(map(str, counts)):>8} {'/'.join(map(str, their_counts)) or '-':>8}"
        if rel is None:
            print(f"{category:22} {'-':>8} {rows}")
            continue
        mine = [overlap(rel, run.get(category, [])) for run in ours]
        base = [overlap(rel, run.get(category, [])) for run in theirs]
        results[category].update(
            released_rows=len(rel), ours_overlap=mine, bbq_generator_overlap=base
        )
        failed |= counts != [len(rel)]
        reference = _spread(base) if theirs else FINDINGS_REFERENCE.get(category, "-")
        print(f"{category:22} {len(rel):8d} {rows}  {_spread(mine):>24}  {reference}")
    timings = (
        f"\nexpanding every template (runs interleaved, load {min(loads)}-{max(loads)} on "
        f"{os.cpu_count()} cores): ours {min(times):.1f} s min, {statistics.median(times):.1f} s "
        f"median over {len(times)} seed(s)"
    )
    if their_times:
        timings += (
            f"; BBQ's generator {min(their_times):.1f} s min, {statistics.median(their_times):.1f} "
            f"s median (ratio {min(their_times) / min(times):.0f}x min, "
            f"{statistics.median(their_times) / statistics.median(times):.0f}x median)"
        )
    print(timings)
    if failed:
        print("row counts differ from the release", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(
            json.dumps(
                {"seeds": seeds, "bbq_seeds": bbq_seeds if theirs else [], "categories": results},
                indent=2,
            ),
            encoding="utf-8",
        )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
