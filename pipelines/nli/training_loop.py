"""The meta-evaluation's fine-tunes: a plain PyTorch loop with Trainer's recipe.

A meta-evaluation trains dozens of throw-away classifiers; for the small models of a CPU run,
``transformers.Trainer``'s per-step bookkeeping took as long as the forward and backward passes.
This loop keeps the recipe and drops the rest: AdamW with Trainer's defaults (no weight decay on
biases and normalisation weights), linear warm-up then linear decay to zero, gradient norm
clipped at 1.0, ``ceil(epochs x batches per epoch)`` steps with a fresh shuffle per epoch, all
randomness from one generator seeded with ``seed`` (the same batches in any process on any
machine), and mixed precision through ``torch.autocast`` (float16 with loss scaling).
``nli train`` keeps Trainer (checkpoints, resuming, several GPUs).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Batches", "train"]


class Batches(Protocol):
    """Rows to train on: ``len()`` rows, and a batch of row numbers made into the model's
    keyword arguments (``labels`` included); ``generator`` for any randomness it draws."""

    def __len__(self) -> int: ...

    def collate(self, rows: list[int], generator) -> dict: ...


def _parameter_groups(model, weight_decay: float) -> list[dict]:
    """Trainer's split: no weight decay on biases and normalisation weights."""
    import torch

    norms = tuple(kind for kind in (torch.nn.LayerNorm, getattr(torch.nn, "RMSNorm", None)) if kind)
    exempt = set()
    for module_name, module in model.named_modules():
        for name, _ in module.named_parameters(recurse=False):
            full = f"{module_name}.{name}" if module_name else name
            if isinstance(module, norms) or "bias" in name or "norm" in full.lower():
                exempt.add(full)
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    return [
        {"params": [p for n, p in named if n not in exempt], "weight_decay": weight_decay},
        {"params": [p for n, p in named if n in exempt], "weight_decay": 0.0},
    ]


def _schedule(total: int, warmup: int) -> Callable[[int], float]:
    def factor(step: int) -> float:
        if step < warmup:
            return step / max(1, warmup)
        return max(0.0, (total - step) / max(1, total - warmup))

    return factor


def train(
    model,
    batches: Batches,
    *,
    epochs: float,
    learning_rate: float,
    batch_size: int,
    seed: int,
    device: str = "cpu",
    dtype=None,
    weight_decay: float = 0.0,
    warmup_ratio: float = 0.0,
    logging_steps: int = 50,
) -> tuple[float, list[dict]]:
    """Train ``model`` in place; returns the mean training loss and log lines (Trainer's
    keys: ``loss``, ``grad_norm``, ``learning_rate``, ``epoch``, ``step`` every
    ``logging_steps`` steps, then ``train_loss``, ``train_runtime``).

    ``dtype``: None or ``torch.float32`` for full precision, else the autocast dtype.
    """
    import torch

    started = time.perf_counter()
    generator = torch.Generator().manual_seed(seed)
    per_epoch = math.ceil(len(batches) / batch_size)
    total = max(1, math.ceil(epochs * per_epoch))
    model.to(device).train()
    optimiser = torch.optim.AdamW(
        _parameter_groups(model, weight_decay), lr=learning_rate, betas=(0.9, 0.999), eps=1e-8
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimiser, _schedule(total, math.ceil(warmup_ratio * total))
    )
    mixed = dtype is not None and dtype != torch.float32
    scaler = torch.amp.GradScaler(device.split(":")[0], enabled=dtype == torch.float16)
    parameters = [p for p in model.parameters() if p.requires_grad]
    lines: list[dict] = []
    losses: list[float] = []
    window: list[float] = []
    order: list[int] = []
    for step in range(1, total + 1):
        if not order:
            order = torch.randperm(len(batches), generator=generator).tolist()
        rows, order = order[:batch_size], order[batch_size:]
        batch = {k: v.to(device) for k, v in batches.collate(rows, generator).items()}
        with torch.autocast(device.split(":")[0], dtype=dtype, enabled=mixed):
            loss = model(**batch).loss
        scaler.scale(loss).backward()
        scaler.unscale_(optimiser)
        norm = torch.nn.utils.clip_grad_norm_(parameters, 1.0)
        scaler.step(optimiser)
        scaler.update()
        scheduler.step()
        optimiser.zero_grad(set_to_none=True)
        value = float(loss.detach())
        losses.append(value)
        window.append(value)
        if step % logging_steps == 0:
            lines.append(
                {
                    "loss": sum(window) / len(window),
                    "grad_norm": float(norm),
                    "learning_rate": scheduler.get_last_lr()[0],
                    "epoch": step / per_epoch,
                    "step": step,
                }
            )
            window = []
    model.eval()
    mean = sum(losses) / len(losses)
    lines.append(
        {
            "train_loss": mean,
            "train_runtime": round(time.perf_counter() - started, 3),
            "epoch": total / per_epoch,
            "step": total,
        }
    )
    return mean, lines
