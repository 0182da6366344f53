"""Dataset cards: one template, the same sections everywhere, read back through huggingface_hub."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bias_hub.builders.dataset_folder import write_dataset_folder
from bias_hub.builders.shared.card import CardMetadata, CardSections, read_card, read_card_yaml

REPO_CARDS = sorted((Path(__file__).resolve().parents[2] / "datasets").glob("*/README.md"))
# The standard sections of a Hub dataset card, in order, as CONTRIBUTING.md names them ("The
# dataset card"; huggingface_hub's template, builders/shared/dataset_card.md).
HEADINGS = [
    "## Dataset Summary",
    "## Dataset Structure",
    "### Data Instances",
    "### Data Fields",
    "### Data Splits",
    "## Dataset Creation",
    "### Source Data",
    "### How the Data Was Built",
    "## Considerations for Using the Data",
    "## Licensing Information",
    "## Citation Information",
]
META = CardMetadata(
    pretty_name="Tiny set", license="mit", language=["en"], task_categories=["other"]
)


def _sections(instance: dict) -> CardSections:
    return CardSections(
        summary="Two rows.",
        instance=instance,
        fields="- `x`: a number.",
        splits="| a | 2 |",
        source="Written here.",
        command="bias-hub build tiny",
        construction="By hand.",
        considerations="None.",
        licensing="MIT.",
        citation="@misc{tiny}",
    )


def _headings(text: str) -> list[str]:
    body = text.split("\n---\n", 1)[1]
    # Only the template's levels: builders may add #### subsections inside a section.
    return [line for line in body.splitlines() if re.match(r"^#{2,3} ", line)]


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    import datasets

    features = datasets.Features(
        {"x": datasets.Value("int64"), "words": datasets.Sequence(datasets.Value("string"))}
    )
    table = datasets.Dataset.from_dict({"x": [1, 2], "words": [["a", "b"], []]}, features=features)
    return write_dataset_folder(
        tmp_path / "tiny", {"only": {"test": table}}, META, _sections(table[0]), "only"
    )


def test_a_card_is_the_template_filled_with_the_sections(tiny: Path) -> None:
    text = (tiny / "README.md").read_text(encoding="utf-8")
    assert _headings(text) == HEADINGS
    assert text.count("\n# Tiny set\n") == 1 and text.endswith("```\n")
    instance = text.split("```json\n", 1)[1].split("\n```", 1)[0]
    assert json.loads(instance) == {"x": 1, "words": ["a", "b"]}
    assert 'datasets.load_dataset("datasets/tiny", "only")' in text
    assert "Built by `bias-hub build tiny`." in text
    assert "```bibtex\n@misc{tiny}\n```" in text


@pytest.mark.parametrize("card", REPO_CARDS, ids=[p.parent.name for p in REPO_CARDS])
def test_every_committed_card_has_the_standard_sections(card: Path) -> None:
    text = card.read_text(encoding="utf-8")
    assert _headings(text) == HEADINGS
    header = read_card_yaml(card.parent)
    assert [c["config_name"] for c in header["configs"]] == [
        i["config_name"] for i in header["dataset_info"]
    ]


def test_the_committed_cards_cover_every_builder_in_build_all() -> None:
    from bias_hub.pipelines.cli import builder_commands

    commands = builder_commands()
    in_all = {name for name, command in commands.items() if command.IN_ALL}
    committed = {p.parent.name for p in REPO_CARDS}
    # Every dataset `make datasets` builds has its card committed; a builder that needs the
    # network or the user's copy (winobias) may commit the card of a build made from one.
    assert in_all <= committed <= set(commands)


def test_read_card_reads_what_write_wrote(tiny: Path) -> None:
    header = read_card_yaml(tiny)
    assert header["license"] == "mit" and header["size_categories"] == ["n<1K"]
    assert header["dataset_info"][0]["splits"] == [
        {"name": "test", "num_bytes": header["dataset_info"][0]["dataset_size"], "num_examples": 2}
    ]
    assert "## Dataset Summary" in read_card(tiny).text


def test_read_card_names_the_card_it_cannot_read(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "README.md"))):
        read_card(tmp_path)
    (tmp_path / "README.md").write_text("# No header\n", encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"{tmp_path / 'README.md'}: no YAML header")):
        read_card(tmp_path)
    (tmp_path / "README.md").write_text("---\nlicense: [mit\n---\n# Broken\n", encoding="utf-8")
    with pytest.raises(
        ValueError, match=re.escape(f"{tmp_path / 'README.md'}: the YAML header does not parse")
    ):
        read_card(tmp_path)


def test_read_card_yaml_reads_each_text_of_a_card_and_gives_each_caller_its_own_copy(
    tmp_path: Path,
) -> None:
    card = tmp_path / "README.md"
    card.write_text("---\nlicense: mit\n---\n# T\n", encoding="utf-8")
    first = read_card_yaml(tmp_path)
    first["license"] = "changed by a caller"
    assert read_card_yaml(tmp_path) == {"license": "mit"}
    # Rewritten at once, to the same length: a new text is parsed anew.
    card.write_text("---\nlicense: bsd\n---\n# T\n", encoding="utf-8")
    assert read_card_yaml(tmp_path) == {"license": "bsd"}
    card.write_bytes(b"---\nlicense: \xff\n---\n")
    with pytest.raises(ValueError, match=re.escape(f"{card}: the YAML header does not parse")):
        read_card_yaml(tmp_path)


# Headers a user's folder may hold, each read by read_card_yaml as huggingface_hub's DatasetCard
# reads it: the header must start the text (blank space before it allowed) and ends at the first
# line that is `---` alone; DatasetCardData drops top-level nulls and keeps `train-eval-index`
# (either spelling) last.
HOSTILE_CARDS = {
    "no header": "# A title\n\nsome text\n",
    "empty header": "---\n---\n# T\n",
    "blank header": "---\n\n---\n# T\n",
    "dashes inside a value": "---\npretty_name: 'a --- b'\nlicense: mit\n---\n# T\n",
    "dashes starting a line inside the header": "---\nlicense: mit\n---x\n---\n# T\n",
    "indented dashes in a block scalar": "---\ndescription: |\n  one\n  ---\n  two\nlicense: mit\n---\n",
    "dashes with trailing blanks": "---\nlicense: mit\n--- \t\n# T\n",
    "header at the end of the text": "---\nlicense: mit\n---",
    "blank lines before the header": "\n \n---\nlicense: mit\n---\n# T\n",
    "text before the header": "# T\n---\nlicense: mit\n---\n",
    "CRLF": "---\r\nlicense: mit\r\nlanguage:\r\n- en\r\n---\r\n# T\r\n",
    "CR": "---\rlicense: mit\r---",
    "byte-order mark": "\ufeff---\nlicense: mit\n---\n# T\n",
    "two byte-order marks": "\ufeff\ufeff---\nlicense: mit\n---\n# T\n",
    "a list": "---\n- license\n- mit\n---\n# T\n",
    "a string": "---\njust text\n---\n# T\n",
    "invalid YAML": "---\nlicense: [mit\n---\n# T\n",
    "a date that is none": "---\nlicense: mit\nreleased: 2020-13-45\n---\n",
    "only nulls": "---\nlicense:\nlanguage: null\n---\n# T\n",
    "nulls dropped, order kept": "---\ntags: [a]\nlicense: mit\nextra:\nlanguage: [ja]\nz: 1\n---\n",
    "train-eval-index": "---\ntrain-eval-index:\n- config: x\nlicense: mit\nz: 1\n---\n",
    "both spellings": "---\ntrain-eval-index: [a]\ntrain_eval_index: [b]\nz: 1\n---\n",
    "empty underscored spelling": "---\ntrain-eval-index: [a]\ntrain_eval_index: {}\nz: 1\n---\n",
    "nested nulls kept": "---\nlicense: mit\nconfigs:\n- config_name: a\n  default: null\n---\n",
    "a number as a key": "---\n1: one\nlicense: mit\n---\n",
    "a parameter's name as a key": "---\nignore_metadata_errors: true\nlicense: mit\n---\n",
    "self as a key": "---\nself: 1\nlicense: mit\n---\n",
    "anchors": "---\nlanguage: &l [en]\ntags: *l\n---\n",
}


# Worked out by hand from the rule above (DatasetCardData's named fields come first, in its
# order: language before license; the underscored train_eval_index wins when it is not empty,
# at the place of a `train-eval-index` the card also gives).
NO_HEADER = ": no YAML header (license, language, configs, dataset_info)"
BY_HAND = {
    "no header": NO_HEADER,
    "empty header": NO_HEADER,
    "only nulls": NO_HEADER,
    "text before the header": NO_HEADER,
    "two byte-order marks": NO_HEADER,  # the reader drops one; the other is no blank space
    "byte-order mark": [("license", "mit")],
    "CR": [("license", "mit")],
    "CRLF": [("language", ["en"]), ("license", "mit")],
    "dashes with trailing blanks": [("license", "mit")],
    "dashes inside a value": [("license", "mit"), ("pretty_name", "a --- b")],
    "nulls dropped, order kept": [
        ("language", ["ja"]),
        ("license", "mit"),
        ("tags", ["a"]),
        ("z", 1),
    ],
    "train-eval-index": [("license", "mit"), ("z", 1), ("train-eval-index", [{"config": "x"}])],
    "both spellings": [("train-eval-index", ["b"]), ("z", 1)],
    "empty underscored spelling": [("z", 1), ("train-eval-index", ["a"])],
    "nested nulls kept": [("license", "mit"), ("configs", [{"config_name": "a", "default": None}])],
    "a list": ": the YAML header does not parse: repo card metadata block should be a dict",
    "a date that is none": ": the YAML header does not parse: month must be in 1..12",
}


def _as_library_reads(folder: Path) -> object:
    try:
        return list(read_card(folder).data.to_dict().items())
    except ValueError as err:
        return str(err)


def _as_read_card_yaml_reads(folder: Path) -> object:
    try:
        return list(read_card_yaml(folder).items())
    except ValueError as err:
        return str(err)


@pytest.mark.parametrize("name", list(HOSTILE_CARDS))
def test_read_card_yaml_reads_a_header_as_datasetcard_does(tmp_path: Path, name: str) -> None:
    (tmp_path / "README.md").write_bytes(HOSTILE_CARDS[name].encode("utf-8"))
    read = _as_read_card_yaml_reads(tmp_path)
    assert read == _as_library_reads(tmp_path)
    if name in BY_HAND:
        expected = BY_HAND[name]
        assert read == (
            f"{tmp_path / 'README.md'}{expected}" if isinstance(expected, str) else expected
        )


def test_read_card_yaml_reads_every_committed_card_as_datasetcard_does() -> None:
    for card in REPO_CARDS:
        assert _as_read_card_yaml_reads(card.parent) == _as_library_reads(card.parent), card
