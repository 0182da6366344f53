"""Who fills ``{{NAME1}}`` and ``{{NAME2}}``: BBQ's pairing rules for its single categories.

A template's words come, in BBQ's order of precedence, from

1. **proper names** (``Proper_nouns_only`` TRUE), from ``vocabulary_proper_names.csv``:
   Race_ethnicity: five first names of the stereotyped ethnicities, each with a
   last name of its ethnicity, each paired with five first + last names of the
   same gender and an ethnicity outside the stereotyped ones (groups ``F-Black``);
   Gender_identity: five women's first names (``first_only``), each paired with five
   names of another gender (groups ``F``/``M``, after ``NAME?_info`` + ``_`` where
   the template gives one); any other category: six ``first_only`` names, every
   ordered pair;
2. the template's ``Names`` (``NAME1: [a, b]; NAME2: [c]``): every NAME1 x NAME2 pair;
3. the vocabulary rows of the category (of its ``SubCat`` where the template has a
   ``Subcategory``), at most five words drawn:

   * SES: each word with every word of the other ``Info`` (low/high SES);
   * Race_ethnicity, Religion, Nationality, Sexual_orientation (templates naming
     stereotyped groups): each stereotyped-group word (a ``Name`` among
     ``Known_stereotyped_groups``) with five words drawn from the others, so every
     question sets a stereotyped group against a non-target one;
   * otherwise every ordered pair of the drawn words.

   Our extension for vocabularies whose words carry an ``Info`` group (the JBBQ
   sample's ``old``/``nonOld``): where some word's ``Info`` is among the
   stereotyped groups, the words are paired as in the third rule, stereotyped
   ``Info`` against the others. BBQ's own vocabulary never matches it.

Groups (``answer_info``): the ``Info`` of a vocabulary word that has one, else the
template's ``NAME1_info``/``NAME2_info``, else the word itself. Each pair is also
filled in swapped order (groups move with the words) for proper names, for the
four categories above, and for SES occupations, as BBQ does; a ``Swap_names``
column (ours) overrides that per template.

Every draw comes from the ``rng`` the caller seeds; nothing here is global.
"""

from __future__ import annotations

import itertools
import logging
import random
from dataclasses import dataclass

from bias_hub.builders.jbbq.template_csv import Template, TemplateError, flag, parse_slot_lists

__all__ = ["SWAP_CATEGORIES", "Filling", "Person", "Plan", "single_category_plan"]

SWAP_CATEGORIES = frozenset({"Race_ethnicity", "Religion", "Nationality", "Sexual_orientation"})
_MAX_WORDS = 5

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Person:
    """What fills one person slot: ``name`` goes into ``{{NAMEi}}``, ``extra`` (the
    intersectional files' gender or occupation) into ``{{GENi}}``/``{{OCCi}}``."""

    name: str
    group: str
    extra: str = ""

    @property
    def text(self) -> str:
        """The answer's ``answer_info`` text, as BBQ records it."""
        return f"{self.name} {self.extra}" if self.extra else self.name


@dataclass(frozen=True)
class Filling:
    """One filled pair; ``subcategory`` replaces the template's (BBQ's ``intersectional_a`` etc.)."""

    first: Person
    second: Person
    subcategory: str | None = None

    def swapped(self) -> Filling:
        return Filling(self.second, self.first, self.subcategory)


@dataclass(frozen=True)
class Plan:
    """A template's fillings. The fillings of one tuple share one draw of the
    ``Lexical_diversity`` words; ``swap`` says whether each is also filled reversed."""

    groups: list[tuple[Filling, ...]]
    swap: bool


def sample(rng: random.Random, items: list, limit: int = _MAX_WORDS) -> list:
    """At most ``limit`` items, drawn without replacement (all of them, in order, when fewer)."""
    return rng.sample(items, limit) if len(items) > limit else list(items)


def single_category_plan(
    template: Template,
    category: str,
    targets: list[str],
    vocabulary: list[dict[str, str]] | None,
    proper_names: list[dict[str, str]] | None,
    rng: random.Random,
) -> Plan:
    """The fillings of a template of one of BBQ's nine single categories (or JBBQ's)."""
    if flag(template, "Proper_nouns_only"):
        pairs = _proper_name_pairs(template, category, targets, proper_names, rng)
        swap = True
    elif len(template.get("Names")) > 1:
        pairs = _names_pairs(template)
        swap = category in SWAP_CATEGORIES
    else:
        pairs, swap = _vocabulary_pairs(template, category, targets, vocabulary, rng)
    override = flag(template, "Swap_names")
    if not pairs:
        logger.info(
            "%s: no pair of words to fill in; the template yields no questions (as in BBQ)",
            template.where,
        )
    return Plan([(pair,) for pair in pairs], swap if override is None else override)


def _names_pairs(template: Template) -> list[Filling]:
    first, second = parse_slot_lists(template.get("Names"), template, "Names")
    info1, info2 = template.get("NAME1_info"), template.get("NAME2_info")
    return [Filling(Person(a, info1 or a), Person(b, info2 or b)) for a in first for b in second]


def _vocabulary_pairs(
    template: Template,
    category: str,
    targets: list[str],
    vocabulary: list[dict[str, str]] | None,
    rng: random.Random,
) -> tuple[list[Filling], bool]:
    if vocabulary is None:
        raise TemplateError(
            f"{template.where}: field 'Names' is empty, so the words come from the vocabulary, "
            "but no vocabulary.csv was given"
        )
    rows = [row for row in vocabulary if row["Category"] == category]
    if not rows:
        raise TemplateError(
            f"{template.where}: the vocabulary has no rows for category {category!r} "
            "(and field 'Names' is empty)"
        )
    subcategory = template.get("Subcategory")
    if subcategory:
        rows = [row for row in rows if row.get("SubCat", "") == subcategory]
        if not rows:
            raise TemplateError(
                f"{template.where}: the vocabulary has no rows for category {category!r}, SubCat {subcategory!r}"
            )
    words = list(dict.fromkeys(row["Name"] for row in rows))
    if len(words) < 2:
        raise TemplateError(
            f"{template.where}: the vocabulary for {category!r} has fewer than 2 words"
        )
    info = {row["Name"]: row.get("Info", "") for row in rows}
    column_info = (template.get("NAME1_info"), template.get("NAME2_info"))

    def person(word: str, slot: int) -> Person:
        return Person(word, info[word] or column_info[slot] or word)

    chosen = sample(rng, words)
    stereotyped = [w for w in words if w in targets or (info[w] and info[w] in targets)]
    by_info = any(info[w] and info[w] in targets for w in words)
    if category == "SES":
        pairs = [(word, other) for word in chosen for other in words if info[other] != info[word]]
    elif targets and (category in SWAP_CATEGORIES or by_info):
        others = [w for w in words if w not in stereotyped]
        pairs = [
            (word, other) for word in sample(rng, stereotyped) for other in sample(rng, others)
        ]
    else:
        pairs = list(itertools.permutations(chosen, 2))
    swap = subcategory == "Occupation" if category == "SES" else category in SWAP_CATEGORIES
    return [Filling(person(a, 0), person(b, 1)) for a, b in pairs], swap


def _proper_name_pairs(
    template: Template,
    category: str,
    targets: list[str],
    proper_names: list[dict[str, str]] | None,
    rng: random.Random,
) -> list[Filling]:
    if proper_names is None:
        raise TemplateError(
            f"{template.where}: field 'Proper_nouns_only' is TRUE but no vocabulary_proper_names.csv was given"
        )
    if category == "Race_ethnicity":
        return _ethnic_name_pairs(template, targets, proper_names, rng)
    first_only = [row for row in proper_names if row.get("First_last") == "first_only"]
    gender = {row["Name"]: row.get("gender", "") for row in first_only}
    names = list(gender)
    if category == "Gender_identity":
        women = [n for n in names if gender[n] == "F"]
        others = [n for n in names if gender[n] != "F"]
        if not women or not others:
            raise TemplateError(
                f"{template.where}: the proper-name vocabulary needs first_only names of women and of other genders"
            )
        prefix1, prefix2 = template.get("NAME1_info"), template.get("NAME2_info")

        def group(name: str, prefix: str) -> str:
            # BBQ prefixes both names' genders once the template gives NAME1_info.
            return f"{prefix}_{gender[name]}" if prefix1 else gender[name]

        return [
            Filling(Person(woman, group(woman, prefix1)), Person(other, group(other, prefix2)))
            for woman in sample(rng, women)
            for other in sample(rng, others)
        ]
    if len(names) < 2:
        raise TemplateError(
            f"{template.where}: the proper-name vocabulary has fewer than 2 first_only names"
        )
    info1, info2 = template.get("NAME1_info"), template.get("NAME2_info")
    pairs = itertools.permutations(sample(rng, names, 6), 2)  # the names are distinct
    return [Filling(Person(a, info1 or a), Person(b, info2 or b)) for a, b in pairs]


def full_name(
    rng: random.Random, row: dict[str, str], proper_names: list[dict[str, str]], where: str
) -> Person:
    """A ``first`` name row with a last name of its ethnicity drawn; group ``gender-ethnicity``."""
    ethnicity = row.get("ethnicity", "")
    last = [
        r["Name"]
        for r in proper_names
        if r.get("First_last") == "last" and r.get("ethnicity") == ethnicity
    ]
    if not last:
        raise TemplateError(
            f"{where}: the proper-name vocabulary has no last names of ethnicity {ethnicity!r}"
        )
    return Person(
        f"{row['Name']} {rng.choice(list(dict.fromkeys(last)))}",
        f"{row.get('gender', '')}-{ethnicity}",
    )


def _ethnic_name_pairs(
    template: Template, targets: list[str], proper_names: list[dict[str, str]], rng: random.Random
) -> list[Filling]:
    firsts = [row for row in proper_names if row.get("First_last") == "first"]
    pool = [row for row in firsts if row.get("ethnicity") in targets] if targets else firsts
    if not pool:
        raise TemplateError(
            f"{template.where}: the proper-name vocabulary has no 'first' names of the stereotyped "
            f"groups {targets}"
        )
    pairs = []
    for row in sample(rng, pool):
        first = full_name(rng, row, proper_names, template.where)
        others = [
            r
            for r in firsts
            if r.get("ethnicity") not in targets and r.get("gender") == row.get("gender")
        ]
        pairs.extend(
            Filling(first, full_name(rng, other, proper_names, template.where))
            for other in sample(rng, others)
        )
    return pairs
