"""A small BERT NLI classifier created from a config (``bias-hub nli init-model``), for CPU
meta-evaluations, demos, tests and benchmarks offline.

No pretrained Japanese model is reachable without the Hub, so a from-scratch run needs one
made here: a Japanese WordPiece (or character) tokenizer built from the training text, and a
BERT whose size is named here. Its weights are random; ``nli meta-evaluate --reinitialize``
draws them again per seed, so only the configuration and the tokenizer matter. The folder
records what it was made from in ``init_model.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from bias_hub.pipelines.nli.labels import HEAD
from bias_hub.pipelines.nli.tokenizer import build_japanese_tokenizer

__all__ = ["RECORD", "SIZES", "make_classifier", "read_record", "vocabulary_size"]

# hidden, layers, heads, intermediate
SIZES = {
    "mini": (64, 2, 2, 128),
    "tiny": (128, 2, 2, 256),
    "small": (256, 4, 4, 1024),
    "bert-base": (768, 12, 12, 3072),
}
RECORD = "init_model.json"


def make_classifier(
    out_dir: str | Path,
    texts: Iterable[str],
    size: str = "tiny",
    seed: int = 0,
    tokenizer_kind: str = "wordpiece",
    max_length: int = 128,
    dropout: float = 0.1,
) -> Path:
    """Write a randomly initialised BERT NLI classifier and its Japanese tokenizer to ``out_dir``.

    ``dropout``: BERT's hidden and attention dropout (0.1 as in BERT; 0 trains a small model
    faster, token dropout in training then does the regularising).
    """
    import torch
    from transformers import BertConfig, BertForSequenceClassification

    if size not in SIZES:
        raise ValueError(f"--size must be one of {', '.join(SIZES)}, got {size!r}")
    if not 0 <= dropout < 1:
        raise ValueError(f"--dropout must lie in [0, 1), got {dropout}")
    hidden, layers, heads, intermediate = SIZES[size]
    out_dir = Path(out_dir)
    tokenizer = build_japanese_tokenizer(
        texts, out_dir, kind=tokenizer_kind, model_max_length=max_length
    )
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        intermediate_size=intermediate,
        hidden_dropout_prob=dropout,
        attention_probs_dropout_prob=dropout,
        max_position_embeddings=max(max_length, 128),
        pad_token_id=tokenizer.pad_token_id,
        **HEAD,
    )
    torch.manual_seed(seed)
    BertForSequenceClassification(config).save_pretrained(str(out_dir))
    return out_dir


def vocabulary_size(folder: str | Path) -> int:
    return sum(
        1 for line in (Path(folder) / "vocab.txt").read_text(encoding="utf-8").splitlines() if line
    )


def read_record(model: str | Path) -> dict | None:
    """``init_model.json`` of a model folder made by ``nli init-model``; None for other models."""
    path = Path(model) / RECORD
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except OSError:
        return None
