"""Batches whose size adapts to accelerator memory.

Every path that runs a model over many inputs runs its batches through ``AdaptiveBatchSize``
or ``TokenBudget``: when a batch runs out of memory, the size halves, the device's cache is
emptied and the same batch is tried again, down to one item (then the error is raised).
Finished batches are never recomputed, and the smaller size is kept (it would fail again on
the next long batch). This is accelerate's ``find_executable_batch_size`` applied per batch
(that decorator restarts the whole function, recomputing every finished batch), with
accelerate's test for out-of-memory errors.

``TokenBudget`` sizes batches by the tokens they hold: items come longest first, and a batch
takes as many as fit ``rows x longest <= budget``. On CUDA the budget doubles after a batch
that used less than half the device's memory, never again reaching a budget that ran out.
"""

from __future__ import annotations

import gc
import logging
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

__all__ = ["DEFAULT_BATCH_TOKENS", "AdaptiveBatchSize", "TokenBudget", "is_out_of_memory"]

# Tokens one batch holds (rows x its longest sequence). On a CPU, matrix products of a few
# thousand rows already run at the BLAS's speed; on a GPU the budget grows while memory allows.
DEFAULT_BATCH_TOKENS = 8192

log = logging.getLogger(__name__)

T = TypeVar("T")


def is_out_of_memory(error: BaseException) -> bool:
    """Whether ``error`` says a device (or the CPU allocator) ran out of memory."""
    import torch
    from accelerate.utils.memory import should_reduce_batch_size

    return isinstance(error, torch.OutOfMemoryError) or should_reduce_batch_size(error)


def _free_device_memory() -> None:
    """Release what the failed batch held (its tensors are garbage once the error is gone)."""
    from accelerate.utils.memory import clear_device_cache

    gc.collect()
    clear_device_cache()


def _whole_number(value, flag: str) -> int:
    try:
        whole = operator.index(value)
    except TypeError:
        whole = 0
    if isinstance(value, bool) or whole < 1:
        raise ValueError(f"{flag} must be a whole number of at least 1, got {value!r}")
    return whole


class AdaptiveBatchSize:
    """A run's batch size: starts at ``start``, halves on out-of-memory, never grows.

    >>> size = AdaptiveBatchSize(8)
    >>> [list(batch) for batch in size.batches(range(10), lambda batch: None)]
    [[0, 1, 2, 3, 4, 5, 6, 7], [8, 9]]
    """

    def __init__(self, start: int, flag: str = "--batch-size"):
        self.value = _whole_number(start, flag)

    def batches(
        self, items: Sequence[T], work: Callable[[Sequence[T]], None]
    ) -> Iterator[Sequence[T]]:
        """Calls ``work(batch)`` on consecutive slices of ``items``; yields each batch once done.
        ``work`` must leave nothing half-written when it raises: the batch is given again."""
        start = 0
        while start < len(items):
            batch = items[start : start + self.value]
            try:
                work(batch)
            except Exception as error:  # noqa: BLE001 - only out-of-memory errors are handled
                if self.value == 1 or not is_out_of_memory(error):
                    raise
            else:
                start += len(batch)
                yield batch
                continue
            # Outside the except block: the error's traceback no longer pins the batch's tensors.
            self.shrink(len(batch))

    def shrink(self, failed: int) -> None:
        """After ``failed`` items in a batch ran out of memory: half that size, memory freed.
        Call it outside the ``except`` block (its traceback holds the batch's tensors)."""
        self.value = max(1, min(self.value, failed) // 2)
        _free_device_memory()
        log.warning("out of memory with %d items in a batch: batch size now %d", failed, self.value)

    def run(
        self,
        items: Sequence[T],
        work: Callable[[Sequence[T]], None],
        *,
        desc: str = "",
        unit: str = "it",
        progress: bool = True,
    ) -> None:
        """``batches`` to the end, with a progress bar counting items."""
        _count_through(self.batches(items, work), len(items), desc, unit, progress)


class TokenBudget:
    """Batch sizes from a token budget: ``rows x longest row <= tokens`` (at least one row, at
    most ``max_rows`` when given).

    >>> budget = TokenBudget(100)
    >>> [list(batch) for batch in budget.batches(range(5), [60, 40, 30, 20, 10], lambda b: None)]
    [[0], [1, 2], [3, 4]]
    """

    def __init__(self, tokens: int, max_rows: int | None = None, flag: str = "--batch-tokens"):
        self.tokens = _whole_number(tokens, flag)
        self.max_rows = None if max_rows is None else _whole_number(max_rows, "--batch-size")
        self._ceiling: int | None = None  # the smallest budget that ran out of memory

    def rows_for(self, longest: int) -> int:
        """How many rows of ``longest`` tokens (the batch's longest) one batch takes."""
        rows = max(1, self.tokens // max(1, longest))
        return rows if self.max_rows is None else min(rows, self.max_rows)

    def batches(
        self, items: Sequence[T], lengths: Sequence[int], work: Callable[[Sequence[T]], None]
    ) -> Iterator[Sequence[T]]:
        """Calls ``work(batch)`` on consecutive slices of ``items`` (longest first, so a slice's
        first item is its longest; ``lengths[k]`` is the length of ``items[k]``); yields each
        batch once done. A batch that runs out of memory is given again under a halved budget."""
        start = 0
        while start < len(items):
            batch = items[start : start + self.rows_for(lengths[start])]
            try:
                self._reset_peak()
                work(batch)
            except Exception as error:  # noqa: BLE001 - only out-of-memory errors are handled
                if len(batch) == 1 or not is_out_of_memory(error):
                    raise
            else:
                start += len(batch)
                self._grow_if_room()
                yield batch
                continue
            self.shrink(len(batch), lengths[start])  # outside the except block

    def shrink(self, rows: int, longest: int) -> None:
        """After a batch of ``rows`` rows, the longest ``longest`` tokens, ran out of memory:
        at most half of it from now on, memory freed. Call it outside the ``except`` block."""
        failed = rows * longest
        self._ceiling = min(self._ceiling or failed, failed)
        self.tokens = max(1, min(self.tokens, failed) // 2)
        if self.max_rows is not None:
            self.max_rows = max(1, min(self.max_rows, rows) // 2)
        _free_device_memory()
        log.warning("out of memory with %d tokens in a batch: budget now %d", failed, self.tokens)

    def _reset_peak(self) -> None:
        import torch

        if torch.cuda.is_available() and torch.cuda.is_initialized():
            torch.cuda.reset_peak_memory_stats()

    def _grow_if_room(self) -> None:
        """Double the budget after a batch that left more than half the device free (CUDA
        only: a CPU has no memory signal, and a larger batch does not run faster there)."""
        import torch

        if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
            return
        total = torch.cuda.get_device_properties(torch.cuda.current_device()).total_memory
        room = torch.cuda.max_memory_allocated() * 2 < total
        grown = self.tokens * 2
        if room and (self._ceiling is None or grown < self._ceiling):
            self.tokens = grown

    def run(
        self,
        items: Sequence[T],
        lengths: Sequence[int],
        work: Callable[[Sequence[T]], None],
        *,
        desc: str = "",
        unit: str = "it",
        progress: bool = True,
    ) -> None:
        """``batches`` to the end, with a progress bar counting items."""
        _count_through(self.batches(items, lengths, work), len(items), desc, unit, progress)


def _count_through(batches: Iterator[Sequence], total: int, desc: str, unit: str, progress: bool):
    from bias_hub.builders.shared.console import progress as bar

    done = (item for batch in batches for item in batch)
    for _ in bar(done, desc=desc, total=total, unit=unit, enabled=progress):
        pass
