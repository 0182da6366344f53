"""The paper's population (§3.1, §3.2, §4.1): every context sentence becomes a pair.

The study took all 2,123 context sentences of StereoSet's intersentence items, removed the
duplicated sentences, swapped the genders with an LLM, cleaned the sentences up and kept a pair
when its forms differ only in gender words: 2,111 pairs. So it kept the contexts without a gender
word (the swap leaves them unchanged, and an identical pair passes that filter) and the contexts
holding words of both genders (the swap turns each). This module rebuilds that population, but
for those last:

- a context seen before (the same text) is dropped, as the study's duplicate removal (§3.2);
- the clean-up of ``swap.normalise_sentence`` (§4.1);
- no gender word: an identical pair (``original_gender`` "none", no ``gender_words``);
- one gender: swapped (the LLM where one is given, else the rule) and kept when
  ``swap.check_pair`` passes;
- both genders ("Her husband ...", "He has a nice mother."): left out, counted
  (``mixed_gender``). Neither form is the male one: whichever form a pair called male would record
  "Her" or "mother" as a male word, and the attention statistics read each word under its pair's
  gender;
- a first name the swapper cannot turn (the rule knows no counterpart for a registry name) leaves
  the pair out, counted (``pairs.swap_checked``): no pair swaps the gender words but keeps a name
  of the other gender.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from bias_hub.builders.stereoset_gender_swap.lexicon import Lexicon
from bias_hub.builders.stereoset_gender_swap.pairs import (
    Candidate,
    gender_word_spans,
    pair_row,
    swap_checked,
)
from bias_hub.builders.stereoset_gender_swap.swap import normalise_sentence, sentence_gender

__all__ = ["CONFIG", "LEFT_OUT", "Population", "build_population"]

CONFIG = "paper_population"
# Why a context is not a pair of the population (every one is listed in the card).
LEFT_OUT = {
    "duplicate_context": "the same context text came earlier (the study removed duplicates)",
    "first_name": "holds a first name the swap cannot turn (no counterpart offline), so its other form "
    "would keep a name of the other gender",
    "no_counterpart": "a gender word has no counterpart (actress, Ms.)",
    "empty_reply": "the swapper returned nothing",
    "unchanged": "the swapped sentence equals the original",
    "differs_beyond_gender_words": "the forms differ in a word that is not a gender word turned into its "
    "counterpart (the study's §4.1 filter)",
    "incomplete_swap": "the swapped form still holds a word of the original gender",
    "mixed_gender": "holds words of both genders, so neither form is the male one: a pair would record "
    "a word under the other gender",
}


@dataclass
class Population:
    rows: list[dict] = field(default_factory=list)
    considered: int = 0
    # pairs by kind: "identical" (no gender word), "male"/"female" (the original's gender)
    kinds: Counter = field(default_factory=Counter)
    # reason -> every context left out for it (original text, or "original -> reply")
    left_out: dict[str, list[str]] = field(default_factory=dict)
    # the distinct contexts after the clean-up (two texts may become one: "the man" / "The man.")
    cleaned: set[str] = field(default_factory=set)

    def leave_out(self, reason: str, text: str) -> None:
        self.left_out.setdefault(reason, []).append(text)


def build_population(
    candidates: Iterable[Candidate],
    lexicon: Lexicon,
    swapper: Callable[[str], str | None],
    method: str,
    name_list: str,
) -> Population:
    """Every context as a pair, or left out with its reason. ``method`` ("rule" or "llm") is
    recorded per row, and ``name_list`` (which first names were gender words) too. A first name
    the swapper cannot turn (the rule: a registry name has no counterpart) leaves the context out
    (``first_name``); an LLM may turn it into a name of the other gender."""
    population = Population()
    seen: set[str] = set()
    for candidate in candidates:
        population.considered += 1
        if candidate.text in seen:
            population.leave_out("duplicate_context", candidate.text)
            continue
        seen.add(candidate.text)
        original = normalise_sentence(candidate.text)
        population.cleaned.add(original)
        gender = sentence_gender(original, lexicon)
        if gender == "mixed":
            population.leave_out("mixed_gender", original)
            continue
        # No gender word: an identical pair; one gender: the swap, if it passes the clean-up.
        male = female = original
        words, how = [], "identical"
        if gender is not None:
            reason, swapped, positions = swap_checked(original, swapper, lexicon)
            if reason is not None:
                population.leave_out(reason, swapped)
                continue
            male, female = (original, swapped) if gender == "male" else (swapped, original)
            words, how = gender_word_spans(positions, male == original), method
        row_id = f"{CONFIG}-{len(population.rows):05d}"
        row = pair_row(row_id, candidate, gender or "none", male, female, words, how)
        population.rows.append(row | {"name_list": name_list})
        population.kinds[gender or "identical"] += 1
    return population
