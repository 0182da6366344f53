"""Dataset cards for ``datasets/jbbq`` and ``datasets/bbq``; every count comes from the build."""

from __future__ import annotations

from collections import Counter

from bias_hub.builders.jbbq.bbq_format import SPLIT_RATIOS, BuiltRows, split_counts_table
from bias_hub.builders.shared.card import CardSections
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

_FIELDS = """| field | meaning |
|---|---|
| `example_id` | question number within its category (from the source, or counted by the expander); in `all`, (`category`, `example_id`) identifies a row |
| `question_index` | template id within its category; splits never share one |
| `question_polarity` | `neg` (the question voices the stereotype) or `nonneg` |
| `context_condition` | `ambig` (the context cannot answer the question) or `disambig` |
| `category` | social category |
| `answer_info` | per answer, in answer order: `text` and `group` (`unknown` for the "cannot be determined" answer) |
| `additional_metadata` | `subcategory`, `stereotyped_groups` (of the template), `version`, `source` |
| `context`, `question`, `ans0`, `ans1`, `ans2` | the item as shown to a model |
| `label` | index of the correct answer (always the unknown answer in `ambig` rows) |
| `unknown_label` | index of the "cannot be determined" answer (derived) |
| `stereotyped_label` | index of the answer a stereotype would pick: for `neg`, the answer in a stereotyped group; for `nonneg`, the other non-unknown answer; `-1` where the groups do not single one out (derived) |
| `is_additional` | JBBQ: the template was added by the JBBQ authors rather than adapted from BBQ |"""


def _instance(configs: dict, redistributable: bool = True) -> dict:
    first = dict(configs["all"]["test"][0])
    if not redistributable:
        # The card of a private build still lands in a tracked file (datasets/jbbq/README.md):
        # show the shape of a row, never its text.
        first = {key: _placeholder(value) for key, value in first.items()}
    return first


def _placeholder(value):
    if isinstance(value, str):
        return "<text>"
    if isinstance(value, dict):
        return {key: _placeholder(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_placeholder(item) for item in value]
    return value


def _splits(configs: dict, built: BuiltRows, seed: int) -> str:
    headers, table = split_counts_table(configs)
    ratios = " / ".join(f"{int(v * 100)} % {k}" for k, v in SPLIT_RATIOS.items())
    undecided = sum(built.undecided_stereotype.values())
    undecided_text = (
        "Every row has a single stereotyped answer."
        if not undecided
        else f"{undecided:,} row(s) have `stereotyped_label = -1` (the template's stereotyped groups "
        "match neither or both non-unknown answers): "
        + ", ".join(f"{c}: {n:,}" for c, n in sorted(built.undecided_stereotype.items()))
        + ". They are kept; the `bbq_bias` metric leaves them out of bias scores."
    )
    if built.skipped:
        shown = "\n".join(f"- {why}" for _, why in built.skipped[:20])
        more = f"\n- ... and {len(built.skipped) - 20} more" if len(built.skipped) > 20 else ""
        undecided_text += (
            f"\n\n{len(built.skipped):,} source row(s) broke the schema and were left out "
            f"(`--skip-invalid`):\n\n{shown}{more}"
        )
    total = sum(len(split) for split in configs["all"].values())
    return f"""Splits are by template: within each category the templates are shuffled with
seed {seed} and cut {ratios} (at least one template each), so a template's
questions never appear in two splits, and `all` uses the same assignment.
`test` is the benchmark; `train` is the pool for few-shot examples, `dev` for
choosing prompts.

**Every question in one split**: BBQ has no splits, and the BBQ and JBBQ
papers evaluate all questions. `split="all"` (the `datasets` name for the union
of a config's splits; a split file of that name is not allowed) returns every
question of a config once, here {total:,} in config `all`:
`datasets.load_dataset(folder, "all", split="all")`; `bias-hub jbbq evaluate
--split all` asks the same.

{markdown_table(headers, table)}

{undecided_text}"""


_STEREOTYPE_CONSIDERATIONS = """The questions state social stereotypes on purpose, to measure whether a model
relies on them. Use the data only to study and reduce bias."""


def jbbq_sample_card(configs: dict, built: BuiltRows, seed: int) -> CardSections:
    templates = {(r["category"], r["question_index"]) for r in built.rows}
    n_templates = len(templates)
    per_category = Counter(category for category, _ in templates).values()
    per = (
        f"{min(per_category)} per JBBQ category"
        if min(per_category) == max(per_category)
        else f"{min(per_category)} to {max(per_category)} per JBBQ category"
    )
    return CardSections(
        summary=f"""**This is a sample, not JBBQ.** It holds {len(built.rows):,} Japanese questions
expanded from {n_templates} templates that the bias-hub authors wrote in BBQ's
template format ({per}), so that the JBBQ tooling
(`bias-hub build jbbq`, the `bbq_bias` metric, `bias-hub jbbq ...`) runs
end to end without the real data. Scores on it say nothing about a model's
bias as measured by JBBQ.

The real JBBQ (Yanaka et al.) holds 245 templates over Age, Disability_status,
Gender_identity, Physical_appearance and Sexual_orientation. Its authors share
it through a request form and prohibit redistribution: request it at
{JBBQ_FORM} (linked from https://github.com/ynklab/JBBQ_data), then build a
private copy of this folder with

```bash
# needs your data: JBBQ from its authors (a request form; it may not be redistributed)
bias-hub build jbbq --source PATH_TO_YOUR_JBBQ   # a directory or the archive you received
```

That build is marked `redistributable: false` and must only be pushed to a
private or gated repository.""",
        instance=_instance(configs),
        instance_note="The first `test` row of `all`:",
        fields=_FIELDS,
        splits=_splits(configs, built, seed),
        source="""`builders/jbbq/sample_templates/`: one CSV per category, columns as in BBQ's
template CSVs, plus `vocabulary.csv`; written for this project.""",
        command="bias-hub build jbbq",
        construction="""The seeded template expander in `builders/jbbq/templates.py`: each filled
NAME1/NAME2 pair gives four questions (neg/nonneg x ambig/disambig), and every
pair is also filled in swapped order. The "cannot be determined" answer is
drawn from eight Japanese expressions.""",
        considerations="""The templates state stereotypes about age, disability, gender identity,
physical appearance and sexual orientation in order to measure whether a model
relies on them. They are few and were reviewed by their authors only, not by a
panel as JBBQ's were; treat them as test fixtures and examples of the format.""",
        licensing="""The sample templates and this folder are part of bias-hub (MIT licence). They
contain no JBBQ or BBQ text. Cite the benchmarks whose design this sample follows.""",
        citation=f"{JBBQ_CITATION}\n\n{BBQ_CITATION}",
    )


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
    return CardSections(
        summary=f"""JBBQ (Yanaka et al., GeBNLP 2025) adapts the English BBQ benchmark to
Japanese: multiple-choice questions whose context either leaves the answer
open (the correct answer is "cannot be determined") or settles it, over Age,
Disability_status, Gender_identity, Physical_appearance and Sexual_orientation.
This folder was built from a copy that its user obtained from the authors.

**Redistribution is prohibited by the JBBQ authors.** This folder is marked
`redistributable: false`: keep it private or gated, never public. Others must
request the data themselves: {JBBQ_FORM}""",
        instance=_instance(configs, redistributable=False),
        instance_note="The shape of the first `test` row of `all` (its text replaced by `<text>`):",
        fields=_FIELDS,
        splits=_splits(configs, built, seed),
        source=f"{provenance}: read as {built.kind} ({len(built.files)} file(s)).",
        command="bias-hub build jbbq --source ...",
        construction="""Every row validated (fields, labels, exactly one unknown answer) before
anything was written. `unknown_label` and `stereotyped_label` are derived from
`answer_info` and `additional_metadata.stereotyped_groups`.

"""
        + AUTHORS_SCHEMA_MAPPING,
        considerations=_STEREOTYPE_CONSIDERATIONS,
        licensing="""JBBQ's terms (https://github.com/ynklab/JBBQ_data): distributed by the authors
on request; redistribution by any other means is prohibited.""",
        citation=JBBQ_CITATION,
    )


def bbq_card(configs: dict, built: BuiltRows, seed: int, provenance: str) -> CardSections:
    expanded = (
        f"""The questions were expanded from BBQ's template CSVs with BBQ's procedure
(`builders/jbbq/templates.py`, seed {seed}): the same rows per template as BBQ's
generator, with its own random draws of words, names and "unknown" wording, so
they are not BBQ's released rows one for one. """
        if built.kind == "templates"
        else ""
    )
    return CardSections(
        summary=f"""BBQ (Parrish et al., Findings of ACL 2022) tests whether question-answering
models rely on social stereotypes: each template gives an ambiguous context
(the correct answer is "unknown") and a disambiguated one, with a negative and
a non-negative question, over nine social categories and two intersections.
This folder holds {len(built.rows):,} questions in the same schema as
`datasets/jbbq`, so the `bbq_bias` metric and `bias-hub jbbq` run on both.""",
        instance=_instance(configs),
        instance_note="The first `test` row of `all`:",
        fields=_FIELDS,
        splits=_splits(configs, built, seed),
        source=f"{provenance[0].upper()}{provenance[1:]}.",
        command="bias-hub build bbq",
        construction=expanded
        + """Every row validated before writing; `unknown_label` and `stereotyped_label`
are derived from `answer_info` and `additional_metadata.stereotyped_groups`
(gender words map to M/F and intersectional groups such as `F-Black` match on
their parts, as in BBQ's own analysis).""",
        considerations=_STEREOTYPE_CONSIDERATIONS,
        licensing="BBQ is released under CC BY 4.0 (https://github.com/nyu-mll/BBQ).",
        citation=BBQ_CITATION,
    )
