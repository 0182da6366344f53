"""Local models through ``transformers``: greedy generation and choice log-likelihoods.

Single-token choices take one forward pass per question, projecting only the last position
onto the vocabulary. The text every prompt shares (instruction, few-shot examples) is
tokenized once (``prefix_tokens``) and computed once: its key/value cache serves every batch
(``kv_cache``), with explicit position ids so that each result equals scoring the prompt on
its own. Batches are sized by the tokens they hold (``TokenBudget``), longest prompts first;
out of accelerator memory the budget halves.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from bias_hub.builders.shared.console import progress as progress_bar
from bias_hub.pipelines.common import ModelOptions, load_model
from bias_hub.pipelines.common.batching import DEFAULT_BATCH_TOKENS, TokenBudget
from bias_hub.pipelines.jbbq.prefix_tokens import (
    common_prefix_length,
    encode_sharing_prefix,
    encode_whole,
)

__all__ = ["DEFAULT_BATCH_TOKENS", "HFModel", "common_prefix_length"]


@dataclass
class HFModel:
    """A causal LM and its tokenizer, with the two JBBQ scoring modes.

    ``batch_tokens``: the token budget of a batch; ``batch_size``: at most this many rows in
    one (None: as many as the budget allows)."""

    model: object
    tokenizer: object
    batch_size: int | None = None
    prefix_cache: bool = True
    batch_tokens: int = DEFAULT_BATCH_TOKENS

    @classmethod
    def load(cls, name: str, options: ModelOptions | None = None, **batching) -> HFModel:
        """A causal LM by Hub id or local folder (any other head is refused before loading);
        ``batching``: ``batch_size``, ``prefix_cache``, ``batch_tokens``."""
        return cls(*load_model(name, "causal-lm", options), **batching)

    # ---- prompts -------------------------------------------------------------------------

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def render_chat(self, messages: list[dict[str, str]]) -> str:
        """The chat template's text for ``messages``, ending where the reply starts."""
        if not self.has_chat_template:
            raise ValueError(
                "--chat yes: the tokenizer of this model has no chat template; "
                "use --chat no (plain prompt) or a model with a chat template"
            )
        try:
            return self.tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True
            )
        except Exception as err:  # noqa: BLE001 - templates raise anything (jinja errors)
            if messages[0]["role"] != "system" or "system" not in str(err).lower():
                raise
        # Some templates (Gemma, Mistral) reject a system turn: fold it into the first user turn.
        merged = [dict(m) for m in messages[1:]]
        merged[0]["content"] = messages[0]["content"] + "\n\n" + merged[0]["content"]
        return self.tokenizer.apply_chat_template(
            merged, tokenize=False, add_generation_prompt=True
        )

    def encode(self, text: str, chat: bool) -> list[int]:
        # A rendered chat template already holds its special tokens (BOS etc.).
        return list(self.tokenizer(text, add_special_tokens=not chat)["input_ids"])

    def encode_all(self, texts: Sequence[str], chat: bool) -> list[list[int]]:
        """``encode`` of every text; with ``prefix_cache``, the text they all share is read
        once (``prefix_tokens``)."""
        encode = encode_sharing_prefix if self.prefix_cache else encode_whole
        return encode(self.tokenizer, texts, add_special_tokens=not chat)

    def _forward(self, keep: int, **kwargs):
        """The model's outputs, projecting only the last ``keep`` positions onto the vocabulary
        where the model supports ``logits_to_keep``; returns ``(logits of those, outputs)``."""
        if getattr(self, "_keeps_logits", True):
            try:
                outputs = self.model(**kwargs, logits_to_keep=keep)
                return outputs.logits[:, -keep:, :], outputs
            except TypeError as err:  # older or remote-code models
                if "logits_to_keep" not in str(err):
                    raise
                self._keeps_logits = False
        outputs = self.model(**kwargs)
        return outputs.logits[:, -keep:, :], outputs

    @property
    def device(self):
        return next(self.model.parameters()).device

    @property
    def _pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        return 0 if pad is None else int(pad)

    # ---- log-likelihood ------------------------------------------------------------------

    def continuation_ids(self, text: str, continuation: str, chat: bool) -> list[int]:
        """The tokens ``continuation`` adds when it follows ``text``.

        Tokenizing the choice on its own can differ from how it is tokenized after the
        prompt (SentencePiece's word-start marker, for one: "0" alone is "▁0" for many
        Llama-family tokenizers, but after a newline it is "0"). Falls back to the
        choice on its own where the prompt's tokens change at the boundary.
        """
        context = self.encode(text, chat)
        whole = self.encode(text + continuation, chat)
        if len(whole) > len(context) and whole[: len(context)] == context:
            return whole[len(context) :]
        return list(self.tokenizer(continuation, add_special_tokens=False)["input_ids"])

    @contextmanager
    def _budget(self) -> Iterator[TokenBudget]:
        """The token budget of a run; what the run learns about memory is kept (a budget halved
        out of accelerator memory stays halved)."""
        budget = TokenBudget(self.batch_tokens, self.batch_size)
        try:
            yield budget
        finally:
            self.batch_tokens, self.batch_size = budget.tokens, budget.max_rows

    def _each_batch(
        self, prompts: Sequence[Sequence[int]], length, progress: bool, desc: str, work
    ) -> None:
        """``work(batch)`` over the prompts' indices, longest first (the first batch shows at
        once whether memory suffices), in batches whose ``length(prompt)`` fit the budget."""
        order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
        lengths = [length(prompts[i]) for i in order]
        with self._budget() as budget:
            budget.run(order, lengths, work, desc=desc, unit="q", progress=progress)

    def _shared_prefix(self, prompts: Sequence[Sequence[int]]) -> tuple[int, object | None]:
        """``(length, key/value cache)`` of the token prefix every prompt shares, computed once;
        ``(0, None)`` when it is too short to be worth it or ``prefix_cache`` is off.

        One token of every prompt stays out of the prefix: a batch needs at least one new
        token per row (its logits score the choices, or start the reply). Only models
        whose every layer attends to the whole sequence take the cache: with a sliding
        window (Mistral v0.1, Gemma 2/3...), the padding between prefix and rest would move
        what the window covers, so those compute every prompt whole.
        """
        import torch

        from bias_hub.pipelines.jbbq import kv_cache  # torch and transformers: once a model runs

        shared = min(common_prefix_length(prompts), min(len(p) for p in prompts) - 1)
        if not self.prefix_cache or shared < 8:
            return 0, None
        prefix = torch.tensor([list(prompts[0][:shared])], dtype=torch.long, device=self.device)
        cache = kv_cache.returned_cache(self._forward(1, input_ids=prefix, use_cache=True)[1])
        return (shared, cache) if kv_cache.full_attention(cache) else (0, None)

    def _batch_inputs(
        self, rows: list[Sequence[int]], shared: int, prefix_cache, room: int
    ) -> dict:
        """The forward's arguments for ``rows`` (whole prompts, each maybe with a reply so
        far): what follows the ``shared`` prefix, left-padded, after the prefix's cache
        (``prefix_cache``, with room for ``room`` tokens more than the rows bring), with
        the positions each token has in its own prompt."""
        import torch

        from bias_hub.pipelines.jbbq import kv_cache  # torch and transformers: once a model runs

        ids, mask = self._left_pad([row[shared:] for row in rows])
        kwargs = {"input_ids": ids}
        if prefix_cache is not None:
            kwargs[self._cache_argument] = kv_cache.batch_cache(
                prefix_cache, len(rows), ids.shape[1] + room
            )
            mask = torch.cat([mask.new_ones((len(rows), shared)), mask], dim=1)
        kwargs["attention_mask"] = mask
        # Left padding sits between prefix and the rest: the real tokens are numbered on.
        kwargs["position_ids"] = (mask.cumsum(dim=1) - 1)[:, shared:].clamp(min=shared)
        return kwargs

    def _left_pad(self, rows: list[Sequence[int]]):
        import torch

        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[i, width - len(row) :] = 1
        return ids.to(self.device), mask.to(self.device)

    def choice_logprobs(
        self,
        prompts: Sequence[Sequence[int]],
        choices: Sequence[str] | Sequence[Sequence[int]],
        progress: bool = True,
    ) -> np.ndarray:
        """``(n_prompts, n_choices)`` log-probabilities of each choice after each prompt.

        ``choices`` are texts (tokenized on their own) or token ids (see ``continuation_ids``).
        Each batch runs its prompts once (after the shared prefix's cache): the last position's
        logits score every choice's first token. For multi-token choices, the batch's cache is
        then repeated once per choice and the choices' tokens but the last run after it,
        right-padded: their logits score the rest.
        """
        import torch

        from bias_hub.pipelines.jbbq import kv_cache  # torch and transformers: once a model runs

        if not prompts:
            return np.zeros((0, len(choices)))
        _check_prompts(prompts)
        choice_ids = [
            self.tokenizer(c, add_special_tokens=False)["input_ids"]
            if isinstance(c, str)
            else list(c)
            for c in choices
        ]
        if any(len(ids) == 0 for ids in choice_ids):
            raise ValueError("a choice encodes to no tokens")
        n, longest = len(choice_ids), max((len(ids) for ids in choice_ids), default=1)
        out = np.zeros((len(prompts), n))
        first = torch.tensor([ids[0] for ids in choice_ids], device=self.device)
        # (choices, longest - 1), right-padded: each choice's tokens but the last (fed after
        # the prompt), the tokens they predict (all but the first), and where they are real.
        fed = torch.full((n, max(1, longest - 1)), self._pad_id, dtype=torch.long)
        predicted, real = torch.zeros_like(fed), torch.zeros_like(fed)
        for c, ids in enumerate(choice_ids):
            fed[c, : len(ids) - 1] = torch.tensor(ids[:-1], dtype=torch.long)
            predicted[c, : len(ids) - 1] = torch.tensor(ids[1:], dtype=torch.long)
            real[c, : len(ids) - 1] = 1
        fed, predicted, real = fed.to(self.device), predicted.to(self.device), real.to(self.device)
        # single-token choices: no room for choice tokens, and the prompt alone counts
        room = longest if longest > 1 else 0

        def work(batch: list[int]) -> None:
            kwargs = self._batch_inputs([prompts[i] for i in batch], shared, prefix_cache, room)
            # The batch's cache is needed only to continue into multi-token choices.
            logits, outputs = self._forward(1, use_cache=longest > 1, **kwargs)
            scores = torch.log_softmax(logits[:, -1, :].float(), dim=-1)[:, first]  # (rows, n)
            if longest > 1:
                rows = len(batch)
                cache = kv_cache.returned_cache(outputs)
                cache.batch_repeat_interleave(n)  # row r's copies: r * n .. r * n + n - 1
                mask = kwargs["attention_mask"].repeat_interleave(n, dim=0)
                last = kwargs["position_ids"][:, -1].repeat_interleave(n, dim=0)
                width = fed.shape[1]
                logits, _ = self._forward(
                    width,
                    input_ids=fed.repeat(rows, 1),
                    attention_mask=torch.cat([mask, real.repeat(rows, 1)], dim=1),
                    position_ids=last[:, None] + 1 + torch.arange(width, device=self.device),
                    use_cache=True,
                    **{self._cache_argument: cache},
                )
                following = torch.log_softmax(logits.float(), dim=-1)
                taken = following.gather(-1, predicted.repeat(rows, 1)[..., None])[..., 0]
                scores = scores + (taken * real.repeat(rows, 1)).sum(dim=1).view(rows, n)
            out[batch] = scores.cpu().numpy()

        with torch.inference_mode():
            shared, prefix_cache = self._shared_prefix(prompts)
            length = (lambda p: n * (len(p) + room)) if room else len  # the cache once per choice
            self._each_batch(prompts, length, progress, "loglikelihood", work)
        return out

    # ---- generation ----------------------------------------------------------------------

    def generate(
        self,
        prompts: Sequence[Sequence[int]],
        max_new_tokens: int,
        progress: bool = True,
        settled: Callable[[str], bool] | None = None,
    ) -> list[str]:
        """Greedy continuations (decoded, special tokens dropped) of each prompt: each the reply
        greedy decoding of the prompt alone gives, with less work. A reply ends once
        ``settled(reply so far)`` holds; finished rows leave the batch and new prompts join
        (``greedy.GreedyDecoder``). A generation config that changes greedy scores (a
        repetition penalty, a minimum length...) goes through ``transformers``' ``generate``.
        """
        if not prompts:
            return []
        _check_prompts(prompts)
        if max_new_tokens < 1:
            raise ValueError(f"--max-new-tokens must be at least 1, got {max_new_tokens}")
        if not self._plain_greedy():
            return self._generate_with_transformers(prompts, max_new_tokens, progress, settled)
        import torch

        from bias_hub.pipelines.jbbq.greedy import (
            GreedyDecoder,  # torch and transformers: once a model runs
        )

        config = self.model.generation_config
        eos = (
            {config.eos_token_id}
            if isinstance(config.eos_token_id, int)
            else set(config.eos_token_id or ())
        )
        with torch.inference_mode():
            shared, prefix_cache = self._shared_prefix(prompts)
            decoder = GreedyDecoder(
                self,
                prompts,
                max_new_tokens,
                eos,
                shared,
                prefix_cache,
                settled,
                lambda text: _stable_text(text, self.tokenizer),
            )
            with self._budget() as budget:
                for _ in progress_bar(
                    decoder.run(budget),
                    desc="generate",
                    total=len(prompts),
                    unit="q",
                    enabled=progress,
                ):
                    pass
        return self.tokenizer.batch_decode(decoder.replies, skip_special_tokens=True)

    def _plain_greedy(self) -> bool:
        """Whether greedy decoding under the model's generation config is the plain argmax
        (no logits processor: what ``transformers`` would add, asked through its own method)."""
        if getattr(self, "_plain", None) is None:
            config = copy.deepcopy(self.model.generation_config)
            config.do_sample = False
            try:
                processors = self.model._get_logits_processor(
                    generation_config=config,
                    input_ids_seq_length=1,
                    device=self.device,
                    model_kwargs={},
                )
                self._plain = len(processors) == 0
            except Exception:  # noqa: BLE001 - another transformers version: let generate decide
                self._plain = False
        return self._plain

    def _generate_with_transformers(
        self,
        prompts: Sequence[Sequence[int]],
        max_new_tokens: int,
        progress: bool,
        settled: Callable[[str], bool] | None,
    ) -> list[str]:
        """``generate`` with the generation config's logits processors, batched longest first
        with the shared prefix's cache; a batch ends once every reply is done."""
        import torch
        from transformers import StoppingCriteriaList

        from bias_hub.pipelines.jbbq import kv_cache  # torch and transformers: once a model runs

        replies: list[str] = [""] * len(prompts)

        def work(batch: list[int]) -> None:
            ids, mask = self._left_pad([prompts[i][shared:] for i in batch])
            kwargs = {}
            if prefix_cache is not None:
                # The whole prompt goes in (prefix, then padding, then the rest); generate
                # computes only what the cache lacks and numbers positions from the mask.
                room = ids.shape[1] + max_new_tokens  # the rest of the prompt and the reply
                kwargs[self._cache_argument] = kv_cache.batch_cache(prefix_cache, len(batch), room)
                prefix = torch.tensor(
                    list(prompts[batch[0]][:shared]), dtype=torch.long, device=ids.device
                )
                ids = torch.cat([prefix.expand(len(batch), -1), ids], dim=1)
                mask = torch.cat([mask.new_ones((len(batch), shared)), mask], dim=1)
            stop = (
                None if settled is None else _SettledReplies(self.tokenizer, ids.shape[1], settled)
            )
            generated = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=self._pad_id,
                stopping_criteria=StoppingCriteriaList([stop]) if stop is not None else None,
                **kwargs,
            )  # stop tokens come from the model's generation_config (chat models list several)
            new = generated[:, ids.shape[1] :].tolist()
            ends = stop.ends if stop is not None else {}
            texts = self.tokenizer.batch_decode(
                [row[: ends.get(r)] for r, row in enumerate(new)], skip_special_tokens=True
            )
            for i, text in zip(batch, texts, strict=True):
                replies[i] = text

        with torch.inference_mode():
            shared, prefix_cache = self._shared_prefix(prompts)
            self._each_batch(prompts, lambda p: len(p) + max_new_tokens, progress, "generate", work)
        return replies

    @cached_property
    def _cache_argument(self) -> str:
        """The forward's name for a key/value cache (``past_key_values`` before transformers 5.2x)."""
        names = inspect.signature(type(self.model).forward).parameters
        return "cache" if "cache" in names else "past_key_values"


def _check_prompts(prompts: Sequence[Sequence[int]]) -> None:
    if any(len(p) == 0 for p in prompts):
        raise ValueError(
            "a prompt encodes to no tokens; the model needs at least one token of context"
        )


def _stable_text(text: str, tokenizer) -> str:
    """The part of a reply decoded so far that further tokens cannot change.

    Left out: a trailing U+FFFD (a character whose bytes are still coming) and, where the
    tokenizer's decoding cleans up spaces, trailing whitespace (it turns " ." into ".",
    which can join a number to what follows).
    """
    text = text.rstrip("\ufffd")
    if getattr(tokenizer, "clean_up_tokenization_spaces", False):
        text = text.rstrip()
    return text


@dataclass(eq=False)
class _SettledReplies:
    """A stopping criterion for ``generate``: a row is done once its reply so far is ``settled``.

    ``ends[row]`` is how many new tokens the row had then; the reply is cut there (the
    tokens ``generate`` adds to finished rows are padding).
    """

    tokenizer: object
    start: int
    settled: Callable[[str], bool]
    ends: dict[int, int] = field(default_factory=dict)

    def __call__(self, input_ids, scores, **kwargs):
        import torch

        open_rows = [row for row in range(input_ids.shape[0]) if row not in self.ends]
        if open_rows:
            texts = self.tokenizer.batch_decode(
                input_ids[open_rows, self.start :].tolist(), skip_special_tokens=True
            )
            for row, text in zip(open_rows, texts, strict=True):
                if self.settled(_stable_text(text, self.tokenizer)):
                    self.ends[row] = input_ids.shape[1] - self.start
        done = torch.zeros(input_ids.shape[0], dtype=torch.bool, device=input_ids.device)
        done[list(self.ends)] = True
        return done
