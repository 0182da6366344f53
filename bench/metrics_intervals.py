"""What bootstrap intervals cost: 1,000 resamples over 10^4 items, per score.

    python -m bench.metrics_intervals [--items 10000] [--resamples 1000]

For each module the same inputs are scored without intervals (the point estimate, the
baseline) and with ``confidence_level=0.95``; the difference divided by the number of
intervals returned is the cost per score (target: under 2 s). The paired comparison
(nli_gender_bias and bbq_bias, config "paired") adds a permutation test. As a second
reference, scipy.stats.bootstrap's own BCa (its jackknife re-evaluates the statistic on
n resamples of n - 1 items) is timed for one BBQ score on the same items. WEAT and RNSB
resample word-set members, so they run at word-set sizes (25 words a set). Both are timed
interleaved, three runs each after a warm-up, and the minimum counts, printed with the load
(``bench/_harness.py``).
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


def _bbq(n: int, rng: np.random.Generator) -> dict:
    ambiguous = rng.random(n) < 0.5
    references = np.where(ambiguous, 2, rng.integers(0, 2, n))
    return {
        "predictions": np.where(rng.random(n) < 0.7, references, rng.integers(0, 3, n)).tolist(),
        "references": references.tolist(),
        "unknown_labels": [2] * n,
        "stereotyped_labels": rng.integers(0, 2, n).tolist(),
        "context_conditions": np.where(ambiguous, "ambig", "disambig").tolist(),
        "categories": ["Age"] * n,
    }


def _cases(n: int, rng: np.random.Generator) -> list:
    """``(module, config, inputs, units)`` per case; ``units``: the items resampled."""

    def case(name: str, config: str | None = None, units: int = n, **inputs) -> tuple:
        return name, config, inputs, units

    subsets = np.array(["PS", "AS", "NS"])
    words = [f"w{i}" for i in range(100)]
    word_sets = {
        "words": words,
        "vectors": rng.normal(size=(100, 50)),
        "target_sets": {"X": words[:25], "Y": words[25:50]},
        "attribute_sets": {"A": words[50:75], "B": words[75:]},
    }
    nli = {
        "predictions": rng.integers(0, 3, n).tolist(),
        "subsets": subsets[rng.integers(0, 3, n)].tolist(),
        "probabilities": rng.dirichlet(np.ones(3), n).tolist(),
    }
    bbq = _bbq(n, rng)
    return [
        case("nli_gender_bias", **nli),
        case(
            "nli_gender_bias",
            "paired",
            **nli,
            predictions_b=rng.integers(0, 3, n).tolist(),
            probabilities_b=rng.dirichlet(np.ones(3), n).tolist(),
        ),
        case("bbq_bias", **bbq),
        case("bbq_bias", **bbq, templates=rng.integers(0, 250, n).tolist()),
        case("bbq_bias", "paired", **bbq, predictions_b=_bbq(n, rng)["predictions"]),
        case(
            "gender_attention_gap",
            words=[f"w{i}" for i in rng.integers(0, 200, n)],
            attention_to_gender=rng.random(n).tolist(),
            forms=np.where(rng.random(n) < 0.5, "male", "female").tolist(),
        ),
        case(
            "perplexity_gap",
            male_perplexities=rng.uniform(5, 50, n).tolist(),
            female_perplexities=rng.uniform(5, 50, n).tolist(),
        ),
        case(
            "speciesism_bias",
            probabilities=rng.dirichlet(np.ones(50), n),
            forms=np.where(rng.random(n) < 0.5, "human", "object").tolist(),
            top_k=5,
        ),
        case(
            "speciesism_bias",
            "association",
            target_probabilities=rng.uniform(0.01, 1, n).tolist(),
            prior_probabilities=rng.uniform(0.01, 1, n).tolist(),
            groups=[f"g{i}" for i in rng.integers(0, 5, n)],
        ),
        case(
            "speciesism_bias",
            "negative_share",
            animals=[f"a{i}" for i in rng.integers(0, 10, n)],
            labels=np.array(["negative", "neutral", "positive"])[rng.integers(0, 3, n)].tolist(),
        ),
        case(
            "winobias_gap",
            predictions=[[[[0, 1], [5 + i % 2, 5 + i % 2]]] for i in range(n)],
            references=[[[[0, 1], [5, 5]]] for _ in range(n)],
            condition=np.where(rng.random(n) < 0.5, "pro", "anti").tolist(),
        ),
        case("weat", units=100, **word_sets),
        case("rnsb", units=50, **word_sets, iterations=10),
    ]


def _scipy_bca(inputs: dict, resamples: int) -> float:
    """scipy.stats.bootstrap's own BCa for s_DIS on the same items."""
    from scipy import stats

    prediction = np.array(inputs["predictions"])
    stereotyped = np.array(inputs["stereotyped_labels"])
    disambiguated = np.array(inputs["context_conditions"]) == "disambig"
    counted = (disambiguated & (prediction != 2) & (prediction != -1)).astype(float)
    biased = counted * (prediction == stereotyped)
    seconds, _ = best_of(
        lambda: stats.bootstrap(
            (biased, counted),
            lambda b, c, axis=-1: 2 * b.sum(axis) / c.sum(axis) - 1,
            paired=True,
            vectorized=True,
            n_resamples=resamples,
            batch=200,
            method="BCa",
            rng=np.random.default_rng(0),
        )
    )
    return seconds


def main(argv: list[str] | None = None) -> int:
    import evaluate

    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--resamples", type=int, default=1000)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    print(describe_load())
    print(
        f"{'module':<40} {'units':>7} {'point s':>8} {'with intervals s':>17} {'intervals':>10} "
        f"{'s per score':>12}  load"
    )
    missed = []
    for name, config, inputs, units in _cases(args.items, rng):
        metric = evaluate.load(str(METRICS / name), config)
        label = (
            name
            + (f" ({config})" if config else "")
            + (" by template" if "templates" in inputs else "")
        )
        options = {"confidence_level": 0.95, "n_resamples": args.resamples}
        if config == "paired":
            # the baseline: point estimates of one prediction set
            single = {key: value for key, value in inputs.items() if not key.endswith("_b")}
            baseline = partial(evaluate.load(str(METRICS / name)).compute, **single)
        else:
            baseline = partial(metric.compute, **inputs)
        contestants = {
            "point": baseline,
            "with intervals": partial(metric.compute, **inputs, **options),
        }
        timing = race(contestants, out=None)  # the per-run lines would drown the table
        point, full = timing["point"]["min"], timing["with intervals"]["min"]
        result = timing["with intervals"]["output"]
        count = len(result["confidence_intervals"]) + sum(
            len(part.get("confidence_intervals", {}))
            for part in result.get("per_category", {}).values()
        )
        per_score = (full - point) / count
        load = timing["with intervals"]["load"]
        print(
            f"{label:<40} {units:>7,} {point:>8.3f} {full:>17.3f} {count:>10} {per_score:>12.3f}"
            f"  {load[0]}-{load[1]}",
            flush=True,
        )
        if per_score > TARGET:
            missed.append(label)
    bbq = _bbq(args.items, np.random.default_rng(1))
    print(
        f"\nscipy.stats.bootstrap's own BCa, s_DIS of bbq_bias over {args.items:,} items: "
        f"{_scipy_bca(bbq, args.resamples):.3f} s for one score"
    )
    if missed:
        print(f"\nabove {TARGET} s per score: {', '.join(missed)}", file=sys.stderr)
        return 1
    print(f"every module: under {TARGET} s per score")
    return 0


if __name__ == "__main__":
    sys.exit(main())
