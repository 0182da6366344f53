"""Markdown pieces shared by dataset cards and run reports, and the one word splitter."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

__all__ = [
    "Word",
    "code_cell",
    "code_span",
    "fmt",
    "markdown_table",
    "split_words",
    "stamp_tables",
    "table_cell",
    "with_interval",
]

_WORD = re.compile(r"\w+|[^\w\s]", re.UNICODE)


@dataclass(frozen=True)
class Word:
    """A word of a sentence with its character span ``[start, end)``."""

    text: str
    start: int
    end: int

    @property
    def is_punctuation(self) -> bool:
        return not any(ch.isalnum() for ch in self.text)


def split_words(text: str) -> list[Word]:
    """Words as BERT's basic tokenizer splits them: runs of letters and digits, and every other
    non-space character on its own ("She's" -> She, ', s). The gender-swap builder (its word
    indices and spans) and the attention pipeline (its alignment of pieces to words) share it,
    so a word index means the same thing in the dataset and in a run."""
    return [Word(m.group(), m.start(), m.end()) for m in _WORD.finditer(text)]


def markdown_table(headers: list[object], rows: list[list[object]]) -> str:
    """A small Markdown table; cards and reports use it for counts and scores.

    A cell may hold Markdown (a link, a code span, bold); whatever it holds, a ``|`` or a line
    break in it can never end the cell or the row: an unescaped ``|`` is written ``\\|``
    (shown as ``|``, in a code span too) and a line break as its escape. A name from the data
    (a model, a file, a category) goes through ``table_cell`` or ``code_cell`` as well, so
    nothing else in it is read as Markdown."""
    lines = ["| " + " | ".join(_cell(cell) for cell in headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(_cell(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def _cell(cell: object) -> str:
    return _escape_pipes(_printable(cell))


def _escape_pipes(text: str) -> str:
    """Every ``|`` that would end a table cell written ``\\|``: one after an even number of
    backslashes (``\\\\|`` is an escaped backslash and a pipe that ends the cell)."""
    return re.sub(r"(?<!\\)((?:\\\\)*)\|", r"\1\\|", text)


def _printable(text: object) -> str:
    """``text`` on one line: a newline, tab or other control character as its escape (``\\n``)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in str(text))


def stamp_tables(markdown: str, stamp: str) -> str:
    """``markdown`` with ``stamp`` (a line of Markdown) under its first heading and above every
    table (a run of lines that start with ``|``), so no table is read without it."""
    lines, out, stamped = markdown.splitlines(), [], False
    for i, line in enumerate(lines):
        if line.startswith("|") and (i == 0 or not lines[i - 1].startswith("|")):
            out += [stamp, ""]
        out.append(line)
        if line.startswith("# ") and not stamped:
            out += ["", stamp]
            stamped = True
    return "\n".join(out if stamped else [stamp, "", *out]) + "\n"


def code_span(text: object) -> str:
    """``text`` (a file name, a column a user named) as Markdown inline code that nothing in it
    can end or turn into a heading, link or table: fenced by more backticks than it holds."""
    text = _printable(text)
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_cell(text: object) -> str:
    """``code_span`` for a cell of a Markdown table row: a ``|`` in it, which would end the cell
    even inside the code span, written ``\\|`` (shown as ``|``)."""
    return _escape_pipes(code_span(text))


def table_cell(text: object) -> str:
    """``text`` (a category or test name from the data) as one cell of a Markdown table row."""
    return re.sub(r"([\\|`*_\[\]<>#])", r"\\\1", _printable(text))


def fmt(value: object, digits: int = 3, missing: str = "–") -> str:
    """A number for a table: ``digits`` decimals, tiny values in general format, None/NaN as ``missing``."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return missing
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    if value != 0 and abs(value) < 10 ** (-digits):
        return f"{value:.{digits}g}"
    return _fixed(value, digits)


def _fixed(value: float, digits: int) -> str:
    """``value`` with ``digits`` decimals; one that rounds to zero has no minus sign (a Pearson r
    of -1e-17, zero by construction, is 0.000 on every machine, not -0.000 on some)."""
    text = f"{value:.{digits}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.") else text


def with_interval(
    value: object,
    interval: dict | None,
    digits: int = 2,
    scale: float = 1.0,
    missing: str = "n/a",
    sign: bool = False,
    unavailable: str = "",
    significant: bool = False,
) -> str:
    """An estimate with its interval, the one way every report writes it: ``0.42 [0.37, 0.47]``.

    ``interval`` is a dict with ``low`` and ``high`` (the shape of every interval of
    ``bias_hub.metrics._common.bias_hub_intervals``); the value alone where there is none;
    ``missing`` where the value is None or not finite. ``scale`` multiplies all three (100 for
    percentages); ``sign`` writes a ``+`` before a value of 0 or more (a change, a difference);
    ``unavailable`` follows the value where an interval was computed but has no bounds (it may
    name the interval's ``{reason}``); ``significant``: ``digits`` significant digits of the
    value, at least ``digits`` decimals (``0.000911 [0.000506, 0.001735]``).
    """
    if value is None or isinstance(value, bool) or not isinstance(value, (int, float)):
        return missing if value is None else str(value)
    if not math.isfinite(value):
        return missing
    if significant and value != 0:
        digits = max(digits, digits - 1 - math.floor(math.log10(abs(value * scale))))
    text = _fixed(value * scale, digits)
    text = ("+" if sign and value >= 0 else "") + text
    low, high = (interval or {}).get("low"), (interval or {}).get("high")
    if low is not None and high is not None:
        text += f" [{_fixed(low * scale, digits)}, {_fixed(high * scale, digits)}]"
    elif interval is not None and unavailable:
        text += unavailable.format(reason=interval.get("reason"))
    return text
