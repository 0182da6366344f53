"""The batch caches of JBBQ generation: filled in place, and merged with each row's
tokens right-aligned after the shared prefix, worked out here position by position."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only; the functions import what they run
    import torch
    from transformers.cache_utils import DynamicCache


def _states(rows: int, length: int, start: float) -> torch.Tensor:
    """(rows, 1 head, length, 2): row r, position t holds (start + 10 r + t, -(start + 10 r + t))."""
    import torch

    values = torch.tensor(
        [[start + 10 * r + t for t in range(length)] for r in range(rows)], dtype=torch.float32
    )
    return torch.stack([values, -values], dim=-1)[:, None]


def _cache(keys: torch.Tensor) -> DynamicCache:
    from transformers.cache_utils import DynamicCache

    cache = DynamicCache()
    cache.update(keys, keys * 2, 0)
    return cache


def test_a_batch_cache_repeats_the_prefix_and_grows_in_place() -> None:
    import torch

    from bias_hub.pipelines.jbbq.kv_cache import RoomyLayer, batch_cache

    prefix = _cache(_states(1, 3, 0.0))  # positions 0, 1, 2
    cache = batch_cache(prefix, rows=2, room=2)
    layer = cache.layers[0]
    assert isinstance(layer, RoomyLayer) and layer.keys.shape == (2, 1, 3, 2)
    assert layer.keys[:, 0, :, 0].tolist() == [[0, 1, 2], [0, 1, 2]]
    buffer = layer._keys
    keys, values = layer.update(_states(2, 1, 100.0), _states(2, 1, 100.0) * 2)
    assert keys[:, 0, :, 0].tolist() == [[0, 1, 2, 100], [0, 1, 2, 110]]
    assert values[:, 0, :, 0].tolist() == [[0, 2, 4, 200], [0, 2, 4, 220]]
    assert layer._keys is buffer  # written into the room, no copy
    layer.update(_states(2, 3, 200.0), _states(2, 3, 200.0))  # 4 + 3 > 5: grows
    assert layer.keys[:, 0, :, 0].tolist() == [
        [0, 1, 2, 100, 200, 201, 202],
        [0, 1, 2, 110, 210, 211, 212],
    ]
    assert cache.get_seq_length() == 7
    layer.batch_select_indices(torch.tensor([1]))
    assert layer.keys[:, 0, :, 0].tolist() == [[0, 1, 2, 110, 210, 211, 212]]
    assert prefix.layers[0].keys.shape == (1, 1, 3, 2)  # the prefix's own cache is untouched


def test_merge_right_aligns_each_row_after_the_shared_prefix() -> None:
    import torch

    from bias_hub.pipelines.jbbq.kv_cache import merge

    shared = 2
    # Batch a: 2 rows, 5 positions (prefix 0-1, then 3 of its own); batch b: 1 row, 3 positions.
    a = _cache(_states(2, 5, 0.0))
    b = _cache(_states(1, 3, 50.0))
    mask_a = torch.tensor([[1, 1, 0, 1, 1], [1, 1, 1, 1, 1]])
    mask_b = torch.tensor([[1, 1, 1]])
    cache, mask = merge((a, mask_a), (b, mask_b), shared, room=1)
    keys = cache.layers[0].keys[:, 0, :, 0]
    assert keys.tolist() == [
        [0, 1, 2, 3, 4],
        [10, 11, 12, 13, 14],
        [50, 51, 0, 0, 52],  # prefix, two masked zeros, its one own position
    ]
    assert cache.layers[0].values[2, 0, :, 0].tolist() == [100, 102, 0, 0, 104]
    assert mask.tolist() == [[1, 1, 0, 1, 1], [1, 1, 1, 1, 1], [1, 1, 0, 0, 1]]
    assert cache.layers[0]._keys.shape[-2] == 6  # room for one more token
    # The other way round: the wider batch second.
    cache, mask = merge((b, mask_b), (a, mask_a), shared, room=0)
    assert cache.layers[0].keys[:, 0, :, 0].tolist()[0] == [50, 51, 0, 0, 52]
    assert mask.tolist()[0] == [1, 1, 0, 0, 1]


def test_only_plain_full_attention_caches_are_reused_and_merged() -> None:
    from transformers.cache_utils import DynamicCache, DynamicLayer, DynamicSlidingWindowLayer

    from bias_hub.pipelines.jbbq.kv_cache import batch_cache, full_attention

    assert full_attention(_cache(_states(1, 3, 0.0)))
    sliding = DynamicCache()
    sliding.layers = [DynamicSlidingWindowLayer(sliding_window=2)]
    sliding.update(_states(1, 3, 0.0), _states(1, 3, 0.0), 0)
    assert not full_attention(sliding)
    copied = batch_cache(sliding, rows=2, room=4)  # deep-copied and repeated, as before
    assert (
        type(copied.layers[0]) is DynamicSlidingWindowLayer and copied.layers[0].keys.shape[0] == 2
    )
    assert sliding.layers[0].keys.shape[0] == 1
    empty = DynamicCache()
    empty.layers = [DynamicLayer()]
    assert not full_attention(empty)  # nothing filled
