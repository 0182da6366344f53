"""JBBQ prompts as data: load the versioned YAML files, pick few-shot examples, render.

A prompt is its words (``prompts/<name>.yaml``: the instruction, appendix A.1 of Yanaka et
al., 2024) and a layout (``prompts/layouts/<layout>.yaml``: how a harness wraps them;
``llm-jp-eval`` is the harness the paper ran, ``compact`` ours). A prompt file of your own may
hold every field itself. A rendered question is chat messages (system, a user/assistant pair
per shot, the user turn) or one plain string (``plain.header`` + ``plain.shot`` per shot +
``plain.query``).
"""

from __future__ import annotations

import random
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bias_hub.builders.shared.files import read_text

__all__ = [
    "DEFAULT_LAYOUT",
    "LAYOUTS",
    "LAYOUT_DIR",
    "PROMPT_DIR",
    "PROMPT_NAMES",
    "PromptSpec",
    "load_layout",
    "load_prompt",
    "select_shots",
    "template_key",
]

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
LAYOUT_DIR = PROMPT_DIR / "layouts"
LAYOUTS = ("llm-jp-eval", "compact")
DEFAULT_LAYOUT = "llm-jp-eval"
# A prompt file that holds these fields itself has its own layout.
_OWN_LAYOUT = "own"
# The paper's three prompts, in the order its tables and Figure 1 use.
PROMPT_NAMES = ("basic", "unknown", "paraphrase")

_QUESTION_FIELDS = ("context", "question", "ans0", "ans1", "ans2")
# field -> placeholders it must use, and may use
_PLACEHOLDERS = {
    "system": {"instruction"},
    "user": set(_QUESTION_FIELDS),
    "assistant": {"answer"},
    "plain.header": {"system"},
    "plain.shot": {"user", "assistant"},
    "plain.query": {"user"},
}


def _placeholders(template: str, where: str) -> set[str]:
    try:
        return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as err:
        raise ValueError(f"{where}: not a valid template ({err})") from err


@dataclass(frozen=True)
class PromptSpec:
    """One prompt variant, exactly as its file states it."""

    name: str
    version: str
    system: str
    user: str
    assistant: str
    plain_header: str
    plain_shot: str
    plain_query: str
    description: str = ""
    path: str = ""
    # the layout's name@version, or "own" (the prompt file lays itself out)
    layout: str = _OWN_LAYOUT

    @property
    def label(self) -> str:
        return f"{self.name}@{self.version}"

    def user_text(self, row: Mapping) -> str:
        return self.user.format(**{key: row[key] for key in _QUESTION_FIELDS})

    def assistant_text(self, answer: int) -> str:
        return self.assistant.format(answer=answer)

    def messages(self, row: Mapping, shots: Sequence[Mapping] = ()) -> list[dict[str, str]]:
        """Chat messages: system, one user/assistant pair per shot, the question."""
        messages = [{"role": "system", "content": self.system}]
        for shot in shots:
            messages.append({"role": "user", "content": self.user_text(shot)})
            messages.append({"role": "assistant", "content": self.assistant_text(shot["label"])})
        messages.append({"role": "user", "content": self.user_text(row)})
        return messages

    def plain(self, row: Mapping, shots: Sequence[Mapping] = ()) -> str:
        """One string for models without a chat template; the answer index follows it."""
        parts = [self.plain_header.format(system=self.system)]
        for shot in shots:
            parts.append(
                self.plain_shot.format(
                    user=self.user_text(shot), assistant=self.assistant_text(shot["label"])
                )
            )
        parts.append(self.plain_query.format(user=self.user_text(row)))
        return "".join(parts)


def _resolve(name_or_path: str | Path, folder: Path = PROMPT_DIR, what: str = "--prompt") -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml", ".json") or candidate.exists():
        if not candidate.is_file():
            raise FileNotFoundError(f"{what.lstrip('-')} file {str(candidate)!r} does not exist")
        return candidate
    builtin = folder / f"{name_or_path}.yaml"
    if not builtin.is_file():
        known = ", ".join(sorted(p.stem for p in folder.glob("*.yaml")))
        extra = "'all', " if what == "--prompt" else ""
        raise ValueError(
            f"{what}: unknown {what.lstrip('-')} {str(name_or_path)!r}; expected one of {known}, "
            f"{extra}or the path of a .yaml file"
        )
    return builtin


def _read_mapping(path: Path, what: str) -> tuple[dict, str, str]:
    """A prompt or layout file's fields, its ``name`` and its ``version``."""
    try:
        data = yaml.safe_load(read_text(path))
    except yaml.YAMLError as err:
        raise ValueError(f"{what} file {path}: not valid YAML ({err})") from err
    if not isinstance(data, dict):
        raise ValueError(
            f"{what} file {path}: expected a mapping of fields, got {type(data).__name__}"
        )
    name, version = (_text_field(path, what, key, data.get(key)) for key in ("name", "version"))
    return data, name, version


def _text_field(path: Path, what: str, field: str, value) -> str:
    if value is None or (isinstance(value, str) and not value.strip() and field != "plain.header"):
        raise ValueError(f"{what} file {path}: missing field {field!r}")
    if not isinstance(value, (str, int, float)):
        raise ValueError(
            f"{what} file {path}: field {field!r} must be text, got {type(value).__name__}"
        )
    return str(value)


def _layout_fields(data: dict, path: Path, what: str) -> dict[str, str]:
    """``system``, ``user``, ``assistant`` and ``plain.*`` of a layout (or a self-laid prompt,
    whose ``system`` is text, not a template), checked: every placeholder known, the question
    fields all shown."""
    plain = data.get("plain")
    if not isinstance(plain, dict):
        raise ValueError(
            f"{what} file {path}: missing field 'plain' (a mapping with header, shot and query)"
        )
    # each field of _PLACEHOLDERS, in its order; "plain.shot" is "shot" of the mapping "plain"
    values = {
        field: _text_field(
            path, what, field, (plain if "." in field else data).get(field.split(".")[-1])
        )
        for field in _PLACEHOLDERS
    }
    for field, allowed in _PLACEHOLDERS.items():
        if field == "system" and what == "prompt":
            continue
        used = _placeholders(values[field], f"{what} file {path}, field {field!r}")
        unknown = used - allowed
        if unknown:
            raise ValueError(
                f"{what} file {path}: field {field!r} uses unknown placeholder(s) "
                f"{sorted(unknown)}; allowed: {sorted(allowed)}"
            )
        if field == "user" and used != allowed:
            raise ValueError(
                f"{what} file {path}: field 'user' must show {sorted(allowed)}; "
                f"missing {sorted(allowed - used)}"
            )
        if field not in ("user", "plain.header", "system") and not used:
            raise ValueError(f"{what} file {path}: field {field!r} must use {sorted(allowed)}")
    return values


def load_layout(name_or_path: str | Path) -> tuple[str, dict[str, str]]:
    """A layout file (a built-in name or a path): its ``name@version`` and its fields."""
    path = _resolve(name_or_path, LAYOUT_DIR, "--layout")
    data, name, version = _read_mapping(path, "layout")
    return f"{name}@{version}", _layout_fields(data, path, "layout")


def load_prompt(name_or_path: str | Path, layout: str | Path = DEFAULT_LAYOUT) -> PromptSpec:
    """Read and validate one prompt file (a built-in name or a path), laid out by ``layout``
    (a built-in layout name or a layout file) unless the file holds its own layout."""
    path = _resolve(name_or_path)
    data, name, version = _read_mapping(path, "prompt")
    if "instruction" in data:
        instruction = _text_field(path, "prompt", "instruction", data["instruction"])
        layout_label, fields = load_layout(layout)
        fields = dict(fields, system=fields["system"].format(instruction=instruction))
    else:
        layout_label, fields = _OWN_LAYOUT, _layout_fields(data, path, "prompt")
    return PromptSpec(
        name=name,
        version=version,
        **{field.replace(".", "_"): text for field, text in fields.items()},  # plain.x: plain_x
        description=str(data.get("description", "")),
        path=str(path),
        layout=layout_label,
    )


def template_key(row: Mapping) -> tuple[str, str]:
    """A template's identity: BBQ numbers templates within each category."""
    return (str(row["category"]), str(row["question_index"]))


def select_shots(
    train_rows: Sequence[Mapping], k: int, seed: int, exclude_templates: set[tuple[str, str]]
) -> list[dict]:
    """``k`` few-shot examples from the training rows, one per template, chosen by ``seed``.

    Rows whose template (``template_key``: category and ``question_index``) is in
    ``exclude_templates`` are never chosen, so no shot shares a template with an
    evaluated question. The same shots are used for every evaluated question of a run,
    which keeps the prompt prefix shared (and computed once in loglikelihood scoring).
    """
    if k < 0:
        raise ValueError(f"--shots must be >= 0, got {k}")
    if k == 0:
        return []
    by_template: dict[tuple[str, str], list[Mapping]] = {}
    for row in train_rows:
        template = template_key(row)
        if template not in exclude_templates:
            by_template.setdefault(template, []).append(row)
    if len(by_template) < k:
        raise ValueError(
            f"--shots {k}: the train split has only {len(by_template)} template(s) to draw examples "
            "from (one per template, never from an evaluated template)"
        )
    rng = random.Random(seed)
    templates = rng.sample(sorted(by_template), k)
    return [dict(rng.choice(by_template[template])) for template in templates]
