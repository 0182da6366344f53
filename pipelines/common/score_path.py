"""A metric's score path, declared as data: which columns feed which ``compute()`` argument.

``bias-hub score METRIC`` reads predictions made elsewhere (a file, or lm-evaluation-harness
logged samples), joins them to a built dataset on an id column and calls the metric module
with the arguments below. Each part declares the paths of the metrics it scores with, beside
its other files: ``pipelines/<part>/score_paths.py`` holds ``SCORE_PATHS``, a tuple of
``ScorePath``; ``score_paths()`` finds them all, as the CLI finds the parts' commands. A path
names

- ``dataset``/``config``: the dataset folder and config read by default (``--dataset``,
  ``--config`` override them), and ``id_columns``: the id column candidates, first found wins
  (``--id-column`` overrides); ``qualifier``: a column that makes the id unique where the
  dataset numbers rows within it (BBQ and JBBQ number ``example_id`` within each category);
- ``dataset_columns``: ``{compute argument: dataset column}``;
- ``predictions``: ``{compute argument: Column}``, the first being the one
  ``--prediction-column`` renames;
- ``fixed``: constant keyword arguments (a config's choice such as RNSB's orientation);
- ``per_test``: the word-set metrics (WEAT, RNSB): the predictions file holds word vectors
  (``words``/``vectors``), and each dataset row is one test whose sets feed ``target_sets``
  and ``attribute_sets``; the metric runs once per test.
"""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass, field
from functools import cache

__all__ = ["Column", "ScorePath", "score_path", "score_paths"]

# The value kinds a prediction column may hold.
KINDS = ("choice", "label", "number", "numbers", "clusters")


@dataclass(frozen=True)
class Column:
    """One prediction column.

    ``kind``: ``choice`` an answer index or an answer text, matched to ``choices`` (dataset
    columns of the row, e.g. BBQ's ans0..ans2) or ``names`` (fixed label names, e.g. NLI's);
    ``label`` a text passed as it is; ``number`` a float; ``numbers`` a list of floats;
    ``clusters`` coreference clusters (a list of lists of [start, end] spans, JSON text in CSV).
    ``required`` False: the argument is left out when the file lacks the column. For the
    answer reader, ``unknown`` names the dataset column holding the index of the row's
    "cannot be determined" option and ``short_forms`` the one holding BBQ's ``answer_info``.
    """

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

    found: dict[str, ScorePath] = {}
    for info in sorted(pkgutil.iter_modules(pipelines.__path__), key=lambda m: m.name):
        name = f"{pipelines.__name__}.{info.name}.score_paths"
        if not info.ispkg or importlib.util.find_spec(name) is None:
            continue
        for path in importlib.import_module(name).SCORE_PATHS:
            if path.metric in found:
                raise ValueError(f"{name}: metric {path.metric!r} has a score path already")
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
