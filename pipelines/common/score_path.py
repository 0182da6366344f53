"""A metric's score path, declared as data: which columns feed which ``compute()`` argument.

``bias-hub score METRIC`` joins predictions made elsewhere to a built dataset on an id column
and calls the metric module. Each part declares its paths in ``pipelines/<part>/score_paths.py``
(``SCORE_PATHS``); ``score_paths()`` finds them all. A ``ScorePath`` names the dataset and
config read by default; ``id_columns`` (first found wins) and ``qualifier`` (a column that makes
the id unique, as BBQ numbers ``example_id`` within each category); ``dataset_columns`` and
``predictions`` (``{compute argument: column}``, the first prediction the one
``--prediction-column`` renames); ``fixed`` keyword arguments; and ``per_test`` for the
word-set metrics (one dataset row per test, the predictions file holding word vectors).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache

__all__ = ["Column", "ScorePath", "score_path", "score_paths"]

# The value kinds a prediction column may hold.
KINDS = ("choice", "label", "number", "numbers", "clusters")


@dataclass(frozen=True)
class Column:
    """One prediction column. ``kind``: ``choice`` an answer index or text, matched to
    ``choices`` (dataset columns, e.g. BBQ's ans0..ans2) or ``names`` (fixed label names);
    ``label`` a text as it is; ``number``; ``numbers``; ``clusters`` (coreference spans, JSON
    text in CSV). ``required`` False: left out when the file lacks the column. ``unknown`` and
    ``short_forms``: the dataset columns the answer reader takes them from."""

    name: str
    kind: str
    choices: tuple[str, ...] = ()
    names: tuple[str, ...] = ()
    required: bool = True
    unknown: str | None = None
    short_forms: str | None = None


@dataclass(frozen=True)
class ScorePath:
    metric: str
    dataset: str
    config: str
    predictions: dict[str, Column]
    dataset_columns: dict[str, str] = field(default_factory=dict)
    id_columns: tuple[str, ...] = ("example_id", "id")
    qualifier: str | None = None
    config_name: str | None = None
    fixed: dict = field(default_factory=dict)
    # Several prediction rows may share an id (e.g. several judged fills of one sentence).
    many_per_id: bool = False
    per_test: bool = False
    # Which part of the result the report tabulates: the keys with a float value at this level.
    summary_keys: tuple[str, ...] = ()

    @property
    def main_prediction(self) -> str:
        return next(iter(self.predictions))


@cache
def score_paths() -> dict[str, ScorePath]:
    """``{metric: ScorePath}`` from every ``pipelines/<part>/score_paths.py``."""
    from bias_hub import pipelines
    from bias_hub.pipelines.discovery import submodules

    found: dict[str, ScorePath] = {}
    for module in submodules(pipelines, "score_paths"):
        for path in module.SCORE_PATHS:
            if path.metric in found:
                raise ValueError(
                    f"{module.__name__}: metric {path.metric!r} has a score path already"
                )
            found[path.metric] = path
    return found


def score_path(metric: str) -> ScorePath:
    """The declared path of ``metric``; a ValueError naming the known ones otherwise."""
    known = score_paths()
    if metric not in known:
        raise ValueError(
            f"METRIC {metric!r}: no score path; expected one of {', '.join(sorted(known))}"
        )
    return known[metric]
