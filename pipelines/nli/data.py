"""NLI training data from anywhere: a Hub id, a dataset folder, JSNLI as distributed, or JSON
lines / CSV / Parquet files.

``prepare_nli_columns`` returns exactly ``premise``, ``hypothesis`` and ``label`` (0 =
entailment, 1 = neutral, 2 = contradiction), every column and label checked up front, so a bad
file fails before training with the file, column and values named. JSNLI (Yoshikoshi et al.
2020) is header-less ``label<TAB>premise<TAB>hypothesis`` TSV of Juman++ words; ``read_jsnli``
reads it as it is and ``segmentation`` decides what the tokenizer gets.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bias_hub.builders.shared.files import text_lines
from bias_hub.pipelines.nli.labels import LABELS, label_aliases

__all__ = [
    "TrainingPairs",
    "is_jsnli",
    "load_table",
    "load_training_table",
    "parse_columns",
    "prepare_nli_columns",
    "read_jsnli",
]

# datasets 5 keys its cache of local files and folders by name, not content: re-read them.
_REREAD = "force_redownload"
_FILE_BUILDERS = {
    ".jsonl": "json",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "csv",
    ".parquet": "parquet",
}


def load_table(
    spec: str,
    split: str = "train",
    config: str | None = None,
    token: str | None = None,
    revision: str | None = None,
):
    """Load one split from a file, a local dataset folder or a Hub dataset id."""
    import datasets

    path = Path(spec).expanduser()
    try:
        if path.is_file():
            builder = _FILE_BUILDERS.get(path.suffix.lower())
            if builder is None:
                raise ValueError(
                    f"{spec}: unknown file type {path.suffix!r}; expected one of {', '.join(_FILE_BUILDERS)}"
                )
            extra = {"delimiter": "\t"} if path.suffix.lower() == ".tsv" else {}
            if builder != "parquet":
                # Through the one reader first: a file in another encoding is named with its
                # line and byte (datasets says only that the generation failed).
                for _ in text_lines(path):
                    pass
            table = datasets.load_dataset(
                builder, data_files={split: str(path)}, split=split, download_mode=_REREAD, **extra
            )
        else:
            local = {"download_mode": _REREAD} if path.is_dir() else {}
            table = datasets.load_dataset(
                str(path) if path.is_dir() else spec,
                config,
                split=split,
                token=token,
                revision=revision,
                **local,
            )
    except ValueError as err:
        if "corresponds to no data" in str(err):
            raise ValueError(f"{spec}: split {split!r} is empty") from err
        if "split" in str(err).lower() and "unknown file type" not in str(err):
            raise ValueError(f"{spec}: has no split {split!r} ({err})") from err
        raise
    if len(table) == 0:
        raise ValueError(f"{spec}: split {split!r} is empty")
    return table


def parse_columns(text: str | Sequence[str] | None) -> tuple[str, str, str]:
    """``"sentence1,sentence2,gold_label"`` -> the premise, hypothesis and label column names."""
    if text is None:
        return ("premise", "hypothesis", "label")
    names = [n.strip() for n in text.split(",")] if isinstance(text, str) else list(text)
    if len(names) != 3 or not all(names):
        raise ValueError(
            f"--columns must name three columns PREMISE,HYPOTHESIS,LABEL, got {text!r}"
        )
    return (names[0], names[1], names[2])


def prepare_nli_columns(
    table,
    columns: Sequence[str] = ("premise", "hypothesis", "label"),
    label_names: Sequence[str] | None = None,
    where: str = "the training set",
):
    """Rename to premise/hypothesis/label and map labels to 0/1/2 (entailment/neutral/contradiction).

    ``label_names`` are the dataset's own names (or integer values) for entailment, neutral
    and contradiction, in that order. Without it, a ``ClassLabel`` column or string labels
    are mapped by name (``entailment``, ``ENTAILMENT``, ``含意`` ...), and plain integers are
    taken in the canonical order 0, 1, 2.
    """
    import datasets

    premise, hypothesis, label = parse_columns(columns)
    missing = [c for c in (premise, hypothesis, label) if c not in table.column_names]
    if missing:
        raise ValueError(
            f"{where}: missing column(s) {missing}; found {table.column_names}. "
            "Name the premise, hypothesis and label columns with --columns PREMISE,HYPOTHESIS,LABEL"
        )
    if label_names is not None and len(label_names) != 3:
        raise ValueError(
            f"--label-names must give three names (entailment, neutral, contradiction), got {list(label_names)}"
        )

    feature = table.features[label]
    raw = np.asarray(table[label], dtype=object)
    if isinstance(feature, datasets.ClassLabel):
        names = np.array(feature.names, dtype=object)
        valid = (raw.astype(np.int64) >= 0) & (raw.astype(np.int64) < len(names))
        values = np.where(valid, names[np.clip(raw.astype(np.int64), 0, len(names) - 1)], raw)
    else:
        values = raw
    if label_names is not None:
        lookup = {str(name): index for index, name in enumerate(label_names)}
    elif values.size and all(isinstance(v, (int, np.integer)) for v in values[:100]):
        lookup = {str(index): index for index in range(3)}
    else:
        lookup = {}
    strings = np.array([str(v) for v in values], dtype=object)
    table_map = {}
    for value in np.unique(strings):
        alias = label_aliases(value) if label_names is None else None
        table_map[value] = lookup.get(value, LABELS.index(alias) if alias else None)
    bad = [value for value, canonical in table_map.items() if canonical is None]
    if bad:
        first = int(np.flatnonzero(np.isin(strings, bad))[0])
        expected = list(label_names) if label_names is not None else list(LABELS)
        raise ValueError(
            f"{where}: column {label!r} holds label(s) {bad[:10]} outside the mapping "
            f"(first at row {first}); expected {expected}. "
            "Give the dataset's names for entailment, neutral, contradiction with --label-names"
        )
    mapped = np.array([table_map[s] for s in strings], dtype=np.int64)
    for column in (premise, hypothesis):
        values = table[column]
        bad_rows = [
            i for i, value in enumerate(values) if not isinstance(value, str) or not value.strip()
        ]
        if bad_rows:
            found = "missing" if values[bad_rows[0]] is None else repr(values[bad_rows[0]])
            raise ValueError(
                f"{where}: column {column!r} of row {bad_rows[0]} is {found}; expected a sentence in every row "
                f"({len(bad_rows)} row(s) without one)"
            )
    keep = table.select_columns([premise, hypothesis])
    keep = (
        keep.rename_columns({premise: "premise", hypothesis: "hypothesis"})
        if (premise, hypothesis) != ("premise", "hypothesis")
        else keep
    )
    keep = keep.add_column("label", mapped.tolist())
    return keep.cast_column("label", datasets.ClassLabel(names=list(LABELS)))


# Formats ``nli train --format`` accepts.
FORMATS = ("auto", "jsnli", "table")
_JSNLI_FIELDS = 3


@dataclass(frozen=True)
class TrainingPairs:
    """Training pairs (columns premise, hypothesis, label) and what their text looks like."""

    table: object
    # True for JSNLI: the sentences are Juman++ words joined by spaces.
    segmented: bool
    source_format: str


def is_jsnli(path: str | Path) -> bool:
    """Whether ``path`` looks like JSNLI's TSV: no header, three tab-separated fields, an NLI
    label first (a header line would name columns, not a label)."""
    path = Path(path)
    if not path.is_file() or path.suffix.lower() not in {".tsv", ".txt"}:
        return False
    try:
        fields = next(text_lines(path), "").split("\t")
    except ValueError:  # not UTF-8: not JSNLI either (the reader of the file says why)
        return False
    return len(fields) == _JSNLI_FIELDS and label_aliases(fields[0]) is not None


def read_jsnli(path: str | Path):
    """JSNLI's TSV as distributed -> a Dataset of premise, hypothesis, label (text unchanged).

    Every line must hold exactly three tab-separated fields and an NLI label; the first bad
    line is named with its number.
    """
    import datasets

    path = Path(path)
    premises, hypotheses, labels = [], [], []
    for number, line in enumerate(text_lines(path), start=1):
        if not line:
            continue
        fields = line.split("\t")
        if len(fields) != _JSNLI_FIELDS:
            raise ValueError(
                f"{path}, line {number}: JSNLI lines are label<TAB>premise<TAB>hypothesis, "
                f"found {len(fields)} tab-separated field(s)"
            )
        label = label_aliases(fields[0])
        if label is None:
            raise ValueError(
                f"{path}, line {number}: label {fields[0]!r} is not one of {', '.join(LABELS)}"
            )
        premises.append(fields[1])
        hypotheses.append(fields[2])
        labels.append(LABELS.index(label))
    if not labels:
        raise ValueError(f"{path}: no JSNLI lines (label<TAB>premise<TAB>hypothesis)")
    features = datasets.Features(
        {
            "premise": datasets.Value("string"),
            "hypothesis": datasets.Value("string"),
            "label": datasets.ClassLabel(names=list(LABELS)),
        }
    )
    return datasets.Dataset.from_dict(
        {"premise": premises, "hypothesis": hypotheses, "label": labels}, features=features
    )


def load_training_table(
    dataset: str | Path, split: str, settings, flag: str = "--dataset"
) -> TrainingPairs:
    """``nli train``'s data: JSNLI's TSV (by ``settings.dataset_format`` or recognised), or any
    table ``load_table`` reads, with its columns checked and its labels mapped."""
    if settings.dataset_format not in FORMATS:
        raise ValueError(
            f"--format {settings.dataset_format!r}: expected one of {', '.join(FORMATS)}"
        )
    path = Path(str(dataset)).expanduser()
    if settings.dataset_format == "jsnli" or (settings.dataset_format == "auto" and is_jsnli(path)):
        if not path.is_file():
            raise FileNotFoundError(
                f"{flag} {dataset}: --format jsnli needs JSNLI's .tsv file, e.g. train_w_filtering.tsv"
            )
        return TrainingPairs(read_jsnli(path), segmented=True, source_format="jsnli")
    table = load_table(
        str(dataset), split, settings.config, settings.token, settings.dataset_revision
    )
    prepared = prepare_nli_columns(
        table, settings.columns, settings.label_names, where=f"{flag} {dataset}"
    )
    return TrainingPairs(prepared, segmented=False, source_format="table")
