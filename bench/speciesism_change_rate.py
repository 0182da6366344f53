"""How much the `evaluate` module adds to the change-rate arithmetic at real sizes.

Baseline: the module's own numpy function `change_rates` on an in-memory array.
Measured: `evaluate.load("metrics/speciesism_bias").compute(...)`, which stores the
rows in Arrow and reads them back before the same arithmetic. Sizes: the study's 48
rows (6 animals x 8 templates) and all 136 English rows, over BERT's (30,522) and
RoBERTa's (50,265) vocabularies. Run: `python -m bench.speciesism_change_rate`. Timed
interleaved, three runs each after a warm-up, minimum and median with the load
(``bench/_harness.py``).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from bench._harness import REPO_ROOT, describe_load, race, race_table
from bias_hub.pipelines.common.locations import import_scores_module

MODULE = REPO_ROOT / "metrics" / "speciesism_bias"


def main() -> None:
    import evaluate

    module = import_scores_module(MODULE)
    metric = evaluate.load(str(MODULE))
    rng = np.random.default_rng(0)
    print(describe_load())
    for rows, size in ((48, 30_522), (48, 50_265), (136, 50_265)):
        probs = rng.dirichlet(np.full(size, 0.05), size=rows).astype(np.float32)
        forms = (["human"] * 2 + ["object"] * 6) * (rows // 8)
        contestants = {"numpy": partial(module.change_rates, probs, forms)}
        contestants["evaluate compute"] = partial(metric.compute, probabilities=probs, forms=forms)
        results = race(contestants)
        print(f"{rows} rows x {size:,} words:")
        print(race_table(results, "numpy"))


if __name__ == "__main__":
    main()
