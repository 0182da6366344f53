"""Predictions made elsewhere, read into rows: a JSON lines, CSV or Parquet file, or the samples
lm-evaluation-harness logs (``--log_samples``), and answer texts matched to answer indices.

Answer texts are matched as BBQ's own analysis (``BBQ_calculate_bias_score.R``) matches
UnifiedQA's outputs: both sides lower-cased, trimmed, and a final period dropped; a text
that matches no answer of its row becomes -1 (unparsable) and is counted.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from collections.abc import Sequence
from pathlib import Path

from bias_hub.builders.shared.files import open_text

__all__ = [
    "FORMATS",
    "normalise_answer",
    "read_lm_eval_samples",
    "read_predictions",
    "to_choice",
    "to_value",
]

FORMATS = {".jsonl": "jsonl", ".json": "jsonl", ".csv": "csv", ".parquet": "parquet"}
UNPARSABLE = -1


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
    """The rows of a CSV file as dicts; a header naming a column twice, or a row with more or
    fewer cells than the header, is refused with its line (csv.DictReader keeps the last of
    two columns and fills or stacks the cells silently)."""
    reader = csv.reader(handle)
    header = next(reader, None)
    if header is None:
        return []
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise ValueError(f"{where}, line 1: the header names column {twice[0]!r} twice")
    rows = []
    for cells in reader:
        if not cells:
            continue
        if len(cells) != len(header):
            raise ValueError(
                f"{where}, line {reader.line_num}: {len(cells)} cells where the header has "
                f"{len(header)} ({', '.join(header)})"
            )
        rows.append(dict(zip(header, cells, strict=True)))
    return rows


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
    ``prediction`` (the chosen index) and ``reply`` (a generation task's text).

    A multiple-choice sample's ``filtered_resps`` holds one ``[log-likelihood, is_greedy]``
    per choice: the prediction is the choice of highest log-likelihood (lm-eval's ``acc``).
    A generation sample holds the reply text: the prediction is its answer index read by
    the rule of ``bias-hub jbbq evaluate --scoring generate`` (``bias_hub.pipelines.jbbq.parsing``),
    -1 when none can be read.
    """
    from bias_hub.pipelines.jbbq.parsing import parse_answer

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
            row = {**sample["doc"], "prediction": parse_answer(responses[0]), "reply": responses[0]}
        else:
            raise ValueError(
                f"{where}: filtered_resps is neither one [log-likelihood, is_greedy] per choice nor one reply text"
            )
        rows.append(row)
    if not rows:
        raise ValueError(f"--from-lm-eval {path}: holds no samples")
    return rows


def normalise_answer(text: str) -> str:
    """Lower-cased, trimmed, a final period dropped (BBQ's analysis script)."""
    text = text.strip().lower()
    return text[:-1].strip() if text.endswith(".") else text


# An index written as text: ASCII digits only ("²" is a digit to str.isdigit, which int() refuses).
_INDEX_TEXT = re.compile(r"-?[0-9]+")


def _integer(value) -> int | None:
    """``value`` as an answer index when it is one: an int, an integral float, or (CSV) a text
    of an optional minus sign and digits."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and _INDEX_TEXT.fullmatch(value.strip()):
        return int(value.strip())
    return None


def to_choice(value, answers: Sequence[str], where: str) -> tuple[int, bool]:
    """An answer index from an index or an answer text; ``(index, matched)``: an unmatched or
    empty text gives ``(-1, False)``. An index outside -1..len(answers)-1 is an error."""
    index = _integer(value)
    if index is not None:
        if not -1 <= index < len(answers):
            raise ValueError(
                f"{where}: answer index {index} is out of range; expected -1 to {len(answers) - 1}"
            )
        return index, True
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return UNPARSABLE, False
    if not isinstance(value, str):
        raise ValueError(
            f"{where}: expected an answer index or an answer text, got {type(value).__name__} {value!r}"
        )
    wanted = normalise_answer(value)
    for position, answer in enumerate(answers):
        if normalise_answer(answer) == wanted:
            return position, True
    return UNPARSABLE, False


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
