"""What ``bias-hub score`` checks about its folders and its join before it scores: that ``--out``
holds no other command's run and none of the run's inputs, that ``--dataset`` is a folder of
the kind the metric scores, and that the rows a prediction joins hold the texts it was made on."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from bias_hub.builders.shared.files import followed, read_text
from bias_hub.metrics._common.bias_hub_common import normalise_name
from bias_hub.pipelines.common.score_path import ScorePath

__all__ = [
    "refuse_a_folder_of_another_kind",
    "refuse_a_join_of_other_texts",
    "refuse_another_command_s_run",
    "refuse_inputs_inside_out",
]

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


def refuse_inputs_inside_out(out_dir: Path, inputs: dict[str, Path | str | None]) -> None:
    """An input inside ``--out`` would be deleted by the run that reads it (the folder is
    replaced whole): refused, naming the flag."""
    target = followed(out_dir).resolve()
    for flag, value in inputs.items():
        if value and Path(value).resolve().is_relative_to(target):
            raise ValueError(
                f"{flag} {value} lies inside --out {out_dir}, which the run replaces whole (the "
                "file would be deleted): move it out, or give another --out"
            )


# The texts a question or pair is made of, by the names the project's datasets give them: a
# prediction row that carries one was made on that text.
_TEXTS = (
    "context",
    "question",
    "ans0",
    "ans1",
    "ans2",
    "premise",
    "hypothesis",
    "sentence",
    "male_sentence",
    "female_sentence",
)


def refuse_a_join_of_other_texts(
    pairs: Sequence[tuple[dict, dict]], source: str, where: str
) -> None:
    """Ids say which row a prediction answers; the texts a prediction row carries (an lm-eval
    doc, a release's predictions file) say which question it was made on. A row whose texts
    differ from its dataset row's (after NFKC and spaces) joined another dataset or config that
    shares its ids: refused, naming the row, the field and both texts."""
    differing = []
    for number, (row, data) in enumerate(pairs, start=1):
        for name in _TEXTS:
            ours, theirs = row.get(name), data.get(name)
            if (
                isinstance(ours, str)
                and isinstance(theirs, str)
                and normalise_name(ours).casefold() != normalise_name(theirs).casefold()
            ):
                differing.append((number, name, ours, theirs))
                break
    if differing:
        number, name, ours, theirs = differing[0]
        raise ValueError(
            f"{source}: {len(differing)} of {len(pairs)} rows join rows of {where} with another "
            f"text (row {number}, {name!r}: {ours[:60]!r} here, {theirs[:60]!r} there): are they "
            "predictions for this dataset and config?"
        )
