"""Speed of metrics/weat and metrics/rnsb against plain per-word Python loops, in one run.

    python -m bench.embeddings_speed [--test weat2] [--permutations 10000] [--repeats 3]

Vectors: the GoogleNews subset (300 dimensions). WEAT: one test with 10,000 sampled
permutations (the test is forced into sampled mode). Baselines, both written the
obvious way, one word at a time:

- WEAT loop: s(w, A, B) per word with a Python loop over the attribute words, once per
  word, then each permutation's statistic as a Python sum over its words;
- WEAT naive: as WEFE does, s(w, A, B) recomputed for every word of every permutation
  (timed on --naive-permutations and scaled to --permutations: it is linear in them);
- RNSB loop: the same Newton trust-region fit and settings, but the loss, gradient and
  Hessian products summed word by word, and each attribute word's probability computed in a loop.

Ours is timed end to end through ``evaluate.load(...).compute(...)`` (what a user
calls) and without evaluate's input handling (``_compute`` on the same inputs), against the
loops interleaved, --repeats (at least 3) runs each after a warm-up, minimum counted, with the
load (``bench/_harness.py``). Results are checked to agree before timing counts.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from bench._harness import REPO_ROOT, best_of, describe_load, race


def _cos(u: np.ndarray, v: np.ndarray) -> float:
    return float(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)))


def _s(w: np.ndarray, a_vectors: list, b_vectors: list) -> float:
    return sum(_cos(w, a) for a in a_vectors) / len(a_vectors) - sum(
        _cos(w, b) for b in b_vectors
    ) / len(b_vectors)


def weat_loop(
    x: list, y: list, a: list, b: list, permutations: int, seed: int, naive: bool
) -> tuple[float, float]:
    """(effect size, p-value) with per-word Python loops."""
    pool = x + y
    cached = [_s(w, a, b) for w in pool]
    n_x = len(x)
    observed = sum(cached[:n_x]) - sum(cached[n_x:])
    mean_x, mean_y = sum(cached[:n_x]) / n_x, sum(cached[n_x:]) / len(y)
    mean = sum(cached) / len(cached)
    std = math.sqrt(sum((value - mean) ** 2 for value in cached) / len(cached))
    rng = np.random.default_rng(seed)
    order = np.argsort(rng.random((permutations, len(pool))), axis=1)
    count = 0
    for row in order:
        if naive:
            first = sum(_s(pool[i], a, b) for i in row[:n_x])
            second = sum(_s(pool[i], a, b) for i in row[n_x:])
        else:
            first = sum(cached[i] for i in row[:n_x])
            second = sum(cached[i] for i in row[n_x:])
        if first - second >= observed - 1e-12 * max(1.0, sum(abs(c) for c in cached)):
            count += 1
    return (mean_x - mean_y) / std, (count + 1) / (permutations + 1)


def rnsb_loop(x: list, y: list, attributes: list, C: float = 1.0, tol: float = 1e-10) -> float:
    """KL divergence with the logistic loss and gradient summed word by word (no holdout)."""
    from scipy.optimize import minimize

    samples = [(v, -1.0) for v in x] + [(v, 1.0) for v in y]
    n, dim = len(samples), x[0].shape[0]
    strength = 1.0 / (C * n)

    def loss_and_grad(params):
        weights, intercept = params[:dim], params[dim]
        loss, grad_w, grad_b = 0.0, np.zeros(dim), 0.0
        for vector, sign in samples:
            margin = sign * (float(np.dot(vector, weights)) + intercept)
            loss += math.log1p(math.exp(-margin)) if margin > -30 else -margin
            slope = -sign / (1.0 + math.exp(margin)) / n
            grad_w += slope * vector
            grad_b += slope
        loss = loss / n + 0.5 * strength * float(np.dot(weights, weights))
        return loss, np.append(grad_w + strength * weights, grad_b)

    def hessian_product(params, vector):
        weights, intercept = params[:dim], params[dim]
        product, total = strength * vector[:dim], 0.0
        for sample, _ in samples:
            margin = float(np.dot(sample, weights)) + intercept
            curvature = 1.0 / (1.0 + math.exp(-margin)) / (1.0 + math.exp(margin)) / n
            moved = curvature * (float(np.dot(sample, vector[:dim])) + vector[dim])
            product = product + moved * sample
            total += moved
        return np.append(product, total)

    found = minimize(
        loss_and_grad,
        np.zeros(dim + 1),
        jac=True,
        hessp=hessian_product,
        method="trust-ncg",
        options={"maxiter": 1000, "gtol": tol},
    )
    weights, intercept = found.x[:dim], found.x[dim]
    # P(Y | word): the second training set's probability, as metrics/rnsb reports it.
    probabilities = [
        1.0 / (1.0 + math.exp(-(float(np.dot(v, weights)) + intercept))) for v in attributes
    ]
    total = sum(probabilities)
    return sum((p / total) * math.log((p / total) * len(probabilities)) for p in probabilities)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--test", default="weat2", help="an en test id (weat2: 16+16 targets, 24+25 attributes)"
    )
    parser.add_argument("--permutations", type=int, default=10000)
    parser.add_argument("--naive-permutations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)

    import evaluate

    from bias_hub.builders.shared.sources import resolve
    from bias_hub.builders.weat_word_sets.rows import english_rows
    from bias_hub.pipelines.embeddings.scoring import Query, prepare
    from bias_hub.pipelines.embeddings.vectors import load_googlenews_subset

    vectors = load_googlenews_subset()
    row = {r["test_id"]: r for r in english_rows(resolve("weat_word_sets"))}[args.test]
    query, inputs = prepare(Query.from_row(row), vectors)
    index = {word: number for number, word in enumerate(inputs["words"])}
    sets = [
        [inputs["vectors"][index[w]] for w in words if w in index]
        for words in [*query.target_sets.values(), *query.attribute_sets.values()]
    ]
    x, y, a, b = sets
    print(
        f"{args.test}: |X|={len(x)} |Y|={len(y)} |A|={len(a)} |B|={len(b)}, {vectors.dim} dimensions, "
        f"{args.permutations} permutations, minimum of {max(args.repeats, 3)} interleaved runs"
    )

    weat = evaluate.load(str(REPO_ROOT / "metrics" / "weat"))
    rnsb = evaluate.load(str(REPO_ROOT / "metrics" / "rnsb"))
    present = lambda named: {k: [w for w in v if w in index] for k, v in named.items()}  # noqa: E731
    common = {
        **inputs,
        "target_sets": present(query.target_sets),
        "attribute_sets": present(query.attribute_sets),
    }
    weat_options = {"permutations": args.permutations, "exact_max_partitions": 0, "seed": 0}
    timing = race(
        {
            "WEAT compute()": lambda: weat.compute(**common, **weat_options),
            "WEAT _compute": lambda: weat._compute(**common, **weat_options),
            "WEAT loop": lambda: weat_loop(x, y, a, b, args.permutations, 0, naive=False),
        },
        max(args.repeats, 3),
        out=None,
    )
    ours_weat, core_weat = timing["WEAT compute()"]["min"], timing["WEAT _compute"]["min"]
    loop_weat, (d, p) = timing["WEAT loop"]["min"], timing["WEAT loop"]["output"]
    result = timing["WEAT compute()"]["output"]
    # Linear in the permutations: timed once on a few and scaled.
    naive_small, _ = best_of(lambda: weat_loop(x, y, a, b, args.naive_permutations, 0, naive=True))
    naive_weat = naive_small * args.permutations / args.naive_permutations
    agree = abs(d - result["effect_size"]) < 1e-9 and abs(p - result["p_value"]) < 1e-12
    assert agree, (d, p, result)

    # lbfgs to tol 1e-10 minimises the loop's objective (intercept unpenalised); the module's
    # default liblinear penalises the intercept too and ends elsewhere.
    rnsb_options = {"holdout": False, "iterations": 1, "solver": "lbfgs", "tol": 1e-10}
    timing_rnsb = race(
        {
            "RNSB compute()": lambda: rnsb.compute(**common, **rnsb_options),
            "RNSB _compute": lambda: rnsb._compute(**common, **rnsb_options),
            "RNSB loop": lambda: rnsb_loop(x, y, a + b),
        },
        max(args.repeats, 3),
        out=None,
    )
    ours_rnsb, core_rnsb = timing_rnsb["RNSB compute()"]["min"], timing_rnsb["RNSB _compute"]["min"]
    loop_rnsb, kl = timing_rnsb["RNSB loop"]["min"], timing_rnsb["RNSB loop"]["output"]
    r = timing_rnsb["RNSB compute()"]["output"]
    assert abs(kl - r["kl_divergence"]) < 1e-6, (kl, r["kl_divergence"])
    loads = [x for t in (timing, timing_rnsb) for entry in t.values() for x in entry["load"]]
    print(f"timed at load {min(loads)}-{max(loads)} ({describe_load()} now)")

    print(
        "\n| computation | ours: compute() (s) | ours: arithmetic only (s) | baseline (s) | baseline / compute() | baseline / arithmetic |"
    )
    print("|---|---|---|---|---|---|")
    per_word = f"WEAT, {args.permutations} permutations vs per-word loop (associations cached)"
    naive = (
        f"WEAT, {args.permutations} permutations vs naive loop (s recomputed per permutation, "
        f"scaled from {args.naive_permutations})"
    )
    table = [
        (per_word, ours_weat, core_weat, loop_weat),
        (naive, ours_weat, core_weat, naive_weat),
        ("RNSB, one classifier vs per-word loss/gradient loop", ours_rnsb, core_rnsb, loop_rnsb),
    ]
    for name, end_to_end, core, baseline in table:
        print(
            f"| {name} | {end_to_end:.4f} | {core:.4f} | {baseline:.3f} | {baseline / end_to_end:.1f}x | "
            f"{baseline / core:.1f}x |"
        )
    print(
        f"\nWEAT effect size {result['effect_size']:.4f}, p {result['p_value']:.4g} (both ways); "
        f"RNSB KL {r['kl_divergence']:.3e} (both ways). compute() includes evaluate's "
        "input handling (Arrow conversion of the vectors); arithmetic only calls _compute directly."
    )


if __name__ == "__main__":
    main()
