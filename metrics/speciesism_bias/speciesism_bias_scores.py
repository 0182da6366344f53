"""Speciesism bias of a masked language model: probability change rates between
human-form and object-form templates, Kurita et al.'s log-probability
association, and the share of negative fills per animal.

The computation alone (no ``evaluate``, no ``datasets``): pipelines call it as it is, and
``speciesism_bias.py`` wraps it for ``evaluate.load``.
"""

import numpy as np

from .bias_hub_common import (
    Scores,
    as_column,
    as_names,
    as_numbers,
    cluster_codes,
    normalise_name,
    refuse_rows,
)
from .bias_hub_intervals import (
    paired_comparison,
    paired_uncertainty_options,
    sum_intervals,
    uncertainty_options,
    unit_strata,
)

_LABELS = ("negative", "neutral", "positive")


# Half-precision softmax outputs can exceed 1 by rounding; 1.25 is no rounding.
_ROUNDING = 1e-3


_COLUMNS = {
    "change_rate": {"probabilities": ["float64"], "forms": "string"},
    "association": {"target_probabilities": "float64", "prior_probabilities": "float64"},
    "negative_share": {"animals": "string", "labels": "string"},
    "negative_share_paired": {"animals": "string", "labels": "string", "labels_b": "string"},
}


def _choice(values, argument: str, allowed: list, what: str) -> np.ndarray:
    """Codes of a column whose names must be among ``allowed`` (compared normalised, in any case)."""
    codes, names = as_names(values, argument)
    position = {normalise_name(name).casefold(): code for code, name in enumerate(allowed)}
    mapped = np.array([position.get(name.casefold(), -1) for name in names], dtype=np.int64)
    if (mapped < 0).any():
        unknown = [name for name, code in zip(names, mapped, strict=True) if code < 0]
        row = int(np.flatnonzero(mapped[codes] < 0)[0])
        raise ValueError(
            f"{argument}: unknown {what}(s) {unknown} (first at row {row}); expected one of {allowed}"
        )
    return mapped[codes]


def _probability_rows(probabilities) -> np.ndarray:
    if isinstance(probabilities, (dict, str)):
        raise ValueError(
            f"probabilities: expected rows of probabilities, got {type(probabilities).__name__}"
        )
    try:
        matrix = np.asarray(probabilities, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(
            f"probabilities: expected rows of numbers of equal length ({err})"
        ) from None
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
    totals = matrix.sum(axis=1)
    if (totals > 1 + _ROUNDING).any():
        row = int(np.flatnonzero(totals > 1 + _ROUNDING)[0])
        raise ValueError(
            f"probabilities[{row}] sums to {float(totals[row])!r}; a row is one distribution over the "
            "vocabulary at the mask, so it sums to at most 1"
        )
    return matrix


def _vocabulary(vocabulary, size: int) -> list[str]:
    """The item names: one non-empty string per column, each once (a table lists a name once)."""
    items = list(as_column(vocabulary, "vocabulary"))
    if len(items) != size:
        raise ValueError(f"vocabulary: expected {size} items (one per column); got {len(items)}")
    first = {}
    for column, item in enumerate(items):
        if not isinstance(item, str) or not item.strip():
            raise ValueError(
                f"vocabulary[{column}] is {item!r}; expected the item's name, a non-empty string"
            )
        if item in first:
            raise ValueError(
                f"vocabulary[{column}] is {item!r}, as vocabulary[{first[item]}]; each item needs its own "
                "name (a tokenizer's token strings are unique)"
            )
        first[item] = column
    return items


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


def _eligible(candidates, size: int) -> np.ndarray:
    """Which items a table may list: all, or the ``candidates`` flags (booleans, one per column)."""
    if candidates is None:
        return np.ones(size, dtype=bool)
    flags = as_column(candidates, "candidates")
    if len(flags) != size:
        raise ValueError(f"candidates: expected {size} booleans; got shape ({len(flags)},)")
    refuse_rows(
        [not isinstance(f, (bool, np.bool_)) for f in flags], "candidates", flags, "True or False"
    )
    return np.asarray(flags, dtype=bool)


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


def _listed_intervals(
    result: dict, names: tuple[str, str], matrix, forms, clusters, options
) -> dict:
    """The intervals of every listed item's change rate, keyed ``<direction>[i]`` and
    ``gains.<direction>[i]``: each rate is a function of the per-form sums of its item's
    probability and of the per-form row counts (backward: from the second form)."""
    forward, backward_name = names
    listed, keys, backwards = [], [], []
    for prefix, lists in (("", result), ("gains.", result["gains"])):
        for name in (forward, backward_name):
            for position, entry in enumerate(lists[name]):
                listed.append(entry["index"])
                keys.append(f"{prefix}{name}[{position}]")
                backwards.append(name == backward_name)
    if not listed:
        return {}
    is_from = (forms == 0).astype(np.float64)[:, None]
    is_to = (forms == 1).astype(np.float64)[:, None]
    picked = matrix[:, np.asarray(listed, dtype=np.int64)]
    units = np.hstack([is_from, is_to, picked * is_from, picked * is_to])
    size = len(listed)
    backward = np.asarray(backwards, dtype=bool)

    def score(totals):
        mean_from = totals[2 : 2 + size] / totals[0]
        mean_to = totals[2 + size :] / totals[1]
        return np.where(
            backward.reshape((-1,) + (1,) * (totals.ndim - 1)),
            (mean_from - mean_to) / mean_to,
            (mean_to - mean_from) / mean_from,
        )

    strata, unit = unit_strata(units, clusters, forms, "sentences")
    return dict(zip(keys, sum_intervals(strata, score, options, unit), strict=True))


def _judged_rows(animals, labels, templates):
    """Animal codes and names, label codes and template clusters (or None) of judged fills."""
    if len(as_column(animals, "animals")) == 0:
        raise ValueError("animals: empty; there are no judged fills to count")
    if len(as_column(labels, "labels")) != len(animals):
        raise ValueError(f"labels: expected {len(animals)} labels, one per fill; got {len(labels)}")
    index, names = as_names(animals, "animals")
    label = _choice(labels, "labels", list(_LABELS), "label")
    clusters = None if templates is None else cluster_codes(templates, "templates", index.size)
    return index, names, label, clusters


def _ratio_units(index: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Per row: its value in its group's value column, and a 1 in the group's count column."""
    units = np.zeros((index.size, 2 * n_groups))
    units[np.arange(index.size), 2 * index] = values
    units[np.arange(index.size), 2 * index + 1] = 1.0
    return units


def _ratios(totals):
    """The overall mean, then one per group, from (value, count) column totals: with a fill's
    value 1 when judged negative, the negative shares."""
    overall = totals[0::2].sum(axis=0) / totals[1::2].sum(axis=0)
    return np.concatenate([overall[None], totals[0::2] / totals[1::2]])


class SpeciesismBiasScores(Scores):
    name = "speciesism_bias"
    configs = tuple(_COLUMNS)
    default_config = "change_rate"

    def columns(self) -> dict:
        return _COLUMNS[self.config]

    def check_rows(self, columns: dict) -> None:
        for name, column in columns.items():
            if name == "probabilities":
                _probability_rows(column)
            elif name in ("forms", "animals"):
                as_names(column, name)
            elif name in ("labels", "labels_b"):
                _choice(column, name, list(_LABELS), "label")
            elif name in ("target_probabilities", "prior_probabilities"):
                as_numbers(column, name)

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
            if not isinstance(value, str) or not normalise_name(value):
                raise ValueError(f"{name}: expected a form name, got {value!r}")
        if normalise_name(from_form).casefold() == normalise_name(to_form).casefold():
            raise ValueError(f"from_form and to_form must differ; both are {from_form!r}")
        if isinstance(top_k, bool) or not isinstance(top_k, (int, np.integer)) or top_k < 1:
            raise ValueError(f"top_k: expected a positive integer; got {top_k!r}")
        options = uncertainty_options(confidence_level, n_resamples, seed)
        if len(as_column(forms, "forms")) == 0:
            raise ValueError("forms: empty; expected one form per row of probabilities")
        mean_from, mean_to, chance, rate_ft, rate_tf = change_rates(
            probabilities, forms, from_form, to_form
        )
        size = mean_from.shape[0]
        vocabulary = (
            [str(i) for i in range(size)] if vocabulary is None else _vocabulary(vocabulary, size)
        )
        eligible = _eligible(candidates, size)
        labels = _choice(forms, "forms", [from_form, to_form], "form")
        clusters = None if templates is None else cluster_codes(templates, "templates", labels.size)
        forward, backward = f"{from_form}_to_{to_form}", f"{to_form}_to_{from_form}"
        directions = {
            forward: (rate_ft, mean_from, mean_to),
            backward: (rate_tf, mean_to, mean_from),
        }
        result = {
            "vocabulary_size": size,
            "chance": chance,
            "n_rows": {from_form: int((labels == 0).sum()), to_form: int((labels == 1).sum())},
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
            result["confidence_intervals"] = _listed_intervals(
                result,
                (forward, backward),
                _probability_rows(probabilities),
                labels,
                clusters,
                options,
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
        options = uncertainty_options(confidence_level, n_resamples, seed)
        target = as_numbers(target_probabilities, "target_probabilities")
        prior = as_numbers(prior_probabilities, "prior_probabilities")
        if target.size == 0:
            raise ValueError("target_probabilities: empty; expected at least one pair")
        if prior.size != target.size:
            raise ValueError(
                f"prior_probabilities: expected {target.size} values, one per pair; got {prior.size}"
            )
        for name, values in (("target_probabilities", target), ("prior_probabilities", prior)):
            refuse_rows(
                (values <= 0) | (values > 1),
                name,
                values,
                "a probability in (0, 1]; every value must lie in (0, 1]",
            )
        association = np.log(target) - np.log(prior)
        result = {
            "association": association.tolist(),
            "mean_association": float(association.mean()),
        }
        index, names = np.zeros(association.size, dtype=np.int64), []
        if groups is not None:
            if len(as_column(groups, "groups")) != association.size:
                raise ValueError(f"groups: expected {association.size} labels; got {len(groups)}")
            index, names = as_names(groups, "groups")
            sums = np.bincount(index, weights=association, minlength=len(names))
            counts = np.bincount(index, minlength=len(names))
            result["by_group"] = {
                g: {"mean": float(s / n), "n": int(n)}
                for g, s, n in zip(names, sums, counts, strict=True)
            }
        if options is not None:
            units = _ratio_units(index, association, max(len(names), 1))
            keys = ["mean_association"] + [f"by_group.{g}.mean" for g in names]
            # Without groups every pair is in one group, whose mean is the overall one: its
            # interval (the same) is not reported twice.
            intervals = sum_intervals([units], _ratios, options, "pairs")[: len(keys)]
            result["confidence_intervals"] = dict(zip(keys, intervals, strict=True))
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
        options = uncertainty_options(confidence_level, n_resamples, seed)
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
            strata, unit = unit_strata(
                _ratio_units(index, label == 0, len(names)), clusters, None, "fills"
            )
            result["confidence_intervals"] = dict(
                zip(keys, sum_intervals(strata, _ratios, options, unit), strict=True)
            )
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
        options = paired_uncertainty_options(confidence_level, n_resamples, seed)
        index, names, label_a, clusters = _judged_rows(animals, labels, templates)
        if len(as_column(labels_b, "labels_b")) != index.size:
            raise ValueError(
                f"labels_b: expected {index.size} labels, one per fill of labels; got {len(labels_b)}"
            )
        label_b = _choice(labels_b, "labels_b", list(_LABELS), "label")
        keys = ["overall_negative_share"] + [f"negative_share.{a}" for a in names]
        (strata_a, unit), (strata_b, _) = (
            unit_strata(_ratio_units(index, label == 0, len(names)), clusters, None, "fills")
            for label in (label_a, label_b)
        )
        if sum(len(units) for units in strata_a) < 2:
            raise ValueError(f"animals: a paired comparison needs at least 2 {unit} to swap; got 1")
        result = paired_comparison(strata_a, strata_b, _ratios, keys, options, unit)
        result["n"] = {
            a: int(n) for a, n in zip(names, np.bincount(index, minlength=len(names)), strict=True)
        }
        return result
