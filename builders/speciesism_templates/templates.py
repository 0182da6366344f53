"""Read the reviewed template and animal tables and expand them into rows.

Templates carry two markers: ``<NAME>`` (the animal's name) and ``<MASK>`` (the
slot a masked language model fills). ``<MASK>`` is model-neutral on purpose: a
pipeline replaces it with the model's own mask token (``[MASK]``, ``<mask>``,
...) just before tokenising, so one dataset serves every masked LM.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from bias_hub.builders.shared.files import open_text

MASK_MARKER = "<MASK>"
NAME_MARKER = "<NAME>"
HERE = Path(__file__).resolve().parent
DEFAULT_TEMPLATES = HERE / "templates.tsv"
DEFAULT_ANIMALS = HERE / "animals.tsv"

LANGUAGES = ("en", "ja")
CONFIGS = ("probability", "sentiment")
FORMS = {"probability": ("human", "object"), "sentiment": ("neutral",)}
GROUPS = ("study", "companion", "wild", "control")
# Dataset config name -> (language, template config).
CONFIG_NAMES = {
    "probability": ("en", "probability"),
    "sentiment": ("en", "sentiment"),
    "probability_ja": ("ja", "probability"),
    "sentiment_ja": ("ja", "sentiment"),
}
SPLIT = "test"
ROW_FIELDS = tuple(
    """
    id language template_id template form pronoun relative animal animal_group name text
    """.split()
)
TEMPLATE_FIELDS = ("template_id", "language", "config", "template", "form", "pronoun", "relative")
ANIMAL_FIELDS = ("animal", "group", "en", "en_article", "ja", "note")


@dataclass(frozen=True)
class Template:
    template_id: str
    language: str
    config: str
    template: str
    form: str
    pronoun: str
    relative: str


@dataclass(frozen=True)
class Animal:
    animal: str
    group: str
    names: dict[str, str]
    en_article: str
    note: str


def _read_tsv(path: Path, fields: tuple[str, ...], flag: str) -> list[tuple[int, dict[str, str]]]:
    if path.is_dir():
        raise ValueError(
            f"{flag} {path}: is a folder; expected a TSV file with the columns {list(fields)}"
        )
    if not path.is_file():
        raise FileNotFoundError(f"{flag} {path}: no such file")
    with open_text(path, newline="") as handle:
        reader = csv.DictReader(handle, delimiter="\t")
        missing = [name for name in fields if name not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"{path}: missing column(s) {missing}; expected {list(fields)}")
        return [
            (number, {key: (value or "").strip() for key, value in row.items() if key})
            for number, row in enumerate(reader, start=2)
        ]


def check_template(template: str, where: str) -> None:
    """Exactly one ``<MASK>`` and one ``<NAME>`` marker, or a ValueError naming ``where``."""
    for marker in (MASK_MARKER, NAME_MARKER):
        count = template.count(marker)
        if count != 1:
            raise ValueError(
                f"{where}: template {template!r} has {count} {marker} marker(s); expected exactly one"
            )


def read_templates(path: Path = DEFAULT_TEMPLATES) -> list[Template]:
    templates, seen = [], set()
    for number, row in _read_tsv(path, TEMPLATE_FIELDS, "--templates"):
        where = f"{path}, line {number}"
        if row["template_id"] in seen:
            raise ValueError(f"{where}: template_id {row['template_id']!r} is used twice")
        seen.add(row["template_id"])
        if row["language"] not in LANGUAGES:
            raise ValueError(f"{where}: language {row['language']!r}; expected one of {LANGUAGES}")
        if row["config"] not in CONFIGS:
            raise ValueError(f"{where}: config {row['config']!r}; expected one of {CONFIGS}")
        if row["form"] not in FORMS[row["config"]]:
            raise ValueError(
                f"{where}: form {row['form']!r} for config {row['config']!r}; "
                f"expected one of {FORMS[row['config']]}"
            )
        check_template(row["template"], where)
        templates.append(Template(**{name: row[name] for name in TEMPLATE_FIELDS}))
    return templates


def read_animals(path: Path = DEFAULT_ANIMALS) -> list[Animal]:
    animals, seen = [], set()
    for number, row in _read_tsv(path, ANIMAL_FIELDS, "--animals"):
        where = f"{path}, line {number}"
        if not row["animal"] or row["animal"] in seen:
            raise ValueError(f"{where}: animal {row['animal']!r} is empty or used twice")
        seen.add(row["animal"])
        if row["group"] not in GROUPS:
            raise ValueError(f"{where}: group {row['group']!r}; expected one of {GROUPS}")
        if row["en_article"] not in ("a", "an"):
            raise ValueError(f"{where}: en_article {row['en_article']!r}; expected 'a' or 'an'")
        names = {language: row[language] for language in LANGUAGES}
        for language, name in names.items():
            if not name or MASK_MARKER in name or NAME_MARKER in name:
                raise ValueError(f"{where}: column {language!r} needs the animal's name")
        animals.append(Animal(row["animal"], row["group"], names, row["en_article"], row["note"]))
    return animals


def fill_name(template: str, name: str, language: str, article: str = "a") -> str:
    """Put ``name`` into the ``<NAME>`` slot, fixing the English article before it."""
    if language == "en":
        for before in ("a ", "A "):
            slot = before + NAME_MARKER
            if slot in template:
                fixed = article if before[0] == "a" else article.capitalize()
                return template.replace(slot, f"{fixed} {name}")
    return template.replace(NAME_MARKER, name)


def expand(
    templates: list[Template], animals: list[Animal], language: str, config: str
) -> list[dict]:
    """One row per (template, animal) of a language and config, in file order."""
    return [
        {
            "id": f"{template.template_id}:{animal.animal}",
            "language": language,
            "template_id": template.template_id,
            "template": template.template,
            "form": template.form,
            "pronoun": template.pronoun,
            "relative": template.relative,
            "animal": animal.animal,
            "animal_group": animal.group,
            "name": animal.names[language],
            "text": fill_name(
                template.template, animal.names[language], language, animal.en_article
            ),
        }
        for template in templates
        if template.language == language and template.config == config
        for animal in animals
    ]


def build_rows(
    templates_path: Path = DEFAULT_TEMPLATES, animals_path: Path = DEFAULT_ANIMALS
) -> dict[str, list[dict]]:
    """``{dataset config: rows}`` for every config of ``CONFIG_NAMES``."""
    templates = read_templates(Path(templates_path))
    animals = read_animals(Path(animals_path))
    rows = {}
    for config, (language, kind) in CONFIG_NAMES.items():
        rows[config] = expand(templates, animals, language, kind)
        if not rows[config]:
            raise ValueError(f"{templates_path}: no {language} templates for config {kind!r}")
    return rows
