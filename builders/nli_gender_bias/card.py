"""The dataset card of ``datasets/nli_gender_bias``: every count is read from the built rows.

The card says which configs are the authors' release and which are generated, where each
release file came from (and whether it is the file pinned at the release commit), which
rows of the release disagree with their own ``occ_word`` / ``occ_type``, and, when the
release is absent, why and how to add it.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

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
from bias_hub.builders.shared.card import CardMetadata, CardSections
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


def _lexicon_section(lexicon: list[LexiconRow], used: Counter) -> str:
    """Our review of the professions list against the authors' 13 / 87 / 171."""
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
    definitional = sum(decisions["definitional"].values())
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
    ours = " / ".join(str(used[kind]) for kind in OCCUPATION_TYPES)
    fewer = all(used[kind] <= AUTHORS_COUNTS[kind] for kind in OCCUPATION_TYPES)
    comparison = f"This build keeps {ours} (female / male / non-stereotyped)" + (
        ", fewer of every type." if fewer else "."
    )
    excluded = [row for row in lexicon if row.decision == "exclude" and row.type != "definitional"]
    listing = "; ".join(f"*{row.en}* ({row.note})" for row in excluded)
    merged = "; ".join(
        f"*{row.en}* → *{row.merged_into}* ({row.ja})" for row in lexicon if row.merged_into
    )
    return f"""{table}

{definitional} of the {len(lexicon)} source words have |definitional| ≥ 0.5 (actress,
businessman, waiter, ...) and are excluded by the paper's rule before any review.

**How ours compares with the authors' 13 / 87 / 171, and why.** {comparison}
The authors' list is not reproduced here (we wrote every
translation ourselves from the English source list) and their review decisions are not
published word by word, so the difference comes from our own review, which is stricter
in three ways: (1) we exclude source words that are not occupations or whose Japanese
rendering would itself be gendered or a slur; (2) we merge English words that share one
Japanese translation, because two identical premises would count twice; (3) we exclude
ambiguous words whose translation would pick one sense arbitrarily. Every decision is a
row of `builders/nli_gender_bias/occupations.tsv` with its reason, so a reviewer can
overturn any of them and rebuild.

Excluded (not definitional): {listing}.

Merged: {merged}."""


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


def _absent_note(release: Fetched) -> str:
    names = ", ".join(
        f"`{subset}{suffix}`" for _, suffix in FOLDERS.values() for subset in (*SUBSETS, "all")
    )
    return f"""**The authors' release is absent from this build**: {release.unavailable}. Its configs
({names}) are therefore missing, and the generated configs here are not the paper's data.
Add the release with `bias-hub build nli_gender_bias --authors-dir DIR` (DIR: your copy of
`{NLI_RELEASE_EVAL_FOLDER}` from {RELEASE}, or one of its folders), or rebuild where GitHub is
reachable: the default build fetches it from its canonical URLs and checks every file's sha256."""


def _summary(configs: dict, release: Fetched, generated: Generated | None) -> str:
    intro = """Japanese natural-language-inference pairs for measuring gender bias by occupation,
following Anantaprayoon, Kaneko and Okazaki (2024). Every premise names an occupation;
the hypothesis is the same sentence with 女性 (woman) or 男性 (man) in its place, so the
correct label is always **neutral**. A model that infers gender from the occupation
answers entailment for pro-stereotypical pairs and contradiction for anti-stereotypical
ones; any non-neutral answer on non-stereotypical pairs is a biased inference too.
Score predictions with `evaluate.load("metrics/nli_gender_bias")`."""
    parts = [intro, "Configs in this build:", _config_table(configs, release)]
    if release.reads:
        kinds = [read.folder.kind for read in release.reads]
        use = ["The configs without a prefix are the authors' release (ja_v1.1), file for file:"]
        if "untokenized" in kinds:
            use.append("`all` (or the three subset configs) evaluates a model as the paper does;")
        if "downsamp" in kinds:
            use.append(
                "`all_downsampled` is the set the authors' README recommends for the bias-rate "
                "meta-evaluation (the occupations of their bias-controlled training sets);"
            )
        if any("tokenized" in kind for kind in kinds):
            use.append("`*_tokenized` hold the authors' word-segmented text of the same rows;")
        use.append(
            "the `generated_*` configs are this project's own sets (our lexicon x our templates), "
            "not the paper's."
            if generated is not None
            else "no generated configs were built."
        )
        parts.append(" ".join(use))
    elif release.unavailable and generated is not None:
        parts.append(_absent_note(release))
    return "\n\n".join(parts)


_FIELDS = """- `id` (string): stable identifier: `<ps|as|ns>-<id in the file>` for the release (the same
  row has the same id in every folder), `<ps|as|ns>-<occupation>-<template>-<gender>` for the
  generated sets.
- `premise` (string): sentence with the occupation.
- `hypothesis` (string): the same sentence with 女性 or 男性.
- `label` (ClassLabel `entailment`, `neutral`, `contradiction`): the gold label, `neutral` (1).
- `occupation` (string): the occupation word the hypothesis replaces (for the release: found by
  comparing premise and hypothesis, spaces removed).
- `occupation_en` (string): the English word: for the release, the release's own name
  (`occupation-words/occup_en-ja_v1.1.tsv`, where the copy has it; our lexicon's otherwise);
  for the generated sets, the English source word (Bolukbasi et al.'s list) where our
  translation is this word, else empty.
- `occupation_type` (string): `female_stereotyped`, `male_stereotyped` or `non_stereotyped`: the
  type the row's set implies (PS: the hypothesis gender's stereotype; AS: the opposite one; NS:
  non-stereotyped).
- `hypothesis_gender` (string): `female` (女性) or `male` (男性).
- `template_id` (string): the premise pattern: `t01`... for the generated sets (our templates),
  `c` + 8 hex digits of the caption with the occupation replaced by `{subject}` for the release
  (the same caption gets the same id in every folder).
- `subset` (string): `pro_stereotypical`, `anti_stereotypical` or `non_stereotypical`; for the
  release, the file the row comes from."""
_RELEASE_FIELDS = """

Release configs only:

- `occupation_in_file` (string): the file's `occ_word`, as written.
- `occupation_type_in_file` (string): the file's `occ_type` (`female-stereo`, `male-stereo`,
  `neutral`), as written.
- `source_file` (string): the release's file, `<folder>/<file name>`."""


def _splits(configs: dict) -> str:
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
    genders = markdown_table(["config", *(f"{_SHORT[s]} female / male" for s in SUBSETS)], rows)
    return f"""One split, `test`, per config (rows per config in the summary's table).

Hypothesis gender per subset:

{genders}

Female-stereotyped occupations are few in Bolukbasi et al.'s list, so most pro- and
anti-stereotypical rows of the full sets come from male-stereotyped occupations (the
down-sampled sets balance them); the score weighs rows, not occupations."""


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


def _source(release: Fetched, generated: Generated | None) -> str:
    parts = []
    if release.reads:
        where = "; ".join(f"`{read.folder.kind}`: {read.folder.location}" for read in release.reads)
        parts.append(f"""**The authors' release.** Anantaprayoon et al.'s evaluation sets ja_v1.1,
{RELEASE}, folder `{NLI_RELEASE_EVAL_FOLDER}/` (MIT). Read in this build from: {where}.

{_provenance_table(release.provenance)}""")
    elif release.unavailable:
        parts.append(
            f"**The authors' release** ({RELEASE}) is not in this build: {release.unavailable}."
        )
    if generated is not None:
        parts.append(f"""**The generated sets.** Our lexicon and templates (files of this project, below) and
the scores of Bolukbasi et al.'s professions list:

{_provenance_table(generated.provenance)}""")
    return "\n\n".join(parts)


def _disagreements(reads: list[ReleaseRead]) -> str:
    by_id: dict[str, dict] = {}
    for read in reads:
        for row in read.disagreements:
            entry = by_id.setdefault(row["id"], {**row, "folders": []})
            entry["folders"].append(read.folder.kind)
    if not by_id:
        return "No row of the release disagrees with its own `occ_word` / `occ_type`."
    table = markdown_table(
        [
            "id",
            "premise",
            "occupation (from the pair)",
            "type (from the file's set)",
            "`occ_word` in file",
            "`occ_type` in file",
            "folders",
        ],
        [
            [
                f"`{row['id']}`",
                row["premise"],
                row["occupation"],
                row["occupation_type"],
                row["occupation_in_file"],
                row["occupation_type_in_file"],
                ", ".join(row["folders"]),
            ]
            for row in by_id.values()
        ],
    )
    return f"""{len(by_id)} row(s) of the release name an occupation in `occ_word` / `occ_type` that is not
the one the pair substitutes, or a type that does not belong in their file's set. They are kept
in their file's set with both values (`occupation` / `occupation_type` from the pair and the
set, `occupation_in_file` / `occupation_type_in_file` as written):

{table}"""


def _release_construction(release: Fetched) -> str:
    checks = []
    for read in release.reads:
        suffix = read.folder.config_suffix
        configs = f"configs `*{suffix}`" if suffix else "configs without a suffix"
        checks.append(f"- `{read.folder.kind}` ({configs}): {read.union_check}.")
    checks = "\n".join(checks)
    return f"""The release's files, read as shipped (JSON lines with `id`, `sentence1`, `sentence2`,
`label`, `occ_word`, `occ_type`) without changing any sentence, label or row order. The file a
row comes from decides its subset (`1-prostereo` -> `pro_stereotypical`, `2-antistereo` ->
`anti_stereotypical`, `3-nonstereo` -> `non_stereotypical`); each config `all*` is the three
set files one after the other. The release's own union, `4-all`, is not read into the
dataset (it carries no subset) but checked against them:

{checks}

{_disagreements(release.reads)}"""


def _generated_construction(generated: Generated, used: Counter) -> str:
    templates = generated.templates
    return f"""Two reviewed files written for this project:

- `builders/nli_gender_bias/occupations.tsv`: our review of every one of the {len(generated.lexicon)}
  professions of Bolukbasi et al. (2016), keyed by the English word: our decision (keep /
  merge / exclude, with the reason), our Japanese translation and the type the row was
  reviewed under. The definitional and stereotype scores are not in it: the build reads
  them from the upstream professions list (see Source Data), joins them by word and gives
  each word the type of the paper's rule (|definitional| < 0.5 and stereotype > 0.5:
  male-stereotyped; < −0.5: female-stereotyped; otherwise non-stereotyped;
  |definitional| ≥ 0.5: definitionally gendered, excluded), refusing to build when a word
  is missing on either side or its type differs from the reviewed one. Translations avoid
  words that mark gender (看護婦, 主婦, ～マン); the loader refuses them.
- `builders/nli_gender_bias/templates.tsv`: {len(templates)} caption-style sentences with one
  `{{subject}}` slot, varied in the slot's position (sentence-initial, after a place
  phrase, inside a relative clause, as a companion with と), in number (二人の, 数人の,
  ～たち) and in verb.

Each kept occupation fills each template to make the premise; the hypothesis is the
same template filled with 女性 or 男性. Stereotyped occupations give one
pro-stereotypical row (the congruent gender) and one anti-stereotypical row (the
opposite gender) per template; non-stereotyped occupations give one row per gender,
all in `generated_non_stereotypical`. The gold label is always neutral. Building twice gives
identical rows (no randomness; order: subset, occupation in source order, template, gender).

##### Templates

{markdown_table(["template_id", "text"], [[t.template_id, t.text] for t in templates])}

##### Occupation lexicon

{_lexicon_section(generated.lexicon, used)}"""


def _considerations(release: Fetched, generated: Generated | None) -> str:
    items = [
        """- **Binary gender words.** Only 女性 and 男性 are used; the sets cannot show bias about
  other gender identities.""",
        """- **Stereotypes come from English.** Occupation types come from English word-embedding
  scores (Bolukbasi et al. 2016); a Japanese occupation can carry a different stereotype,
  or none.""",
    ]
    if release.reads:
        items.append("""- **The release's sentences** are the authors' (captions of YJ Captions with an
  occupation in place of the person); the rows whose `occ_word` / `occ_type` disagree with the
  pair are listed under How the Data Was Built.""")
    if generated is not None:
        items.append("""- **The `generated_*` configs use our templates, not YJ Captions.** We wrote our own
  caption-style templates and occupation translations; scores on these configs are not
  directly comparable with the paper's tables, which the release's configs reproduce.""")
    items.append("""- **Template sentences.** Sentences are short and regular; a model's behaviour on them
  may not carry over to natural text.
- The data describe a harm (stereotyped inference about people's gender from their work);
  use them to measure and reduce it.""")
    return "\n".join(items)


def _licensing(release: Fetched, generated: Generated | None) -> str:
    items = []
    if release.reads:
        items.append(
            f"- The release's configs: the evaluation sets of Anantaprayoon et al. (2024), {RELEASE}, MIT."
        )
    if generated is not None:
        items.append("""- The `generated_*` configs: sentence templates, occupation translations and review
  decisions written for this project, MIT; occupation list and scores: Bolukbasi et al. (2016),
  debiaswe, MIT.""")
    return "\n".join(items)


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
    first = next(iter(configs))
    construction = []
    if release.reads:
        construction.append(f"#### The authors' release\n\n{_release_construction(release)}")
    if generated is not None:
        used = _occupation_types(configs[GENERATED_PREFIX + "all"]["test"])
        construction.append(
            f"#### The generated sets\n\n{_generated_construction(generated, used)}"
        )
    return CardSections(
        summary=_summary(configs, release, generated),
        instance=configs[first]["test"][0],
        instance_note=f"The first row of `{first}`:",
        fields=_FIELDS + (_RELEASE_FIELDS if release.reads else ""),
        splits=_splits(configs),
        source=_source(release, generated),
        command=command,
        construction="\n\n".join(construction),
        considerations=_considerations(release, generated),
        licensing=_licensing(release, generated),
        citation=_CITATION,
    )
