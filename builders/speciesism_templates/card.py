"""The dataset card of ``datasets/speciesism_templates``; every count comes from the build."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bias_hub.builders.shared.card import CardMetadata, CardSections, sections_from_template
from bias_hub.builders.shared.text import markdown_table
from bias_hub.builders.speciesism_templates.templates import MASK_MARKER, NAME_MARKER, SPLIT

METADATA = CardMetadata(
    pretty_name="Speciesism templates for masked language models",
    license="mit",
    language=["en", "ja"],
    multilinguality="multilingual",
    task_categories=["fill-mask"],
    tags=["bias", "speciesism", "animals", "templates"],
)


def _counts_table(rows: dict[str, list[dict]]) -> str:
    table = []
    for config, config_rows in rows.items():
        forms = Counter(row["form"] for row in config_rows)
        groups = Counter(row["animal_group"] for row in config_rows)
        templates = len({row["template_id"] for row in config_rows})
        table.append(
            [
                config,
                len(config_rows),
                templates,
                ", ".join(f"{form} {n}" for form, n in sorted(forms.items())),
                ", ".join(f"{group} {n}" for group, n in sorted(groups.items())),
            ]
        )
    return markdown_table(
        ["config", "rows", "templates", "rows per form", "rows per animal group"], table
    )


def _animals_table(rows: dict[str, list[dict]]) -> str:
    en = {row["animal"]: row for row in rows["sentiment"]}
    ja = {row["animal"]: row for row in rows["sentiment_ja"]}
    return markdown_table(
        ["animal", "group", "English name", "Japanese name"],
        [[a, en[a]["animal_group"], en[a]["name"], ja[a]["name"] if a in ja else ""] for a in en],
    )


def _templates_table(rows: dict[str, list[dict]]) -> str:
    seen, table = set(), []
    for config, config_rows in rows.items():
        for row in config_rows:
            if row["template_id"] in seen:
                continue
            seen.add(row["template_id"])
            table.append(
                [
                    config,
                    row["template_id"],
                    f"`{row['template']}`",
                    row["form"],
                    row["pronoun"] or "-",
                    row["relative"] or "-",
                ]
            )
    return markdown_table(
        ["config", "template_id", "template", "form", "pronoun", "relative"], table
    )


def card_sections(rows: dict[str, list[dict]], instance: dict) -> CardSections:
    return sections_from_template(
        Path(__file__).with_name("card.md"),
        instance,
        mask_marker=MASK_MARKER,
        name_marker=NAME_MARKER,
        templates_table=_templates_table(rows),
        animals_table=_animals_table(rows),
        split=SPLIT,
        counts_table=_counts_table(rows),
    )
