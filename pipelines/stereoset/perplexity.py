"""Sentence perplexity from a causal LM, batched, with padding masked out.

Each sentence is scored as ``exp(mean negative log-likelihood)`` over its
tokens. The beginning-of-sequence token (or, failing that, the classifier token)
is put in front so that the first word is predicted too. Padding goes on the
right and is excluded from both the attention and the loss, so a sentence's
perplexity does not depend on what it was batched with.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bias_hub.pipelines.common.batching import AdaptiveBatchSize

__all__ = ["sentence_perplexities"]


def sentence_perplexities(
    model,
    tokenizer,
    sentences: Sequence[str],
    batch_size: int,
    max_length: int = 1024,
    progress: bool = True,
) -> np.ndarray:
    """Perplexity per sentence (NaN where the sentence gives no token to predict)."""
    import torch  # heavy: loaded only when perplexities are computed

    size = AdaptiveBatchSize(batch_size, "--batch-size")

    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.cls_token_id
    pad = tokenizer.pad_token_id
    if pad is None:
        pad = tokenizer.eos_token_id if tokenizer.eos_token_id is not None else 0
    encoded = tokenizer(list(sentences), add_special_tokens=False)["input_ids"]
    encoded = [([start] if start is not None else []) + ids for ids in encoded]
    limit = getattr(model.config, "max_position_embeddings", None) or getattr(
        model.config, "n_positions", None
    )
    max_length = min(max_length, limit) if limit else max_length
    encoded = [ids[:max_length] for ids in encoded]
    device = next(model.parameters()).device
    result = np.full(len(sentences), np.nan)
    order = np.argsort([len(ids) for ids in encoded], kind="stable")

    def work(chosen: np.ndarray) -> None:
        width = max(len(encoded[i]) for i in chosen)
        ids = torch.full((len(chosen), width), pad, dtype=torch.long)
        mask = torch.zeros((len(chosen), width), dtype=torch.long)
        for row, index in enumerate(chosen):
            tokens = encoded[index]
            ids[row, : len(tokens)] = torch.tensor(tokens, dtype=torch.long)
            mask[row, : len(tokens)] = 1
        with torch.no_grad():
            logits = model(input_ids=ids.to(device), attention_mask=mask.to(device)).logits.float()
        log_probs = torch.log_softmax(logits[:, :-1], dim=-1)
        targets = ids[:, 1:].to(device)
        nll = -log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
        scored = mask[:, 1:].to(device).float()
        counts = scored.sum(dim=1)
        mean_nll = (nll * scored).sum(dim=1) / counts.clamp(min=1)
        values = torch.exp(mean_nll).cpu().numpy()
        values[counts.cpu().numpy() == 0] = np.nan
        result[chosen] = values

    # Out of memory: the batch size halves and the batch is run again.
    size.run(order, work, desc="perplexity", unit="sentence", progress=progress)
    return result
