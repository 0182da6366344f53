"""``bias-hub score METRIC``: a metric module on predictions made elsewhere.

``run(predictions, dataset, out_dir, settings)`` has the shape of every part's ``run``, with
the predictions file in the model's place (the predictions are what the model made):
``predictions`` is a JSON lines, CSV or Parquet file, or, with ``settings.from_lm_eval``,
None. It joins the prediction rows to the dataset's rows on the id column, feeds the columns
the metric's score path declares (``pipelines/score/paths.py``) to the metric module, loaded
with ``evaluate.load`` as a user would, and writes ``results.json`` and ``report.md``
through one ``RunFolder``.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bias_hub.builders.shared.files import to_jsonable
from bias_hub.pipelines.common import RunFolder, dataset_folder, load_metric
from bias_hub.pipelines.common.run_folder import refuse_losing_files_it_did_not_write
from bias_hub.pipelines.score import coverage as coverage_check
from bias_hub.pipelines.score.guards import (
    refuse_a_folder_of_another_kind,
    refuse_a_join_of_other_texts,
    refuse_another_command_s_run,
    refuse_inputs_inside_out,
)
from bias_hub.pipelines.score.paths import Column, ScorePath, score_path
from bias_hub.pipelines.score.predictions import (
    read_lm_eval_samples,
    read_predictions,
    to_choice,
    to_value,
)
from bias_hub.pipelines.score.settings import Settings
from bias_hub.pipelines.score.values import describe, refuse_unknown_labels, unmatched_values

__all__ = ["join", "load_rows", "metric_inputs", "run"]

log = logging.getLogger(__name__)
_SHOWN = 5  # ids named in an error


def _source(predictions: str | Path | None, settings: Settings) -> tuple[list[dict], dict]:
    given = [
        flag
        for flag, value in (
            ("--predictions", predictions),
            ("--from-lm-eval", settings.from_lm_eval),
        )
        if value
    ]
    if len(given) != 1:
        raise ValueError(
            "give either --predictions FILE or --from-lm-eval SAMPLES.jsonl (exactly one)"
        )
    if settings.from_lm_eval:
        rows = read_lm_eval_samples(settings.from_lm_eval)
        return rows, {
            "file": str(settings.from_lm_eval),
            "format": "lm-eval samples",
            "rows": len(rows),
        }
    rows, kind = read_predictions(predictions)
    return rows, {"file": str(predictions), "format": kind, "rows": len(rows)}


def load_rows(folder: Path, config: str, split: str | None) -> tuple[list[dict], list[str]]:
    """The config's rows (every split when ``split`` is None) and the splits read."""
    import datasets

    from bias_hub.pipelines.common import load_dataset_split

    if split is not None:
        return [dict(row) for row in load_dataset_split(folder, config, split)], [split]
    loaded = load_dataset_split(folder, config, None)
    if isinstance(loaded, datasets.Dataset):
        return [dict(row) for row in loaded], ["(single)"]
    names = list(loaded)
    return [dict(row) for name in names for row in loaded[name]], names


def _docs_suffice(rows: list[dict], path: ScorePath) -> bool:
    """Whether every sample's doc holds the dataset columns and answer choices the path reads."""
    needed = set(path.dataset_columns.values()) | {
        c for column in path.predictions.values() for c in column.choices
    }
    return not path.per_test and all(needed <= set(row) for row in rows)


def _id_column(path: ScorePath, settings: Settings, dataset_columns: set[str], where: str) -> str:
    if settings.id_column:
        if settings.id_column not in dataset_columns:
            raise ValueError(
                f"--id-column {settings.id_column!r}: not a column of {where}; its columns: {sorted(dataset_columns)}"
            )
        return settings.id_column
    for name in path.id_columns:
        if name in dataset_columns:
            return name
    raise ValueError(
        f"{where} has none of the id columns {list(path.id_columns)}; name one with --id-column"
    )


def _key(row: dict, id_column: str, qualifier: str | None):
    return (row[qualifier], str(row[id_column])) if qualifier else str(row[id_column])


def join(
    predictions: list[dict],
    rows: list[dict],
    path: ScorePath,
    id_column: str,
    source: str,
    rows_name: str = "dataset",
) -> tuple[list, dict]:
    """``[(prediction row, dataset row)]`` on the id (qualified by ``path.qualifier`` where the
    dataset's ids repeat, e.g. BBQ's example_id within each category), and the join's counts.
    Every prediction must join; dataset rows without a prediction are counted, not an error."""
    if not predictions:
        raise ValueError(f"{source}: no prediction rows")
    missing = [i for i, row in enumerate(predictions) if id_column not in row]
    if missing:
        raise ValueError(
            f"{source}: row {missing[0] + 1} has no id column {id_column!r} ({len(missing)} rows lack it); "
            f"its columns: {sorted(predictions[missing[0]])}; name the id column with --id-column"
        )
    ids = Counter(str(row[id_column]) for row in rows)
    qualifier = path.qualifier if path.qualifier and any(n > 1 for n in ids.values()) else None
    if qualifier and any(qualifier not in row for row in predictions):
        raise ValueError(
            f"{source}: the dataset's {id_column!r} repeats across {qualifier!r} values, so every prediction "
            f"row needs a {qualifier!r} column too"
        )
    index: dict = {}
    for row in rows:
        key = _key(row, id_column, qualifier)
        if key in index:
            raise ValueError(
                f"{rows_name}: id {key!r} appears twice; name a unique id column with --id-column"
            )
        index[key] = row
    pairs, unjoined = [], []
    for row in predictions:
        key = _key(row, id_column, qualifier)
        if key in index:
            pairs.append((row, index[key]))
        else:
            unjoined.append(key)
    if unjoined:
        shown = ", ".join(repr(k) for k in unjoined[:_SHOWN])
        raise ValueError(
            f"{source}: {len(unjoined)} of {len(predictions)} prediction ids do not join the dataset on "
            f"{id_column!r}{f' within {qualifier!r}' if qualifier else ''} (e.g. {shown}); check --dataset, "
            "--config, --split and --id-column"
        )
    keys = Counter(_key(row, id_column, qualifier) for row, _ in pairs)
    repeated = [key for key, n in keys.items() if n > 1]
    if repeated and not path.many_per_id:
        raise ValueError(
            f"{source}: {len(repeated)} ids have more than one prediction row (e.g. {repeated[0]!r})"
        )
    counts = {
        "id_column": id_column,
        "qualified_by": qualifier,
        "prediction_rows": len(predictions),
        "joined": len(pairs),
        "dataset_rows": len(rows),
        "dataset_rows_without_prediction": len(index) - len(keys),
    }
    return pairs, counts


def _columns(path: ScorePath, settings: Settings) -> dict[str, Column]:
    """The prediction columns, with ``--prediction-column`` and ``--column ARG=COLUMN`` applied."""
    columns = dict(path.predictions)
    if settings.prediction_column:
        main = path.main_prediction
        columns[main] = Column(
            settings.prediction_column,
            columns[main].kind,
            columns[main].choices,
            columns[main].names,
            columns[main].required,
        )
    for item in settings.columns or []:
        argument, sep, column = item.partition("=")
        if not sep or argument not in columns or not column:
            raise ValueError(
                f"--column {item!r}: expected ARG=COLUMN with ARG one of {', '.join(columns)} (the prediction "
                f"arguments of {path.metric})"
            )
        old = columns[argument]
        columns[argument] = Column(column, old.kind, old.choices, old.names, old.required)
    return columns


def metric_inputs(
    pairs: Sequence[tuple[dict, dict]], path: ScorePath, columns: dict[str, Column], source: str
) -> tuple[dict, dict]:
    """The compute() arguments from the joined rows, and how the predictions were read
    (texts matched, unmatched)."""
    first = pairs[0][0]
    inputs: dict = {}
    reading: dict = {}
    for argument, column in columns.items():
        if column.name not in first:
            if not column.required:
                continue
            raise ValueError(
                f"{source}: no prediction column {column.name!r} (for {path.metric}'s {argument}); its columns: "
                f"{sorted(first)}; name it with --prediction-column or --column {argument}=COLUMN"
            )
        values = []
        matched_texts = unmatched = 0
        for number, (row, data) in enumerate(pairs, start=1):
            where = f"{source}, row {number}, column {column.name!r}"
            if column.name not in row:
                raise ValueError(f"{where}: missing")
            value = row[column.name]
            if column.kind == "choice":
                answers = (
                    [data[name] for name in column.choices]
                    if column.choices
                    else list(column.names)
                )
                index, ok = to_choice(value, answers, where)
                is_text = isinstance(value, str) and not value.strip().lstrip("-").isdigit()
                matched_texts += ok and is_text
                unmatched += not ok
                values.append(index)
            else:
                values.append(to_value(value, column.kind, where))
        inputs[argument] = values
        if column.kind == "choice":
            reading[argument] = {
                "column": column.name,
                "texts_matched": matched_texts,
                "unmatched": unmatched,
            }
    for argument, name in path.dataset_columns.items():
        if name not in pairs[0][1]:
            raise ValueError(
                f"dataset: no column {name!r} (for {path.metric}'s {argument}); is it the right dataset?"
            )
        inputs[argument] = [data[name] for _, data in pairs]
    return inputs, reading


def _interval_options(settings: Settings) -> dict:
    options = settings.interval_options()
    return {
        key: value
        for key, value in options.items()
        if value is not None or key == "confidence_level"
    }


def _per_test(
    metric,
    pairs_rows: list[dict],
    rows: list[dict],
    path: ScorePath,
    columns: dict[str, Column],
    source: str,
    options: dict,
) -> dict:
    """WEAT and RNSB: the predictions are word vectors; each dataset row is one test."""
    inputs, _ = metric_inputs([(row, {}) for row in pairs_rows], path, columns, source)
    results = {}
    for test in rows:
        target = {
            test["target_x_name"]: list(test["target_x_words"]),
            test["target_y_name"]: list(test["target_y_words"]),
        }
        attribute = {
            test["attribute_a_name"]: list(test["attribute_a_words"]),
            test["attribute_b_name"]: list(test["attribute_b_words"]),
        }
        try:
            results[test["test_id"]] = metric.compute(
                **inputs, target_sets=target, attribute_sets=attribute, **path.fixed, **options
            )
        except ValueError as err:
            raise ValueError(f"{path.metric}, test {test['test_id']}: {err}") from None
    return results


def _coverage(
    pairs: list,
    rows: list[dict],
    joined: dict,
    dataset_path: Path | None,
    where: str,
    settings: Settings,
) -> coverage_check.Coverage:
    """What the predictions answer of what they should: an lm-eval task's questions (from the
    results file beside the samples), else the dataset's rows; unknown for samples scored
    from their docs alone without their results file."""
    if settings.from_lm_eval:
        task = coverage_check.lm_eval_coverage(Path(settings.from_lm_eval))
        if task is not None:
            return task
        if dataset_path is None:
            return coverage_check.unknown_coverage(Path(settings.from_lm_eval), len(pairs))
    id_column, qualifier = joined["id_column"], joined["qualified_by"]
    return coverage_check.dataset_coverage(
        [data for _, data in pairs], rows, lambda row: _key(row, id_column, qualifier), where
    )


def _name_unmatched(pairs: list, columns: dict[str, Column], reading: dict, source: str) -> None:
    """Values that matched no answer, as written: refused in a fixed label set, else recorded."""
    for argument, counts in reading.items():
        if not counts["unmatched"]:
            continue
        found = unmatched_values(pairs, columns[argument], source)
        refuse_unknown_labels(found, columns[argument], source)
        counts["unmatched_values"] = found[:_SHOWN]


def run(
    predictions: str | Path | None, dataset: str | Path | None, out_dir: Path, settings: Settings
) -> dict:
    """Score the predictions with ``settings.metric``; write the run folder; return results.json."""
    path = score_path(settings.metric)
    refuse_another_command_s_run(Path(out_dir))
    refuse_inputs_inside_out(
        Path(out_dir), {"--predictions": predictions, "--from-lm-eval": settings.from_lm_eval}
    )
    refuse_losing_files_it_did_not_write(out_dir, "a score run")
    folder = RunFolder(out_dir)
    with folder:
        rows_in, source_record = _source(predictions, settings)
        source = (
            f"--from-lm-eval {settings.from_lm_eval}"
            if settings.from_lm_eval
            else f"--predictions {predictions}"
        )
        if settings.from_lm_eval:
            coverage_check.repeated_samples(Path(settings.from_lm_eval))
        if dataset is None and settings.from_lm_eval and _docs_suffice(rows_in, path):
            # The tasks of `bias-hub export lm-eval` log every column the metric needs in each doc.
            dataset_path, config, rows, splits = None, None, rows_in, []
        else:
            dataset_path = dataset_folder(dataset or path.dataset, settings.datasets_root).resolve()
            config = settings.config or path.config
            refuse_a_folder_of_another_kind(dataset_path, config, path)
            rows, splits = load_rows(dataset_path, config, settings.split)
        where = (
            f"dataset {dataset_path} (config {config!r})"
            if dataset_path
            else f"the docs of {source}"
        )
        if not rows:
            raise ValueError(f"{where}: no rows")
        folder.record_inputs(
            datasets=[(dataset_path, config)] if dataset_path else [],
            files=[predictions or settings.from_lm_eval],
            settings=settings,
        )
        metric = load_metric(path.metric, settings.metrics_root, path.config_name)
        columns = _columns(path, settings)
        options = _interval_options(settings)
        if path.per_test:
            if settings.id_column or settings.prediction_column:
                log.info(
                    "%s: --id-column and --prediction-column do not apply (tests come from the dataset)",
                    path.metric,
                )
            result = _per_test(metric, rows_in, rows, path, columns, source, options)
            joined, reading, coverage = (
                {"tests": len(rows), "word_vectors": len(rows_in)},
                {},
                None,
            )
        else:
            id_column = _id_column(path, settings, set(rows[0]), where)
            pairs, joined = join(rows_in, rows, path, id_column, source, where)
            if dataset_path is not None:
                refuse_a_join_of_other_texts(pairs, source, where)
            inputs, reading = metric_inputs(pairs, path, columns, source)
            _name_unmatched(pairs, columns, reading, source)
            coverage = _coverage(pairs, rows, joined, dataset_path, where, settings)
            coverage_check.check(coverage, settings.allow_partial, source)
            result = metric.compute(**inputs, **path.fixed, **options)
        for counts in reading.values():
            if counts["unmatched"]:
                log.warning(
                    "%s: %d of %d predictions in %r matched no answer and count as unparsable "
                    "(-1): %s",
                    source,
                    counts["unmatched"],
                    joined["joined"],
                    counts["column"],
                    describe(counts.get("unmatched_values", [])),
                )
        results = to_jsonable(
            {
                "part": "score",
                "step": "score",
                "metric": path.metric,
                "config_name": path.config_name,
                "predictions": source_record,
                "dataset": {
                    "folder": str(dataset_path) if dataset_path else None,
                    "config": config,
                    "splits": splits,
                },
                "join": joined,
                "coverage": coverage.record() if coverage else None,
                "reading": reading,
                "columns": {a: c.name for a, c in columns.items()},
                "intervals": settings.interval_record(),
                "seed": settings.seed,
                "summary_keys": list(path.summary_keys),
                "per_test": path.per_test,
                "result": result,
            }
        )
        from bias_hub.pipelines.score.report import render

        folder.write_json("results.json", results)
        render(results, folder.path("results.json").parent)
    log.info("wrote %s: results.json, report.md", out_dir)
    return results
