"""Writing files and folders so that a reader never sees half of one.

Every file is written to a temporary sibling and renamed into place. A folder
(a dataset folder, a run's output folder) is assembled in a staging sibling
and swapped in whole by ``replace_folder``; ``recover_folder`` cleans up what a
killed build or run left beside it. Both builders and pipelines write through
this module, so the rules (atomicity, permissions, clean-up) are the same
everywhere.
"""

from __future__ import annotations

import csv
import errno
import glob
import io
import json
import logging
import math
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

__all__ = [
    "atomic_write_bytes",
    "atomic_write_text",
    "csv_records",
    "ensure_writable_folder",
    "followed",
    "ensure_writable_root",
    "open_text",
    "os_error_line",
    "read_text",
    "recover_folder",
    "replace_folder",
    "staging_folder",
    "text_lines",
    "to_jsonable",
    "write_json",
    "write_jsonl",
]

STAGING = "staging"
log = logging.getLogger(__name__)
# The longest sibling a folder written whole gets: ``.<name>.staging-<pid>-<8 random>`` (a pid
# has at most 7 digits on Linux), so a folder's own name must leave room for it.
_SIBLING_EXTRA = len(".") + len(f".{STAGING}-") + 7 + len("-") + 8


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def file_mode() -> int:
    """0644 under the usual umask: what ``open()`` would have created."""
    return 0o666 & ~_umask()


def folder_mode() -> int:
    """0755 under the usual umask (``tempfile.mkdtemp`` alone gives 0700)."""
    return 0o777 & ~_umask()


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, file_mode())
        os.replace(tmp, path)
    except BaseException as err:
        Path(tmp).unlink(missing_ok=True)
        # A failed write names no file: say which one it was.
        if isinstance(err, OSError) and err.filename is None:
            raise OSError(err.errno, err.strerror, str(path)) from err
        raise
    return path


def atomic_write_text(path: str | os.PathLike[str], text: str) -> Path:
    return atomic_write_bytes(path, text.encode("utf-8"))


def read_text(path: str | os.PathLike[str], newline: str | None = None) -> str:
    """The UTF-8 text of ``path`` (a leading byte-order mark dropped).

    A file in another encoding (Shift-JIS, say) is a ``ValueError`` that names the
    file, the line, the first byte that is not UTF-8 and its offset in the file.
    ``newline=None`` turns ``\\r\\n`` and ``\\r`` into ``\\n`` as ``open()`` does;
    ``newline=""`` keeps them (for the ``csv`` module).
    """
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
        # UTF-16 text of ASCII characters decodes as UTF-8, every other byte a NUL
        if (nul := data.find(b"\x00")) >= 0:
            raise UnicodeDecodeError("utf-8", data, nul, nul + 1, "NUL")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise _not_utf8(path, line, data[err.start], err.start, data[:4]) from None
    text = text.removeprefix("\ufeff")
    if newline is None:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text


def _not_utf8(
    path: str | os.PathLike[str], line: int, byte: int, offset: int, head: bytes = b""
) -> ValueError:
    """The error for a file that is not UTF-8, guessing its encoding from its first bytes."""
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        guess = "its byte order mark says UTF-32"
    elif head.startswith((b"\xff\xfe", b"\xfe\xff")):
        guess = "its byte order mark says UTF-16"
    elif byte == 0:
        guess = "a NUL byte says UTF-16 or UTF-32"
    else:
        guess = "a Japanese spreadsheet may have saved Shift-JIS"
    return ValueError(
        f"{path}: not UTF-8 text (line {line}: byte 0x{byte:02x} at offset {offset}); save it "
        f"as UTF-8 ({guess})"
    )


def open_text(path: str | os.PathLike[str], newline: str | None = None) -> io.StringIO:
    """``read_text`` as a file object: ``with open_text(path) as handle`` in place of ``open``."""
    return io.StringIO(read_text(path, newline), newline="" if newline == "" else "\n")


def text_lines(path: str | os.PathLike[str]) -> Iterator[str]:
    """``read_text``'s lines streamed, for a file that may not fit in memory (a corpus, word
    vectors): each line without its line break, a leading byte-order mark dropped, and a line
    that is not UTF-8 the same ``ValueError`` (the file, the line, the byte and its offset)."""
    offset = 0
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
                if (nul := raw.find(b"\x00")) >= 0:
                    raise UnicodeDecodeError("utf-8", raw, nul, nul + 1, "NUL")
            except UnicodeDecodeError as err:
                head = raw[:4] if number == 1 else b""
                raise _not_utf8(path, number, raw[err.start], offset + err.start, head) from None
            offset += len(raw)
            if number == 1:
                line = line.removeprefix("\ufeff")
            yield line.rstrip("\r\n")


def csv_records(
    handle: Iterable[str], where: str, delimiter: str = ","
) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """The header and the rows (each with its line number) of CSV text read through
    ``open_text(path, newline="")``. A header naming a column twice, or a row with more or
    fewer cells than the header, is a ``ValueError`` naming ``where`` and the line
    (``csv.DictReader`` keeps the last of two columns and fills or stacks cells silently);
    blank lines are skipped."""
    reader = csv.reader(handle, delimiter=delimiter)
    header = next(reader, None)
    if header is None:
        return [], []
    twice = sorted({name for name in header if header.count(name) > 1})
    if twice:
        raise ValueError(f"{where}, line 1: the header names column {twice[0]!r} twice")
    rows = []
    for cells in reader:
        if not cells:
            continue
        if len(cells) != len(header):
            raise ValueError(
                f"{where}, line {reader.line_num}: {len(cells)} cells where the header has "
                f"{len(header)} ({', '.join(header)})"
            )
        rows.append((reader.line_num, dict(zip(header, cells, strict=True))))
    return header, rows


def to_jsonable(value: Any) -> Any:
    """numpy scalars and arrays to plain Python; NaN to None (JSON has no NaN)."""
    if isinstance(value, dict):
        return {str(key): to_jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_jsonable(item) for item in value]
    if hasattr(value, "tolist"):
        return to_jsonable(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, Path):
        return str(value)
    return value


def write_json(path: str | os.PathLike[str], data: Any) -> Path:
    return atomic_write_text(
        path, json.dumps(to_jsonable(data), ensure_ascii=False, indent=2) + "\n"
    )


def write_jsonl(path: str | os.PathLike[str], rows: Iterable[dict]) -> Path:
    text = "".join(json.dumps(to_jsonable(row), ensure_ascii=False) + "\n" for row in rows)
    return atomic_write_text(path, text)


def ensure_writable_folder(target: str | os.PathLike[str], what: str = "--out") -> Path:
    """Check, before any work, that ``target`` can be (re)created as a folder.

    Raises ``ValueError`` naming ``what`` when ``target`` is a file or its parent
    cannot be written; a folder that will be replaced whole needs a writable parent.
    """
    given = Path(target)
    target = followed(given)
    if target != given:
        log.info(
            "%s %s is a symbolic link: the run writes the folder it points to, %s",
            what,
            given,
            target,
        )
    if target.exists() and not target.is_dir():
        raise ValueError(f"{what} {target}: is a file; expected a folder (or a path to create one)")
    _check_name_length(target, what)
    parent = target.parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(
            f"{what} {target}: cannot create {parent} ({err.strerror or err})"
        ) from None
    try:
        # A real write: permission bits say little (root passes os.access in an immutable folder).
        os.rmdir(tempfile.mkdtemp(dir=parent, prefix=f".{target.name}.write-check-"))
    except OSError:
        raise ValueError(f"{what} {target}: {parent} is not writable") from None
    return target


def followed(target: str | os.PathLike[str]) -> Path:
    """``target``, or the path it points to when it is a symbolic link.

    A folder written whole is swapped in by renames: done on a link, they would replace the
    link by a folder (and a second run would trip over the link kept as the old copy). So
    the folder the link points to is the one replaced, and the link keeps pointing to it.
    """
    target = Path(target)
    return Path(os.path.realpath(target)) if target.is_symlink() else target


def _check_name_length(target: Path, what: str) -> None:
    try:
        limit = os.pathconf(target.parent if target.parent.is_dir() else "/", "PC_NAME_MAX")
    except (OSError, ValueError):
        limit = 255
    size = len(os.fsencode(target.name))
    if size + _SIBLING_EXTRA > limit:
        shown = target.parent / f"{target.name[:40]}..."
        raise ValueError(
            f"{what} {shown}: the folder's name is {size} bytes; at most {limit - _SIBLING_EXTRA} "
            f"fit (the file system allows {limit}, and the folder is assembled beside itself "
            f"under its name plus {_SIBLING_EXTRA} characters); give a shorter name"
        )


def os_error_line(err: OSError) -> str | None:
    """One line for a failure of the machine a user can act on (a full disk, a quota, a name
    too long, a read-only file system), naming the file; None for any other ``OSError``."""
    advice = {
        errno.ENOSPC: "free some space or write elsewhere",
        errno.EDQUOT: "free some space or write elsewhere",
        errno.ENAMETOOLONG: "give a shorter name",
        errno.EROFS: "write elsewhere",
    }.get(err.errno)
    if advice is None:
        return None
    where = f"{err.filename}: " if err.filename else ""
    return f"{where}{err.strerror or os.strerror(err.errno)}; {advice}"


def ensure_writable_root(root: str | os.PathLike[str], what: str = "--out-root") -> Path:
    """Check, before any work, that files can be created in the folder ``root`` (made if
    missing): a real write, since permission bits say little (root passes ``os.access``
    even in a folder marked immutable). A ``ValueError`` ``"<what> <root> is not writable"``."""
    root = Path(root)
    if root.exists() and not root.is_dir():
        raise ValueError(f"{what} {root} is a file; expected a folder")
    try:
        root.mkdir(parents=True, exist_ok=True)
        os.rmdir(tempfile.mkdtemp(dir=root, prefix=".bias-hub-write-check-"))
    except OSError as err:
        raise ValueError(f"{what} {root} is not writable ({err.strerror or err})") from None
    return root


def _process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def recover_folder(target: str | os.PathLike[str]) -> None:
    """Clean up after a build or run of ``target`` that was killed.

    Staging folders whose process is gone are removed; a ``.previous`` copy left by a
    swap that was interrupted is moved back when ``target`` itself is missing, and
    removed otherwise.
    """
    target = followed(target)
    pattern = glob.escape(str(target.parent / f".{target.name}.{STAGING}-")) + "*"
    for stale in glob.glob(pattern):
        pid_text = stale.rsplit(f".{STAGING}-", 1)[1].split("-", 1)[0]
        if (
            not pid_text.isdigit()
            or not _process_alive(int(pid_text))
            or int(pid_text) == os.getpid()
        ):
            shutil.rmtree(stale, ignore_errors=True)
    backup = target.parent / f".{target.name}.previous"
    if backup.is_symlink():  # an older version renamed a linked --out aside: drop the link only
        backup.unlink()
    elif backup.exists():
        if target.exists():
            shutil.rmtree(backup, ignore_errors=True)
        else:
            os.replace(backup, target)


def staging_folder(target: str | os.PathLike[str]) -> Path:
    """A fresh, empty sibling of ``target`` (of the folder it points to, for a link) to assemble
    its new contents in."""
    target = followed(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    recover_folder(target)
    staging = Path(
        tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.{STAGING}-{os.getpid()}-")
    )
    os.chmod(staging, folder_mode())
    return staging


def replace_folder(staging: str | os.PathLike[str], target: str | os.PathLike[str]) -> Path:
    """Swap the finished ``staging`` folder in as ``target``, replacing any earlier one.

    The earlier folder is renamed aside first and removed only after the new one is in
    place; if the swap fails half-way, it is put back.
    """
    staging, target = Path(staging), followed(target)
    for folder in [staging, *(p for p in staging.rglob("*") if p.is_dir())]:
        os.chmod(folder, folder_mode())
    backup = target.parent / f".{target.name}.previous"
    if backup.is_symlink():
        backup.unlink()
    elif backup.exists():
        shutil.rmtree(backup)
    if target.exists():
        if not target.is_dir():
            raise ValueError(f"{target}: is a file; expected a folder")
        os.replace(target, backup)
    try:
        os.replace(staging, target)
    except BaseException:
        if backup.exists() and not target.exists():
            os.replace(backup, target)
        raise
    shutil.rmtree(backup, ignore_errors=True)
    return target
