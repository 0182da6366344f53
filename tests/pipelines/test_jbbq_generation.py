"""Greedy generation of the JBBQ HF backend against its definition: each prompt alone,
``transformers``' ``generate``, no batching, padding or cache."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from jbbq_fixtures import fixture_rows

from bias_hub.pipelines.jbbq.hf_backend import DEFAULT_BATCH_TOKENS, HFModel, _stable_text
from bias_hub.pipelines.jbbq.prompting import load_prompt
from bias_hub.pipelines.jbbq.random_model import build_tiny_model, build_tokenizer

MAX_NEW = 6


@pytest.fixture(scope="module")
def chatty(tmp_path_factory: pytest.TempPathFactory) -> HFModel:
    """A tiny Llama with large random weights: its greedy replies differ from prompt to prompt."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    rows = fixture_rows()["all"]
    texts = [load_prompt("basic", layout="compact").plain(row) for row in rows]
    model, tokenizer = build_tiny_model(
        tmp_path_factory.mktemp("chatty"), texts, seed=4, save=False
    )
    torch.manual_seed(4)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() > 1:
                parameter.normal_(0.0, 0.5)
    yield HFModel(model=model, tokenizer=tokenizer, batch_size=3)
    torch.set_num_threads(threads)


@pytest.fixture(autouse=True)
def fresh_budget(request: pytest.FixtureRequest) -> None:
    """A budget halved by an out-of-memory test stays halved on the model: start each test afresh."""
    if "chatty" in request.fixturenames:
        request.getfixturevalue("chatty").batch_tokens = DEFAULT_BATCH_TOKENS


def _prompts(model: HFModel, shots: int = 2) -> list[list[int]]:
    rows = fixture_rows()
    # The compact layout, as the tokenizer was built from: with it the tiny model's replies
    # settle at different lengths, so prompts join rows part way through (tested below).
    prompt = load_prompt("unknown", layout="compact")
    return [
        model.encode(prompt.plain(row, rows["train"][:shots]), chat=False)
        for row in rows["test"][:10]
    ]


def _alone(model: HFModel, prompt: list[int], max_new_tokens: int = MAX_NEW, **config) -> list[int]:
    """The definition: the new tokens of greedy ``generate`` on the prompt alone."""
    import torch

    with torch.inference_mode():
        out = model.model.generate(
            input_ids=torch.tensor([prompt]),
            max_new_tokens=max_new_tokens,
            do_sample=False,
            pad_token_id=model._pad_id,
            **config,
        )
    return out[0, len(prompt) :].tolist()


@pytest.mark.parametrize("prefix_cache", [True, False])
def test_replies_equal_generating_each_prompt_alone(chatty: HFModel, prefix_cache: bool) -> None:
    chatty.prefix_cache, chatty.batch_size = prefix_cache, 3
    prompts = _prompts(chatty)
    expected = [
        chatty.tokenizer.decode(_alone(chatty, p), skip_special_tokens=True) for p in prompts
    ]
    assert len(set(expected)) >= 5  # the comparison means something
    assert chatty.generate(prompts, MAX_NEW, progress=False) == expected


def _settled_replies(model: HFModel, prompts: list[list[int]], settled) -> list[str]:
    """The definition: each reply alone, cut at the fewest tokens whose text is settled."""
    expected = []
    for prompt in prompts:
        tokens = _alone(model, prompt)
        cut = next(
            (
                k
                for k in range(1, len(tokens) + 1)
                if settled(
                    model.tokenizer.decode(tokens[:k], skip_special_tokens=True).rstrip("\ufffd")
                )
            ),
            len(tokens),
        )
        expected.append((cut, model.tokenizer.decode(tokens[:cut], skip_special_tokens=True)))
    assert len({cut for cut, _ in expected}) >= 2  # rows do finish at different steps
    return [text for _, text in expected]


def test_a_reply_ends_where_it_is_settled(chatty: HFModel) -> None:
    """With ``settled``, each reply is the shortest start (in tokens) of the full reply that
    satisfies it."""
    chatty.prefix_cache, chatty.batch_size = True, 4
    prompts = _prompts(chatty)

    def settled(text: str) -> bool:
        return len(text) >= 7

    expected = _settled_replies(chatty, prompts, settled)
    assert chatty.generate(prompts, MAX_NEW, progress=False, settled=settled) == expected


@pytest.mark.parametrize("prefix_cache", [True, False])
def test_prompts_join_rows_part_way_through_their_replies(
    chatty: HFModel, prefix_cache: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once half a batch has finished, the next prompts join the rows still going (their
    caches merged, padded differently): the replies are still each prompt's own."""
    chatty.prefix_cache, chatty.batch_size = prefix_cache, 2
    prompts = _prompts(chatty)

    def settled(text: str) -> bool:
        return text.startswith("は") or len(text) >= 7

    from bias_hub.pipelines.jbbq import kv_cache  # torch and transformers: a model runs here

    merges: list[int] = []
    merge = kv_cache.merge
    monkeypatch.setattr(
        kv_cache, "merge", lambda first, *rest: merges.append(1) or merge(first, *rest)
    )
    expected = _settled_replies(chatty, prompts, settled)
    assert chatty.generate(prompts, MAX_NEW, progress=False, settled=settled) == expected
    assert merges


def test_a_reply_needs_room_for_a_token(chatty: HFModel) -> None:
    with pytest.raises(ValueError, match="--max-new-tokens must be at least 1, got 0"):
        chatty.generate(_prompts(chatty), 0, progress=False)


def _replies_when_forward_fails(model: HFModel, fails) -> list[str]:
    """``generate`` (8 rows a batch) with a forward that raises out of memory where
    ``fails(input_ids)`` says so."""
    import torch

    forward = model.model.forward

    def small_memory(*args, **kwargs):
        if fails(kwargs["input_ids"]):
            raise torch.cuda.OutOfMemoryError("CUDA out of memory. (simulated)")
        return forward(*args, **kwargs)

    model.model.forward = small_memory
    try:
        return model.generate(_prompts(model), MAX_NEW, progress=False)
    finally:
        del model.model.forward


def test_out_of_memory_during_generation_halves_the_batch(chatty: HFModel) -> None:
    chatty.prefix_cache, chatty.batch_size = True, 8
    expected = chatty.generate(_prompts(chatty), MAX_NEW, progress=False)
    seen: list[int] = []
    chatty.batch_size, chatty.batch_tokens = 8, DEFAULT_BATCH_TOKENS
    assert (
        _replies_when_forward_fails(
            chatty, lambda ids: seen.append(ids.shape[0]) or ids.shape[0] > 2
        )
        == expected
    )
    assert chatty.batch_size == 2  # 8 -> 4 -> 2, then kept
    # The shared prefix once (one row), then 8 and 4 rows fail; every later pass has at most 2.
    assert seen[:4] == [1, 8, 4, 2] and max(seen[4:]) <= 2


def test_out_of_memory_part_way_through_the_replies(chatty: HFModel) -> None:
    """The rows of the step that failed are computed again from their prompt and reply so far."""
    import torch

    chatty.prefix_cache, chatty.batch_size = True, 8
    expected = chatty.generate(_prompts(chatty), MAX_NEW, progress=False)
    steps: list[int] = []

    def third_step(ids: torch.Tensor) -> bool:
        if ids.shape[1] == 1:  # one token per row: a decoding step
            steps.append(ids.shape[0])
        return ids.shape[1] == 1 and len(steps) == 3

    chatty.batch_size, chatty.batch_tokens = 8, DEFAULT_BATCH_TOKENS
    assert _replies_when_forward_fails(chatty, third_step) == expected
    assert steps[2] == 8 and chatty.batch_size == 4  # the failed step had 8 rows
    assert max(steps[3:]) <= 4


def test_a_sliding_window_model_computes_every_prompt_whole() -> None:
    """A prefix cache with padding after it moves what a sliding window covers: such
    models take no prefix cache, and replies and log-probabilities stay those of each
    prompt alone (with the cache, one reply of ten and every log-probability differed)."""
    import torch
    from transformers import MistralConfig, MistralForCausalLM

    torch.manual_seed(0)
    rows = fixture_rows()
    tokenizer = build_tokenizer(
        [load_prompt("basic").plain(row) for row in rows["all"]], chat_template=False
    )
    config = MistralConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=4,
        sliding_window=24,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    model = MistralForCausalLM(config).eval()
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.dim() > 1:
                parameter.normal_(0.0, 0.5)
    hf = HFModel(model=model, tokenizer=tokenizer, batch_size=3)
    prompts = _prompts(hf)
    assert min(map(len, prompts)) > 10 * config.sliding_window
    expected = [tokenizer.decode(_alone(hf, p), skip_special_tokens=True) for p in prompts]
    assert len(set(expected)) >= 5
    assert hf.generate(prompts, MAX_NEW, progress=False) == expected
    alone = []
    with torch.inference_mode():
        for prompt in prompts:
            logprobs = torch.log_softmax(
                model(input_ids=torch.tensor([prompt])).logits[0, -1].float(), dim=-1
            )
            alone.append([float(logprobs[tokenizer.convert_tokens_to_ids(c)]) for c in "012"])
    got = hf.choice_logprobs(prompts, ["0", "1", "2"], progress=False)
    assert abs(got - np.array(alone)).max() < 1e-4


def test_a_generation_config_with_a_penalty_goes_through_transformers(
    chatty: HFModel, tmp_path: Path
) -> None:
    chatty.prefix_cache, chatty.batch_size = True, 3
    prompts = _prompts(chatty)[:5]
    config = chatty.model.generation_config
    config.repetition_penalty = 3.0
    chatty._plain = None
    try:
        assert not chatty._plain_greedy()
        expected = [
            chatty.tokenizer.decode(_alone(chatty, p), skip_special_tokens=True) for p in prompts
        ]
        assert chatty.generate(prompts, MAX_NEW, progress=False) == expected
    finally:
        config.repetition_penalty = 1.0
        chatty._plain = None
    assert chatty._plain_greedy()


def test_only_text_that_cannot_change_is_judged() -> None:
    class Cleans:
        clean_up_tokenization_spaces = True

    class Keeps:
        clean_up_tokenization_spaces = False

    assert _stable_text("1\ufffd", Keeps()) == "1"  # the bytes of a character still coming
    assert _stable_text("1 ", Keeps()) == "1 "
    assert _stable_text("1 ", Cleans()) == "1"  # " .5" would become ".5"
