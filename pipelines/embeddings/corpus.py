"""Training corpora for the study's bias-controlled family: tokens, balancing, Word2Vec.

The RNSB-vs-WinoBias study (Kato and Miyao, section 3) tokenised Wikipedia with NLTK,
replaced tokens seen fewer than 10 times with an unknown-word token, and trained
300-dimensional Word2Vec vectors on it. Its dataset balancing (Dixon et al., 2018, as
Goldfarb-Tarrant et al., 2021 applied it) reads a sentence as *stereotypical* when it
holds a word of X and one of A, or one of Y and one of B, and as *anti-stereotypical*
when it holds X and B, or Y and A. Reducing bias subsamples the stereotypical
sentences; amplifying it deletes every anti-stereotypical sentence.

Every corpus is a text file with one sentence per line. Files are streamed (twice where
a count must come first), so a corpus never has to fit in memory.
"""

from __future__ import annotations

import collections
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.files import text_lines
from bias_hub.pipelines.embeddings.vectors import WordVectors

__all__ = [
    "UNK",
    "Word2VecConfig",
    "balance_corpus",
    "prepare_corpus",
    "tokenise",
    "train_word2vec",
]

log = logging.getLogger(__name__)

UNK = "<unk>"
DIRECTIONS = ("reduce", "amplify")


@dataclass(frozen=True)
class Word2VecConfig:
    """gensim ``Word2Vec`` settings. The study's: 300 dimensions, tokens seen fewer than 10
    times replaced; it names no other setting, so the rest are gensim's defaults (CBOW,
    window 5, 5 epochs). One worker keeps a seeded run reproducible."""

    vector_size: int = 300
    min_count: int = 10
    window: int = 5
    epochs: int = 5
    skipgram: bool = False
    workers: int = 1
    seed: int = 0


def tokenise(line: str) -> list[str]:
    """NLTK's ``word_tokenize`` on one line taken as one sentence (``preserve_line=True``:
    no Punkt sentence splitter, so no NLTK data is downloaded); line = sentence is the
    corpus format here."""
    try:
        from nltk.tokenize import word_tokenize
    except ImportError as err:
        raise UserError(
            "--corpus needs NLTK for its tokens: pip install 'bias-hub[corpus]' (nltk, gensim)"
        ) from err
    return word_tokenize(line, preserve_line=True)


def prepare_corpus(source: str | os.PathLike[str], target: Path, min_count: int) -> dict:
    """Tokenise ``source`` (one sentence per line) into ``target``, tokens seen fewer than
    ``min_count`` times replaced with ``<unk>``; blank lines are dropped."""
    source = Path(source)
    if not source.is_file():
        raise FileNotFoundError(f"--corpus {source}: no such file")
    tokenised = target.with_name(target.name + ".tokens")
    counts: collections.Counter[str] = collections.Counter()
    sentences = 0
    with open(tokenised, "w", encoding="utf-8") as out:
        for line in text_lines(source):
            tokens = tokenise(line)
            if tokens:
                counts.update(tokens)
                out.write(" ".join(tokens) + "\n")
                sentences += 1
    if not sentences:
        raise ValueError(
            f"--corpus {source}: no sentence in the file (one sentence per line expected)"
        )
    rare = {token for token, count in counts.items() if count < min_count}
    with open(target, "w", encoding="utf-8") as out:
        for tokens in map(str.split, text_lines(tokenised)):
            out.write(" ".join(UNK if token in rare else token for token in tokens) + "\n")
    tokenised.unlink()
    return {
        "sentences": sentences,
        "tokens": sum(counts.values()),
        "types": len(counts),
        "types_replaced_by_unk": len(rare),
    }


def _lowered(sets: Mapping[str, Sequence[str]]) -> list[frozenset[str]]:
    return [frozenset(word.lower() for word in words) for words in sets.values()]


def _kinds(tokens: Sequence[str], sets: tuple) -> tuple[bool, bool, bool, bool]:
    """Whether a sentence pairs X with A, Y with B (stereotypical), Y with A, X with B
    (anti-stereotypical); ``sets``: the lower-cased (X, Y) and (A, B). Words match
    case-insensitively ("He" is "he")."""
    present = {token.lower() for token in tokens}
    (x, y), (a, b) = ([bool(present & words) for words in group] for group in sets)
    return x and a, y and b, y and a, x and b


def balance_corpus(
    source: Path,
    target: Path,
    target_sets: Mapping,
    attribute_sets: Mapping,
    direction: str,
    seed: int = 0,
) -> dict:
    """Write ``source`` balanced towards less (``reduce``) or more (``amplify``) bias.

    ``reduce``: of the sentences pairing X with A, keep a seeded random sample as large as
    the number of sentences pairing Y with A (all of them if they are fewer), and of those
    pairing Y with B as many as pair X with B; a sentence that pairs both X with A and Y
    with B counts as X-A (Goldfarb-Tarrant et al.'s script keeps the first ones instead of a
    random sample). ``amplify``: delete every sentence that pairs Y with A or X with B.
    Returns the counts before and after.
    """
    if direction not in DIRECTIONS:
        raise ValueError(f"direction must be one of {DIRECTIONS}, got {direction!r}")
    sets = _lowered(target_sets), _lowered(attribute_sets)
    before = np.zeros(4, dtype=np.int64)  # x-a, y-b, y-a, x-b
    first_only = np.zeros(2, dtype=np.int64)  # x-a sentences; y-b sentences that are not x-a
    total = 0
    for tokens in map(str.split, text_lines(source)):
        found = _kinds(tokens, sets)
        before += found
        first_only += (found[0], found[1] and not found[0])
        total += 1
    keep: list[set[int]] = [set(), set()]
    if direction == "reduce":
        generator = np.random.default_rng(seed)
        for slot, allowed in ((0, before[2]), (1, before[3])):
            size = int(min(first_only[slot], allowed))
            keep[slot] = set(
                generator.choice(int(first_only[slot]), size=size, replace=False).tolist()
            )
    after = np.zeros(4, dtype=np.int64)
    seen = [0, 0]
    written = 0
    with open(target, "w", encoding="utf-8") as out:
        for tokens in map(str.split, text_lines(source)):
            found = _kinds(tokens, sets)
            if direction == "amplify":
                drop = found[2] or found[3]
            else:
                slot = 0 if found[0] else (1 if found[1] else None)
                drop = False
                if slot is not None:
                    drop = seen[slot] not in keep[slot]
                    seen[slot] += 1
            if not drop:
                out.write(" ".join(tokens) + "\n")
                after += found
                written += 1
    names = ("x_a", "y_b", "y_a", "x_b")
    return {
        "direction": direction,
        "sentences_before": total,
        "sentences_after": written,
        "before": dict(zip(names, before.tolist(), strict=True)),
        "after": dict(zip(names, after.tolist(), strict=True)),
    }


def train_word2vec(corpus: Path, config: Word2VecConfig, name: str):
    """Word2Vec (gensim) on a tokenised corpus file; the vectors as ``WordVectors``."""
    try:  # gensim is an optional dependency (bias-hub[corpus]), loaded only to train
        from gensim.models import Word2Vec
    except ImportError as err:
        raise UserError(
            "--corpus needs gensim to train Word2Vec: pip install 'bias-hub[corpus]'"
        ) from err

    model = Word2Vec(
        corpus_file=str(corpus),
        vector_size=config.vector_size,
        min_count=config.min_count,
        window=config.window,
        epochs=config.epochs,
        sg=int(config.skipgram),
        workers=config.workers,
        seed=config.seed,
    )
    if not len(model.wv):
        raise ValueError(
            f"{name}: no word of the corpus is seen {config.min_count} times (--min-count)"
        )
    return WordVectors(
        list(model.wv.index_to_key),
        np.asarray(model.wv.vectors),
        name=name,
        note=f"Word2Vec {asdict(config)}",
    )
