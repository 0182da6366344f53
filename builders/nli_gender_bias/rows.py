"""Rows of the generated NLI gender-bias sets (our lexicon x our templates), and the features.

Every kept occupation is crossed with every template:

- pro_stereotypical: stereotyped occupation, hypothesis gender congruent with the stereotype;
- anti_stereotypical: stereotyped occupation, the opposite gender;
- non_stereotypical: non-stereotyped occupation, both genders.

Gold is always neutral. Row order and ids depend only on the inputs. The authors' release is
read by ``bias_hub.builders.nli_gender_bias.release`` into ``RELEASE_FEATURES``: these features plus
the fields the release's files state themselves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import datasets

from bias_hub.builders.nli_gender_bias.lexicon import GENDER_WORDS, LexiconRow, Occupation, Template

__all__ = [
    "FEATURES",
    "GENERATED_PREFIX",
    "Generated",
    "LABELS",
    "RELEASE_FEATURES",
    "SUBSETS",
    "template_rows",
    "to_configs",
]

LABELS = ["entailment", "neutral", "contradiction"]
SUBSETS = ("pro_stereotypical", "anti_stereotypical", "non_stereotypical")
# Configs of the generated sets: generated_pro_stereotypical, ..., generated_all.
GENERATED_PREFIX = "generated_"
ABBREVIATION = {"pro_stereotypical": "ps", "anti_stereotypical": "as", "non_stereotypical": "ns"}
_STEREOTYPED_GENDER = {"female_stereotyped": "female", "male_stereotyped": "male"}
OPPOSITE = {"female": "male", "male": "female"}

# Every column is a string but ``label``.
FEATURES = datasets.Features(
    {
        name: datasets.ClassLabel(names=LABELS) if name == "label" else datasets.Value("string")
        for name in "id premise hypothesis label occupation occupation_en occupation_type "
        "hypothesis_gender template_id subset".split()
    }
)
# The release's rows keep what its files state where that differs from what the pair shows.
RELEASE_FEATURES = datasets.Features(
    {
        **FEATURES,
        "occupation_in_file": datasets.Value("string"),
        "occupation_type_in_file": datasets.Value("string"),
        "source_file": datasets.Value("string"),
    }
)
NEUTRAL = LABELS.index("neutral")


@dataclass
class Generated:
    """The generated sets of one build: rows, the lexicon and templates, where the scores came from."""

    rows: list[dict]
    lexicon: list[LexiconRow]
    templates: list[Template]
    provenance: list[dict[str, str]]


def _genders(subset: str, occupation_type: str) -> tuple[str, ...]:
    if subset == "non_stereotypical":
        return ("female", "male")
    congruent = _STEREOTYPED_GENDER[occupation_type]
    return (congruent,) if subset == "pro_stereotypical" else (OPPOSITE[congruent],)


def template_rows(occupations: Iterable[Occupation], templates: Iterable[Template]) -> list[dict]:
    """Every (subset, occupation, template, gender) row, in that nesting order."""
    occupations, templates = list(occupations), list(templates)
    rows: list[dict] = []
    for subset in SUBSETS:
        wanted = {"non_stereotyped"} if subset == "non_stereotypical" else set(_STEREOTYPED_GENDER)
        for occupation in (o for o in occupations if o.type in wanted):
            for template in templates:
                premise = template.fill(occupation.ja)
                for gender in _genders(subset, occupation.type):
                    rows.append(
                        {
                            "id": f"{ABBREVIATION[subset]}-{occupation.en}-{template.template_id}-{gender}",
                            "premise": premise,
                            "hypothesis": template.fill(GENDER_WORDS[gender]),
                            "label": NEUTRAL,
                            "occupation": occupation.ja,
                            "occupation_en": occupation.en,
                            "occupation_type": occupation.type,
                            "hypothesis_gender": gender,
                            "template_id": template.template_id,
                            "subset": subset,
                        }
                    )
    return rows


def to_configs(
    rows: list[dict], *, prefix: str = "", suffix: str = "", features: datasets.Features = FEATURES
) -> dict[str, dict[str, datasets.Dataset]]:
    """``{config: {"test": Dataset}}`` for the three subsets and ``all``, each named
    ``prefix + subset + suffix`` (``generated_all``, ``pro_stereotypical_downsampled``, ...)."""
    configs: dict[str, dict[str, datasets.Dataset]] = {}
    for subset in SUBSETS:
        chosen = [row for row in rows if row["subset"] == subset]
        if not chosen:
            raise ValueError(f"no rows for the subset {subset}")
        configs[prefix + subset + suffix] = {
            "test": datasets.Dataset.from_list(chosen, features=features)
        }
    configs[prefix + "all" + suffix] = {"test": datasets.Dataset.from_list(rows, features=features)}
    return configs
