"""WEFE's side of the agreement check; runs inside bench/.venv-wefe, not the project venv.

Reads the queries and vectors the driver (bench/embeddings_wefe_agreement.py) wrote,
scores them with wefe's WEAT and RNSB, and writes the numbers as JSON. RNSB runs in
both orientations: the WEAT query as it is (WEFE trains on the attribute sets A, B and
scores the target words: our train_on="attribute_sets"), and the query with targets and
attributes exchanged (trained on X, Y, the attribute words scored: our
train_on="target_sets"). WEFE labels its first attribute set +1 and reports the
probability of its second (-1), as our module reports the second training set's.
"""

import json
import sys

import numpy as np
from gensim.models import KeyedVectors
from sklearn.linear_model import LogisticRegression
from wefe.metrics import RNSB, WEAT
from wefe.query import Query
from wefe.word_embedding_model import WordEmbeddingModel


def main(source: str, target: str) -> None:
    data = json.load(open(source, encoding="utf-8"))
    results = []
    for test in data["tests"]:
        vectors = np.asarray(test["vectors"], dtype=np.float64)
        keyed = KeyedVectors(vector_size=vectors.shape[1], dtype=np.float64)
        keyed.add_vectors(test["words"], vectors)
        model = WordEmbeddingModel(keyed, "bench")
        (x_name, x), (y_name, y) = test["target_sets"].items()
        (a_name, a), (b_name, b) = test["attribute_sets"].items()
        weat = WEAT().run_query(Query([x, y], [a, b], [x_name, y_name], [a_name, b_name]), model)
        queries = {
            "attribute_sets": Query([x, y], [a, b], [x_name, y_name], [a_name, b_name]),
            "target_sets": Query([a, b], [x, y], [a_name, b_name], [x_name, y_name]),
        }
        rnsb = {}
        for orientation, rnsb_query in queries.items():
            for name, params in data["estimators"].items():
                for label, holdout, seed in [("no_holdout", False, None)] + [
                    (f"holdout_seed{seed}", True, seed) for seed in data["seeds"]
                ]:
                    out = RNSB().run_query(
                        rnsb_query,
                        model,
                        estimator=LogisticRegression,
                        estimator_params=dict(params),
                        n_iterations=1,
                        random_state=seed,
                        holdout=holdout,
                    )
                    rnsb[f"{orientation}/{name}_{label}"] = {
                        "kl": float(out["rnsb"]),
                        "probabilities": {
                            w: float(p) for w, p in out["negative_sentiment_probabilities"].items()
                        },
                    }
        results.append(
            {
                "test_id": test["test_id"],
                "weat_statistic": float(weat["weat"]),
                "weat_effect_size": float(weat["effect_size"]),
                "rnsb": rnsb,
            }
        )
    import sklearn
    import wefe

    meta = {"wefe": wefe.__version__, "sklearn": sklearn.__version__, "numpy": np.__version__}
    json.dump({"versions": meta, "results": results}, open(target, "w", encoding="utf-8"))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
