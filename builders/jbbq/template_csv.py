"""Reading BBQ-format template CSVs, vocabularies and their list fields.

The files are read as BBQ's ``templates/`` folder ships them: template rows may
come in versions (a ``version`` column, several rows under one ``Q_id``), the
intersectional files (``Race_x_gender``, ``Race_x_SES``) name their stereotyped
groups in ``Known_stereotyped_race`` / ``Known_stereotyped_var2`` instead of
``Known_stereotyped_groups``, and list fields (``Names``, ``Lexical_diversity``)
are read the way BBQ's generator reads them (see ``parse_slot_lists``).
"""

from __future__ import annotations

import ast
import csv
import logging
from dataclasses import dataclass
from pathlib import Path

from bias_hub.builders.shared.files import open_text

__all__ = [
    "BASE_COLUMNS",
    "INTERSECTIONAL_COLUMNS",
    "REQUIRED_COLUMNS",
    "Template",
    "TemplateError",
    "flag",
    "parse_slot_lists",
    "read_proper_names",
    "read_templates",
    "read_vocabulary",
    "stereotyped_groups_of",
]

BASE_COLUMNS = tuple(
    """
    Q_id Category Ambiguous_Context Disambiguating_Context Lexical_diversity
    Question_negative_stereotype Question_non_negative Answer_negative Answer_non_negative
    """.split()
)
REQUIRED_COLUMNS = (*BASE_COLUMNS, "Known_stereotyped_groups")
INTERSECTIONAL_COLUMNS = (*BASE_COLUMNS, "Known_stereotyped_race", "Known_stereotyped_var2")

logger = logging.getLogger(__name__)


class TemplateError(ValueError):
    """A template or vocabulary file that cannot be expanded; names file, row and field."""


@dataclass(frozen=True)
class Template:
    """One template row, with where it came from for error messages."""

    fields: dict[str, str]
    path: Path
    line: int

    @property
    def where(self) -> str:
        version = self.get("version")
        shown = f", version {version!r}" if version else ""
        return f"{self.path}, line {self.line} (Q_id {self.fields.get('Q_id', '?')!r}{shown})"

    def get(self, column: str) -> str:
        return (self.fields.get(column) or "").strip()

    def has(self, column: str) -> bool:
        """Whether the file has the column at all (BBQ treats a missing column and an empty one differently)."""
        return column in self.fields


def _read_csv(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    try:
        handle = open_text(path, newline="")
    except ValueError as err:  # not UTF-8: the message names the file and the byte
        raise TemplateError(str(err)) from None
    with handle:
        reader = csv.DictReader(handle)
        columns = [c.strip() for c in reader.fieldnames or []]
        rows = []
        line = reader.line_num
        for raw in reader:
            rows.append((line + 1, {(k or "").strip(): (v or "") for k, v in raw.items()}))
            line = reader.line_num
    return columns, rows


def read_templates(path: str | Path) -> list[Template]:
    """Read a template CSV; rows with an empty ``Ambiguous_Context`` are skipped, as in BBQ."""
    path = Path(path)
    columns, rows = _read_csv(path)
    needed = INTERSECTIONAL_COLUMNS if "Known_stereotyped_race" in columns else REQUIRED_COLUMNS
    missing = [c for c in needed if c not in columns]
    if missing:
        raise TemplateError(
            f"{path}: missing column(s) {', '.join(missing)}; a BBQ template CSV needs "
            f"{', '.join(REQUIRED_COLUMNS)} (intersectional files: Known_stereotyped_race and "
            "Known_stereotyped_var2 instead of Known_stereotyped_groups)"
        )
    templates = [Template(fields, path, line) for line, fields in rows]
    return [t for t in templates if t.get("Ambiguous_Context")]


def read_vocabulary(path: str | Path) -> list[dict[str, str]]:
    """Read ``vocabulary.csv`` (Category, Name, optional Info, SubCat, Pilot_include)."""
    path = Path(path)
    columns, rows = _read_csv(path)
    missing = [c for c in ("Category", "Name") if c not in columns]
    if missing:
        raise TemplateError(f"{path}: missing column(s) {', '.join(missing)} in the vocabulary")
    vocabulary = []
    for line, row in rows:
        if row.get("Pilot_include", "").strip() == "No":
            continue
        if not row["Name"].strip():
            raise TemplateError(f"{path}, line {line}: field 'Name' is empty")
        vocabulary.append({k: v.strip() for k, v in row.items()})
    return vocabulary


def read_proper_names(path: str | Path) -> list[dict[str, str]]:
    """Read BBQ's ``vocabulary_proper_names.csv`` (Name, First_last, gender, ethnicity)."""
    path = Path(path)
    columns, rows = _read_csv(path)
    missing = [c for c in ("Name", "First_last", "gender") if c not in columns]
    if missing:
        raise TemplateError(
            f"{path}: missing column(s) {', '.join(missing)} in the proper-name vocabulary"
        )
    return [{k: v.strip() for k, v in row.items()} for _, row in rows if row["Name"].strip()]


_FIRST_KEYS = ("NAME1", "WORD1")
_SECOND_KEYS = ("NAME2", "WORD2")


def _words(part: str, key: str) -> list[str]:
    text = part.strip()
    for prefix in (f"{{{{{key}}}}}:", f"{key}:"):
        if text.startswith(prefix):
            text = text[len(prefix) :]
            break
    return [w.strip() for w in text.replace("[", "").replace("]", "").split(",") if w.strip()]


def parse_slot_lists(text: str, template: Template, column: str) -> tuple[list[str], list[str]]:
    """``NAME1: [a, b]; NAME2: [c]`` (or WORD1/WORD2, keys optionally in braces) -> (["a", "b"], ["c"]).

    Read as BBQ's generator reads it, so that its template files expand to its
    data: the text is cut at every ``;``; a part naming NAME1/WORD1 gives the
    first list; a part naming NAME2/WORD2 gives the second list and any other
    part after it drops it again. So a second list counts only as the last part,
    and a ``;`` typed inside a list ends that list there (BBQ's Disability_status
    templates 4 and 19 have such lists: version b of each yields no questions in
    BBQ's data, and here). Both cases are logged.
    """
    first: list[str] | None = None
    second: list[str] = []
    for part in text.split(";"):
        if not part.strip():
            continue
        upper = part.upper()
        names_first = next((k for k in _FIRST_KEYS if k in upper), None)
        names_second = next((k for k in _SECOND_KEYS if k in upper), None)
        if (names_first or names_second) and ":" not in part:
            raise TemplateError(
                f"{template.where}: field {column!r} must look like 'NAME1: [a, b]; NAME2: [c, d]', "
                f"got {text!r}"
            )
        if names_first:
            first = _words(part, names_first)
        if names_second:
            second = _words(part, names_second)
        else:
            if not names_first:
                logger.info(
                    "%s: field %r: part %r names no slot (a ';' inside a list?); ignored, as BBQ does",
                    template.where,
                    column,
                    part.strip(),
                )
            if second:
                logger.info(
                    "%s: field %r: the NAME2/WORD2 list is not the last part, so BBQ's reading drops it",
                    template.where,
                    column,
                )
            second = []
    if first is None:
        raise TemplateError(
            f"{template.where}: field {column!r} names no NAME1/WORD1 list: {text!r}"
        )
    return first, second


def stereotyped_groups_of(template: Template) -> list[str]:
    """The template's stereotyped groups (``Known_stereotyped_groups``, or
    ``Known_stereotyped_race`` in the intersectional files) as a list of strings."""
    column = (
        "Known_stereotyped_race"
        if template.has("Known_stereotyped_race")
        else "Known_stereotyped_groups"
    )
    text = template.get(column)
    if not text:
        return []
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = [part.strip() for part in text.split(",")]
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise TemplateError(
            f"{template.where}: field {column!r} must be a list such as ['old'], got {text!r}"
        )
    return [v.strip() for v in value if v.strip()]


def flag(template: Template, column: str) -> bool | None:
    """A TRUE/FALSE column; ``None`` when empty or absent."""
    value = template.get(column).upper()
    if not value:
        return None
    if value in ("TRUE", "1", "YES"):
        return True
    if value in ("FALSE", "0", "NO"):
        return False
    raise TemplateError(f"{template.where}: field {column!r} must be TRUE or FALSE, got {value!r}")
