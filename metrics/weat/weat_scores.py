"""Word Embedding Association Test (WEAT): statistic, effect size and permutation p-value.

The computation alone (no ``evaluate``, no ``datasets``): pipelines call it as it is, and
``weat.py`` wraps it for ``evaluate.load``.
"""

import itertools
import math

import numpy as np

from .bias_hub_common import (
    Scores,
    disjoint_sets,
    lookup_sets,
    named_sets,
    vector_table,
)
from .bias_hub_intervals import (
    bootstrap_intervals,
    leave_one_out,
    uncertainty_options,
    whole_number,
)

_ALTERNATIVES = ("greater", "less", "two-sided")


# Spreads of s(w, A, B) below this are rounding noise: the words' associations are equal.
_FLAT = 1e-12


_TIES = ("exclude", "include")


_UNDEFINED = "every target word has the same association s(w, A, B)"


def _check_options(
    alternative, p_value_ties, permutations, exact_max_partitions, max_oov_share
) -> None:
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    if p_value_ties not in _TIES:
        raise ValueError(f"p_value_ties must be one of {_TIES}, got {p_value_ties!r}")
    if not whole_number(permutations) or permutations < 1:
        raise ValueError(f"permutations must be a positive int, got {permutations!r}")
    if not whole_number(exact_max_partitions) or exact_max_partitions < 0:
        raise ValueError(
            f"exact_max_partitions must be a whole number of at least 0 (0: always sample), "
            f"got {exact_max_partitions!r}"
        )
    if not 0 <= max_oov_share < 1:
        raise ValueError(f"max_oov_share must be in [0, 1), got {max_oov_share!r}")


def _check_targets(target_rows: dict, target_oov: dict, allow_unequal: bool, std_ddof) -> None:
    """Equal target sets (unless allowed) and a std_ddof that leaves the deviation defined."""
    (x_name, x_rows), (y_name, y_rows) = target_rows.items()
    if len(x_rows) != len(y_rows) and not allow_unequal:
        raise ValueError(
            f"target_sets {x_name!r} and {y_name!r} have {len(x_rows)} and {len(y_rows)} words in the "
            f"vocabulary; WEAT's permutation test needs equal sizes (OOV: {target_oov}). "
            "Balance the sets or pass allow_unequal_targets=True."
        )
    n = len(x_rows) + len(y_rows)
    if not whole_number(std_ddof) or not 0 <= std_ddof <= n - 1:
        raise ValueError(
            f"std_ddof must be a whole number from 0 to {n - 1} (the {n} target words used minus 1), "
            f"so that the standard deviation of their associations is defined; got {std_ddof!r}"
        )


def _partition_sums(associations: np.ndarray, n_first: int, settings: dict):
    """Sums of s over the first part of every (or of sampled) re-partitions of the pool."""
    n = associations.shape[0]
    if math.comb(n, n_first) <= settings["exact_max_partitions"]:
        combos = itertools.combinations(range(n), n_first)
        chosen = np.fromiter(itertools.chain.from_iterable(combos), dtype=np.int32).reshape(
            -1, n_first
        )
        return associations[chosen].sum(axis=1), "exact"
    rng = np.random.default_rng(settings["seed"])
    chosen = np.argsort(rng.random((settings["permutations"], n)), axis=1)[:, :n_first]
    return associations[chosen].sum(axis=1), "sampled"


def _p_value(associations: np.ndarray, n_x: int, statistic: float, settings: dict) -> tuple:
    """(p-value, "exact" or "sampled", partitions evaluated) of the permutation test."""
    sums, method = _partition_sums(associations, n_x, settings)
    resampled = 2 * sums - associations.sum()
    # Statistics within `slack` of the observed one are ties (the observed partition itself,
    # recomputed here with other rounding, is one): "exclude" leaves them out (Caliskan's
    # strict ">"), "include" counts them (">=").
    slack = 1e-12 * max(1.0, float(np.abs(associations).sum()))
    if settings["p_value_ties"] == "include":
        slack = -slack
    alternative = settings["alternative"]
    if alternative == "greater":
        extreme = resampled - statistic
    elif alternative == "less":
        extreme = statistic - resampled
    else:
        extreme = np.abs(resampled) - abs(statistic)
    count = int((extreme > slack).sum())
    # Sampled: (k + 1) / (N + 1), the observed partition counted once with the draws, so an
    # estimate from finitely many draws is never 0.
    p_value = count / len(resampled) if method == "exact" else (count + 1) / (len(resampled) + 1)
    return float(p_value), method, len(resampled)


def _intervals(
    cosines: np.ndarray, n_x: int, n_a: int, std_ddof: int, observed: list, options: dict
) -> list:
    """Intervals of the effect size and the statistic, resampling the members of X, Y, A and
    B independently (each resample keeps the four sets' sizes).

    ``cosines``: target words (X then Y) x attribute words (A then B).
    """
    n_y, n_b = cosines.shape[0] - n_x, cosines.shape[1] - n_a
    samples = [np.arange(n) for n in (n_x, n_y, n_a, n_b)]

    def statistic(x, y, a, b, axis=-1):
        to_a = cosines[:, a].mean(axis=-1)  # (targets, ...resamples)
        to_b = cosines[:, n_a + b].mean(axis=-1)
        s = np.moveaxis(to_a - to_b, 0, -1)  # (...resamples, targets)
        s_x = np.take_along_axis(s, x, axis=-1)
        s_y = np.take_along_axis(s, n_x + y, axis=-1)
        spread = np.concatenate([s_x, s_y], axis=-1).std(axis=-1, ddof=std_ddof)
        with np.errstate(divide="ignore", invalid="ignore"):
            effect = (s_x.mean(axis=-1) - s_y.mean(axis=-1)) / np.where(
                spread > _FLAT, spread, np.nan
            )
        return np.stack([effect, s_x.sum(axis=-1) - s_y.sum(axis=-1)])

    return bootstrap_intervals(
        samples, statistic, observed, options, "words", lambda: leave_one_out(samples, statistic)
    )


def _scores(associations: np.ndarray, n_x: int, std_ddof: int, settings: dict) -> dict:
    """Effect size, statistic and p-value of the associations (X's first), with `undefined`."""
    s_x, s_y = associations[:n_x], associations[n_x:]
    scores = {
        "effect_size": None,
        "statistic": float(s_x.sum() - s_y.sum()),
        "p_value": None,
        "p_value_method": None,
        "n_partitions": 0,
        "undefined": {},
    }
    spread = associations.std(ddof=std_ddof)
    if not spread > _FLAT:
        scores["undefined"] = {
            "effect_size": f"{_UNDEFINED}: the spread is 0",
            "p_value": f"{_UNDEFINED}: all partitions tie",
        }
        return scores
    scores["effect_size"] = float((s_x.mean() - s_y.mean()) / spread)
    p_value, method, n_partitions = _p_value(associations, n_x, scores["statistic"], settings)
    scores.update(p_value=p_value, p_value_method=method, n_partitions=int(n_partitions))
    return scores


class WeatScores(Scores):
    name = "weat"

    def columns(self) -> dict:
        return {"words": "string", "vectors": ["float64"]}

    def check_rows(self, columns: dict) -> None:
        vector_table(columns.get("words"), columns.get("vectors"), allow_zero=True)

    def _compute(
        self,
        words=None,
        vectors=None,
        target_sets=None,
        attribute_sets=None,
        permutations: int = 10000,
        exact_max_partitions: int = 200000,
        seed: int = 0,
        alternative: str = "greater",
        p_value_ties: str = "exclude",
        std_ddof: int = 0,
        max_oov_share: float = 0.2,
        allow_unequal_targets: bool = False,
        confidence_level: float | None = None,
        n_resamples: int = 2000,
    ) -> dict:
        options = uncertainty_options(confidence_level, n_resamples, seed)
        targets = named_sets(target_sets, "target_sets", 2)
        attributes = named_sets(attribute_sets, "attribute_sets", 2)
        disjoint_sets(targets, attributes)
        _check_options(alternative, p_value_ties, permutations, exact_max_partitions, max_oov_share)
        index, matrix = vector_table(words, vectors, allow_zero=False)
        target_rows, target_oov = lookup_sets(targets, "target_sets", index, max_oov_share)
        attribute_rows, attribute_oov = lookup_sets(
            attributes, "attribute_sets", index, max_oov_share
        )
        _check_targets(target_rows, target_oov, allow_unequal_targets, std_ddof)
        x_rows, y_rows = target_rows.values()
        a_rows, b_rows = attribute_rows.values()
        unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
        cosines = unit[x_rows + y_rows] @ unit[a_rows + b_rows].T
        a_side, b_side = cosines[:, : len(a_rows)], cosines[:, len(a_rows) :]
        associations = a_side.mean(axis=1) - b_side.mean(axis=1)
        settings = dict(
            exact_max_partitions=exact_max_partitions,
            permutations=permutations,
            seed=seed,
            p_value_ties=p_value_ties,
            alternative=alternative,
        )
        scores = _scores(associations, len(x_rows), std_ddof, settings)
        used = {
            n: [words[r] for r in rows] for n, rows in {**target_rows, **attribute_rows}.items()
        }
        target_words = [words[row] for row in x_rows + y_rows]
        result = {"score": scores["effect_size"], "score_name": "effect_size", **scores}
        result["associations"] = dict(zip(target_words, associations.tolist(), strict=True))
        result["words_used"] = used
        result["oov"] = {**target_oov, **attribute_oov}
        if options is not None:
            effect_size = scores["effect_size"]
            observed = [np.nan if effect_size is None else effect_size, scores["statistic"]]
            effect, total = _intervals(
                cosines, len(x_rows), len(a_rows), std_ddof, observed, options
            )
            result["confidence_intervals"] = {"effect_size": effect, "statistic": total}
        return result
