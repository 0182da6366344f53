"""The Hub's vocabularies for card metadata, as its documentation lists them.

``huggingface_hub``'s card classes parse metadata but accept any value; the
Hub itself rejects or ignores unknown ones (a misspelt licence shows as no
licence, an unknown task category hides the dataset from the task filter), so
publish checks them here first.
"""

from __future__ import annotations

import re

from bias_hub.builders.shared.card import LARGEST_SIZE_CATEGORY, SIZE_CATEGORIES, size_category

__all__ = [
    "ANNOTATIONS_CREATORS",
    "HUB_NAME",
    "LANGUAGE_CODE",
    "LANGUAGE_CREATORS",
    "LICENSES",
    "MULTILINGUALITY",
    "SIZE_CATEGORY_NAMES",
    "SOURCE_DATASETS",
    "SPECIAL_LANGUAGES",
    "TASK_CATEGORIES",
    "as_list",
    "redistribution_refusal",
    "size_category",
]

# https://huggingface.co/docs/hub/repositories-licenses
LICENSES = frozenset(
    """
    apache-2.0 mit openrail bigscience-openrail-m creativeml-openrail-m bigscience-bloom-rail-1.0
    bigcode-openrail-m afl-3.0 artistic-2.0 bsl-1.0 bsd bsd-2-clause bsd-3-clause
    bsd-3-clause-clear c-uda cc cc0-1.0 cc-by-2.0 cc-by-2.5 cc-by-3.0 cc-by-4.0 cc-by-sa-3.0
    cc-by-sa-4.0 cc-by-nc-2.0 cc-by-nc-3.0 cc-by-nc-4.0 cc-by-nd-4.0 cc-by-nc-nd-3.0
    cc-by-nc-nd-4.0 cc-by-nc-sa-2.0 cc-by-nc-sa-3.0 cc-by-nc-sa-4.0 cdla-sharing-1.0
    cdla-permissive-1.0 cdla-permissive-2.0 wtfpl ecl-2.0 epl-1.0 epl-2.0 etalab-2.0 eupl-1.1
    eupl-1.2 agpl-3.0 gfdl gpl gpl-2.0 gpl-3.0 lgpl lgpl-2.1 lgpl-3.0 isc h-research
    intel-research lppl-1.3c ms-pl apple-ascl apple-amlr mpl-2.0 odc-by odbl openrail++ osl-3.0
    postgresql ofl-1.1 ncsa unlicense zlib pddl lgpl-lr deepfloyd-if-license llama2 llama3
    llama3.1 llama3.2 llama3.3 gemma unknown other
    """.split()
)

# The task filter of the Hub (huggingface.js `pipelines.ts`): the list
# `datasets.utils.metadata.known_task_ids` keeps, plus the tasks added since.
TASK_CATEGORIES = frozenset(
    """
    image-classification translation image-segmentation fill-mask automatic-speech-recognition
    token-classification sentence-similarity audio-classification question-answering
    summarization zero-shot-classification table-to-text feature-extraction other
    multiple-choice text-classification text-to-image text2text-generation
    zero-shot-image-classification tabular-classification tabular-regression image-to-image
    tabular-to-text unconditional-image-generation text-retrieval text-to-speech
    object-detection audio-to-audio text-generation conversational table-question-answering
    visual-question-answering image-to-text reinforcement-learning voice-activity-detection
    time-series-forecasting document-question-answering
    text-ranking image-text-to-text video-text-to-text audio-text-to-text any-to-any
    text-to-audio text-to-video image-to-video image-to-3d text-to-3d mask-generation
    zero-shot-object-detection image-feature-extraction depth-estimation keypoint-detection
    video-classification visual-document-retrieval graph-ml robotics
    """.split()
)

# The one table of size buckets lives beside the card writer (bias_hub.builders.shared.card).
SIZE_CATEGORY_NAMES = frozenset(name for _, name in SIZE_CATEGORIES) | {
    LARGEST_SIZE_CATEGORY,
    "other",
}
MULTILINGUALITY = frozenset({"monolingual", "multilingual", "translation", "other"})
ANNOTATIONS_CREATORS = frozenset(
    {"found", "crowdsourced", "expert-generated", "machine-generated", "no-annotation", "other"}
)
LANGUAGE_CREATORS = frozenset(
    {"found", "crowdsourced", "expert-generated", "machine-generated", "other"}
)
SOURCE_DATASETS = frozenset({"original", "extended"})

# ISO 639-1/2/3 code, optionally with a BCP-47 subtag (zh-Hans), or a special value.
LANGUAGE_CODE = re.compile(r"^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$")
SPECIAL_LANGUAGES = frozenset({"code", "multilingual"})

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
