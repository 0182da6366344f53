"""What publish checks of a card before the Hub sees it, with no copy of the Hub's vocabularies.

The Hub validates a card's metadata itself when it is pushed (licence identifiers, task
categories, languages, size buckets), and its lists change; a copy here would drift. Checked
here is only what needs no list: a repo name's form, whether a card may go up publicly at all
(``redistribution_refusal``), and (in ``dataset_repo``) that the required fields are present and
agree with the data.
"""

from __future__ import annotations

import re

from bias_hub.builders.shared.card import size_category

__all__ = ["HUB_NAME", "as_list", "redistribution_refusal", "size_category"]

# A Hub user, organisation or repo name.
HUB_NAME = re.compile(r"^(?!.*(--|\.\.))[A-Za-z0-9][A-Za-z0-9._-]{0,94}(?<![.-])$")


def as_list(value: object) -> list:
    """Card fields may be a single value or a list of them."""
    if value is None:
        return []
    return list(value) if isinstance(value, (list, tuple)) else [value]


# Words of a licence name or a gated prompt that forbid passing the data on (English and Japanese).
_FORBIDS = re.compile(
    r"prohibit|forbid|(?:may|must|shall|can|do|does) ?not (?:be )?(?:re-?)?distribut|(?:cannot|can't) (?:be )?"
    r"(?:re-?)?distribut|no (?:re-?)?distribution|not (?:be )?(?:re-?)?distributable|non-?redistributable|"
    r"authors?[- ]only|research[- ]only|再配布.{0,12}(?:禁止|禁じ|できません|しないで|不可)|転載.{0,8}禁止",
    re.IGNORECASE,
)


def redistribution_refusal(header: dict) -> str | None:
    """Why a dataset card may not go up as a public repo, or None when nothing in it says so.

    Not the ``redistributable`` flag alone: a card whose line was deleted still carries its
    licence and its gated prompt. Refused: ``redistributable: false``; a gated-access prompt
    (``extra_gated_prompt``: the data was meant to be requested, not downloaded); a licence
    ``unknown`` (no right to pass it on is known); a licence name or text that forbids
    redistribution. ``redistributable: true`` overrides none of these.
    """
    if header.get("redistributable") is False:
        return "the card marks it `redistributable: false`"
    prompt = header.get("extra_gated_prompt")
    if prompt or header.get("extra_gated_fields"):
        said = f" ({_excerpt(str(prompt))})" if prompt else ""
        return f"the card asks for gated access (extra_gated_prompt{said})"
    licences = [str(value) for value in as_list(header.get("license"))]
    if "unknown" in licences:
        return "its licence is `unknown`: no right to redistribute it is known"
    for key in ("license_name", "license_details"):
        text = header.get(key)
        if isinstance(text, str) and _FORBIDS.search(text):
            return f"its {key} forbids redistribution ({_excerpt(text)})"
    return None


def _excerpt(text: str, width: int = 100) -> str:
    match = _FORBIDS.search(text)
    start = max(0, match.start() - 40) if match else 0
    piece = " ".join(text[start : start + width].split())
    return ("…" if start else "") + piece + ("…" if start + width < len(text) else "")
