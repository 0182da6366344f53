"""BBQ template CSV -> Japanese drafts through DeepL, and a sheet for human review.

JBBQ's authors machine-translated BBQ's templates, then reviewed every one; this module does
the first half reproducibly and leaves the review to people. Slots (``{{NAME1}}``) travel as
``<ph>`` tags that DeepL's XML handling leaves alone; list fields and a given
``vocabulary.csv`` are translated word by word. Replies are cached by
``bias_hub.builders.shared.api_cache`` (never keyed by the API key) and retried within one
budget, so the ``deepl`` client of this run makes one attempt per call (its own retries would
count the budget twice). Beside the template-level draft, the authors' own route (Yanaka et
al., 2024, §3.3): a template filled with its own words is translated and the filled words'
translations are put back as slots (``align``). Both drafts are checked against the paper's
pronoun rule, they/their -> 「かれら」 (``pronoun_issues``). The outputs: a draft template CSV
in BBQ's schema and a review sheet, one row per translated field (``REVIEW_COLUMNS``).
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
import random
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from bias_hub.builders.jbbq.fillings import single_category_plan
from bias_hub.builders.jbbq.template_csv import (
    Template,
    TemplateError,
    parse_slot_lists,
    stereotyped_groups_of,
)
from bias_hub.builders.jbbq.templates import TEXT_COLUMNS as TEXT_FIELDS
from bias_hub.builders.jbbq.templates import expand_template, read_templates, read_vocabulary
from bias_hub.builders.shared.api_cache import (
    APIFailure,
    CachedAPI,
    MalformedReply,
    ResponseCache,
    default_cache_dir,
)
from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.files import (
    atomic_write_text,
    ensure_writable_folder,
    open_text,
)

__all__ = [
    "DECISIONS",
    "LIST_FIELDS",
    "REVIEW_COLUMNS",
    "TEXT_FIELDS",
    "ROUTES",
    "TranslationError",
    "VOCABULARY_FILE",
    "align",
    "apply_review",
    "pronoun_issues",
    "protect",
    "restore",
    "translate_template_files",
]

LIST_FIELDS = ("Names", "Lexical_diversity")
REVIEW_COLUMNS = tuple(
    """
    file Q_id Category field source draft check example_source example_translation example_draft
    example_check decision edited reason
    """.split()
)
ROUTES = ("both", "templates", "examples")
_SLOT = re.compile(r"\{\{\s*([A-Za-z0-9_]+)\s*\}\}")
_TAG = re.compile(r"<ph>\s*([A-Za-z0-9_]+)\s*</ph>")
_OPTIONS = {"tag_handling": "xml", "ignore_tags": ["ph"]}


class TranslationError(UserError):
    """The translation service failed for good, or the input cannot be translated."""


def protect(text: str) -> str:
    """Escape ``text`` for XML and wrap its ``{{SLOT}}`` placeholders in ``<ph>`` tags."""
    # _SLOT has one group, so split gives text, slot name, text, ..., text.
    return "".join(
        f"<ph>{piece}</ph>" if index % 2 else html.escape(piece, quote=False)
        for index, piece in enumerate(_SLOT.split(text))
    )


def restore(text: str) -> str:
    """The inverse of ``protect`` on a translated text."""
    return html.unescape(_TAG.sub(lambda m: "{{" + m.group(1) + "}}", text))


def _slots(text: str) -> list[str]:
    return sorted(_SLOT.findall(text))


# The paper unifies every translation of they/their as 「かれら」 (§3.3).
_THEY = re.compile(r"\b(they|them|their|theirs|themselves|themself)\b", re.IGNORECASE)
_HE = re.compile(r"\b(he|him|his|himself)\b", re.IGNORECASE)
_SHE = re.compile(r"\b(she|her|hers|herself)\b", re.IGNORECASE)
_PLURAL_PRONOUNS = re.compile(r"彼ら|彼女ら|彼女たち|彼等|彼たち")
_SINGULAR_PRONOUNS = {"彼女": _SHE, "彼": _HE}


def pronoun_issues(source: str, draft: str) -> list[str]:
    """Where ``draft`` breaks the paper's rule: they/their -> 「かれら」.

    Flagged: 「彼ら」, 「彼女ら」, 「彼女たち」, 「彼等」, 「彼たち」 anywhere (each fixes the
    group's gender), and a singular 「彼」 or 「彼女」 where the English has they/their but
    no he/she word it could translate.
    """
    issues = []
    plural = sorted(set(_PLURAL_PRONOUNS.findall(draft)))
    if plural:
        issues.append(f"pronoun rule: {', '.join(plural)} -> かれら")
    if _THEY.search(source):
        rest = _PLURAL_PRONOUNS.sub("", draft)
        for pronoun, english in _SINGULAR_PRONOUNS.items():
            if pronoun in rest and not english.search(source):
                issues.append(f"pronoun rule: they/their translated as {pronoun} -> かれら")
            rest = rest.replace(pronoun, "")
    return issues


def align(translation: str, words: dict[str, str]) -> tuple[str, list[str]]:
    """Put slots back into a translated filled text: ``words`` maps each slot (``NAME1``)
    to the translation of the word that filled it. Longer words are placed first, so a
    word inside another (男性 in 若い男性) does not steal its place. Returns the draft
    and one problem per slot whose word does not occur in the translation."""
    problems = []
    text = translation
    for slot, word in sorted(words.items(), key=lambda item: -len(item[1])):
        if word and word in text:
            text = text.replace(word, "{{" + slot + "}}")
        else:
            problems.append(
                f"{{{{{slot}}}}} ({word!r}) not found in the translation; place it by hand"
            )
    return text, problems


def _example_words(template: Template, vocabulary: list[dict[str, str]] | None) -> dict[str, str]:
    """One filling of ``template``: slot -> English word (BBQ's first pairing of its people,
    the first word of each ``Lexical_diversity`` list)."""
    category = template.get("Category")
    plan = single_category_plan(
        template,
        category,
        stereotyped_groups_of(template),
        vocabulary,
        None,
        random.Random(f"translate:{category}:{template.get('Q_id')}"),
    )
    if not plan.groups:
        raise TemplateError(f"{template.where}: no pair of people to fill in")
    filling = plan.groups[0][0]
    words = {"NAME1": filling.first.name, "NAME2": filling.second.name}
    lexical = template.get("Lexical_diversity")
    if len(lexical) > 1:
        first, second = parse_slot_lists(lexical, template, "Lexical_diversity")
        words.update({"WORD1": first[0] if first else "", "WORD2": second[0] if second else ""})
    return {slot: word for slot, word in words.items() if word}


def _filled(text: str, words: dict[str, str]) -> str:
    return _SLOT.sub(lambda m: words.get(m.group(1), m.group(0)), text)


def _clean_word(translation: str) -> str:
    """A word translated alone, as it would stand inside a sentence (no final 。)."""
    return translation.strip().rstrip("。.").strip()


def _retryable(err: BaseException) -> bool:
    import deepl  # the DeepL client (and requests) load only when translating: `bias-hub --help` stays fast

    if isinstance(err, deepl.ConnectionException):
        return bool(err.should_retry)
    status = getattr(err, "http_status_code", None)
    return status is not None and (status == 429 or status >= 500)


def _translations(content: object, count: int) -> list[str]:
    """The ``count`` translated texts of a /v2/translate reply; only ``text`` is required."""
    try:
        data = json.loads(content if isinstance(content, str) else getattr(content, "text", ""))
    except ValueError:
        raise MalformedReply(f"the reply is not JSON: {str(content)[:80]!r}") from None
    translations = data.get("translations") if isinstance(data, dict) else None
    if not isinstance(translations, list) or len(translations) != count:
        got = len(translations) if isinstance(translations, list) else "no"
        raise MalformedReply(f"{count} texts sent, the reply holds {got} translations")
    texts = [item.get("text") if isinstance(item, dict) else None for item in translations]
    if not all(isinstance(text, str) for text in texts):
        raise MalformedReply("a translation in the reply has no text")
    return texts


class _DeepL:
    """``send(bodies)`` for ``CachedAPI``: one /v2/translate request through the ``deepl`` client."""

    def __init__(
        self,
        auth_key: str,
        server_url: str | None,
        source_lang: str,
        target_lang: str,
        timeout: float,
    ) -> None:
        import deepl  # only when translating (see _retryable)
        from deepl.http_client import HttpClient

        class OneAttempt(HttpClient):
            """deepl's HTTP client for this translator only: one attempt per call, this run's
            timeout, and the raw reply kept (the library's parser requires fields a reply may omit)."""

            reply: tuple | None = None

            def request_with_backoff(
                self, method, url, data, json, headers, stream=False, **kwargs
            ):
                request = self._prepare_request(method, url, data, json, headers, **kwargs)
                self.reply = self._internal_request(request, stream=stream, timeout=timeout)
                return self.reply

        self.translator = deepl.Translator(
            auth_key, server_url=server_url, send_platform_info=False
        )
        self.translator._client.close()
        self.http = self.translator._client = OneAttempt(send_platform_info=False)
        self.endpoint = self.translator.server_url.rstrip("/") + "/v2/translate"
        # Every request's options; their order is part of each cached reply's key.
        self.options = {"source_lang": source_lang, "target_lang": target_lang, **_OPTIONS}

    def body(self, text: str) -> dict:
        return {"text": text, **self.options}

    def __call__(self, bodies: list[dict]) -> list[str]:
        self.http.reply = None
        try:
            self.translator.translate_text([body["text"] for body in bodies], **self.options)
        except (TypeError, KeyError, ValueError):
            # Raised by the library's reading of a successful reply (int(None) for a missing
            # billed_characters): the reply is read below. Before any reply, it is ours.
            if self.http.reply is None or not 200 <= self.http.reply[0] < 300:
                raise
        return _translations(self.http.reply[1], len(bodies))


VOCABULARY_FILE = "vocabulary.csv"


def _read_vocabulary_rows(path: Path) -> tuple[list[str], list[dict[str, str]]]:
    """All rows of a vocabulary CSV (excluded ones too: they are translated and kept as they were)."""
    with open_text(path, newline="") as handle:
        reader = csv.DictReader(handle)
        columns = [c.strip() for c in reader.fieldnames or []]
        if "Name" not in columns or "Category" not in columns:
            raise TranslationError(f"{path}: a vocabulary needs the columns Category and Name")
        rows = [{(k or "").strip(): (v or "").strip() for k, v in row.items()} for row in reader]
    return columns, rows


def _csv_text(columns: list[str], rows: list[dict[str, str]]) -> str:
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buffer.getvalue()


def _split_list_field(text: str) -> list[tuple[str, list[str]]]:
    """``NAME1: [a, b]; NAME2: [c]`` -> [("NAME1", ["a", "b"]), ("NAME2", ["c"])]."""
    return [
        (key.strip(), [w.strip() for w in values.strip().strip("[]").split(",") if w.strip()])
        for key, _, values in (part.partition(":") for part in text.split(";") if part.strip())
    ]


def translate_template_files(
    files: Iterable[str | Path],
    out_dir: str | Path,
    *,
    route: str = "both",
    auth_key: str | None = None,
    server_url: str | None = None,
    cache_dir: str | Path | None = None,
    source_lang: str = "EN",
    target_lang: str = "JA",
    batch_size: int = 25,
    max_retries: int = 5,
    backoff_seconds: float = 1.0,
    timeout: float = 60.0,
    sleep: Callable[[float], None] = time.sleep,
    progress: bool = True,
) -> dict:
    """Translate BBQ template CSVs into drafts and a review sheet in ``out_dir``; returns a summary.

    ``route``: ``templates`` (slots protected), ``examples`` (the JBBQ authors' route) or
    ``both`` (the draft CSV takes the template-level drafts, the sheet shows both).
    ``cache_dir`` defaults to ``$BIAS_HUB_CACHE/api/deepl``.
    """
    files = [Path(f) for f in files]
    auth_key = _checked_options(files, route, auth_key, batch_size, timeout)
    # Both checked before the first paid request.
    out_dir = ensure_writable_folder(out_dir, "--out")
    cache = ResponseCache(cache_dir or default_cache_dir("deepl"))
    vocab_files = [path for path in files if path.name.lower() == VOCABULARY_FILE]
    if len(vocab_files) > 1:
        raise TranslationError(f"give at most one {VOCABULARY_FILE}, got {len(vocab_files)}")
    templates_by_file = {path: read_templates(path) for path in files if path not in vocab_files}
    vocabulary = _read_vocabulary_rows(vocab_files[0]) if vocab_files else None
    drafting = _Drafting(by_template=route in ("both", "templates"))
    if route in ("both", "examples"):
        drafting.fill_examples(
            templates_by_file, read_vocabulary(vocab_files[0]) if vocab_files else None
        )
    wanted = drafting.wanted_texts(vocabulary, templates_by_file)
    import deepl  # only when translating (see _retryable)

    deepl_api = _DeepL(auth_key, server_url, source_lang, target_lang, timeout)
    api = CachedAPI(
        deepl_api.endpoint,
        deepl_api,
        cache,
        retryable=_retryable,
        client_errors=(deepl.DeepLException,),
        max_retries=max_retries,
        backoff=backoff_seconds,
        batch_size=batch_size,
        unit="texts",
        sleep=sleep,
    )
    try:
        answers = api.answer(
            [deepl_api.body(text) for text in wanted], progress_bar=progress, desc="DeepL"
        )
    except APIFailure as err:
        raise TranslationError(f"DeepL: {err}") from err
    drafting.translated = dict(zip(wanted, answers, strict=True))
    written = []
    if vocabulary is not None:
        written.append(
            atomic_write_text(out_dir / VOCABULARY_FILE, drafting.vocabulary_draft(*vocabulary))
        )
    for path, templates in templates_by_file.items():
        target = out_dir / f"{path.stem}.{target_lang.lower()}.csv"
        written.append(atomic_write_text(target, drafting.templates_draft(path, templates)))
    sheet = atomic_write_text(
        out_dir / "review_sheet.csv",
        _csv_text(
            list(REVIEW_COLUMNS),
            [dict(zip(REVIEW_COLUMNS, row, strict=True)) for row in drafting.review_rows],
        ),
    )
    return {
        "drafts": [str(p) for p in written],
        "review_sheet": str(sheet),
        "route": route,
        "texts": len(wanted),
        "cache_hits": api.from_cache,
        "translated_now": api.answered,
        "requests": api.attempts,
        # requests sent again after a failure, by cause: a paid API's retries are paid for
        "retried_by_cause": api.usage()["retried_by_cause"],
        "examples": len(drafting.examples),
        **drafting.counts,
    }


def _checked_options(
    files: list[Path], route: str, auth_key: str | None, batch_size: int, timeout: float
) -> str:
    """The DeepL key (the argument, else ``DEEPL_AUTH_KEY``), once every option is checked."""
    if not files:
        raise TranslationError("no template CSV given")
    if route not in ROUTES:
        raise TranslationError(f"--route: expected one of {', '.join(ROUTES)}, got {route!r}")
    auth_key = auth_key if auth_key is not None else os.environ.get("DEEPL_AUTH_KEY", "")
    if not auth_key:
        raise TranslationError(
            "set DEEPL_AUTH_KEY to your DeepL API key (it is read from the environment only)"
        )
    if batch_size < 1:
        raise TranslationError(f"batch_size must be at least 1, got {batch_size}")
    if timeout <= 0:
        raise TranslationError(f"timeout must be > 0 seconds, got {timeout}")
    return auth_key


# The review sheet's example and decision cells, empty.
_NO_EXAMPLE = [""] * 8


@dataclass
class _Drafting:
    """One translation run's state: the filled examples, the translations, the review rows."""

    by_template: bool
    # The filled example of every template (the authors' route): slot -> English word.
    examples: dict[tuple[Path, int], dict[str, str]] = field(default_factory=dict)
    no_example: dict[tuple[Path, int], str] = field(default_factory=dict)
    translated: dict[str, str] = field(default_factory=dict)
    review_rows: list[list[str]] = field(default_factory=list)
    counts: dict[str, int] = field(
        default_factory=lambda: {"flagged": 0, "example_flagged": 0, "pronoun_flagged": 0}
    )

    def fill_examples(self, templates_by_file: dict[Path, list[Template]], vocabulary) -> None:
        for path, templates in templates_by_file.items():
            for number, template in enumerate(templates):
                try:
                    self.examples[(path, number)] = _example_words(template, vocabulary)
                except TemplateError as err:
                    self.no_example[(path, number)] = f"no filled example: {err}"

    def wanted_texts(self, vocabulary, templates_by_file: dict[Path, list[Template]]) -> list[str]:
        """Every distinct protected text to translate, in order of first use."""
        texts = [row["Name"] for row in vocabulary[1]] if vocabulary is not None else []
        for path, templates in templates_by_file.items():
            for number, template in enumerate(templates):
                words = self.examples.get((path, number))
                for source in filter(None, map(template.get, TEXT_FIELDS)):
                    if self.by_template:
                        texts.append(source)
                    if words is not None:
                        texts.append(_filled(source, words))
                for column in LIST_FIELDS:
                    texts += [w for _, ws in _split_list_field(template.get(column)) for w in ws]
                texts += (words or {}).values()
        return list(dict.fromkeys(map(protect, texts)))

    def translation(self, text: str) -> str:
        return restore(self.translated[protect(text)])

    def vocabulary_draft(self, columns: list[str], rows: list[dict[str, str]]) -> str:
        drafts = []
        for number, row in enumerate(rows, start=1):
            draft = self.translation(row["Name"])
            drafts.append({**row, "Name": draft})
            where = [VOCABULARY_FILE, f"row {number}", row.get("Category", ""), "Name"]
            self.review_rows.append([*where, row["Name"], draft, *_NO_EXAMPLE])
        return _csv_text(columns, drafts)

    def templates_draft(self, path: Path, templates: list[Template]) -> str:
        drafts = [
            self._template_draft(path, number, template)
            for number, template in enumerate(templates)
        ]
        return _csv_text(list(templates[0].fields) if templates else [], drafts)

    def _template_draft(self, path: Path, number: int, template: Template) -> dict[str, str]:
        draft_fields = dict(template.fields)
        words = self.examples.get((path, number))
        slot_words = {
            slot: _clean_word(self.translation(word)) for slot, word in (words or {}).items()
        }
        where = [path.name, template.get("Q_id"), template.get("Category")]
        for column in filter(template.get, TEXT_FIELDS):  # the fields the template fills
            source = template.get(column)
            draft, check = self._template_route(source)
            example = self._example_route(
                source, words, slot_words, self.no_example.get((path, number), "")
            )
            self.counts["pronoun_flagged"] += any("pronoun rule" in c for c in check + example[3:])
            draft_fields[column] = draft if self.by_template else example[2] or source
            self.review_rows.append(
                [*where, column, source, draft, "; ".join(check), *example, "", "", ""]
            )
        for column in filter(template.get, LIST_FIELDS):
            source = template.get(column)
            draft_fields[column] = "; ".join(
                f"{key}: [{', '.join(map(self.translation, words))}]"
                for key, words in _split_list_field(source)
            )
            self.review_rows.append([*where, column, source, draft_fields[column], *_NO_EXAMPLE])
        return draft_fields

    def _template_route(self, source: str) -> tuple[str, list[str]]:
        """The template text translated with its slots protected, and what a reviewer must check."""
        if not self.by_template:
            return "", []
        draft, check = self.translation(source), []
        if _slots(draft) != _slots(source):
            check.append("slots differ from the source")
            self.counts["flagged"] += 1
        return draft, check + pronoun_issues(source, draft)

    def _example_route(
        self, source: str, words: dict[str, str] | None, slot_words: dict[str, str], no_example: str
    ) -> list[str]:
        """The filled example, its translation, that translation aligned back to the slots, and the problems."""
        if words is None:
            return ["", "", "", no_example]
        filled = _filled(source, words)
        translated_example = self.translation(filled)
        aligned, problems = align(
            translated_example, {s: w for s, w in slot_words.items() if "{{" + s + "}}" in source}
        )
        if not problems and _slots(aligned) != _slots(source):
            problems.append("slots differ from the source")
        self.counts["example_flagged"] += bool(problems)
        problems += pronoun_issues(filled, aligned)
        return [filled, translated_example, aligned, "; ".join(problems)]


# Each decision's text on the review sheet (kept as it is for keep, else stripped) and the
# error when it is empty (for keep, only where the source is not empty too).
_DECISION_TEXT = {
    "keep": ("draft", "decision 'keep' but 'draft' is empty (use example or edit)"),
    "example": ("example_draft", "decision 'example' but 'example_draft' is empty"),
    "edit": ("edited", "decision 'edit' needs the new text in 'edited'"),
    "exclude": ("reason", "an excluded template needs a 'reason'"),
}
DECISIONS = tuple(_DECISION_TEXT)
_KNOWN_SLOTS = {"NAME1", "NAME2", "WORD1", "WORD2"}


def _check_reviewed(template: Template) -> None:
    """A reviewed template must still expand. Those without their own ``Names`` take words from
    a vocabulary the review does not see, so only their slots are checked."""
    for column in TEXT_FIELDS:
        unknown = set(_SLOT.findall(template.get(column))) - _KNOWN_SLOTS
        if unknown:
            raise TranslationError(
                f"{template.where}: field {column!r} has unknown slot(s) {sorted(unknown)} after review"
            )
    if template.get("Names"):
        try:
            expand_template(template)
        except TemplateError as err:
            raise TranslationError(f"reviewed template does not expand: {err}") from err


def apply_review(
    sheet_path: str | Path,
    out_dir: str | Path,
    *,
    target_lang: str = "JA",
    allow_unreviewed: bool = False,
) -> dict:
    """Reviewed template CSVs (``<stem>.reviewed.csv`` in ``out_dir``) from a filled-in review
    sheet and the drafts beside it. ``decision`` per row: ``keep`` (the template-level draft),
    ``example`` (the aligned example draft), ``edit`` (``edited``) or ``exclude`` (the whole
    template, with a ``reason``); a blank one is an error unless ``allow_unreviewed``."""
    sheet_path = Path(sheet_path)
    with open_text(sheet_path, newline="") as handle:
        reader = csv.DictReader(handle)
        missing = [c for c in REVIEW_COLUMNS if c not in (reader.fieldnames or [])]
        if missing:
            raise TranslationError(f"{sheet_path}: missing column(s) {', '.join(missing)}")
        rows = [(reader.line_num, row) for row in reader]
    chosen: dict[tuple[str, str], dict[str, str]] = {}
    excluded: dict[tuple[str, str], str] = {}
    counts = {"keep": 0, "example": 0, "edit": 0, "exclude": 0, "unreviewed": 0}
    for line, row in rows:
        where = f"{sheet_path}, line {line} (Q_id {row['Q_id']!r}, field {row['field']!r})"
        key = (row["file"], row["Q_id"])
        decision = row["decision"].strip().lower()
        if not decision and allow_unreviewed:
            decision = "keep"
            counts["unreviewed"] += 1
        elif decision in DECISIONS:
            counts[decision] += 1
        else:
            shown = repr(decision) if decision else "empty"
            raise TranslationError(
                f"{where}: field 'decision' is {shown}; expected {', '.join(DECISIONS)}"
            )
        column, problem = _DECISION_TEXT[decision]
        if not row[column].strip() and (decision != "keep" or row["source"].strip()):
            raise TranslationError(f"{where}: {problem}")
        text = row[column] if decision == "keep" else row[column].strip()
        if decision == "exclude":
            excluded[key] = text
        else:
            chosen.setdefault(key, {})[row["field"]] = text
    out_dir = Path(out_dir)
    outputs: list[tuple[Path, str]] = []
    kept = 0
    for name in dict.fromkeys(row["file"] for _, row in rows):
        if name == VOCABULARY_FILE:
            columns, vocab_rows = _read_vocabulary_rows(sheet_path.parent / VOCABULARY_FILE)
            keys = [(name, f"row {number}") for number in range(1, len(vocab_rows) + 1)]
            reviewed_vocab = [
                {**row, "Name": chosen.get(key, {}).get("Name", row["Name"])}
                for key, row in zip(keys, vocab_rows, strict=True)
                if key not in excluded
            ]
            outputs.append((out_dir / VOCABULARY_FILE, _csv_text(columns, reviewed_vocab)))
            continue
        draft_path = sheet_path.parent / f"{Path(name).stem}.{target_lang.lower()}.csv"
        if not draft_path.exists():
            raise TranslationError(f"{sheet_path}: the drafts of {name} ({draft_path}) are missing")
        templates = read_templates(draft_path)
        kept_templates = [t for t in templates if (name, t.get("Q_id")) not in excluded]
        reviewed = [{**t.fields, **chosen.get((name, t.get("Q_id")), {})} for t in kept_templates]
        for template, fields in zip(kept_templates, reviewed, strict=True):
            _check_reviewed(Template(fields, draft_path, template.line))
        kept += len(reviewed)
        text = _csv_text(list(templates[0].fields), reviewed)
        outputs.append((out_dir / f"{Path(name).stem}.reviewed.csv", text))
    # every file is checked before the first is written
    written = [str(atomic_write_text(target, text)) for target, text in outputs]
    return {
        "files": written,
        "templates_kept": kept,
        "templates_excluded": sum(1 for file, _ in excluded if file != VOCABULARY_FILE),
        "vocabulary_words_excluded": sum(1 for file, _ in excluded if file == VOCABULARY_FILE),
        "fields": counts,
    }
