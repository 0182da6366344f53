"""NLI label names: the canonical order and mapping a model's ``id2label`` onto it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

__all__ = ["HEAD", "LABELS", "label_aliases", "map_model_labels", "parse_label_map"]

# The order of MNLI/XNLI and of every dataset in this project.
LABELS = ("entailment", "neutral", "contradiction")
# The config of the three-way head a new classifier gets, named in that order.
HEAD = {
    "num_labels": 3,
    "id2label": dict(enumerate(LABELS)),
    "label2id": {name: i for i, name in enumerate(LABELS)},
}

_ALIASES = {
    alias: label
    for label, aliases in (
        ("entailment", ("entailment", "entail", "entails", "e", "含意")),
        ("neutral", ("neutral", "n", "中立")),
        ("contradiction", ("contradiction", "contradict", "contradictory", "c", "矛盾")),
    )
    for alias in aliases
}


def label_aliases(name: str) -> str | None:
    """The canonical label for a label name (case and spacing ignored), or None."""
    return _ALIASES.get(str(name).strip().lower().replace("_", "").replace("-", ""))


def parse_label_map(text: str | None) -> dict[str, str]:
    """``"LABEL_0=entailment,LABEL_1=neutral"`` -> ``{"LABEL_0": "entailment", ...}``."""
    if not text:
        return {}
    mapping = {}
    for item in text.split(","):
        if "=" not in item:
            raise ValueError(
                f"--label-map: {item!r} is not of the form MODEL_LABEL=entailment|neutral|contradiction"
            )
        key, value = (part.strip() for part in item.split("=", 1))
        if value not in LABELS:
            raise ValueError(
                f"--label-map: {value!r} (for {key!r}) is not one of {', '.join(LABELS)}"
            )
        mapping[key] = value
    return mapping


def map_model_labels(
    id2label: Mapping[int, str] | Sequence[str], override: Mapping[str, str] | None = None
) -> np.ndarray:
    """``canonical[i]`` = index in ``LABELS`` of the model's output ``i``.

    ``override`` maps model label names to canonical names first (``--label-map``). Fails
    with the labels it found when the three NLI labels cannot all be identified; a model
    with more outputs than three is allowed as long as each NLI label occurs exactly once
    (the extra outputs are then never predicted as an NLI label).
    """
    names = (
        list(id2label)
        if not isinstance(id2label, Mapping)
        else [id2label[i] for i in sorted(id2label)]
    )
    override = dict(override or {})
    unknown = set(override) - set(names)
    if unknown:
        raise ValueError(
            f"--label-map names label(s) {sorted(unknown)} that the model does not have: {names}"
        )
    mapped = [override.get(name) or label_aliases(name) for name in names]
    twice = [label for label in LABELS if mapped.count(label) > 1]
    nowhere = [label for label in LABELS if mapped.count(label) == 0]
    if twice or nowhere:
        problems = []
        if twice:
            sources = [repr(n) for n, m in zip(names, mapped, strict=True) if m in twice]
            problems.append(f"{', '.join(twice)} mapped from {' and '.join(sources)}")
        if nowhere:
            problems.append(f"{', '.join(nowhere)} mapped from none")
        fix = (
            "correct --label-map so that each NLI label is named once"
            if override
            else "pass --label-map, e.g. --label-map LABEL_0=entailment,LABEL_1=neutral,LABEL_2=contradiction"
        )
        raise ValueError(
            f"the model's labels {names} cannot be mapped onto {list(LABELS)} ({'; '.join(problems)}); {fix}"
        )
    return np.array([LABELS.index(m) if m in LABELS else -1 for m in mapped], dtype=np.int64)
