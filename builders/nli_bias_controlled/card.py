"""The dataset card of ``datasets/nli_bias_controlled``; every count comes from the build."""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

from bias_hub.builders.nli_bias_controlled.rows import LABELS, config_name
from bias_hub.builders.nli_gender_bias.card import PAPER_CITATION
from bias_hub.builders.shared.card import CardMetadata, CardSections, sections_from_template
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


def _release_files(release) -> str:
    return markdown_table(
        ["file", "rows", "sha256"],
        [[f"`{f['file']}`", f"{f['rows']:,}", f"`{f['sha256'][:16]}…`"] for f in release.files],
    )


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
        row = [config, split, f"{len(items):,}", *(f"{labels[name]:,}" for name in LABELS)]
        row += [shared, changed]
        if generated:
            labelling = Counter(item["labelling"] for item in items)
            row += [f"{labelling['pro']:,}", f"{labelling['anti']:,}"]
        rows.append(row)
    header = ["config", "split", "pairs", *LABELS, "pairs also in r0.0", "labels ≠ r0.0"]
    table = markdown_table(header + (["pro pairs", "anti pairs"] if generated else []), rows)
    occupations = ""
    if "selected" in facts:
        listing = "\n".join(
            f"- {kind}: " + ", ".join(f"{o.ja} ({o.en})" for o in chosen)
            for kind, chosen in facts["selected"].items()
        )
        occupations = f"\n\nOccupations (down-sampled from the lexicon):\n\n{listing}"
    default = "r0.5" if "r0.5" in configs else next(iter(configs))
    return sections_from_template(
        Path(__file__).with_name("card.md"),
        next(iter(configs[default].values()))[0],
        release=facts["release"] if facts["origin"] == "release" else None,
        release_name=RELEASE,
        release_files=_release_files(facts["release"]) if facts["origin"] == "release" else "",
        templates=facts.get("templates"),
        training_data=facts["training_data"],
        command=facts["command"],
        default=default,
        table=table,
        occupations=occupations,
        citation=PAPER_CITATION,
    )
