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
    import pyarrow as pa

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
    name = given.name
    built_here = _is_builder(name)
    if bare:  # a wheel's user has no Makefile
        build = f"`bias-hub build {name}`" + (" (or `make datasets`)" if in_checkout() else "")
    else:
        build = f"`bias-hub build {name} --out-root {folder.parent}`"
    if missing:
        raise FileNotFoundError(
            f"{flag} {dataset}: {folder} has a card but not its data ({', '.join(missing[:3])}"
            f"{' ...' if len(missing) > 3 else ''} missing)"
            + (f"; build it with {build}" if built_here else "")
        )
    if not bare and not folder.is_dir():
        raise FileNotFoundError(
            f"{flag} {dataset}: {'is a file' if folder.exists() else 'no such folder'}; "
            "expected a built dataset folder"
        )
    if built_here:
        how = f"; build it with {build}" + (
            ", or point --datasets-root at the folder that holds it" if bare else ""
        )
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
    import pyarrow.parquet as pq

    from bias_hub.builders.shared.card import read_card_yaml

    card = read_card_yaml(folder)
    entry = next((e for e in card.get("configs") or [] if e.get("config_name") == config), None)
    files = entry.get("data_files") if isinstance(entry, dict) else None
    if not isinstance(files, list) or not all(isinstance(f, dict) for f in files):
        return None
    if len({f.get("split") for f in files}) != len(files):
        return None
    if split == "all" and all(f.get("split") != "all" for f in files):
        # datasets' name for every split, in the order of the card's splits
        every = built_rows(folder, config, None)
        if every is None or list(every) != _card_splits(card, config):
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
            # ParquetFile, not read_table: read_table goes through pyarrow.dataset, which imports
            # pandas (0.6 s) to read one file; both give the same columns and `huggingface` key.
            with pq.ParquetFile(folder / path) as file:
                table = file.read()
        except (OSError, ValueError) as err:  # pyarrow's errors name neither folder nor file
            raise ValueError(
                f"dataset {folder}: {path}: not a readable Parquet file ({err})"
            ) from None
        if not _same_features(card, config, table.schema):
            return None
        rows[name] = table.to_pylist()
    return rows


# Whether a file's features are the card's is decided in a small form of our own for the kinds
# our builders write (Value, ClassLabel, List, nested dicts): ("Value", dtype), ("ClassLabel",
# names), ("List", feature, length), a dict for a struct. Importing datasets only to compare
# them would cost a command more than reading its rows; whatever the form does not cover goes
# to datasets, which decides as it always did.
_ARROW_TYPES = {
    "bool": "bool_",
    **{name: name for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")},
    **{name: name for name in ("uint64", "float16", "float32", "float64", "string")},
    "large_string": "large_string",
}
_VALUE_ALIASES = {"float": "float32", "double": "float64"}  # as Value reads them
# SplitInfo's fields, as a card's dataset_info may give them
_SPLIT_KEYS = frozenset(
    ("name", "num_bytes", "num_examples", "shard_lengths", "original_shard_lengths", "dataset_name")
)


def _value(dtype: object) -> tuple | None:
    dtype = _VALUE_ALIASES.get(dtype, dtype) if isinstance(dtype, str) else None
    return ("Value", dtype) if dtype in _ARROW_TYPES else None


def _card_infos(card: dict) -> dict[object, dict]:
    """The card's ``dataset_info`` entries by config, found as datasets finds them (an entry
    without ``config_name`` is ``default``; of two, the later); none where datasets would read
    them otherwise."""
    infos = card.get("dataset_info")
    infos = [infos] if isinstance(infos, dict) else infos
    if not isinstance(infos, list) or not all(
        isinstance(info, dict) and _splits_as_written(info.get("splits")) for info in infos
    ):
        return {}
    return {info.get("config_name", "default"): info for info in infos}


def _splits_as_written(splits: object) -> bool:
    """Whether a ``dataset_info`` entry's ``splits`` are as datasets writes them: each split once,
    by name, with its byte and example counts."""
    if splits is None:
        return True
    if not isinstance(splits, list) or not all(isinstance(s, dict) for s in splits):
        return False
    names = [s.get("name") for s in splits]
    return (
        all(isinstance(n, str) for n in names)
        and len(set(names)) == len(names)
        and all({"name", "num_bytes", "num_examples"} <= set(s) <= _SPLIT_KEYS for s in splits)
    )


def _card_splits(card: dict, config: str) -> list[str] | None:
    """The names of ``config``'s splits in the card's ``dataset_info``, in its order."""
    infos = _card_infos(card)
    if config in infos:
        return [split["name"] for split in infos[config].get("splits") or []]
    info = _datasets_info(card, config)
    return list(info.splits or {}) if info is not None else None


def _same_features(card: dict, config: str, schema: pa.Schema) -> bool:
    """Whether ``datasets.Features.from_arrow_schema(schema)`` equals the card's features of
    ``config``; datasets itself is asked only where our form cannot tell."""
    ours = _card_features(card).get(config)
    if ours is not None and ours == _schema_features(schema):
        return True
    import datasets

    info = _datasets_info(card, config)
    return info is not None and datasets.Features.from_arrow_schema(schema) == info.features


def _card_features(card: dict) -> dict:
    """Each config's features in the card's ``dataset_info``, in our form; none at all where any
    config's are outside it (datasets reads them all, and may refuse the card for one)."""
    forms = {name: info.get("features") for name, info in _card_infos(card).items()}
    ours = {name: _card_feature(form) for name, form in forms.items() if form is not None}
    return {} if None in ours.values() else ours


def _datasets_info(card: dict, config: str):
    import datasets

    return datasets.info.DatasetInfosDict.from_dataset_card_data(card).get(config)


def _card_feature(form: object) -> object:
    """A feature in the card's YAML form (a list of ``name:`` entries for a struct, the top level
    included; ``dtype: string``; ``list:`` / ``sequence:``; ``struct:``; ``dtype: {class_label:
    {names: {'0': ...}}}``) in our form, None for any other kind."""
    if isinstance(form, list):
        if not all(isinstance(f, dict) and isinstance(f.get("name"), str) for f in form):
            return None
        fields = {
            f["name"]: _card_feature({k: v for k, v in f.items() if k != "name"}) for f in form
        }
        return fields if len(fields) == len(form) and None not in fields.values() else None
    if not isinstance(form, dict) or not form:
        return None
    kind = next(iter(form))  # datasets reads the first key as the kind
    inner = form[kind]
    if kind in ("list", "sequence") and set(form) <= {kind, "length"}:
        if kind == "sequence" and isinstance(inner, list):
            return None  # datasets' old form of a dict of lists
        feature = _card_feature({"dtype": inner} if isinstance(inner, str) else inner)
        return _list(feature, form.get("length", -1))
    if len(form) != 1:
        return None
    if kind == "struct":
        return _card_feature(inner) if isinstance(inner, list) else None
    if kind != "dtype":
        return None
    if isinstance(inner, dict) and list(inner) == ["class_label"]:
        label = inner["class_label"]
        if isinstance(label, dict) and list(label) == ["names"]:
            return _class_label(_card_label_names(label["names"]))
        return None
    return _value(inner)


def _class_label(names: object) -> tuple | None:
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        return None
    return ("ClassLabel", tuple(names))


def _card_label_names(names: object) -> object:
    """The card's ``{'0': name, '1': name}`` as the list datasets makes of it (ids 0, 1, ...
    each once; anything else is left for datasets to judge); a list stays as it is."""
    if not isinstance(names, dict):
        return names
    ids = [str(key) for key in names if isinstance(key, str) or type(key) is int]
    if sorted(ids) != sorted(str(i) for i in range(len(names))):
        return None
    return [names[i] if i in names else names[str(i)] for i in range(len(names))]


def _schema_features(schema: pa.Schema) -> dict | None:
    """The features datasets reads from a Parquet file's schema, in our form: each column's
    recorded feature (``huggingface`` metadata), where its Arrow type is the column's."""
    import pyarrow as pa

    try:
        recorded = json.loads((schema.metadata or {})[b"huggingface"])["info"]["features"]
    except (KeyError, TypeError, ValueError):
        return None
    features = _json_feature(recorded) if isinstance(recorded, dict) else None
    if not isinstance(features, dict) or len(set(schema.names)) != len(schema.names):
        return None
    for column in schema:
        feature = features.get(column.name)
        if feature is None or pa.field(column.name, _arrow_type(feature)) != column:
            return None  # datasets would infer the feature from the column's type
    return {column.name: features[column.name] for column in schema}


def _json_feature(form: object) -> object:
    """A feature as datasets records it in a Parquet file (``{"dtype": "string", "_type":
    "Value"}``, ``ClassLabel`` with ``names``, ``List`` with ``feature``, a plain dict for a struct)
    in our form, None for any other kind."""
    if not isinstance(form, dict) or not form:
        return None
    kind = form.get("_type")
    if kind is None:
        fields = {name: _json_feature(value) for name, value in form.items()}
        return None if None in fields.values() else fields
    keys = set(form) - {"_type"}
    if kind == "Value" and keys == {"dtype"}:
        return _value(form["dtype"])
    if kind == "ClassLabel" and keys == {"names"}:
        return _class_label(form["names"])
    if kind == "List" and keys in ({"feature"}, {"feature", "length"}):
        return _list(_json_feature(form["feature"]), form.get("length", -1))
    return None


def _list(feature: object, length: object) -> tuple | None:
    """A list of ``feature``, of any length (-1) or of ``length`` items."""
    if feature is None or type(length) is not int or length < -1:
        return None
    return ("List", feature, length)


def _arrow_type(feature: object) -> pa.DataType:
    """The Arrow type datasets gives a feature in our form."""
    import pyarrow as pa

    if isinstance(feature, dict):
        return pa.struct({name: _arrow_type(value) for name, value in feature.items()})
    if feature[0] == "List":
        return pa.list_(_arrow_type(feature[1]), feature[2])
    if feature[0] == "ClassLabel":
        return pa.int64()
    return getattr(pa, _ARROW_TYPES[feature[1]])()


def dataset_rows(folder: Path, config: str, split: str | None) -> tuple[list[dict], list[str]]:
    """The config's rows (every split when ``split`` is None) and the splits read: by pyarrow
    where ``built_rows`` can, else through ``load_dataset``."""
    read = built_rows(folder, config, split)
    if read is not None:
        return [row for rows in read.values() for row in rows], list(read)
    # to_list: a row at a time, datasets formats every row on its own (15 s for 12,000 rows).
    if split is not None:
        return load_dataset_split(folder, config, split).to_list(), [split]
    import datasets

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

    folder = Path(folder).resolve()
    package = _metric_package(folder)
    import_evaluate()  # the module's own `import evaluate` then finds it
    return importlib.import_module(f"{package}.{folder.name}")


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
