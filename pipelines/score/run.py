"""``bias-hub score METRIC``: a metric module on predictions made elsewhere.

``run(predictions, dataset, out_dir, settings)`` has every part's ``run`` shape, with the
predictions file in the model's place. It joins the prediction rows to the dataset's on the
id column, feeds the columns the metric's score path declares to the metric module, and
writes ``results.json`` and ``report.md`` through one ``RunFolder``.
"""

from __future__ import annotations

import dataclasses
import logging
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from bias_hub.builders.shared.console import progress, stage
from bias_hub.builders.shared.files import to_jsonable
from bias_hub.pipelines.common import RunFolder, dataset_folder, metric_scores
from bias_hub.pipelines.common.answer_reading import (
    READERS,
    RULES,
    UNREAD_RULES,
    Reading,
    drops_unread,
    read_answer,
)
from bias_hub.pipelines.common.locations import dataset_rows
from bias_hub.pipelines.common.score_path import Column, ScorePath, score_path
from bias_hub.pipelines.score import coverage as coverage_check
from bias_hub.pipelines.score.guards import (
    refuse_a_folder_of_another_kind,
    refuse_a_join_of_other_texts,
    refuse_another_command_s_run,
    refuse_inputs_inside_out,
)
from bias_hub.pipelines.score.model_identity import model_input, model_name
from bias_hub.pipelines.score.predictions import (
    as_index,
    read_inspect_log,
    read_lm_eval_samples,
    read_predictions,
    to_value,
)
from bias_hub.pipelines.score.settings import Settings
from bias_hub.pipelines.score.values import describe, refuse_unknown_labels, unread_values

__all__ = ["join", "metric_inputs", "run"]

log = logging.getLogger(__name__)
_SHOWN = 5  # ids named in an error
# How answer texts are read when neither --answer-reader nor the exported task says.
DEFAULT_SCORE_READER = "bbq"


def _reader(settings: Settings, rows: list[dict], source: str) -> tuple[str, str]:
    """The answer reader and why: ``--answer-reader``; else the one the exported task recorded in
    every row (``answer_reader``: ``bias-hub export`` writes it into each question); else
    ``bbq``, BBQ's own reading of answer texts."""
    if settings.answer_reader:
        return settings.answer_reader, "--answer-reader"
    recorded = sorted({str(row["answer_reader"]) for row in rows if row.get("answer_reader")})
    unknown = [name for name in recorded if name not in READERS]
    if unknown or len(recorded) > 1:
        raise ValueError(
            f"{source}: its rows record the answer reader {' and '.join(map(repr, recorded))}"
            + (f", not one of {', '.join(READERS)}" if unknown else "")
            + "; name the one to read them with --answer-reader"
        )
    if recorded and all(row.get("answer_reader") for row in rows):
        return recorded[0], "recorded by the exported task"
    return DEFAULT_SCORE_READER, "the default for answer texts (BBQ's analysis script)"


def _source(inputs: dict) -> tuple[str, list[dict], dict]:
    """The one predictions flag given with its file (``--predictions FILE``), the file's rows
    and its record."""
    given = {flag: value for flag, value in inputs.items() if value}
    if len(given) != 1:
        raise ValueError(
            "give one of --predictions FILE, --from-lm-eval SAMPLES.jsonl or --from-inspect LOG "
            "(exactly one)"
        )
    ((flag, path),) = given.items()
    extra = {}
    if flag == "--from-inspect":
        rows, kind = read_inspect_log(path), "Inspect eval log"
    elif flag == "--from-lm-eval":
        rows, kind = read_lm_eval_samples(path), "lm-eval samples"
        tied = [number for number, row in enumerate(rows, start=1) if row.get("tied_choices")]
        if tied:
            log.warning(
                "--from-lm-eval %s: %d samples give two or more choices the same highest "
                "log-likelihood (samples %s): no choice is preferred, so each counts as -1 "
                "(lm-eval's acc takes the first of them)",
                path,
                len(tied),
                ", ".join(map(str, tied[:_SHOWN])) + (", ..." if len(tied) > _SHOWN else ""),
            )
        extra = {"tied_log_likelihoods": len(tied)}
    else:
        rows, kind = read_predictions(path)
    return f"{flag} {path}", rows, {"file": str(path), "format": kind, "rows": len(rows), **extra}


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
        columns[main] = dataclasses.replace(columns[main], name=settings.prediction_column)
    for item in settings.columns or []:
        argument, sep, column = item.partition("=")
        if not sep or argument not in columns or not column:
            raise ValueError(
                f"--column {item!r}: expected ARG=COLUMN with ARG one of {', '.join(columns)} (the prediction "
                f"arguments of {path.metric})"
            )
        columns[argument] = dataclasses.replace(columns[argument], name=column)
    return columns


def _short_forms(data: dict, column: Column) -> list[str] | None:
    """BBQ's ``answer_info`` texts of a dataset row (a list of ``{"text", "group"}``, or BBQ's
    own ``{"ans0": [text, group], ...}``), for the ``bbq`` reader's first-words rule."""
    info = data.get(column.short_forms) if column.short_forms else None
    if isinstance(info, list):
        return [str(item.get("text", "")) if isinstance(item, dict) else "" for item in info]
    if isinstance(info, dict):
        return [str((info.get(name) or [""])[0]) for name in column.choices]
    return None


def _read_choice(
    row: dict, data: dict, column: Column, reader: str, where: str, replies: bool
) -> Reading:
    value = row[column.name] if replies else as_index(row[column.name], where)
    if not isinstance(value, (str, int)):
        raise ValueError(
            f"{where}: expected an answer index or an answer text, got {type(value).__name__} {value!r}"
        )
    options = [data[name] for name in column.choices] if column.choices else list(column.names)
    scored = row.get("choices_scored")
    if scored is not None and scored != len(options):
        raise ValueError(
            f"{where}: lm-eval scored {scored} choices where the question has {len(options)} "
            f"({', '.join(map(repr, options))}); a choice left out can never be the answer"
        )
    unknown = data.get(column.unknown) if column.unknown else None
    return read_answer(
        value,
        options,
        unknown=unknown if isinstance(unknown, int) else None,
        short_forms=_short_forms(data, column),
        reader=reader,
    )


def _reading_record(
    column: Column, reader: str, readings: list[Reading], kept: int, unread: list[dict]
) -> dict:
    rules = Counter(r.rule for r in readings)
    read = sum(r.read for r in readings)
    return {
        "column": column.name,
        "reader": reader,
        "rules": {rule: rules[rule] for rule in RULES if rules[rule]},
        "read": read,
        "rows": len(readings),
        "coverage": read / len(readings),
        "dropped": len(readings) - kept,
        "unmatched_values": unread[:_SHOWN],
    }


def metric_inputs(
    pairs: Sequence[tuple[dict, dict]],
    path: ScorePath,
    columns: dict[str, Column],
    source: str,
    reader: str = DEFAULT_SCORE_READER,
    replies: bool = False,
) -> tuple[dict, dict, list[list[Reading]]]:
    """The compute() arguments from the joined rows; how the answers were read (per choice
    argument: the reader, rows per rule, coverage, rows dropped, the first values left unread
    as written); and every row's readings.

    Answers given as texts (or indices) are read by ``reader`` (``answer_reading``); an
    unread one is -1, or, under a reader whose harness drops them (``bbq``), the row is left
    out of every argument. A text of digits is an index given (a CSV cell), unless ``replies``:
    the texts a model generated (lm-eval and Inspect logs), which the reader reads as they are.
    A column of fixed label names refuses a value it leaves unread (``values``)."""
    first = pairs[0][0]
    present = {}
    for argument, column in columns.items():
        if column.name not in first:
            if not column.required:
                continue
            raise ValueError(
                f"{source}: no prediction column {column.name!r} (for {path.metric}'s {argument}); its columns: "
                f"{sorted(first)}; name it with --prediction-column or --column {argument}=COLUMN"
            )
        present[argument] = column
    for argument, name in path.dataset_columns.items():
        if name not in pairs[0][1]:
            raise ValueError(
                f"dataset: no column {name!r} (for {path.metric}'s {argument}); is it the right dataset?"
            )
    readings: dict[str, list[Reading]] = {}
    for argument, column in present.items():
        if column.kind != "choice":
            continue
        values = []
        for number, (row, data) in enumerate(pairs, start=1):
            where = f"{source}, row {number}, column {column.name!r}"
            if column.name not in row:
                raise ValueError(f"{where}: missing")
            values.append(_read_choice(row, data, column, reader, where, replies))
        readings[argument] = values
    unread = {
        argument: unread_values(pairs, values, present[argument])
        for argument, values in readings.items()
    }
    for argument, found in unread.items():
        refuse_unknown_labels(found, present[argument], source)
    keep = [
        not drops_unread(reader) or all(values[i].read for values in readings.values())
        for i in range(len(pairs))
    ]
    if not any(keep):
        raise ValueError(
            f"{source}: the {reader} reader read no answer in {len(pairs)} rows (it drops what it "
            "cannot read); check --prediction-column, or choose another --answer-reader"
        )
    kept = [pair for pair, k in zip(pairs, keep, strict=True) if k]
    inputs: dict = {}
    for argument, column in present.items():
        if argument in readings:
            inputs[argument] = [r.index for r, k in zip(readings[argument], keep, strict=True) if k]
            continue
        values = []
        for number, (row, _) in enumerate(kept, start=1):
            where = f"{source}, row {number}, column {column.name!r}"
            if column.name not in row:
                raise ValueError(f"{where}: missing")
            values.append(to_value(row[column.name], column.kind, where))
        inputs[argument] = values
    for argument, name in path.dataset_columns.items():
        inputs[argument] = [data[name] for _, data in kept]
    reading = {
        argument: _reading_record(columns[argument], reader, values, len(kept), unread[argument])
        for argument, values in readings.items()
    }
    per_row = [[values[i] for values in readings.values()] for i in range(len(pairs))]
    return inputs, reading, per_row


def _read_rows(
    pairs: Sequence[tuple[dict, dict]],
    per_row: list[list[Reading]],
    columns: dict[str, Column],
    reading: dict,
    id_column: str,
    joined: dict,
) -> list[dict]:
    """predictions.jsonl: per joined row its id, and per answer column the value given (the
    reply), the index read, the rule that read it and whether the row was scored."""
    if not reading:
        return []
    qualifier = joined.get("qualified_by")
    out = []
    for (row, _), readings in zip(pairs, per_row, strict=True):
        item = {id_column: row[id_column]}
        if qualifier:
            item[qualifier] = row[qualifier]
        scored = True
        for argument, read in zip(reading, readings, strict=True):
            name = columns[argument].name
            item[name] = row[name]
            item[f"{name}_index"] = read.index
            item[f"{name}_rule"] = read.rule
            scored &= read.read or not drops_unread(reading[argument]["reader"])
        item["scored"] = scored
        out.append(item)
    return out


def _say_unread(source: str, counts: dict) -> None:
    """A warning line when not every answer was read, naming the first values left unread as
    written, with their rows (kept for the console; results.json and the report carry them)."""
    unread = counts["rows"] - counts["read"]
    if not unread:
        return
    why = [f"{rule} {n}" for rule, n in counts["rules"].items() if rule in UNREAD_RULES]
    given = unread - sum(n for rule, n in counts["rules"].items() if rule in UNREAD_RULES)
    if given:
        why.append(f"-1 given {given}")
    fate = (
        "are left out of the scores, as BBQ's analysis script leaves them"
        if counts["dropped"]
        else "count as unparsable (-1)"
    )
    shown = describe(counts["unmatched_values"])
    log.warning(
        "%s: %d of %d predictions in %r matched no answer under the %s reader (%.1f %%: %s); "
        "they %s%s",
        source,
        unread,
        counts["rows"],
        counts["column"],
        counts["reader"],
        100 * unread / counts["rows"],
        ", ".join(why),
        fate,
        f": {shown}" if shown else "",
    )


def _resampling(options: dict) -> str:
    if not options.get("confidence_level"):
        return ""
    return f", intervals from {options['n_resamples']:,} resamples"


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
    inputs, _, _ = metric_inputs([(row, {}) for row in pairs_rows], path, columns, source)
    results = {}
    for test in progress(rows, desc=f"{path.metric} tests", unit="test"):
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
    results file beside the samples) or an Inspect task's samples (from the log's header),
    else the dataset's rows; unknown for samples scored from their docs alone without a size."""
    if settings.from_inspect:
        task = coverage_check.inspect_coverage(Path(settings.from_inspect))
        if task.expected is not None or dataset_path is None:
            return task
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


def run(
    predictions: str | Path | None, dataset: str | Path | None, out_dir: Path, settings: Settings
) -> dict:
    """Score the predictions with ``settings.metric``; write the run folder; return results.json."""
    path = score_path(settings.metric)
    if settings.revision and not settings.model:  # before any file is read
        raise ValueError("--revision: give the model it is a revision of with --model")
    refuse_another_command_s_run(Path(out_dir))
    inputs = {
        "--predictions": predictions,
        "--from-lm-eval": settings.from_lm_eval,
        "--from-inspect": settings.from_inspect,
    }
    refuse_inputs_inside_out(Path(out_dir), inputs)
    folder = RunFolder(out_dir)
    with folder:
        source, rows_in, source_record = _source(inputs)
        reader, reader_reason = _reader(settings, rows_in, source)
        logged = settings.from_lm_eval or settings.from_inspect
        if settings.from_lm_eval:
            coverage_check.repeated_samples(Path(settings.from_lm_eval))
        if dataset is None and logged and _docs_suffice(rows_in, path):
            # The tasks of `bias-hub export` log every column the metric needs with each question.
            given, dataset_path, config, rows, splits = None, None, None, rows_in, []
        else:
            # Recorded as given (a link, a root) and read where it resolves now.
            given = dataset_folder(dataset or path.dataset, settings.datasets_root)
            dataset_path = given.resolve()
            config = settings.config or path.config
            refuse_a_folder_of_another_kind(dataset_path, config, path)
            rows, splits = dataset_rows(dataset_path, config, settings.split)
        where = (
            f"dataset {dataset_path} (config {config!r})"
            if dataset_path
            else f"the docs of {source}"
        )
        if not rows:
            raise ValueError(f"{where}: no rows")
        model = model_input(settings)
        folder.record_inputs(
            datasets=[(given, config)] if given else [],
            models=[model] if model else [],
            files=[predictions or settings.from_lm_eval or settings.from_inspect],
            settings=settings,
        )
        metric = metric_scores(path.metric, settings.metrics_root, path.config_name)
        columns = _columns(path, settings)
        options = {  # intervals off: confidence_level None and no other option passed
            key: value
            for key, value in settings.interval_options().items()
            if value is not None or key == "confidence_level"
        }
        if path.per_test:
            if settings.id_column or settings.prediction_column:
                log.info(
                    "%s: --id-column and --prediction-column do not apply (tests come from the dataset)",
                    path.metric,
                )
            result = _per_test(metric, rows_in, rows, path, columns, source, options)
            joined = {"tests": len(rows), "word_vectors": len(rows_in)}
            reading, coverage = {}, None
            read_rows: list[dict] = []
        else:
            id_column = _id_column(path, settings, set(rows[0]), where)
            pairs, joined = join(rows_in, rows, path, id_column, source, where)
            if dataset_path is not None:
                refuse_a_join_of_other_texts(pairs, source, where)
            inputs, reading, per_row = metric_inputs(
                pairs, path, columns, source, reader, replies=bool(logged)
            )
            coverage = _coverage(pairs, rows, joined, dataset_path, where, settings)
            coverage_check.check(coverage, settings.allow_partial, source)
            # One call into the module (its resampling is vectorised): timed, not counted.
            with stage(f"{path.metric} on {len(pairs):,} rows{_resampling(options)}", log):
                result = metric.compute(**inputs, **path.fixed, **options)
            read_rows = _read_rows(pairs, per_row, columns, reading, id_column, joined)
        for counts in reading.values():
            _say_unread(source, counts)
        results = to_jsonable(
            {
                "part": "score",
                "step": "score",
                "metric": path.metric,
                "config_name": path.config_name,
                "model": model_name(model),
                "predictions": source_record,
                "dataset": {
                    "folder": str(dataset_path) if dataset_path else None,
                    "config": config,
                    "splits": splits,
                },
                "join": joined,
                "coverage": coverage.record() if coverage else None,
                "answer_reader": {"name": reader, "chosen_by": reader_reason} if reading else None,
                "reading": reading,
                "columns": {a: c.name for a, c in columns.items()},
                # The metric resamples templates where the path feeds it their column.
                "intervals": settings.interval_record(
                    "templates" if "templates" in path.dataset_columns else "items"
                ),
                "summary_keys": list(path.summary_keys),
                "per_test": path.per_test,
                "result": result,
            }
        )
        from bias_hub.pipelines.score.report import render

        folder.write_json("results.json", results)
        if read_rows:
            folder.write_jsonl("predictions.jsonl", read_rows)
        render(results, folder.path("results.json").parent)
    log.info(
        "wrote %s: results.json, report.md%s", out_dir, ", predictions.jsonl" if read_rows else ""
    )
    return results
