"""The speciesism templates dataset: counts, markers, articles, bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from bias_hub.builders.speciesism_templates import build
from bias_hub.builders.speciesism_templates.templates import read_animals, read_templates

N_ANIMALS = 17  # 6 study + 5 companion + 5 wild + 1 control, counted in animals.tsv


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("speciesism_datasets")
    return build(root)


def _load(folder: Path, config: str):
    import datasets

    return datasets.load_dataset(str(folder), config, split="test")


@pytest.mark.parametrize(
    ("config", "templates", "human", "object_"),
    [
        ("probability", 8, 2, 6),
        ("sentiment", 1, 0, 0),
        ("probability_ja", 9, 4, 5),
        ("sentiment_ja", 1, 0, 0),
    ],
)
def test_configs_have_one_row_per_template_and_animal(built, config, templates, human, object_):
    rows = list(_load(built, config))
    assert len(rows) == templates * N_ANIMALS
    assert sum(row["form"] == "human" for row in rows) == human * N_ANIMALS
    assert sum(row["form"] == "object" for row in rows) == object_ * N_ANIMALS
    assert len({row["id"] for row in rows}) == len(rows)
    for row in rows:
        assert row["text"].count("<MASK>") == 1
        assert "<NAME>" not in row["text"]
        assert row["name"] in row["text"]


def test_study_animals_and_articles(built):
    rows = list(_load(built, "probability"))
    study = {row["animal"] for row in rows if row["animal_group"] == "study"}
    assert study == {"cow", "cattle", "pig", "chicken", "sheep", "turkey"}
    texts = {row["id"]: row["text"] for row in rows}
    assert texts["en_it_that:pig"] == "It is a pig that is <MASK>."
    assert texts["en_she_who:elephant"] == "She is an elephant who is <MASK>."
    sentiment = {row["animal"]: row["text"] for row in _load(built, "sentiment")}
    assert sentiment["elephant"] == "An elephant is <MASK>."
    ja = {row["id"]: row["text"] for row in _load(built, "probability_ja")}
    assert ja["ja_koko_aru:pig"] == "ここに<MASK>豚がある。"


def test_card_counts_come_from_the_build(built):
    card = (built / "README.md").read_text(encoding="utf-8")
    assert f"| probability | {8 * N_ANIMALS} | 8 |" in card
    assert "num_examples: 136" in card


def test_template_without_marker_is_rejected(tmp_path):
    bad = tmp_path / "templates.tsv"
    header = "template_id\tlanguage\tconfig\ttemplate\tform\tpronoun\trelative\n"
    bad.write_text(header + "x\ten\tprobability\tShe is a <NAME> who is nice.\thuman\tshe\twho\n")
    with pytest.raises(ValueError, match=r"line 2: .* 0 <MASK> marker"):
        read_templates(bad)
    bad.write_text(header + "x\ten\tprobability\tShe is a pig who is <MASK>.\thuman\tshe\twho\n")
    with pytest.raises(ValueError, match="0 <NAME> marker"):
        read_templates(bad)
    bad.write_text(header + "x\ten\tprobability\tIt is a <NAME> that is <MASK>.\tthing\tit\tthat\n")
    with pytest.raises(ValueError, match="form 'thing'"):
        read_templates(bad)


def test_animal_table_errors_name_the_row(tmp_path):
    bad = tmp_path / "animals.tsv"
    bad.write_text("animal\tgroup\ten\ten_article\tja\tnote\npig\tfarm\tpig\ta\t豚\t\n")
    with pytest.raises(ValueError, match="line 2: group 'farm'"):
        read_animals(bad)


def test_a_folder_given_as_the_template_table_is_named_as_a_folder(tmp_path, capsys):
    # `--templates SOME_FOLDER` used to say "no such file" for a path that exists.
    from bias_hub.pipelines.cli import main

    folder = tmp_path / "templates"
    folder.mkdir()
    assert (
        main(
            [
                "build",
                "speciesism_templates",
                "--templates",
                str(folder),
                "--out-root",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"bias-hub: error: --templates {folder}: is a folder; expected a TSV file with the columns "
        "['template_id', 'language', 'config', 'template', 'form', 'pronoun', 'relative']"
    )
