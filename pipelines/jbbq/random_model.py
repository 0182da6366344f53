"""A tiny causal LM with a Japanese-capable tokenizer, built offline on the spot.

The tests and the benchmark need a model that runs without the Hub.
The tokenizer is a byte-level BPE trained on the given texts (so Japanese gets
real multi-character tokens and any other text still encodes), with a small
chat template; the model is a randomly initialised Llama. Its answers carry no
meaning: it exercises the plumbing, nothing else (``taught_model`` teaches one to answer).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

__all__ = ["CHAT_TEMPLATE", "MODEL_CONFIGS", "build_tokenizer", "build_tiny_model"]

CHAT_TEMPLATE = (
    "{% for message in messages %}<|{{ message['role'] }}|>\n{{ message['content'] }}</s>\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
_SPECIAL = ["<pad>", "<s>", "</s>", "<|system|>", "<|user|>", "<|assistant|>"]


# Llama shapes: "tiny" for tests and CPU plumbing runs; "taught" for a model taught its replies
# (``taught_model``): a least-squares output layer fits as many reply tokens as its width, 256
# (the offline variant's 80 replies take 160, the demo's control's 120 take 240), "taught-wide"
# 768 (the demo's planted model's 360 replies take 720); "small" (31 M parameters in its
# layers, 32-33 M with the benches' vocabularies) where the forward pass is most of the work on
# a CPU, as with real models; "llama-7b" is Llama-2-7B's configuration.
def _shape(hidden: int, intermediate: int, layers: int, heads: int, **more: int) -> dict:
    return {
        "hidden_size": hidden,
        "intermediate_size": intermediate,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "num_key_value_heads": heads,
        "max_position_embeddings": 4096,
        **more,
    }


MODEL_CONFIGS = {
    "tiny": _shape(64, 128, 2, 4),
    "taught": _shape(256, 512, 2, 4),
    "taught-wide": _shape(768, 512, 2, 4),
    "small": _shape(512, 1536, 9, 8),
    "llama-7b": _shape(4096, 11008, 32, 32, vocab_size=32000),
}


def build_tokenizer(texts: Iterable[str], vocab_size: int = 2000, chat_template: bool = True):
    """A byte-level BPE ``PreTrainedTokenizerFast`` trained on ``texts`` (deterministic)."""
    # heavy (transformers): loaded only when a model is built, so `bias-hub --help` stays fast
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=_SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tokenizer.train_from_iterator(list(texts), trainer=trainer)
    wrapped = PreTrainedTokenizerFast(
        tokenizer_object=tokenizer,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        additional_special_tokens=_SPECIAL[3:],
    )
    if chat_template:
        wrapped.chat_template = CHAT_TEMPLATE
    return wrapped


def build_tiny_model(
    out_dir: str | Path | None,
    texts: Iterable[str],
    *,
    config: str = "tiny",
    seed: int = 0,
    chat_template: bool = True,
    dtype: str = "float32",
    device: str = "cpu",
    save: bool = True,
):
    """Create a tokenizer and a random Llama of shape ``config``; save both to ``out_dir``.

    Returns ``(model, tokenizer)``. ``save=False`` keeps them in memory only (``out_dir`` unused).
    """
    import torch  # heavy: as above
    from transformers import LlamaConfig, LlamaForCausalLM

    if config not in MODEL_CONFIGS:
        raise ValueError(
            f"--config: unknown model config {config!r}; expected one of {sorted(MODEL_CONFIGS)}"
        )
    tokenizer = build_tokenizer(texts, chat_template=chat_template)
    shape = dict(MODEL_CONFIGS[config])
    shape["vocab_size"] = max(shape.get("vocab_size", 0), len(tokenizer))
    model_config = LlamaConfig(
        **shape,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=config == "tiny",
    )
    torch.manual_seed(seed)
    # Built directly on the device in the target dtype: a 7B model never exists in float32.
    default = torch.get_default_dtype()
    torch.set_default_dtype(getattr(torch, dtype))
    try:
        with torch.device(device):
            model = LlamaForCausalLM(model_config)
    finally:
        torch.set_default_dtype(default)
    model.eval()
    if save:
        if out_dir is None:
            raise ValueError("build_tiny_model: save=True needs an out_dir")
        model.save_pretrained(out_dir)
        tokenizer.save_pretrained(out_dir)
    return model, tokenizer
