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
