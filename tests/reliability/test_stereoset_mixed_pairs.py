"""StereoSet's paper population: a sentence holding words of both genders ("Her husband ...",
"He has a nice mother.") has no male form, so no pair of it may record a female word as its male
word; such sentences are left out, counted in the card and in the report of a run on them."""

from __future__ import annotations

from bias_hub.builders.stereoset_gender_swap.lexicon import load_lexicon
from bias_hub.builders.stereoset_gender_swap.pairs import Candidate
from bias_hub.builders.stereoset_gender_swap.population import build_population
from bias_hub.builders.stereoset_gender_swap.swap import swap_rule
from bias_hub.pipelines.common.render import macros

MIXED = [
    "Her husband works as a mover.",
    "He has a nice mother.",
    "He was laughing like a schoolgirl.",
    "The boy told his sister.",
]
ONE_GENDER = ["She is a mover.", "The man works hard."]


def test_no_word_is_recorded_under_the_other_gender_and_mixed_sentences_are_counted() -> None:
    lexicon = load_lexicon()
    candidates = [
        Candidate(f"{i}:context", "gender", "t", "context", text)
        for i, text in enumerate(MIXED + ONE_GENDER)
    ]
    population = build_population(
        candidates, lexicon, lambda s: swap_rule(s, lexicon), "rule", "none"
    )
    assert population.left_out == {"mixed_gender": MIXED}
    assert [(r["male_sentence"], r["female_sentence"]) for r in population.rows] == [
        ("He is a mover.", "She is a mover."),
        ("The man works hard.", "The woman works hard."),
    ]
    for row in population.rows:
        for word in row["gender_words"]:
            assert lexicon.gender_of(word["male_word"]) == "male", word
            assert lexicon.gender_of(word["female_word"]) == "female", word


def test_the_report_counts_the_sentences_left_out_at_build() -> None:
    results = {
        "dataset": {
            "pairs": 2036,
            "differing_pairs": 570,
            "identical_pairs": 1466,
            "identical_pairs_studied": False,
            "left_out_at_build": {"mixed_gender": 45, "first_name": 32},
        },
        "counts": {"pairs_in_dataset": 2036},
    }
    line = str(macros("stereoset/templates/tables.md.j2").pair_counts(results))
    assert "45 contexts with words of both genders left out at build" in line
