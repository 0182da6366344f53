"""What ``bias-hub score`` checks about its folders before it reads a prediction: that ``--out``
holds no other command's run, and that ``--dataset`` is a folder of the kind the metric scores."""

from __future__ import annotations

import json
from pathlib import Path

from bias_hub.builders.shared.files import followed, read_text
from bias_hub.pipelines.score.paths import ScorePath

__all__ = ["refuse_another_command_s_run", "refuse_a_folder_of_another_kind"]

MANIFEST = "manifest.json"


def _json(path: Path) -> dict:
    try:
        data = json.loads(read_text(path))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def refuse_another_command_s_run(out_dir: Path) -> None:
    """A run folder written by another command (``nli evaluate``, ``jbbq evaluate``...) is
    never replaced by a score run: a ValueError naming the command that wrote it."""
    target = followed(out_dir)
    if not (target / MANIFEST).is_file():
        return  # new, empty, or no run folder at all (RunFolder refuses the last)
    part = _json(target / "results.json").get("part")
    command = str(_json(target / MANIFEST).get("command") or "")
    if part == "score" or command.startswith("bias-hub score"):
        return
    wrote = f"`{command}`" if command else "a command whose manifest does not say which"
    raise ValueError(
        f"--out {out_dir}: holds the run of another command (part {part!r}: {wrote}); a score run "
        "replaces its folder whole, so give a folder of its own"
    )


def refuse_a_folder_of_another_kind(folder: Path, config: str, path: ScorePath) -> None:
    """A dataset folder without the config the metric reads: named as the wrong kind of folder,
    before ``datasets`` says only "BuilderConfig not found"."""
    from bias_hub.builders.shared.card import read_card_yaml

    configs = [
        entry.get("config_name")
        for entry in read_card_yaml(folder).get("configs") or []
        if isinstance(entry, dict)
    ]
    if not configs or config in configs:
        return
    raise ValueError(
        f"dataset {folder}: no config {config!r} (its configs: {', '.join(map(str, configs))}); "
        f"{path.metric} scores a folder like `{path.dataset}` (config {path.config!r} by default): "
        "is --dataset the right folder? (--config names one of its configs)"
    )
