"""The gender words (``lexicon.tsv`` plus first names).

Words are split by ``bias_hub.builders.shared.text.split_words`` (as BERT's basic tokenizer
splits them), which the swapper, the pair filter and the attention pipeline all use, so a
word index means the same thing everywhere.

A gender word is, as in the study (§4.1): a word of the study's appendix (set
``study``), a word judged gendered in StereoSet's sentences (set ``judged``), or a
typical first name (``Names``, from Thakur et al.'s data; capitalised only).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from pathlib import Path

from bias_hub.builders.shared.files import read_text
from bias_hub.builders.shared.text import Word, split_words

__all__ = [
    "Lexicon",
    "Names",
    "Word",
    "load_lexicon",
    "split_words",
    "normalise_key",
    "LEXICON_PATH",
    "SETS",
]

LEXICON_PATH = Path(__file__).with_name("lexicon.tsv")
# The sets a lexicon row may belong to; "-" on one side marks a gendered word without a counterpart.
SETS = ("study", "judged")
NO_COUNTERPART = "-"
# The pronouns whose counterpart depends on the next word (``swap``): each may become either.
_PRONOUN_COUNTERPARTS = {"her": {"his", "him"}, "his": {"her", "hers"}}


def normalise_key(word: str) -> str:
    """Lower case without accents: ``Fiancée`` and ``fiancee`` are one entry."""
    decomposed = unicodedata.normalize("NFKD", word.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _looks_like_a_name(word: str) -> bool:
    """Capitalised and not all capitals: "Beth", not "beth" or "ALTA"."""
    return word[:1].isupper() and not (len(word) > 1 and word.isupper())


@dataclass(frozen=True)
class Names:
    """First names by gender, with a counterpart where the source pairs them.

    ``male`` and ``female`` hold normalised keys of one gender only (names listed for both
    genders are in ``ambiguous`` and are no gender word); ``counterpart`` maps a name to
    its paired name of the other gender; ``excluded`` are listed names the build leaves
    out because StereoSet's sentences use them as places or common words (Jordan, Sierra Leone).
    """

    male: frozenset[str]
    female: frozenset[str]
    counterpart: dict[str, str] = field(default_factory=dict)
    ambiguous: frozenset[str] = frozenset()
    excluded: frozenset[str] = frozenset()
    provenance: tuple[dict, ...] = ()

    def gender_of(self, word: str) -> str | None:
        if not _looks_like_a_name(word):
            return None
        key = normalise_key(word)
        if key in self.male:
            return "male"
        if key in self.female:
            return "female"
        return None


@dataclass(frozen=True)
class Lexicon:
    """Male/female word pairs and, optionally, first names.

    ``pairs`` rows are (male, female, set) with normalised keys; ``-`` on one side marks a
    gendered word without a counterpart (a sentence holding one cannot be swapped by rule).
    """

    pairs: tuple[tuple[str, str, str], ...]
    names: Names | None = None

    @property
    def male(self) -> dict[str, str]:
        return {m: f for m, f, _ in self.pairs if m != NO_COUNTERPART}

    @property
    def female(self) -> dict[str, str]:
        return {f: m for m, f, _ in self.pairs if f != NO_COUNTERPART}

    def word_set(self, word: str) -> str | None:
        """Which set makes ``word`` a gender word: a lexicon set, ``name``, or None."""
        key = normalise_key(word)
        for m, f, kind in self.pairs:
            if key in (m, f):
                return kind
        if self.names is not None and self.names.gender_of(word) is not None:
            return "name"
        return None

    def gender_of(self, word: str) -> str | None:
        """'male', 'female' or None. Lexicon words in any case; names only capitalised."""
        key = normalise_key(word)
        if key in self.male:
            return "male"
        if key in self.female:
            return "female"
        if self.names is not None:
            return self.names.gender_of(word)
        return None

    def is_name(self, word: str) -> bool:
        return self.word_set(word) == "name"

    def counterpart(self, word: str) -> str | None:
        """The word of the other gender ``word`` becomes (her/his: see ``swap``), or None."""
        key = normalise_key(word)
        found = self.male.get(key) or self.female.get(key)
        if found is None and self.is_name(word):
            found = self.names.counterpart.get(key)
        return None if found in (None, NO_COUNTERPART) else found

    def counterparts(self, word: str) -> frozenset[str]:
        """Every word of the other gender that ``word`` may become (her -> his or him)."""
        found = {self.counterpart(word)} - {None}
        found |= _PRONOUN_COUNTERPARTS.get(normalise_key(word), set())
        return frozenset(found)


def load_lexicon(path: Path | str = LEXICON_PATH, names: Names | None = None) -> Lexicon:
    """Read the TSV (male, female, set, note); ``names`` adds first names."""
    path = Path(path)
    pairs = []
    seen: dict[str, int] = {}
    header_seen = False
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if not header_seen:
            if fields[:3] != ["male", "female", "set"]:
                raise ValueError(
                    f"{path}, line {number}: expected the header 'male<TAB>female<TAB>set<TAB>note'"
                )
            header_seen = True
            continue
        if len(fields) < 3 or not fields[0] or not fields[1]:
            raise ValueError(f"{path}, line {number}: expected male, female and set, got {line!r}")
        male, female, kind = normalise_key(fields[0]), normalise_key(fields[1]), fields[2]
        if kind not in SETS:
            raise ValueError(
                f"{path}, line {number}: set must be one of {', '.join(SETS)}, got {kind!r}"
            )
        if male == female == NO_COUNTERPART:
            raise ValueError(f"{path}, line {number}: at most one side may be '-' (no counterpart)")
        for word in (w for w in (male, female) if w != NO_COUNTERPART):
            if word in seen:
                raise ValueError(
                    f"{path}, line {number}: {word!r} already appears on line {seen[word]}"
                )
            seen[word] = number
        pairs.append((male, female, kind))
    if not pairs:
        raise ValueError(f"{path}: no word pairs")
    return Lexicon(tuple(pairs), names)
