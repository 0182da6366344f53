"""Fine-tuning a sequence classifier on NLI with ``transformers.Trainer`` (``nli train`` and
the meta-evaluation's per-rate models).

Checkpoints go to ``<out>.checkpoints/`` beside the model folder, one per epoch, and training
resumes from the last one. Several GPUs: ``accelerate launch -m bias_hub nli train ...``
(Trainer picks the processes up by itself).
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

import numpy as np

from bias_hub.builders.shared.console import progress_enabled, progress_meter
from bias_hub.builders.shared.errors import UserError
from bias_hub.pipelines.common import RunSettings, load_model, resolve_device, resolve_dtype
from bias_hub.pipelines.nli.labels import HEAD, map_model_labels

__all__ = [
    "TRAIN_LOG",
    "check_schedule",
    "checkpoint_folder",
    "fine_tune",
    "load_for_training",
    "tokenize_pairs",
    "training_dtype",
]

log = logging.getLogger(__name__)
TRAIN_LOG = "train_log.jsonl"


def checkpoint_folder(out_dir: str | Path) -> Path:
    """Where ``nli train --out OUT`` keeps its checkpoints: ``OUT.checkpoints`` beside it."""
    out_dir = Path(os.path.abspath(out_dir))
    return out_dir.with_name(f"{out_dir.name}.checkpoints")


def load_for_training(name: str, settings: RunSettings):
    """A classifier to fine-tune on NLI; returns ``(model, canonical_to_model_id)``.

    A model that already predicts the three NLI labels keeps its head (its label ids are used);
    anything else (a base model, a classifier for another task) gets a fresh three-way head
    named entailment/neutral/contradiction.
    """
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(
            name,
            token=settings.token,
            revision=settings.revision,
            trust_remote_code=settings.trust_remote_code,
        )
        to_canonical = map_model_labels(config.id2label)
    except (OSError, ValueError):
        # Not an NLI classifier, or not loadable at all: load_model says which.
        to_canonical = None
    nli = to_canonical is not None and len(to_canonical) == 3
    new_head = {} if nli else {**HEAD, "ignore_mismatched_sizes": True}
    # Training keeps float32 weights; --dtype is the mixed precision Trainer computes in.
    options = settings.model_options(dtype=None, allow_new_head=True, extra=new_head)
    model, _ = load_model(name, "sequence-classification", options, with_tokenizer=False)
    return model, np.argsort(to_canonical) if nli else np.arange(3)


def tokenize_pairs(table, tokenizer, max_length: int, label_ids: np.ndarray | None = None):
    """Tokenise premise/hypothesis (no padding: the collator pads each batch to its longest)."""

    def encode(batch: dict) -> dict:
        encoded = tokenizer(
            batch["premise"], batch["hypothesis"], truncation=True, max_length=max_length
        )
        if "label" in batch:
            labels = np.asarray(batch["label"], dtype=np.int64)
            encoded["labels"] = (label_ids[labels] if label_ids is not None else labels).tolist()
        return encoded

    return table.map(encode, batched=True, remove_columns=table.column_names, desc="tokenising")


def training_dtype(dtype: str | None):
    """``--dtype`` resolved for training, which needs a precision (``auto`` is refused)."""
    resolved = resolve_dtype(dtype)
    if resolved == "auto":
        raise ValueError(
            "--dtype auto: training needs a precision; expected float32, bfloat16 or float16"
        )
    return resolved


def _precision(dtype: str | None) -> dict:
    """TrainingArguments' mixed-precision switches for ``--dtype``."""
    import torch

    resolved = training_dtype(dtype)
    return {"bf16": resolved is torch.bfloat16, "fp16": resolved is torch.float16}


def _placement(device: str | None, device_map: str | None) -> dict:
    """TrainingArguments' device switch for ``--device`` (Trainer places the model itself)."""
    if device_map:
        return {}
    device = resolve_device(device)
    if device.startswith("cuda:") and device != "cuda:0":
        raise ValueError(
            f"--device {device}: Trainer trains on the first visible GPU (or all of them under accelerate "
            f"launch); choose one with CUDA_VISIBLE_DEVICES={device.split(':')[1]} and --device cuda"
        )
    return {"use_cpu": device == "cpu"}


def check_schedule(settings) -> None:
    """Fail before loading anything on a ``--dtype`` or ``--device`` Trainer cannot train with."""
    _precision(settings.dtype)
    _placement(settings.device, settings.device_map)


def fine_tune(model, tokenizer, train_dataset, output_dir: str | Path, settings, eval_dataset=None):
    """Train ``model`` in place on a tokenised dataset; returns ``(trainer, TrainOutput)``.

    ``settings``: a ``TrainSettings`` (epochs, learning rate, batch size, seed, ...). Batches:
    padded by the tokenizer, then token dropout. With ``settings.resume``, training continues from the last ``checkpoint-*`` in
    ``output_dir`` when there is one. Trainer's loss lines go to the log (``-v`` and log
    files), never to the console; ``trainer.state.log_history`` keeps them.
    """
    import torch
    from transformers import Trainer, TrainingArguments
    from transformers.trainer_utils import get_last_checkpoint

    output_dir = Path(output_dir)
    checkpoint = None
    if settings.resume and output_dir.is_dir():
        checkpoint = get_last_checkpoint(str(output_dir))
        if checkpoint:
            log.info("resuming from %s", checkpoint)
    arguments = TrainingArguments(
        output_dir=str(output_dir),
        num_train_epochs=settings.epochs,
        learning_rate=settings.learning_rate,
        per_device_train_batch_size=settings.batch_size,
        per_device_eval_batch_size=max(settings.batch_size, 64),
        # transformers 5 dropped warmup_ratio: a float below 1 in warmup_steps is a ratio.
        warmup_steps=float(settings.warmup_ratio) if 0 < settings.warmup_ratio < 1 else 0,
        weight_decay=settings.weight_decay,
        seed=settings.seed,
        data_seed=settings.seed,
        save_strategy="epoch" if settings.save else "no",
        eval_strategy="epoch" if eval_dataset is not None else "no",
        logging_steps=settings.logging_steps,
        report_to=[],
        disable_tqdm=not (settings.progress and progress_enabled()),
        dataloader_num_workers=0,
        # Pinned memory only helps a copy to an accelerator; on CPU torch warns about it.
        dataloader_pin_memory=torch.cuda.is_available(),
        **_precision(settings.dtype),
        **_placement(settings.device, settings.device_map),
    )
    trainer = Trainer(
        model=model,
        args=arguments,
        train_dataset=train_dataset,
        eval_dataset=eval_dataset,
        data_collator=_collator(tokenizer, settings.token_dropout),
        processing_class=tokenizer,
    )
    _quiet(trainer)
    if settings.progress and not progress_enabled():
        trainer.add_callback(_step_lines())  # no bar without a terminal: lines every ~10 %
    try:
        result = trainer.train(resume_from_checkpoint=checkpoint)
    except KeyboardInterrupt:
        last = get_last_checkpoint(str(output_dir)) if output_dir.is_dir() else None
        where = f"the last checkpoint is {last}" if last else "no checkpoint was saved yet"
        raise UserError(
            f"training interrupted; {where}. Run the same command again to resume."
        ) from None
    return trainer, result


def _quiet(trainer) -> None:
    """Keep Trainer's per-step dicts off the console: bars (when on) stay, loss lines go to the log."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback, TrainerCallback

    class BarsOnly(ProgressCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            pass

    class LogLines(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):
            if state.is_world_process_zero and logs:
                log.debug(
                    "step %d: %s",
                    state.global_step,
                    {k: v for k, v in logs.items() if k != "total_flos"},
                )

    trainer.remove_callback(PrinterCallback)
    if trainer.pop_callback(ProgressCallback) is not None:
        trainer.add_callback(BarsOnly())
    trainer.add_callback(LogLines())


def _step_lines():
    """A Trainer callback reporting its steps through ``console.progress_meter`` (made here:
    transformers is imported only when a model is trained)."""
    from transformers.trainer_callback import TrainerCallback

    class StepLines(TrainerCallback):
        def on_train_begin(self, args, state, control, **kwargs):
            self.meter = progress_meter(
                "training", total=state.max_steps - state.global_step, unit="step"
            )
            self.advance = self.meter.__enter__()

        def on_step_end(self, args, state, control, **kwargs):
            self.advance(1)

        def on_train_end(self, args, state, control, **kwargs):
            self.meter.__exit__(None, None, None)

    return StepLines()


def _collator(tokenizer, token_dropout: float):
    from transformers import DataCollatorWithPadding

    pad = DataCollatorWithPadding(tokenizer)
    if not token_dropout:
        return pad
    import torch

    special = torch.tensor(sorted(set(tokenizer.all_special_ids)))

    def collate(features: list[dict]) -> dict:
        batch = pad(features)
        ids = batch["input_ids"]
        drop = (torch.rand(ids.shape) < token_dropout) & ~torch.isin(ids, special)
        batch["input_ids"] = ids.masked_fill(drop, tokenizer.unk_token_id)
        return batch

    return collate
