"""Dataset folders (``datasets/<name>/``) as Hub dataset repos.

A folder is checked the way the Hub and its viewer will read it: the card (``read_card``),
``configs`` through the parser ``load_dataset`` uses, every data file present, every Parquet
schema equal to the card's ``dataset_info`` features (ClassLabel names included), and a
benchmark's ``eval.yaml`` naming configs and splits the folder holds. Problems are collected,
not raised, so one dry run lists them all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from bias_hub.builders.shared.benchmark import EVAL_YAML, benchmark, eval_yaml_problems
from bias_hub.builders.shared.card import read_card
from bias_hub.pipelines.publish import hub_rules
from bias_hub.pipelines.publish.hub_rules import as_list
from bias_hub.pipelines.publish.plan import PlannedFile, RepoPlan

if TYPE_CHECKING:
    from huggingface_hub import DatasetCard

__all__ = [
    "CheckedDataset",
    "card_metadata_problems",
    "check_dataset_folder",
    "discover_dataset_folders",
    "gated_card",
    "plan_dataset",
]

REDISTRIBUTABLE_KEY = "redistributable"
DEFAULT_GATED_FIELDS = {
    "Name": "text",
    "Affiliation": "text",
    "Intended use": "text",
    "I obtained this data under its authors' terms and will not redistribute it": "checkbox",
}


@dataclass
class CheckedDataset:
    """A dataset folder after the offline checks."""

    folder: Path
    card: DatasetCard | None = None
    yaml_header: dict = field(default_factory=dict)
    # {config: {split: [files]}} resolved from the card's `configs`.
    data_files: dict[str, dict[str, list[Path]]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    built: bool = True

    @property
    def name(self) -> str:
        return self.folder.name

    @property
    def redistribution_refusal(self) -> str | None:
        """Why the card forbids a public upload (``hub_rules.redistribution_refusal``), or None."""
        return hub_rules.redistribution_refusal(self.yaml_header)

    @property
    def redistributable(self) -> bool:
        return self.redistribution_refusal is None


def discover_dataset_folders(root: Path) -> list[Path]:
    """Every dataset folder under ``root`` (hidden staging folders of a running build excluded)."""
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def card_metadata_problems(header: dict) -> list[str]:
    """The fields a dataset repo needs, present; their values are the Hub's to validate."""
    problems = [
        f"card YAML: `{key}` is missing"
        for key in ("license", "language", "task_categories", "size_categories")
        if not as_list(header.get(key))
    ]
    if "other" in as_list(header.get("license")) and not header.get("license_name"):
        problems.append("card YAML: license 'other' needs `license_name` (and `license_link`)")
    if REDISTRIBUTABLE_KEY in header and not isinstance(header[REDISTRIBUTABLE_KEY], bool):
        problems.append(f"card YAML: `{REDISTRIBUTABLE_KEY}` must be true or false")
    return problems


def _check_parquet(path: Path, rel: str, features, problems: list[str]) -> int:
    """Compare one Parquet file with the card's features; return its row count."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path)
    except Exception as err:  # pyarrow raises several types for a corrupt file
        problems.append(f"{rel}: not a readable Parquet file ({err})")
        return 0
    import datasets

    schema = parquet.schema_arrow
    expected = features.arrow_schema
    if schema.names != expected.names:
        problems.append(
            f"{rel}: columns {schema.names} differ from the card's dataset_info features {expected.names}"
        )
        return parquet.metadata.num_rows
    for name in schema.names:
        have, want = schema.field(name).type, expected.field(name).type
        if not have.equals(want):
            problems.append(f"{rel}: column {name!r} is {have} in Parquet but {want} in the card")
    if schema.metadata and b"huggingface" in schema.metadata:
        file_features = datasets.Features.from_arrow_schema(schema)
        for name in schema.names:
            if name in file_features and file_features[name] != features[name]:
                problems.append(
                    f"{rel}: column {name!r} is {file_features[name]!r} in Parquet "
                    f"but {features[name]!r} in the card"
                )
    for index, name in enumerate(schema.names):
        feature = features[name]
        if not isinstance(feature, datasets.ClassLabel):
            continue
        for group in range(parquet.metadata.num_row_groups):
            stats = parquet.metadata.row_group(group).column(index).statistics
            if (
                stats is not None
                and stats.has_min_max
                and (stats.min < -1 or stats.max >= feature.num_classes)
            ):
                problems.append(
                    f"{rel}: column {name!r} holds labels {stats.min}..{stats.max} but the card "
                    f"names {feature.num_classes} classes {feature.names}"
                )
                break
    return parquet.metadata.num_rows


def _dataset_infos(header: dict) -> dict[str, tuple[object, dict[str, int]]]:
    """``{config: (Features or None, {split: num_examples})}`` from the card's ``dataset_info``.

    Read directly rather than through ``datasets.DatasetInfosDict``, which drops
    a ``splits`` entry that lacks ``num_bytes``.
    """
    import datasets

    entries = as_list(header.get("dataset_info"))
    infos = {}
    for entry in entries:
        if not isinstance(entry, dict):
            raise ValueError(f"a dataset_info entry is not a mapping: {entry!r}")
        features = entry.get("features")
        splits = {
            str(split["name"]): split.get("num_examples")
            for split in as_list(entry.get("splits"))
            if isinstance(split, dict) and "name" in split
        }
        infos[entry.get("config_name", "default")] = (
            datasets.Features._from_yaml_list(features) if features else None,
            splits,
        )
    return infos


def _linked_outside(folder: Path, files: list[Path], where: str, split: str) -> list[str]:
    """Data files that are links to a file outside the folder: a push would upload what they
    point to (another dataset's rows, a licensed copy) under this folder's card and licence."""
    inside = folder.resolve()
    return [
        f"{where}, split {split!r}: data file {path.relative_to(folder)} is a link to "
        f"{path.resolve()}, outside the folder; copy the file in if it belongs here"
        for path in files
        if not path.resolve().is_relative_to(inside)
    ]


def check_dataset_folder(folder: Path) -> CheckedDataset:
    """Run every offline check on one dataset folder."""
    from datasets.data_files import sanitize_patterns
    from datasets.utils.metadata import MetadataConfigs

    checked = CheckedDataset(folder=folder)
    problems = checked.problems
    build_hint = f"run `bias-hub build {folder.name}`"
    parquet_files = [
        p
        for p in folder.rglob("*.parquet")
        if not any(part.startswith(".") for part in p.relative_to(folder).parts)
    ]
    readme = folder / "README.md"
    if not readme.is_file() or not parquet_files:
        checked.built = False
        missing = "README.md card" if not readme.is_file() else "Parquet files"
        problems.append(f"{folder} was never built (no {missing}): {build_hint}")
        if not readme.is_file():
            return checked
    try:
        card = read_card(folder)
    except ValueError as err:
        problems.append(str(err))
        return checked
    checked.card = card
    checked.yaml_header = card.data.to_dict()
    problems += card_metadata_problems(checked.yaml_header)

    try:
        configs = MetadataConfigs.from_dataset_card_data(card.data)
        infos = _dataset_infos(checked.yaml_header)
        # {config: {split: [patterns]}}, as load_dataset reads `data_files`
        patterns = {
            name: sanitize_patterns(config["data_files"]) if config.get("data_files") else {}
            for name, config in configs.items()
        }
    except Exception as err:  # datasets raises ValueError, TypeError or KeyError on bad shapes
        problems.append(f"{readme}: `configs` / `dataset_info` are malformed: {err}")
        return checked
    if not configs:
        problems.append(f"{readme}: the YAML has no `configs` listing the data files")
    try:
        configs.get_default_config_name()
    except ValueError as err:
        problems.append(f"{readme}: {err}")
    formats: set[str] = set()
    largest = 0
    for config_name in configs:
        where = f"{folder.name}: config {config_name!r}"
        features, declared = infos.get(config_name, (None, {}))
        if features is None:
            problems.append(f"{where}: no `dataset_info` entry with features in the card")
        resolved: dict[str, list[Path]] = {}
        config_rows = 0
        for split, split_patterns in patterns[config_name].items():
            files: list[Path] = []
            for pattern in map(str, split_patterns):
                if Path(pattern).is_absolute() or ".." in Path(pattern).parts:
                    problems.append(
                        f"{where}, split {split!r}: data file {pattern} is outside the folder"
                    )
                    continue
                matches = sorted(p for p in folder.glob(pattern) if p.is_file())
                problems += _linked_outside(folder, matches, where, split)
                if not matches:
                    problems.append(
                        f"{where}, split {split!r}: data file {pattern} does not exist ({build_hint})"
                    )
                files += matches
            resolved[split] = files
            rows = 0
            for path in files:
                formats.add(path.suffix)
                if features is not None and path.suffix == ".parquet":
                    rows += _check_parquet(
                        path, f"{folder.name}/{path.relative_to(folder)}", features, problems
                    )
            if files and features is not None and declared.get(split) not in (None, rows):
                problems.append(
                    f"{where}, split {split!r}: the card says {declared[split]} examples, "
                    f"the Parquet files hold {rows}"
                )
            config_rows += rows
        checked.data_files[config_name] = resolved
        largest = max(largest, config_rows)
    if len(formats) > 1:
        problems.append(
            f"{folder.name}: data files mix formats {sorted(formats)}; the viewer needs one"
        )
    if formats - {".parquet"}:
        problems.append(f"{folder.name}: data files must be Parquet, found {sorted(formats)}")
    problems += _benchmark_problems(folder, checked.data_files)
    sizes = as_list(checked.yaml_header.get("size_categories"))
    if largest and sizes and hub_rules.size_category(largest) not in sizes:
        problems.append(
            f"{folder.name}: size_categories {sizes} but the largest config has {largest} rows "
            f"({hub_rules.size_category(largest)})"
        )
    return checked


def _benchmark_problems(folder: Path, data_files: dict[str, dict[str, list[Path]]]) -> list[str]:
    """A benchmark dataset's ``eval.yaml``: present, and its tasks on configs and splits the
    folder holds (the Hub validates the file at push time; we do it before any push)."""
    if not (folder / EVAL_YAML).is_file():
        if benchmark(folder.name) is None:
            return []
        return [
            f"{folder}: no {EVAL_YAML} (a Hub Benchmark's tasks): rebuild it with `bias-hub build {folder.name}`"
        ]
    built = {
        config: [s for s, files in splits.items() if files] for config, splits in data_files.items()
    }
    return eval_yaml_problems(folder, built)


def gated_card(checked: CheckedDataset) -> bytes:
    """The card with the Hub's access-request fields added (kept if the card already has them)."""
    from huggingface_hub import DatasetCard

    if checked.card is None:
        raise ValueError(f"{checked.folder}: no card to gate")
    card = DatasetCard(checked.card.content)  # a copy: the checked card stays as read
    licence = ", ".join(str(v) for v in as_list(card.data.get("license"))) or "its authors' licence"
    defaults = {
        "extra_gated_prompt": f"{card.data.get('pretty_name', checked.name)} may not be redistributed "
        f"({licence}). Request access only if you obtained the data from its authors or accept "
        "their terms, and do not share these files further.",
        "extra_gated_fields": dict(DEFAULT_GATED_FIELDS),
        "extra_gated_button_content": "Request access",
    }
    for key, value in defaults.items():
        if card.data.get(key) is None:
            card.data[key] = value
    return str(card).encode()


def plan_dataset(checked: CheckedDataset, namespace: str, private: bool) -> RepoPlan:
    """The dataset repo for one checked folder: card first, then every data file."""
    plan = RepoPlan(
        name=checked.name,
        kind="dataset",
        repo_id=f"{namespace}/{checked.name}",
        repo_type="dataset",
        private=private,
        problems=list(checked.problems),
    )
    if not checked.redistributable:
        if private:
            plan.gated = True
        else:
            plan.problems.insert(
                0,
                f"refused: {checked.name} may not be public: {checked.redistribution_refusal}; "
                "pass --private to upload it as a private, gated repo",
            )
    readme = checked.folder / "README.md"
    if readme.is_file():
        if plan.gated and checked.card is not None:
            plan.files.append(PlannedFile("README.md", content=gated_card(checked)))
        else:
            plan.files.append(PlannedFile("README.md", source=readme))
    seen: set[Path] = {readme}
    if (checked.folder / EVAL_YAML).is_file():
        seen.add(checked.folder / EVAL_YAML)
        plan.files.append(PlannedFile(EVAL_YAML, source=checked.folder / EVAL_YAML))
    for splits in checked.data_files.values():
        for files in splits.values():
            for path in files:
                if path not in seen:
                    seen.add(path)
                    plan.files.append(
                        PlannedFile(path.relative_to(checked.folder).as_posix(), source=path)
                    )
    plan.ignored = sorted(
        path.relative_to(checked.folder).as_posix()
        for path in checked.folder.rglob("*")
        if path.is_file()
        and path not in seen
        and not any(part.startswith(".") for part in path.relative_to(checked.folder).parts)
    )
    return plan
