"""Helpers every bias-hub metric module shares: the computation's base (``Scores``), input
checks and the direct compute path (the intervals are in ``bias_hub_intervals.py``).

Each module is published alone (one Hub Space) and ``evaluate`` copies a module's same-folder
imports with it, so each module folder holds this file as a link to
``metrics/_common/bias_hub_common.py`` (the one copy we edit) and the publisher uploads the
file itself. Only libraries every module's requirements.txt lists are imported here.
"""

from __future__ import annotations

import inspect
import unicodedata
from collections.abc import Callable

import numpy as np


class Scores:
    """A metric's computation without ``evaluate`` or ``datasets``: one subclass per module,
    in the module's ``<name>_scores.py``, used as it is by pipelines and by the evaluate class
    (``DirectCompute``) alike, so the checks below live once.

    A subclass sets ``name`` and ``configs`` and gives ``columns()`` (the input columns of its
    config, as a spec that ``features`` turns into ``datasets.Features``), ``check_rows`` and
    the compute method of each config (``compute_function``).
    """

    name: str = ""
    configs: tuple[str, ...] = ("default",)
    # The config "default" stands for (a module whose configs all have their own names).
    default_config: str = "default"

    def __init__(self, config_name: str | None = None) -> None:
        self.config_name = config_name or "default"
        if self.config_name not in ("default", *self.configs):
            if len(self.configs) == 2:
                expected = " or ".join(repr(config) for config in self.configs)
            else:
                expected = f"one of {sorted(self.configs)}"
            raise ValueError(f"config_name: {self.config_name!r}; expected {expected}")
        self.config = self.default_config if self.config_name == "default" else self.config_name

    def columns(self) -> dict | list[dict]:
        """{column: type} of this config: ``"int64"``, ``"float64"``, ``"string"``, or
        ``[type]`` for a list per row; a list of such dicts where several formats fit."""
        raise NotImplementedError

    def check_rows(self, columns: dict) -> None:
        """Refuse, by argument and row, a value the computation cannot take."""

    def compute_function(self) -> Callable[..., dict]:
        """The compute method of this config: ``_compute_<config>`` in a module with several
        (``_compute_default`` for "default"), else ``_compute``."""
        return getattr(self, f"_compute_{self.config}", self._compute)

    def _compute(self, **kwargs) -> dict:
        """The computation of a module with one config."""
        raise NotImplementedError

    def arguments(self) -> tuple[set, list]:
        """The arguments this config takes and those it needs."""
        parameters = inspect.signature(self.compute_function()).parameters.values()
        named = [p for p in parameters if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)]
        required = [p.name for p in named if p.default is p.empty]
        columns = {name for spec in _alternatives(self.columns()) for name in spec}
        return columns | {p.name for p in named}, required

    def refuse_unknown(self, given: dict) -> None:
        accepted, _ = self.arguments()
        unknown = sorted(set(given) - accepted)
        if unknown:
            raise ValueError(
                f"{self.name}: unknown argument(s) {unknown}; it takes {sorted(accepted)}"
            )

    def refuse_missing(self, given: dict) -> None:
        missing = [name for name in self.arguments()[1] if name not in given]
        if missing:
            raise ValueError(f"{self.name}: missing argument(s) {missing}")

    def compute(self, **kwargs) -> dict:
        """The scores of the rows given (an argument given as None counts as not given)."""
        given = {name: value for name, value in kwargs.items() if value is not None}
        self.refuse_unknown(given)
        self.refuse_missing(given)
        return self.compute_function()(**given)


def _alternatives(specs: dict | list[dict]) -> list[dict]:
    return specs if isinstance(specs, list) else [specs]


def features(specs: dict | list[dict]):
    """``datasets.Features`` of a ``Scores.columns()`` spec (a list of them for a list)."""
    import datasets

    def feature(kind):
        if isinstance(kind, list):
            (inner,) = kind
            return datasets.Sequence(feature(inner))
        return datasets.Value(kind)

    built = [
        datasets.Features({name: feature(kind) for name, kind in spec.items()})
        for spec in _alternatives(specs)
    ]
    return built if isinstance(specs, list) else built[0]


class DirectCompute:
    """The evaluate class of a module: ``compute`` straight to its ``Scores`` when evaluate's
    Arrow cache would add nothing.

    evaluate encodes every value through ``datasets`` features before ``_compute`` sees it
    (97 % of the time at 10^6 rows) and casts what it can on the way (1.7 -> 1, True -> 1).
    With one process and nothing stored by ``add``/``add_batch`` that round trip only copies
    the inputs, so they go to the computation as given; otherwise evaluate gathers the stored
    batches as usual. Rows are checked before evaluate stores them, and arguments the module
    does not take are refused by name.
    """

    scores_class: type[Scores] = Scores
    # The module's _DESCRIPTION, _KWARGS_DESCRIPTION and _CITATION, and its papers' addresses.
    card: tuple[str, str, str] = ("", "", "")
    papers: tuple[str, ...] = ()

    @property
    def scores(self) -> Scores:
        """This config's computation (made once; ``_info`` makes it first, checking the config)."""
        made = self.__dict__.get("_scores")
        if made is None:
            made = self.__dict__["_scores"] = self.scores_class(self.config_name)
        return made

    def _info(self):
        """evaluate's MetricInfo (MeasurementInfo for a measurement) of the card and this
        config's input features."""
        import evaluate

        description, inputs_description, citation = self.card
        info = evaluate.MeasurementInfo
        if not isinstance(self, evaluate.Measurement):
            info = evaluate.MetricInfo
        return info(
            description=description,
            citation=citation,
            inputs_description=inputs_description,
            features=features(self.scores.columns()),
            reference_urls=list(self.papers),
        )

    def _check_rows(self, columns: dict) -> None:
        self.scores.check_rows(columns)

    def _compute(self, **kwargs):
        return self.scores.compute_function()(**kwargs)

    def compute(self, *, predictions=None, references=None, **kwargs):
        """Compute the scores from the rows given here and any added before."""
        given = {"predictions": predictions, "references": references, **kwargs}
        given = {name: value for name, value in given.items() if value is not None}
        self.scores.refuse_unknown(given)
        if self.num_process > 1 or self.writer is not None:
            return super().compute(predictions=predictions, references=references, **kwargs)
        self.scores.refuse_missing(given)
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


def as_column(values, argument: str):
    """One value per row: a list, a tuple or a 1-d array (never a dict, a string or a scalar)."""
    if values is None:
        raise ValueError(f"{argument} is required")
    if isinstance(values, (list, tuple)):
        return values
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise ValueError(
            f"{argument} must be a list with one value per row, got {type(values).__name__}"
        )
    array = np.asarray(values)
    if array.ndim != 1:
        raise ValueError(
            f"{argument} must be a list with one value per row, got shape {array.shape}"
        )
    return array


def refuse_rows(bad, argument: str, values, expected: str) -> None:
    """ValueError naming the first flagged row of ``argument`` and what it should be."""
    rows = np.flatnonzero(bad)
    if rows.size:
        row = int(rows[0])
        value = values[row].item() if isinstance(values[row], np.generic) else values[row]
        raise ValueError(f"{argument}[{row}] is {value!r}; expected {expected}")


def normalise_name(text: str) -> str:
    """The one spelling of a name: Unicode NFKC, no surrounding or repeated whitespace."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


NOT_A_LABEL = -(2**62)


def label_code(value, names: dict) -> int:
    if isinstance(value, (bool, np.bool_)):
        return NOT_A_LABEL
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)) and np.isfinite(value) and float(value).is_integer():
        return int(value)
    if isinstance(value, str):
        return names.get(normalise_name(value).casefold(), NOT_A_LABEL)
    return NOT_A_LABEL


def as_labels(values, argument: str, low: int, high: int, names: dict | None = None) -> np.ndarray:
    """Integer labels from ids (whole numbers) or names; a float with a fraction, a bool, NaN,
    None or a dict is refused with its row.

    ``names`` maps a name's normalised lower-case spelling to its id.
    """
    column = as_column(values, argument)
    names = names or {}
    expected = f"an integer from {low} to {high}" + (f" or one of {sorted(names)}" if names else "")
    if isinstance(column, np.ndarray) and column.dtype.kind in "iu":
        codes = column.astype(np.int64)
    elif isinstance(column, np.ndarray) and column.dtype.kind == "f":
        refuse_rows(~np.isfinite(column) | (column != np.round(column)), argument, column, expected)
        codes = column.astype(np.int64)
    else:
        items = column.tolist() if isinstance(column, np.ndarray) else column
        kinds = set(map(type, items))
        if kinds <= {int}:
            codes = np.array(items, dtype=np.int64)
        elif kinds <= {str}:
            code_of = {v: label_code(v, names) for v in dict.fromkeys(items)}
            codes = np.fromiter(map(code_of.__getitem__, items), dtype=np.int64, count=len(items))
        else:
            codes = np.fromiter(
                (label_code(v, names) for v in items), dtype=np.int64, count=len(items)
            )
    refuse_rows((codes < low) | (codes > high), argument, column, expected)
    return codes


def as_names(values, argument: str, vocabulary: dict | None = None) -> tuple[np.ndarray, list]:
    """Codes of a column of names and the names they stand for, each name normalised.

    Without ``vocabulary`` every non-empty string is a name (in sorted order); with one (a
    name's normalised lower-case spelling -> its code) only those are accepted.
    """
    column = as_column(values, argument)
    items = column.tolist() if isinstance(column, np.ndarray) else column
    expected = f"one of {sorted(vocabulary)}" if vocabulary else "a non-empty string"
    try:
        distinct = list(dict.fromkeys(items))
    except TypeError:
        distinct = None
    if distinct is None or not all(isinstance(v, str) and normalise_name(v) for v in distinct):
        refuse_rows(
            [not (isinstance(v, str) and normalise_name(v)) for v in items],
            argument,
            items,
            expected,
        )
    if vocabulary is None:
        names = sorted({normalise_name(v) for v in distinct})
        position = {name: code for code, name in enumerate(names)}
        code_of = {v: position[normalise_name(v)] for v in distinct}
    else:
        names = None
        code_of = {v: vocabulary.get(normalise_name(v).casefold(), -1) for v in distinct}
        if min(code_of.values(), default=0) < 0:
            refuse_rows([code_of[v] < 0 for v in items], argument, items, expected)
    return np.fromiter(map(code_of.__getitem__, items), dtype=np.int64, count=len(items)), names


def cluster_codes(values, argument: str, n_rows: int) -> np.ndarray:
    """One code per row for ids (whole numbers or strings) that group rows into clusters."""
    column = as_column(values, argument)
    if len(column) != n_rows:
        raise ValueError(f"{argument} has {len(column)} entries, expected one per row ({n_rows})")
    items = column.tolist() if isinstance(column, np.ndarray) else column
    ids = [
        label_code(v, {}) if not isinstance(v, str) else (normalise_name(v) or NOT_A_LABEL)
        for v in items
    ]
    refuse_rows(
        [i == NOT_A_LABEL for i in ids], argument, items, "a template id (an integer or a string)"
    )
    position: dict = {}
    return np.fromiter(
        (position.setdefault(i, len(position)) for i in ids), dtype=np.int64, count=n_rows
    )


def as_numbers(values, argument: str) -> np.ndarray:
    """Finite numbers, one per row (a bool, a string, None or NaN is refused with its row)."""
    column = as_column(values, argument)
    items = column.tolist() if isinstance(column, np.ndarray) else column
    numeric = (int, float, np.integer, np.floating)
    if isinstance(column, np.ndarray) and column.dtype.kind in "iuf":
        array = column.astype(np.float64)
    else:
        kinds = set(map(type, items))
        if not all(
            issubclass(kind, numeric) and not issubclass(kind, (bool, np.bool_)) for kind in kinds
        ):
            refuse_rows(
                [isinstance(v, (bool, np.bool_)) or not isinstance(v, numeric) for v in items],
                argument,
                items,
                "a number",
            )
        array = np.asarray(items, dtype=np.float64)
    refuse_rows(~np.isfinite(array), argument, items, "a finite number")
    return array


def named_sets(value, argument: str, count: int | None) -> dict:
    """Named word sets ({name: [words]}): each non-empty, no word twice among them."""
    if not isinstance(value, dict):
        raise ValueError(
            f"{argument} must be a dict of set name -> list of words, got {type(value).__name__}"
        )
    if (count is not None and len(value) != count) or not value:
        expected = f"exactly {count}" if count is not None else "at least one"
        raise ValueError(
            f"{argument} must hold {expected} named sets, got {len(value)}: {list(value)}"
        )
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
                raise ValueError(
                    f"{argument}[{name!r}] lists {word!r} {where}; a word may appear once"
                )
            seen[word] = str(name)
        sets[str(name)] = [str(word) for word in words]
    return sets


def vector_table(words, vectors, allow_zero: bool) -> tuple[dict, np.ndarray]:
    """{word: its row} and the vectors as a float matrix, checked (a word given twice is refused)."""
    if words is None or vectors is None:
        raise ValueError("words and vectors are required (the vectors of the sets' words)")
    words = as_column(words, "words")
    words = words.tolist() if isinstance(words, np.ndarray) else list(words)
    refuse_rows([not isinstance(word, str) for word in words], "words", words, "a word (a string)")
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
        raise ValueError(
            f"vectors hold NaN or infinite values for the words {[w for w, b in zip(words, bad, strict=True) if b]}"
        )
    zero = ~np.any(matrix, axis=1)
    if zero.any() and not allow_zero:
        raise ValueError(
            f"vectors are all zero (no direction) for the words {[w for w, z in zip(words, zero, strict=True) if z]}"
        )
    index = {}
    for row, word in enumerate(words):
        if word in index:
            raise ValueError(
                f"words[{row}] is {word!r} again (first at words[{index[word]}]); "
                "give each word one vector"
            )
        index[word] = row
    return index, matrix


def disjoint_sets(targets: dict, attributes: dict) -> None:
    """No word both among the target sets and among the attribute sets: a target word scored
    against itself has cosine 1 (WEAT) or is scored by a classifier trained on it (RNSB)."""
    owner = {word: name for name, words in targets.items() for word in words}
    for name, words in attributes.items():
        for word in words:
            if word in owner:
                raise ValueError(
                    f"attribute_sets[{name!r}] lists {word!r}, which target_sets[{owner[word]!r}] "
                    "lists too; a word may appear in one set only"
                )


def lookup_sets(sets: dict, argument: str, index: dict, max_oov_share: float) -> tuple[dict, dict]:
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
