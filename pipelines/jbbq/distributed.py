"""Data-parallel scoring under ``accelerate launch`` (one model copy per process).

``accelerate launch -m bias_hub jbbq evaluate ...`` (or ``--num_processes N``)
starts N processes; each scores a contiguous share of the questions on its own
device, the shares are gathered back in order, and only the main process scores
and writes the outputs. A plain ``bias-hub`` run is one process and skips all this.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

__all__ = ["process_state", "is_main_process", "score_sharded"]


def process_state():
    """accelerate's ``PartialState`` when launched with several processes, else ``None``."""
    if int(os.environ.get("WORLD_SIZE", "1")) <= 1:
        return None
    from accelerate import PartialState  # optional, heavy: only under `accelerate launch`

    return PartialState()


def is_main_process() -> bool:
    state = process_state()
    return state is None or state.is_main_process


def score_sharded(score: Callable[[list], list], rows: Sequence) -> list:
    """``score(rows)``, split across processes and gathered back in the original order."""
    state = process_state()
    if state is None:
        return score(list(rows))
    from accelerate.utils import gather_object  # as above

    with state.split_between_processes(list(rows)) as local:
        scored = score(list(local))
    gathered = gather_object(scored)
    if len(gathered) != len(rows):
        raise RuntimeError(
            f"gathered {len(gathered)} scored questions from the processes, expected {len(rows)}"
        )
    return gathered
