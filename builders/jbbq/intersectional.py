"""BBQ's intersectional categories, Race_x_gender and Race_x_SES, as its generator fills them.

A template names stereotyped races (``Known_stereotyped_race``) and a second
attribute's stereotyped value (``Known_stereotyped_var2``: ``F``/``M``, or
``lowSES``/``highSES``). Each *target* (a stereotyped race, or a proper name of
one) is set against three kinds of contrast, BBQ's ``intersectional_a/b/c``:

a. the same race with the other value of the second attribute;
b. another race with the same value;
c. another race with the other value.

The second attribute fills ``{{GEN1}}``/``{{GEN2}}`` (or ``{{OCC1}}``/``{{OCC2}}``):
from the template's ``Names`` (``["man", "woman"]``, matched to ``Var2_info``
``["M", "F"]``), or for Race_x_SES without ``Names`` an occupation drawn from the
SES vocabulary by its ``Info`` for every pair. Without proper names the targets
are at most five stereotyped race words, each with five other race words; with
proper names (first + last names from ``vocabulary_proper_names.csv``) five first
names of a stereotyped race (of the target gender for Race_x_gender, of
``Stated_gender_info`` for Race_x_SES where given), each with five contrast names
drawn per kind. Every a/b/c filling is also filled reversed, after the three.
Groups are ``M-Black`` style (Race_x_gender) and ``lowSES-Black`` /
``lowSES-F-Black`` (Race_x_SES), as in BBQ's data.
"""

from __future__ import annotations

import ast
import random

from bias_hub.builders.jbbq.fillings import Filling, Person, Plan, full_name, sample
from bias_hub.builders.jbbq.template_csv import Template, TemplateError, flag

__all__ = ["INTERSECTIONAL_CATEGORIES", "intersectional_plan"]

INTERSECTIONAL_CATEGORIES = frozenset({"Race_x_gender", "Race_x_SES"})
_OTHER_VALUE = {"M": "F", "F": "M", "lowSES": "highSES", "highSES": "lowSES"}


def _literal_list(template: Template, column: str) -> list:
    """A list field such as ``["man", "woman"]``; its items may be lists of words (Race_x_SES)."""
    text = template.get(column)
    if not text:
        return []
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        value = None
    if not isinstance(value, list) or not all(
        isinstance(v, str) or (isinstance(v, list) and v and all(isinstance(w, str) for w in v))
        for v in value
    ):
        raise TemplateError(
            f"{template.where}: field {column!r} must be a list such as ['man', 'woman'], got {text!r}"
        )
    return value


def intersectional_plan(
    template: Template,
    category: str,
    targets: list[str],
    vocabulary: list[dict[str, str]] | None,
    proper_names: list[dict[str, str]] | None,
    rng: random.Random,
) -> Plan:
    """The fillings of a Race_x_gender or Race_x_SES template."""
    target_value = template.get("Known_stereotyped_var2")
    if target_value not in _OTHER_VALUE:
        raise TemplateError(
            f"{template.where}: field 'Known_stereotyped_var2' is {target_value!r}; expected one of "
            f"{', '.join(_OTHER_VALUE)}"
        )
    other_value = _OTHER_VALUE[target_value]
    proper = bool(flag(template, "Proper_nouns_only"))
    values = _second_attribute(template, category, target_value, proper, vocabulary, rng)

    def valued(target: Person, same: Person, different: Person) -> tuple[Filling, ...]:
        """The a/b/c fillings with the second attribute's values in the groups, its words
        drawn for this pair: the target and ``different`` with the target value, ``same``
        and ``different`` with the other."""
        target_word, other_word = values(rng)
        return _abc(
            Person(target.name, f"{target_value}-{target.group}", target_word),
            Person(same.name, f"{other_value}-{same.group}", other_word),
            Person(different.name, f"{target_value}-{different.group}", target_word),
            Person(different.name, f"{other_value}-{different.group}", other_word),
        )

    if proper:
        people = _proper_targets(template, category, targets, target_value, proper_names, rng)
        # Race_x_gender's proper names carry the gender: no value and no word to add.
        kind = _abc if category == "Race_x_gender" else valued
        groups = [kind(target, *contrast) for target, contrasts in people for contrast in contrasts]
        return Plan(groups, swap=True)
    races = _race_words(template, vocabulary)
    chosen = sample(rng, [w for w in races if w in targets] if targets else races)
    groups = []
    for race in chosen:
        for other_race in sample(rng, [w for w in races if w not in chosen]):
            race_group = Person(race, race)
            groups.append(valued(race_group, race_group, Person(other_race, other_race)))
    return Plan(groups, swap=True)


def _abc(target: Person, a: Person, b: Person, c: Person) -> tuple[Filling, ...]:
    """The target against BBQ's three contrasts, in BBQ's order."""
    return tuple(
        Filling(target, other, f"intersectional_{kind}")
        for kind, other in zip("abc", (a, b, c), strict=True)
    )


def _second_attribute(
    template: Template, category: str, target_value: str, proper: bool, vocabulary, rng
):
    """A function of ``rng`` giving the (target, other) words of the second attribute for one pair.

    ``Names`` items that are lists of words (Race_x_SES: ``[["poor", "low-income"],
    ["rich", ...]]``) get one word each drawn for the whole template, as in BBQ.
    """
    names = _literal_list(template, "Names")
    if names or (category == "Race_x_gender" and not proper):
        info = _literal_list(template, "Var2_info")
        if len(names) != 2 or len(info) != 2 or target_value not in info:
            raise TemplateError(
                f"{template.where}: fields 'Names' and 'Var2_info' must list the two values of the second "
                f"attribute with {target_value!r} among Var2_info, got {template.get('Names')!r} and "
                f"{template.get('Var2_info')!r}"
            )
        index = info.index(target_value)
        pair = tuple(
            rng.choice(v) if isinstance(v, list) else v for v in (names[index], names[1 - index])
        )
        return lambda rng: pair
    if category == "Race_x_gender":  # proper names carry the gender; no {{GEN}} slot to fill
        return lambda rng: ("", "")
    if vocabulary is None:
        raise TemplateError(
            f"{template.where}: the occupations come from the SES vocabulary, but no vocabulary.csv was given"
        )
    ses = [row for row in vocabulary if row["Category"] == "SES"]
    target_words = list(dict.fromkeys(r["Name"] for r in ses if r.get("Info") == target_value))
    other_words = list(
        dict.fromkeys(r["Name"] for r in ses if r.get("Info") and r.get("Info") != target_value)
    )
    if not target_words or not other_words:
        raise TemplateError(
            f"{template.where}: the vocabulary needs SES words with Info {target_value!r} and with another Info"
        )
    return lambda rng: (rng.choice(target_words), rng.choice(other_words))


def _race_words(template: Template, vocabulary: list[dict[str, str]] | None) -> list[str]:
    if vocabulary is None:
        raise TemplateError(
            f"{template.where}: the races come from the vocabulary, but no vocabulary.csv was given"
        )
    races = list(
        dict.fromkeys(row["Name"] for row in vocabulary if row["Category"] == "Race_ethnicity")
    )
    if len(races) < 2:
        raise TemplateError(
            f"{template.where}: the vocabulary has fewer than 2 Race_ethnicity words"
        )
    return races


def _proper_targets(
    template: Template,
    category: str,
    targets: list[str],
    target_value: str,
    proper_names: list[dict[str, str]] | None,
    rng: random.Random,
) -> list[tuple[Person, list[tuple[Person, ...]]]]:
    """(target name, its contrast names) with BBQ's draws: per target five names of each kind."""
    if proper_names is None:
        raise TemplateError(
            f"{template.where}: field 'Proper_nouns_only' is TRUE but no vocabulary_proper_names.csv was given"
        )
    firsts = [row for row in proper_names if row.get("First_last") == "first"]
    pool = [row for row in firsts if row.get("ethnicity") in targets]
    gender = target_value if category == "Race_x_gender" else template.get("Stated_gender_info")
    if gender:
        pool = [row for row in pool if row.get("gender") == gender]
    if not pool:
        raise TemplateError(
            f"{template.where}: the proper-name vocabulary has no 'first' names of the stereotyped races {targets}"
            + (f" and gender {gender!r}" if gender else "")
        )
    result = []
    for row in sample(rng, pool):
        target = full_name(rng, row, proper_names, template.where)
        ethnicity, sex = row.get("ethnicity"), row.get("gender")
        if category == "Race_x_gender":
            kinds = [
                [r for r in firsts if r.get("ethnicity") == ethnicity and r.get("gender") != sex],
                [r for r in firsts if r.get("ethnicity") != ethnicity and r.get("gender") == sex],
                [r for r in firsts if r.get("ethnicity") != ethnicity and r.get("gender") != sex],
            ]
        else:
            kinds = [
                [
                    r
                    for r in firsts
                    if r.get("ethnicity") == ethnicity
                    and r.get("gender") == sex
                    and r["Name"] != row["Name"]
                ],
                [r for r in firsts if r.get("ethnicity") not in targets and r.get("gender") == sex],
            ]
        drawn = [sample(rng, kind) for kind in kinds]
        contrasts = [  # the i-th name drawn of each kind, as many as the shortest kind has
            tuple(full_name(rng, row, proper_names, template.where) for row in rows)
            for rows in zip(*drawn, strict=False)
        ]
        result.append((target, contrasts))
    return result
