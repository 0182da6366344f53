"""The dataset card of ``datasets/winobias``; counts and checksums come from the build."""

from __future__ import annotations

from pathlib import Path

from bias_hub.builders.shared.card import CardMetadata, CardSections, sections_from_template
from bias_hub.builders.shared.text import markdown_table

METADATA = CardMetadata(
    pretty_name="WinoBias",
    license="mit",
    language=["en"],
    task_categories=["token-classification"],
    task_ids=["coreference-resolution"],
    tags=["bias", "gender-bias", "coreference", "winobias"],
    extra={"redistributable": True},
)


def _counts(configs: dict) -> str:
    rows = [
        [name, *(len(splits[split]) for split in ("validation", "test"))]
        for name, splits in configs.items()
    ]
    return markdown_table(["config", "validation", "test"], rows)


def _three_mentions(configs: dict) -> str:
    splits = configs["all"].values()
    every = sum(len(split) for split in splits)
    longer = sum(len(clusters[0]) > 2 for split in splits for clusters in split["clusters"])
    return f"{longer:,} of {every:,}"


def card_sections(
    configs: dict, provenance: list[tuple[str, str, str, bool]], instance: dict
) -> CardSections:
    files = markdown_table(
        ["file", "read from", "sha256", "equals the pinned upstream file"],
        [
            [name, f"`{where}`", f"`{digest}`", "yes" if pinned else "**no**"]
            for name, where, digest, pinned in provenance
        ],
    )
    return sections_from_template(
        Path(__file__).with_name("card.md"),
        instance,
        three_mentions=_three_mentions(configs),
        counts=_counts(configs),
        files=files,
    )
