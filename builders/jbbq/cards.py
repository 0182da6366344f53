"""Dataset cards for ``datasets/jbbq`` and ``datasets/bbq`` (their prose in ``card_*.md`` beside
this file); every count comes from the build."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bias_hub.builders.jbbq.bbq_format import SPLIT_RATIOS, BuiltRows, split_counts_table
from bias_hub.builders.shared.card import CardSections, sections_from_template
from bias_hub.builders.shared.text import markdown_table

JBBQ_FORM = (
    "https://docs.google.com/forms/d/e/1FAIpQLSdl0fl5s08K9HmoxyQEnHuD519_8HGTwqy-slUEVXrFilQPOw/"
    "viewform"
)
JBBQ_CITATION = """@inproceedings{yanaka-etal-2025-jbbq,
  title     = {{JBBQ}: {J}apanese Bias Benchmark for Analyzing Social Biases in Large Language Models},
  author    = {Yanaka, Hitomi and Han, Namgi and Kumon, Ryoma and Lu, Jie and Takeshita, Masashi and Sekizawa, Ryo and Kato, Taisei and Arai, Hiromi},
  booktitle = {Proceedings of the 6th Workshop on Gender Bias in Natural Language Processing (GeBNLP)},
  year      = {2025},
  publisher = {Association for Computational Linguistics}
}"""
BBQ_CITATION = """@inproceedings{parrish-etal-2022-bbq,
  title     = {{BBQ}: A hand-built bias benchmark for question answering},
  author    = {Parrish, Alicia and Chen, Angelica and Nangia, Nikita and Padmakumar, Vishakh and Phang, Jason and Thompson, Jana and Htut, Phu Mon and Bowman, Samuel},
  booktitle = {Findings of the Association for Computational Linguistics: ACL 2022},
  year      = {2022},
  pages     = {2086--2105},
  publisher = {Association for Computational Linguistics}
}"""


def _instance(configs: dict, redistributable: bool = True) -> dict:
    first = dict(configs["all"]["test"][0])
    # The card of a private build still lands in a tracked file (datasets/jbbq/README.md):
    # show the shape of a row, never its text.
    return first if redistributable else _placeholder(first)


def _placeholder(value):
    if isinstance(value, str):
        return "<text>"
    if isinstance(value, dict):
        return {key: _placeholder(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_placeholder(item) for item in value]
    return value


def _sections(template: str, configs: dict, built: BuiltRows, seed: int, **values) -> CardSections:
    """A card from ``<template>`` beside this file, with the split counts every card shows."""
    headers, table = split_counts_table(configs)
    return sections_from_template(
        Path(__file__).with_name(template),
        _instance(configs, redistributable=template != "card_user.md"),
        seed=seed,
        ratios=" / ".join(f"{int(v * 100)} % {k}" for k, v in SPLIT_RATIOS.items()),
        total=sum(len(split) for split in configs["all"].values()),
        split_table=markdown_table(headers, table),
        undecided=sum(built.undecided_stereotype.values()),
        undecided_by_category=", ".join(
            f"{c}: {n:,}" for c, n in sorted(built.undecided_stereotype.items())
        ),
        skipped=[why for _, why in built.skipped],
        n_rows=len(built.rows),
        kind=built.kind,
        form=JBBQ_FORM,
        jbbq_citation=JBBQ_CITATION,
        bbq_citation=BBQ_CITATION,
        **values,
    )


def jbbq_sample_card(configs: dict, built: BuiltRows, seed: int) -> CardSections:
    templates = {(r["category"], r["question_index"]) for r in built.rows}
    per_category = Counter(category for category, _ in templates).values()
    low, high = min(per_category), max(per_category)
    per = f"{low} per JBBQ category" if low == high else f"{low} to {high} per JBBQ category"
    return _sections("card_sample.md", configs, built, seed, n_templates=len(templates), per=per)


# How the authors' question rows (their README's schema) become the rows here; tested in
# tests/builders/test_jbbq_build.py::test_the_authors_schema_maps_as_the_card_says.
AUTHORS_SCHEMA_MAPPING = """From the authors' schema to these rows (nothing else changes):

| the authors' field | here |
|---|---|
| `answer_info`: `{"ans0": [text, group], "ans1": ..., "ans2": ...}` | `answer_info`: a list of three `{"text", "group"}`, in answer order |
| `additional_metadeta` (their README's spelling) or `additional_metadata` | `additional_metadata` with `subcategory`, `stereotyped_groups`, `version`, `source` (a missing key becomes `"None"`, or `""` for `source`); `stereotyped_groups` from the template CSVs (`Known_stereotyped_groups`, by category and `Q_id`) where the row has none |
| `question_index`, `example_id`, `label` (numbers or numeric strings) | `question_index` a string; `example_id`, `label` integers |
| `is_additional` (`0`/`1`, `true`/`false`, absent) | a boolean (absent: false) |
| (not in the release) | `unknown_label`, `stereotyped_label`: derived from `answer_info` and the stereotyped groups |"""


def jbbq_user_card(configs: dict, built: BuiltRows, seed: int, provenance: str) -> CardSections:
    return _sections(
        "card_user.md",
        configs,
        built,
        seed,
        provenance=provenance,
        n_files=len(built.files),
        schema_mapping=AUTHORS_SCHEMA_MAPPING,
    )


def bbq_card(configs: dict, built: BuiltRows, seed: int, provenance: str) -> CardSections:
    return _sections("card_bbq.md", configs, built, seed, provenance=provenance)
