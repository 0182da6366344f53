"""WinoBias gaps of coreference systems, one per embedding, from their CoNLL outputs.

The RNSB-vs-WinoBias study trained Lee et al.'s (2017) coreference model on OntoNotes
once per embedding and measured it on WinoBias; training that model is the user's step.
Here each embedding's system output -- CoNLL-2012 files holding the WinoBias sentences
with predicted coreference in the last column, from any system -- is matched to the gold
of ``datasets/winobias`` by document key and scored with ``metrics/winobias_gap``, per
type: the pro-stereotypical minus the anti-stereotypical precision and recall (MUC,
B-cubed and CEAF-e averaged), the study's "Pre. diff" and "Rec. diff".
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from bias_hub.builders.shared.conll import CorefDocument, read_conll
from bias_hub.pipelines.common import dataset_folder, load_dataset_split, metric_scores

__all__ = ["parse_coref_flags", "read_outputs", "winobias_gaps"]

log = logging.getLogger(__name__)
GAPS = ("precision_gap", "recall_gap", "f1_gap")


def parse_coref_flags(values: Sequence[str], folder: str | Path | None = None) -> dict[str, Path]:
    """``NAME=PATH`` pairs: the embedding's name in the score table, its system's output; and
    with ``folder`` (``--coref-dir``) one entry per file or subfolder of it, named by its stem
    (``original.conll`` or ``original/`` for the embedding ``original``)."""
    outputs: dict[str, Path] = {}
    if folder is not None:
        folder = Path(folder)
        if not folder.is_dir():
            raise FileNotFoundError(f"--coref-dir {folder}: no such folder")
        entries = sorted(p for p in folder.iterdir() if not p.name.startswith("."))
        if not entries:
            raise FileNotFoundError(
                f"--coref-dir {folder}: holds no output (one file or folder per embedding)"
            )
        for entry in entries:
            name = entry.name if entry.is_dir() else entry.stem
            if name in outputs:
                raise ValueError(
                    f"--coref-dir {folder}: two outputs for {name!r} ({outputs[name].name}, {entry.name})"
                )
            outputs[name] = entry
    for text in values or []:
        name, sep, path = text.partition("=")
        if not sep or not name or not path:
            raise ValueError(
                f"--coref: expected NAME=PATH (an embedding and its CoNLL output), got {text!r}"
            )
        if name in outputs:
            raise ValueError(f"--coref: {name!r} is given twice")
        if not Path(path).exists():
            raise FileNotFoundError(f"--coref {name}={path}: no such file or folder")
        outputs[name] = Path(path)
    return outputs


def read_outputs(path: Path) -> dict[str, CorefDocument]:
    """The documents of a CoNLL file, or of every file in a folder (recursively, sorted), by key."""
    files = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
    if not files:
        raise FileNotFoundError(f"--coref {path}: the folder holds no file")
    documents: dict[str, CorefDocument] = {}
    for file in files:
        for document in read_conll(file):
            if document.key in documents:
                raise ValueError(
                    f"--coref {path}: document {document.key!r} appears twice ({file})"
                )
            documents[document.key] = document
    return documents


def _match(name: str, predicted: Mapping[str, CorefDocument], gold: Sequence[dict]) -> list[list]:
    """Each gold row's predicted clusters; the output must hold every gold document, word for word."""
    missing = [row["document_id"] for row in gold if row["document_id"] not in predicted]
    if missing:
        raise ValueError(
            f"--coref {name}: {len(missing)} of {len(gold)} WinoBias documents are not in the output "
            f"(first: {missing[:3]}); give the system's output on every sentence of the split"
        )
    clusters = []
    for row in gold:
        document = predicted[row["document_id"]]
        if document.tokens != list(row["tokens"]):
            raise ValueError(
                f"--coref {name}, {document.name}: the words differ from WinoBias's "
                f"({len(document.tokens)} vs {len(row['tokens'])} tokens: {document.tokens[:12]} ...)"
            )
        clusters.append(document.clusters)
    extra = len(predicted) - len(gold)
    if extra > 0:
        log.info(
            "--coref %s: %d documents that are not WinoBias this split's sentences left out",
            name,
            extra,
        )
    return clusters


def winobias_gaps(outputs: Mapping[str, Path], dataset: str | Path | None, settings) -> dict:
    """``columns``, ``table`` ({embedding: {column: gap}}), ``intervals`` and the full results.

    ``dataset``: the WinoBias folder, or its name under ``settings.datasets_root`` (default
    ``winobias``); ``settings``: ``split``, ``metrics_root`` and the interval settings.
    """
    folder = dataset_folder(dataset or "winobias", settings.datasets_root)
    gold = list(load_dataset_split(folder, "all", settings.split))
    metric = metric_scores("winobias_gap", settings.metrics_root)
    interval = {
        key: value for key, value in settings.interval_options().items() if value is not None
    }
    columns = [f"winobias_type{kind}_{gap}" for kind in (1, 2) for gap in GAPS]
    table: dict[str, dict[str, float]] = {}
    intervals: dict[str, dict[str, list[float]]] = {}
    results: dict[str, dict] = {}
    for name, path in outputs.items():
        predicted = _match(name, read_outputs(path), gold)
        for kind in (1, 2):
            rows = [i for i, row in enumerate(gold) if row["type"] == kind]
            try:
                result = metric.compute(
                    predictions=[predicted[i] for i in rows],
                    references=[gold[i]["clusters"] for i in rows],
                    condition=[gold[i]["condition"] for i in rows],
                    **interval,
                )
            except ValueError as err:
                raise ValueError(
                    f"--coref {name} (type {kind} documents, in WinoBias's order): {err}"
                ) from None
            results.setdefault(name, {})[f"type{kind}"] = result
            for gap in GAPS:
                column = f"winobias_type{kind}_{gap}"
                table.setdefault(name, {})[column] = result[gap]
                bounds = result.get("confidence_intervals", {}).get(gap)
                if bounds and bounds["low"] is not None:
                    intervals.setdefault(name, {})[column] = [bounds["low"], bounds["high"]]
    return {
        "columns": columns,
        "table": table,
        "intervals": intervals,
        "results": results,
        "split": settings.split,
        "folder": str(folder),
    }
