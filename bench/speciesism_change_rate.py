"""How much the `evaluate` module adds to the change-rate arithmetic at real sizes.

Baseline: the module's own numpy function `change_rates` on an in-memory array.
Measured: `evaluate.load("metrics/speciesism_bias").compute(...)`, which stores the
rows in Arrow and reads them back before the same arithmetic. Sizes: the study's 48
rows (6 animals x 8 templates) and all 136 English rows, over BERT's (30,522) and
RoBERTa's (50,265) vocabularies. Run: `python -m bench.speciesism_change_rate`.
"""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from bias_hub.pipelines.common import import_metric_module

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "metrics" / "speciesism_bias"


def _best(fn, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    import evaluate

    module = import_metric_module(MODULE)
    metric = evaluate.load(str(MODULE))
    rng = np.random.default_rng(0)
    print(f"{'rows':>5} {'|V|':>7} {'numpy s':>9} {'evaluate s':>11} {'ratio':>7}")
    for rows, size in ((48, 30_522), (48, 50_265), (136, 50_265)):
        probs = rng.dirichlet(np.full(size, 0.05), size=rows).astype(np.float32)
        forms = (["human"] * 2 + ["object"] * 6) * (rows // 8)
        base = _best(lambda p=probs, f=forms: module.change_rates(p, f))
        full = _best(lambda p=probs, f=forms: metric.compute(probabilities=p, forms=f), repeat=2)
        print(f"{rows:>5} {size:>7} {base:>9.3f} {full:>11.3f} {full / base:>7.1f}")


if __name__ == "__main__":
    main()
