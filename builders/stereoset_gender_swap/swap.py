"""The rule-based gender swapper and the study's clean-up of swapped pairs.

``swap_rule`` replaces every gender word by its counterpart and leaves every
other character of the sentence as it was (None when a gender word has no
counterpart: actress, or a first name the name pairs do not pair). Two words are ambiguous in the
female-to-male direction and one in the other: *her* is *his* before a noun and
*him* otherwise; *his* is *her* before a noun and *hers* otherwise. Without a
part-of-speech tagger, "before a noun" is decided from the next word: the end
of the sentence, punctuation, or a function word / common bare verb means the
pronoun reading. The rule is wrong for "her" before an adverb ("told her
quickly"), which the tests record.

``check_pair`` is the filter the study applied to every pair, whatever swapped
it: the two forms must differ only in gender words, each turned into one of its
counterparts (a first name may become any first name of the other gender, as an
LLM swap does: "Beth" -> "Bart"), and the swapped form must contain no word of the
original gender.
"""

from __future__ import annotations

import re

from bias_hub.builders.stereoset_gender_swap.lexicon import (
    Lexicon,
    Word,
    normalise_key,
    split_words,
)

__all__ = [
    "REJECTIONS",
    "check_pair",
    "normalise_sentence",
    "sentence_gender",
    "swap_rule",
    "unswappable_name",
]

# Why a sentence or a pair is rejected; the build counts each.
REJECTIONS = {
    "no_gender_word": "the sentence contains no gender word (lexicon word or first name)",
    "mixed_gender": "the sentence holds male and female words, so neither form is all-male or all-female",
    "first_name": "holds a first name the rule cannot swap (no paired name of the other gender), so its "
    'other form would keep a name of the other gender ("My Aunt John", "Mrs. Mike", "Beth is a daddy")',
    "no_counterpart": "a gender word has no counterpart to swap to by rule (actress, Ms.)",
    "empty_reply": "the swapper returned nothing",
    "unchanged": "the swapped sentence equals the original",
    "differs_beyond_gender_words": "the two forms differ in a word that is not a gender word turned into its counterpart",
    "incomplete_swap": "the swapped form still holds a word of the original gender",
    "duplicate": "the same male/female pair was already kept",
}

# After "her" these words mean the object pronoun (her -> him): determiners,
# prepositions, conjunctions, particles, pronouns and common bare verbs.
_OBJECT_CONTEXT = frozenset(
    """a an the to that this these those and or but nor so yet if because as than then when
    while where why how what who whom whose which whether at in on for from with without by about
    into onto over under up down out off back away again around through after before since until
    too very really also all both each every some any no not never always just only even still
    there here now today tonight tomorrow yesterday once twice alone anymore well better
    more less much many something anything nothing everything someone anyone everyone nobody
    i you he she it we they me him us them my your our their
    is was are were be been being am has have had do does did will would can could shall should
    may might must go come get feel look seem cry leave stay make let see know think
    want say tell take give find try eat sleep sing smile laugh wait like hate cook relax upset""".split()
)
# After "his" these words mean the independent pronoun (his -> hers).
_INDEPENDENT_CONTEXT = frozenset(
    """and or but nor is was are were too as than to for in on at now anyway instead alone
    either also though""".split()
)
_MAAM = re.compile(r"\b([Mm])a'am\b")
_FINAL = re.compile(r"[.!?][\"')\]]*$")


def _match_case(template: str, word: str) -> str:
    if len(template) > 1 and template.isupper():
        return word.upper()
    if template[:1].isupper():
        return word[:1].upper() + word[1:]
    return word


def _counterpart(words: list[Word], index: int, lexicon: Lexicon) -> str | None:
    key = normalise_key(words[index].text)
    following = words[index + 1] if index + 1 < len(words) else None
    pronoun_reading = following is None or following.is_punctuation
    next_key = normalise_key(following.text) if following is not None else ""
    if key == "her":
        return "him" if pronoun_reading or next_key in _OBJECT_CONTEXT else "his"
    if key == "his":
        return "hers" if pronoun_reading or next_key in _INDEPENDENT_CONTEXT else "her"
    return lexicon.counterpart(words[index].text)


def swap_rule(text: str, lexicon: Lexicon) -> str | None:
    """The sentence with every gender word replaced by its counterpart (case kept), or
    None when a gender word has no counterpart."""
    words = split_words(text)
    pieces, last = [], 0
    for index, word in enumerate(words):
        if lexicon.gender_of(word.text) is None:
            continue
        counterpart = _counterpart(words, index, lexicon)
        if counterpart is None:
            return None
        pieces += [text[last : word.start], _match_case(word.text, counterpart)]
        last = word.end
    pieces.append(text[last:])
    return "".join(pieces)


def unswappable_name(text: str, lexicon: Lexicon) -> bool:
    """Whether ``text`` holds a first name without a counterpart (the rule swap cannot turn it)."""
    return any(
        lexicon.is_name(word.text) and lexicon.counterpart(word.text) is None
        for word in split_words(text)
    )


def normalise_sentence(text: str) -> str:
    """The study's clean-up: ma'am -> madam, first letter capitalised, final period added."""
    text = " ".join(text.split())
    text = _MAAM.sub(lambda m: f"{m.group(1)}adam", text)
    if not text:
        return text
    text = text[0].upper() + text[1:]
    if not _FINAL.search(text):
        text += "."
    return text


def sentence_gender(text: str, lexicon: Lexicon) -> str | None:
    """'male', 'female', 'mixed' or None (no gender word)."""
    found = {lexicon.gender_of(word.text) for word in split_words(text)} - {None}
    if not found:
        return None
    return found.pop() if len(found) == 1 else "mixed"


def check_pair(original: str, swapped: str, lexicon: Lexicon) -> tuple[str | None, list[dict]]:
    """``(rejection reason or None, gender-word positions)`` for a swapped pair.

    A position is ``{"word_index", "original", "swapped", "original_start",
    "original_end", "swapped_start", "swapped_end"}`` (character spans).
    """
    if not swapped.strip():
        return "empty_reply", []
    before, after = split_words(original), split_words(swapped)
    if len(before) != len(after):
        return "differs_beyond_gender_words", []
    origin_gender = sentence_gender(original, lexicon)
    positions = []
    for index, (old, new) in enumerate(zip(before, after, strict=True)):
        old_gender = lexicon.gender_of(old.text)
        if old_gender is None:
            if normalise_key(old.text) != normalise_key(new.text) or lexicon.gender_of(new.text):
                return "differs_beyond_gender_words", []
            continue
        new_key = normalise_key(new.text)
        if new_key == normalise_key(old.text):
            return "incomplete_swap", []
        renamed = lexicon.is_name(old.text) and lexicon.is_name(new.text)
        if new_key not in lexicon.counterparts(old.text) and not (
            renamed and lexicon.gender_of(new.text) not in (None, old_gender)
        ):
            return "differs_beyond_gender_words", []
        positions.append(
            {
                "word_index": index,
                "original": old.text,
                "swapped": new.text,
                "original_start": old.start,
                "original_end": old.end,
                "swapped_start": new.start,
                "swapped_end": new.end,
            }
        )
    if not positions:
        return "unchanged", []
    # A sentence of one gender must come out all of the other (one of both genders is no pair).
    if sentence_gender(swapped, lexicon) in {origin_gender, "mixed"}:
        return "incomplete_swap", []
    return None, positions
