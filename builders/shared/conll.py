"""Reading coreference in the CoNLL-2012 format: the WinoBias files and any system's output.

A document opens with ``#begin document (KEY); part NNN`` and closes with
``#end document``; each token line has whitespace-separated columns, the word in the
fourth and the coreference tags in the last: ``-`` for none, else ``|``-separated
``(N`` (a mention of entity N opens), ``N)`` (it closes) or ``(N)`` (a one-token
mention). Token positions count from 0 across the document's sentences (blank lines
separate sentences), and a mention is ``[start, end]``, both inclusive.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from bias_hub.builders.shared.files import read_text

__all__ = ["CorefDocument", "read_conll"]

_BEGIN = re.compile(r"^#begin document \((?P<key>.*)\);\s*part\s+(?P<part>\d+)\s*$")
_TAG = re.compile(r"^(?:\((?P<single>\d+)\)|\((?P<open>\d+)|(?P<close>\d+)\))$")


@dataclass
class CorefDocument:
    """One document: its key and part, its words, and its clusters (entity id order)."""

    key: str
    part: int
    tokens: list[str]
    clusters: list[list[list[int]]]

    @property
    def name(self) -> str:
        return f"{self.key}; part {self.part:03d}"


def read_conll(path: str | os.PathLike[str]) -> list[CorefDocument]:
    """Every document of a CoNLL file, in file order; malformed lines raise ``ValueError``
    naming the file and the line."""
    path = Path(path)
    documents: list[CorefDocument] = []
    current: CorefDocument | None = None
    spans: dict[int, list[list[int]]] = {}
    opened: dict[int, list[int]] = {}
    begun = 0

    def fail(number: int, message: str) -> None:
        raise ValueError(f"{path}, line {number}: {message}")

    for number, line in enumerate(read_text(path).split("\n"), start=1):
        text = line.strip()
        if text.startswith("#begin document"):
            if current is not None:
                fail(number, f"a document begins before {current.name!r} ended")
            match = _BEGIN.match(text)
            if match is None:
                fail(number, f"expected '#begin document (KEY); part N', got {text!r}")
            current = CorefDocument(match["key"], int(match["part"]), [], [])
            spans, opened, begun = {}, {}, number
        elif text.startswith("#end document"):
            if current is None:
                fail(number, "'#end document' without a document")
            unclosed = {entity: starts for entity, starts in opened.items() if starts}
            if unclosed:
                fail(number, f"{current.name}: mentions of entities {sorted(unclosed)} never close")
            current.clusters = [spans[entity] for entity in sorted(spans)]
            documents.append(current)
            current = None
        elif text and not text.startswith("#"):
            if current is None:
                fail(number, "a token line outside '#begin document' ... '#end document'")
            columns = text.split()
            if len(columns) < 2:
                fail(
                    number,
                    f"expected the word (4th column) and the coreference tags (last), got {text!r}",
                )
            position = len(current.tokens)
            current.tokens.append(columns[3] if len(columns) >= 5 else columns[0])
            if columns[-1] == "-":
                continue
            for tag in columns[-1].split("|"):
                match = _TAG.match(tag)
                if match is None:
                    fail(number, f"coreference tag {tag!r} is none of '(N', 'N)', '(N)' or '-'")
                if match["single"] is not None:
                    spans.setdefault(int(match["single"]), []).append([position, position])
                elif match["open"] is not None:
                    opened.setdefault(int(match["open"]), []).append(position)
                else:
                    entity = int(match["close"])
                    if not opened.get(entity):
                        fail(number, f"entity {entity} closes a mention that never opened")
                    spans.setdefault(entity, []).append([opened[entity].pop(), position])
    if current is not None:
        raise ValueError(f"{path}: the document begun on line {begun} ({current.name}) never ends")
    for document in documents:
        for cluster in document.clusters:
            cluster.sort()
    return documents
