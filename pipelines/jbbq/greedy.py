"""Greedy decoding of many prompts in one batch that refills as its replies finish.

Most JBBQ replies end after a token or two (``settled``), while replies without an index run
to the token limit. Rows leave the batch as they finish; once half of it has left, the next
prompts are computed and join the rows still going, which keep their key/value cache
(``kv_cache.merge``): no prompt is computed twice and every step runs a batch at least half
full. Each row has its own attention mask and positions, so its reply is the one greedy
decoding of its prompt alone gives. Out of accelerator memory the token budget halves and the
failed step's rows are computed again from their prompt and reply so far. Caches that cannot
be merged (sliding windows...) run each batch to its end.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

import torch

from bias_hub.pipelines.common.batching import TokenBudget, is_out_of_memory
from bias_hub.pipelines.jbbq import kv_cache

__all__ = ["GreedyDecoder"]


@dataclass
class _Batch:
    rows: list[int]  # the prompt each row decodes
    cache: object  # key/value cache, one row per row
    mask: torch.Tensor  # (rows, cache length): 1 at real tokens, 0 at padding
    last: torch.Tensor  # (rows,): position id of the last token in the cache
    tokens: torch.Tensor | None = None  # (rows,): each row's newest token, not yet in the cache


@dataclass(eq=False)  # compared and hashed by identity, as before
class GreedyDecoder:
    """Greedy replies to ``prompts`` (token ids) through ``HFModel`` ``model``.

    ``shared``/``prefix_cache``: the prefix every prompt shares and its one-row cache
    (``0, None`` for none). A reply ends on a token of ``eos``, at ``max_new_tokens``, or
    once ``settled(text so far)`` holds (``stable`` first takes off what later tokens
    may still change).
    """

    model: object
    prompts: Sequence[Sequence[int]]
    max_new_tokens: int
    eos: set[int]
    shared: int
    prefix_cache: object
    settled: Callable[[str], bool] | None
    stable: Callable[[str], str]

    def __post_init__(self) -> None:
        self.replies: list[list[int]] = [[] for _ in self.prompts]
        self.done = [False] * len(self.prompts)
        self._finished: list[int] = []

    def run(self, budget: TokenBudget) -> Iterator[int]:
        """Decode every prompt; yields each prompt's index as its reply ends."""
        queue = deque(sorted(range(len(self.prompts)), key=lambda i: -len(self.prompts[i])))
        batch: _Batch | None = None
        while queue or batch is not None:
            taken: list[int] = []
            # Rows the batch may hold: its longest row (an earlier, longer prompt) decides, with
            # the tokens it holds by the end of its reply.
            rows = ([queue[0]] if queue else []) + (batch.rows if batch else [])
            longest = max(len(self.prompts[i]) for i in rows) + self.max_new_tokens
            capacity = budget.rows_for(longest)
            try:
                if queue and (
                    batch is None
                    or (len(batch.rows) <= capacity // 2 and kv_cache.full_attention(batch.cache))
                ):
                    free = capacity - (0 if batch is None else len(batch.rows))
                    taken = [queue.popleft() for _ in range(min(free, len(queue)))]
                    batch = self._join(batch, self._start(taken))
                    taken = []
                else:
                    batch = self._step(batch)
            except Exception as error:  # noqa: BLE001 - only out-of-memory errors are handled
                failed = len(taken) + (0 if batch is None else len(batch.rows))
                if failed <= 1 or not is_out_of_memory(error):
                    raise
            else:
                failed = 0
            yield from self._finished
            self._finished.clear()
            if failed:  # outside the except block, so the error no longer holds the batch's tensors
                held = taken + ([] if batch is None else batch.rows)
                again = [i for i in dict.fromkeys(held) if not self.done[i]]
                batch = None
                queue.extendleft(
                    sorted(again, key=lambda i: len(self.prompts[i]) + len(self.replies[i]))
                )
                budget.shrink(failed, longest)

    def _start(self, rows: list[int]) -> _Batch | None:
        """The prompts ``rows`` (each with its reply so far) through the model: their first token."""
        so_far = [list(self.prompts[i]) + self.replies[i] for i in rows]
        room = max(self.max_new_tokens - len(self.replies[i]) for i in rows)
        kwargs = self.model._batch_inputs(so_far, self.shared, self.prefix_cache, room)
        logits, outputs = self.model._forward(1, use_cache=True, **kwargs)
        batch = _Batch(
            list(rows),
            kv_cache.returned_cache(outputs),
            kwargs["attention_mask"],
            kwargs["position_ids"][:, -1],
        )
        return self._advance(batch, logits)

    def _step(self, batch: _Batch) -> _Batch | None:
        """One token more for every row of ``batch``."""
        model = self.model
        mask = torch.cat([batch.mask, batch.mask.new_ones((len(batch.rows), 1))], dim=1)
        last = batch.last + 1
        logits, _ = model._forward(
            1,
            input_ids=batch.tokens[:, None],
            attention_mask=mask,
            position_ids=last[:, None],
            use_cache=True,
            **{model._cache_argument: batch.cache},
        )
        batch.mask, batch.last = mask, last
        return self._advance(batch, logits)

    def _advance(self, batch: _Batch, logits: torch.Tensor) -> _Batch | None:
        """Each row's next token (greedy); rows whose reply has ended leave the batch."""
        tokens = logits[:, -1, :].argmax(dim=-1)
        for i, token in zip(batch.rows, tokens.tolist(), strict=True):
            self.replies[i].append(token)
        texts = None
        if self.settled is not None:
            texts = self.model.tokenizer.batch_decode(
                [self.replies[i] for i in batch.rows], skip_special_tokens=True
            )
        keep = []
        for k, i in enumerate(batch.rows):
            reply = self.replies[i]
            if (
                reply[-1] in self.eos
                or len(reply) >= self.max_new_tokens
                or (texts is not None and self.settled(self.stable(texts[k])))
            ):
                self.done[i] = True
                self._finished.append(i)
            else:
                keep.append(k)
        if not keep:
            return None
        if len(keep) < len(batch.rows):
            index = torch.tensor(keep, device=tokens.device)
            batch.cache.batch_select_indices(index)
            batch.mask, batch.last, tokens = batch.mask[index], batch.last[index], tokens[index]
            batch.rows = [batch.rows[k] for k in keep]
        batch.tokens = tokens
        return batch

    def _join(self, batch: _Batch | None, new: _Batch | None) -> _Batch | None:
        """The rows of both batches in one (``new`` may have finished already)."""
        if batch is None or new is None:
            return new if batch is None else batch
        room = max(self.max_new_tokens - len(self.replies[i]) for i in batch.rows + new.rows)
        cache, mask = kv_cache.merge(
            (batch.cache, batch.mask), (new.cache, new.mask), self.shared, room
        )
        return _Batch(
            batch.rows + new.rows,
            cache,
            mask,
            torch.cat([batch.last, new.last]),
            torch.cat([batch.tokens, new.tokens]),
        )
