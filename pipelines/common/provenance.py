"""Fingerprints of what a run read, so that every number can be traced to its inputs.

``fingerprint_inputs`` computes the record ``RunFolder.record_inputs`` keeps in the manifest
under ``"inputs"``: the datasets (card and data files, and what the card says they were built
from), models (a folder's files, or the revision a Hub id resolves to in the cache), input
files, the code (version, git state, the sha256 of every source file of the package) and the
settings. Every local path is recorded as given and as resolved; ``changed_inputs`` resolves
it again (a re-pointed link reads another folder) and says, one line each, what differs: the
code that ran must be the code that would run.

Files are hashed once per process: the digest is cached by path, size and modification time.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import subprocess
from collections.abc import Iterable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.card import USER_COPY_KEY, card_data_files, read_card_yaml
from bias_hub.builders.shared.files import to_jsonable
from bias_hub.pipelines.common.locations import in_checkout, repo_root

__all__ = [
    "STAND_IN_ORIGINS",
    "changed_inputs",
    "code_record",
    "dataset_origin",
    "file_sha256",
    "fingerprint_inputs",
    "inputs_lines",
    "mark_stand_in",
    "source_files",
    "stand_ins",
    "tree_sha256",
]

# Built by the project in place of the data a paper used: never the paper's numbers.
STAND_IN_ORIGINS = ("sample", "generated", "rule-built")
# The config.json key of a model made in place of a paper's; its value says what it is.
STAND_IN_MARKER = "bias_hub_stand_in"
# Files of a run folder that describe the run rather than make up the model it holds.
_NOT_CONTENT = {"manifest.json"}
# The package's own source: its modules and the data files they read (what the wheel carries).
_SOURCE_FOLDERS = ("builders", "pipelines", "metrics")
_SOURCE_SUFFIXES = {".py", ".tsv", ".csv", ".json", ".yaml", ".txt", ".md"}

_digests: dict[tuple[str, int, int], str] = {}


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The sha256 of a file, computed once per process for a given path, size and mtime."""
    path = Path(path).resolve()
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _digests:
        with open(path, "rb") as handle:
            _digests[key] = hashlib.file_digest(handle, "sha256").hexdigest()
    return _digests[key]


def _tree_files(folder: Path) -> list[Path]:
    return sorted(
        path
        for path in folder.rglob("*")
        if path.is_file()
        and path.name not in _NOT_CONTENT
        and not any(part.startswith(".") for part in path.relative_to(folder).parts)
    )


def tree_sha256(folder: str | os.PathLike[str]) -> tuple[str, int]:
    """One sha256 for a folder's files (their relative paths and contents; hidden files and a
    run's manifest.json left out) and how many files it covers."""
    folder = Path(folder).resolve()
    files = _tree_files(folder)
    digest = hashlib.sha256()
    for path in files:
        digest.update(f"{path.relative_to(folder).as_posix()}\0{file_sha256(path)}\n".encode())
    return digest.hexdigest(), len(files)


def dataset_origin(card: Mapping[str, Any], config: str | None) -> dict[str, str]:
    """What a dataset folder's card says its rows (of ``config``) were built from: ``kind``
    ``release`` (the authors' data), ``sample``, ``generated`` (in the paper's design),
    ``rule-built`` (by a rule where the paper used another method) or ``built``; ``detail``:
    the card's own words."""
    provenance = card.get("bias_hub_provenance") or {}
    user = card.get(USER_COPY_KEY) or {}
    name = card.get("pretty_name") or ""
    if user and (config is None or config in (user.get("configs") or [])):
        return {"kind": "release", "detail": f"built from your copy: {user.get('command') or ''}"}
    if card.get("sample"):
        return {"kind": "sample", "detail": name}
    if config in (provenance.get("rule_built_configs") or []):
        return {"kind": "rule-built", "detail": provenance.get("rule_built") or name}
    if provenance.get("origin") == "generated" or config in (
        provenance.get("generated_configs") or []
    ):
        return {"kind": "generated", "detail": provenance.get("training_data") or name}
    if provenance.get("origin") == "release" or provenance.get("release_folders"):
        return {"kind": "release", "detail": str(provenance.get("release") or name)}
    return {"kind": "built", "detail": name}


def _dataset(item: Any) -> dict:
    """A dataset folder (``(folder, config)``, or a folder for all its configs), a data file,
    or a Hub dataset id."""
    target, config = item if isinstance(item, tuple) else (item, None)
    path = Path(target).expanduser()
    if path.is_file():
        return _file(path)
    if not (path / "README.md").is_file():
        if path.is_dir():
            return _file(path)
        return {"id": str(target), "config": config, "resolved": False}
    folder = path.resolve()
    card = read_card_yaml(folder)
    names = ["README.md", *card_data_files(card, config)]
    return {
        "name": folder.name,
        "given": os.path.abspath(path),
        "folder": str(folder),
        "config": config,
        "origin": dataset_origin(card, config),
        "files": {
            name: file_sha256(folder / name) if (folder / name).is_file() else None
            for name in names
        },
    }


def _hub_revision(model_id: str, revision: str | None) -> str | None:
    """The commit a Hub id (at ``revision``) resolves to in the local Hub cache, if it is there."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(model_id, "config.json", revision=revision)
    except Exception:  # not a valid repo id, no cache: nothing is known
        return None
    return Path(found).parent.name if isinstance(found, str) else None


def mark_stand_in(folder: str | os.PathLike[str], what: str) -> None:
    """Mark the model saved in ``folder`` (its config.json) as a stand-in, ``what`` saying what
    it is and what it stands in for: every run that reads it lists it among its departures."""
    config = Path(folder) / "config.json"
    data = json.loads(config.read_text(encoding="utf-8"))
    config.write_text(json.dumps({**data, STAND_IN_MARKER: what}, indent=2) + "\n", "utf-8")


def _model(item: Any) -> dict:
    if isinstance(item, Mapping):
        return dict(item)
    model, revision = item if isinstance(item, tuple) else (item, None)
    path = Path(model).expanduser()
    if path.exists():
        try:
            stand_in = json.loads((path / "config.json").read_text(encoding="utf-8"))
            stand_in = stand_in.get(STAND_IN_MARKER) if isinstance(stand_in, dict) else None
        except (OSError, ValueError):
            stand_in = None
        return {"id": str(model), **_file(path), **({"stand_in": stand_in} if stand_in else {})}
    resolved = _hub_revision(str(model), revision)
    return {"id": str(model), "revision": revision, "resolved": resolved or False}


def _file(path: str | os.PathLike[str]) -> dict:
    path = Path(path).expanduser()
    # given: as the run was given it (absolute, its links not followed); path: what it read
    where = {"given": os.path.abspath(path), "path": str(path.resolve())}
    if path.is_dir():
        digest, count = tree_sha256(path)
        return {**where, "sha256": digest, "files": count}
    return {**where, "sha256": file_sha256(path) if path.is_file() else None}


def source_files() -> dict[str, str]:
    """The sha256 of each of the package's own source files, by path inside the package: the
    modules and data files of ``builders/``, ``pipelines/`` and ``metrics/`` and the top-level
    modules (bytecode caches and hidden files left out)."""
    root = repo_root()
    paths = [root / "__init__.py", root / "__main__.py"]
    for name in _SOURCE_FOLDERS:
        paths += (root / name).rglob("*")
    return {
        path.relative_to(root).as_posix(): file_sha256(path)
        for path in sorted(paths)
        if path.suffix in _SOURCE_SUFFIXES
        and path.is_file()
        and not any(
            part.startswith(".") or part == "__pycache__" for part in path.relative_to(root).parts
        )
    }


@functools.cache
def code_record() -> dict[str, Any]:
    """The bias-hub version; in a checkout its git commit and whether tracked files differ; and
    ``source`` (``source_files``), which says what ran whatever git knows."""
    try:
        record: dict[str, Any] = {"bias-hub": metadata.version("bias-hub")}
    except metadata.PackageNotFoundError:
        record = {"bias-hub": None}
    if in_checkout():
        record["git_commit"], record["git_dirty"] = _git_state(repo_root())
    record["source"] = source_files()
    return record


def _git_state(root: Path) -> tuple[str | None, bool | None]:
    def git(*args: str) -> str | None:
        try:
            command = ["git", "-C", str(root), *args]
            done = subprocess.run(command, capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout if done.returncode == 0 else None

    commit = git("rev-parse", "HEAD")
    if commit is None:
        return None, None
    status = git("status", "--porcelain", "--untracked-files=no")
    return commit.strip(), None if status is None else bool(status.strip())


def _settings(settings: Any) -> Any:
    if dataclasses.is_dataclass(settings) and not isinstance(settings, type):
        settings = {f.name: getattr(settings, f.name) for f in dataclasses.fields(settings)}
    if isinstance(settings, Mapping):
        # The token is a secret and says nothing about the numbers; the rest is the run's recipe.
        settings = {key: value for key, value in settings.items() if key != "token"}
    # Whatever a settings class holds, the record is JSON (a run must never fail at its commit
    # for it): values JSON has no type for are written as text.
    return json.loads(json.dumps(to_jsonable(settings), default=str))


def fingerprint_inputs(
    *,
    datasets: Iterable[Any] = (),
    models: Iterable[Any] = (),
    files: Iterable[str | os.PathLike[str]] = (),
    settings: Any = None,
) -> dict[str, Any]:
    """The record of what a run read: ``datasets`` (``(folder, config)`` pairs, folders, data
    files or Hub ids), ``models`` (local folders, Hub ids, ``(id, revision)`` pairs, or a
    ready mapping such as ``{"id": name, "api": url}`` for an API model), ``files`` given by
    the user, and the ``settings`` (a dataclass or a mapping)."""
    return {
        "datasets": [_dataset(item) for item in datasets],
        "models": [_model(item) for item in models],
        "files": [_file(item) for item in files if item is not None],
        "code": code_record(),
        "settings": _settings(settings),
    }


def _moved(recorded: dict, key: str, what: str) -> tuple[Path, list[str]]:
    """Where the path the run was given resolves now, and a line when that is not where it
    resolved then (a link re-pointed, a folder replaced by a link)."""
    then = Path(recorded[key])
    given = recorded.get("given")
    if not given:
        return then, []
    now = Path(given).resolve()
    if now == then:
        return now, []
    return now, [f"{what} changed: {given} now reads {now} (it read {then})"]


def _dataset_changes(recorded: dict) -> list[str]:
    folder, moved = _moved(recorded, "folder", "data")
    if moved:
        return moved
    label = f"{recorded.get('name') or folder.name}"
    if not (folder / "README.md").is_file():
        return [f"data changed: {label} is gone ({folder})"]
    now = _dataset((folder, recorded.get("config")))
    before = recorded.get("files") or {}
    changed = sorted(
        name
        for name in set(before) | set(now["files"])
        if before.get(name) != now["files"].get(name)
    )
    return [f"data changed: {label}/{name}" for name in changed]


def _model_changes(recorded: dict) -> list[str]:
    if recorded.get("path") and recorded.get("sha256"):
        path, moved = _moved(recorded, "path", "model")
        if moved:
            return moved
        if not path.exists():
            return [f"model changed: {recorded['id']} is gone ({path})"]
        if _file(path).get("sha256") != recorded["sha256"]:
            return [f"model changed: {recorded['id']}"]
    elif recorded.get("resolved"):
        now = _hub_revision(recorded["id"], recorded.get("revision"))
        if now is not None and now != recorded["resolved"]:
            return [f"model changed: {recorded['id']} is now revision {now[:12]}"]
    return []


def _file_changes(recorded: dict) -> list[str]:
    if not recorded.get("path"):
        return []
    path, moved = _moved(recorded, "path", "input")
    if moved:
        return moved
    if recorded.get("sha256") is None:
        return [] if not path.exists() else [f"input changed: {path} (did not exist)"]
    if not path.exists():
        return [f"input changed: {path} is gone"]
    if _file(path).get("sha256") != recorded["sha256"]:
        return [f"input changed: {path}"]
    return []


def _code_changes(recorded: Mapping[str, Any]) -> list[str]:
    """The package's source files that differ from those the run recorded, one line each."""
    before = recorded.get("source")
    if not isinstance(before, Mapping):
        return [
            "code changed: the run recorded no fingerprint of its source files (an older bias-hub)"
        ]
    now = source_files()
    changed = sorted(name for name in set(before) | set(now) if before.get(name) != now.get(name))
    return [f"code changed: {name}" for name in changed]


def changed_inputs(record: Mapping[str, Any] | None) -> list[str]:
    """What differs now from an ``"inputs"`` record, one line per difference (empty when every
    dataset file, model, input file and, where the record has it, source file of the package is
    as it was). A record that is missing says so."""
    if not record:
        return ["no input fingerprints recorded (the run is older than them)"]
    changes = []
    for item in record.get("datasets") or []:
        changes += _dataset_changes(item) if "folder" in item else _file_changes(item)
    for item in record.get("models") or []:
        changes += _model_changes(item)
    for item in record.get("files") or []:
        changes += _file_changes(item)
    if "code" in record:
        changes += _code_changes(record["code"] or {})
    return changes


def stand_ins(record: Mapping[str, Any] | None) -> list[str]:
    """The datasets and models of an ``"inputs"`` record that stand in for a paper's data and
    models, described."""
    found = []
    for item in (record or {}).get("datasets") or []:
        origin = item.get("origin") or {}
        if origin.get("kind") in STAND_IN_ORIGINS:
            config = f" (config {item['config']})" if item.get("config") else ""
            detail = f": {origin['detail']}" if origin.get("detail") else ""
            found.append(f"{item['name']}{config}, {origin['kind']}{detail}")
    for item in (record or {}).get("models") or []:
        if item.get("stand_in"):
            found.append(f"model {Path(str(item['id'])).name}: {item['stand_in']}")
    return found


def inputs_lines(record: Mapping[str, Any] | None) -> list[str]:
    """The record for a reader: one line per dataset, model and file, then the code version."""
    if not record:
        return ["(no input fingerprints recorded)"]
    lines = []
    for item in record.get("datasets") or []:
        if "folder" in item:
            config = f" config {item['config']}" if item.get("config") else ""
            origin = item.get("origin") or {}
            lines.append(
                f"dataset {item['folder']}{config} [{origin.get('kind', '?')}]: "
                f"{len(item.get('files') or {})} files"
            )
            lines += [
                f"  {name}  sha256 {(digest or 'missing')[:16]}"
                for name, digest in (item.get("files") or {}).items()
            ]
        else:
            lines.append(f"dataset {item.get('path') or item.get('id')}: {_digest(item)}")
    for item in record.get("models") or []:
        where = f" ({item['path']})" if item.get("path") and item["path"] != item.get("id") else ""
        lines.append(f"model {item.get('id')}{where}: {_digest(item)}")
    for item in record.get("files") or []:
        lines.append(f"file {item.get('path')}: {_digest(item)}")
    code = record.get("code") or {}
    version = f"bias-hub {code.get('bias-hub')}"
    if code.get("git_commit"):
        dirty = ", modified" if code.get("git_dirty") else ""
        version += f" (git {code['git_commit'][:12]}{dirty})"
    if isinstance(code.get("source"), Mapping):
        version += f", {len(code['source'])} source files fingerprinted"
    lines.append(f"code {version}")
    return lines


def _digest(item: Mapping[str, Any]) -> str:
    if item.get("sha256"):
        return f"sha256 {item['sha256'][:16]}"
    if "resolved" in item:
        if item["resolved"]:
            return f"revision {item['resolved'][:12]}"
        revision = f" at {item['revision']}" if item.get("revision") else ""
        return f"Hub id{revision}, revision not resolved"
    if item.get("api"):
        return "served by an API (no fingerprint)"
    return "missing"
