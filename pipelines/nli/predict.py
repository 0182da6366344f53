"""Fast NLI prediction: tokenise once, sort by length, pack batches by a token budget, pad
each batch to its longest pair.

Sorting by length means a batch pads to nearly its own length instead of the longest pair
in the data, and a token budget (rows x the batch's longest pair) lets short pairs travel in
larger batches; ``torch.inference_mode`` skips autograd bookkeeping. Results come back in the
input order, as logits re-ordered onto entailment/neutral/contradiction.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from bias_hub.pipelines.common.batching import DEFAULT_BATCH_TOKENS, TokenBudget

__all__ = ["encode_pairs", "predict_logits", "to_canonical_probabilities"]


def encode_pairs(
    tokenizer, premises: Sequence[str], hypotheses: Sequence[str], max_length: int
) -> list[list[int]] | dict:
    """Token ids of each pair, unpadded (``{"input_ids": [...], "token_type_ids": [...]}``)."""
    if len(premises) != len(hypotheses):
        raise ValueError(
            f"premises ({len(premises)}) and hypotheses ({len(hypotheses)}) differ in length"
        )
    return dict(tokenizer(list(premises), list(hypotheses), truncation=True, max_length=max_length))


def predict_logits(
    model,
    encodings: Mapping[str, list[list[int]]],
    batch_size: int | None = None,
    pad_token_id: int = 0,
    progress: bool = True,
    batch_tokens: int = DEFAULT_BATCH_TOKENS,
) -> np.ndarray:
    """Logits (n x model labels, float32) for pre-tokenised pairs, in input order.

    Batches hold as many pairs as ``batch_tokens`` allows (pairs x the longest), at most
    ``batch_size``; out of memory, the budget halves and the batch is run again."""
    import torch  # torch: heavy, loaded on use

    budget = TokenBudget(batch_tokens, batch_size, "batch_tokens")
    ids = encodings["input_ids"]
    n = len(ids)
    lengths = np.fromiter((len(x) for x in ids), dtype=np.int64, count=n)
    order = np.argsort(-lengths, kind="stable")
    device = next(model.parameters()).device
    keys = [k for k in ("input_ids", "token_type_ids") if k in encodings]
    out = np.empty((n, model.config.num_labels), dtype=np.float32)

    def work(index: np.ndarray) -> None:
        width = int(lengths[index[0]])
        batch = {}
        for key in keys:
            fill = pad_token_id if key == "input_ids" else 0
            array = np.full((len(index), width), fill, dtype=np.int64)
            for row, i in enumerate(index):
                seq = encodings[key][i]
                array[row, : len(seq)] = seq
            batch[key] = torch.from_numpy(array).to(device)
        mask = np.arange(width)[None, :] < lengths[index][:, None]
        batch["attention_mask"] = torch.from_numpy(mask.astype(np.int64)).to(device)
        out[index] = model(**batch).logits.float().cpu().numpy()

    with torch.inference_mode():
        budget.run(
            order, lengths[order].tolist(), work, desc="predicting", unit="pair", progress=progress
        )
    return out


def to_canonical_probabilities(logits: np.ndarray, to_canonical: np.ndarray) -> np.ndarray:
    """Softmax over the model's outputs, then columns entailment/neutral/contradiction.

    Outputs that are not NLI labels (``to_canonical == -1``) are left out and the three NLI
    probabilities renormalised.
    """
    shifted = logits - logits.max(axis=1, keepdims=True)
    probabilities = np.exp(shifted)
    probabilities /= probabilities.sum(axis=1, keepdims=True)
    canonical = np.zeros((len(logits), 3), dtype=np.float64)
    nli = to_canonical >= 0
    canonical[:, to_canonical[nli]] = probabilities[:, nli]
    return canonical / canonical.sum(axis=1, keepdims=True)
