"""The dataset card of ``datasets/winobias``; counts and checksums come from the build."""

from __future__ import annotations

from bias_hub.builders.shared.card import CardMetadata, CardSections
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

_CITATION = r"""@inproceedings{zhao-etal-2018-gender,
  title = {Gender Bias in Coreference Resolution: Evaluation and Debiasing Methods},
  author = {Zhao, Jieyu and Wang, Tianlu and Yatskar, Mark and Ordonez, Vicente and Chang, Kai-Wei},
  booktitle = {Proceedings of NAACL-HLT 2018},
  pages = {15--20},
  year = {2018}
}"""


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
    return CardSections(
        summary="""WinoBias (Zhao et al., 2018): sentences in which a pronoun refers to one of two
occupations. In the *pro-stereotypical* sentences the pronoun's gender agrees with the
occupation's stereotype (U.S. Bureau of Labor Statistics), in the *anti-stereotypical* ones
it does not; a coreference system without gender bias resolves both equally well, so the
pro minus anti difference in precision and recall (MUC, B-cubed and CEAF-e averaged; see
`metrics/winobias_gap`) is its bias. *Type 1* sentences can only be resolved from world
knowledge ("The physician hired the secretary because he was overwhelmed with
clients."); in *type 2* the syntax also tells ("The secretary called the physician and
told him about a new patient.").

The RNSB-vs-WinoBias study (Kato and Miyao) correlates these gaps of a coreference model
trained on each bias-controlled embedding with the embeddings' WEAT and RNSB
(`bias-hub embeddings correlate --coref`).""",
        instance=instance,
        instance_note="The first test row of `all`:",
        fields=f"""- `document_id`, `part`: the document key of the CoNLL file (`nw/<split>_type<N>/stereotype//<i>`
  for pro-, `not_stereotype` for anti-stereotypical sentences); a system's CoNLL output
  carries the same keys, and `bias-hub embeddings correlate` matches them.
- `type` (1 or 2), `condition` (`pro` or `anti`).
- `sentence` (the words joined by spaces), `tokens` (the words of the CoNLL file).
- `clusters`: the gold coreference clusters, each a list of mentions `[start, end]`
  (token positions, both inclusive); every sentence has one cluster: the occupation and
  the pronoun that refers to it, and in {_three_mentions(configs)} of the sentences a second
  pronoun ("The supervisor yelled at the cashier because he liked to pick on his employees.").
- `antecedent`, `antecedent_span`: the occupation (the cluster's first mention);
  `pronoun`, `pronoun_span`: the pronoun that refers to it (its second).""",
        splits=f"""`validation` is the upstream `dev` split. `all` holds every sentence; `type1_pro`,
`type1_anti`, `type2_pro` and `type2_anti` the four sets the study reports separately.

{_counts(configs)}""",
        source=f"""The eight files of `WinoBias/wino/data/conll_format/` in github.com/uclanlp/corefBias
(commit `0bce984`; the files last changed on 2020-04-08), read without change:

{files}

Copies under the repository's `_site/` folder (an older website snapshot) and
`.ipynb_checkpoints/` differ and are not read. Checked by hand when this builder was
written: in all 3,168 sentences the mentions of the CoNLL files are the bracketed
spans of the authors' plain-text files (`pro_stereotyped_type1.txt.dev`, ...), line
i + 1 being document i.""",
        command="bias-hub build winobias  # or: bias-hub build winobias --source PATH/corefBias",
        construction="""One row per CoNLL document, in file order. The builder refuses a document
whose gold is not one cluster of at least two mentions, and a malformed line (naming the
file and the line).""",
        considerations="""WinoBias measures one kind of gender bias (occupation stereotypes, binary
gender, he/she pronouns) in one task; a system with a small gap may be biased in other
ways. The sentences are templated and short: a gap on them says how a system resolves
these templates, and a coreference model trained on OntoNotes may miss both the pro and
the anti cases for reasons other than bias, so read the gap beside the absolute scores.""",
        licensing="""MIT (corefBias, Copyright (c) 2020 Natural Language Processing @UCLA).""",
        citation=_CITATION,
    )
