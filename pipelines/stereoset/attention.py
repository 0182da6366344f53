"""Attention from each token or word to the gender words of its sentence.

For one layer, the heads chosen are averaged into one token-by-token matrix A. The
attention mass to the gender words is summed over every piece of every gender word
(keys). At the ``token`` level (the study's: BERT's tokens) each piece outside the
gender words is a query of its own:

    mass(q) = sum_{k in pieces(gender words)} A[q, k]

At the ``word`` level a word's pieces are folded: the mean of their masses.
Special tokens ([CLS], [SEP]) and the gender words' own pieces get none.

Pieces are matched to words through the fast tokenizer's character offsets.
A sentence whose gender word gets no piece, or whose piece straddles two words,
cannot be aligned and is counted, never silently kept.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from bias_hub.builders.shared.text import Word, split_words
from bias_hub.pipelines.common.batching import AdaptiveBatchSize
from bias_hub.pipelines.stereoset.settings import LEVELS

__all__ = [
    "SentenceAttention",
    "AlignmentError",
    "check_bidirectional",
    "word_piece_matrix",
    "gender_attention",
]

# Class-name endings of checkpoints whose attention only looks back (decoder-only LMs).
CAUSAL_HEADS = ("ForCausalLM", "LMHeadModel")
CAUSAL_MESSAGE = (
    "attends to earlier tokens only (a causal, decoder-only model), so a word would get no "
    "attention from the words after it; the attention gap needs a bidirectional encoder (BERT-like)"
)


class AlignmentError(ValueError):
    """Pieces of a sentence cannot be matched to its words."""


@dataclass
class SentenceAttention:
    words: list[str]  # the tokens (token level) or words (word level) of the sentence
    # one value each; NaN for gender words, special tokens and words without pieces
    mass: np.ndarray


def check_bidirectional(model, name: str) -> None:
    """Refuse a causal (decoder-only) model by its configuration; ``gender_attention`` also
    refuses one whose attentions turn out to look back only."""
    config = model.config
    architectures = list(getattr(config, "architectures", None) or [])
    causal = [arch for arch in architectures if arch.endswith(CAUSAL_HEADS)]
    if causal or getattr(config, "is_decoder", False):
        kind = ", ".join(causal) or f"{type(model).__name__} (is_decoder)"
        raise ValueError(f"--model {name}: the checkpoint is a {kind}; it {CAUSAL_MESSAGE}")


def _looks_back_only(attention: np.ndarray, mask: np.ndarray) -> bool:
    """True when no query attends to a later token: (batch, heads-averaged) rows of length > 1."""
    later = np.triu(np.ones(attention.shape[-2:], dtype=bool), k=1)
    ahead = mask[:, :, None] & mask[:, None, :] & later  # real query-key pairs looking ahead
    return bool(ahead.any()) and not np.any(attention[ahead] > 0)


def word_piece_matrix(words: Sequence[Word], offsets: Sequence[tuple[int, int]]) -> np.ndarray:
    """(n_words, n_pieces) 0/1 matrix: which piece belongs to which word.

    Special tokens (empty offsets) belong to no word. Raises AlignmentError for a
    piece that covers characters of two words.
    """
    matrix = np.zeros((len(words), len(offsets)), dtype=np.float32)
    starts = np.array([w.start for w in words])
    ends = np.array([w.end for w in words])
    for piece, (start, end) in enumerate(offsets):
        if end <= start:
            continue
        inside = np.flatnonzero((starts < end) & (ends > start))
        if len(inside) != 1:
            raise AlignmentError(
                f"piece {piece} (characters {start}-{end}) covers {len(inside)} words"
            )
        matrix[inside[0], piece] = 1.0
    return matrix


def gender_attention(
    model,
    tokenizer,
    sentences: Sequence[str],
    gender_spans: Sequence[Sequence[tuple[int, int]]],
    *,
    batch_size: int,
    layer: int = -1,
    heads: Sequence[int] | None = None,
    max_length: int = 512,
    progress: bool = True,
    skipped: Counter | None = None,
    level: str = "word",
) -> list[SentenceAttention | None]:
    """Per sentence, each token's or word's attention mass to the gender words (None if unaligned).

    ``gender_spans[i]`` are the character spans of the gender words of sentence i.
    ``skipped`` counts why sentences or words were left out.
    """
    import torch  # heavy: loaded only when attentions are read

    size = AdaptiveBatchSize(batch_size, "--batch-size")
    if level not in LEVELS:
        raise ValueError(f"--level must be one of {', '.join(LEVELS)}, got {level!r}")
    if not getattr(tokenizer, "is_fast", False):
        raise ValueError(
            "--encoder: the tokenizer must be a fast tokenizer (it needs character offsets)"
        )
    skipped = skipped if skipped is not None else Counter()
    n_layers = model.config.num_hidden_layers
    n_heads = model.config.num_attention_heads
    if not -n_layers <= layer < n_layers:
        raise ValueError(
            f"--layer must be in [{-n_layers}, {n_layers - 1}] for this model, got {layer}"
        )
    if heads is not None:
        bad = [h for h in heads if not 0 <= h < n_heads]
        if bad:
            raise ValueError(f"--heads must be in [0, {n_heads - 1}] for this model, got {bad}")
    device = next(model.parameters()).device
    results: list[SentenceAttention | None] = [None] * len(sentences)
    order = np.argsort([len(s) for s in sentences], kind="stable")

    checked = []  # the first batch is checked for an encoder that attends backwards only

    def work(chosen: np.ndarray) -> None:
        batch = tokenizer(
            [sentences[i] for i in chosen],
            return_tensors="pt",
            padding=True,
            truncation=True,
            max_length=max_length,
            return_offsets_mapping=True,
        )
        offsets = batch.pop("offset_mapping").tolist()
        with torch.no_grad():
            output = model(**{k: v.to(device) for k, v in batch.items()}, output_attentions=True)
        attention = output.attentions[layer]
        if attention is None:
            raise RuntimeError(
                "the encoder returned no attentions: load it with attn_implementation='eager'"
            )
        attention = attention[:, list(heads)] if heads is not None else attention
        attention = attention.float().mean(dim=1).cpu().numpy()  # (batch, pieces, pieces)
        mask = batch["attention_mask"].numpy().astype(bool)
        if not checked:
            checked.append(True)
            if _looks_back_only(attention, mask):
                raise ValueError(f"--model: the encoder {CAUSAL_MESSAGE}")
        for row, index in enumerate(chosen):
            words = split_words(sentences[index])
            n_pieces = int(mask[row].sum())
            ids = batch["input_ids"][row, :n_pieces].tolist()
            try:
                matrix = word_piece_matrix(words, [tuple(o) for o in offsets[row][:n_pieces]])
            except AlignmentError:
                skipped["sentence_unaligned"] += 1
                continue
            spans = set(map(tuple, gender_spans[index]))
            is_gender = np.array([(w.start, w.end) in spans for w in words], dtype=bool)
            if is_gender.sum() != len(spans):
                skipped["gender_word_not_a_word"] += 1
                continue
            pieces_per_word = matrix.sum(axis=1)
            if np.any(pieces_per_word[is_gender] == 0):
                skipped["gender_word_without_pieces"] += 1
                continue
            without = (pieces_per_word == 0) & ~is_gender
            skipped["word_without_pieces"] += int(without.sum())
            keys = matrix[is_gender].sum(axis=0)  # (pieces,): 1 on gender-word pieces
            per_piece = attention[row, :n_pieces, :n_pieces] @ keys
            if level == "token":
                in_word = matrix.sum(axis=0) > 0  # special tokens belong to no word
                mass = np.where(in_word & (keys == 0), per_piece, np.nan)
                results[index] = SentenceAttention(tokenizer.convert_ids_to_tokens(ids), mass)
                continue
            with np.errstate(invalid="ignore", divide="ignore"):
                mass = np.where(
                    (pieces_per_word > 0) & ~is_gender,
                    (matrix @ per_piece) / pieces_per_word,
                    np.nan,
                )
            results[index] = SentenceAttention([w.text for w in words], mass)

    # Out of memory: the batch size halves and the batch is run again.
    size.run(order, work, desc="attention", unit="sentence", progress=progress)
    return results
