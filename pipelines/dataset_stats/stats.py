"""Rows per dataset, config and split, read back through `load_dataset` as a user would."""

from __future__ import annotations

from pathlib import Path

from bias_hub.builders.shared.card import read_card
from bias_hub.pipelines.common.render import macros


def dataset_statistics(root: Path) -> dict[str, dict[str, dict[str, int]]]:
    """``{dataset: {config: {split: rows}}}`` for every built folder under ``root``."""
    import datasets  # here, not at the top: the demo imports this module before it runs any part

    stats: dict[str, dict[str, dict[str, int]]] = {}
    if not Path(root).is_dir():  # nothing built yet (a fresh install's data root)
        return stats
    for folder in sorted(p for p in Path(root).iterdir() if (p / "README.md").is_file()):
        configs = [c["config_name"] for c in read_card(folder).data.get("configs", [])]
        built = [c for c in configs if (folder / c).is_dir()]
        if not built:
            continue
        stats[folder.name] = {}
        for config in built:
            loaded = datasets.load_dataset(str(folder), config)
            stats[folder.name][config] = {split: ds.num_rows for split, ds in loaded.items()}
    return stats


def statistics_markdown(stats: dict[str, dict[str, dict[str, int]]]) -> str:
    """One row per dataset and config, one column of row counts per split (``–``: no such split)."""
    return macros("dataset_stats/templates/tables.md.j2").statistics(stats)
