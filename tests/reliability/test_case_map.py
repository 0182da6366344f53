"""The case map in this folder's README names tests that exist."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
README = Path(__file__).with_name("README.md")


def _references() -> list[tuple[str, str]]:
    return re.findall(r"`([\w/]+\.py)::(\w+)`", README.read_text(encoding="utf-8"))


def test_every_case_names_tests_that_exist() -> None:
    references = _references()
    # 13 bad cases and 14 weak ones, most with several tests.
    assert len(references) >= 40
    missing = []
    for path, name in references:
        source = TESTS / path
        if not source.is_file() or not re.search(
            rf"^def {name}\(", source.read_text(encoding="utf-8"), re.M
        ):
            missing.append(f"{path}::{name}")
    assert not missing, f"README.md names tests that are gone: {missing}"


def test_the_thirteen_bad_cases_are_all_listed() -> None:
    rows = re.findall(r"^\| (\d+) \|", README.read_text(encoding="utf-8"), re.M)
    assert [int(row) for row in rows] == list(range(1, 14))
