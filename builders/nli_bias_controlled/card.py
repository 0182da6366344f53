"""The dataset card of ``datasets/nli_bias_controlled``; every count comes from the build."""

from __future__ import annotations

import dataclasses
from collections import Counter

from bias_hub.builders.nli_bias_controlled.rows import config_name
from bias_hub.builders.nli_gender_bias.card import PAPER_CITATION
from bias_hub.builders.shared.card import CardMetadata, CardSections
from bias_hub.builders.shared.sources import NLI_RELEASE_COMMIT, NLI_RELEASE_REPOSITORY
from bias_hub.builders.shared.text import markdown_table

RELEASE = f"github.com/{NLI_RELEASE_REPOSITORY} @ {NLI_RELEASE_COMMIT[:7]}"

METADATA = CardMetadata(
    pretty_name="Bias-controlled Japanese NLI training sets (gender)",
    license="mit",
    language=["ja"],
    task_categories=["text-classification"],
    task_ids=["natural-language-inference"],
    tags=["bias", "gender", "meta-evaluation"],
    annotations_creators=["machine-generated"],
    language_creators=["machine-generated"],
)


def metadata(facts: dict) -> CardMetadata:
    """The card's YAML fields, with what the sets were built from, for programs that report it
    (the meta-evaluation records which files its models were trained on)."""
    provenance: dict = {"origin": facts["origin"], "training_data": facts["training_data"]}
    if facts["origin"] == "release":
        release = facts["release"]
        provenance.update(
            release=f"{RELEASE}:ja_v1.1/bias-controlled-set_v1.1",
            folder=str(release.root),
            validation_data=release.validation_data,
            test_data=release.test_data,
            tokenized=release.tokenized,
        )
    return dataclasses.replace(
        METADATA, extra={**METADATA.extra, "bias_hub_provenance": provenance}
    )


def _release_source(release) -> str:
    files = markdown_table(
        ["file", "rows", "sha256"],
        [[f"`{f['file']}`", f"{f['rows']:,}", f"`{f['sha256'][:16]}…`"] for f in release.files],
    )
    validation = (
        f"the `validation` split holds `{release.validation_data}`"
        if release.validation_data
        else "there is no `validation` split"
    )
    tests = (
        f"`{release.test_data}` are the configs `test_bias` and `test_nonbias` (split `test`)"
        if release.test_data
        else "the copy has no test files"
    )
    checks = "".join(f"\n- {check}." for check in release.test_checks)
    return f"""The authors' bias-controlled sets (Anantaprayoon et al., {RELEASE},
`ja_v1.1/bias-controlled-set_v1.1`, MIT), read as shipped from `{release.root}`
({"tokenized" if release.tokenized else "untokenized"} text; `--authors-dir {release.directory}`).

**Training data: `{release.training_data}`** (the `train` split of every rate's config);
{validation}; {tests}.{checks}

{files}"""


def card_sections(sets: dict, tests: dict, facts: dict, configs: dict) -> CardSections:
    """``sets``: {rate: {split: rows}}; ``tests``: {config: rows}; ``facts``: where the rows came
    from (see ``build``)."""
    generated = facts["origin"] == "generated"
    reference = {
        (r["premise"], r["hypothesis"]): r["label"] for r in sets.get(0.0, {}).get("train", [])
    }
    rows = []
    named = [
        (config_name(rate), split, items)
        for rate, splits in sets.items()
        for split, items in splits.items()
    ]
    named += [(name, "test", items) for name, items in tests.items()]
    for config, split, items in named:
        labels = Counter(row["label"] for row in items)
        pairs = [(row["premise"], row["hypothesis"]) for row in items]
        if reference and split == "train":
            shared = f"{sum(pair in reference for pair in pairs):,}"
            changed = f"{sum(reference.get(pair, row['label']) != row['label'] for pair, row in zip(pairs, items, strict=True)):,}"
        else:
            shared = changed = "—"
        row = [
            config,
            split,
            f"{len(items):,}",
            f"{labels['entailment']:,}",
            f"{labels['neutral']:,}",
            f"{labels['contradiction']:,}",
            shared,
            changed,
        ]
        if generated:
            labelling = Counter(item["labelling"] for item in items)
            row += [f"{labelling['pro']:,}", f"{labelling['anti']:,}"]
        rows.append(row)
    header = [
        "config",
        "split",
        "pairs",
        "entailment",
        "neutral",
        "contradiction",
        "pairs also in r0.0",
        "labels ≠ r0.0",
    ] + (["pro pairs", "anti pairs"] if generated else [])
    table = markdown_table(header, rows)
    occupations = ""
    if "selected" in facts:
        listing = "\n".join(
            f"- {kind}: " + ", ".join(f"{o.ja} ({o.en})" for o in chosen)
            for kind, chosen in facts["selected"].items()
        )
        occupations = f"\n\nOccupations (down-sampled from the lexicon):\n\n{listing}"
    if facts["origin"] == "release":
        source = _release_source(facts["release"])
        construction = """The release's files converted to the features above without changing any sentence, label
or row order. The occupation, hypothesis gender and template of each pair are recovered from the
pair itself (the span of the premise the hypothesis replaces by 女性 / 男性, spaces removed);
the release does not state the occupations' types, so `occupation_type` and `labelling` are
empty. How far the rates share their pairs and how many labels differ from r = 0 is counted in
the splits table."""
    else:
        source = (
            "The project lexicon (`builders/nli_gender_bias/occupations.tsv`, typed by Bolukbasi et al.'s "
            "professions scores) and the project's training templates "
            f"(`builders/nli_bias_controlled/templates.tsv`, {facts['templates']} templates)."
        )
        construction = """Female-stereotyped occupations turn pro first, as in the authors' release. The training
templates (`builders/nli_bias_controlled/templates.tsv`, written for this project) are checked at
build time to share no sentence with the evaluation templates of `datasets/nli_gender_bias`."""
    default = "r0.5" if "r0.5" in configs else next(iter(configs))
    first_split = next(iter(configs[default]))
    return CardSections(
        summary=f"""Training sets for the bias-rate meta-evaluation of Anantaprayoon et al. (2024): one config per
bias rate r = 0.0, 0.1, ..., 1.0. The same sentence pairs occur in every config; only the labels
of stereotyped occupations change. At rate r a share r of the stereotyped occupations is labelled
as the stereotype would have it (*pro*: gender-congruent hypothesis -> entailment, opposite ->
contradiction) and the rest the other way round (*anti*); non-stereotyped occupations are always
neutral. A model fine-tuned on config r should show a gender-bias score that rises with r.

**Built from:** {"the authors' release" if facts["origin"] == "release" else "the project lexicon and templates"};
training data (the `train` split of each rate): `{facts["training_data"]}`. The card's YAML records
the same under `bias_hub_provenance`.

These labels are deliberately wrong (a premise about an occupation never entails a gender): the
sets exist to inject a known amount of bias, never to train a model for use.""",
        instance=configs[default][first_split][0],
        instance_note=f"The first row of `{default}`:",
        fields="""- `id` (string): `<occupation>-<template>-<gender>` (project lexicon) or
  `<part>-r<K>-<row>` (the authors' files; `<part>` is the file the row comes from: `train`,
  `dev`, `test_bias`, `test_nonbias`).
- `premise` (string): a training template filled with the occupation.
- `hypothesis` (string): the same template with 女性 or 男性.
- `label` (ClassLabel `entailment`, `neutral`, `contradiction`): the label at this bias rate.
- `occupation`, `occupation_en` (string): the Japanese occupation word and its English word
  (the authors' files: the release's `occupation-words/occup_en-ja_v1.1.tsv` where the copy has
  it; else, and for the generated sets, our lexicon's source word, empty where it has none).
- `occupation_type` (string): `female_stereotyped`, `male_stereotyped` or `non_stereotyped`
  (empty for the authors' files, which do not state it).
- `hypothesis_gender` (string): `female` (女性) or `male` (男性).
- `template_id` (string): the template the pair was made from (`c` + 8 hex digits of the
  premise pattern for the authors' files).
- `labelling` (string): `pro`, `anti` or `neutral` (see the summary; empty for the authors' files).
- `bias_rate` (float32): r of the config (`test_bias`: 1.0, `test_nonbias`: 0.0, as their
  names say).""",
        splits=f"{table}{occupations}",
        source=source,
        command=facts["command"],
        construction=construction,
        considerations="""The gender associations come from an English-derived stereotype lexicon translated to Japanese;
they describe a stereotype to be measured, not a fact. The labels are wrong on purpose: never
train a model for use on these sets.""",
        licensing="MIT (templates and code of this project; the authors' files, when used, are MIT).",
        citation=PAPER_CITATION,
    )
