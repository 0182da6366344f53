"""Agreement with WEFE: our WEAT and RNSB against wefe's on the same vectors and word sets.

    python -m bench.embeddings_wefe_agreement [--tests ...] [--seeds 0 1 2 3 4]

wefe pins numpy<=1.26.4 and scipy<1.13, so it cannot live in the project's
environment: this script creates ``bench/.venv-wefe`` (gitignored) on first use,
installs ``wefe==1.0.1`` there, and runs ``bench/embeddings_wefe_reference.py``
in it. Both sides get the GoogleNews subset's vectors of the WEAT words (float64,
words the subset lacks left out of both, target sets balanced the same way).

Checks, to 1e-6: WEAT statistic and effect size; RNSB KL divergence and per-word
probabilities in both orientations (our ``train_on="target_sets"`` against WEFE on the query
with targets and attributes exchanged), for WEFE's default classifier (our module's defaults)
and lbfgs to tol 1e-10 (``ESTIMATORS``), the same seeds, plus training on all words. Exit
status 1 on a mismatch.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

from bench._harness import make_venv

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-wefe"
WEFE = "wefe==1.0.1"
TOLERANCE = 1e-6
DEFAULT_TESTS = ["weat2", "weat4", "weat5", "weat6_gender_terms", "weat7", "weat8", "weat9"]
ORIENTATIONS = ("attribute_sets", "target_sets")
# name: (WEFE's estimator_params, ours)
ESTIMATORS = {
    "defaults": ({"solver": "liblinear", "max_iter": 10000}, {}),
    "lbfgs": (
        {"solver": "lbfgs", "C": 1.0, "max_iter": 10000, "tol": 1e-10},
        {"solver": "lbfgs", "C": 1.0, "max_iter": 10000, "tol": 1e-10},
    ),
}


def ensure_wefe() -> Path:
    python = VENV / "bin" / "python"
    if not python.exists():
        print(f"creating {VENV} and installing {WEFE} (once)", flush=True)
    elif subprocess.run([str(python), "-c", "import wefe"], capture_output=True).returncode == 0:
        return python
    return make_venv(VENV, [WEFE])


def prepare_tests(test_ids: list[str]) -> list[dict]:
    from bias_hub.builders.shared.sources import resolve
    from bias_hub.builders.weat_word_sets.rows import english_rows
    from bias_hub.pipelines.embeddings.scoring import Query, prepare
    from bias_hub.pipelines.embeddings.vectors import load_googlenews_subset

    vectors = load_googlenews_subset()
    rows = {row["test_id"]: row for row in english_rows(resolve("weat_word_sets"))}
    tests = []
    for test_id in test_ids:
        prepared, inputs = prepare(Query.from_row(rows[test_id]), vectors)
        present = set(inputs["words"])

        def keep(sets: dict, present: set = present) -> dict:
            return {name: [w for w in words if w in present] for name, words in sets.items()}

        tests.append(
            {
                "test_id": test_id,
                "target_sets": keep(prepared.target_sets),
                "attribute_sets": keep(prepared.attribute_sets),
                "words": inputs["words"],
                "vectors": inputs["vectors"].tolist(),
            }
        )
    return tests


def ours(tests: list[dict], seeds: list[int]) -> list[dict]:
    import evaluate

    weat = evaluate.load(str(HERE.parent / "metrics" / "weat"))
    rnsb = evaluate.load(str(HERE.parent / "metrics" / "rnsb"))
    # the runs of embeddings_wefe_reference.py: without holdout, then one per seed
    holdouts = [("no_holdout", {"holdout": False})]
    holdouts += [(f"holdout_seed{seed}", {"holdout": True, "seed": seed}) for seed in seeds]
    results = []
    for test in tests:
        query = {k: test[k] for k in ("words", "vectors", "target_sets", "attribute_sets")}
        w = weat.compute(**query, permutations=10)
        r = {
            f"{orientation}/{name}_{label}": rnsb.compute(
                **query, train_on=orientation, iterations=1, **holdout, **classifier
            )
            for orientation in ORIENTATIONS
            for name, (_, classifier) in ESTIMATORS.items()
            for label, holdout in holdouts
        }
        results.append(
            {
                "test_id": test["test_id"],
                "weat_statistic": w["statistic"],
                "weat_effect_size": w["effect_size"],
                "rnsb": {
                    k: {"kl": v["kl_divergence"], "probabilities": v["probabilities"]}
                    for k, v in r.items()
                },
            }
        )
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tests", nargs="+", default=DEFAULT_TESTS)
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2, 3, 4])
    args = parser.parse_args(argv)

    python = ensure_wefe()
    tests = prepare_tests(args.tests)
    with tempfile.TemporaryDirectory() as folder:
        source, target = Path(folder) / "queries.json", Path(folder) / "wefe.json"
        estimators = {name: wefe_params for name, (wefe_params, _) in ESTIMATORS.items()}
        source.write_text(
            json.dumps({"tests": tests, "seeds": args.seeds, "estimators": estimators})
        )
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        subprocess.run(
            [str(python), str(HERE / "embeddings_wefe_reference.py"), str(source), str(target)],
            check=True,
            env=env,
        )
        reference = json.loads(target.read_text())
    mine = ours(tests, args.seeds)

    print(
        f"WEFE {reference['versions']} vs bias-hub metrics/weat, metrics/rnsb; vectors: GoogleNews subset\n"
    )
    print(
        "| test | words X/Y/A/B | WEAT stat diff | WEAT d (ours) | d diff | RNSB on A,B (ours) | on X,Y (ours) "
        "| KL spread over seeds | max KL diff | max P diff |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    worst = {"weat": 0.0, "kl": 0.0, "p": 0.0}
    worst_by_run = {
        (o, e): {"kl": 0.0, "p": 0.0, "where": ""} for o in ORIENTATIONS for e in ESTIMATORS
    }
    for test, theirs, own in zip(tests, reference["results"], mine, strict=False):
        sizes = "/".join(
            str(len(s)) for s in [*test["target_sets"].values(), *test["attribute_sets"].values()]
        )
        stat_diff = abs(theirs["weat_statistic"] - own["weat_statistic"])
        d_diff = abs(theirs["weat_effect_size"] - own["weat_effect_size"])
        kl_diff = p_diff = 0.0
        for run, values in theirs["rnsb"].items():
            run_kl = abs(values["kl"] - own["rnsb"][run]["kl"])
            run_p = max(
                abs(p - own["rnsb"][run]["probabilities"][word])
                for word, p in values["probabilities"].items()
            )
            kl_diff, p_diff = max(kl_diff, run_kl), max(p_diff, run_p)
            orientation, rest = run.split("/", 1)
            entry = worst_by_run[orientation, rest.split("_", 1)[0]]
            if run_kl >= entry["kl"]:
                entry["where"] = f"{test['test_id']} {rest}"
            entry["kl"], entry["p"] = max(entry["kl"], run_kl), max(entry["p"], run_p)
        seeded = [
            v["kl"]
            for k, v in own["rnsb"].items()
            if k.startswith("attribute_sets/defaults_holdout")
        ]
        spread = max(seeded) - min(seeded)
        on_a, on_x = (own["rnsb"][f"{o}/defaults_no_holdout"]["kl"] for o in ORIENTATIONS)
        worst = {
            "weat": max(worst["weat"], stat_diff, d_diff),
            "kl": max(worst["kl"], kl_diff),
            "p": max(worst["p"], p_diff),
        }
        print(
            f"| {test['test_id']} | {sizes} | {stat_diff:.1e} | {own['weat_effect_size']:.4f} | {d_diff:.1e} | "
            f"{on_a:.5f} | {on_x:.5f} | {spread:.1e} | {kl_diff:.1e} | {p_diff:.1e} |"
        )
    print(
        "\nRNSB columns: KL of our defaults without holdout, trained on the attribute sets (WEFE's orientation) "
        "and on the target sets (section 2.1.2's text)."
    )
    for (orientation, estimator), values in worst_by_run.items():
        print(
            f"RNSB train_on={orientation}, {estimator} ({ESTIMATORS[estimator][0]}): max KL diff {values['kl']:.2e} "
            f"({values['where']}), max P diff {values['p']:.2e}"
        )
    passed = all(value <= TOLERANCE for value in worst.values())
    print(
        f"\nworst differences: WEAT {worst['weat']:.2e}, RNSB KL {worst['kl']:.2e}, RNSB P {worst['p']:.2e} "
        f"(tolerance {TOLERANCE:g}): {'PASS' if passed else 'FAIL'}"
    )
    return 0 if passed else 1


if __name__ == "__main__":
    np.set_printoptions(precision=4)
    sys.exit(main())
