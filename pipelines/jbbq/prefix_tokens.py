"""Tokenizing many prompts that share a long text prefix, the shared part once.

Few-shot prompts repeat the instruction and the examples (about 800 of 900 characters in JBBQ's
paper preset). ``encode_sharing_prefix`` tokenizes the first prompt whole and, of every other
prompt, only a window that starts inside the shared text: its tokens are the first prompt's up
to a cut inside the window, then the window's from the cut on. That equals tokenizing each
prompt whole when nothing a tokenizer looks at spans more than ``MARGIN`` characters around
the cut, which three checks keep exact: the cut lies where two tokens touch, well inside the
shared text, at a window start that tokenizes as the first prompt does (``_cut``); a window
that does not begin with the first prompt's tokens before the cut is tokenized whole; and a
spread of prompts is compared with their whole tokenization, any difference sending every
prompt the plain way. Slow (Python) tokenizers, which give no offsets, take the plain path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

__all__ = ["MARGIN", "common_prefix_length", "encode_sharing_prefix", "encode_whole"]

MARGIN = 32  # characters each side of the cut
_CHECKED = 8  # prompts compared with their whole tokenization


def common_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    """Length of the token prefix shared by every sequence."""
    # commonprefix compares lists item by item too: the prefix of the least and the greatest
    return len(os.path.commonprefix([list(seq) for seq in sequences]))


def encode_whole(
    tokenizer, texts: Sequence[str], add_special_tokens: bool = True
) -> list[list[int]]:
    """``tokenizer(texts, add_special_tokens=...)["input_ids"]`` as lists, each text read whole."""
    if not texts:
        return []
    ids = tokenizer(list(texts), add_special_tokens=add_special_tokens)["input_ids"]
    return [list(row) for row in ids]


def _special_around(whole: list[int], plain: list[int]) -> tuple[list[int], list[int]] | None:
    """``(head, tail)`` with ``whole == head + plain + tail``, or None."""
    for start in range(len(whole) - len(plain) + 1):
        if whole[start : start + len(plain)] == plain:
            return whole[:start], whole[start + len(plain) :]
    return None


def _touching(offsets: list[tuple[int, int]], k: int) -> bool:
    """Whether tokens ``k - 1`` and ``k`` meet exactly (no character between or shared)."""
    (start_before, end_before), (start, end) = offsets[k - 1], offsets[k]
    return start_before < end_before == start < end


def _cut(
    tokenizer,
    text: str,
    offsets: list[tuple[int, int]],
    plain: list[int],
    shared: int,
    tries: int = 8,
) -> tuple[int, int] | None:
    """``(window start token j, cut token k)`` in the first prompt, or None.

    ``k``: the last touching boundary ``MARGIN`` characters before ``shared``. ``j``: a
    touching boundary ``MARGIN`` characters before that where the window, tokenized on
    its own, begins with the first prompt's tokens between ``j`` and ``k``. A window that
    starts inside a word may not (a SentencePiece-style tokenizer marks its start as a
    word's), so after the nearest boundary (the shortest windows), those at a space or
    line break are tried, nearest first, then the others; at most ``tries`` of them.
    """
    k = next(
        (
            k
            for k in range(len(offsets) - 1, 0, -1)
            if offsets[k][0] <= shared - MARGIN and _touching(offsets, k)
        ),
        None,
    )
    if k is None:
        return None
    starts = [
        j
        for j in range(k - 1, 0, -1)
        if offsets[j][0] <= offsets[k][0] - MARGIN and _touching(offsets, j)
    ]
    at_space = [
        j for j in starts if text[offsets[j][0]].isspace() or text[offsets[j][0] - 1].isspace()
    ]
    for j in list(dict.fromkeys(starts[:1] + at_space + starts))[:tries]:
        window = encode_whole(tokenizer, [text[offsets[j][0] :]], False)[0]
        if window[: k - j] == plain[j:k]:
            return j, k
    return None


def encode_sharing_prefix(
    tokenizer, texts: Sequence[str], add_special_tokens: bool = True
) -> list[list[int]]:
    """``tokenizer(texts, add_special_tokens=...)["input_ids"]``, reading the text every
    prompt shares once (see the module's docstring for when and how it is exact)."""
    texts = list(texts)
    shared = len(os.path.commonprefix(texts)) if len(texts) > _CHECKED else 0
    if shared < 3 * MARGIN or not getattr(tokenizer, "is_fast", False):
        return encode_whole(tokenizer, texts, add_special_tokens)
    first = tokenizer(texts[0], add_special_tokens=False, return_offsets_mapping=True)
    plain, offsets = list(first["input_ids"]), [tuple(o) for o in first["offset_mapping"]]
    around = _special_around(encode_whole(tokenizer, texts[:1], add_special_tokens)[0], plain)
    cut = _cut(tokenizer, texts[0], offsets, plain, shared)
    if around is None or cut is None:
        return encode_whole(tokenizer, texts, add_special_tokens)
    (head, tail), (j, k) = around, cut
    context = plain[j:k]
    windows = encode_whole(tokenizer, [text[offsets[j][0] :] for text in texts], False)
    out: list[list[int] | None] = [
        head + plain[:k] + window[len(context) :] + tail
        if window[: len(context)] == context
        else None
        for window in windows
    ]
    redo = [i for i, ids in enumerate(out) if ids is None]
    redone = encode_whole(tokenizer, [texts[i] for i in redo], add_special_tokens)
    for i, ids in zip(redo, redone, strict=True):
        out[i] = ids
    step = max(1, (len(texts) - 1) // (_CHECKED - 1))
    checked = sorted({*range(0, len(texts), step), len(texts) - 1})
    if encode_whole(tokenizer, [texts[i] for i in checked], add_special_tokens) != [
        out[i] for i in checked
    ]:
        return encode_whole(tokenizer, texts, add_special_tokens)
    return out  # type: ignore[return-value]
