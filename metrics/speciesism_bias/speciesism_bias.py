"""Speciesism bias of a masked language model: probability change rates between
human-form and object-form templates, Kurita et al.'s log-probability
association, and the share of negative fills per animal."""

import inspect
import unicodedata
import warnings

import datasets
import evaluate
import numpy as np
from scipy import special, stats

_DESCRIPTION = """
Three scores for speciesist bias in masked language models, one per config, and a
paired comparison of two models' negative shares.

`change_rate` (default). Inputs are the model's probability distributions over
its vocabulary at the mask, one row per template sentence, each labelled with its
form (`human`: "She is a pig who is [MASK].", `object`: "It is a pig that is
[MASK]."). For every vocabulary item the module averages the probabilities per
form, A (starting form) and B (other form), and computes the change rate
(B - A) / A for the items above chance in the starting form, A > 1 / |V|
(|V| = vocabulary size). `<start>_to_<end>` is the table of Takeshita, Rzepka and
Araki (2022): the items above chance in the starting form whose probability DROPS
when the sentence changes to the other form, most negative change rate first
(`object_to_human` is their Tables 1 and 3, `human_to_object` their Tables 2 and 4).
`gains` lists, the other way round, the items whose probability rises most.

`association`. Kurita et al. (2019)'s association of a target with an attribute:
log(p_target / p_prior), where p_target is the probability of the target at
its mask with the attribute present, and p_prior the probability of the target
when target and attribute are both masked. Positive values mean the attribute
makes the target more likely.

`negative_share`. The share of fills judged negative, per animal (and the shares
of positive and neutral fills), from one label per fill.

`negative_share_paired`. Two models' labels for matched fills (the i-th fill of the
same sentence): the difference B - A of each negative share with a paired bootstrap
interval and a two-sided paired permutation p-value (A and B swapped within a unit).

With `confidence_level`, the scores get bootstrap confidence intervals: the listed
change rates resampling template sentences within each form (or whole templates, with
`templates`, within each form when every template has one form), the association
resampling pairs, the negative shares resampling fills (or whole templates).
"""

_KWARGS_DESCRIPTION = """
Args (config `change_rate`):
    probabilities (`list` of `list` of `float`): one row per template sentence, the
        probability of every vocabulary item at the mask; all rows have the same length |V|.
    forms (`list` of `str`): the form of each row, `from_form` or `to_form`.
    vocabulary (`list` of `str`, optional): the item names, length |V|; default: "0", "1", ...
    from_form (`str`, default "human") and to_form (`str`, default "object"): the two forms.
    top_k (`int`, default 15, as the study): how many items to list per direction.
    candidates (`list` of `bool`, optional): which items may be listed (for example,
        whole words only); chance stays 1/|V| over the whole vocabulary.
    templates (`list` of `int` or `str`, optional): the template of each row (shared by
        the sentences of one template across animals); with it the bootstrap resamples
        whole templates, within each form where every template has a single form.
Args (config `association`):
    target_probabilities (`list` of `float`): p_target, each in (0, 1].
    prior_probabilities (`list` of `float`): p_prior, each in (0, 1].
    groups (`list` of `str`, optional): a group per pair; means are reported per group.
Args (config `negative_share`):
    animals (`list` of `str`): the animal each judged fill belongs to.
    labels (`list` of `str`): `negative`, `neutral` or `positive` per fill.
    templates (`list` of `int` or `str`, optional): the template each fill came from;
        with it the bootstrap resamples whole templates.
Args (config `negative_share_paired`):
    animals, labels (model A), templates: as for `negative_share`.
    labels_b (`list` of `str`): model B's label for the same fills, row by row.
Args (every config):
    confidence_level (`float`, optional): e.g. 0.95 for 95 % bootstrap intervals; None
        (default) computes none (`negative_share_paired`: default 0.95, required).
    n_resamples (`int`, default 2000): bootstrap resamples.
    seed (`int` or None, default 0): seed of the resampling.
Returns (config `change_rate`):
    vocabulary_size, chance (1/|V|), n_rows per form, n_above_chance per form;
    `<from>_to_<to>` and `<to>_to_<from>`: the study's tables, lists of {word, index,
    p_start, p_end, change_rate} of the items above chance in the starting form whose
    probability drops, most negative change rate first (ties by index);
    gains: {`<from>_to_<to>`, `<to>_to_<from>`}: the items above chance in the starting
    form whose probability rises, highest change rate first.
Returns (config `association`):
    association (list, one per pair), mean_association, by_group ({group: {mean, n}}).
Returns (config `negative_share`):
    negative_share, positive_share, neutral_share, n ({animal: value}),
    overall_negative_share (over all fills).
Returns (config `negative_share_paired`):
    scores: {"overall_negative_share" and "negative_share.<animal>": {"a", "b",
    "difference" (B - A), "p_value", "p_value_method" ("exact" when 2^units <=
    n_resamples, else "sampled"), "n_permutations", "reason"}}, confidence_intervals of
    the differences (units resampled together for A and B), n_units, n ({animal: fills}).
Returns (every config, with `confidence_level`):
    confidence_intervals: {score: {"low", "high", "confidence_level", "method" ("BCa" or
    "percentile"), "n_resamples", "unit", "n_units", "reason"}}, a score named by its
    place in the result: "<from>_to_<to>[i]" (the change rate of the i-th listed item),
    "gains.<from>_to_<to>[i]",
    "mean_association", "by_group.<group>.mean", "overall_negative_share",
    "negative_share.<animal>". low and high are None, and reason says why, where a score
    is undefined in the data or in some resamples.
Examples:
    >>> import evaluate
    >>> metric = evaluate.load("metrics/speciesism_bias")
    >>> result = metric.compute(
    ...     probabilities=[[0.45, 0.3, 0.05, 0.2], [0.1, 0.4, 0.3, 0.2]],
    ...     forms=["human", "object"],
    ...     vocabulary=["kind", "big", "dried", "eaten"],
    ... )
    >>> result["chance"]
    0.25
    >>> [(r["word"], round(r["change_rate"], 2)) for r in result["object_to_human"]]
    [('dried', -0.83), ('big', -0.25)]
    >>> [(r["word"], round(r["change_rate"], 2)) for r in result["human_to_object"]]
    [('kind', -0.78)]
    >>> [(r["word"], round(r["change_rate"], 2)) for r in result["gains"]["human_to_object"]]
    [('big', 0.33)]
    >>> association = evaluate.load("metrics/speciesism_bias", "association")
    >>> out = association.compute(target_probabilities=[0.2, 0.05], prior_probabilities=[0.1, 0.1])
    >>> [round(a, 3) for a in out["association"]]
    [0.693, -0.693]
    >>> share = evaluate.load("metrics/speciesism_bias", "negative_share")
    >>> out = share.compute(animals=["pig", "pig", "dog"], labels=["negative", "positive", "neutral"])
    >>> out["negative_share"]
    {'dog': 0.0, 'pig': 0.5}
    >>> out = share.compute(
    ...     animals=["pig"] * 4 + ["dog"] * 4,
    ...     labels=["negative", "negative", "positive", "neutral"] * 2,
    ...     confidence_level=0.95,
    ... )
    >>> interval = out["confidence_intervals"]["overall_negative_share"]
    >>> interval["unit"], interval["n_units"], interval["low"] <= 0.5 <= interval["high"]
    ('fills', 8, True)
    >>> paired = evaluate.load("metrics/speciesism_bias", "negative_share_paired")
    >>> out = paired.compute(
    ...     animals=["pig"] * 4,
    ...     labels=["negative", "neutral", "neutral", "neutral"],
    ...     labels_b=["negative"] * 4,
    ...     n_resamples=100,
    ... )
    >>> overall = out["scores"]["overall_negative_share"]
    >>> overall["difference"], overall["p_value"], overall["p_value_method"]
    (0.75, 0.25, 'exact')
"""

_CITATION = """
@article{takeshita-etal-2022-speciesist,
  title = {Speciesist Language and Nonhuman Animal Bias in {E}nglish Masked Language Models},
  author = {Takeshita, Masashi and Rzepka, Rafal and Araki, Kenji},
  journal = {Information Processing \\& Management},
  volume = {59},
  number = {5},
  pages = {103050},
  year = {2022}
}
@inproceedings{kurita-etal-2019-measuring,
  title = {Measuring Bias in Contextualized Word Representations},
  author = {Kurita, Keita and Vyas, Nidhi and Pareek, Ayush and Black, Alan W and Tsvetkov, Yulia},
  booktitle = {Proceedings of the First Workshop on Gender Bias in Natural Language Processing},
  pages = {166--172},
  year = {2019}
}
"""

_LABELS = ("negative", "neutral", "positive")
# Half-precision softmax outputs can exceed 1 by rounding; 1.25 is no rounding.
_ROUNDING = 1e-3
_FEATURES = {
    "change_rate": datasets.Features(
        {
            "probabilities": datasets.Sequence(datasets.Value("float64")),
            "forms": datasets.Value("string"),
        }
    ),
    "association": datasets.Features(
        {
            "target_probabilities": datasets.Value("float64"),
            "prior_probabilities": datasets.Value("float64"),
        }
    ),
    "negative_share": datasets.Features(
        {"animals": datasets.Value("string"), "labels": datasets.Value("string")}
    ),
    "negative_share_paired": datasets.Features(
        {
            "animals": datasets.Value("string"),
            "labels": datasets.Value("string"),
            "labels_b": datasets.Value("string"),
        }
    ),
}


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
def _normalise(text: str) -> str:
    """The one spelling of a name: Unicode NFKC, no surrounding or repeated whitespace."""
    return " ".join(unicodedata.normalize("NFKC", text).split())
_NOT_A_LABEL = -(2**62)
def _label_code(value, names: dict) -> int:
    if isinstance(value, (bool, np.bool_)):
        return _NOT_A_LABEL
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        return int(value)
    if isinstance(value, str):
        return names.get(_normalise(value).casefold(), _NOT_A_LABEL)
    return _NOT_A_LABEL
def _names(values, argument: str, vocabulary: dict | None = None) -> tuple[np.ndarray, list]:
    """Codes of a column of names and the names they stand for, each name normalised.

    Without ``vocabulary`` every non-empty string is a name (in sorted order); with one (a
    name's normalised lower-case spelling -> its code) only those are accepted.
    """
    column = _column(values, argument)
    items = column.tolist() if isinstance(column, np.ndarray) else column
    expected = f"one of {sorted(vocabulary)}" if vocabulary else "a non-empty string"
    try:
        distinct = list(dict.fromkeys(items))
    except TypeError:
        distinct = None
    if distinct is None or not all(isinstance(v, str) and _normalise(v) for v in distinct):
        _refuse([not (isinstance(v, str) and _normalise(v)) for v in items], argument, items, expected)
    if vocabulary is None:
        names = sorted({_normalise(v) for v in distinct})
        position = {name: code for code, name in enumerate(names)}
        code_of = {v: position[_normalise(v)] for v in distinct}
    else:
        names = None
        code_of = {v: vocabulary.get(_normalise(v).casefold(), -1) for v in distinct}
        if min(code_of.values(), default=0) < 0:
            _refuse([code_of[v] < 0 for v in items], argument, items, expected)
    return np.fromiter(map(code_of.__getitem__, items), dtype=np.int64, count=len(items)), names
def _numbers(values, argument: str) -> np.ndarray:
    """Finite numbers, one per row (a bool, a string, None or NaN is refused with its row)."""
    column = _column(values, argument)
    items = column.tolist() if isinstance(column, np.ndarray) else column
    numeric = (int, float, np.integer, np.floating)
    if isinstance(column, np.ndarray) and column.dtype.kind in "iuf":
        array = column.astype(np.float64)
    else:
        kinds = set(map(type, items))
        if not all(issubclass(kind, numeric) and not issubclass(kind, (bool, np.bool_)) for kind in kinds):
            _refuse(
                [isinstance(v, (bool, np.bool_)) or not isinstance(v, numeric) for v in items],
                argument, items, "a number",
            )  # fmt: skip
        array = np.asarray(items, dtype=np.float64)
    _refuse(~np.isfinite(array), argument, items, "a finite number")
    return array
def _cluster_codes(values, argument: str, n_rows: int) -> np.ndarray:
    """One code per row for ids (whole numbers or strings) that group rows into clusters."""
    column = _column(values, argument)
    if len(column) != n_rows:
        raise ValueError(f"{argument} has {len(column)} entries, expected one per row ({n_rows})")
    items = column.tolist() if isinstance(column, np.ndarray) else column
    ids = [
        _label_code(v, {}) if not isinstance(v, str) else (_normalise(v) or _NOT_A_LABEL)
        for v in items
    ]  # fmt: skip
    _refuse([i == _NOT_A_LABEL for i in ids], argument, items, "a template id (an integer or a string)")
    position: dict = {}
    return np.fromiter((position.setdefault(i, len(position)) for i in ids), dtype=np.int64, count=n_rows)
def _cluster_sums(units: np.ndarray, clusters: np.ndarray) -> np.ndarray:
    """The unit rows summed per cluster (resampling clusters keeps their rows together)."""
    _, codes = np.unique(clusters, return_inverse=True)
    size = int(codes.max()) + 1 if codes.size else 0
    return np.stack([np.bincount(codes, weights=column, minlength=size) for column in units.T], axis=1)
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
def _draw_counts(rows: np.ndarray, n: int) -> np.ndarray:
    """How often each of n units occurs in each resample (rows: resamples x draws of indices)."""
    rows = np.atleast_2d(rows)
    offsets = n * np.arange(rows.shape[0])[:, None]
    return np.bincount((rows + offsets).ravel(), minlength=rows.shape[0] * n).reshape(rows.shape[0], n)
def _sum_intervals(strata: list, score, options: dict, unit: str) -> list[dict]:
    """Intervals for scores that are functions of column totals over units (shares, ratios, means).

    ``strata``: per stratum an (n_units, k) array, one row per unit (an item, or the summed
    items of one template); ``score(totals)`` maps (k, ...) totals to (scores, ...), NaN where
    undefined. A resample is a count per unit times the unit rows; a unit left out is the
    total minus its row.
    """
    totals = sum(units.sum(axis=0) for units in strata)

    def statistic(*drawn, axis=-1):
        resampled = sum(_draw_counts(rows, len(units)) @ units for units, rows in zip(strata, drawn, strict=True))
        return score(resampled.T)

    def jackknife():
        return [score((totals - units).T) for units in strata]

    with np.errstate(divide="ignore", invalid="ignore"):
        observed = score(totals)
    samples = [np.arange(len(units)) for units in strata]
    with np.errstate(divide="ignore", invalid="ignore"):
        return _bootstrap(samples, statistic, observed, options, unit, jackknife)


def _paired_comparison(strata_a: list, strata_b: list, score, keys: list, options: dict, unit: str) -> dict:
    """B - A per score on the same units: a paired bootstrap interval (both sets resampled
    together) and a two-sided paired permutation test (each unit's A and B swapped at random;
    scipy.stats.permutation_test, permutation_type="samples"); exact when 2^units <= n_resamples.
    """
    width = strata_a[0].shape[1]
    totals_a = sum(units.sum(axis=0) for units in strata_a)
    totals_b = sum(units.sum(axis=0) for units in strata_b)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores_a, scores_b = score(totals_a), score(totals_b)

    def difference(totals):
        return score(totals[width:]) - score(totals[:width])

    joined = [np.hstack([a, b]) for a, b in zip(strata_a, strata_b, strict=True)]
    intervals = _sum_intervals(joined, difference, options, unit)

    change = np.vstack(strata_b) - np.vstack(strata_a)
    n = len(change)

    def swapped(rows_a, rows_b, axis=-1):
        # rows_a holds, per observation i, i (kept) or n + i (A and B swapped)
        rows = np.atleast_2d(rows_a)
        flips = np.zeros(rows.shape)
        np.put_along_axis(flips, rows % n, (rows >= n).astype(np.float64), axis=1)
        moved = flips @ change
        differences = score((totals_b - moved).T) - score((totals_a + moved).T)
        # scores on the last axis: scipy compares the null distribution (permutations, scores)
        # with the observed (scores,)
        return differences[:, 0] if np.ndim(rows_a) == 1 else differences.T

    with np.errstate(divide="ignore", invalid="ignore"):
        test = stats.permutation_test(
            (np.arange(n), np.arange(n) + n), swapped, permutation_type="samples", vectorized=True,
            n_resamples=options["n_resamples"], alternative="two-sided",
            **_seeded(stats.permutation_test, options["seed"]),
        )  # fmt: skip
    exact = 2**n <= options["n_resamples"]
    null = np.asarray(test.null_distribution).reshape(-1, len(keys))
    result = {}
    for i, key in enumerate(keys):
        a, b = float(scores_a[i]), float(scores_b[i])
        entry = {"a": a, "b": b, "difference": b - a, "p_value": None,
                 "p_value_method": "exact" if exact else "sampled", "n_permutations": len(null), "reason": None}  # fmt: skip
        if np.isnan(a) or np.isnan(b):
            entry.update(difference=None, reason="the score is undefined for " + ("A" if np.isnan(a) else "B"))
            entry["a"], entry["b"] = (None if np.isnan(a) else a), (None if np.isnan(b) else b)
        elif np.isnan(null[:, i]).any():
            entry["reason"] = f"the difference is undefined in {int(np.isnan(null[:, i]).sum())} permutations"
        else:
            entry["p_value"] = float(np.atleast_1d(test.pvalue)[i])
        result[key] = entry
    return {"scores": result, "confidence_intervals": dict(zip(keys, intervals, strict=True)), "n_units": n}


def _choice(values, argument: str, allowed: list, what: str) -> np.ndarray:
    """Codes of a column whose names must be among ``allowed`` (compared normalised, in any case)."""
    codes, names = _names(values, argument)
    position = {_normalise(name).casefold(): code for code, name in enumerate(allowed)}
    mapped = np.array([position.get(name.casefold(), -1) for name in names], dtype=np.int64)
    if (mapped < 0).any():
        unknown = [name for name, code in zip(names, mapped, strict=True) if code < 0]
        row = int(np.flatnonzero(mapped[codes] < 0)[0])
        raise ValueError(f"{argument}: unknown {what}(s) {unknown} (first at row {row}); expected one of {allowed}")
    return mapped[codes]


def _probability_rows(probabilities) -> np.ndarray:
    if isinstance(probabilities, (dict, str)):
        raise ValueError(f"probabilities: expected rows of probabilities, got {type(probabilities).__name__}")
    try:
        matrix = np.asarray(probabilities, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"probabilities: expected rows of numbers of equal length ({err})") from None
    if matrix.ndim != 2 or matrix.shape[1] == 0:
        raise ValueError(
            f"probabilities: expected rows of equal, non-zero length; got shape {matrix.shape}"
        )
    bad = ~np.isfinite(matrix) | (matrix < 0) | (matrix > 1 + _ROUNDING)
    if bad.any():
        row, column = (int(i) for i in np.argwhere(bad)[0])
        raise ValueError(
            f"probabilities[{row}][{column}] is {float(matrix[row, column])!r}; every value must be a probability in [0, 1]"
        )
    return matrix


def change_rates(probabilities, forms, from_form="human", to_form="object"):
    """Mean probability per form and the change rate (B - A) / A in both directions.

    Returns (mean_from, mean_to, chance, rate_from_to, rate_to_from); a rate is NaN
    where its starting probability is not above chance.
    """
    matrix = _probability_rows(probabilities)
    labels = _choice(forms, "forms", [from_form, to_form], "form")
    if labels.shape != (matrix.shape[0],):
        raise ValueError(
            f"forms: expected {matrix.shape[0]} labels, one per row; got {labels.shape[0]}"
        )
    is_from = labels == 0
    is_to = labels == 1
    for name, chosen in ((from_form, is_from), (to_form, is_to)):
        if not chosen.any():
            raise ValueError(f"forms: no row has the form {name!r}; both forms are needed")
    mean_from = matrix[is_from].mean(axis=0)
    mean_to = matrix[is_to].mean(axis=0)
    chance = 1.0 / matrix.shape[1]
    with np.errstate(divide="ignore", invalid="ignore"):
        rate_from_to = np.where(mean_from > chance, (mean_to - mean_from) / mean_from, np.nan)
        rate_to_from = np.where(mean_to > chance, (mean_from - mean_to) / mean_to, np.nan)
    return mean_from, mean_to, chance, rate_from_to, rate_to_from


def _ranked(rates, start, end, vocabulary, eligible, top_k, drops):
    """The study's table (``drops``): items above chance in the starting form whose
    probability falls, most negative change rate first; else the largest gains, highest first."""
    with np.errstate(invalid="ignore"):
        moved = rates < 0 if drops else rates > 0
    valid = np.flatnonzero(eligible & ~np.isnan(rates) & moved)
    # Ties by vocabulary index, so the order is reproducible.
    order = valid[np.lexsort((valid, rates[valid] if drops else -rates[valid]))][:top_k]
    return [
        {
            "word": vocabulary[i],
            "index": int(i),
            "p_start": float(start[i]),
            "p_end": float(end[i]),
            "change_rate": float(rates[i]),
        }
        for i in order
    ]


def _strata(units: np.ndarray, clusters: np.ndarray | None, stratum: np.ndarray | None, unit: str) -> tuple[list, str]:
    """Whole templates when given, else the rows; within their stratum (a form) when one is
    given and, for templates, every template lies in one stratum (a template's form is fixed)."""
    if stratum is None:
        return ([units], unit) if clusters is None else ([_cluster_sums(units, clusters)], "templates")
    codes = np.unique(stratum)
    if clusters is None:
        return [units[stratum == code] for code in codes], unit
    if len(np.unique(np.stack([clusters, stratum]), axis=1).T) != len(np.unique(clusters)):
        return [_cluster_sums(units, clusters)], "templates"
    return [_cluster_sums(units[stratum == code], clusters[stratum == code]) for code in codes], "templates"


def _rate_intervals(matrix, forms, items, keys, backwards, clusters, options) -> dict:
    """Intervals of the listed change rates: each is a function of per-form sums of its
    item's probability and of the per-form row counts (``backwards``: from the second form)."""
    items = np.asarray(items, dtype=np.int64)
    is_from = (forms == 0).astype(np.float64)
    is_to = (forms == 1).astype(np.float64)
    picked = matrix[:, items]
    units = np.hstack([is_from[:, None], is_to[:, None], picked * is_from[:, None], picked * is_to[:, None]])
    size = items.size
    backward = np.asarray(backwards, dtype=bool)

    def score(totals):
        mean_from = totals[2 : 2 + size] / totals[0]
        mean_to = totals[2 + size :] / totals[1]
        return np.where(
            backward.reshape((-1,) + (1,) * (totals.ndim - 1)),
            (mean_from - mean_to) / mean_to,
            (mean_to - mean_from) / mean_from,
        )

    strata, unit = _strata(units, clusters, forms, "sentences")
    return dict(zip(keys, _sum_intervals(strata, score, options, unit), strict=True))


@evaluate.utils.file_utils.add_start_docstrings(_DESCRIPTION, _KWARGS_DESCRIPTION)
class SpeciesismBias(_DirectCompute, evaluate.Metric):
    def _info(self):
        if self.config_name not in ("default", *_FEATURES):
            raise ValueError(
                f"config_name: {self.config_name!r}; expected one of {sorted(_FEATURES)}"
            )
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=_FEATURES[self._config()],
            reference_urls=["https://doi.org/10.1016/j.ipm.2022.103050"],
        )

    def _config(self) -> str:
        return "change_rate" if self.config_name == "default" else self.config_name

    def _check_rows(self, columns: dict) -> None:
        for name, column in columns.items():
            if name == "probabilities":
                _probability_rows(column)
            elif name in ("forms", "animals"):
                _names(column, name)
            elif name in ("labels", "labels_b"):
                _choice(column, name, list(_LABELS), "label")
            elif name in ("target_probabilities", "prior_probabilities"):
                _numbers(column, name)

    def _compute_function(self):
        return getattr(self, f"_compute_{self._config()}")

    def _compute(self, **kwargs):
        return self._compute_function()(**kwargs)

    def _compute_change_rate(
        self,
        probabilities,
        forms,
        vocabulary=None,
        from_form="human",
        to_form="object",
        top_k=15,
        candidates=None,
        templates=None,
        confidence_level=None,
        n_resamples=2000,
        seed=0,
    ):
        for name, value in (("from_form", from_form), ("to_form", to_form)):
            if not isinstance(value, str) or not _normalise(value):
                raise ValueError(f"{name}: expected a form name, got {value!r}")
        if _normalise(from_form).casefold() == _normalise(to_form).casefold():
            raise ValueError(f"from_form and to_form must differ; both are {from_form!r}")
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise ValueError(f"top_k: expected a positive integer; got {top_k!r}")
        options = _uncertainty(confidence_level, n_resamples, seed)
        if len(_column(forms, "forms")) == 0:
            raise ValueError("forms: empty; expected one form per row of probabilities")
        mean_from, mean_to, chance, rate_ft, rate_tf = change_rates(
            probabilities, forms, from_form, to_form
        )
        size = mean_from.shape[0]
        if vocabulary is None:
            vocabulary = [str(i) for i in range(size)]
        if len(_column(vocabulary, "vocabulary")) != size:
            raise ValueError(
                f"vocabulary: expected {size} items (one per column); got {len(vocabulary)}"
            )
        if candidates is None:
            eligible = np.ones(size, dtype=bool)
        else:
            flags = _column(candidates, "candidates")
            if len(flags) != size:
                raise ValueError(f"candidates: expected {size} booleans; got shape ({len(flags)},)")
            _refuse([not isinstance(f, (bool, np.bool_)) for f in flags], "candidates", flags, "True or False")
            eligible = np.asarray(flags, dtype=bool)
        labels = _choice(forms, "forms", [from_form, to_form], "form")
        clusters = None if templates is None else _cluster_codes(templates, "templates", labels.size)
        counts = {from_form: int((labels == 0).sum()), to_form: int((labels == 1).sum())}
        forward, backward = f"{from_form}_to_{to_form}", f"{to_form}_to_{from_form}"
        directions = {forward: (rate_ft, mean_from, mean_to), backward: (rate_tf, mean_to, mean_from)}
        result = {
            "vocabulary_size": size,
            "chance": chance,
            "n_rows": counts,
            "n_above_chance": {
                from_form: int(np.sum(mean_from > chance)),
                to_form: int(np.sum(mean_to > chance)),
            },
            **{
                name: _ranked(rates, start, end, vocabulary, eligible, top_k, drops=True)
                for name, (rates, start, end) in directions.items()
            },
            "gains": {
                name: _ranked(rates, start, end, vocabulary, eligible, top_k, drops=False)
                for name, (rates, start, end) in directions.items()
            },
        }
        if options is not None:
            listed, keys, backwards = [], [], []
            for prefix, lists in (("", result), ("gains.", result["gains"])):
                for name in (forward, backward):
                    for position, entry in enumerate(lists[name]):
                        listed.append(entry["index"])
                        keys.append(f"{prefix}{name}[{position}]")
                        backwards.append(name == backward)
            matrix = _probability_rows(probabilities)
            result["confidence_intervals"] = (
                _rate_intervals(matrix, labels, listed, keys, backwards, clusters, options) if listed else {}
            )
        return result

    def _compute_association(
        self,
        target_probabilities,
        prior_probabilities,
        groups=None,
        confidence_level=None,
        n_resamples=2000,
        seed=0,
    ):
        options = _uncertainty(confidence_level, n_resamples, seed)
        target = _numbers(target_probabilities, "target_probabilities")
        prior = _numbers(prior_probabilities, "prior_probabilities")
        if target.size == 0:
            raise ValueError("target_probabilities: empty; expected at least one pair")
        if prior.size != target.size:
            raise ValueError(
                f"prior_probabilities: expected {target.size} values, one per pair; got {prior.size}"
            )
        for name, values in (("target_probabilities", target), ("prior_probabilities", prior)):
            _refuse((values <= 0) | (values > 1), name, values, "a probability in (0, 1]; every value must lie in (0, 1]")
        association = np.log(target) - np.log(prior)
        result = {
            "association": association.tolist(),
            "mean_association": float(association.mean()),
        }
        index, names = np.zeros(association.size, dtype=np.int64), []
        if groups is not None:
            if len(_column(groups, "groups")) != association.size:
                raise ValueError(f"groups: expected {association.size} labels; got {len(groups)}")
            index, names = _names(groups, "groups")
            sums = np.bincount(index, weights=association, minlength=len(names))
            counts = np.bincount(index, minlength=len(names))
            result["by_group"] = {
                g: {"mean": float(s / n), "n": int(n)}
                for g, s, n in zip(names, sums, counts, strict=True)
            }
        if options is not None:
            width = max(len(names), 1)
            units = np.zeros((association.size, 2 * width))
            units[np.arange(association.size), 2 * index] = association
            units[np.arange(association.size), 2 * index + 1] = 1.0

            def score(totals):
                overall = totals[0::2].sum(axis=0) / totals[1::2].sum(axis=0)
                return np.concatenate([overall[None], totals[0::2] / totals[1::2]] if names else [overall[None]])

            keys = ["mean_association"] + [f"by_group.{g}.mean" for g in names]
            result["confidence_intervals"] = dict(zip(keys, _sum_intervals([units], score, options, "pairs"), strict=True))
        return result

    def _compute_negative_share(
        self,
        animals,
        labels,
        templates=None,
        confidence_level=None,
        n_resamples=2000,
        seed=0,
    ):
        options = _uncertainty(confidence_level, n_resamples, seed)
        index, names, label, clusters = _judged_rows(animals, labels, templates)
        counts = np.bincount(index, minlength=len(names))
        result = {}
        for code, kind in enumerate(_LABELS):
            hits = np.bincount(index, weights=(label == code).astype(float), minlength=len(names))
            result[f"{kind}_share"] = {
                a: float(h / n) for a, h, n in zip(names, hits, counts, strict=True)
            }
        result["n"] = {a: int(n) for a, n in zip(names, counts, strict=True)}
        result["overall_negative_share"] = float(np.mean(label == 0))
        if options is not None:
            keys = ["overall_negative_share"] + [f"negative_share.{a}" for a in names]
            strata, unit = _strata(_share_units(index, label, len(names)), clusters, None, "fills")
            result["confidence_intervals"] = dict(zip(keys, _sum_intervals(strata, _shares, options, unit), strict=True))
        return result

    def _compute_negative_share_paired(
        self,
        animals,
        labels,
        labels_b,
        templates=None,
        confidence_level=0.95,
        n_resamples=2000,
        seed=0,
    ):
        options = _uncertainty(confidence_level, n_resamples, seed)
        if options is None:
            raise ValueError("confidence_level: the paired comparison reports intervals; give a level such as 0.95")
        index, names, label_a, clusters = _judged_rows(animals, labels, templates)
        if len(_column(labels_b, "labels_b")) != index.size:
            raise ValueError(f"labels_b: expected {index.size} labels, one per fill of labels; got {len(labels_b)}")
        label_b = _choice(labels_b, "labels_b", list(_LABELS), "label")
        keys = ["overall_negative_share"] + [f"negative_share.{a}" for a in names]
        (strata_a, unit), (strata_b, _) = (
            _strata(_share_units(index, label, len(names)), clusters, None, "fills") for label in (label_a, label_b)
        )
        if sum(len(units) for units in strata_a) < 2:
            raise ValueError(f"animals: a paired comparison needs at least 2 {unit} to swap; got 1")
        result = _paired_comparison(strata_a, strata_b, _shares, keys, options, unit)
        result["n"] = {a: int(n) for a, n in zip(names, np.bincount(index, minlength=len(names)), strict=True)}
        return result


def _judged_rows(animals, labels, templates):
    """Animal codes and names, label codes and template clusters (or None) of judged fills."""
    if len(_column(animals, "animals")) == 0:
        raise ValueError("animals: empty; there are no judged fills to count")
    if len(_column(labels, "labels")) != len(animals):
        raise ValueError(f"labels: expected {len(animals)} labels, one per fill; got {len(labels)}")
    index, names = _names(animals, "animals")
    label = _choice(labels, "labels", list(_LABELS), "label")
    clusters = None if templates is None else _cluster_codes(templates, "templates", index.size)
    return index, names, label, clusters


def _share_units(index: np.ndarray, label: np.ndarray, n_animals: int) -> np.ndarray:
    """Per fill: a 1 in its animal's negative column when judged negative, and in its count column."""
    units = np.zeros((index.size, 2 * n_animals))
    units[np.arange(index.size), 2 * index] = label == 0
    units[np.arange(index.size), 2 * index + 1] = 1.0
    return units


def _shares(totals):
    """The overall negative share, then one per animal, from (negatives, count) column totals."""
    overall = totals[0::2].sum(axis=0) / totals[1::2].sum(axis=0)
    return np.concatenate([overall[None], totals[0::2] / totals[1::2]])
