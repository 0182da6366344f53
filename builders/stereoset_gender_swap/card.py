"""The dataset card of ``datasets/stereoset_gender_swap``; every count comes from the build."""

from __future__ import annotations

from textwrap import indent

from bias_hub.builders.shared.card import CardMetadata, CardSections
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


def _names_text(lexicon: Lexicon, registry: Lexicon, names_note: str | None) -> str:
    """How first names are gender words in the swapped configs, and which ones the rule swaps."""
    guard = f"""first names: {_registry_names_text(registry)}. A name is a gender word only when capitalised
     (not in all capitals). The registry gives a name's gender but pairs no name with another, so
     the rule cannot swap it: a sentence holding one is left out (`first_name`), because swapping
     only its other gender words would pair "My Uncle John" with "My Aunt John", "Mr. Mike" with
     "Mrs. Mike" or "Beth is a mommy" with "Beth is a daddy", and a partner made up here would be
     data of our own. A sentence holding names of both genders, or a name beside a gender word
     of the other gender ("Charles' new girlfriend"), is mixed and not swapped."""
    if names_note is not None:
        return f"""{guard}

     Thakur et al.'s name pairs, which the study drew its names from (§4.1): {names_note}."""
    names = lexicon.names
    files = "\n".join(
        f"     - `{p['location']}` (origin: {p['origin']}, sha256 `{p['sha256']}`)"
        for p in names.provenance
        if p["source"].startswith("data_debias")
    )
    return f"""{guard}

     Thakur et al.'s name pairs (github.com/himansh005/data_debias, MIT), which the study drew
     its names from (§4.1), swap the names they pair:
{files}

     Their gender is a name's side in `names_pairs_1000_scaled.json`, else the one list that
     holds it (their judgement wins over the registry's); names listed for both genders are no
     gender word; names StereoSet uses as places or common words (`not_names.txt`: Jordan,
     Sierra Leone, June, Don't, ...) are ignored. The rule turns a name into its partner in the
     pairs file ({len(names.counterpart) // 2} pairs); a name without a partner is left out as above."""


def _first_names_listed(contexts: PairBuild) -> str:
    """Every context the default config left out for a first name it cannot swap."""
    texts = contexts.rejected_texts.get("first_name", [])
    if not texts:
        return "No context sentence was left out for a first name in this build."
    listed = "\n".join(f"- {text}" for text in texts)
    return (
        f"Every context sentence `contexts` left out for a first name (`first_name`):\n\n{listed}"
    )


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


def _reconciliation(population: Population, distinct: int) -> str:
    """Why §3.2's 2,399 cannot be matched to the data (every number but the paper's from the build)."""
    cleaned = len(population.cleaned)
    return f"""**§3.2's 2,399 cannot be reconciled with StereoSet.** The paper swapped the 2,123 contexts
(§3.1), removed the duplicated sentences and says each of its two sets (male, female) then held
2,399 sentences (§3.2), 2,111 after its clean-up (§4.1). Removing duplicates cannot make 2,123
sentences into 2,399, and no count of the contexts reaches it: this build's source holds
{population.considered:,} contexts ({2399 - population.considered:,} short of 2,399), {distinct:,} distinct texts
({2399 - distinct:,} short) and {cleaned:,} distinct sentences after the clean-up ({2399 - cleaned:,} short);
StereoSet's dev split alone holds the 2,123 contexts that §3.1 counts for its "validation and
test data". The paper does not say what the other sentences were (several sentences of one LLM
reply counted apart, say, or a misprint) and links no copy of its data to check. So this config
follows 2,123 -> {distinct:,} -> 2,111 and models no step of 2,399 sentences. That 2,111 exceeds
the dev split's 2,107 distinct cleaned-up contexts is why we read the study's filter as keeping
identical pairs, after removing duplicates before its clean-up."""


def _population_text(population: Population, lexicon: Lexicon) -> str:
    """The paper population's counts step by step against the study's, and every context left out."""
    left = {reason: len(population.left_out.get(reason, [])) for reason in LEFT_OUT}
    distinct = population.considered - left["duplicate_context"]
    swapped = population.kinds["male"] + population.kinds["female"]
    dropped = sum(left.values()) - left["duplicate_context"]
    failed = dropped - left["mixed_gender"] - left["first_name"] - left["no_counterpart"]
    identical = population.kinds["identical"]
    steps = [
        ["context sentences of the intersentence items (§3.1)", "2,123", population.considered],
        [
            "sentences per gender after duplicates were removed (§3.2)",
            "2,399",
            "not reconcilable (below)",
        ],
        ["distinct contexts (duplicates removed)", "", distinct],
        ["pairs kept after the clean-up (§4.1)", "2,111", len(population.rows)],
        ["of which identical pairs (no gender word)", "", identical],
        ["of which pairs that differ", "", len(population.rows) - identical],
        ["of which one gender swapped", "", swapped],
        [
            "contexts with words of both genders (kept by the study, left out here)",
            "",
            left["mixed_gender"],
        ],
    ]
    reasons = [[reason, LEFT_OUT[reason], count] for reason, count in left.items() if count]
    listed = "\n".join(
        f"- `{reason}`: {text}"
        for reason in LEFT_OUT
        for text in population.left_out.get(reason, [])
    )
    return f"""**The paper's population: `{POPULATION}`.**

The study took all 2,123 contexts, removed duplicated sentences, swapped the genders with
gpt-3.5-turbo and kept the pairs whose forms differ only in gender words: 2,111 pairs. The
contexts normalise to fewer distinct sentences than 2,111, so the study kept the contexts
without a gender word as identical pairs (its swap leaves them unchanged and its filter passes
them) and removed duplicates before its clean-up: the 2,123 contexts hold 2,115 distinct texts,
which its filter brought to 2,111 (the paper prints only 2,123, 2,399 and 2,111; this order is
our reading of them). `{POPULATION}` follows that order: duplicates of a context's text dropped, the clean-up,
identical pairs for contexts without a gender word, every other context swapped
({"by the LLM" if any(r["swap_method"] == "llm" for r in population.rows) else "by rule: no LLM endpoint was given"})
and kept when it passes the study's filter. The first names are gender words here as in the
study, from {_registry_names_text(lexicon)}. The rule knows no counterpart of a
registry name, so a context holding one is left out (an LLM swap turns it): no pair swaps the
gender words and keeps a name of the other gender. Each row's `name_list` names the list.

The study also kept the {left["mixed_gender"]} contexts holding words of both genders ("Her
husband works as a mover.", "He has a nice mother."), swapped whole. Neither of their forms is
the male one, and a pair has one male and one female form: whichever form it called male would
record "Her" or "mother" as a male word, which the attention statistics then average as male.
So they are left out of this config, and of its statistics, and counted here and in the report
of every `bias-hub stereoset attention` run on it; they are listed below.

{markdown_table(["count", "study", "this build"], steps)}

The {identical} identical pairs stay in the data, as the study's count holds them, but they carry
no gender word to attend to and no perplexity gap: `bias-hub stereoset attention` studies the
{len(population.rows) - identical} pairs that differ by default and says how many it left out
(`--identical-pairs include` adds them back).

This build against the study's 2,111: {distinct} distinct contexts, less {dropped} left out
(below), gives {len(population.rows)}. The difference, {2111 - len(population.rows):+d}, is the
{left["mixed_gender"]} contexts with words of both genders left out here, the
{left["first_name"]} contexts with a first name and the {left["no_counterpart"]} with a word
without counterpart, which the study's LLM swap could turn, less the 4 pairs the study's
filter removed from its LLM's output and which a rule swap does not produce (the paper does not
say which){"; " + str(failed) + " pairs failed the filter here" if failed else ""}.

{_reconciliation(population, distinct)}

Left out:

{markdown_table(["reason", "meaning", "contexts"], reasons)}

Every context left out:

{listed}"""


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
    config_rows = [[name, len(b.rows), b.considered] for name, b in builds.items()]
    config_rows.append([POPULATION, len(population.rows), population.considered])
    reject_rows = [
        [reason, REJECTIONS[reason]] + [b.rejected.get(reason, 0) for b in builds.values()]
        for reason in REJECTIONS
    ]
    by_type = []
    for name, build in builds.items():
        counts: dict[str, int] = {}
        for row in build.rows:
            counts[row["bias_type"]] = counts.get(row["bias_type"], 0) + 1
        by_type.append(
            [name] + [counts.get(t, 0) for t in ("gender", "profession", "race", "religion")]
        )
    by_origin = []
    for name, build in builds.items():
        male = sum(row["original_gender"] == "male" for row in build.rows)
        by_origin.append([name, male, len(build.rows) - male])
    by_set = [
        [name] + [b.word_sets.get(kind, 0) for kind in (*SETS, "name")]
        for name, b in builds.items()
    ]
    contexts = builds["contexts"]
    paper_rows = [
        ["context sentences of the intersentence items", "2,123", contexts.considered],
        [
            "sentences of one gender the rule can swap (study: every context, by LLM)",
            "",
            contexts.considered
            - sum(
                contexts.rejected.get(r, 0)
                for r in ("no_gender_word", "mixed_gender", "first_name", "no_counterpart")
            ),
        ],
        [
            "pairs after the clean-up (forms differ only in gender words)",
            "2,111",
            len(contexts.rows),
        ],
        [
            "the same, counting sentences without a gender word as identical pairs",
            "",
            len(contexts.rows) + len(contexts.ungendered),
        ],
    ]
    llm_line = (
        f"The `llm` config asked `{llm.model}` at `{llm.base_url}` with the study's instruction "
        f"(「{llm.instruction}」) followed by each context sentence; {llm.requests_sent} requests were sent "
        "in this build, the rest came from the reply cache."
        if llm is not None
        else "No `llm` config in this build (it needs an endpoint: `--llm-base-url` / `--llm-model`)."
    )
    provenance = source.provenance()
    return CardSections(
        summary="""Sentences of StereoSet's intersentence task, each in a **male form** and a **female
form** that differ only in gender words (he/she, his/her, man/woman, first names, ...). They
let one ask whether a model treats the same sentence differently when only the gender
changes: how much each word attends to the gender words, and how natural a causal LM finds
each form (perplexity). The default config `contexts` holds the sentences a study of BERT's
attention to gender words swapped: the 2,123 context sentences of the intersentence items,
of which it kept 2,111 per gender after its clean-up; `continuations` holds the three
continuation sentences of the same items. This build's own counts are below.""",
        instance=instance,
        instance_note="The first row of `contexts`:",
        fields="""- `id`: `<config>-<number>`.
- `source_id`: `<row>:<field>`: the row number in the StereoSet file and the field the
  sentence came from (`context`, or `stereotype`, `anti-stereotype`, `unrelated`).
- `bias_type`, `target`: the StereoSet item's domain and target term.
- `label`: the field the sentence came from (for a continuation, StereoSet's gold label).
- `original_gender`: which form is StereoSet's own sentence (the other is the swap); in
  `paper_population` also `none` (an identical pair: no gender word).
- `male_sentence`, `female_sentence`: the two forms.
- `gender_words`: one entry per gender word: its word index (words split as BERT's basic
  tokenizer splits them: letters/digits runs, each other character alone), the male and
  female word, and their character spans `[start, end)` in each sentence.
- `swap_method`: the config that built the row (`contexts`, `continuations`: rule; `llm`); in
  `paper_population`: `rule`, `llm` or `identical`.
- `name_list` (`paper_population` only): the first-name list whose names were gender words.""",
        splits=f"""One split, `test`, per config:

{markdown_table(["config", "pairs", "sentences considered"], config_rows)}

Against the study (§3.1, §4.1), for the default config `contexts`:

{markdown_table(["count", "study", "this build"], paper_rows)}

The study swapped with gpt-3.5-turbo and kept a pair when its forms differ only in gender
words. It does not say what became of sentences without a gender word; an unchanged
sentence passes that filter as an identical pair, and counting those (last row) comes close
to the study's 2,111, so its count most likely includes them. Such a pair has no gender
word to attend to and no perplexity gap, so `contexts` leaves it out (rejection
`no_gender_word`); `{POPULATION}` keeps it (below). The `llm` config follows the study's
swapping method.

Pairs by the sets their gender words come from (a pair may count in several):

{markdown_table(["config", *SETS, "first name"], by_set)}

Pairs by StereoSet domain:

{markdown_table(["config", "gender", "profession", "race", "religion"], by_type)}

Which form is the original:

{markdown_table(["config", "male original", "female original"], by_origin)}

{_population_text(population, population_lexicon)}""",
        source=f"""StereoSet's dev split (Nadeem et al., 2021), CC BY-SA 4.0:
`{provenance["location"]}` (origin: {provenance["origin"]}, sha256 `{provenance["sha256"]}`).
All intersentence items of every domain: their context sentences (`contexts`) and their
stereotype, anti-stereotype and unrelated continuations (`continuations`).""",
        command="bias-hub build stereoset_gender_swap",
        construction=f"""Code: `builders/stereoset_gender_swap/`.

1. Clean-up of each sentence (as in the study, §4.1): *ma'am* -> *madam*, first letter
   capitalised, final period added.
2. Gender words, as in the study (§4.1):
   - `study`: its appendix's 30 male and 30 female words, paired by position, with *niece*
     and *nephew* put on their correct sides (the appendix swaps them);
   - `judged`: words this project judged gendered in StereoSet's sentences (the study added
     the words its authors judged gendered in its data): *guy*, *king*/*queen*, *wives*,
     *policeman*, ... (`lexicon.tsv`); a word whose other-gender form is also the generic
     word (*actress*) has no counterpart;
   - {_names_text(lexicon, population_lexicon, names_note)}

{indent(_word_counts(lexicon), "   ")}

   A sentence with no gender word, or with words of both genders, is not swapped.
3. Swapping. `contexts`, `continuations`: every gender word becomes its counterpart,
   capitalisation kept, every other character unchanged; *her* becomes *his* before a noun
   and *him* otherwise, *his* becomes *her* or *hers* likewise, decided from the next word
   (a heuristic: it errs on "her" before an adverb). Titles swap with the rest: *Mr.* <->
   *Mrs.*, *sir* <-> *madam*, *king* <-> *queen*; *Ms.* and *Miss* have no counterpart of their
   own (a sentence holding one is left out). A first name swaps only into its partner in a
   list of name pairs (above); without one the sentence is left out (`first_name`). {llm_line}
4. Filter (the study's): a pair is kept only if the two forms have the same words except
   gender words, each turned into one of its counterparts (a first name into any first name
   of the other gender), and the swapped form holds no word of the original gender.
   Duplicated pairs are dropped.

Rejections (counts from this build):

{markdown_table(["reason", "meaning", *builds], reject_rows)}

{_first_names_listed(contexts)}""",
        considerations="""The pairs treat gender as binary and equate it with closed lists of English words and
first names; they say nothing about non-binary people. A first name's gender is a
population statistic, not a fact about a person. Swapping keeps the rest of the sentence,
so a pair may become implausible ("She grew a beard" is kept). StereoSet's sentences carry
the stereotypes they were written to test; the data describes those stereotypes, it does
not endorse them. Gender words differ in frequency (he vs she, one name vs another), which
confounds perplexity comparisons; the `bias-hub stereoset` pipeline reports a
frequency-matched view.""",
        licensing="""CC BY-SA 4.0, as StereoSet. The first names' genders come from gender-guesser's
`nam_dict.txt` (GNU FDL; only which names are gender words, no text of it is in the data) and,
when given, Thakur et al.'s name pairs (MIT). The lexicon, the name exclusions and the code are
the bias-hub project's (lexicon: CC0-1.0).""",
        citation=_CITATION,
    )
