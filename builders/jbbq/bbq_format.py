"""Shared by ``bias-hub build jbbq`` and ``bias-hub build bbq``: source files (question JSON lines
as BBQ and JBBQ ship them, or template CSVs the expander turns into questions) -> validated rows
of ``bias_hub.builders.jbbq.schema`` -> one config per category plus ``all``.

Splits are by template (``question_index``): within each category the templates are shuffled
with ``random.Random(f"{seed}:{category}")`` and cut 20 % train / 10 % dev / 70 % test (at least
one each), so no template is in two splits and ``all`` holds the same assignment. Test is the
benchmark, train the few-shot pool, dev for choosing prompts. Both papers evaluate every
question: ``split="all"``, the ``datasets`` name for the union of a config's splits.
"""

from __future__ import annotations

import gzip
import json
import logging
import lzma
import random
import re
import tarfile
import tempfile
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from bias_hub.builders.jbbq.schema import (
    ANSWER_KEYS,
    FEATURES,
    RowError,
    stereotyped_answer,
    validate_row,
)
from bias_hub.builders.jbbq.templates import (
    ENGLISH_UNKNOWN_OPTIONS,
    JAPANESE_UNKNOWN_OPTIONS,
    Template,
    TemplateError,
    expand_templates,
    read_proper_names,
    read_templates,
    read_vocabulary,
    stereotyped_groups_of,
)
from bias_hub.builders.shared.console import progress
from bias_hub.builders.shared.files import open_text

__all__ = [
    "SPLIT_RATIOS",
    "BuiltRows",
    "assign_splits",
    "build_configs",
    "canonical_category",
    "category_of",
    "load_rows",
    "normalise_question_row",
    "opened_source",
    "split_counts_table",
]

SPLIT_RATIOS = {"train": 0.2, "dev": 0.1, "test": 0.7}
_ARCHIVE_SUFFIXES = (".zip", ".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz")
_TEMPLATE_PREFIX = "new_templates - "  # BBQ's template file names
# The fields a question row must have, in the order a missing one is reported.
_QUESTION_KEYS = (
    *"example_id question_index question_polarity context_condition category answer_info".split(),
    *("context", "question", *ANSWER_KEYS, "label"),
)

logger = logging.getLogger(__name__)


@dataclass
class BuiltRows:
    """Validated rows and what the build report says about them."""

    rows: list[dict]
    files: list[Path]
    kind: str  # "questions" or "templates"
    undecided_stereotype: Counter = field(default_factory=Counter)
    # (where, why) of question rows left out with skip_invalid=True
    skipped: list[tuple[str, str]] = field(default_factory=list)


@contextmanager
def opened_source(path: str | Path) -> Iterator[Path]:
    """What to read: the path itself (a folder or a single file), or an unpacked archive."""
    path = Path(path).expanduser()
    if not path.exists():
        raise FileNotFoundError(f"--source {path}: no such file or directory")
    if not (path.is_file() and path.name.lower().endswith(_ARCHIVE_SUFFIXES)):
        yield path
        return
    with tempfile.TemporaryDirectory(prefix="bias-hub-source-") as tmp:
        target = Path(tmp)
        try:
            if path.name.lower().endswith(".zip"):
                with zipfile.ZipFile(path) as archive:
                    for member in archive.namelist():
                        if member.startswith("/") or ".." in Path(member).parts:
                            raise ValueError(
                                f"--source {path}: archive member {member!r} escapes the archive"
                            )
                    archive.extractall(target)
            else:
                with tarfile.open(path) as archive:
                    archive.extractall(target, filter="data")
        # A truncated or damaged compressed archive ends in EOFError or a decompressor's error.
        except (
            zipfile.BadZipFile,
            tarfile.TarError,
            EOFError,
            zlib.error,
            gzip.BadGzipFile,
            lzma.LZMAError,
        ) as err:
            raise ValueError(
                f"--source {path}: not a readable archive ({type(err).__name__}: {err})"
            ) from None
        yield target


def _visible(paths: list[Path]) -> list[Path]:
    return sorted(
        p for p in paths if not any(part.startswith((".", "__MACOSX")) for part in p.parts[-3:])
    )


def _natural_key(text: str) -> tuple:
    return tuple(int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text))


def normalise_question_row(
    raw: dict,
    where: str,
    categories: tuple[str, ...],
    template_groups: dict[tuple[str, str], list[str]] | None = None,
) -> dict:
    """A question row as BBQ/JBBQ ship it -> a validated row of ``FEATURES``.

    ``template_groups`` ({(category, Q_id): Known_stereotyped_groups}, from
    template CSVs shipped beside the questions) fills in ``stereotyped_groups``
    where a row's metadata lacks them.
    """
    if not isinstance(raw, dict):
        raise RowError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    for key in _QUESTION_KEYS:
        if key not in raw:
            raise RowError(f"{where}: field {key!r} is missing")
    info = raw["answer_info"]
    if isinstance(info, dict):
        if set(info) != set(ANSWER_KEYS):
            raise RowError(
                f"{where}: field 'answer_info' must have keys ans0, ans1, ans2, got {sorted(info)}"
            )
        pairs = [info[key] for key in ANSWER_KEYS]
        if not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in pairs):
            raise RowError(f"{where}: field 'answer_info' must map each answer to [text, group]")
        answer_info = [{"text": str(p[0]), "group": str(p[1])} for p in pairs]
    elif isinstance(info, list) and all(isinstance(a, dict) for a in info):
        answer_info = [
            {"text": str(a.get("text", "")), "group": str(a.get("group", ""))} for a in info
        ]
    else:
        raise RowError(f"{where}: field 'answer_info' has an unexpected shape: {info!r}")
    if len(answer_info) != 3:
        raise RowError(
            f"{where}: field 'answer_info' must describe 3 answers, got {len(answer_info)}"
        )
    # JBBQ's README spells the field "additional_metadeta"; accept both.
    meta = raw.get("additional_metadata") or raw.get("additional_metadeta") or {}
    if not isinstance(meta, dict):
        raise RowError(f"{where}: field 'additional_metadata' must be an object")
    groups = meta.get("stereotyped_groups") or []
    if isinstance(groups, str):
        groups = [groups]
    if not groups and template_groups:
        groups = template_groups.get((str(raw["category"]), str(raw["question_index"])), [])
    for key in ("example_id", "label"):
        value = raw[key]
        if isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise RowError(f"{where}: field {key!r} must be an integer, got {raw[key]!r}")
        raw = {**raw, key: value}
    if not 0 <= raw["label"] <= 2:
        raise RowError(f"{where}: field 'label' is {raw['label']}; expected 0, 1 or 2")
    unknowns = [i for i, a in enumerate(answer_info) if a["group"].strip().lower() == "unknown"]
    if len(unknowns) != 1:
        raise RowError(
            f"{where}: field 'answer_info' must mark exactly one answer as 'unknown', found "
            f"{len(unknowns)}"
        )
    additional = raw.get("is_additional", False)
    if isinstance(additional, str):
        additional = additional.strip().lower() in ("1", "true", "yes")
    groups = [str(g) for g in groups]
    stereotyped = stereotyped_answer(
        answer_info, raw["question_polarity"], groups, unknowns[0], str(raw["category"])
    )
    row = {
        "example_id": raw["example_id"],
        "question_index": str(raw["question_index"]),
        "question_polarity": raw["question_polarity"],
        "context_condition": raw["context_condition"],
        "category": raw["category"],
        "answer_info": answer_info,
        "additional_metadata": {
            "subcategory": str(meta.get("subcategory", "None")),
            "stereotyped_groups": groups,
            "version": str(meta.get("version", "None")),
            "source": str(meta.get("source", "")),
        },
        "context": raw["context"],
        "question": raw["question"],
        **{key: raw[key] for key in ANSWER_KEYS},
        "label": raw["label"],
        "unknown_label": unknowns[0],
        "stereotyped_label": stereotyped,
        "is_additional": bool(additional),
    }
    validate_row(row, where, categories)
    return row


def canonical_category(value: str, categories: tuple[str, ...]) -> str:
    """``GenderIdentity`` / ``gender identity`` -> ``Gender_identity``: BBQ's template CSVs
    spell categories without underscores (its generator takes the name from the file)."""
    loose = {c.replace("_", "").lower(): c for c in categories}
    return loose.get(value.replace("_", "").replace(" ", "").lower(), value.strip())


def category_of(template: Template, categories: tuple[str, ...]) -> str:
    """The template's category: named by its file (``new_templates - Race_x_gender.csv``,
    ``Age.csv``) where the file names one, as BBQ's generator takes it, else its
    ``Category`` column. (BBQ's Race_x_gender file says ``Gender_x_race`` there.)"""
    stem = template.path.stem
    if stem.lower().startswith(_TEMPLATE_PREFIX):
        stem = stem[len(_TEMPLATE_PREFIX) :]
    from_file = canonical_category(stem, categories)
    if from_file in categories:
        return from_file
    return canonical_category(template.get("Category"), categories)


def _is_filler(path: Path) -> bool:
    return "filler_items" in path.name.lower()


def _template_groups(root: Path, categories: tuple[str, ...]) -> dict[tuple[str, str], list[str]]:
    """{(category, Q_id): stereotyped groups} from any template CSVs under ``root``.

    CSVs that are not templates (no template columns) are ignored here.
    """
    groups: dict[tuple[str, str], list[str]] = {}
    for path in _visible(list(root.rglob("*.csv"))):
        if _is_filler(path):
            continue
        try:
            templates = read_templates(path)
        except TemplateError:
            continue
        for template in templates:
            try:
                found = stereotyped_groups_of(template)
            except TemplateError:
                continue
            if found:
                groups.setdefault((category_of(template, categories), template.get("Q_id")), found)
    return groups


def _question_files(root: Path) -> list[Path]:
    """The question files under ``root``: in a BBQ or JBBQ checkout the ``data/*.jsonl``
    files only (BBQ's ``results/UnifiedQA/preds_*.jsonl`` are model outputs), else every ``*.jsonl``."""
    files = _visible(list(root.rglob("*.jsonl")))
    in_data = [f for f in files if f.parent.name == "data"]
    if in_data and len(in_data) < len(files):
        ignored = [f for f in files if f not in in_data]
        logger.info(
            "reading the %d question file(s) in data/ only; ignored %d other .jsonl file(s) such as %s",
            len(in_data),
            len(ignored),
            ignored[0].relative_to(root),
        )
        return in_data
    return files


def _read_question_files(
    files: list[Path],
    categories: tuple[str, ...],
    skipped: list[tuple[str, str]] | None,
    template_groups: dict[tuple[str, str], list[str]] | None = None,
) -> list[tuple[dict, str]]:
    """Validated rows with where each came from; with ``skipped`` a list, bad rows go
    there instead of raising."""
    rows = []
    for path in progress(files, desc="reading question files", unit="file"):
        with open_text(path) as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                where = f"{path}, line {number}"
                try:
                    try:
                        raw = json.loads(line)
                    except json.JSONDecodeError as err:
                        raise RowError(f"{where}: not valid JSON ({err.msg})") from err
                    rows.append(
                        (normalise_question_row(raw, where, categories, template_groups), where)
                    )
                except RowError as err:
                    if skipped is None:
                        raise
                    skipped.append((where, str(err)))
    return rows


def _expand_template_files(
    source: Path, files: list[Path], categories: tuple[str, ...], language: str, seed: int
) -> tuple[list[tuple[dict, str]], list[Path]]:
    """Rows expanded from template CSVs (with ``vocabulary.csv`` and BBQ's
    ``vocabulary_proper_names.csv`` beside them), and the files read."""
    vocab_files = [f for f in files if f.name.lower() == "vocabulary.csv"]
    name_files = [f for f in files if f.name.lower() == "vocabulary_proper_names.csv"]
    template_files = []
    for f in files:
        if f.suffix.lower() != ".csv" or f in vocab_files or f in name_files:
            continue
        if _is_filler(f):
            logger.info(
                "%s: skipped; BBQ's filler items are finished questions for its crowd validation, "
                "not templates (BBQ's generator does not read them)",
                f,
            )
            continue
        template_files.append(f)
    if not template_files:
        raise ValueError(
            f"--source {source}: found no question files (*.jsonl) and no template CSVs; "
            "this does not look like a BBQ/JBBQ release"
        )
    beside = template_files[0].parent
    if not vocab_files and (beside / "vocabulary.csv").exists():
        vocab_files = [beside / "vocabulary.csv"]
    if not name_files and (beside / "vocabulary_proper_names.csv").exists():
        name_files = [beside / "vocabulary_proper_names.csv"]
    vocabulary = read_vocabulary(vocab_files[0]) if vocab_files else None
    proper_names = read_proper_names(name_files[0]) if name_files else None
    templates = [t for path in template_files for t in read_templates(path)]
    for template in templates:
        template.fields["Category"] = category_of(template, categories)
        if template.get("Category") not in categories:
            raise RowError(
                f"{template.where}: field 'Category' is {template.get('Category')!r}; "
                f"expected one of {', '.join(categories)}"
            )
    english = language == "en"
    rows = expand_templates(
        templates,
        vocabulary,
        proper_names=proper_names,
        unknown_options=ENGLISH_UNKNOWN_OPTIONS if english else JAPANESE_UNKNOWN_OPTIONS,
        context_separator=" " if english else "",
        english=english,
        seed=seed,
    )
    located = [(row, f"template {row['category']}/{row['question_index']}") for row in rows]
    for row, where in located:
        validate_row(row, where, categories)
    return located, template_files + vocab_files[:1] + name_files[:1]


def load_rows(
    source: str | Path,
    categories: tuple[str, ...],
    *,
    language: str,
    seed: int = 0,
    skip_invalid: bool = False,
) -> BuiltRows:
    """Read and validate every row of ``source`` (a directory, file or archive).

    Question files (``*.jsonl``; in a BBQ/JBBQ checkout those in ``data/``) win over
    template CSVs when both are present. A question row that breaks the schema
    is an error, or with ``skip_invalid`` is left out and listed in
    ``BuiltRows.skipped``.
    """
    skipped: list[tuple[str, str]] = []
    source = Path(source)
    with opened_source(source) as root:
        questions = [root] if root.is_file() and root.suffix.lower() == ".jsonl" else []
        if root.is_dir():
            questions = _question_files(root)
        if questions:
            template_groups = _template_groups(root, categories) if root.is_dir() else {}
            located = _read_question_files(
                questions, categories, skipped if skip_invalid else None, template_groups
            )
            files, kind = questions, "questions"
        else:
            candidates = [root] if root.is_file() else _visible(list(root.rglob("*.csv")))
            located, files = _expand_template_files(source, candidates, categories, language, seed)
            kind = "templates"
    if not located:
        raise ValueError(f"--source {source}: no rows found")
    first_seen: dict[tuple[str, int], str] = {}
    for row, where in located:
        key = (row["category"], row["example_id"])
        if key in first_seen:
            raise RowError(
                f"--source {source}: example_id {key[1]} appears twice in category {key[0]!r}: "
                f"{first_seen[key]} and {where}"
            )
        first_seen[key] = where
    if kind == "questions":
        _check_stereotyped_groups(source, located)
    if language == "en":
        _check_english(source, located)
    rows = [row for row, _ in located]
    undecided = Counter(r["category"] for r in rows if r["stereotyped_label"] == -1)
    return BuiltRows(rows, files, kind, undecided, skipped)


def _check_stereotyped_groups(source: Path, located: list[tuple[dict, str]]) -> None:
    """Every question row must name its template's stereotyped groups, from its own
    ``additional_metadata`` or from the template CSVs shipped beside it: without them every
    bias score is undefined (JBBQ's README describes ``additional_metadeta`` as holding only
    the source)."""
    missing = [pair for pair in located if not pair[0]["additional_metadata"]["stereotyped_groups"]]
    if not missing:
        return
    categories = sorted({row["category"] for row, _ in missing})
    raise ValueError(
        f"--source {source}: {len(missing)} of {len(located)} question rows name no stereotyped group "
        f"(first: {missing[0][1]}; categories {', '.join(categories)}): the bias scores need each question's "
        "stereotyped groups, from additional_metadata.stereotyped_groups or from the authors' template CSVs "
        "(their Known_stereotyped_groups column, matched by category and Q_id = question_index); put those "
        "CSVs in the source folder beside the question files and build again"
    )


# Kana, CJK ideographs and full-width forms: text that is not English.
_NOT_ENGLISH = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uff00-\uffef]")


def _check_english(source: Path, located: list[tuple[dict, str]]) -> None:
    """BBQ is English: a row in Japanese (a JBBQ copy given to ``build bbq``) is refused, so a
    non-redistributable dataset is never labelled as BBQ (CC BY 4.0)."""
    for row, where in located:
        for key in ("context", "question", *ANSWER_KEYS):
            found = _NOT_ENGLISH.search(row[key])
            if found:
                raise ValueError(
                    f"{where}: field {key!r} is not English text ({found.group()!r} in {row[key][:40]!r}); "
                    f"--source {source} is not BBQ (a JBBQ copy is built with `bias-hub build jbbq --source`)"
                )


def assign_splits(rows: list[dict], seed: int = 0) -> dict[tuple[str, str], str]:
    """``{(category, question_index): split}``, deterministic in ``seed``."""
    by_category: dict[str, set[str]] = {}
    for row in rows:
        by_category.setdefault(row["category"], set()).add(row["question_index"])
    assignment = {}
    for category, ids in sorted(by_category.items()):
        ordered = sorted(ids, key=_natural_key)
        if len(ordered) < 3:
            raise ValueError(
                f"category {category!r} has {len(ordered)} template(s); splitting train/dev/test "
                "by template needs at least 3"
            )
        random.Random(f"{seed}:{category}").shuffle(ordered)
        n = len(ordered)
        n_train = max(1, round(n * SPLIT_RATIOS["train"]))
        n_dev = max(1, round(n * SPLIT_RATIOS["dev"]))
        if n - n_train - n_dev < 1:
            n_train = n - n_dev - 1
        splits = ["train"] * n_train + ["dev"] * n_dev + ["test"] * (n - n_train - n_dev)
        assignment.update({(category, q_id): s for q_id, s in zip(ordered, splits, strict=True)})
    return assignment


def build_configs(rows: list[dict], category_order: tuple[str, ...], seed: int = 0) -> dict:
    """``{config: {split: Dataset}}`` with one config per category present, plus ``all``.

    The rows are converted to Arrow once (``pyarrow`` against ``FEATURES``'s
    schema; ``Dataset.from_list`` encodes every nested value in Python and took
    20 of 36 s for BBQ's size) and each config/split is a filter of that table.
    """
    import datasets  # heavy: only when the configs are assembled

    assignment = assign_splits(rows, seed)
    order = {c: i for i, c in enumerate(category_order)}
    ordered = sorted(rows, key=lambda r: (order.get(r["category"], len(order)), r["example_id"]))
    table = pa.Table.from_pylist(
        [{key: row[key] for key in FEATURES} for row in ordered], schema=FEATURES.arrow_schema
    )
    categories = np.array([r["category"] for r in ordered], dtype=object)
    splits = np.array(
        [assignment[(r["category"], r["question_index"])] for r in ordered], dtype=object
    )
    present = sorted(set(categories.tolist()), key=lambda c: order.get(c, len(order)))
    info = datasets.DatasetInfo(features=FEATURES)
    configs: dict[str, dict[str, datasets.Dataset]] = {}
    for name in [*present, "all"]:
        in_config = np.ones(len(ordered), dtype=bool) if name == "all" else categories == name
        configs[name] = {
            split: datasets.Dataset(
                datasets.table.InMemoryTable(table.filter(pa.array(in_config & (splits == split)))),
                info=info.copy(),
            )
            for split in SPLIT_RATIOS
        }
    return configs


def split_counts_table(configs: dict) -> tuple[list[str], list[list[object]]]:
    """Rows of (config, templates and questions per split) for the card."""
    headers = ["config", *[f"{s} (templates / questions)" for s in SPLIT_RATIOS]]
    table = []
    for name, splits in configs.items():
        cells: list[object] = [f"`{name}`"]
        for split in SPLIT_RATIOS:
            # Plain lists: iterating datasets 5's lazy columns formats every row (37 s for BBQ).
            columns = splits[split].select_columns(["category", "question_index"]).to_dict()
            templates = len(set(zip(columns["category"], columns["question_index"], strict=True)))
            cells.append(f"{templates} / {len(columns['category']):,}")
        table.append(cells)
    return headers, table


def warn_undecided(built: BuiltRows) -> None:
    """Log the rows kept without a stereotyped answer and the rows skipped."""
    for _where, why in built.skipped[:10]:
        logger.warning("skipped: %s", why)
    if len(built.skipped) > 10:
        logger.warning("skipped %d more invalid row(s)", len(built.skipped) - 10)
    if built.undecided_stereotype:
        detail = ", ".join(f"{c}: {n}" for c, n in sorted(built.undecided_stereotype.items()))
        logger.warning(
            "note: %d row(s) have no single stereotyped answer (stereotyped_label = -1; kept, "
            "and excluded from bias scores): %s",
            sum(built.undecided_stereotype.values()),
            detail,
        )
