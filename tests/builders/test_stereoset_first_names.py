"""No stereoset_gender_swap config pairs a swapped gender word with an unswapped first name.

The three patterns found in StereoSet's sentences ("My Uncle John" -> "My Aunt John", "Mr. Mike" ->
"Mrs. Mike", "Beth is a mommy." -> "Beth is a daddy.") are written here as fixtures; a sentence
holding a first name the rule cannot swap is left out and counted as ``first_name``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bias_hub.builders.stereoset_gender_swap.lexicon import load_lexicon, split_words
from bias_hub.builders.stereoset_gender_swap.names import (
    merge_names,
    read_names,
    read_registry_names,
)
from bias_hub.builders.stereoset_gender_swap.pairs import Candidate, build_pairs
from bias_hub.builders.stereoset_gender_swap.swap import swap_rule

KINSHIP = "My Uncle John is a city policeman."  # a name after a swapped kinship word
TITLE = "Mr. Mike is my school's best mathematician."  # a title and a name
ALONE = "Beth is a mommy."  # a name elsewhere in the sentence
MIXED = "Charles' new girlfriend is Columbian."  # a name beside a word of the other gender
PLAIN = "My uncle is a policeman."
# Every first name of the fixtures, by gender.
MALE_NAMES = {"John", "Mike", "Charles", "James"}
FEMALE_NAMES = {"Beth", "Mary", "Sarah"}


def _nam_dict_line(code: str, name: str) -> str:
    """A line of gender-guesser's fixed-width nam_dict.txt with a frequency in Great Britain."""
    return f"{code:<3}{name:<27}1{' ' * 59}$"


def _registry(folder: Path):
    path = folder / "nam_dict.txt"
    lines = [_nam_dict_line("M", name) for name in sorted(MALE_NAMES)]
    lines += [_nam_dict_line("F", name) for name in sorted(FEMALE_NAMES)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return read_registry_names(path)


def _candidates(*texts: str) -> list[Candidate]:
    return [Candidate(f"{i}:context", "gender", "t", "context", t) for i, t in enumerate(texts)]


def _wrong_names(row: dict) -> list[str]:
    """First names of the other gender in a pair's male or female form."""
    wrong = [w.text for w in split_words(row["male_sentence"]) if w.text in FEMALE_NAMES]
    wrong += [w.text for w in split_words(row["female_sentence"]) if w.text in MALE_NAMES]
    return wrong


def test_the_rule_leaves_out_a_sentence_with_a_name_it_cannot_swap(tmp_path: Path):
    lexicon = load_lexicon(names=_registry(tmp_path))
    build = build_pairs(
        _candidates(KINSHIP, TITLE, ALONE, MIXED, PLAIN),
        lexicon,
        lambda s: swap_rule(s, lexicon),
        "contexts",
        progress=False,
    )
    assert [(r["male_sentence"], r["female_sentence"]) for r in build.rows] == [
        ("My uncle is a policeman.", "My aunt is a policewoman.")
    ]
    assert dict(build.rejected) == {"first_name": 3, "mixed_gender": 1}
    assert build.rejected_texts["first_name"] == [KINSHIP, TITLE, ALONE]


def test_names_paired_by_thakur_et_al_swap_and_the_registry_guards_the_rest(tmp_path: Path):
    folder = tmp_path / "data_debias"
    folder.mkdir()
    (folder / "male_names.txt").write_text("john\n", encoding="utf-8")
    (folder / "female_names.txt").write_text("mary\nbeth\n", encoding="utf-8")
    (folder / "names_pairs_1000_scaled.json").write_text('[["john", "mary"]]', encoding="utf-8")
    paired = read_names(
        folder / "male_names.txt",
        folder / "female_names.txt",
        folder / "names_pairs_1000_scaled.json",
    )
    lexicon = load_lexicon(names=merge_names(paired, _registry(tmp_path)))
    build = build_pairs(
        _candidates(KINSHIP, "Mr. John is here.", TITLE, ALONE),
        lexicon,
        lambda s: swap_rule(s, lexicon),
        "contexts",
        progress=False,
    )
    assert [(r["male_sentence"], r["female_sentence"]) for r in build.rows] == [
        ("My Uncle John is a city policeman.", "My Aunt Mary is a city policewoman."),
        ("Mr. John is here.", "Mrs. Mary is here."),
    ]
    # Mike is in the registry only, Beth in a list without a partner: neither can be swapped.
    assert build.rejected_texts == {"first_name": [TITLE, ALONE]}


def test_merged_names_let_the_paired_lists_decide_a_gender(tmp_path: Path):
    registry = _registry(tmp_path)
    folder = tmp_path / "data_debias"
    folder.mkdir()
    (folder / "male_names.txt").write_text("beth\n", encoding="utf-8")  # female in the registry
    (folder / "female_names.txt").write_text("", encoding="utf-8")
    (folder / "names_pairs_1000_scaled.json").write_text("[]", encoding="utf-8")
    paired = read_names(
        *(folder / n for n in ("male_names.txt", "female_names.txt")),
        folder / "names_pairs_1000_scaled.json",
    )
    merged = merge_names(paired, registry)
    assert "beth" in merged.male and "beth" not in merged.female
    assert merged.female == {"mary", "sarah"} and "john" in merged.male
    assert merged.counterpart == {}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """A default build (the pinned registry's names) of StereoSet rows holding each pattern."""
    from bias_hub.builders.stereoset_gender_swap import build

    root = tmp_path_factory.mktemp("stereoset_first_names")
    contexts = [KINSHIP, TITLE, ALONE, MIXED, PLAIN]
    continuations = [
        ("Genesis is the first book in the King James bible.", "He cooks.", "Cats purr."),
        ("Beth found her keys.", "My uncle John sings.", "Dogs bark."),
        ("Her aunt Sarah waved.", "She sings.", "Rain falls."),
        ("He called Beth.", "Sir, I agree.", "Mr. Smith came."),
        ("He cooks.", "She cooks.", "Cats purr."),
    ]
    rows = [
        {
            "type": "intersentence",
            "target": "t",
            "bias_type": "gender",
            "context": context,
            "stereotype": a,
            "anti-stereotype": b,
            "unrelated": c,
        }
        for context, (a, b, c) in zip(contexts, continuations, strict=True)
    ]
    source = root / "test.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return build(root, source=source)


@pytest.mark.parametrize("config", ["contexts", "continuations", "paper_population"])
def test_no_config_pairs_a_swap_with_a_name_of_the_other_gender(built: Path, config: str):
    import datasets

    rows = datasets.load_dataset(str(built), config, split="test").to_list()
    assert rows and [r["male_sentence"] for r in rows if _wrong_names(r)] == []


def test_each_pattern_is_left_out_and_counted(built: Path):
    import datasets

    contexts = datasets.load_dataset(str(built), "contexts", split="test")
    assert contexts["male_sentence"] == ["My uncle is a policeman."]
    continuations = datasets.load_dataset(str(built), "continuations", split="test")
    assert sorted(
        zip(continuations["male_sentence"], continuations["female_sentence"], strict=True)
    ) == [
        ("He cooks.", "She cooks."),
        ("He sings.", "She sings."),
        ("Mr. Smith came.", "Mrs. Smith came."),  # a surname: the title swaps alone
        ("Sir, I agree.", "Madam, I agree."),
    ]
    card = (built / "README.md").read_text(encoding="utf-8")
    # contexts: the three patterns; continuations: King James, Beth, uncle John and aunt Sarah
    # ("He called Beth." holds both genders: mixed_gender).
    (rejections,) = [
        line
        for line in card.splitlines()
        if line.startswith("| first_name | holds a first name the rule")
    ]
    assert rejections.endswith("| 3 | 4 |")
    assert f"- {KINSHIP}\n- {TITLE}\n- {ALONE}\n" in card
    population = datasets.load_dataset(str(built), "paper_population", split="test")
    assert population["male_sentence"] == ["My uncle is a policeman."]


def test_a_name_of_one_gender_as_a_first_part_is_a_gender_word(tmp_path: Path):
    # nam_dict.txt's "1F Mary": female when the name comes first, as in a sentence. Read as
    # ambiguous, "Mary smiled as she took the elevator." became "Mary smiled as he took ...".
    path = tmp_path / "nam_dict.txt"
    lines = [_nam_dict_line(code, name) for code, name in (("1F", "Mary"), ("M", "Chris"))]
    lines.append(_nam_dict_line("?M", "Chris"))  # mostly male: a name of either gender
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    names = read_registry_names(path)
    assert names.female == {"mary"} and names.male == set() and names.ambiguous == {"chris"}
    lexicon = load_lexicon(names=names)
    sentence = "Mary smiled as she took the elevator."
    build = build_pairs(
        _candidates(sentence), lexicon, lambda s: swap_rule(s, lexicon), "rule", progress=False
    )
    assert build.rows == [] and build.rejected_texts == {"first_name": [sentence]}
