"""Key/value caches for batches that share a prefix, grow in place and merge.

``transformers``' ``DynamicLayer`` grows by concatenation (every forward copies every layer's
cache to add a token) and a batch reusing a prefix's cache starts from a deep copy per row.
Here each layer's keys and values are views of a buffer with room for the tokens a batch will
add (``RoomyLayer``): the values attended to are those concatenation gives, without the copies.
``batch_cache`` copies the shared prefix's one-row cache into every row of a batch once;
``merge`` joins two batches part way through decoding, each row's tokens right-aligned after the
prefix with masked zeros in front (as left padding), so they decode on together. Both apply to
a plain ``DynamicCache`` of full-attention layers (``full_attention``); any other cache is
deep-copied and repeated as ``transformers`` would, and never merged.
"""

from __future__ import annotations

import copy

import torch
from transformers.cache_utils import DynamicCache, DynamicLayer

__all__ = ["RoomyLayer", "batch_cache", "merge", "full_attention", "returned_cache"]


class RoomyLayer(DynamicLayer):
    """A ``DynamicLayer`` whose ``keys`` and ``values`` are the filled part of larger buffers."""

    def __init__(self, keys: torch.Tensor, values: torch.Tensor, filled: int):
        super().__init__()
        self.device = keys.device
        self.is_initialized = True
        self._keys, self._values = keys, values
        self._view(filled)

    @classmethod
    def repeated(cls, keys: torch.Tensor, values: torch.Tensor, rows: int, room: int) -> RoomyLayer:
        """One-row ``keys``/``values`` copied into ``rows`` rows, with ``room`` tokens free."""
        filled = keys.shape[-2]
        return cls(_buffer(keys, rows, filled + room), _buffer(values, rows, filled + room), filled)

    def _view(self, filled: int) -> None:
        self.keys = self._keys[:, :, :filled]
        self.values = self._values[:, :, :filled]

    def update(self, key_states, value_states, *args, **kwargs):
        filled, new = self.keys.shape[-2], key_states.shape[-2]
        if filled + new > self._keys.shape[-2]:  # out of room: grow, as concatenation would
            self._keys = _buffer(self.keys, self.keys.shape[0], filled + new)
            self._values = _buffer(self.values, self.values.shape[0], filled + new)
        self._keys[:, :, filled : filled + new] = key_states
        self._values[:, :, filled : filled + new] = value_states
        self._view(filled + new)
        return self.keys, self.values

    def _rows_changed(self, change) -> None:
        """``change`` applied to the rows of both buffers; the filled length stays."""
        filled = self.keys.shape[-2]
        self._keys, self._values = change(self._keys), change(self._values)
        self._view(filled)

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        self._rows_changed(lambda states: states[indices])

    def batch_repeat_interleave(self, repeats: int) -> None:
        self._rows_changed(lambda states: states.repeat_interleave(repeats, dim=0))

    def reorder_cache(self, beam_idx: torch.Tensor) -> None:
        index = beam_idx.to(self._keys.device)
        self._rows_changed(lambda states: states.index_select(0, index))


def _buffer(states: torch.Tensor, rows: int, capacity: int) -> torch.Tensor:
    """``states`` in the first positions of a buffer of ``rows`` rows (one-row states broadcast
    over them) and ``capacity`` positions; the rest unset."""
    out = states.new_empty((rows, states.shape[1], capacity, states.shape[-1]))
    out[:, :, : states.shape[-2]] = states
    return out


def full_attention(cache) -> bool:
    """Whether ``cache`` is a plain ``DynamicCache`` of full-attention layers, all filled."""
    return (
        type(cache) is DynamicCache
        and not getattr(cache, "offloading", False)
        and bool(cache.layers)
        and all(
            type(layer) in (DynamicLayer, RoomyLayer) and layer.is_initialized
            for layer in cache.layers
        )
    )


def _cache_of(layers: list[RoomyLayer]) -> DynamicCache:
    cache = DynamicCache()
    cache.layers = layers
    return cache


def batch_cache(prefix_cache, rows: int, room: int):
    """A cache for ``rows`` rows that begins with ``prefix_cache`` (one row) in each and
    has room for ``room`` more tokens without copying (more still works, by growing)."""
    if not full_attention(prefix_cache):
        cache = copy.deepcopy(prefix_cache)
        cache.batch_repeat_interleave(rows)
        return cache
    return _cache_of(
        [RoomyLayer.repeated(layer.keys, layer.values, rows, room) for layer in prefix_cache.layers]
    )


def merge(first: tuple, second: tuple, shared: int, room: int) -> tuple[DynamicCache, torch.Tensor]:
    """``(cache, attention mask)`` of two batches' rows together, the first's rows first.

    ``first`` and ``second`` are ``(cache, mask)`` with ``mask`` as wide as the cache;
    both caches begin with the same ``shared`` prefix positions. The result has room for
    ``room`` more tokens.
    """
    (cache_a, mask_a), (cache_b, mask_b) = first, second
    width = max(mask_a.shape[1], mask_b.shape[1])
    rows_a = mask_a.shape[0]

    def joined(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        # The room after ``width`` stays unset: it is written before it is ever attended to.
        out = a.new_empty((rows_a + b.shape[0], a.shape[1], width + room, a.shape[-1]))
        for rows, states in ((slice(None, rows_a), a), (slice(rows_a, None), b)):
            start = width - (states.shape[-2] - shared)
            out[rows, :, :shared] = states[:, :, :shared]
            out[rows, :, shared:start] = 0  # masked, but never NaN from unset memory
            out[rows, :, start:width] = states[:, :, shared:]
        return out

    layers = [
        RoomyLayer(joined(a.keys, b.keys), joined(a.values, b.values), width)
        for a, b in zip(cache_a.layers, cache_b.layers, strict=True)
    ]
    mask = mask_a.new_zeros((rows_a + mask_b.shape[0], width))
    mask[:rows_a, :shared] = mask_a[:, :shared]
    mask[rows_a:, :shared] = mask_b[:, :shared]
    mask[:rows_a, width - (mask_a.shape[1] - shared) :] = mask_a[:, shared:]
    mask[rows_a:, width - (mask_b.shape[1] - shared) :] = mask_b[:, shared:]
    return _cache_of(layers), mask


def returned_cache(outputs):
    """The key/value cache a forward returned (``cache``, ``past_key_values`` before transformers 5.2x)."""
    cache = getattr(outputs, "cache", None)
    return cache if cache is not None else outputs.past_key_values
