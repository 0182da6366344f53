"""The dataset card of ``datasets/nli_gender_bias``: every count is read from the built rows.

The card says which configs are the authors' release and which are generated, where each
release file came from (and whether it is the file pinned at the release commit), which
rows of the release disagree with their own ``occ_word`` / ``occ_type``, and, when the
release is absent, why and how to add it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from pathlib import Path

import datasets

from bias_hub.builders.nli_gender_bias.lexicon import OCCUPATION_TYPES, LexiconRow
from bias_hub.builders.nli_gender_bias.release import (
    FOLDERS,
    SET_STEMS,
    Fetched,
    ReleaseRead,
    release_file_name,
)
from bias_hub.builders.nli_gender_bias.rows import GENERATED_PREFIX, SUBSETS, Generated
from bias_hub.builders.shared.card import CardMetadata, CardSections, sections_from_template
from bias_hub.builders.shared.sources import (
    NLI_RELEASE_COMMIT,
    NLI_RELEASE_EVAL_FOLDER,
    NLI_RELEASE_REPOSITORY,
)
from bias_hub.builders.shared.text import markdown_table

# Occupations per type in the authors' Japanese selection (Anantaprayoon et al. 2024).
AUTHORS_COUNTS = {"female_stereotyped": 13, "male_stereotyped": 87, "non_stereotyped": 171}

METADATA = CardMetadata(
    pretty_name="NLI gender bias (Japanese): pro-, anti- and non-stereotypical sets",
    license="mit",
    language=["ja"],
    task_categories=["text-classification"],
    task_ids=["natural-language-inference"],
    tags=["bias", "gender-bias", "fairness", "nli"],
    annotations_creators=["expert-generated"],
    language_creators=["expert-generated"],
    source_datasets=["original"],
)
RELEASE = f"github.com/{NLI_RELEASE_REPOSITORY} @ {NLI_RELEASE_COMMIT[:7]}"
_SHORT = {"pro_stereotypical": "PS", "anti_stereotypical": "AS", "non_stereotypical": "NS"}

# The paper both NLI datasets come from (nli_bias_controlled cites it too).
PAPER_CITATION = """\
@inproceedings{anantaprayoon-etal-2024-evaluating-gender,
    title = "Evaluating Gender Bias of Pre-trained Language Models in Natural Language Inference by Considering All Labels",
    author = "Anantaprayoon, Panatchakorn and Kaneko, Masahiro and Okazaki, Naoaki",
    booktitle = "Proceedings of the 2024 Joint International Conference on Computational Linguistics, Language Resources and Evaluation (LREC-COLING 2024)",
    year = "2024",
    pages = "6395--6408",
    url = "https://aclanthology.org/2024.lrec-main.566",
}"""

_CITATION = (
    PAPER_CITATION
    + """
@inproceedings{bolukbasi2016man,
    title = "Man is to Computer Programmer as Woman is to Homemaker? Debiasing Word Embeddings",
    author = "Bolukbasi, Tolga and Chang, Kai-Wei and Zou, James Y. and Saligrama, Venkatesh and Kalai, Adam T.",
    booktitle = "Advances in Neural Information Processing Systems",
    volume = "29",
    year = "2016",
}"""
)


def _lexicon_table(lexicon: list[LexiconRow], used: Counter) -> tuple[str, int]:
    """Our review of the professions list against the authors' 13 / 87 / 171, and the number
    of definitional words."""
    decisions: dict[str, Counter] = {
        kind: Counter() for kind in (*OCCUPATION_TYPES, "definitional")
    }
    for row in lexicon:
        key = "merged" if row.merged_into else row.decision
        decisions[row.type][key] += 1
    rows = []
    for kind in OCCUPATION_TYPES:
        d = decisions[kind]
        rows.append(
            [kind, sum(d.values()), d["merged"], d["exclude"], used[kind], AUTHORS_COUNTS[kind]]
        )
    table = markdown_table(
        [
            "type",
            "source words",
            "merged (shared translation)",
            "excluded",
            "kept (this build)",
            "authors' selection",
        ],
        rows,
    )
    return table, sum(decisions["definitional"].values())


def _generated_values(generated: Generated, used: Counter) -> dict:
    lexicon = generated.lexicon
    table, definitional = _lexicon_table(lexicon, used)
    excluded = [row for row in lexicon if row.decision == "exclude" and row.type != "definitional"]
    templates = generated.templates
    return {
        "lexicon_size": len(lexicon),
        "template_count": len(templates),
        "templates_table": markdown_table(
            ["template_id", "text"], [[t.template_id, t.text] for t in templates]
        ),
        "lexicon_table": table,
        "definitional": definitional,
        "ours": " / ".join(str(used[kind]) for kind in OCCUPATION_TYPES),
        "fewer": all(used[kind] <= AUTHORS_COUNTS[kind] for kind in OCCUPATION_TYPES),
        "excluded": "; ".join(f"*{row.en}* ({row.note})" for row in excluded),
        "merged": "; ".join(
            f"*{row.en}* → *{row.merged_into}* ({row.ja})" for row in lexicon if row.merged_into
        ),
    }


def _occupation_types(table: datasets.Dataset) -> Counter:
    """Distinct occupations per type (the type the row was made or filed under)."""
    return Counter(
        kind for _, kind in set(zip(table["occupation"], table["occupation_type"], strict=True))
    )


def _config_table(configs: dict[str, dict[str, datasets.Dataset]], release: Fetched) -> str:
    origin = {}
    for read in release.reads:
        for subset, stem in SET_STEMS.items():
            name = release_file_name(read.folder.kind, stem, read.folder.version)
            origin[read.folder.config(subset)] = f"release `{read.folder.kind}/{name}`"
        origin[read.folder.config("all")] = (
            f"release `{read.folder.kind}/`: the three sets in order"
        )
    rows = []
    for config, splits in configs.items():
        table = splits["test"]
        kinds = _occupation_types(table)
        rows.append(
            [
                f"`{config}`",
                f"{len(table):,}",
                " / ".join(str(kinds[kind]) for kind in OCCUPATION_TYPES),
                origin.get(config, "generated: our lexicon x our templates"),
            ]
        )
    return markdown_table(["config", "rows (split `test`)", "occupations F / M / N", "from"], rows)


def _genders_table(configs: dict) -> str:
    rows = []
    for config, splits in configs.items():
        if not (config.startswith("all") or config == GENERATED_PREFIX + "all"):
            continue
        table = splits["test"]
        counts = Counter(zip(table["subset"], table["hypothesis_gender"], strict=True))
        rows.append(
            [f"`{config}`"]
            + [
                f"{counts[(subset, 'female')]:,} / {counts[(subset, 'male')]:,}"
                for subset in SUBSETS
            ]
        )
    return markdown_table(["config", *(f"{_SHORT[s]} female / male" for s in SUBSETS)], rows)


def _provenance_table(provenance: list[dict[str, str]]) -> str:
    columns = ["source", "origin", "location", "sha256", "licence"]
    has_release = any("release" in p for p in provenance)
    header = columns + (["the pinned release's file?"] if has_release else [])
    return markdown_table(
        header,
        [
            [p["source"], p["origin"], p["location"], f"`{p['sha256'][:16]}…`", p["license"]]
            + ([p.get("release", "")] if has_release else [])
            for p in provenance
        ],
    )


def _disagreements(reads: list[ReleaseRead]) -> list[dict]:
    by_id: dict[str, dict] = {}
    for read in reads:
        for row in read.disagreements:
            entry = by_id.setdefault(row["id"], {**row, "folders": []})
            entry["folders"].append(read.folder.kind)
    return list(by_id.values())


# The disagreements table's columns between id and folders: header -> row field.
_DISAGREEMENT_COLUMNS = {
    "premise": "premise",
    "occupation (from the pair)": "occupation",
    "type (from the file's set)": "occupation_type",
    "`occ_word` in file": "occupation_in_file",
    "`occ_type` in file": "occupation_type_in_file",
}


def _disagreements_table(rows: list[dict]) -> str:
    return markdown_table(
        ["id", *_DISAGREEMENT_COLUMNS, "folders"],
        [
            [f"`{row['id']}`", *(row[key] for key in _DISAGREEMENT_COLUMNS.values())]
            + [", ".join(row["folders"])]
            for row in rows
        ],
    )


def metadata(configs: dict, release: Fetched) -> CardMetadata:
    """The card's YAML fields, with where the release came from for programs that read it."""
    provenance = {
        "release": f"{RELEASE}:{NLI_RELEASE_EVAL_FOLDER}",
        "release_folders": {read.folder.kind: read.folder.location for read in release.reads},
        "release_unavailable": None if release.reads else release.unavailable,
        "generated_configs": [config for config in configs if config.startswith(GENERATED_PREFIX)],
    }
    return dataclasses.replace(
        METADATA, extra={**METADATA.extra, "bias_hub_provenance": provenance}
    )


def card_sections(
    configs: dict[str, dict[str, datasets.Dataset]],
    *,
    release: Fetched,
    generated: Generated | None,
    command: str,
) -> CardSections:
    """The card's prose (``card.md`` beside this file) with this build's counts and tables."""
    first = next(iter(configs))
    kinds = [read.folder.kind for read in release.reads]
    disagreements = _disagreements(release.reads)
    values = {}
    if generated is not None:
        used = _occupation_types(configs[GENERATED_PREFIX + "all"]["test"])
        values = _generated_values(generated, used)
    return sections_from_template(
        Path(__file__).with_name("card.md"),
        configs[first]["test"][0],
        first=first,
        kinds=kinds,
        tokenized=any("tokenized" in kind for kind in kinds),
        generated=generated is not None,
        unavailable=release.unavailable,
        release=RELEASE,
        eval_folder=NLI_RELEASE_EVAL_FOLDER,
        config_table=_config_table(configs, release),
        absent_configs=", ".join(
            f"`{subset}{suffix}`" for _, suffix in FOLDERS.values() for subset in (*SUBSETS, "all")
        ),
        genders_table=_genders_table(configs),
        release_where="; ".join(
            f"`{read.folder.kind}`: {read.folder.location}" for read in release.reads
        ),
        release_provenance=_provenance_table(release.provenance) if kinds else "",
        generated_provenance=_provenance_table(generated.provenance) if generated else "",
        command=command,
        union_checks=[
            (read.folder.kind, read.folder.config_suffix, read.union_check)
            for read in release.reads
        ],
        disagreements=disagreements,
        disagreements_table=_disagreements_table(disagreements) if disagreements else "",
        citation=_CITATION,
        **values,
    )
