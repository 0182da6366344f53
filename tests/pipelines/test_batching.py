"""Batch sizes that adapt to memory: the shared helper, and every model path that uses it.

An out-of-memory error is simulated on CPU: the model's forward raises
``torch.cuda.OutOfMemoryError`` for batches larger than a limit. Every path must then
return exactly what it returns without the error, with the batch size halved to fit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bias_hub.pipelines.common.batching import AdaptiveBatchSize, is_out_of_memory

WORDS = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "the",
    "nurse",
    "doctor",
    "he",
    "she",
    "said",
    "that",
    "was",
    "tired",
    "a",
    "man",
    "woman",
    "cat",
    "dog",
    "is",
    "happy",
    "sad",
    ".",
]
SENTENCES = [
    "the nurse said that she was tired .",
    "he is happy .",
    "the doctor was sad .",
    "a man said that he was a doctor .",
    "she is a woman .",
    "the cat is happy .",
    "a dog .",
    "the man said that the woman was happy .",
]


@pytest.fixture(autouse=True)
def one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def _small_memory(model, limit: int, seen: list[int]):
    """Make ``model``'s forward run out of memory on batches of more than ``limit`` rows."""
    import torch

    forward = model.forward

    def forward_with_little_memory(*args, **kwargs):
        rows = kwargs["input_ids"].shape[0]
        seen.append(rows)
        if rows > limit:
            raise torch.cuda.OutOfMemoryError(
                "CUDA out of memory. Tried to allocate 2.00 GiB (simulated)"
            )
        return forward(*args, **kwargs)

    model.forward = forward_with_little_memory


# ---- the helper --------------------------------------------------------------------------


def test_batches_run_in_order_and_the_last_one_is_short() -> None:
    done: list[list[int]] = []
    size = AdaptiveBatchSize(4)
    assert [
        list(b) for b in size.batches(list(range(10)), lambda batch: done.append(list(batch)))
    ] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert done == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]] and size.value == 4


def test_out_of_memory_halves_the_size_and_never_repeats_finished_work() -> None:
    import torch

    tried: list[list[int]] = []
    finished: list[int] = []

    def work(batch):
        tried.append(list(batch))
        if len(batch) > 3:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory.")
        finished.extend(batch)

    size = AdaptiveBatchSize(8)
    size.run(list(range(11)), work, progress=False)
    # 8 fails, 4 fails, then pairs of 2 (and the last single item); the size stays at 2.
    assert [len(b) for b in tried] == [8, 4, 2, 2, 2, 2, 2, 1]
    assert finished == list(range(11)) and size.value == 2


def test_a_short_last_batch_that_fails_halves_from_its_own_size() -> None:
    import torch

    tried: list[int] = []

    def work(batch):
        tried.append(len(batch))
        if len(batch) == 3:
            raise torch.cuda.OutOfMemoryError("CUDA out of memory.")

    size = AdaptiveBatchSize(8)
    size.run(list(range(11)), work, progress=False)
    assert tried == [8, 3, 1, 1, 1] and size.value == 1


def test_other_errors_and_out_of_memory_at_one_item_are_raised() -> None:
    import torch

    def broken(batch):
        raise ValueError("row 3: bad input")

    with pytest.raises(ValueError, match="row 3"):
        AdaptiveBatchSize(4).run([1, 2, 3], broken, progress=False)

    def never_fits(batch):
        raise torch.cuda.OutOfMemoryError("CUDA out of memory.")

    size = AdaptiveBatchSize(4)
    with pytest.raises(torch.cuda.OutOfMemoryError):
        size.run([1, 2, 3], never_fits, progress=False)
    assert size.value == 1  # 4 -> 2 -> 1, then the error


def test_out_of_memory_is_recognised_as_accelerate_recognises_it() -> None:
    import torch

    assert is_out_of_memory(torch.cuda.OutOfMemoryError("anything"))
    assert is_out_of_memory(RuntimeError("CUDA out of memory. Tried to allocate 20.00 MiB"))
    assert is_out_of_memory(
        RuntimeError(
            "[enforce fail at alloc_cpu.cpp:117] DefaultCPUAllocator: can't allocate memory"
        )
    )
    assert not is_out_of_memory(RuntimeError("shape mismatch"))
    assert not is_out_of_memory(MemoryError())


@pytest.mark.parametrize("start", [0, -2, 2.5, True, "8"])
def test_a_batch_size_below_one_or_not_whole_is_refused(start) -> None:
    with pytest.raises(ValueError, match=r"--batch-size must be a whole number of at least 1, got"):
        AdaptiveBatchSize(start)
    assert AdaptiveBatchSize(np.int64(3)).value == 3


# ---- the model paths -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def bert_tokenizer():
    from transformers import BertTokenizerFast

    return BertTokenizerFast(vocab={w: i for i, w in enumerate(WORDS)}, do_lower_case=True)


def _bert_config(**extra):
    import torch
    from transformers import BertConfig

    torch.manual_seed(0)
    return BertConfig(
        vocab_size=len(WORDS),
        hidden_size=16,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        **extra,
    )


def test_nli_prediction_adapts(bert_tokenizer) -> None:
    from transformers import BertForSequenceClassification

    from bias_hub.pipelines.nli.predict import encode_pairs, predict_logits

    model = BertForSequenceClassification(_bert_config(num_labels=3)).eval()
    encodings = encode_pairs(bert_tokenizer, SENTENCES, SENTENCES[::-1], 128)
    expected = predict_logits(model, encodings, batch_size=8, progress=False)
    seen: list[int] = []
    _small_memory(model, 3, seen)
    got = predict_logits(model, encodings, batch_size=8, progress=False)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert seen == [8, 4, 2, 2, 2, 2]


def test_fill_mask_adapts(bert_tokenizer) -> None:
    from transformers import BertForMaskedLM

    from bias_hub.pipelines.speciesism.fill_mask import MaskedLM, mask_probabilities

    lm = MaskedLM("tiny", BertForMaskedLM(_bert_config()).eval(), bert_tokenizer, "cpu")
    texts = [
        s.replace("was", "[MASK]", 1) if "was" in s else s.replace(".", "[MASK]") for s in SENTENCES
    ]
    targets = [[WORDS.index("was") if "was" in s else WORDS.index(".")] for s in SENTENCES]
    expected = mask_probabilities(lm, texts, batch_size=8)
    expected_targets = mask_probabilities(lm, texts, batch_size=8, targets=targets)
    seen: list[int] = []
    _small_memory(lm.model, 2, seen)
    got = mask_probabilities(lm, texts, batch_size=8)
    assert got.shape == (8, len(WORDS))
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert seen == [8, 4, 2, 2, 2, 2]
    seen.clear()  # each call starts again from its batch size
    np.testing.assert_allclose(
        mask_probabilities(lm, texts, batch_size=8, targets=targets), expected_targets, atol=1e-9
    )
    assert seen == [8, 4, 2, 2, 2, 2]


def test_attention_and_perplexity_adapt(bert_tokenizer, tmp_path: Path) -> None:
    from transformers import BertModel

    from bias_hub.pipelines.jbbq.random_model import build_tiny_model
    from bias_hub.pipelines.stereoset.attention import gender_attention
    from bias_hub.pipelines.stereoset.perplexity import sentence_perplexities

    encoder = BertModel(_bert_config(attn_implementation="eager")).eval()
    spans = [
        [(s.index(w), s.index(w) + len(w))] if w in s.split() else []
        for s in SENTENCES
        for w in [next((g for g in ("he", "she", "man", "woman") if g in s.split()), "")]
    ]
    expected = gender_attention(
        encoder, bert_tokenizer, SENTENCES, spans, batch_size=8, progress=False
    )
    assert sum(result is not None for result in expected) == len(SENTENCES)
    seen: list[int] = []
    _small_memory(encoder, 3, seen)
    got = gender_attention(encoder, bert_tokenizer, SENTENCES, spans, batch_size=8, progress=False)
    assert seen == [8, 4, 2, 2, 2, 2]
    for want, have in zip(expected, got, strict=True):
        assert (want is None) == (have is None)
        if want is not None:
            assert want.words == have.words
            np.testing.assert_allclose(have.mass, want.mass, atol=1e-6)

    model, tokenizer = build_tiny_model(tmp_path, SENTENCES, seed=3, save=False)
    expected_ppl = sentence_perplexities(model, tokenizer, SENTENCES, batch_size=8, progress=False)
    seen.clear()
    _small_memory(model, 1, seen)
    np.testing.assert_allclose(
        sentence_perplexities(model, tokenizer, SENTENCES, batch_size=8, progress=False),
        expected_ppl,
        rtol=1e-5,
    )
    assert seen == [8, 4, 2, 1, 1, 1, 1, 1, 1, 1, 1]
