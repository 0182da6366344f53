"""A run's output folder, written all or nothing.

``RunFolder(out)`` is made before any model is loaded (an unwritable ``--out`` fails first),
locks ``out`` (a second run on it is refused, naming the first), collects every output in a
staging sibling, and on ``commit`` adds ``manifest.json`` (each file's size and sha256, the
command, package versions, the fingerprints ``record_inputs`` took, the study step) and swaps
the folder in whole. A failed or interrupted run leaves the previous folder as it was. Only
what the folder's last run wrote is replaced: a file added or edited since, or an input read
from inside the folder, stops the run before any work (``check_run_folder``: the same checks
for a run that opens its folder late). Text written through it carries no secret
(``bias_hub.builders.shared.secrets``).

``why_rerun`` is the one judge of reuse: a finished run stands for a planned step only while its
manifest names that step, every file it lists still has its sha256, and every input, the
package's source files included, fingerprints as it did.

    with RunFolder(out_dir) as run:
        run.write_json("results.json", results)
        report.render(results, run.staging)   # report.md and figures (pipelines/common/render.py)
"""

from __future__ import annotations

import contextlib
import contextvars
import copy
import fcntl
import hashlib
import json
import logging
import os
import shlex
import shutil
import sys
import time
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.console import command_line
from bias_hub.builders.shared.files import (
    atomic_write_bytes,
    atomic_write_text,
    ensure_writable_folder,
    replace_folder,
    staging_folder,
    to_jsonable,
    write_json,
    write_jsonl,
)
from bias_hub.builders.shared.secrets import redact, redact_data
from bias_hub.builders.shared.written import holding
from bias_hub.pipelines.common.provenance import changed_inputs, file_sha256, fingerprint_inputs

__all__ = [
    "STUDY_STEP",
    "OutLock",
    "RunFolder",
    "as_study_step",
    "check_run_folder",
    "command_line",
    "edited_files",
    "package_versions",
    "read_manifest",
    "why_rerun",
]

log = logging.getLogger(__name__)
MANIFEST = "manifest.json"
INPUTS = "inputs"
STUDY_STEP = "study_step"
ARGV_PATHS = "argv_paths"
# The flags whose value a command writes (its output folder, a cache), not reads.
WRITTEN_FLAGS = ("--out", "--out-root", "--cache-dir", "--llm-cache-dir")
_PACKAGES = ("bias-hub", "torch", "transformers", "datasets", "evaluate", "numpy", "scipy")

_study_step: contextvars.ContextVar[dict | None] = contextvars.ContextVar(
    "bias_hub_study_step", default=None
)


def as_study_step(step: Mapping[str, Any]) -> contextlib.AbstractContextManager[dict]:
    """Run folders made inside the block record the study ``step`` they were written for
    (``{"study", "step", "argv"}``) and ``argv_paths`` (``why_rerun`` resolves them again).
    Yields the record, for a step that writes no run folder."""
    return holding(_study_step, {STUDY_STEP: dict(step), ARGV_PATHS: argv_paths(step["argv"])})


def argv_paths(argv: list[str]) -> dict[str, str]:
    """Each word of a command line that names an existing file or folder it reads (a path, not
    a bare name; not the value of a flag it writes), with what it resolves to now (links
    followed)."""
    return {
        word: str(Path(word).resolve())
        for before, word in zip(["", *argv], argv, strict=False)
        if before not in WRITTEN_FLAGS
        and ("/" in word or word.startswith("."))
        and Path(word).exists()
    }


def read_manifest(folder: Path) -> dict | None:
    """``folder``'s manifest.json, or None where there is none (or it is no JSON object)."""
    try:
        manifest = json.loads((Path(folder) / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return manifest if isinstance(manifest, dict) else None


def edited_files(folder: Path, manifest: Mapping[str, Any] | None = None) -> list[str]:
    """The files ``folder``'s manifest lists that are gone or no longer have the sha256 it
    records, one line each (``results.json was edited since the run wrote it``); the manifest
    itself where it lists no files."""
    manifest = read_manifest(folder) if manifest is None else manifest
    entries = (manifest or {}).get("files")
    if not isinstance(entries, list):
        return [f"{MANIFEST} is missing or lists no files"]
    found = []
    for entry in entries:
        path = Path(folder) / str(entry.get("path"))
        if not path.is_file():
            found.append(f"{entry.get('path')} is gone")
        elif file_sha256(path) != entry.get("sha256"):
            found.append(f"{entry.get('path')} was edited since the run wrote it")
    return found


def why_rerun(
    step: Mapping[str, Any],
    *,
    folder: Path | None = None,
    record: Mapping[str, Any] | None = None,
) -> str | None:
    """None when a finished run may stand for the planned ``step``, else why not, in one line.
    The run is the run folder ``folder`` (its manifest), or for a step that writes none (a
    dataset build) the ``record`` its caller kept: the manifest's keys, with ``outputs`` (the
    fingerprints of what it wrote) in place of its list of files."""
    if folder is not None:
        record = read_manifest(folder)
        if record is None:
            return "its run folder is gone or incomplete (no manifest.json)"
    if record is None:
        return "no record of what it read and wrote"
    if record.get(STUDY_STEP) != dict(step):
        written = record.get(STUDY_STEP) or {}
        if {**written, "argv": step.get("argv")} == dict(step):
            return f"its command line changed (it ran `bias-hub {shlex.join(written.get('argv') or [])}`)"
        by = (
            f"step {written.get('step')} of study {written.get('study')}"
            if written
            else f"`{record.get('command') or 'another command'}`"
        )
        return f"its output was written by {by}, not by this step"
    if folder is not None:
        problems = edited_files(folder, record)
    else:
        problems = changed_inputs({"datasets": (record.get("outputs") or {}).get("datasets")})
    then, now = record.get(ARGV_PATHS) or {}, argv_paths(step["argv"])
    problems += [
        f"input changed: {word} now reads {now.get(word, '(nothing)')} (it read {then.get(word)})"
        for word in sorted(set(then) | set(now))
        if then.get(word) != now.get(word)
    ]
    problems += changed_inputs(record.get(INPUTS))
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return problems[0] + more


def package_versions(names: Iterable[str] = _PACKAGES) -> dict[str, str]:
    versions = {"python": sys.version.split()[0]}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return versions


class OutLock:
    """One run at a time per output folder: ``.<name>.lock`` beside it, held with ``flock``,
    naming its holder. The kernel drops a dead process's lock, so a killed run's is taken over;
    ``release`` removes the file while still holding it (a waiter then opens the new one)."""

    def __init__(self, target: Path, what: str = "--out") -> None:
        self.path = target.parent / f".{target.name}.lock"
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                holder = _read_holder(fd)
                os.close(fd)
                raise ValueError(
                    f"{what} {target}: another run is writing this folder ({holder}); wait for it to "
                    f"finish or give another {what}"
                ) from None
            with contextlib.suppress(FileNotFoundError):
                if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                    break
            os.close(fd)  # released and removed by its holder meanwhile: lock the new file
        record = {
            "pid": os.getpid(),
            "command": command_line(),
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        }
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(record, ensure_ascii=False).encode("utf-8"))
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is None:
            return
        try:
            self.path.unlink(missing_ok=True)
        finally:
            os.close(self._fd)
            self._fd = None


def _read_holder(fd: int) -> str:
    try:
        record = json.loads(os.pread(fd, 1 << 16, 0).decode("utf-8"))
        return f"pid {record['pid']}, started {record['started']}: {record['command']}"
    except (OSError, ValueError, KeyError, TypeError):
        return "a process that has not said which yet"


# Files a part may write through ``path()`` (report.md from ``render``, a library's own JSON):
# redacted at commit too, so no secret reaches a run folder whichever writer made the file.
_TEXT_SUFFIXES = set(".md .json .jsonl .txt .csv .tsv .html .yaml .yml .log".split())


def _redacted_file(path: Path) -> bytes:
    """The file's bytes after every registered secret in a text file is masked (rewritten in place)."""
    data = path.read_bytes()
    if path.suffix.lower() not in _TEXT_SUFFIXES:
        return data
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return data
    clean = redact(text)
    if clean == text:
        return data
    atomic_write_text(path, clean)
    return clean.encode("utf-8")


class RunFolder:
    """The staging area of one run; ``commit`` swaps it in as ``target``."""

    def __init__(self, target: str | Path, what: str = "--out", copies_all: bool = False) -> None:
        """``copies_all``: the caller copies every file of the folder into the new run first
        (``bias-hub report`` re-rendering one), so none is lost and none need be the last run's."""
        self.target = ensure_writable_folder(target, what)
        self.what = what
        self.lock = OutLock(self.target, what)
        try:
            _refuse_replacing(self.target, what, copies_all)
            self.staging = staging_folder(self.target)
        except BaseException:
            self.lock.release()
            raise
        self.started = time.time()
        self.info: dict[str, Any] = dict(_study_step.get() or {})
        # Manifest entries to keep as they were, by path (None: leave the file unlisted): what
        # `bias-hub report` copies from the run without writing it.
        self.kept_entries: dict[str, dict | None] = {}
        self.prefix = ""
        self._done = False

    def sub(self, name: str) -> RunFolder:
        """A view that writes under ``name/`` of the same run (committed with it)."""
        view = copy.copy(self)
        view.prefix = f"{self.prefix}{name.strip('/')}/"
        return view

    def path(self, name: str) -> Path:
        """Where ``name`` goes inside the run (for libraries that write files themselves)."""
        if Path(name).is_absolute() or ".." in Path(name).parts:
            raise ValueError(f"run file {name!r}: expected a relative path inside the run folder")
        path = self.staging / f"{self.prefix}{name}"
        path.parent.mkdir(parents=True, exist_ok=True)
        return path

    def write_text(self, name: str, text: str) -> Path:
        return atomic_write_text(self.path(name), redact(text))

    def write_bytes(self, name: str, data: bytes) -> Path:
        return atomic_write_bytes(self.path(name), data)

    def write_json(self, name: str, data: Any) -> Path:
        return write_json(self.path(name), redact_data(to_jsonable(data)))

    def write_jsonl(self, name: str, rows: Iterable[dict]) -> Path:
        return write_jsonl(self.path(name), (redact_data(to_jsonable(row)) for row in rows))

    def record_inputs(
        self,
        *,
        datasets: Iterable[Any] = (),
        models: Iterable[Any] = (),
        files: Iterable[Any] = (),
        settings: Any = None,
    ) -> dict:
        """Fingerprint what the run read (``provenance.fingerprint_inputs``; see its arguments)
        into the manifest's ``"inputs"``. A second call adds to the first."""
        record = fingerprint_inputs(
            datasets=datasets, models=models, files=files, settings=settings
        )
        self._refuse_inputs_inside(record)
        earlier = self.info.get(INPUTS)
        if earlier:
            for key in ("datasets", "models", "files"):
                record[key] = earlier[key] + record[key]
            record["settings"] = record["settings"] or earlier["settings"]
        self.info[INPUTS] = record
        return record

    def _refuse_inputs_inside(self, record: dict) -> None:
        items = [*record["datasets"], *record["models"], *record["files"]]
        _refuse_inside(self.target, self.what, [i.get("folder") or i.get("path") for i in items])

    @property
    def inputs(self) -> dict | None:
        """The fingerprints ``record_inputs`` recorded so far (None before the first call)."""
        return self.info.get(INPUTS)

    def files(self) -> list[Path]:
        return sorted(p for p in self.staging.rglob("*") if p.is_file() and p.name != MANIFEST)

    def commit(self) -> Path:
        """Write the manifest and swap the run in; the staging area is gone afterwards."""
        if self.prefix:
            raise RuntimeError("commit the run folder itself, not a view of one of its subfolders")
        if self._done:
            raise RuntimeError("this run folder was already committed or aborted")
        try:
            entries = []
            for path in self.files():
                name = path.relative_to(self.staging).as_posix()
                if name in self.kept_entries:
                    if self.kept_entries[name] is not None:
                        entries.append(self.kept_entries[name])
                    continue
                data = _redacted_file(path)
                entries.append(
                    {"path": name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                )
            manifest = {
                "command": command_line(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
                "seconds": round(time.time() - self.started, 1),
                "versions": package_versions(),
                **self.info,
                "files": entries,
            }
            write_json(self.staging / MANIFEST, redact_data(to_jsonable(manifest)))
            replace_folder(self.staging, self.target)
        finally:
            # Released whether the swap worked or not: a failed commit leaves the earlier folder.
            self.lock.release()
        self._done = True
        log.debug("wrote %s (%d files)", self.target, len(entries))
        return self.target

    def abort(self) -> None:
        if not self._done:
            try:
                shutil.rmtree(self.staging, ignore_errors=True)
            finally:
                self.lock.release()
            self._done = True

    def __enter__(self) -> RunFolder:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.commit()
        else:
            self.abort()


def check_run_folder(
    target: str | Path, what: str = "--out", inputs: Iterable[str | Path | None] = ()
) -> Path:
    """The checks of ``RunFolder(target)`` and ``record_inputs``, for a run that opens its folder
    only at its end (``nli train``), before any work. Returns the folder a link points to."""
    folder = ensure_writable_folder(target, what)
    _refuse_replacing(folder, what)
    _refuse_inside(folder, what, [p for p in inputs if p and Path(p).exists()])
    return folder


def _refuse_inside(folder: Path, what: str, paths: Iterable[str | Path | None]) -> None:
    """An input inside the folder would be deleted by the run that read it."""
    target = folder.resolve()
    for where in paths:
        if where and Path(where).resolve().is_relative_to(target):
            raise ValueError(
                f"{where} lies inside {what} {folder}, which this run replaces whole "
                f"(it would be deleted): move it out of the folder, or give another {what}"
            )


def _refuse_replacing(folder: Path, what: str, copies_all: bool = False) -> None:
    """A ValueError unless ``folder`` may be replaced whole: new, empty, or a run folder whose
    files are all its last run's as it wrote them (any run folder, with ``copies_all``)."""
    if not folder.is_dir() or not any(folder.iterdir()):
        return
    manifest = folder / MANIFEST
    if not manifest.is_file():
        # Never take `--out .` or a folder of other work with a run.
        raise ValueError(
            f"{what} {folder}: exists, is not empty and is not a bias-hub run folder (no "
            f"{MANIFEST}); a run replaces its output folder whole, so give a new or empty folder"
        )
    try:
        written = {
            entry["path"]: entry["sha256"]
            for entry in json.loads(manifest.read_text(encoding="utf-8"))["files"]
        }
    except (ValueError, KeyError, TypeError):
        raise ValueError(
            f"{what} {folder}: its {MANIFEST} does not list the files the last run wrote, so "
            "nothing tells which files are yours; give a new folder"
        ) from None
    if copies_all:
        return
    listed = _not_written(folder, written)
    if listed:
        raise ValueError(
            f"{what} {folder}: holds {len(listed)} file(s) its last run did not write, which this "
            f"run would delete (it replaces the folder whole): {', '.join(listed[:10])}"
            f"{', ...' if len(listed) > 10 else ''}; move them out of the folder, or give a new "
            f"{what}"
        )


def _not_written(folder: Path, written: dict[str, str]) -> list[str]:
    """The files of ``folder`` its manifest does not list (added) or lists with other contents
    (changed since); ``__pycache__`` does not count (made again from its source)."""
    added, changed = [], []
    for path in sorted(p for p in folder.rglob("*") if p.is_file() or p.is_symlink()):
        parts = path.relative_to(folder).parts
        name = "/".join(parts)
        if name == MANIFEST or "__pycache__" in parts:
            continue
        if name not in written or path.is_symlink():
            added.append(f"{name} (added)")
        elif file_sha256(path) != written[name]:
            changed.append(f"{name} (changed since)")
    return added + changed
