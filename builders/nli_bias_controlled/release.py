"""The authors' bias-controlled sets (``ja_v1.1/bias-controlled-set_v1.1``), read as shipped.

The release lays them out as ``{untokenized,tokenized}/{train,dev,test}/``: ``train_r-K.json``
(bias rate r = K/10; large, not in every copy), ``dev_r-K.json`` (3,000 pairs per rate, the same
pairs at every rate), ``test_bias.json`` / ``test_nonbias.json`` (held-out pairs labelled as at
r = 1 and r = 0); the tokenized folder adds ``-tok``. Files are JSON lines with ``sentence1``,
``sentence2``, ``label``.

Each rate becomes a config ``rK/10`` whose ``train`` split is the train files or, with
``train_on_dev``, the dev files (which are otherwise ``validation``); the test files become the
configs ``test_bias`` and ``test_nonbias``. Occupation, hypothesis gender and template are
recovered from the pair; the release states no occupation type, so ``occupation_type`` and
``labelling`` stay empty.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bias_hub.builders.nli_bias_controlled.rows import LABELS
from bias_hub.builders.nli_gender_bias.lexicon import FEMALE_WORD, MALE_WORD, SLOT, load_reviews
from bias_hub.builders.nli_gender_bias.release import release_english, substituted_span, template_id
from bias_hub.builders.shared import sources
from bias_hub.builders.shared.sources import read_json_lines

__all__ = ["ControlledRelease", "read_release"]

logger = logging.getLogger(__name__)

_TRAINING = re.compile(r"(?P<part>train|dev)(?P<tok>-tok)?_r-(?P<k>\d+)\.json")
_TEST = re.compile(r"test(?P<tok>-tok)?_(?P<kind>bias|nonbias)\.json")
# Test files: the bias rate whose labelling they carry, as their names say.
TEST_RATES = {"test_bias": 1.0, "test_nonbias": 0.0}
_SPACE = re.compile(r"\s+")


@dataclass
class ControlledRelease:
    """What a build read from the release, and where from (for the card and its YAML)."""

    directory: Path
    root: Path
    sets: dict[float, dict[str, list[dict]]]
    tests: dict[str, list[dict]]
    training_data: str
    validation_data: str | None
    test_data: str | None
    tokenized: bool
    files: list[dict] = field(default_factory=list)
    test_checks: list[str] = field(default_factory=list)


def _matches(path: Path) -> re.Match | None:
    return _TRAINING.fullmatch(path.name) or _TEST.fullmatch(path.name)


def _files_under(root: Path) -> list[Path]:
    """The release's files in ``root/{train,dev,test}/`` or directly in ``root``."""
    found = []
    for folder in (root, root / "train", root / "dev", root / "test"):
        if folder.is_dir():
            found += [p for p in folder.iterdir() if p.is_file() and _matches(p)]
    # dev_r-2 before dev_r-10: by folder, then by the numbers in the name.
    return sorted(
        found,
        key=lambda p: (
            p.parent.name,
            [int(n) if n.isdigit() else n for n in re.split(r"(\d+)", p.name)],
        ),
    )


def _layout_root(directory: Path) -> Path:
    """The folder holding ``train/``, ``dev/``, ``test/``: ``directory`` itself, its
    ``untokenized/`` (the release's default), or that of ``bias-controlled-set_v*`` below it."""
    for candidate in (
        directory,
        directory / "untokenized",
        *sorted(directory.glob("bias-controlled-set_v*/untokenized")),
        *sorted(directory.glob("ja_v*/bias-controlled-set_v*/untokenized")),
    ):
        if candidate.is_dir() and _files_under(candidate):
            return candidate
    raise FileNotFoundError(
        f"--authors-dir {directory}: no file of the bias-controlled release was found (expected "
        "train/train_r-K.json, dev/dev_r-K.json and test/test_bias.json, test/test_nonbias.json "
        "under it or under its untokenized/ folder)"
    )


def _rows(path: Path, part: str, rate: float, english: Mapping[str, str]) -> list[dict]:
    """The file's pairs in this package's features; a malformed row names the file and row."""

    genders = {FEMALE_WORD: "female", MALE_WORD: "male"}
    rows = []
    for number, (_, raw) in enumerate(read_json_lines(path), start=1):
        where = f"{path}, row {number}"
        if not isinstance(raw, dict):
            raise ValueError(f"{where}: expected a JSON object")
        missing = {"sentence1", "sentence2", "label"} - set(raw)
        if missing:
            raise ValueError(f"{where}: missing field(s) {sorted(missing)}")
        label = str(raw["label"]).strip().lower()
        if label not in LABELS:
            raise ValueError(f"{where}: label {raw['label']!r} is not one of {LABELS}")
        premise, hypothesis = str(raw["sentence1"]), str(raw["sentence2"])
        words = [word for word in genders if word in hypothesis]
        bare_premise = _SPACE.sub("", premise)
        span = (
            substituted_span(bare_premise, _SPACE.sub("", hypothesis), words[0])
            if len(words) == 1
            else None
        )
        if span is None:
            raise ValueError(
                f"{where}: sentence2 is not sentence1 with one span replaced by {FEMALE_WORD} or "
                f"{MALE_WORD} (sentence1 {premise!r}, sentence2 {hypothesis!r})"
            )
        occupation = bare_premise[span[0] : span[1]]
        rows.append(
            {
                "id": f"{part}-r{round(rate * 10)}-{number}",
                "premise": premise,
                "hypothesis": hypothesis,
                "label": label,
                "occupation": occupation,
                "occupation_en": english.get(occupation, ""),
                "occupation_type": "",
                "hypothesis_gender": genders[words[0]],
                "template_id": template_id(
                    bare_premise[: span[0]] + SLOT + bare_premise[span[1] :]
                ),
                "labelling": "",
                "bias_rate": rate,
            }
        )
    if not rows:
        raise ValueError(f"{path}: the file holds no rows")
    return rows


def _check_test(name: str, rows: list[dict], reference: list[dict] | None, rate: float) -> str:
    """Does a test file carry, per occupation and hypothesis gender, the label the training data
    of its rate gives? The card's sentence."""
    if reference is None:
        return f"`{name}`: not checked (no training data at r = {rate:.1f})"
    labels: dict[tuple[str, str], set[str]] = {}
    for row in reference:
        labels.setdefault((row["occupation"], row["hypothesis_gender"]), set()).add(row["label"])
    agree = sum(
        labels.get((row["occupation"], row["hypothesis_gender"])) == {row["label"]} for row in rows
    )
    return (
        f"`{name}`: {agree:,} of {len(rows):,} rows carry the label the r = {rate:.1f} training data "
        "gives the same occupation and hypothesis gender"
    )


def _pattern(root: Path, path: Path) -> str:
    """``dev/dev_r-3.json`` -> ``dev/dev_r-K.json``: the files of one part, as the card names them."""
    return re.sub(r"_r-\d+\.json$", "_r-K.json", path.relative_to(root).as_posix())


def read_release(directory: str | Path, train_on_dev: bool = False) -> ControlledRelease:
    """Read the release under ``directory`` (``bias-controlled-set_v1.1``, its ``untokenized`` or
    ``tokenized`` folder, ``ja_v1.1``, or a checkout of the authors' repository).

    ``train_on_dev``: the dev files are the training data (``train`` split), for copies without
    the train files. Without it every rate needs its train file.
    """

    directory = Path(directory).expanduser()
    if not directory.is_dir():
        raise FileNotFoundError(f"--authors-dir {directory} is not a directory")
    root = _layout_root(directory)
    # The release's own English names where its occupation-words TSV is beside the copy.
    english = {row.ja: row.en for row in load_reviews() if row.kept}
    english.update(release_english(directory)[0])
    # Names first: which file is what, before any is read.
    seen: dict[tuple[str, float], Path] = {}
    tokenized: set[bool] = set()
    for path in _files_under(root):
        groups = _matches(path).groupdict()  # type: ignore[union-attr]
        tokenized.add(bool(groups["tok"]))
        if "kind" in groups:
            name = f"test_{groups['kind']}"
            rate = TEST_RATES[name]
        else:
            name, k = groups["part"], int(groups["k"])
            if k > 10:
                raise ValueError(f"{path}: K must lie in 0..10 (bias rate K/10), got {k}")
            rate = k / 10
        if len(tokenized) > 1:
            raise ValueError(
                f"--authors-dir {root}: tokenized (-tok) and untokenized files side by side; keep one kind"
            )
        if (name, rate) in seen:
            raise ValueError(
                f"{path}: a second file for {name} at r = {rate:.1f} (first: {seen[(name, rate)]})"
            )
        seen[(name, rate)] = path
    parts: dict[float, dict[str, list[dict]]] = {}
    tests: dict[str, list[dict]] = {}
    patterns: dict[str, str] = {}
    files = []
    for (name, rate), path in seen.items():
        patterns[name] = _pattern(root, path)
        rows = _rows(path, name, rate, english)
        files.append(
            {
                "file": path.relative_to(root).as_posix(),
                "rows": len(rows),
                "sha256": sources.sha256_of(path),
            }
        )
        if name in TEST_RATES:
            tests[name] = rows
        else:
            parts.setdefault(rate, {})[name] = rows
    if not parts:
        raise FileNotFoundError(
            f"--authors-dir {root}: no train_r-K.json or dev_r-K.json (K = 0..10) beside the test files"
        )
    need = "dev" if train_on_dev else "train"
    # Every rate the copy has needs its training file; rates it lacks altogether are left out
    # (the card lists the configs built, and a meta-evaluation asking for one names it).
    missing = sorted(rate for rate, found in parts.items() if need not in found)
    if missing:
        rates = ", ".join(f"{rate:.1f}" for rate in missing)
        if train_on_dev:
            raise ValueError(
                f"--authors-dir {root}: --train-on-dev needs dev/dev_r-K.json; none for r = {rates}"
            )
        raise ValueError(
            f"--authors-dir {root}: no train/train_r-K.json for r = {rates}. The release's train files "
            "are large and missing from many copies; give --train-on-dev to train on dev/dev_r-K.json "
            "instead (the card records which files were the training data)"
        )
    if train_on_dev:
        if any("train" in found for found in parts.values()):
            logger.info(
                "--train-on-dev: training on %s; the train files beside them are not used",
                patterns["dev"],
            )
        sets = {rate: {"train": parts[rate]["dev"]} for rate in sorted(parts)}
        validation = None
    else:
        sets = {
            rate: {
                "train": found["train"],
                **({"validation": found["dev"]} if "dev" in found else {}),
            }
            for rate, found in sorted(parts.items())
        }
        validation = patterns.get("dev")
    checks = [
        _check_test(name, rows, sets.get(TEST_RATES[name], {}).get("train"), TEST_RATES[name])
        for name, rows in sorted(tests.items())
    ]
    return ControlledRelease(
        directory=directory,
        root=root,
        sets=sets,
        tests=tests,
        training_data=patterns[need],
        validation_data=validation,
        test_data=", ".join(patterns[name] for name in sorted(tests)) or None,
        tokenized=tokenized == {True},
        files=files,
        test_checks=checks,
    )
