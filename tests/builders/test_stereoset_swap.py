"""The gender lexicon, the rule-based swapper, the study's clean-up and the pair builder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bias_hub.builders.stereoset_gender_swap.lexicon import load_lexicon, split_words
from bias_hub.builders.stereoset_gender_swap.names import read_names
from bias_hub.builders.stereoset_gender_swap.pairs import (
    Candidate,
    build_pairs,
    candidates_from_stereoset,
    reply_sentence,
)
from bias_hub.builders.stereoset_gender_swap.swap import (
    check_pair,
    normalise_sentence,
    sentence_gender,
    swap_rule,
)


@pytest.fixture(scope="module")
def lexicon():
    return load_lexicon()


def write_name_files(folder: Path) -> Path:
    """Name lists in data_debias's formats: one name a line, and [male, female] pairs in JSON.

    john: male list and the pairs' male side -> male, counterpart mary. mary: both lists,
    but only the pairs' female side -> female. chris: both lists, in no pair -> ambiguous.
    beth: female list only -> female, no counterpart. jordan: male list, but excluded as
    StereoSet's country (not_names.txt). bart: male list only.
    """
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "male_names.txt").write_text("john\nmary\nchris\njordan\nbart\n", encoding="utf-8")
    (folder / "female_names.txt").write_text("mary\nchris\nbeth\n", encoding="utf-8")
    (folder / "names_pairs_1000_scaled.json").write_text('[["john", "mary"]]', encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def named(tmp_path_factory):
    folder = write_name_files(tmp_path_factory.mktemp("data_debias") / "data")
    names = read_names(
        folder / "male_names.txt",
        folder / "female_names.txt",
        folder / "names_pairs_1000_scaled.json",
    )
    return load_lexicon(names=names)


def test_lexicon_holds_the_studys_30_plus_30_words_with_niece_and_nephew_corrected(lexicon):
    study = [(m, f) for m, f, kind in lexicon.pairs if kind == "study"]
    assert len(study) == 30 and len({m for m, _ in study} | {f for _, f in study}) == 60
    assert lexicon.gender_of("nephew") == "male"
    assert lexicon.gender_of("niece") == "female"
    assert lexicon.male["nephew"] == "niece"
    assert lexicon.male["fiance"] == "fiancee"
    assert lexicon.gender_of("Fiancée") == "female"  # accents folded
    assert lexicon.gender_of("John") is None  # no names without the name lists


def test_words_judged_gendered_are_gender_words(lexicon):
    assert lexicon.word_set("guy") == "judged" and lexicon.counterpart("guy") == "gal"
    assert lexicon.word_set("he") == "study"
    assert lexicon.counterpart("Queen") == "king"
    # actress is gendered, but actor is also the generic word: no counterpart
    assert lexicon.gender_of("actress") == "female" and lexicon.counterpart("actress") is None
    assert lexicon.gender_of("actor") is None


def test_first_names_from_the_name_lists(named):
    assert named.gender_of("John") == "male" and named.counterpart("John") == "mary"
    assert named.gender_of("Mary") == "female"  # both lists, but the pairs put her on one side
    assert named.gender_of("Chris") is None  # both lists, no pair: ambiguous
    assert named.gender_of("Jordan") is None  # StereoSet's country
    assert named.gender_of("Beth") == "female" and named.counterpart("Beth") is None
    assert named.gender_of("john") is None and named.gender_of("JOHN") is None  # only capitalised
    assert named.word_set("Beth") == "name"


def test_names_load_from_a_checkout_and_name_a_missing_file(tmp_path: Path):
    from bias_hub.builders.shared.sources import sha256_of
    from bias_hub.builders.stereoset_gender_swap.names import load_names

    write_name_files(tmp_path / "data_debias" / "data")
    names = load_names(tmp_path / "data_debias")
    assert names.male == {"john", "bart"} and names.female == {"mary", "beth"}
    assert [p["origin"] for p in names.provenance] == ["user"] * 3
    assert names.provenance[0]["sha256"] == sha256_of(
        tmp_path / "data_debias" / "data" / "male_names.txt"
    )
    (tmp_path / "data_debias" / "data" / "female_names.txt").unlink()
    with pytest.raises(FileNotFoundError, match="--names: .* has no female_names.txt"):
        load_names(tmp_path / "data_debias")
    bad = write_name_files(tmp_path / "bad")
    (bad / "names_pairs_1000_scaled.json").write_text('[["john"]]', encoding="utf-8")
    with pytest.raises(ValueError, match=r"pair 0: expected \[male name, female name\]"):
        load_names(bad)


def test_lexicon_file_errors_name_the_line(tmp_path: Path):
    bad = tmp_path / "lexicon.tsv"
    bad.write_text(
        "male\tfemale\tset\tnote\nhe\tshe\tstudy\t\nhim\the\tstudy\t\n", encoding="utf-8"
    )
    with pytest.raises(ValueError, match="line 3.*'he' already appears on line 2"):
        load_lexicon(bad)
    bad.write_text("he\tshe\tstudy\n", encoding="utf-8")
    with pytest.raises(ValueError, match="header"):
        load_lexicon(bad)


def test_words_split_like_bert_basic_tokenizer():
    assert [w.text for w in split_words("She's a mom.")] == ["She", "'", "s", "a", "mom", "."]


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("He is tall.", "She is tall."),
        ("HE cares about his team.", "SHE cares about her team."),
        ("The man went swimming in his pool.", "The woman went swimming in her pool."),
        ("The book is his.", "The book is hers."),
        ("The book is hers.", "The book is his."),
        ("She told her mother.", "He told his father."),
        ("They saw her at the park.", "They saw him at the park."),
        ("Nobody understands her.", "Nobody understands him."),
        ("Let her go home.", "Let him go home."),
        ("Herself, she said, was to blame.", "Himself, he said, was to blame."),
        ("My nephew met his fiance.", "My niece met her fiancee."),
        # The heuristic's known error: "her" before an adverb reads as a determiner.
        ("He told her quickly.", "She told his quickly."),
    ],
)
def test_rule_swap(lexicon, sentence, expected):
    assert swap_rule(sentence, lexicon) == expected


def test_rule_swap_maps_names_by_the_paired_list(named):
    assert swap_rule("John said he would come.", named) == "Mary said she would come."
    assert swap_rule("Beth is a mommy.", named) is None  # no counterpart for Beth


def test_an_llm_may_swap_a_name_for_any_name_of_the_other_gender(named):
    # the study's example: gpt-3.5 turned Beth into Bart
    assert check_pair("Beth is a mommy.", "Bart is a daddy.", named)[0] is None
    assert (
        check_pair("Beth is a mommy.", "Mary is a daddy.", named)[0]
        == "differs_beyond_gender_words"
    )


@pytest.mark.parametrize(
    ("raw", "clean"),
    [
        ("yes ma'am", "Yes madam."),
        ("Ma'am, he said", "Madam, he said."),
        ("  she is   kind!", "She is kind!"),
        ('he said "no."', 'He said "no."'),
    ],
)
def test_study_clean_up(raw, clean):
    assert normalise_sentence(raw) == clean


def test_sentence_gender(lexicon):
    assert sentence_gender("The cat sat.", lexicon) is None
    assert sentence_gender("He and his dad.", lexicon) == "male"
    assert sentence_gender("She married him.", lexicon) == "mixed"


@pytest.mark.parametrize(
    ("original", "swapped", "reason"),
    [
        ("He is tall.", "", "empty_reply"),
        ("He is tall.", "He is tall.", "incomplete_swap"),
        ("He is tall.", "She is short.", "differs_beyond_gender_words"),
        ("He is tall.", "She is very tall.", "differs_beyond_gender_words"),
        ("He is tall.", "Woman is tall.", "differs_beyond_gender_words"),
        ("He met his dad.", "She met her dad.", "incomplete_swap"),
        ("The cat sat.", "The cat sat.", "unchanged"),
    ],
)
def test_check_pair_rejections(lexicon, original, swapped, reason):
    assert check_pair(original, swapped, lexicon)[0] == reason


def test_check_pair_positions(lexicon):
    reason, positions = check_pair("He met his dad.", "She met her mom.", lexicon)
    assert reason is None
    assert [(p["word_index"], p["original"], p["swapped"]) for p in positions] == [
        (0, "He", "She"),
        (2, "his", "her"),
        (3, "dad", "mom"),
    ]
    assert positions[1]["swapped_start"] == 8 and positions[1]["swapped_end"] == 11


def test_reply_sentence_strips_quotes_and_extra_lines():
    assert reply_sentence("「She is tall.」\nNote: swapped.") == "She is tall."
    assert reply_sentence('\n "She is tall." ') == "She is tall."
    assert reply_sentence("   ") == ""


def _rows():
    return [
        {
            "type": "intersentence",
            "target": "mother",
            "bias_type": "gender",
            "context": "My mother is home.",
            "stereotype": "she cooks",
            "anti-stereotype": "She fixes cars.",
            "unrelated": "Cats purr.",
        },
        {
            "type": "intrasentence",
            "target": "x",
            "bias_type": "gender",
            "context": "He is BLANK.",
            "stereotype": "He is a.",
            "anti-stereotype": "He is b.",
            "unrelated": "He is c.",
        },
        {
            "type": "intersentence",
            "target": "chef",
            "bias_type": "profession",
            "context": "The chef cooked.",
            "stereotype": "He married her.",
            "anti-stereotype": "She cooks.",
            "unrelated": "Dogs bark.",
        },
    ]


def test_build_pairs_counts_every_rejection(lexicon):
    candidates = candidates_from_stereoset(_rows(), "continuations")
    assert len(candidates) == 6  # intersentence items only, three sentences each
    build = build_pairs(
        candidates, lexicon, lambda s: swap_rule(s, lexicon), "rule", progress=False
    )
    # "she cooks" -> "She cooks." is kept; "She cooks." from row 2 duplicates it.
    assert build.considered == 6
    assert dict(build.rejected) == {"no_gender_word": 2, "mixed_gender": 1, "duplicate": 1}
    assert [(r["male_sentence"], r["female_sentence"]) for r in build.rows] == [
        ("He cooks.", "She cooks."),
        ("He fixes cars.", "She fixes cars."),
    ]
    first = build.rows[0]
    assert first["source_id"] == "0:stereotype" and first["original_gender"] == "female"
    assert build.ungendered == {"Cats purr.", "Dogs bark."}
    assert first["gender_words"] == [
        {
            "word_index": 0,
            "male_word": "He",
            "female_word": "She",
            "male_start": 0,
            "male_end": 2,
            "female_start": 0,
            "female_end": 3,
        },
    ]


def test_contexts_are_the_studys_sentences(lexicon):
    candidates = candidates_from_stereoset(_rows())
    assert [(c.source_id, c.text) for c in candidates] == [
        ("0:context", "My mother is home."),
        ("2:context", "The chef cooked."),
    ]
    build = build_pairs(
        candidates, lexicon, lambda s: swap_rule(s, lexicon), "contexts", progress=False
    )
    assert [(r["male_sentence"], r["label"]) for r in build.rows] == [
        ("My father is home.", "context")
    ]
    assert dict(build.rejected) == {"no_gender_word": 1}
    with pytest.raises(ValueError, match="sentences must be one of"):
        candidates_from_stereoset(_rows(), "intrasentence")


def test_a_gender_word_without_counterpart_is_counted(lexicon):
    candidates = [Candidate("0:context", "gender", "t", "context", "The actress is here.")]
    build = build_pairs(
        candidates, lexicon, lambda s: swap_rule(s, lexicon), "contexts", progress=False
    )
    assert build.rows == [] and dict(build.rejected) == {"no_counterpart": 1}


def test_build_pairs_rejects_a_swapper_that_changes_meaning(lexicon):
    candidates = [Candidate("0:stereotype", "gender", "t", "stereotype", "He is tall.")]
    build = build_pairs(candidates, lexicon, lambda s: "She is short.", "llm", progress=False)
    assert build.rows == [] and dict(build.rejected) == {"differs_beyond_gender_words": 1}


def test_builder_writes_a_loadable_folder_with_counts_in_the_card(tmp_path: Path):
    import datasets

    from bias_hub.builders.stereoset_gender_swap import build as build_dataset

    source = tmp_path / "test.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in _rows()), encoding="utf-8")
    names = write_name_files(tmp_path / "data_debias")
    folder = build_dataset(tmp_path, source=source, names=names)
    assert folder == tmp_path / "stereoset_gender_swap"
    pairs = datasets.load_dataset(str(folder), split="test")  # the default config: contexts
    assert pairs["male_sentence"] == ["My father is home."]
    continuations = datasets.load_dataset(str(folder), "continuations", split="test")
    assert continuations["male_sentence"] == ["He cooks.", "He fixes cars."]
    assert pairs.features["original_gender"].names == ["male", "female"]
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "| contexts | 1 | 2 |" in card and "| continuations | 2 | 6 |" in card
    assert "| mixed_gender |" in card
    assert "| context sentences of the intersentence items | 2,123 | 2 |" in card
    # john -> mary: one name of each gender paired (bart, beth: in the lists without a partner)
    assert "| of which paired for the swap (Thakur et al.) | 1 | 1 |" in card
    assert str(names / "male_names.txt") in card


def test_without_reachable_name_lists_the_card_says_names_are_left_out(tmp_path: Path, monkeypatch):
    from bias_hub.builders.stereoset_gender_swap import build as build_dataset

    monkeypatch.setenv("BIAS_HUB_NO_URL", "1")
    monkeypatch.setenv("BIAS_HUB_CACHE", str(tmp_path / "cache"))
    source = tmp_path / "test.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in _rows()), encoding="utf-8")
    card = (build_dataset(tmp_path, source=source, names="url") / "README.md").read_text(
        encoding="utf-8"
    )
    assert "its names from (§4.1): **not used in this build**" in card and "--names PATH" in card


def test_an_unreachable_name_list_is_reported_with_every_location_tried(
    tmp_path: Path, monkeypatch, caplog
):
    # Offline, the warning used to read "... could not be resolved. Tried:)" with nothing listed.
    from bias_hub.builders.stereoset_gender_swap import build as build_dataset

    monkeypatch.setenv("BIAS_HUB_NO_URL", "1")
    source = tmp_path / "test.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in _rows()), encoding="utf-8")
    with caplog.at_level("WARNING", logger="bias_hub.builders.stereoset_gender_swap"):
        build_dataset(tmp_path, source=source, names="url")
    (warning,) = [
        r.getMessage() for r in caplog.records if "first names not swapped" in r.getMessage()
    ]
    assert "Tried: - https://raw.githubusercontent.com/himansh005/data_debias/" in warning
    assert (
        "male_names.txt: skipped (downloads switched off)" in warning and "Tried:)" not in warning
    )


def test_the_default_build_uses_no_fetched_names_so_every_build_writes_the_same_card(
    tmp_path: Path, monkeypatch
):
    # A fresh clone's `make datasets` once rewrote the tracked card (604 pairs online, 580 offline).
    from bias_hub.builders.stereoset_gender_swap import build as build_dataset

    source = tmp_path / "test.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in _rows()), encoding="utf-8")
    monkeypatch.setenv("BIAS_HUB_NO_URL", "1")
    offline = (build_dataset(tmp_path / "a", source=source) / "README.md").read_text(
        encoding="utf-8"
    )
    monkeypatch.delenv("BIAS_HUB_NO_URL")
    monkeypatch.setattr(
        "bias_hub.builders.stereoset_gender_swap.load_names",
        lambda *a: pytest.fail("the default build fetched Thakur et al.'s names"),
    )
    online = (build_dataset(tmp_path / "b", source=source) / "README.md").read_text(
        encoding="utf-8"
    )
    assert online.replace(str(tmp_path / "b"), "") == offline.replace(str(tmp_path / "a"), "")
    assert "its names from (§4.1): not used by default" in offline


def test_builder_reads_the_original_nested_dev_json(tmp_path: Path):
    from bias_hub.builders.stereoset_gender_swap.pairs import read_stereoset

    nested = {
        "version": "1.0",
        "data": {
            "intersentence": [
                {
                    "id": "a",
                    "target": "mother",
                    "bias_type": "gender",
                    "context": "My mother is home.",
                    "sentences": [
                        {"sentence": "She cooks.", "gold_label": "stereotype"},
                        {"sentence": "She fixes cars.", "gold_label": "anti-stereotype"},
                        {"sentence": "Cats purr.", "gold_label": "unrelated"},
                    ],
                }
            ],
            "intrasentence": [],
        },
    }
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(nested), encoding="utf-8")
    rows = read_stereoset(path)
    assert rows == [
        {
            "type": "intersentence",
            "target": "mother",
            "bias_type": "gender",
            "context": "My mother is home.",
            "stereotype": "She cooks.",
            "anti-stereotype": "She fixes cars.",
            "unrelated": "Cats purr.",
        }
    ]


def test_words_judged_gendered_are_swapped_and_marked(lexicon):
    candidates = [
        Candidate("0:stereotype", "gender", "t", "stereotype", "He is a nice guy."),
        Candidate("1:stereotype", "gender", "t", "stereotype", "She is very masculine."),
    ]
    build = build_pairs(
        candidates, lexicon, lambda s: swap_rule(s, lexicon), "rule", progress=False
    )
    assert [(r["male_sentence"], r["female_sentence"]) for r in build.rows] == [
        ("He is a nice guy.", "She is a nice gal."),
        ("He is very masculine.", "She is very masculine."),
    ]
    assert [(w["male_word"], w["female_word"]) for w in build.rows[0]["gender_words"]] == [
        ("He", "She"),
        ("guy", "gal"),
    ]
    assert build.word_sets == {"study": 2, "judged": 1}
