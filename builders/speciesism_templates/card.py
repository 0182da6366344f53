"""The dataset card of ``datasets/speciesism_templates``; every count comes from the build."""

from __future__ import annotations

from collections import Counter

from bias_hub.builders.shared.card import CardMetadata, CardSections
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

_CITATION = """\
@misc{takeshita-rzepka-araki-speciesist-bias-ja,
  title = {英語の言語モデルに内在する種差別的バイアスの分析 [An analysis of speciesist bias in {E}nglish language models]},
  author = {Takeshita, Masashi and Rzepka, Rafal and Araki, Kenji},
  note = {Hokkaido University. The paper this project follows (its Tables 1-4 and Figure 1); its text prints no venue or year}
}
@article{takeshita-etal-2022-speciesist,
  title = {Speciesist Language and Nonhuman Animal Bias in {E}nglish Masked Language Models},
  author = {Takeshita, Masashi and Rzepka, Rafal and Araki, Kenji},
  journal = {Information Processing \\& Management},
  volume = {59},
  number = {5},
  pages = {103050},
  year = {2022}
}"""


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
    return CardSections(
        summary=f"""Template sentences that describe an animal either the way people are described
("She is a pig who is {MASK_MARKER}.") or the way objects are described ("It is a pig
that is {MASK_MARKER}."), for measuring how a masked language model's fill changes
with the form; and a neutral template ("A pig is {MASK_MARKER}.") whose top fills are
judged for sentiment. The English patterns follow Takeshita, Rzepka and Araki
("英語の言語モデルに内在する種差別的バイアスの分析"; a later version: Information Processing &
Management 59(5), 2022),
who found that object forms move BERT and RoBERTa towards words of food processing,
and that the fills for "A <animal> is {MASK_MARKER}." read as negative more than half the
time. The Japanese configs are an extension written for this project.

`{MASK_MARKER}` is a model-neutral marker: replace it with your model's mask token
(`[MASK]`, `<mask>`, ...) before tokenising. `bias-hub speciesism` does that for you.""",
        instance=instance,
        instance_note="The first row of `probability`:",
        fields=f"""- `id`: `<template_id>:<animal>`, unique within a config.
- `language`: `en` or `ja`.
- `template_id`, `template`: the pattern, with `{NAME_MARKER}` and `{MASK_MARKER}` markers.
- `form`: `human` (human pronoun / human-like reference), `object` (object pronoun /
  thing-like reference), or `neutral` (the sentiment template).
- `pronoun`: she, he, this, that, it (English); 彼女, 彼, これ, それ, あれ (Japanese);
  empty where the template has none.
- `relative`: the relative pronoun (who, which, that) in English; in Japanese, the
  existence verb いる (used of people and animals) or ある (used of things); empty where
  the template has none.
- `animal`, `animal_group`, `name`: the animal's English key, its group (`study`,
  `companion`, `wild`, `control`) and the name written into the template.
- `text`: the template with the name filled in and `{MASK_MARKER}` kept.

#### Templates

{_templates_table(rows)}

#### Animals

{_animals_table(rows)}

`study` are the six farmed animals of the original study (chosen there from
meat-industry statistics). The rest is this project's documented extension:
companion animals, wild animals, and `person` as a control, against which the
animals' change rates and negative shares can be read.""",
        splits=f"""Every config has one split, `{SPLIT}`:

{_counts_table(rows)}""",
        source="""Written by the bias-hub project from the published patterns: the reviewed tables
`builders/speciesism_templates/templates.tsv` and `animals.tsv`.""",
        command="bias-hub build speciesism_templates",
        construction=f"""Every template is filled with every animal of the table (pass `--templates` /
`--animals` to build from your own tables; every template must contain `{NAME_MARKER}`
and `{MASK_MARKER}` exactly once). English indefinite articles follow the animal table
(`an elephant`).

#### Japanese templates: what is and is not comparable

Japanese has no relative pronouns and no article, so the English contrast
(who vs which/that, she vs it) cannot be copied word for word. The Japanese set
keeps the same question -- does treating an animal as a thing change what the
model says about it? -- with the two markers of animacy that Japanese has:
pronouns (彼女/彼 vs これ/それ/あれ) and the existence verb (いる, used for people
and animals, vs ある, used for things: ここに…豚がある reads like a piece of pork
on a table). The mask is a modifier before the noun (彼女は{MASK_MARKER}豚です。),
not a predicate after it as in English, so the fills are prenominal words
(adjectives, participles like 焼いた "grilled"), and Japanese and English
numbers are not directly comparable: compare the direction and the kinds of
words, within each language. "cattle" has no Japanese collective noun; the
Japanese row uses 乳牛 ("dairy cow"), which names a use. English "chicken" and
"turkey" also name the meat; Japanese 鶏 and 七面鳥 less so.""",
        considerations="""The data describe how language treats animals as objects or food (speciesist
language). Templates are few and fixed; a model's answer to them is a probe,
not a measure of everything the model does. "a cattle" is ungrammatical and is
kept only because the study used it; "She/He" presumes a sex the template does
not know. Fills that make an animal sound like food are not errors of the model
in every context: a report should say what the templates can and cannot show.""",
        licensing="MIT (templates and animal list written by the bias-hub project).",
        citation=_CITATION,
    )
