"""Full-vocabulary probabilities at a mask, for any masked language model.

The dataset's ``<MASK>`` becomes the model's own mask token; where the tokenizer would keep the
space before it as a token of its own, that space is dropped, so that the mask stands for a
word-initial token (``Ġdried``), as RoBERTa's own mask token does. One mask predicts one
vocabulary item: chance is 1/|V| over the whole output layer, as in the study, and
``--tokens words`` lists only word-like items (docs/speciesism.md). A name of k pieces that
must itself be predicted gets k masks, its probability the product of theirs (a
pseudo-likelihood, counted in the report).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from bias_hub.pipelines.common import ModelOptions, load_model, load_tokenizer
from bias_hub.pipelines.common.batching import AdaptiveBatchSize

MASK_MARKER = "<MASK>"


@dataclass
class MaskedLM:
    """A loaded masked language model with what the pipeline needs to know about it."""

    model_id: str
    model: object
    tokenizer: object
    device: str
    # True where the tokenizer keeps the space before the mask as a token of its own
    # (a byte-level BPE mask token without lstrip); the space is then dropped, so that
    # the mask stands for a word-initial token ("Ġdried"), as it does in RoBERTa.
    glue_mask: bool = False

    @property
    def mask_token(self) -> str:
        return self.tokenizer.mask_token

    @property
    def vocabulary_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])


def load_masked_lm(model_id: str, options=None) -> MaskedLM:
    """Load any Hub id or local path as a masked LM (``bias_hub.pipelines.common.ModelOptions``), or
    explain why it cannot be one: a checkpoint without a trained masked-LM head is refused."""
    options = options or ModelOptions()
    tokenizer = load_tokenizer(model_id, options)
    if tokenizer.mask_token is None or tokenizer.mask_token_id is None:
        raise ValueError(
            f"--model {model_id}: its tokenizer has no mask token; the speciesism probe needs a "
            "masked language model (BERT, RoBERTa, DeBERTa, ...), not a causal one"
        )
    model, _ = load_model(model_id, "masked-lm", options, with_tokenizer=False)
    return MaskedLM(model_id, model, tokenizer, str(model.device), _space_is_separate(tokenizer))


def _word_start_marker(tokenizer) -> str | None:
    """``Ġ`` or ``▁`` where the tokenizer marks word starts that way, else None (WordPiece)."""
    for piece in tokenizer.tokenize("a is it")[1:]:
        if isinstance(piece, str) and piece[:1] in ("Ġ", "▁"):
            return piece[0]
    return None


def _space_is_separate(tokenizer) -> bool:
    pieces = tokenizer.tokenize(f"a {tokenizer.mask_token}")
    return len(pieces) >= 2 and pieces[-1] == tokenizer.mask_token and pieces[-2] in ("Ġ", "▁")


def with_mask(text: str, mask_token: str) -> str:
    if text.count(MASK_MARKER) != 1:
        raise ValueError(f"text {text!r}: expected exactly one {MASK_MARKER} marker")
    return text.replace(MASK_MARKER, mask_token)


def mask_probabilities(
    lm: MaskedLM,
    texts: list[str],
    batch_size: int,
    progress: str | None = None,
    targets: list[list[int]] | None = None,
) -> np.ndarray:
    """Probabilities at the masks of ``texts`` (which already hold the model's mask token).

    Without ``targets``: each text has exactly one mask; returns (n, |V|) float32.
    With ``targets`` (a list of token ids per text, one per mask in order; -1 for a
    mask that is predicted but not scored): returns (n,) float64, the product of the
    scored targets' probabilities at their masks.
    """
    import torch  # heavy: loaded only when probabilities are computed

    size = AdaptiveBatchSize(batch_size, "--batch-size")
    mask_id = lm.tokenizer.mask_token_id
    if targets is None:
        out = np.zeros((len(texts), lm.vocabulary_size), dtype=np.float32)
    else:
        out = np.zeros(len(texts), dtype=np.float64)

    def work(index: range) -> None:
        batch = texts[index.start : index.stop]
        if lm.glue_mask:
            batch = [text.replace(" " + lm.mask_token, lm.mask_token) for text in batch]
        encoded = lm.tokenizer(batch, return_tensors="pt", padding=True, truncation=True)
        encoded = {key: value.to(lm.device) for key, value in encoded.items()}
        is_mask = encoded["input_ids"] == mask_id
        counts = is_mask.sum(dim=1).tolist()
        for offset, count in enumerate(counts):
            wanted = 1 if targets is None else len(targets[index.start + offset])
            if count != wanted:
                raise ValueError(
                    f"text {batch[offset]!r}: {count} mask token(s) after tokenising; expected {wanted}"
                )
        with torch.no_grad():
            logits = lm.model(**encoded).logits[is_mask].float()
        probs = torch.softmax(logits, dim=-1)
        if targets is None:
            out[index.start : index.stop] = probs.cpu().numpy()
            return
        flat = [i for row in targets[index.start : index.stop] for i in row]
        ids = torch.tensor([max(i, 0) for i in flat], device=probs.device)
        picked = probs.gather(1, ids[:, None])[:, 0].double().log().cpu().numpy()
        picked[np.asarray(flat) < 0] = 0.0
        bounds = np.cumsum([0] + counts)
        out[index.start : index.stop] = np.exp(np.add.reduceat(picked, bounds[:-1]))

    # Out of memory: the batch size halves and the batch is run again.
    size.run(
        range(len(texts)), work, desc=progress or "", unit="text", progress=progress is not None
    )
    return out


def token_strings(lm: MaskedLM) -> list[str]:
    """Every output item as the tokenizer spells it (``ĠMarried``, ``##s``, ``[CLS]``); rows of
    the output layer beyond the tokenizer's vocabulary are ``<unused:N>``."""
    size = lm.vocabulary_size
    pieces = lm.tokenizer.convert_ids_to_tokens(list(range(min(size, len(lm.tokenizer)))))
    pieces = [piece if isinstance(piece, str) else str(piece) for piece in pieces]
    return pieces + [f"<unused:{i}>" for i in range(len(pieces), size)]


def vocabulary_view(lm: MaskedLM, language: str = "en") -> tuple[list[str], np.ndarray]:
    """Readable strings for every output item, and which items are word-like (see module doc)."""
    tokenizer = lm.tokenizer
    pieces = token_strings(lm)
    special = set(tokenizer.all_special_tokens)
    start_marker = _word_start_marker(tokenizer)
    words, word_like = [], np.zeros(len(pieces), dtype=bool)
    for index, piece in enumerate(pieces):
        continuation = piece.startswith("##")
        if start_marker is not None and language == "en":
            continuation = continuation or not piece.startswith(start_marker)
        if piece.startswith("<unused:") or piece in special:
            text = piece
        else:
            text = tokenizer.convert_tokens_to_string([piece]).strip()
            if piece.startswith("##"):
                text = piece[2:]
        words.append(text)
        word_like[index] = (
            piece not in special
            and not piece.startswith("<unused:")
            and not continuation
            and any(ch.isalpha() for ch in text)
            and not re.fullmatch(r"\[.*\]|<.*>", text)
        )
    return words, word_like


def name_pieces(lm: MaskedLM, before: str, name: str) -> list[int]:
    """Token ids of ``name`` as the tokenizer splits it right after ``before``."""
    tokenizer = lm.tokenizer
    head = (
        tokenizer(before.rstrip(), add_special_tokens=False)["input_ids"] if before.strip() else []
    )
    both = tokenizer(before + name, add_special_tokens=False)["input_ids"]
    if both[: len(head)] != head or len(both) == len(head):
        # The name merged with the text before it; fall back to tokenising it alone.
        return tokenizer(name, add_special_tokens=False)["input_ids"]
    return both[len(head) :]
