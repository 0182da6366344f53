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
            rows = [row for _, row in csv_records(handle, f"--predictions {path}")[1]]
    else:
        rows = _json_lines(path, "--predictions")
    if not rows:
        raise ValueError(f"--predictions {path}: holds no rows")
    return rows, kind


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
            except (ValueError, RecursionError) as err:
                raise ValueError(
                    f"{flag} {path}, line {number}: not JSON lines ({_why(err)})"
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
    when one is not finite, and -1 where two or more choices share the highest, which
    lm-eval's ``acc`` reads as the first of them: the row's ``tied_choices`` names them, and
    ``bias-hub score`` says how many); ``choices_scored`` is how many choices it holds, which
    ``bias-hub score`` compares with the question's. A generation sample holds the reply text:
    the prediction is that text, for the answer reader to read. Anything else is refused,
    naming the line.
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
        rows.append({**sample["doc"], **_lm_eval_answer(sample["filtered_resps"], where)})
    if not rows:
        raise ValueError(f"--from-lm-eval {path}: holds no samples")
    return rows


def _log_likelihood(response) -> tuple[float, bool] | None:
    """One choice's ``[log-likelihood, is_greedy]``; lm-eval 0.4 writes both as texts in its
    samples files (``["-15.33", "False"]``), older logs as a number and a boolean. None when
    ``response`` is neither."""
    if not isinstance(response, list) or len(response) != 2:
        return None
    score, greedy = response
    if isinstance(score, str):
        try:
            score = float(score)
        except ValueError:
            return None
    if isinstance(greedy, str) and greedy in ("True", "False"):
        greedy = greedy == "True"
    if (
        isinstance(score, bool)
        or not isinstance(score, (int, float))
        or not isinstance(greedy, bool)
    ):
        return None
    return float(score), greedy


def _lm_eval_answer(responses, where: str) -> dict:
    """``prediction`` (and ``reply``, or ``choices_scored`` and ``tied_choices``) of one sample."""
    if isinstance(responses, list) and len(responses) == 1 and isinstance(responses[0], str):
        return {"prediction": responses[0], "reply": responses[0]}
    read = [_log_likelihood(r) for r in responses] if isinstance(responses, list) else []
    if not read or None in read:
        shown = json.dumps(responses, ensure_ascii=False)
        raise ValueError(
            f"{where}: filtered_resps {shown[:80]}{'...' if len(shown) > 80 else ''} is neither "
            "one [log-likelihood, is_greedy] per choice (a number and true or false) nor one "
            "reply text"
        )
    scores = [score for score, _ in read]
    best = max(scores)
    tied = [i for i, score in enumerate(scores) if score == best]
    finite = all(map(math.isfinite, scores))
    return {
        "prediction": tied[0] if finite and len(tied) == 1 else -1,
        "choices_scored": len(scores),
        "tied_choices": tied if finite and len(tied) > 1 else None,
    }


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
        except (BAD_ARCHIVE, ValueError, RecursionError) as err:
            raise ValueError(f"{flag} {path}: not an Inspect .eval log ({_why(err)})") from None
    elif path.suffix == ".json":
        try:
            with _opened(path, flag) as handle:
                log = json.load(handle)
        except (ValueError, RecursionError) as err:
            raise ValueError(f"{flag} {path}: not JSON ({_why(err)})") from None
        samples = log.get("samples") if isinstance(log, dict) else None
        if samples is None:
            raise ValueError(
                f"{flag} {path}: an Inspect log without samples (written with --no-log-samples?)"
            )
        if not isinstance(samples, list):
            raise ValueError(
                f"{flag} {path}: 'samples' is {_a(samples)}; expected a list of sample objects"
            )
    else:
        raise ValueError(
            f"{flag} {path}: expected an Inspect eval log (.eval or .json), got {path.suffix or 'no suffix'!r}"
        )
    for number, sample in enumerate(samples, start=1):
        if not isinstance(sample, dict):
            raise ValueError(
                f"{flag} {path}: sample {number} is {_a(sample)}; expected a sample object "
                "(id, epoch, metadata, output)"
            )
    spec = log.get("eval") if isinstance(log, dict) else None
    return (spec if isinstance(spec, dict) else {}), samples


def _why(err: Exception) -> str:
    """Why JSON text did not parse, in a few words (a bad token, an integer of over 4,300
    digits, or nesting deeper than the parser's recursion)."""
    if isinstance(err, RecursionError):
        return "nested too deep to read"
    return getattr(err, "msg", None) or str(err).split(";")[0]


def _a(value) -> str:
    """What a JSON value is, in words: ``a list of 2``, ``a str 'x'``."""
    if isinstance(value, (list, dict)):
        return f"a {'list' if isinstance(value, list) else 'mapping'} of {len(value)}"
    return f"a {type(value).__name__} {json.dumps(value, ensure_ascii=False)[:40]}"


def read_inspect_log(path: str | Path) -> list[dict]:
    """The samples of an Inspect AI eval log (``inspect_log``) as rows: each sample's
    ``metadata`` (the tasks of ``bias-hub export inspect`` keep every question field there),
    plus ``prediction`` and ``reply``: the model's completion, for the answer reader to read.
    Every epoch of a sample is a row of its own.
    """
    flag = "--from-inspect"
    _, samples = inspect_log(path)
    rows = []
    epochs: dict = {}
    for sample in samples:
        where = f"{flag} {path}, sample {sample.get('id')!r}"
        seen = epochs.setdefault(sample.get("id"), [])
        seen.append(sample.get("epoch"))
        if len(seen) > 1:
            raise ValueError(
                f"{where}: answered {len(seen)} times (epochs {', '.join(map(str, seen))}): "
                + (
                    "the log holds several epochs of its task; score a run of one epoch "
                    "(inspect eval --epochs 1)"
                    if len(set(seen)) == len(seen)
                    else "the log holds this sample twice in one epoch"
                )
            )
        if not isinstance(sample.get("metadata"), dict) or not sample["metadata"]:
            raise ValueError(
                f"{where}: no metadata; expected the question fields there (tasks of `bias-hub export inspect`)"
            )
        output = sample.get("output") or {}
        if not isinstance(output, dict):
            raise ValueError(f"{where}: 'output' is {_a(output)}; expected an object")
        reply = output.get("completion")
        if reply is None:
            choices = output.get("choices") or []
            content = choices[0].get("message", {}).get("content") if choices else None
            reply = content if isinstance(content, str) else ""
        rows.append({**sample["metadata"], "prediction": reply, "reply": reply})
    if not rows:
        raise ValueError(f"{flag} {path}: holds no samples")
    return rows


# An index written as text: ASCII digits only ("²" is a digit to str.isdigit, which int() refuses)
# and an optional sign ("+1" is 1).
_INDEX_TEXT = re.compile(r"[-+]?[0-9]+")
_LONGEST_INDEX = 9  # digits: no question has a billion options, and int() refuses 4,301


def as_index(value, where: str):
    """``value`` as an answer index when it is one: an int, an integral float, or (CSV) a text
    of an optional sign and digits; an answer text unchanged (so is a text of a whole number such
    as "1." or "1.0", which the answer reader reads). A value that is neither (null, true, NaN,
    infinity, 1.5, a text of such a number or of more than nine digits) is refused,
    naming ``where``."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        text = value.strip()
        if _INDEX_TEXT.fullmatch(text):
            if len(text.lstrip("+-")) <= _LONGEST_INDEX:
                return int(text)
            shown = f"a number of {len(text.lstrip('+-')):,} digits"
        else:
            try:  # a number written out ("1.5", "1e3"); "NaN" and "inf" stay texts, like names
                number = float(text) if any(c.isdigit() for c in text) else None
            except ValueError:
                return value
            if number is None:
                return value
            if number.is_integer():
                return value  # "1." or "1.0": a reply's way to write 1, for the reader to read
            shown = json.dumps(number)
    elif value is None or isinstance(value, (bool, float)):
        shown = json.dumps(value)
    else:
        return value
    raise ValueError(
        f"{where}: {shown} is no answer index (a whole number from 0, or -1 for none) and no "
        "answer text"
    )


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
