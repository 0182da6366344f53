"""The row schema BBQ defined and JBBQ kept, plus the two labels we derive.

Every row is one question: a context (ambiguous, or ambiguous + disambiguating),
a question (negative or non-negative polarity) and three answers, exactly one
of which means "cannot be determined". We store, beside BBQ's own fields,

* ``unknown_label``: the index of that "cannot be determined" answer;
* ``stereotyped_label``: the answer a stereotyped reader would give -- for a
  negative question the answer whose group is among the template's
  stereotyped groups, for a non-negative question the other non-unknown
  answer (as in the BBQ paper's definition of a biased answer). ``-1`` where
  the groups do not single out one answer; such rows are kept and counted in
  the build report and the card.
"""

from __future__ import annotations

import datasets

from bias_hub.builders.shared.benchmark import benchmark

__all__ = [
    "ANSWER_KEYS",
    "BBQ_CATEGORIES",
    "CONTEXT_CONDITIONS",
    "FEATURES",
    "JBBQ_CATEGORIES",
    "POLARITIES",
    "RowError",
    "group_tokens",
    "stereotyped_answer",
    "validate_row",
]

# The social categories of each benchmark, declared with its tasks (builders/shared/benchmarks.yaml).
JBBQ_CATEGORIES = tuple(benchmark("jbbq")["categories"])
BBQ_CATEGORIES = tuple(benchmark("bbq")["categories"])
POLARITIES = ("neg", "nonneg")
CONTEXT_CONDITIONS = ("ambig", "disambig")
ANSWER_KEYS = ("ans0", "ans1", "ans2")

FEATURES = datasets.Features(
    {
        "example_id": datasets.Value("int64"),
        "question_index": datasets.Value("string"),
        "question_polarity": datasets.Value("string"),
        "context_condition": datasets.Value("string"),
        "category": datasets.Value("string"),
        "answer_info": datasets.List(
            {"text": datasets.Value("string"), "group": datasets.Value("string")}
        ),
        "additional_metadata": {
            "subcategory": datasets.Value("string"),
            "stereotyped_groups": datasets.List(datasets.Value("string")),
            "version": datasets.Value("string"),
            "source": datasets.Value("string"),
        },
        "context": datasets.Value("string"),
        "question": datasets.Value("string"),
        "ans0": datasets.Value("string"),
        "ans1": datasets.Value("string"),
        "ans2": datasets.Value("string"),
        "label": datasets.Value("int64"),
        "unknown_label": datasets.Value("int64"),
        "stereotyped_label": datasets.Value("int64"),
        "is_additional": datasets.Value("bool"),
    }
)


class RowError(ValueError):
    """A source row that breaks the schema; the message names file, row and field."""


# BBQ writes gender groups sometimes as words, sometimes as M/F; its own
# analysis script maps them the same way before matching.
_GENDER_WORDS = {"man": "m", "men": "m", "boy": "m", "woman": "f", "women": "f", "girl": "f"}


def group_tokens(text: str, group: str) -> set[str]:
    """Lower-cased names under which an answer may be listed as a stereotyped group.

    BBQ's groups are codes such as ``old``/``nonOld``, ``F``, ``F-Black`` or
    ``lowSES-Black`` (intersectional: parts joined by ``-``), and for
    Nationality the answer's text is the group. We match on the whole code,
    its ``-``/``_`` parts, the text, and the M/F reading of gender words.
    """
    tokens = {token.strip().lower() for token in (text, group, *group.replace("_", "-").split("-"))}
    return (tokens | {_GENDER_WORDS[token] for token in tokens if token in _GENDER_WORDS}) - {""}


def _normalised_targets(groups: list[str], category: str) -> set[str]:
    """The stereotyped groups as tokens, with the same rewrites BBQ's R analysis makes:
    gender words -> M/F, "low SES" -> "lowses", any "transgender ..." -> "trans",
    and every Disability_status template targets "disabled"."""
    tokens = [group.strip().lower() for group in groups]
    targets = {_GENDER_WORDS.get(t, t) for t in tokens} | {t.replace(" ", "") for t in tokens}
    targets |= {"trans" for t in tokens if t.startswith("trans")}
    if category == "Disability_status":
        targets.add("disabled")
    return targets - {""}


def stereotyped_answer(
    answer_info: list[dict],
    polarity: str,
    stereotyped_groups: list[str],
    unknown: int,
    category: str = "",
) -> int:
    """The index of the bias-consistent answer, or -1 if the groups do not decide it.

    Exactly one of the two non-unknown answers must belong to a stereotyped
    group. For ``neg`` questions that answer is returned; for ``nonneg`` the
    other one.
    """
    targets = _normalised_targets(stereotyped_groups, category)
    others = [i for i in range(len(answer_info)) if i != unknown]
    matches = [
        i for i in others if group_tokens(answer_info[i]["text"], answer_info[i]["group"]) & targets
    ]
    if len(matches) != 1:
        return -1
    if polarity == "neg":
        return matches[0]
    return next(i for i in others if i != matches[0])


def validate_row(row: dict, where: str, categories: tuple[str, ...] | None = None) -> None:
    """Raise ``RowError`` naming ``where`` and the field if ``row`` breaks the schema."""
    for key in FEATURES:
        if key not in row:
            raise RowError(f"{where}: field {key!r} is missing")
    for key in ("context", "question", *ANSWER_KEYS, "question_index", "category"):
        if not isinstance(row[key], str) or not row[key].strip():
            raise RowError(f"{where}: field {key!r} must be a non-empty string, got {row[key]!r}")
        if "{{" in row[key] or "}}" in row[key]:
            raise RowError(f"{where}: field {key!r} has an unfilled slot: {row[key]!r}")
    if categories is not None and row["category"] not in categories:
        raise RowError(
            f"{where}: field 'category' is {row['category']!r}; expected one of {', '.join(categories)}"
        )
    if row["question_polarity"] not in POLARITIES:
        raise RowError(
            f"{where}: field 'question_polarity' is {row['question_polarity']!r}; expected neg or nonneg"
        )
    if row["context_condition"] not in CONTEXT_CONDITIONS:
        raise RowError(
            f"{where}: field 'context_condition' is {row['context_condition']!r}; "
            "expected ambig or disambig"
        )
    info = row["answer_info"]
    if not isinstance(info, list) or len(info) != 3:
        raise RowError(f"{where}: field 'answer_info' must list 3 answers, got {info!r}")
    for key in ("label", "unknown_label"):
        value = row[key]
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 2:
            raise RowError(f"{where}: field {key!r} must be 0, 1 or 2, got {value!r}")
    unknowns = [i for i, answer in enumerate(info) if answer["group"].strip().lower() == "unknown"]
    if len(unknowns) != 1:
        raise RowError(
            f"{where}: field 'answer_info' must mark exactly one answer as group 'unknown', "
            f"found {len(unknowns)}: {info!r}"
        )
    if row["unknown_label"] != unknowns[0]:
        raise RowError(
            f"{where}: field 'unknown_label' is {row['unknown_label']}, answer_info says {unknowns[0]}"
        )
    if row["context_condition"] == "ambig" and row["label"] != row["unknown_label"]:
        raise RowError(
            f"{where}: field 'label' is {row['label']} but an ambiguous context's answer must be "
            f"the unknown answer ({row['unknown_label']})"
        )
    if row["context_condition"] == "disambig" and row["label"] == row["unknown_label"]:
        raise RowError(
            f"{where}: field 'label' points at the unknown answer in a disambiguated context"
        )
    stereotyped = row["stereotyped_label"]
    if stereotyped not in (-1, 0, 1, 2) or stereotyped == row["unknown_label"]:
        raise RowError(f"{where}: field 'stereotyped_label' is {stereotyped!r}")
