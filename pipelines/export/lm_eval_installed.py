"""The questions of the lm-evaluation-harness tasks the installed package ships
(``lm_eval.INSTALLED``): read when lm-eval runs, from the datasets built under bias-hub's data
root, as ``jbbq evaluate --preset paper`` chooses them (their ``utils.py`` calls it)."""

from __future__ import annotations

from bias_hub.pipelines.common import dataset_folder
from bias_hub.pipelines.export.lm_eval import bbq_rows, data_row, jbbq_questions, resolve
from bias_hub.pipelines.export.settings import Settings

__all__ = ["installed_bbq_dataset", "installed_dataset", "installed_jbbq_dataset"]

# What `--metadata` may set for the questions (lm-eval passes its other keys too).
METADATA = ("limit", "seed", "shot_pool", "split", "preset", "jbbq", "bbq", "datasets_root")


def installed_dataset(name: str, metadata: dict):
    """The shipped tasks' questions (``test``) and, for JBBQ, the few-shot pool (``fewshot``),
    as ``jbbq evaluate --preset paper`` chooses them, from the built datasets."""
    import datasets

    settings = Settings(**{key: metadata[key] for key in METADATA if key in metadata})
    task = resolve(settings)
    if name == "bbq":
        folder = dataset_folder(settings.bbq or "bbq", settings.datasets_root).resolve()
        rows, pool = (
            [data_row(row, None) for row in bbq_rows(folder, task.split, settings.limit)],
            [],
        )
    else:
        folder = dataset_folder(settings.jbbq, settings.datasets_root).resolve()
        questions, shots, _ = jbbq_questions(folder, settings, task.split)
        rows = [data_row(row, task.reader) for row in questions]
        pool = [data_row(row, None) for row in shots]
    test = datasets.Dataset.from_list(rows)
    return datasets.DatasetDict(
        {"test": test, "fewshot": datasets.Dataset.from_list(pool) if pool else test.select([])}
    )


def installed_jbbq_dataset(**metadata):
    """``custom_dataset`` of the shipped JBBQ tasks (``--metadata`` may set limit, seed, split,
    shot_pool, preset, jbbq, datasets_root)."""
    return installed_dataset("jbbq", metadata)


def installed_bbq_dataset(**metadata):
    """``custom_dataset`` of the shipped BBQ task."""
    return installed_dataset("bbq", metadata)
