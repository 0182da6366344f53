"""JBBQ prompts as data: load the versioned YAML files, pick few-shot examples, render.

A prompt file (``pipelines/jbbq/prompts/<name>.yaml``, or any path) holds the
instruction and the layout of one question; nothing about the wording lives in
code. A rendered question is either chat messages (system, then one
user/assistant pair per shot, then the user turn) or one plain string
(``plain.header`` + ``plain.shot`` per shot + ``plain.query``).
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
    "PROMPT_DIR",
    "PROMPT_NAMES",
    "PromptSpec",
    "load_prompt",
    "select_shots",
    "template_key",
]

PROMPT_DIR = Path(__file__).resolve().parent / "prompts"
# The paper's three prompts, in the order its tables and Figure 1 use.
PROMPT_NAMES = ("basic", "unknown", "paraphrase")

_QUESTION_FIELDS = ("context", "question", "ans0", "ans1", "ans2")
# field -> placeholders it must use, and may use
_PLACEHOLDERS = {
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


def _resolve(name_or_path: str | Path) -> Path:
    candidate = Path(name_or_path)
    if candidate.suffix in (".yaml", ".yml", ".json") or candidate.exists():
        if not candidate.is_file():
            raise FileNotFoundError(f"prompt file {str(candidate)!r} does not exist")
        return candidate
    builtin = PROMPT_DIR / f"{name_or_path}.yaml"
    if not builtin.is_file():
        known = ", ".join(sorted(p.stem for p in PROMPT_DIR.glob("*.yaml")))
        raise ValueError(
            f"--prompt: unknown prompt {str(name_or_path)!r}; expected one of {known}, 'all', "
            "or the path of a prompt .yaml file"
        )
    return builtin


def load_prompt(name_or_path: str | Path) -> PromptSpec:
    """Read and validate one prompt file (a built-in name or a path)."""
    path = _resolve(name_or_path)
    try:
        data = yaml.safe_load(read_text(path))
    except yaml.YAMLError as err:
        raise ValueError(f"prompt file {path}: not valid YAML ({err})") from err
    if not isinstance(data, dict):
        raise ValueError(
            f"prompt file {path}: expected a mapping of fields, got {type(data).__name__}"
        )
    plain = data.get("plain")
    if not isinstance(plain, dict):
        raise ValueError(
            f"prompt file {path}: missing field 'plain' (a mapping with header, shot and query)"
        )
    values = {
        "name": data.get("name"),
        "version": data.get("version"),
        "system": data.get("system"),
        "user": data.get("user"),
        "assistant": data.get("assistant"),
        "plain.header": plain.get("header"),
        "plain.shot": plain.get("shot"),
        "plain.query": plain.get("query"),
    }
    for field, value in values.items():
        if value is None or (
            isinstance(value, str) and not value.strip() and field != "plain.header"
        ):
            raise ValueError(f"prompt file {path}: missing field {field!r}")
        if not isinstance(value, (str, int, float)):
            raise ValueError(
                f"prompt file {path}: field {field!r} must be text, got {type(value).__name__}"
            )
    for field, allowed in _PLACEHOLDERS.items():
        used = _placeholders(str(values[field]), f"prompt file {path}, field {field!r}")
        unknown = used - allowed
        if unknown:
            raise ValueError(
                f"prompt file {path}: field {field!r} uses unknown placeholder(s) "
                f"{sorted(unknown)}; allowed: {sorted(allowed)}"
            )
        if field == "user" and used != allowed:
            raise ValueError(
                f"prompt file {path}: field 'user' must show {sorted(allowed)}; "
                f"missing {sorted(allowed - used)}"
            )
        if field != "user" and field != "plain.header" and not used:
            raise ValueError(f"prompt file {path}: field {field!r} must use {sorted(allowed)}")
    return PromptSpec(
        name=str(values["name"]),
        version=str(values["version"]),
        system=str(values["system"]),
        user=str(values["user"]),
        assistant=str(values["assistant"]),
        plain_header=str(values["plain.header"]),
        plain_shot=str(values["plain.shot"]),
        plain_query=str(values["plain.query"]),
        description=str(data.get("description", "")),
        path=str(path),
    )


def template_key(row: Mapping) -> tuple[str, str]:
    """A template's identity: BBQ numbers templates within each category."""
    return (str(row["category"]), str(row["question_index"]))


def select_shots(
    train_rows: Sequence[Mapping],
    k: int,
    seed: int,
    exclude_templates: set[tuple[str, str]],
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
