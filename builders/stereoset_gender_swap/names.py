"""Typical first names by gender, from Thakur et al.'s data (``data_debias``).

The study added "typical male and female names" from Thakur et al.'s data to its gender
words (§4.1). Three files of github.com/himansh005/data_debias are read (through
``bias_hub.builders.shared.sources``: canonical URL with a pinned sha256, or a folder the user gives):
``male_names.txt``, ``female_names.txt`` (one name a line) and
``names_pairs_1000_scaled.json`` (``[male, female]`` pairs). A name's gender is its side
in the pairs file when it is on one side only there, else the one list that holds it; a
name on both sides or in both lists is ambiguous and no gender word. A name's
counterpart (for the rule swap) is its partner in the pairs file.

Every build also reads the first names of a pinned registry package (gender-guesser's
``nam_dict.txt``, ``read_registry_names``): they give each name a gender but pair no name with
another, so the rule swap cannot turn them and a sentence holding one is left out, counted.
``merge_names`` puts the two together: Thakur et al.'s pairs swap the names they know, the
registry's names guard against a swap that would keep any other name of the other gender.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from bias_hub.builders.shared.files import read_text
from bias_hub.builders.shared.sources import resolve
from bias_hub.builders.stereoset_gender_swap.lexicon import Names, normalise_key

__all__ = [
    "NAME_FILES",
    "NOT_NAMES_PATH",
    "REGISTRY_COUNTRIES",
    "load_names",
    "load_registry_names",
    "merge_names",
    "read_names",
    "read_registry_names",
]

# source name in builders/shared/sources.py -> file name in a data_debias checkout's data/ folder
NAME_FILES = {
    "data_debias_male_names": "male_names.txt",
    "data_debias_female_names": "female_names.txt",
    "data_debias_names_pairs": "names_pairs_1000_scaled.json",
}
NOT_NAMES_PATH = Path(__file__).with_name("not_names.txt")
NOT_NAMES_REGISTRY_PATH = Path(__file__).with_name("not_names_registry.txt")
# The countries of nam_dict.txt whose names count (English-speaking, as StereoSet's writers):
# their frequency characters stand at columns 30, 31 and 32 (gender-guesser's own layout).
REGISTRY_COUNTRIES = {"great_britain": 30, "ireland": 31, "usa": 32}
# nam_dict.txt's gender codes of one gender for a first name: "1M"/"1F" are male/female when the
# name comes first ("Mary", not "Jean-Mary"), as in a sentence; "?M", "?F" and "?" are mostly or either.
_REGISTRY_GENDERS = {"M": "male", "1M": "male", "F": "female", "1F": "female"}


def _word_list(path: Path) -> list[str]:
    return [
        normalise_key(line.strip())
        for line in read_text(path).splitlines()
        if line.strip() and not line.startswith("#")
    ]


def _pairs(path: Path) -> list[tuple[str, str]]:
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as err:
        raise ValueError(f"{path}, line {err.lineno}: not valid JSON ({err.msg})") from None
    if not isinstance(data, list):
        raise ValueError(f"{path}: expected a JSON list of [male, female] name pairs")
    pairs = []
    for number, pair in enumerate(data):
        if not (
            isinstance(pair, list)
            and len(pair) == 2
            and all(isinstance(n, str) and n.strip() for n in pair)
        ):
            raise ValueError(
                f"{path}, pair {number}: expected [male name, female name], got {pair!r}"
            )
        pairs.append((normalise_key(pair[0].strip()), normalise_key(pair[1].strip())))
    return pairs


def read_names(
    male_path: Path, female_path: Path, pairs_path: Path, provenance: tuple[dict, ...] = ()
) -> Names:
    """Names from the three files (see the module docstring for how genders are decided)."""
    pairs = _pairs(pairs_path)
    pair_male = {m for m, _ in pairs}
    pair_female = {f for _, f in pairs}
    listed_male, listed_female = set(_word_list(male_path)), set(_word_list(female_path))
    unpaired = (listed_male | listed_female) - pair_male - pair_female
    male = (pair_male - pair_female) | (unpaired & (listed_male - listed_female))
    female = (pair_female - pair_male) | (unpaired & (listed_female - listed_male))
    ambiguous = (pair_male & pair_female) | (unpaired & listed_male & listed_female)
    excluded = frozenset(_word_list(NOT_NAMES_PATH)) & (male | female | ambiguous)
    male, female = male - excluded, female - excluded
    counterpart = {}
    for m, f in pairs:
        if m in male and f in female:
            counterpart.setdefault(m, f)
            counterpart.setdefault(f, m)
    return Names(
        frozenset(male), frozenset(female), counterpart, frozenset(ambiguous), excluded, provenance
    )


def load_names(folder: str | os.PathLike[str] | None = None) -> Names:
    """The names, from ``folder`` (a data_debias checkout or its ``data/`` folder) or the pinned URLs."""
    paths = {}
    if folder is not None:
        root = Path(folder).expanduser()
        if not root.is_dir():
            raise FileNotFoundError(
                f"--names: {root} is not a folder (expected a data_debias checkout or its data/)"
            )
        base = root / "data" if (root / "data" / "male_names.txt").is_file() else root
        for source, filename in NAME_FILES.items():
            if not (base / filename).is_file():
                raise FileNotFoundError(
                    f"--names: {base} has no {filename} (expected data_debias's data/ files)"
                )
            paths[source] = base / filename
    resolved = [resolve(source, paths.get(source)) for source in NAME_FILES]
    return read_names(
        *(r.path for r in resolved), provenance=tuple(r.provenance() for r in resolved)
    )


def read_registry_names(path: Path, provenance: tuple[dict, ...] = ()) -> Names:
    """First names from gender-guesser's ``nam_dict.txt``: every single-word name with a frequency in
    one of ``REGISTRY_COUNTRIES``, male or female when every such entry gives that one gender (a
    name also listed as the other, or as mostly/either, is ambiguous and no gender word; "1M"/"1F",
    one gender as a first name, count as that gender). No name
    has a counterpart: the rule swap cannot swap a name, so a sentence holding one is left out."""
    genders: dict[str, set[str]] = {}
    for number, line in enumerate(read_text(path).splitlines(), start=1):
        if not line.strip() or line[0] in "#=":
            continue
        fields = line.split()
        if len(fields) < 2 or len(line) < max(REGISTRY_COUNTRIES.values()) + 1:
            raise ValueError(
                f"{path}, line {number}: expected a gender code, a name and country columns"
            )
        code, name = fields[0], fields[1]
        if "+" in name or not any(line[column].strip() for column in REGISTRY_COUNTRIES.values()):
            continue
        genders.setdefault(normalise_key(name), set()).add(_REGISTRY_GENDERS.get(code, "ambiguous"))
    if not genders:
        raise ValueError(
            f"{path}: no first name with a frequency in {', '.join(REGISTRY_COUNTRIES)}"
        )
    male = {name for name, found in genders.items() if found == {"male"}}
    female = {name for name, found in genders.items() if found == {"female"}}
    ambiguous = set(genders) - male - female
    not_names = _word_list(NOT_NAMES_PATH) + _word_list(NOT_NAMES_REGISTRY_PATH)
    excluded = frozenset(not_names) & set(genders)
    return Names(
        frozenset(male - excluded),
        frozenset(female - excluded),
        {},
        frozenset(ambiguous),
        excluded,
        provenance,
    )


def load_registry_names() -> Names:
    """The registry names (``read_registry_names``) from the pinned gender-guesser wheel."""
    resolved = resolve("gender_guesser_names")
    return read_registry_names(resolved.path, provenance=(resolved.provenance(),))


def merge_names(swapped: Names, guard: Names) -> Names:
    """``swapped``'s names (with their counterparts) plus every name of ``guard`` that ``swapped``
    does not list: where the two lists disagree on a name's gender, ``swapped`` decides. A name
    either list excludes (a place, a common word) is no name."""
    known = swapped.male | swapped.female | swapped.ambiguous
    excluded = swapped.excluded | guard.excluded
    return Names(
        frozenset((swapped.male | (guard.male - known)) - excluded),
        frozenset((swapped.female | (guard.female - known)) - excluded),
        {
            name: partner
            for name, partner in swapped.counterpart.items()
            if name not in excluded and partner not in excluded
        },
        frozenset(swapped.ambiguous | (guard.ambiguous - known)),
        excluded,
        swapped.provenance + guard.provenance,
    )
