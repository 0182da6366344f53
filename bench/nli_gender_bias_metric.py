"""The nli_gender_bias metric's vectorised arithmetic against a plain Python loop.

Run: python -m bench.nli_gender_bias_metric [rows]. Both compute the same score on the
same random predictions; the ratio is loop time / vectorised time, from interleaved runs
(``bench/_harness.py``: warmed up, three runs each, minimum and median, with the load).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from bench._harness import describe_load, race, race_table
from bias_hub.pipelines.common import metric_scores

METRIC = Path(__file__).resolve().parents[1] / "metrics" / "nli_gender_bias" / "nli_gender_bias.py"
SUBSETS = ("pro_stereotypical", "anti_stereotypical", "non_stereotypical")


def _loop_score(predictions: list[int], subsets: list[str]) -> float:
    counts = {s: [0, 0, 0] for s in SUBSETS}
    for label, subset in zip(predictions, subsets, strict=True):
        counts[subset][label] += 1
    share = {s: [c / sum(v) for c in v] for s, v in counts.items() for v in [counts[s]]}
    return (share[SUBSETS[0]][0] + share[SUBSETS[1]][2] + 1 - share[SUBSETS[2]][1]) / 3


def main(rows: int = 1_000_000) -> None:
    metric = metric_scores("nli_gender_bias", METRIC.parents[1])
    rng = np.random.default_rng(0)
    predictions = rng.integers(0, 3, rows).tolist()
    subsets = [SUBSETS[i] for i in rng.integers(0, 3, rows)]

    results = race(
        {
            "python loop": lambda: _loop_score(predictions, subsets),
            # Python lists (what evaluate hands over) and a numpy array of ids (a model's argmax).
            "module, lists": lambda: metric.compute(predictions=predictions, subsets=subsets)[
                "bias_score"
            ],
            "module, numpy ids": lambda: metric.compute(
                predictions=np.asarray(predictions), subsets=subsets
            )["bias_score"],
        }
    )
    looped = results["python loop"]["output"]
    for name in ("module, lists", "module, numpy ids"):
        assert abs(results[name]["output"] - looped) < 1e-12, (results[name]["output"], looped)
    print(f"rows {rows:,}; the same score every way; {describe_load()}")
    print(race_table(results, "python loop"))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
