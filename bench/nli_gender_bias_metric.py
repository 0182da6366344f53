"""The nli_gender_bias metric's vectorised arithmetic against a plain Python loop.

Run: python -m bench.nli_gender_bias_metric [rows]. Both compute the same score on the
same random predictions; the ratio is loop time / vectorised time.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from bias_hub.pipelines.common import import_metric_module

METRIC = Path(__file__).resolve().parents[1] / "metrics" / "nli_gender_bias" / "nli_gender_bias.py"
SUBSETS = ("pro_stereotypical", "anti_stereotypical", "non_stereotypical")


def _loop_score(predictions: list[int], subsets: list[str]) -> float:
    counts = {s: [0, 0, 0] for s in SUBSETS}
    for label, subset in zip(predictions, subsets, strict=True):
        counts[subset][label] += 1
    share = {s: [c / sum(v) for c in v] for s, v in counts.items() for v in [counts[s]]}
    return (share[SUBSETS[0]][0] + share[SUBSETS[1]][2] + 1 - share[SUBSETS[2]][1]) / 3


def main(rows: int = 1_000_000) -> None:
    module = import_metric_module(METRIC.parent)
    metric = module.NliGenderBias()
    rng = np.random.default_rng(0)
    predictions = rng.integers(0, 3, rows).tolist()
    subsets = [SUBSETS[i] for i in rng.integers(0, 3, rows)]

    start = time.perf_counter()
    looped = _loop_score(predictions, subsets)
    t_loop = time.perf_counter() - start
    print(f"rows {rows:,}; baseline python loop {t_loop:.3f} s")
    # Python lists (what evaluate hands over) and a numpy array of ids (a model's argmax).
    for name, given in (("lists", predictions), ("numpy ids", np.asarray(predictions))):
        start = time.perf_counter()
        vectorised = metric._compute(predictions=given, subsets=subsets)["bias_score"]
        t_vec = time.perf_counter() - start
        assert abs(vectorised - looped) < 1e-12, (vectorised, looped)
        print(f"  module, {name}: {t_vec:.3f} s, loop / module = {t_loop / t_vec:.2f}")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
