"""Dataset cards: the YAML through ``huggingface_hub``, the prose from one template.

A builder states what the data cannot say about itself (``CardMetadata``: licence,
languages, tasks, ...) and the contents of the standard sections (``CardSections``);
``render_card`` derives the rest from the data (``configs``, ``dataset_info`` with
``num_bytes``, the size category) into a ``huggingface_hub.DatasetCardData`` and renders
``dataset_card.md`` (Jinja) with ``DatasetCard.from_template``. Every dataset card
therefore has the same sections under the same headings. ``read_card`` is the one
reader of a whole card (for code that edits or rewrites one); ``read_card_yaml`` reads its
header as ``read_card`` would, without importing ``huggingface_hub``'s card classes, for
commands that only read.
"""

from __future__ import annotations

import copy
import functools
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import datasets
    from huggingface_hub import DatasetCard, DatasetCardData

__all__ = [
    "SIZE_CATEGORIES",
    "TEMPLATE",
    "USER_COPY_KEY",
    "CardMetadata",
    "CardSections",
    "card_data_files",
    "parquet_name",
    "read_card",
    "read_card_yaml",
    "render_card",
    "sections_from_template",
    "size_category",
]

TEMPLATE = Path(__file__).with_name("dataset_card.md")
# The card key that lists the configs built from the user's own copy of the data (and the
# command that built them): written by the builders, read by the pipelines' provenance.
USER_COPY_KEY = "built_from_user_copy"

# The Hub's size buckets (DatasetCardData's documented options), by exclusive upper bound.
SIZE_CATEGORIES = tuple(
    (10 ** (3 + i), name)
    for i, name in enumerate(
        "n<1K 1K<n<10K 10K<n<100K 100K<n<1M 1M<n<10M 10M<n<100M 100M<n<1B 1B<n<10B 10B<n<100B "
        "100B<n<1T".split()
    )
)
LARGEST_SIZE_CATEGORY = "n>1T"


def size_category(n_rows: int) -> str:
    """The Hub's size bucket for a dataset whose largest config has ``n_rows`` rows."""
    for bound, name in SIZE_CATEGORIES:
        if n_rows < bound:
            return name
    return LARGEST_SIZE_CATEGORY


def parquet_name(split: str) -> str:
    return f"{split}-00000-of-00001.parquet"


@dataclass
class CardMetadata:
    """The YAML fields of a dataset card that are not derived from the data."""

    pretty_name: str
    license: str
    language: list[str]
    task_categories: list[str]
    task_ids: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    multilinguality: str = "monolingual"
    annotations_creators: list[str] = field(default_factory=lambda: ["expert-generated"])
    language_creators: list[str] = field(default_factory=lambda: ["expert-generated"])
    source_datasets: list[str] = field(default_factory=lambda: ["original"])
    # Anything else the card needs in its YAML (gated-access fields, for example).
    extra: dict = field(default_factory=dict)


@dataclass
class CardSections:
    """The prose of a dataset card, one Markdown string per standard section of
    ``dataset_card.md`` (``instance``: one row, shown as JSON after ``instance_note``). A section
    may hold ``####`` subsections of its own."""

    summary: str
    instance: Mapping[str, Any]
    fields: str
    splits: str
    source: str
    command: str
    construction: str
    considerations: str
    licensing: str
    citation: str
    instance_note: str = "An instance:"


def sections_from_template(
    template: str | os.PathLike[str], instance: Mapping[str, Any], **values: Any
) -> CardSections:
    """A card's sections from a Jinja file beside the builder (its ``card.md``): one
    ``{% block <section> %}`` per field of ``CardSections`` but ``instance`` (``instance_note``
    optional), rendered with ``values`` (the counts and tables the build computed). A name the
    file uses and ``values`` lacks is an error, not an empty string."""
    import jinja2

    path = Path(template)
    environment = jinja2.Environment(
        loader=jinja2.FileSystemLoader(path.parent),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        autoescape=False,
    )
    loaded = environment.get_template(path.name)
    context = loaded.new_context(values)
    text = {name: "".join(block(context)).strip() for name, block in loaded.blocks.items()}
    return CardSections(instance=instance, **text)


def _card_data(
    metadata: CardMetadata,
    configs: Mapping[str, Mapping[str, datasets.Dataset]],
    default_config: str | None,
) -> DatasetCardData:
    from huggingface_hub import DatasetCardData

    largest = max(sum(len(ds) for ds in splits.values()) for splits in configs.values())
    config_entries, infos = [], []
    for name, splits in configs.items():
        files = [{"split": split, "path": f"{name}/{parquet_name(split)}"} for split in splits]
        default = {"default": True} if name == default_config else {}
        config_entries.append({"config_name": name, "data_files": files, **default})
        infos.append(
            {
                "config_name": name,
                "features": next(iter(splits.values())).features._to_yaml_list(),
                # num_bytes (in-memory Arrow size, as `datasets` records it) keeps
                # load_dataset from discarding the split counts as malformed.
                "splits": [
                    {"name": split, "num_bytes": int(ds.data.nbytes), "num_examples": len(ds)}
                    for split, ds in splits.items()
                ],
                "dataset_size": int(sum(ds.data.nbytes for ds in splits.values())),
            }
        )
    optional = {"task_ids": list(metadata.task_ids) or None, "tags": list(metadata.tags) or None}
    return DatasetCardData(
        pretty_name=metadata.pretty_name,
        license=metadata.license,
        language=list(metadata.language),
        multilinguality=metadata.multilinguality,
        size_categories=[size_category(largest)],
        task_categories=list(metadata.task_categories),
        annotations_creators=list(metadata.annotations_creators),
        language_creators=list(metadata.language_creators),
        source_datasets=list(metadata.source_datasets),
        **{key: value for key, value in optional.items() if value is not None},
        **metadata.extra,
        configs=config_entries,
        dataset_info=infos,
    )


def render_card(
    name: str,
    configs: Mapping[str, Mapping[str, datasets.Dataset]],
    metadata: CardMetadata,
    sections: CardSections | str,
    default_config: str | None = None,
) -> DatasetCard:
    """The card of the dataset folder ``name`` holding ``configs`` ({config: {split: Dataset}}).

    ``sections`` fills the template; a plain string is taken as the whole body
    (for test fixtures, which need a valid header but no prose).
    """
    from huggingface_hub import DatasetCard

    data = _card_data(metadata, configs, default_config)
    if isinstance(sections, str):
        return DatasetCard(f"---\n{data.to_yaml()}\n---\n\n{sections.strip()}\n")
    values = {
        key: value.strip() if isinstance(value, str) else value
        for key, value in vars(sections).items()
    }
    values["instance"] = _instance_json(sections.instance)
    card = DatasetCard.from_template(
        data,
        template_path=str(TEMPLATE),
        name=name,
        default_config=default_config if default_config in configs else next(iter(configs)),
        **values,
    )
    card.text = card.text.rstrip("\n") + "\n"  # Jinja drops the template's final newline
    return card


def _instance_json(row: Mapping[str, Any]) -> str:
    """One field a line, each value compact: word lists and nested answers stay readable."""
    lines = [
        f"  {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)}"
        for key, value in row.items()
    ]
    return "{\n" + ",\n".join(lines) + "\n}"


def read_card(folder: str | os.PathLike[str]) -> DatasetCard:
    """The card of a dataset folder, parsed by ``huggingface_hub.DatasetCard``.

    A card whose YAML header is missing or does not parse is a ``ValueError`` naming it.
    """
    return _parsed_card(*_card_text(folder))


def read_card_yaml(folder: str | os.PathLike[str]) -> dict:
    """The YAML header of ``folder/README.md`` as a dict. A command reads one card from several
    places (its checks, the loader, the run's provenance), so each card's text is parsed once in
    a process; every caller gets its own copy. The dict is ``read_card(folder).data.to_dict()``,
    errors included."""
    return copy.deepcopy(_card_yaml(*_card_text(folder)))


@functools.lru_cache(maxsize=16)
def _card_yaml(text: str, path: Path) -> dict:
    header = _header(text, path)
    if header is None:  # what only DatasetCardData can say, in its own words
        return _parsed_card(text, path).data.to_dict()
    if not header:
        raise _no_header(path)
    return header


# Where a card's YAML header is, by the Hub's rule (huggingface_hub's REGEX_YAML_BLOCK, which
# mirrors the Hub server's): at the very start, after blank space, up to the first line that is
# `---` alone (trailing blanks allowed).
_HEADER_BLOCK = re.compile(r"^\s*---(?:\r\n|\r|\n)([\S\s]*?)(?:\r\n|\r|\n)---[ \t]*(?:\r\n|\n|$)")
# DatasetCardData's named fields, in the order it sets them, then train_eval_index.
_CARD_DATA_FIELDS = tuple(
    "annotations_creators language_creators language license multilinguality size_categories "
    "source_datasets task_categories task_ids paperswithcode_id pretty_name config_names".split()
)


def _header(text: str, path: Path) -> dict | None:
    """``DatasetCard(text).data.to_dict()`` without importing ``huggingface_hub.repocard`` (and its
    Hub client, half a second a command): the same dict, keys in the same order, the same errors
    (a ``ValueError`` naming ``path``). None for a header whose keys DatasetCardData refuses as
    keyword arguments (not strings, or one of its own parameters): its error, not ours."""
    import yaml

    match = _HEADER_BLOCK.search(text)
    try:
        data = yaml.safe_load(match.group(1)) if match else {}
    except Exception as err:  # yaml's own errors, and a ValueError for a date that is none
        raise ValueError(f"{path}: the YAML header does not parse: {err}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ValueError(
            f"{path}: the YAML header does not parse: repo card metadata block should be a dict"
        )
    if any(not isinstance(key, str) or key in ("self", "ignore_metadata_errors") for key in data):
        return None
    # As DatasetCardData keeps it: its named fields first, the rest in the card's order; the
    # train-eval-index (either spelling; the underscored one wins when it is not empty) last.
    rest = {key: value for key, value in data.items() if key not in _CARD_DATA_FIELDS}
    eval_index = rest.pop("train_eval_index", None) or rest.pop("train-eval-index", None)
    ordered = {key: data.get(key) for key in _CARD_DATA_FIELDS} | rest
    ordered["train-eval-index"] = eval_index
    return {key: value for key, value in ordered.items() if value is not None}


def _card_text(folder: str | os.PathLike[str]) -> tuple[str, Path]:
    path = Path(folder) / "README.md"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no dataset card (build the folder first)")
    try:
        # As DatasetCard.load reads a card: its newlines kept, a byte-order mark dropped.
        with path.open(newline="", encoding="utf-8-sig") as file:
            return file.read(), path
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: the YAML header does not parse: {err}") from None


def _parsed_card(text: str, path: Path) -> DatasetCard:
    from huggingface_hub import DatasetCard

    try:
        card = DatasetCard(text)
    except Exception as err:  # yaml and huggingface_hub raise their own types
        raise ValueError(f"{path}: the YAML header does not parse: {err}") from None
    if not card.data.to_dict():
        raise _no_header(path)
    return card


def _no_header(path: Path) -> ValueError:
    return ValueError(f"{path}: no YAML header (license, language, configs, dataset_info)")


def card_data_files(card: Mapping[str, Any], config: str | None = None) -> list[str]:
    """The data files a card's ``configs`` list (of ``config``, or of every config), as paths
    inside the folder."""
    files = []
    for entry in card.get("configs") or []:
        if config is not None and entry.get("config_name") != config:
            continue
        data_files = entry.get("data_files") or []
        for item in data_files if isinstance(data_files, list) else [data_files]:
            paths = item.get("path") if isinstance(item, Mapping) else item
            files += [paths] if isinstance(paths, str) else list(paths or [])
    return files
