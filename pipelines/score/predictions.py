"""Predictions made elsewhere, read into rows: a JSON lines, CSV or Parquet file, the samples
lm-evaluation-harness logs (``--log_samples``), or an Inspect AI eval log. An answer given as a
text is read into an index later, by the answer reader (``bias_hub.pipelines.common.answer_reading``).
"""

from __future__ import annotations

import io
import json
import math
import re
from pathlib import Path

from bias_hub.builders.shared.files import csv_records, open_text

__all__ = [
    "FORMATS",
    "as_index",
    "inspect_log",
    "read_inspect_log",
    "read_lm_eval_samples",
    "read_predictions",
    "to_value",
]

FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}


def read_predictions(path: str | Path) -> tuple[list[dict], str]:
    """The rows of a predictions file and its format (by suffix: .jsonl/.json, .csv, .parquet)."""
    path = Path(path)
    kind = FORMATS.get(path.suffix.lower())
    if kind is None:
        raise ValueError(
            f"--predictions {path}: unknown format {path.suffix or '(no suffix)'!r}; expected JSON lines "
            "(.jsonl), CSV (.csv) or Parquet (.parquet)"
        )
    if path.is_dir():
        raise IsADirectoryError(f"--predictions {path}: is a folder; expected a file")
    if not path.is_file():
        raise FileNotFoundError(f"--predictions {path}: no such file")
    if kind == "parquet":
        import pyarrow.parquet as pq

        try:
            rows = pq.read_table(path).to_pylist()
        except Exception as err:  # pyarrow raises several types for a file that is not Parquet
            raise ValueError(
                f"--predictions {path}: not a Parquet file ({str(err).splitlines()[0]})"
            ) from None
    elif kind == "csv":
        with _opened(path, "--predictions", newline="") as handle:
            rows = _csv_rows(handle, f"--predictions {path}")
    else:
        rows = _json_lines(path, "--predictions")
    if not rows:
        raise ValueError(f"--predictions {path}: holds no rows")
    return rows, kind


def _csv_rows(handle: io.StringIO, where: str) -> list[dict]:
    return [row for _, row in csv_records(handle, where)[1]]


def _opened(path: Path, flag: str, newline: str | None = None) -> io.StringIO:
    """The file's text through the project's one reader (a BOM dropped; a file in another
    encoding than UTF-8 named with its line and byte), as ``flag`` gave it."""
    try:
        return open_text(path, newline)
    except ValueError as err:
        raise ValueError(f"{flag} {err}") from None


def _json_lines(path: Path, flag: str) -> list[dict]:
    rows = []
    with _opened(path, flag) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as err:
                raise ValueError(
                    f"{flag} {path}, line {number}: not JSON lines ({err.msg})"
                ) from None
            if not isinstance(row, dict):
                raise ValueError(
                    f"{flag} {path}, line {number}: expected a JSON object, got {type(row).__name__}"
                )
            rows.append(row)
    return rows


def read_lm_eval_samples(path: str | Path) -> list[dict]:
    """lm-evaluation-harness 0.4 logged samples as rows: the sample's ``doc`` fields, plus
    ``prediction`` and, for a generation task, ``reply``.

    A multiple-choice sample's ``filtered_resps`` holds one ``[log-likelihood, is_greedy]``
    per choice: the prediction is the index of highest log-likelihood (lm-eval's ``acc``; -1
    when one is not finite). A generation sample holds the reply text: the prediction is that
    text, for the answer reader to read.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"--from-lm-eval {path}: no such file")
    rows = []
    for number, sample in enumerate(_json_lines(path, "--from-lm-eval"), start=1):
        where = f"--from-lm-eval {path}, line {number}"
        if not isinstance(sample.get("doc"), dict) or "filtered_resps" not in sample:
            raise ValueError(
                f"{where}: not an lm-eval logged sample (expected the keys doc and filtered_resps)"
            )
        responses = sample["filtered_resps"]
        if (
            isinstance(responses, list)
            and responses
            and all(isinstance(r, list) and r for r in responses)
        ):
            scores = [float(r[0]) for r in responses]
            prediction = (
                max(range(len(scores)), key=scores.__getitem__)
                if all(map(math.isfinite, scores))
                else -1
            )
            row = {**sample["doc"], "prediction": prediction}
        elif isinstance(responses, list) and len(responses) == 1 and isinstance(responses[0], str):
            row = {**sample["doc"], "prediction": responses[0], "reply": responses[0]}
        else:
            raise ValueError(
                f"{where}: filtered_resps is neither one [log-likelihood, is_greedy] per choice nor one reply text"
            )
        rows.append(row)
    if not rows:
        raise ValueError(f"--from-lm-eval {path}: holds no samples")
    return rows


def inspect_log(path: str | Path) -> tuple[dict, list[dict]]:
    """An Inspect AI eval log's ``eval`` spec (its task, its dataset's size and sample ids) and
    its samples, read without Inspect installed: ``.json`` (one document with ``eval`` and
    ``samples``) or ``.eval`` (a zip archive: ``header.json``, or ``_journal/start.json`` while
    a run is under way, and ``samples/*.json``, one sample each, compressed with Zstandard:
    ``inspect_eval.eval_archive``)."""
    from bias_hub.pipelines.score.inspect_eval import BAD_ARCHIVE, eval_archive

    path = Path(path)
    flag = "--from-inspect"
    if not path.is_file():
        raise FileNotFoundError(f"{flag} {path}: no such file")
    if path.suffix == ".eval":
        try:
            with eval_archive(path) as archive:
                names = archive.namelist()
                samples = [
                    json.loads(archive.read(name))
                    for name in sorted(n for n in names if n.startswith("samples/"))
                ]
                header = next(
                    (n for n in ("header.json", "_journal/start.json") if n in names), None
                )
                log = json.loads(archive.read(header)) if header else {}
        except (BAD_ARCHIVE, json.JSONDecodeError) as err:
            raise ValueError(f"{flag} {path}: not an Inspect .eval log ({err})") from None
    elif path.suffix == ".json":
        try:
            with _opened(path, flag) as handle:
                log = json.load(handle)
        except json.JSONDecodeError as err:
            raise ValueError(f"{flag} {path}: not JSON ({err.msg})") from None
        samples = log.get("samples") if isinstance(log, dict) else None
        if samples is None:
            raise ValueError(
                f"{flag} {path}: an Inspect log without samples (written with --no-log-samples?)"
            )
    else:
        raise ValueError(
            f"{flag} {path}: expected an Inspect eval log (.eval or .json), got {path.suffix or 'no suffix'!r}"
        )
    spec = log.get("eval") if isinstance(log, dict) else None
    return (spec if isinstance(spec, dict) else {}), samples


def read_inspect_log(path: str | Path) -> list[dict]:
    """The samples of an Inspect AI eval log (``inspect_log``) as rows: each sample's
    ``metadata`` (the tasks of ``bias-hub export inspect`` keep every question field there),
    plus ``prediction`` and ``reply``: the model's completion, for the answer reader to read.
    Every epoch of a sample is a row of its own.
    """
    flag = "--from-inspect"
    _, samples = inspect_log(path)
    rows = []
    for sample in samples:
        where = f"{flag} {path}, sample {sample.get('id')!r}"
        if not isinstance(sample.get("metadata"), dict) or not sample["metadata"]:
            raise ValueError(
                f"{where}: no metadata; expected the question fields there (tasks of `bias-hub export inspect`)"
            )
        output = sample.get("output") or {}
        reply = output.get("completion")
        if reply is None:
            choices = output.get("choices") or []
            content = choices[0].get("message", {}).get("content") if choices else None
            reply = content if isinstance(content, str) else ""
        rows.append({**sample["metadata"], "prediction": reply, "reply": reply})
    if not rows:
        raise ValueError(f"{flag} {path}: holds no samples")
    return rows


# An index written as text: ASCII digits only ("²" is a digit to str.isdigit, which int() refuses).
_INDEX_TEXT = re.compile(r"-?[0-9]+")


def as_index(value):
    """``value`` as an answer index when it is one: an int, an integral float, or (CSV) a text
    of an optional minus sign and digits; any other value unchanged."""
    if isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INDEX_TEXT.fullmatch(value.strip()):
        return int(value.strip())
    return value


def to_value(value, kind: str, where: str):
    """A prediction cell as the compute() argument wants it (``label``, ``number``, ``numbers``,
    ``clusters``); CSV cells holding lists are JSON text."""
    if kind == "label":
        if value is None or not isinstance(value, (str, int)) or isinstance(value, bool):
            raise ValueError(f"{where}: expected a text label, got {value!r}")
        return str(value)
    if kind == "number":
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"{where}: expected a number, got {value!r}") from None
        if not math.isfinite(number):
            raise ValueError(f"{where}: expected a finite number, got {value!r}")
        return number
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            raise ValueError(f"{where}: expected a JSON list, got {value[:40]!r}") from None
    if hasattr(value, "tolist"):
        value = value.tolist()
    if not isinstance(value, list):
        raise ValueError(f"{where}: expected a list, got {type(value).__name__}")
    if kind == "numbers":
        try:
            return [float(v) for v in value]
        except (TypeError, ValueError):
            raise ValueError(f"{where}: expected a list of numbers") from None
    return value
