"""Where datasets and metric modules live, and how a pipeline opens them (as a user would)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

__all__ = [
    "dataset_folder",
    "import_metric_module",
    "load_dataset_split",
    "load_metric",
    "metric_folder",
    "repo_root",
]


def repo_root() -> Path:
    """The checkout holding ``datasets/`` and ``metrics/``."""
    return Path(__file__).resolve().parents[2]


def _root(root: str | os.PathLike[str] | None, default: str) -> Path:
    return Path(root) if root else repo_root() / default


def dataset_folder(
    dataset: str | os.PathLike[str], datasets_root: str | os.PathLike[str] | None = None
) -> Path:
    """A built dataset folder: ``dataset`` as a folder path, or a name under ``datasets_root``.

    Raises ``FileNotFoundError`` saying how to build it when the folder holds no card.
    """
    given = Path(dataset)
    folder = given if (given / "README.md").is_file() else _root(datasets_root, "datasets") / given
    if not (folder / "README.md").is_file():
        name = given.name
        raise FileNotFoundError(
            f"--dataset {dataset}: {folder} is not a built dataset folder (no README.md card); "
            f"build it with `bias-hub build {name}` (or `make datasets`), or point --datasets-root "
            "at the folder that holds it"
        )
    return folder


def _cache_dir(folder: Path) -> Path:
    """A cache folder keyed by the folder's files (names, sizes, modification times).

    datasets 5 keys its cache of a local folder by name and config, not by content: a folder
    rebuilt elsewhere would serve the old rows, and re-reading it on every load
    (``force_redownload``) lets two processes delete each other's Arrow files mid-run.
    """
    import datasets

    entries = sorted(
        (path.relative_to(folder).as_posix(), stat.st_size, stat.st_mtime_ns)
        for path in folder.rglob("*")
        if path.is_file() and not path.name.startswith(".") and (stat := path.stat())
    )
    key = hashlib.sha256(json.dumps(entries).encode()).hexdigest()[:16]
    return Path(datasets.config.HF_DATASETS_CACHE) / "bias-hub" / f"{folder.name}-{key}"


def load_dataset_split(folder: str | os.PathLike[str], config: str, split: str | None = "test"):
    """``datasets.load_dataset(folder, config, split=split)`` with errors that name the folder.

    The Arrow cache is keyed by the folder's contents (``_cache_dir``), so a rebuilt folder is
    never served from an older build's cache and concurrent readers share one safely.
    """
    import datasets

    folder = Path(folder)
    try:
        return datasets.load_dataset(
            str(folder), config, split=split, cache_dir=str(_cache_dir(folder))
        )
    except ValueError as err:
        raise ValueError(f"dataset {folder}: config {config!r}, split {split!r}: {err}") from None


def metric_folder(name: str, metrics_root: str | os.PathLike[str] | None = None) -> Path:
    folder = _root(metrics_root, "metrics") / name
    if not (folder / f"{name}.py").is_file():
        raise FileNotFoundError(
            f"--metrics-root: {folder} holds no {name}.py; point --metrics-root at the folder "
            "that holds the project's metrics/"
        )
    return folder


def load_metric(
    name: str, metrics_root: str | os.PathLike[str] | None = None, config_name: str | None = None
):
    """``evaluate.load("<metrics_root>/<name>")``, exactly as a user would."""
    import evaluate

    return evaluate.load(str(metric_folder(name, metrics_root)), config_name)


def import_metric_module(folder: str | os.PathLike[str]):
    """The Python module of a metric folder, imported as a package so its same-folder imports
    (``from .bias_hub_common import ...``) resolve as they do under ``evaluate.load``: for
    tests and benchmarks that call a module's functions directly."""
    import importlib
    import sys
    import types

    folder = Path(folder).resolve()
    if not (folder / f"{folder.name}.py").is_file():
        raise FileNotFoundError(f"{folder}: no metric module {folder.name}.py in it")
    package = f"_bias_hub_metric_{folder.name}"
    if package not in sys.modules:
        module = types.ModuleType(package)
        module.__path__ = [str(folder)]
        sys.modules[package] = module
    return importlib.import_module(f"{package}.{folder.name}")
