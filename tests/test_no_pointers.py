"""Nothing in the repository points where a reader cannot follow: no issue numbers of the team's
tracker, no tags of its review sweeps (a letter, a part's short name and a number), no paths
into the workspace beside the checkout. Papers are cited by their authors, year and section; a reason is said in
words."""

from __future__ import annotations

import re

from checkout_copies import REPO_ROOT, checkout_files

POINTERS = {
    "an issue number": re.compile(r"\bissues?[-_ #]?\d+", re.IGNORECASE),
    "a sweep tag": re.compile(r"\b[A-Z]-(?:[a-z]{2,6}-)?\d{2}[a-z]?\b"),
    "a path outside the checkout": re.compile(r"\.\./shared\b"),
}
TEXT = {".py", ".md", ".yaml", ".yml", ".toml", ".txt", ".tsv", ".csv", ".json", ".cfg", ".j2"}


def test_no_pointer_a_reader_cannot_follow() -> None:
    found = []
    for name in sorted(checkout_files()):
        path = REPO_ROOT / name
        if name.startswith(("datasets/", "build/", "reports/")) or path.is_symlink():
            continue
        if path.suffix not in TEXT and path.name not in {"Makefile", "run"}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), start=1):
            for kind, pattern in POINTERS.items():
                if pattern.search(line):
                    found.append(f"{name}:{number}: {kind}: {line.strip()[:100]}")
    assert not found, "\n".join(found)
