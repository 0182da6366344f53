"""The dataset card of ``datasets/weat_word_sets``; the tables come from the built rows."""

from __future__ import annotations

from pathlib import Path

from bias_hub.builders.shared.card import CardMetadata, CardSections, sections_from_template
from bias_hub.builders.shared.text import markdown_table
from bias_hub.builders.weat_word_sets.rows import ROLES

METADATA = CardMetadata(
    pretty_name="WEAT word sets",
    license="mit",
    language=["en", "ja"],
    task_categories=["feature-extraction"],
    tags=["bias", "word-embeddings", "weat", "rnsb"],
    multilinguality="multilingual",
    source_datasets=["original", "extended"],
)
TEMPLATE = Path(__file__).with_name("card.md")


def _summary(rows: list[dict]) -> str:
    table = [
        [
            row["test_id"],
            row["title"],
            *(len(row[f"{role}_words"]) for role in ROLES),
            row["original_d"] or "",
        ]
        for row in rows
    ]
    return markdown_table(
        ["test_id", "title", "X words", "Y words", "A words", "B words", "original d"], table
    )


def card_sections(en: list[dict], ja: list[dict], en_source: str, instance: dict) -> CardSections:
    return sections_from_template(
        TEMPLATE, instance, en_summary=_summary(en), ja_summary=_summary(ja), en_source=en_source
    )
