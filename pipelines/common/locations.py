"""Where datasets and metric modules live, and how a pipeline opens them (as a user would).

In a checkout (an editable install counts): the checkout's ``datasets/`` and ``metrics/``.
Installed from the wheel: ``datasets/`` under ``$BIAS_HUB_DATA`` or else the platform's user
data folder, and the metric modules the wheel carries (``bias_hub/metrics/<name>/``).
``bias-hub build`` writes where the pipelines read; ``--datasets-root``, ``--metrics-root``
and ``--out-root`` override them.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bias_hub.metrics._common.bias_hub_common import Scores

__all__ = [
    "DATA_ENV",
    "built_rows",
    "dataset_rows",
    "dataset_folder",
    "default_datasets_root",
    "default_metrics_root",
    "describe_datasets_root",
    "ensure_built",
    "import_evaluate",
    "import_metric_module",
    "import_scores_module",
    "in_checkout",
    "is_bare_name",
    "load_dataset_split",
    "load_metric",
    "metric_folder",
    "metric_scores",
    "repo_root",
]


DATA_ENV = "BIAS_HUB_DATA"


def repo_root() -> Path:
    """The ``bias_hub`` package's folder, above ``pipelines/``: the checkout, or
    ``site-packages/bias_hub`` when installed."""
    return Path(__file__).resolve().parents[2]


def in_checkout() -> bool:
    """Whether this code runs from a checkout (or an editable install of one), not a wheel."""
    root = repo_root()
    return (root / "pyproject.toml").is_file() and (root / "metrics").is_dir()


def _user_data_dir() -> Path:
    """The platform's per-user data folder for bias-hub (what platformdirs' user_data_dir gives)."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local"
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "bias-hub"


def default_datasets_root() -> Path:
    """Where ``bias-hub build`` writes and the pipelines read datasets when no flag says otherwise:
    the checkout's ``datasets/``; installed, ``datasets/`` in ``$BIAS_HUB_DATA`` or the user data
    folder."""
    if in_checkout():
        return repo_root() / "datasets"
    data_root = os.environ.get(DATA_ENV)
    return (Path(data_root).expanduser() if data_root else _user_data_dir()) / "datasets"


def describe_datasets_root() -> str:
    """The default datasets root as help texts name it: the folder, and what decided it."""
    root = default_datasets_root()
    if in_checkout():
        return f"{root}, the checkout's"
    if os.environ.get(DATA_ENV):
        return f"{root}, from ${DATA_ENV}"
    return f"{root}; set ${DATA_ENV} to move it"


def _build_hint(name: str) -> str:
    """How to build the dataset folder ``name`` here (a wheel's user has no Makefile)."""
    hint = f"`bias-hub build {name}`"
    return hint + " (or `make datasets`)" if in_checkout() else hint


def default_metrics_root() -> Path:
    """The checkout's ``metrics/``, or the copy the wheel installed (``bias_hub/metrics``)."""
    return repo_root() / "metrics"


def _root(root: str | os.PathLike[str] | None, default: str) -> Path:
    if root:
        return Path(root)
    return default_datasets_root() if default == "datasets" else default_metrics_root()


def is_bare_name(dataset: str | os.PathLike[str]) -> bool:
    """Whether ``dataset`` is a name (``jbbq``), not a path (``./jbbq``, ``data/jbbq``, ``/x``)."""
    text = os.fspath(dataset)
    separators = [sep for sep in (os.sep, os.altsep, "/") if sep]
    return bool(text) and text not in (".", "..") and not any(s in text for s in separators)


def _is_builder(name: str) -> bool:
    """Whether ``bias-hub build NAME`` exists (a ``builders/<name>/command.py``)."""
    import importlib.util

    try:
        return importlib.util.find_spec(f"bias_hub.builders.{name}.command") is not None
    except (ImportError, ValueError):  # a name that is no module name
        return False


def dataset_folder(
    dataset: str | os.PathLike[str],
    datasets_root: str | os.PathLike[str] | None = None,
    flag: str = "--dataset",
) -> Path:
    """A built dataset folder: a bare name (``jbbq``) under ``datasets_root`` only (never a
    folder of that name here), anything else (``./jbbq``) as the path it is. Raises
    ``FileNotFoundError`` naming ``flag`` and, where it can, how to build the folder."""
    given = Path(dataset)
    bare = is_bare_name(dataset)
    folder = _root(datasets_root, "datasets") / given if bare else given
    missing = missing_data_files(folder)
    if missing is not None and not missing:
        return folder
    if missing:
        build = ""
        if _is_builder(given.name):
            build = (
                _build_hint(given.name)
                if bare
                else f"`bias-hub build {given.name} --out-root {folder.parent}`"
            )
            build = f"; build it with {build}"
        raise FileNotFoundError(
            f"{flag} {dataset}: {folder} has a card but not its data ({', '.join(missing[:3])}"
            f"{' ...' if len(missing) > 3 else ''} missing){build}"
        )
    if not bare and not folder.is_dir():
        raise FileNotFoundError(
            f"{flag} {dataset}: {'is a file' if folder.exists() else 'no such folder'}; "
            "expected a built dataset folder"
        )
    name = given.name
    built_here = _is_builder(name)
    if not bare:
        how = f"; build it with `bias-hub build {name} --out-root {folder.parent}`"
    elif built_here:
        how = f"; build it with {_build_hint(name)}, or point --datasets-root at the folder that holds it"
    else:
        how = (
            f"; bias-hub builds no dataset named {name!r}: give the folder's path, or point "
            "--datasets-root at the folder that holds it"
        )
    local = (
        f"; a bare name is looked up there only: for the folder {given} here, write ./{given}"
        if bare and (given / "README.md").is_file()
        else ""
    )
    raise FileNotFoundError(
        f"{flag} {dataset}: {folder} is not a built dataset folder (no README.md card)"
        f"{how if built_here or bare else ''}{local}"
    )


def ensure_built(name: str, datasets_root: str | os.PathLike[str] | None = None) -> Path:
    """The dataset folder ``name`` under ``datasets_root`` (default: the data root), built first
    with its builder's defaults when it is not there yet: what a demo reads, wherever it runs.
    A folder that is there is used as it is (a user's own build included)."""
    import importlib

    folder = _root(datasets_root, "datasets") / name
    if missing_data_files(folder) != []:
        importlib.import_module(f"bias_hub.builders.{name}").build(folder.parent)
    return folder


def missing_data_files(folder: Path) -> list[str] | None:
    """None when ``folder`` has no README.md card; else the data files its card's ``configs`` list
    (paths or patterns) that match nothing: a clone holds the committed cards of the datasets it
    builds, not their data, so a card alone is no built folder."""
    if not (folder / "README.md").is_file():
        return None
    from bias_hub.builders.shared.card import card_data_files, read_card_yaml

    try:
        card = read_card_yaml(folder)
    except ValueError:
        return []  # the loader names what is wrong with the card
    return [path for path in card_data_files(card) if not _matches(folder, path)]


def _matches(folder: Path, pattern: str) -> bool:
    try:
        return next(folder.glob(pattern), None) is not None
    except (ValueError, NotImplementedError):  # an absolute or empty pattern: the loader judges it
        return True


def _cache_dir(folder: Path) -> Path:
    """A cache folder keyed by the folder's files (names, sizes, modification times): datasets 5
    keys a local folder's cache by name and config, so a rebuilt folder would serve the old
    rows, and ``force_redownload`` lets two processes delete each other's Arrow files."""
    import datasets

    entries = sorted(
        (path.relative_to(folder).as_posix(), stat.st_size, stat.st_mtime_ns)
        for path in folder.rglob("*")
        if path.is_file() and not path.name.startswith(".") and (stat := path.stat())
    )
    key = hashlib.sha256(json.dumps(entries).encode()).hexdigest()[:16]
    return Path(datasets.config.HF_DATASETS_CACHE) / "bias-hub" / f"{folder.name}-{key}"


def load_dataset_split(folder: str | os.PathLike[str], config: str, split: str | None = "test"):
    """``datasets.load_dataset(folder, config, split=split)``, cached by the folder's contents
    (``_cache_dir``), with errors that name the folder."""
    import datasets

    folder = Path(folder)
    try:
        return datasets.load_dataset(
            str(folder), config, split=split, cache_dir=str(_cache_dir(folder))
        )
    except ValueError as err:
        raise ValueError(f"dataset {folder}: config {config!r}, split {split!r}: {err}") from None


def built_rows(folder: Path, config: str, split: str | None) -> dict[str, list[dict]] | None:
    """The rows of each split of ``config`` (``split`` only, when given), read by pyarrow from the
    Parquet files the card lists: ``load_dataset``'s rows, in its order and types, without its
    builder and Arrow cache (a second a command). None where only ``datasets`` can say what the
    folder means: patterns, several files to a split, another format, an unknown split, files
    whose features (datasets records them in each Parquet file) are not the card's."""
    import datasets
    import pyarrow.parquet as pq

    from bias_hub.builders.shared.card import read_card_yaml

    card = read_card_yaml(folder)
    entry = next((e for e in card.get("configs") or [] if e.get("config_name") == config), None)
    files = entry.get("data_files") if isinstance(entry, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
        return None
    if len({f.get("split") for f in files}) != len(files):
        return None
    info = datasets.info.DatasetInfosDict.from_dataset_card_data(card).get(config)
    if split == "all" and all(f.get("split") != "all" for f in files):
        # datasets' name for every split, in the order of the card's splits
        every = built_rows(folder, config, None)
        if every is None or info is None or list(every) != list(info.splits or {}):
            return None
        return {"all": [row for rows in every.values() for row in rows]}
    paths = {f.get("split"): f.get("path") for f in files if split in (None, f.get("split"))}
    if not paths or not all(
        isinstance(path, str) and path.endswith(".parquet") and (folder / path).is_file()
        for path in paths.values()
    ):
        return None
    rows = {}
    for name, path in paths.items():
        try:
            table = pq.read_table(folder / path)
        except (OSError, ValueError) as err:  # pyarrow's errors name neither folder nor file
            raise ValueError(
                f"dataset {folder}: {path}: not a readable Parquet file ({err})"
            ) from None
        if info is None or datasets.Features.from_arrow_schema(table.schema) != info.features:
            return None
        rows[name] = table.to_pylist()
    return rows


def dataset_rows(folder: Path, config: str, split: str | None) -> tuple[list[dict], list[str]]:
    """The config's rows (every split when ``split`` is None) and the splits read: by pyarrow
    where ``built_rows`` can, else through ``load_dataset``."""
    import datasets

    read = built_rows(folder, config, split)
    if read is not None:
        return [row for rows in read.values() for row in rows], list(read)
    # to_list: a row at a time, datasets formats every row on its own (15 s for 12,000 rows).
    if split is not None:
        return load_dataset_split(folder, config, split).to_list(), [split]
    loaded = load_dataset_split(folder, config, None)
    if isinstance(loaded, datasets.Dataset):
        return loaded.to_list(), ["(single)"]
    names = list(loaded)
    return [row for name in names for row in loaded[name].to_list()], names


def metric_folder(name: str, metrics_root: str | os.PathLike[str] | None = None) -> Path:
    folder = _root(metrics_root, "metrics") / name
    if not (folder / f"{name}.py").is_file():
        raise FileNotFoundError(
            f"--metrics-root: {folder} holds no {name}.py; point --metrics-root at the folder "
            "that holds the project's metrics/"
        )
    return folder


def import_evaluate():
    """``import evaluate`` without its ``evaluator``, which imports transformers' pipelines and
    torch (12 s of CPU here; huggingface/evaluate#674). No metric module uses it: transformers
    is hidden (``None`` in ``sys.modules``) while evaluate is first imported, then put back."""
    if "evaluate" not in sys.modules:
        saved = sys.modules.get("transformers")
        sys.modules["transformers"] = None
        try:
            import evaluate  # noqa: F401
        finally:
            if saved is None:
                del sys.modules["transformers"]
            else:
                sys.modules["transformers"] = saved
    return sys.modules["evaluate"]


def load_metric(
    name: str, metrics_root: str | os.PathLike[str] | None = None, config_name: str | None = None
):
    """``evaluate.load("<metrics_root>/<name>")``, exactly as a user would."""
    return import_evaluate().load(str(metric_folder(name, metrics_root)), config_name)


def _metric_package(folder: Path) -> str:
    """A package standing for a metric folder, so that its same-folder imports (``from
    .bias_hub_common import ...``) resolve as they do under ``evaluate.load``."""
    import types

    if not (folder / f"{folder.name}.py").is_file():
        raise FileNotFoundError(f"{folder}: no metric module {folder.name}.py in it")
    package = f"_bias_hub_metric_{folder.name}"
    if package not in sys.modules:
        module = types.ModuleType(package)
        module.__path__ = [str(folder)]
        sys.modules[package] = module
    return package


def import_metric_module(folder: str | os.PathLike[str]):
    """The Python module of a metric folder (its evaluate class): for tests and benchmarks
    that need the module as evaluate sees it."""
    import importlib

    package = _metric_package(Path(folder).resolve())
    import_evaluate()  # the module's own `import evaluate` then finds it
    return importlib.import_module(f"{package}.{Path(folder).resolve().name}")


def import_scores_module(folder: str | os.PathLike[str]):
    """The computation of a metric folder (``<name>_scores.py``), imported without evaluate."""
    import importlib

    folder = Path(folder).resolve()
    return importlib.import_module(f"{_metric_package(folder)}.{folder.name}_scores")


def metric_scores(
    name: str, metrics_root: str | os.PathLike[str] | None = None, config_name: str | None = None
) -> Scores:
    """The computation of ``metrics/<name>`` in config ``config_name``: its ``compute`` gives
    what ``evaluate.load(folder, config_name).compute`` gives, without importing evaluate,
    datasets or the model libraries evaluate brings."""
    module = import_scores_module(metric_folder(name, metrics_root))
    (scores_class,) = (
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and value.__module__ == module.__name__
        and issubclass(value, module.Scores)
    )
    return scores_class(config_name)
