"""Batches whose size adapts to accelerator memory.

Every path that runs a model over many inputs (JBBQ generation and log-likelihood,
NLI prediction, fill-mask, attention, perplexity) runs its batches through
``AdaptiveBatchSize``: when a batch runs out of memory, the batch size halves, the
device's cache is emptied and the same batch is tried again. Finished batches are never
recomputed, and the smaller size is kept for the rest of the run (a size that failed
once would fail again on the next long batch), down to one item at a time; out of
memory at one item is raised as it is.

This is the idea of accelerate's ``find_executable_batch_size``, applied per batch: that
decorator restarts the whole function with a smaller size, which for inference means
recomputing every batch that had already succeeded. Out-of-memory errors are recognised
as accelerate recognises them (``torch.OutOfMemoryError``, and the ``RuntimeError``
messages of CUDA, MPS, XPU and CPU allocators).
"""

from __future__ import annotations

import gc
import logging
import operator
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

__all__ = ["AdaptiveBatchSize", "is_out_of_memory"]

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


class AdaptiveBatchSize:
    """A run's batch size: starts at ``start``, halves on out-of-memory, never grows.

    >>> size = AdaptiveBatchSize(8)
    >>> [list(batch) for batch in size.batches(range(10), lambda batch: None)]
    [[0, 1, 2, 3, 4, 5, 6, 7], [8, 9]]
    """

    def __init__(self, start: int, flag: str = "--batch-size"):
        try:
            value = operator.index(start)
        except TypeError:
            value = 0
        if isinstance(start, bool) or value < 1:
            raise ValueError(f"{flag} must be a whole number of at least 1, got {start!r}")
        self.value = value

    def batches(
        self, items: Sequence[T], work: Callable[[Sequence[T]], None]
    ) -> Iterator[Sequence[T]]:
        """Calls ``work(batch)`` on consecutive slices of ``items``; yields each batch once done.

        ``work`` must leave nothing half-written when it raises: a batch that runs out of
        memory is given again, in smaller slices.
        """
        start = 0
        while start < len(items):
            batch = items[start : start + self.value]
            try:
                work(batch)
            except Exception as error:  # noqa: BLE001 - only out-of-memory errors are handled
                if self.value == 1 or not is_out_of_memory(error):
                    raise
                failed = len(batch)
            else:
                start += len(batch)
                yield batch
                continue
            # Outside the except block: the error's traceback no longer pins the batch's tensors.
            self.shrink(failed)

    def shrink(self, failed: int) -> None:
        """After ``failed`` items in a batch ran out of memory: half that size, memory freed.

        For callers that schedule their own batches; call it outside the ``except`` block
        (the error's traceback holds the failed batch's tensors)."""
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
        from bias_hub.builders.shared.console import progress as bar

        done = (item for batch in self.batches(items, work) for item in batch)
        for _ in bar(done, desc=desc, total=len(items), unit=unit, enabled=progress):
            pass
