"""BBQ's generation procedure for template CSVs, seeded: the template expander.

A template row (columns as in BBQ's ``templates/new_templates - <Category>.csv``) holds an
ambiguous context, a disambiguating continuation, a negative and a non-negative question, and
which slot answers each once the context is disambiguated. ``fillings`` (the single categories)
and ``intersectional`` (Race_x_gender, Race_x_SES) decide who fills ``{{NAME1}}``/``{{NAME2}}``
(and ``{{GEN?}}``/``{{OCC?}}``); ``{{WORD1}}``/``{{WORD2}}`` take one word each from the
``Lexical_diversity`` lists, drawn once per pair and shared by its swapped filling. Every filling
gives four rows (neg/nonneg x ambig/disambig, the disambiguated context being the ambiguous one
followed by the disambiguating one), its three answers (the two people and an "unknown"
expression drawn from a list) shuffled once; ``example_id`` counts up within each category.
Several rows under one ``Q_id`` (versions a/b, Gender_identity's two rows of ``Q_id`` 7) are
each expanded, as BBQ does; a repeated (``Q_id``, version) is logged.

English text rules (``english=True``), as BBQ's generator applies them after filling: "lesbian
man" -> "lesbian woman", "Latino woman" -> "Latina woman", and, when a filled word starts with a
vowel, " a" before a vowel -> " an" (" an European" back to " a European"); like BBQ's rule it
needs a space before the article, so a sentence-initial "A" stays ("A elderly woman", as in 84
of BBQ's Age contexts).

BBQ draws with Python's global, unseeded ``random``; here every draw comes from a
``random.Random`` seeded with (seed, category, Q_id, version, repeat), so the output is the same
on every run and independent of template order.
"""

from __future__ import annotations

import logging
import random
import re

from bias_hub.builders.jbbq.fillings import (
    Filling,
    Person,
    single_category_plan,
)
from bias_hub.builders.jbbq.intersectional import INTERSECTIONAL_CATEGORIES, intersectional_plan
from bias_hub.builders.jbbq.schema import ANSWER_KEYS, stereotyped_answer
from bias_hub.builders.jbbq.template_csv import (
    BASE_COLUMNS,
    Template,
    TemplateError,
    flag,
    parse_slot_lists,
    read_proper_names,
    read_templates,
    read_vocabulary,
    stereotyped_groups_of,
)
from bias_hub.builders.shared.console import progress

__all__ = [
    "ENGLISH_UNKNOWN_OPTIONS",
    "INTERSECTIONAL_CATEGORIES",
    "JAPANESE_UNKNOWN_OPTIONS",
    "Filling",
    "Person",
    "Template",
    "TemplateError",
    "expand_template",
    "expand_templates",
    "read_proper_names",
    "read_templates",
    "read_vocabulary",
    "stereotyped_groups_of",
]

# BBQ's ten English expressions of "cannot be determined".
ENGLISH_UNKNOWN_OPTIONS = (
    "Unknown",
    "Cannot be determined",
    "Can't be determined",
    "Not answerable",
    "Not known",
    "Not enough info",
    "Not enough information",
    "Cannot answer",
    "Can't answer",
    "Undetermined",
)
# Ours: Japanese ways of saying the context does not tell; 未定 first, the one JBBQ uses most
# and the one its UnkP prompt names (Yanaka et al., 2024, footnote 4).
JAPANESE_UNKNOWN_OPTIONS = (
    "未定",
    "不明",
    "わからない",
    "判断できない",
    "答えられない",
    "情報が足りない",
    "特定できない",
    "どちらとも言えない",
    "決められない",
)
TEXT_COLUMNS = (
    "Ambiguous_Context",
    "Disambiguating_Context",
    "Question_negative_stereotype",
    "Question_non_negative",
    "Answer_negative",
    "Answer_non_negative",
)
_SLOT = re.compile(r"\{\{[^}]*\}\}")
_ARTICLE = re.compile(r"(\s[aA])(\s[aeiouAEIOU])")
_VOWEL_START = re.compile(r"^[aeiou]", re.IGNORECASE)
_ENGLISH_FIXES = (("lesbian man", "lesbian woman"), ("Latino woman", "Latina woman"))

logger = logging.getLogger(__name__)


def _fill(text: str, filling: Filling, word1: str, word2: str, english: bool) -> str:
    """Fill the slots; a slot without a value stays, so validation reports it."""
    first, second = filling.first, filling.second
    text = text.replace("{{NAME1}}", first.name).replace("{{NAME2}}", second.name)
    extra = {"GEN1": first.extra, "OCC1": first.extra, "GEN2": second.extra, "OCC2": second.extra}
    for slot, value in {**extra, "WORD1": word1, "WORD2": word2}.items():
        if value:
            text = text.replace(f"{{{{{slot}}}}}", value)
    if english:
        for wrong, right in _ENGLISH_FIXES:
            text = text.replace(wrong, right)
        if any(
            _VOWEL_START.match(word)
            for word in (first.name, second.name, first.extra, second.extra)
        ):
            text = _ARTICLE.sub(r"\1n\2", text).replace(" an European", " a European")
    return text


def _answer_slot(template: Template, column: str) -> str:
    text = template.get(column)
    slots = [slot for slot in ("{{NAME1}}", "{{NAME2}}") if slot in text]
    if len(slots) != 1:
        raise TemplateError(
            f"{template.where}: field {column!r} must contain exactly one of {{{{NAME1}}}} and "
            f"{{{{NAME2}}}}, got {text!r}"
        )
    return slots[0]


def expand_template(
    template: Template,
    vocabulary: list[dict[str, str]] | None = None,
    *,
    proper_names: list[dict[str, str]] | None = None,
    unknown_options: tuple[str, ...] = JAPANESE_UNKNOWN_OPTIONS,
    seed: int = 0,
    context_separator: str = "",
    english: bool = False,
    first_example_id: int = 0,
    repeat: int = 0,
) -> list[dict]:
    """The rows one template yields, in the schema of ``bias_hub.builders.jbbq.schema.FEATURES``.

    ``english`` applies BBQ's English text rules (see the module docstring);
    ``repeat`` counts earlier templates with the same category, Q_id and version
    (it keeps their draws apart).
    """
    category = template.get("Category")
    _check_columns(template, unknown_options)
    rng = random.Random(
        f"{seed}:{category}:{template.get('Q_id')}:{template.get('version')}:{repeat}"
    )
    expansion = _Expansion(template, stereotyped_groups_of(template), english, context_separator)
    planner = intersectional_plan if category in INTERSECTIONAL_CATEGORIES else single_category_plan
    plan = planner(template, category, expansion.targets, vocabulary, proper_names, rng)
    lexical = template.get("Lexical_diversity")
    words1, words2 = (
        parse_slot_lists(lexical, template, "Lexical_diversity") if len(lexical) > 1 else ([], [])
    )
    expansion.describe()
    rows: list[dict] = []
    for group in plan.groups:
        word1 = rng.choice(words1) if words1 else ""
        word2 = rng.choice(words2) if words2 else ""
        fillings = list(group) + ([f.swapped() for f in group] if plan.swap else [])
        for filling in fillings:
            unknown = rng.choice(unknown_options)
            rows += expansion.rows(
                filling, word1, word2, unknown, rng, first_example_id + len(rows)
            )
    return rows


def _check_columns(template: Template, unknown_options: tuple[str, ...]) -> None:
    for column in (c for c in BASE_COLUMNS if c != "Lexical_diversity"):
        if not template.get(column):
            raise TemplateError(f"{template.where}: field {column!r} is empty")
    if not unknown_options:
        raise TemplateError("unknown_options is empty")


class _Expansion:
    """One template's fixed parts (checked answer slots, metadata) and the four rows of one filling."""

    def __init__(
        self, template: Template, targets: list[str], english: bool, context_separator: str
    ) -> None:
        self.template, self.targets = template, targets
        self.english, self.context_separator = english, context_separator
        self.neg_slot = _answer_slot(template, "Answer_negative")
        self.nonneg_slot = _answer_slot(template, "Answer_non_negative")
        if self.neg_slot == self.nonneg_slot:
            raise TemplateError(
                f"{template.where}: fields 'Answer_negative' and 'Answer_non_negative' name the same "
                f"slot {self.neg_slot}; they must name different people"
            )

    def describe(self) -> None:
        """The metadata every row shares (read after the plan, as the expander always did)."""
        template = self.template
        self.source = template.get("Source") or template.get("Notes")
        self.metadata_version = template.fields.get("version", "None")  # as given, even empty
        self.base = {
            "question_index": template.get("Q_id"),
            "category": template.get("Category"),
            "is_additional": bool(flag(template, "Is_additional")),
        }

    def filled(self, filling: Filling, word1: str, word2: str) -> dict[str, str]:
        """Every text column with its slots filled; a slot left over is an error."""
        filled = {
            column: _fill(
                self.template.fields.get(column) or "", filling, word1, word2, self.english
            )
            for column in TEXT_COLUMNS
        }
        for column, text in filled.items():
            leftover = _SLOT.findall(text)
            if leftover:
                raise TemplateError(
                    f"{self.template.where}: field {column!r} has unfilled slot(s) "
                    f"{', '.join(leftover)} after filling: {text!r}"
                )
        return filled

    def answers(self, filled: dict[str, str], filling: Filling, unknown: str, rng: random.Random):
        """The three answers in a shuffled order: ``(texts, answer_info)``."""
        by_slot: dict[str, Person] = {"{{NAME1}}": filling.first, "{{NAME2}}": filling.second}
        answers = [
            (filled["Answer_negative"], by_slot[self.neg_slot]),
            (filled["Answer_non_negative"], by_slot[self.nonneg_slot]),
            (unknown, None),
        ]
        rng.shuffle(answers)
        texts = [text for text, _ in answers]
        if len(set(texts)) != 3:
            raise TemplateError(
                f"{self.template.where}: two answers read the same after filling: {texts}"
            )
        answer_info = [
            {"text": unknown, "group": "unknown"}
            if person is None
            else {"text": person.text, "group": person.group}
            for text, person in answers
        ]
        return texts, answer_info

    def rows(
        self,
        filling: Filling,
        word1: str,
        word2: str,
        unknown: str,
        rng: random.Random,
        first_id: int,
    ) -> list[dict]:
        """The four rows of one filling: negative / non-negative question x ambiguous / disambiguated."""
        filled = self.filled(filling, word1, word2)
        texts, answer_info = self.answers(filled, filling, unknown, rng)
        unknown_index = texts.index(unknown)
        ambiguous = filled["Ambiguous_Context"].strip()
        disambiguated = (
            ambiguous + self.context_separator + filled["Disambiguating_Context"]
        ).strip()
        metadata = {
            "subcategory": filling.subcategory or self.template.get("Subcategory") or "None",
            "stereotyped_groups": self.targets,
            "version": self.metadata_version,
            "source": _fill(self.source, filling, word1, word2, self.english),
        }
        rows = []
        for polarity, question, answer_index in (
            ("neg", filled["Question_negative_stereotype"], texts.index(filled["Answer_negative"])),
            ("nonneg", filled["Question_non_negative"], texts.index(filled["Answer_non_negative"])),
        ):
            stereotyped = stereotyped_answer(
                answer_info, polarity, self.targets, unknown_index, self.base["category"]
            )
            for condition, context, label in (
                ("ambig", ambiguous, unknown_index),
                ("disambig", disambiguated, answer_index),
            ):
                rows.append(
                    {
                        "example_id": first_id + len(rows),
                        **self.base,
                        "question_polarity": polarity,
                        "context_condition": condition,
                        "answer_info": answer_info,
                        "additional_metadata": metadata,
                        "context": context,
                        "question": question.strip(),
                        **dict(zip(ANSWER_KEYS, texts, strict=True)),
                        "label": label,
                        "unknown_label": unknown_index,
                        "stereotyped_label": stereotyped,
                    }
                )
        return rows


def expand_templates(
    templates: list[Template],
    vocabulary: list[dict[str, str]] | None = None,
    **kwargs,
) -> list[dict]:
    """Expand every template; ``example_id`` counts up within each category, as in BBQ."""
    rows: list[dict] = []
    next_id: dict[str, int] = {}
    seen: dict[tuple[str, str, str], int] = {}
    for template in progress(templates, desc="expanding templates", unit="template"):
        key = (template.get("Category"), template.get("Q_id"), template.get("version"))
        repeat = seen.get(key, 0)
        if repeat:
            logger.info(
                "%s: Q_id %r%s appears %d times in category %r; each row is expanded, as BBQ does",
                template.where,
                key[1],
                f" version {key[2]!r}" if key[2] else "",
                repeat + 1,
                key[0],
            )
        seen[key] = repeat + 1
        start = next_id.get(key[0], 0)
        expanded = expand_template(
            template, vocabulary, first_example_id=start, repeat=repeat, **kwargs
        )
        next_id[key[0]] = start + len(expanded)
        rows.extend(expanded)
    return rows
