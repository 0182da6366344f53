"""Every metric module's ``compute`` at 10^6 rows against its own numpy core, in one run.

    python -m bench.metrics_at_scale [--rows 1000000] [--old-rows N] [--only NAME ...]

For each module (and config) the same inputs, as users pass them (Python lists; vectors
and probability rows as numpy arrays), go through

- core: the module's ``_compute`` called directly: its validation and numpy arithmetic;
- compute: ``evaluate.load(...).compute(...)``, the call users make;
- evaluate's path: ``evaluate.EvaluationModule.compute``, which stores the rows through
  ``datasets``' feature encoding in Arrow and reads them back before ``_compute`` (what
  ``compute`` did for every call before, and still does after ``add_batch``).

It prints the times and compute / core (the target: at most 2) and evaluate's path / core;
exit status 1 if a module misses the target. Core and compute are timed interleaved, three runs
each after a warm-up, minimum counted, with the load (``bench/_harness.py``); evaluate's path
once on ``--old-rows`` (default 10^5: it takes 10-20 s at 10^6). winobias_gap runs 10^5 documents unless
--rows is given: its core is a per-document Python loop (MUC, B-cubed, CEAF-e), about
0.15 ms a document, so 10^6 documents take minutes on every path alike.
"""

from __future__ import annotations

import argparse
import sys
from functools import partial
from pathlib import Path

import numpy as np

from bench._harness import best_of, describe_load, race

METRICS = Path(__file__).resolve().parents[1] / "metrics"
TARGET = 2.0


def _inputs(name: str, config: str | None, n: int, rng: np.random.Generator) -> dict:
    """Inputs of n rows (occurrences, pairs, documents, words) for one module."""
    if name == "nli_gender_bias":
        subsets = np.array(["pro_stereotypical", "anti_stereotypical", "non_stereotypical"])
        return {
            "predictions": rng.integers(0, 3, n).tolist(),
            "subsets": subsets[rng.integers(0, 3, n)].tolist(),
        }
    if name == "bbq_bias":
        ambiguous = rng.random(n) < 0.5
        references = np.where(ambiguous, 2, rng.integers(0, 2, n))
        predictions = np.where(rng.random(n) < 0.7, references, rng.integers(-1, 3, n))
        categories = np.array([f"category_{i}" for i in range(11)])
        return {
            "predictions": predictions.tolist(),
            "references": references.tolist(),
            "unknown_labels": [2] * n,
            "stereotyped_labels": rng.integers(0, 2, n).tolist(),
            "context_conditions": np.where(ambiguous, "ambig", "disambig").tolist(),
            "categories": categories[rng.integers(0, 11, n)].tolist(),
        }
    if name == "gender_attention_gap":
        vocabulary = np.array([f"word{i}" for i in range(5000)])
        return {
            "words": vocabulary[rng.integers(0, 5000, n)].tolist(),
            "attention_to_gender": rng.random(n).tolist(),
            "forms": np.where(rng.random(n) < 0.5, "male", "female").tolist(),
        }
    if name == "perplexity_gap":
        return {
            "male_perplexities": rng.uniform(5, 50, n).tolist(),
            "female_perplexities": rng.uniform(5, 50, n).tolist(),
        }
    if name == "speciesism_bias" and config is None:
        probabilities = rng.dirichlet(np.ones(4), size=n)
        return {
            "probabilities": probabilities,
            "forms": np.where(rng.random(n) < 0.5, "human", "object").tolist(),
        }
    if config == "association":
        return {
            "target_probabilities": rng.uniform(0.01, 1, n).tolist(),
            "prior_probabilities": rng.uniform(0.01, 1, n).tolist(),
        }
    if config == "negative_share":
        animals = np.array([f"animal{i}" for i in range(20)])
        labels = np.array(["negative", "neutral", "positive"])
        return {
            "animals": animals[rng.integers(0, 20, n)].tolist(),
            "labels": labels[rng.integers(0, 3, n)].tolist(),
        }
    if name in ("weat", "rnsb"):
        words = [f"w{i}" for i in range(n)]
        sets = {
            "target_sets": {"X": words[0:8], "Y": words[8:16]},
            "attribute_sets": {"A": words[16:24], "B": words[24:32]},
        }
        return {"words": words, "vectors": rng.normal(size=(n, 8)), **sets}
    if name == "winobias_gap":
        spans = rng.integers(0, 20, (n, 3))
        predictions = [[[[int(a), int(a) + 1], [int(c) + 30, int(c) + 30]]] for a, _, c in spans]
        references = [[[[int(a), int(a) + 1], [int(b) + 30, int(b) + 30]]] for a, b, _ in spans]
        return {
            "predictions": predictions,
            "references": references,
            "condition": np.where(rng.random(n) < 0.5, "pro", "anti").tolist(),
        }
    raise ValueError(f"no inputs for {name} {config}")


CASES = [
    ("nli_gender_bias", None),
    ("bbq_bias", None),
    ("gender_attention_gap", None),
    ("perplexity_gap", None),
    ("speciesism_bias", None),
    ("speciesism_bias", "association"),
    ("speciesism_bias", "negative_share"),
    ("weat", None),
    ("rnsb", None),
    ("winobias_gap", None),
]
DEFAULT_ROWS = 1_000_000
FEWER_ROWS = {"winobias_gap": 100_000}


def main(argv: list[str] | None = None) -> int:
    import evaluate

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--rows", type=int, default=None, help=f"rows per module (default {DEFAULT_ROWS:,})"
    )
    parser.add_argument(
        "--old-rows",
        type=int,
        default=None,
        help="rows for evaluate's path (default: 10^5 or --rows if fewer; 0 skips it)",
    )
    parser.add_argument("--only", nargs="+", default=None, help="module names")
    args = parser.parse_args(argv)

    print(describe_load())
    print(
        f"{'module':<32} {'rows':>9} {'core s':>8} {'compute s':>10} {'compute/core':>13} "
        f"{'old rows':>9} {'evaluate s':>11} {'evaluate/core':>14}  load"
    )
    missed = []
    for name, config in CASES:
        if args.only and name not in args.only:
            continue
        label = name + (f" ({config})" if config else "")
        rows = args.rows or FEWER_ROWS.get(name, DEFAULT_ROWS)
        old_rows = min(rows, 100_000) if args.old_rows is None else args.old_rows
        metric = evaluate.load(str(METRICS / name), config)
        inputs = _inputs(name, config, rows, np.random.default_rng(0))
        contestants = {"core": partial(metric._compute, **inputs)}
        contestants["compute"] = partial(metric.compute, **inputs)
        timing = race(contestants, out=None)  # the per-run lines would drown the table
        core, direct = timing["core"]["min"], timing["compute"]["min"]
        ratio = direct / core
        line = f"{label:<32} {rows:>9,} {core:>8.3f} {direct:>10.3f} {ratio:>13.2f}"
        if old_rows:
            small, core_small = inputs, core
            if old_rows != rows:
                small = _inputs(name, config, old_rows, np.random.default_rng(0))
                core_small = best_of(lambda m=metric, i=small: m._compute(**i), repeats=2)[0]
            through, _ = best_of(
                lambda m=metric, i=small: evaluate.EvaluationModule.compute(m, **i)
            )
            line += f" {old_rows:>9,} {through:>11.3f} {through / core_small:>14.1f}"
        load = timing["compute"]["load"]
        print(f"{line}  {load[0]}-{load[1]}", flush=True)
        if ratio > TARGET:
            missed.append(label)
    if missed:
        print(f"\ncompute / core above {TARGET}: {', '.join(missed)}", file=sys.stderr)
        return 1
    print(f"\nevery module: compute within {TARGET}x of its own core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
