"""The RNSB-vs-WinoBias study's bias-controlled family: 4 set pairs x 2 methods x 2 directions + 1.

Kato and Miyao (section 3), following Goldfarb-Tarrant et al. (2021): a Word2Vec
embedding trained on a corpus (the original), and for each set pair -- WEAT 6 (its
gender-term variant), 7, 8, and the union of their words expanded with each word's 100
nearest neighbours in spaCy's vectors (Lauscher et al., 2020) --

- ATTRACT-REPEL on the original: *reduce* repels the stereotypical pairs X x A and
  Y x B and attracts the anti-stereotypical X x B and Y x A, *amplify* the reverse;
- dataset balancing of the corpus, then Word2Vec trained again: *reduce* subsamples the
  stereotypical sentences, *amplify* deletes the anti-stereotypical ones.

With three tests that is 4 x 2 x 2 + 1 = 17 embeddings.
"""

from __future__ import annotations

import logging
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bias_hub.builders.shared.console import stage
from bias_hub.pipelines.embeddings.control import (
    AttractRepelConfig,
    attract_repel,
    bias_constraints,
    expand_sets,
)
from bias_hub.pipelines.embeddings.corpus import (
    DIRECTIONS,
    Word2VecConfig,
    balance_corpus,
    prepare_corpus,
    train_word2vec,
)
from bias_hub.pipelines.embeddings.scoring import Query
from bias_hub.pipelines.embeddings.vectors import WordVectors

__all__ = ["GENDER_AS_TARGETS", "PaperMember", "paper_family", "union_pair"]

log = logging.getLogger(__name__)

# WEAT 6 (and its gender-term variant) has the gender words as targets, WEAT 7 and 8 as
# attributes. The union puts them on one side, as Goldfarb-Tarrant et al.'s "all WEAT"
# lists do: X = career + math + science, Y = family + arts, A = male, B = female terms.
GENDER_AS_TARGETS = ("weat6", "weat6_gender_terms")
METHODS = ("attract_repel", "balance")


@dataclass(frozen=True)
class PaperMember:
    """One member: ``set_pair`` and ``method`` are None for the original."""

    name: str
    set_pair: str | None = None
    method: str | None = None
    direction: str | None = None


def union_pair(queries: Sequence[Query], expansion: WordVectors | None, neighbours: int) -> Query:
    """The union of the tests' sets (WEAT 6's roles exchanged), each set then expanded with
    the ``neighbours`` nearest words of each of its words in ``expansion`` (none with 0).

    A neighbour already in a set is not added again; one near words of two sets goes to
    the set of the nearer word (``control.expand_sets``).
    """
    roles: list[dict[str, list[str]]] = [{}, {}, {}, {}]
    for query in queries:
        sets = [*query.target_sets.items(), *query.attribute_sets.items()]
        if query.test_id in GENDER_AS_TARGETS:
            sets = sets[2:] + sets[:2]
        for role, (name, words) in zip(roles, sets, strict=True):
            role.setdefault(name, [])
            role[name] += [word for word in words if word not in role[name]]
    named = [
        {" + ".join(role): [w for words in role.values() for w in dict.fromkeys(words)]}
        for role in roles
    ]
    targets, attributes = {**named[0], **named[1]}, {**named[2], **named[3]}
    _check_disjoint(targets, attributes)
    name = "union"
    if neighbours > 0 and expansion is not None:
        both = expand_sets(expansion, {**targets, **attributes}, neighbours, min_similarity=-1.0)
        targets = {key: both[key] for key in targets}
        attributes = {key: both[key] for key in attributes}
        name = f"union_expanded{neighbours}"
    return Query(
        name, targets, attributes, title=f"union of {', '.join(q.test_id for q in queries)}"
    )


def _check_disjoint(targets: dict, attributes: dict) -> None:
    seen: dict[str, str] = {}
    for name, words in {**targets, **attributes}.items():
        for word in words:
            if word in seen and seen[word] != name:
                raise ValueError(
                    f"the union of the tests lists {word!r} in both {seen[word]!r} and {name!r}"
                )
            seen[word] = name


def members(pairs: Sequence[Query]) -> list[PaperMember]:
    """The original, then per set pair ATTRACT-REPEL and balancing, each reduce and amplify."""
    return [PaperMember("original")] + [
        PaperMember(f"{pair.test_id}-{method}-{direction}", pair.test_id, method, direction)
        for pair in pairs
        for method in METHODS
        for direction in DIRECTIONS
    ]


def paper_family(
    corpus: str | Path,
    queries: Sequence[Query],
    *,
    word2vec: Word2VecConfig | None = None,
    attract_repel_config: AttractRepelConfig | None = None,
    expansion: WordVectors | None = None,
    neighbours: int = 100,
    work_dir: str | Path | None = None,
    seed: int = 0,
) -> tuple[list[tuple[PaperMember, WordVectors]], dict]:
    """The 4 x 2 x 2 + 1 members built from ``corpus`` (one sentence per line).

    ``expansion``: the vectors whose nearest neighbours expand the union (the study: spaCy's);
    None uses the original Word2Vec trained here. ``work_dir``: where the tokenised and
    balanced corpora are written while they are needed (a temporary folder inside it).
    Returns the members and a record of the corpus, the set pairs and the balancing counts.
    """
    word2vec = word2vec or Word2VecConfig()
    attract_repel_config = attract_repel_config or AttractRepelConfig()
    with tempfile.TemporaryDirectory(prefix="bias-hub-corpora-", dir=work_dir) as folder:
        base = Path(folder) / "corpus.txt"
        with stage("tokenise the corpus", log):
            corpus_stats = prepare_corpus(corpus, base, word2vec.min_count)
        with stage("Word2Vec on the corpus (original)", log):
            original = train_word2vec(base, word2vec, "original")
        # The tests' own set pairs, then their (expanded) union.
        union = union_pair(queries, expansion if expansion is not None else original, neighbours)
        pairs = [*queries, union]
        family: list[tuple[PaperMember, WordVectors]] = []
        balancing: dict[str, dict] = {}
        for member in members(pairs):
            if member.method is None:
                family.append((member, original))
                continue
            pair = next(p for p in pairs if p.test_id == member.set_pair)
            sets = pair.target_sets, pair.attribute_sets
            with stage(member.name, log):
                if member.method == "attract_repel":
                    attract, repel = bias_constraints(*sets, member.direction)
                    vectors = attract_repel(
                        original, attract, repel, attract_repel_config, name=member.name
                    )
                else:
                    balanced = Path(folder) / f"{member.name}.txt"
                    balancing[member.name] = balance_corpus(
                        base, balanced, *sets, member.direction, seed
                    )
                    vectors = train_word2vec(balanced, word2vec, member.name)
                    balanced.unlink()
            family.append((member, vectors))
    record = {
        "corpus": {"path": str(corpus), **corpus_stats},
        "set_pairs": {
            p.test_id: {"target_sets": p.target_sets, "attribute_sets": p.attribute_sets}
            for p in pairs
        },
        "balancing": balancing,
        "expansion": expansion.name
        if expansion is not None
        else "original (the Word2Vec trained here)",
        "neighbours": neighbours,
    }
    return family, record
