"""WinoBias rows from one CoNLL file: the sentence, its words, the gold cluster."""

from __future__ import annotations

from pathlib import Path

from bias_hub.builders.shared.conll import read_conll

__all__ = ["features", "rows_of"]


def features():
    import datasets

    span = datasets.Sequence(datasets.Value("int32"), length=2)
    return datasets.Features(
        {
            "document_id": datasets.Value("string"),
            "part": datasets.Value("int32"),
            "type": datasets.Value("int32"),
            "condition": datasets.Value("string"),
            "sentence": datasets.Value("string"),
            "tokens": datasets.Sequence(datasets.Value("string")),
            "clusters": datasets.Sequence(datasets.Sequence(span)),
            "antecedent": datasets.Value("string"),
            "antecedent_span": span,
            "pronoun": datasets.Value("string"),
            "pronoun_span": span,
        }
    )


def rows_of(path: Path, split: str, kind: int, condition: str) -> list[dict]:
    """One row per document of a WinoBias CoNLL file; each holds exactly one gold cluster:
    the occupation (its first mention), the pronoun that refers to it (the second) and, in
    some sentences, a second pronoun ("... because he liked to pick on his employees")."""
    rows = []
    for document in read_conll(path):
        if len(document.clusters) != 1 or len(document.clusters[0]) < 2:
            raise ValueError(
                f"{path}, {document.name}: expected one cluster of an occupation and its pronoun(s), "
                f"got {document.clusters}"
            )
        (antecedent, pronoun, *_), tokens = document.clusters[0], document.tokens
        rows.append(
            {
                "document_id": document.key,
                "part": document.part,
                "type": kind,
                "condition": condition,
                "sentence": " ".join(tokens),
                "tokens": tokens,
                "clusters": document.clusters,
                "antecedent": " ".join(tokens[antecedent[0] : antecedent[1] + 1]),
                "antecedent_span": antecedent,
                "pronoun": " ".join(tokens[pronoun[0] : pronoun[1] + 1]),
                "pronoun_span": pronoun,
            }
        )
    if not rows:
        raise ValueError(f"{path}: no document (expected '#begin document (KEY); part N' blocks)")
    return rows
