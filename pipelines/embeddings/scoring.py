"""Score embeddings with the WEAT and RNSB modules on the WEAT word sets, as a user would.

WEAT runs once per test (its statistic, the study's WEAT value, first; the effect size
second), RNSB once per classifier orientation (trained on the attribute sets as WEFE does, or
on the target sets as the study's section 2.1.2 reads), each with its interval. The words an
embedding lacks are reported per set (a word may be found in lower case), and target sets left
unequal are balanced by dropping words from the end of the larger one (recorded), since WEAT's
permutation test needs |X| = |Y|.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bias_hub.pipelines.common import dataset_folder, load_dataset_split, metric_scores
from bias_hub.pipelines.embeddings.vectors import WordVectors

DATASET = "weat_word_sets"
METRICS = ("weat", "rnsb")


@dataclass
class Query:
    """Named target and attribute sets of one test (WEFE's query shape)."""

    test_id: str
    target_sets: dict[str, list[str]]
    attribute_sets: dict[str, list[str]]
    title: str = ""
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_row(cls, row: dict) -> Query:
        def sets(*roles: str) -> dict[str, list[str]]:
            return {row[f"{role}_name"]: list(row[f"{role}_words"]) for role in roles}

        targets, attributes = sets("target_x", "target_y"), sets("attribute_a", "attribute_b")
        return cls(row["test_id"], targets, attributes, title=row.get("title", ""))

    def words(self) -> list[str]:
        """Every word of the four sets, set after set (repeats kept)."""
        return [w for s in [*self.target_sets.values(), *self.attribute_sets.values()] for w in s]


def load_queries(
    config: str = "en",
    tests: Iterable[str] | None = None,
    root: str | Path | None = None,
    dataset: str | Path | None = None,
) -> list[Query]:
    """The WEAT tests of one config of the ``weat_word_sets`` dataset folder, in the order asked.

    ``dataset`` is the folder (or its name under ``root``, the datasets root); default ``weat_word_sets``.
    """
    folder = dataset_folder(dataset or DATASET, root)
    rows = load_dataset_split(folder, config, "test")
    by_id = {row["test_id"]: row for row in rows}
    wanted = list(tests) if tests else list(by_id)
    unknown = [test for test in wanted if test not in by_id]
    if unknown:
        raise ValueError(f"--tests: {unknown} not in config {config!r}; known: {sorted(by_id)}")
    return [Query.from_row(by_id[test]) for test in wanted]


def _resolve_word(vectors: WordVectors, word: str, lowercase_fallback: bool) -> str | None:
    if word in vectors:
        return word
    if lowercase_fallback and word.lower() in vectors:
        return word.lower()
    return None


def prepare(
    query: Query,
    vectors: WordVectors,
    lowercase_fallback: bool = True,
    balance: bool = True,
    max_oov_share: float | None = None,
) -> tuple[Query, dict]:
    """The query (target sets balanced) and the metrics' ``words``/``vectors``.

    Words the embedding lacks stay in the sets, so the metrics report them as OOV.
    With ``max_oov_share`` a set of the *original* query that lost more than that
    share raises ``ValueError`` before balancing removes words that do have vectors.
    """
    found: dict[str, str] = {}
    for kind in ("target_sets", "attribute_sets"):
        for name, words in getattr(query, kind).items():
            resolved = [(word, _resolve_word(vectors, word, lowercase_fallback)) for word in words]
            missing = [word for word, found_as in resolved if found_as is None]
            found.update((word, found_as) for word, found_as in resolved if found_as is not None)
            if max_oov_share is not None and words and len(missing) / len(words) > max_oov_share:
                raise ValueError(
                    f"{kind}[{name!r}] lost {len(missing)} of {len(words)} words to the vocabulary "
                    f"(more than max_oov_share={max_oov_share}): {missing}"
                )
    targets = {name: list(words) for name, words in query.target_sets.items()}
    notes = []
    if balance:
        (x_name, x_words), (y_name, y_words) = targets.items()
        x_in = [w for w in x_words if w in found]
        y_in = [w for w in y_words if w in found]
        if len(x_in) != len(y_in):
            longer_name, longer = (x_name, x_in) if len(x_in) > len(y_in) else (y_name, y_in)
            dropped = longer[min(len(x_in), len(y_in)) :]
            targets[longer_name] = [w for w in targets[longer_name] if w not in dropped]
            notes.append(f"balanced {longer_name!r} by dropping {dropped}")
    lowered = sorted(f"{w}->{r}" for w, r in found.items() if w != r)
    if lowered:
        notes.append(f"found in lower case: {', '.join(lowered)}")
    prepared = Query(
        query.test_id,
        targets,
        {k: list(v) for k, v in query.attribute_sets.items()},
        query.title,
        notes,
    )
    words = list(found)
    matrix = (
        vectors.matrix[[vectors.index[found[w]] for w in words]]
        if words
        else np.zeros((0, vectors.dim))
    )
    return prepared, {"words": words, "vectors": np.asarray(matrix, dtype=np.float64)}


def shared_rows(inputs: dict) -> list[list[str]]:
    """Groups of query words with identical vectors (chiVe in ja-ginza shares rows between similar words)."""
    groups: dict[bytes, list[str]] = {}
    for word, row in zip(inputs["words"], inputs["vectors"], strict=False):
        groups.setdefault(np.asarray(row).tobytes(), []).append(word)
    return [group for group in groups.values() if len(group) > 1]


RNSB_TRAIN_ON = ("attribute_sets", "target_sets")
# Column prefix per RNSB orientation: the classifier trained on the attribute sets (WEFE's
# RNSB, which the study ran) or on the target sets (the study's section 2.1.2 text).
RNSB_COLUMNS = {"attribute_sets": "rnsb_attributes", "target_sets": "rnsb_targets"}


def score(
    vectors: WordVectors,
    queries: Sequence[Query],
    metrics: Sequence[str] = METRICS,
    weat_options: dict | None = None,
    rnsb_options: dict | None = None,
    lowercase_fallback: bool = True,
    modules: dict | None = None,
    metrics_root: str | Path | None = None,
    rnsb_train_on: Sequence[str] = RNSB_TRAIN_ON,
) -> list[dict]:
    """One row per (query, module call): WEAT once, RNSB once per orientation in ``rnsb_train_on``."""
    unknown = [name for name in metrics if name not in METRICS]
    if unknown:
        raise ValueError(f"--metrics: unknown {unknown}; choose from {METRICS}")
    wrong = [name for name in rnsb_train_on if name not in RNSB_TRAIN_ON]
    if wrong or (not rnsb_train_on and "rnsb" in metrics):
        raise ValueError(
            f"--rnsb-train-on: choose one or both of {RNSB_TRAIN_ON}, got {list(rnsb_train_on)}"
        )
    if modules is None:
        modules = {name: metric_scores(name, metrics_root) for name in metrics}
    options = {"weat": dict(weat_options or {}), "rnsb": dict(rnsb_options or {})}
    calls = [(name, None) for name in metrics if name == "weat"]
    calls += [("rnsb", train_on) for train_on in rnsb_train_on if "rnsb" in metrics]
    rows = []
    limit = min(options[name].get("max_oov_share", 0.2) for name in metrics)
    for query in queries:
        try:
            prepared, inputs = prepare(query, vectors, lowercase_fallback, max_oov_share=limit)
        except ValueError as err:
            raise ValueError(f"{vectors.name}, {query.test_id}: {err}") from err
        shared = shared_rows(inputs)
        for name, train_on in calls:
            extra = {} if train_on is None else {"train_on": train_on}
            try:
                result = modules[name].compute(
                    **inputs,
                    target_sets=prepared.target_sets,
                    attribute_sets=prepared.attribute_sets,
                    **options[name],
                    **extra,
                )
            except ValueError as err:
                where = name if train_on is None else f"{name} (train_on={train_on})"
                raise ValueError(f"{vectors.name}, {query.test_id}, {where}: {err}") from err
            rows.append(
                {
                    "embedding": vectors.name,
                    "test_id": query.test_id,
                    "metric": name,
                    "train_on": train_on,
                    "p_value": result.get("p_value"),
                    "notes": prepared.notes
                    + ([f"words sharing one vector: {shared}"] if shared else []),
                    "values": row_values(name, train_on, query.test_id, result),
                    "result": result,
                }
            )
    return rows


def row_values(metric: str, train_on: str | None, test_id: str, result: dict) -> list[dict]:
    """The score columns one module result gives: WEAT's value (the study's c(X,A) + c(Y,B)
    - c(X,B) - c(Y,A), first) and effect size; RNSB's divergence; each with its interval."""
    if metric == "weat":
        cells = [
            (f"weat_{test_id}", "WEAT value", "statistic"),
            (f"weat_effect_size_{test_id}", "WEAT effect size", "effect_size"),
        ]
    else:
        trained = "A, B" if train_on == "attribute_sets" else "X, Y"
        column = f"{RNSB_COLUMNS[train_on]}_{test_id}"
        cells = [(column, f"RNSB trained on {trained}", "kl_divergence")]
    intervals = result.get("confidence_intervals", {})
    return [
        {"column": column, "name": name, "value": result[key], "interval": intervals.get(key)}
        for column, name, key in cells
    ]
