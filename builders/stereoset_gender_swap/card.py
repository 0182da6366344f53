"""The dataset card of ``datasets/stereoset_gender_swap``; every count comes from the build."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from bias_hub.builders.shared.card import CardMetadata, CardSections, sections_from_template
from bias_hub.builders.shared.sources import ResolvedSource
from bias_hub.builders.shared.text import markdown_table
from bias_hub.builders.stereoset_gender_swap.lexicon import NO_COUNTERPART, SETS, Lexicon
from bias_hub.builders.stereoset_gender_swap.pairs import PairBuild
from bias_hub.builders.stereoset_gender_swap.population import CONFIG as POPULATION
from bias_hub.builders.stereoset_gender_swap.population import LEFT_OUT, Population
from bias_hub.builders.stereoset_gender_swap.swap import REJECTIONS

__all__ = ["card_metadata", "card_sections"]


_CITATION = """\
@inproceedings{nadeem-etal-2021-stereoset,
  title = {{StereoSet}: Measuring stereotypical bias in pretrained language models},
  author = {Nadeem, Moin and Bethke, Anna and Reddy, Siva},
  booktitle = {Proceedings of ACL-IJCNLP 2021},
  year = {2021},
  pages = {5356--5371}
}"""


# How the study made its pairs, beside ours in every plan and report that reads a rule-built config.
STUDY_SWAP = "the study swapped every context with gpt-3.5-turbo (§3.1)"


def card_metadata(population: Population, rule_built: list[str]) -> CardMetadata:
    """The card's YAML; ``bias_hub_provenance`` holds ``left_out`` (the paper population's
    contexts left out by reason, for the reports of runs on it) and ``rule_built_configs`` (the
    configs swapped by rule, stand-ins for the study's LLM-swapped pairs, read by the plan and
    the reports)."""
    left_out = {reason: len(texts) for reason, texts in sorted(population.left_out.items())}
    provenance = {
        "left_out": {POPULATION: left_out},
        "rule_built_configs": rule_built,
        "rule_built": f"swapped by rule; {STUDY_SWAP}",
    }
    return CardMetadata(
        extra={"bias_hub_provenance": provenance},
        pretty_name="Gender-swapped StereoSet pairs",
        license="cc-by-sa-4.0",
        language=["en"],
        task_categories=["text-classification"],
        tags=["bias", "gender", "stereoset", "counterfactual", "attention"],
        source_datasets=["extended|McGill-NLP/stereoset"],
        annotations_creators=["machine-generated"],
        language_creators=["crowdsourced", "machine-generated"],
    )


def _word_counts(lexicon: Lexicon) -> str:
    counts = {kind: [0, 0] for kind in SETS}
    for male, female, kind in lexicon.pairs:
        counts[kind][0] += male != NO_COUNTERPART
        counts[kind][1] += female != NO_COUNTERPART
    rows = [[kind, m, f] for kind, (m, f) in counts.items()]
    names = lexicon.names
    if names is not None:
        rows.append(["first names", len(names.male), len(names.female)])
        if names.counterpart:
            paired = [
                sum(name in names.counterpart for name in side)
                for side in (names.male, names.female)
            ]
            rows.append(["of which paired for the swap (Thakur et al.)", *paired])
    return markdown_table(["gender words", "male", "female"], rows)


def _registry_names_text(lexicon: Lexicon) -> str:
    names = lexicon.names
    p = names.provenance[0]
    return (
        f"`{p['location']}` (origin: {p['origin']}, sha256 `{p['sha256']}`; {p['license']}): the names with a "
        f"frequency in Great Britain, Ireland or the USA, {len(names.male)} male and {len(names.female)} female "
        f"(of one gender in every entry, a name of one gender as a first part such as Mary included; "
        f"{len(names.ambiguous)} listed for both or as mostly one are no gender "
        f"word; {len(names.excluded)} that StereoSet uses as places or common words are ignored: "
        "`not_names.txt`, `not_names_registry.txt`: America, Sierra Leone, Katy Perry, Taco Bell, ...)"
    )


def card_sections(
    builds: dict[str, PairBuild],
    source: ResolvedSource,
    lexicon: Lexicon,
    *,
    names_note: str | None,
    llm: object | None,
    instance: dict,
    population: Population,
    population_lexicon: Lexicon,
) -> CardSections:
    """The card's prose (``card.md`` beside this file) with this build's counts and tables."""
    config_rows = [[name, len(b.rows), b.considered] for name, b in builds.items()]
    config_rows.append([POPULATION, len(population.rows), population.considered])
    reject_rows = [
        [reason, REJECTIONS[reason]] + [b.rejected.get(reason, 0) for b in builds.values()]
        for reason in REJECTIONS
    ]
    by_type, by_origin = [], []
    for name, build in builds.items():
        counts = Counter(row["bias_type"] for row in build.rows)
        by_type.append([name, *(counts[t] for t in ("gender", "profession", "race", "religion"))])
        male = sum(row["original_gender"] == "male" for row in build.rows)
        by_origin.append([name, male, len(build.rows) - male])
    by_set = [
        [name] + [b.word_sets.get(kind, 0) for kind in (*SETS, "name")]
        for name, b in builds.items()
    ]
    contexts = builds["contexts"]
    unswappable = ("no_gender_word", "mixed_gender", "first_name", "no_counterpart")
    left = {reason: len(population.left_out.get(reason, [])) for reason in LEFT_OUT}
    distinct = population.considered - left["duplicate_context"]
    dropped = sum(left.values()) - left["duplicate_context"]
    names = lexicon.names
    return sections_from_template(
        Path(__file__).with_name("card.md"),
        instance,
        population=POPULATION,
        config_table=markdown_table(["config", "pairs", "sentences considered"], config_rows),
        contexts_considered=contexts.considered,
        contexts_swappable=contexts.considered
        - sum(contexts.rejected.get(r, 0) for r in unswappable),
        context_pairs=len(contexts.rows),
        context_ungendered=len(contexts.ungendered),
        by_set_table=markdown_table(["config", *SETS, "first name"], by_set),
        by_type_table=markdown_table(
            ["config", "gender", "profession", "race", "religion"], by_type
        ),
        by_origin_table=markdown_table(["config", "male original", "female original"], by_origin),
        swapped_by_llm=any(r["swap_method"] == "llm" for r in population.rows),
        registry_names=_registry_names_text(population_lexicon),
        left=left,
        one_swapped=population.kinds["male"] + population.kinds["female"],
        identical=population.kinds["identical"],
        kept=len(population.rows),
        distinct=distinct,
        dropped=dropped,
        failed=dropped - left["mixed_gender"] - left["first_name"] - left["no_counterpart"],
        considered=population.considered,
        cleaned=len(population.cleaned),
        reasons_table=markdown_table(
            ["reason", "meaning", "contexts"],
            [[reason, LEFT_OUT[reason], count] for reason, count in left.items() if count],
        ),
        left_out=[(reason, population.left_out.get(reason, [])) for reason in LEFT_OUT],
        provenance=source.provenance(),
        names_note=names_note,
        name_files=[p for p in names.provenance if p["source"].startswith("data_debias")]
        if names_note is None
        else [],
        name_pairs=len(names.counterpart) // 2 if names_note is None else 0,
        word_counts=_word_counts(lexicon),
        llm=llm,
        reject_table=markdown_table(["reason", "meaning", *builds], reject_rows),
        first_name_texts=contexts.rejected_texts.get("first_name", []),
        citation=_CITATION,
    )
