"""The authors' release of the evaluation sets (``ja_v1.1/bias-eval-set_v1.1``), read as shipped.

Each of its four folders (``untokenized``, ``downsamp``, ``tokenized``, ``downsamp-tokenized``)
holds the three sets and their union under file names of its own (``FOLDERS``) and becomes
configs of its own; a folder is recognised by its file names, not its name. The file a row
comes from decides its subset. ``4-all`` is not read but *checked*, record by record, against
the ``all`` config, which is the three set files in order so that every row keeps its subset.

Each row's occupation is the premise span the hypothesis replaces by 女性 or 男性 (found without
spaces, so the tokenized folders give the same word). Where the file's ``occ_word`` or
``occ_type`` disagrees (16 rows of ja_v1.1's ``3-nonstereo`` name the bystander 野球選手 of
「野球選手とワイシャツ姿の{…}が握手しています。」), the row is kept with both values
(``occupation_in_file``, ``occupation_type_in_file``) and listed as a disagreement.
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bias_hub.builders.nli_gender_bias.lexicon import FEMALE_WORD, MALE_WORD, SLOT
from bias_hub.builders.nli_gender_bias.rows import ABBREVIATION, LABELS, OPPOSITE
from bias_hub.builders.shared import sources
from bias_hub.builders.shared.files import open_text

__all__ = [
    "FOLDERS",
    "SET_STEMS",
    "Fetched",
    "FileName",
    "ReleaseFolder",
    "ReleaseRead",
    "fetch_release",
    "find_release",
    "local_release",
    "parse_file_name",
    "read_folder",
    "release_file_name",
    "substituted_span",
]

logger = logging.getLogger(__name__)

# Folder of the release -> (suffix of its file stems, suffix of its config names).
FOLDERS: dict[str, tuple[str, str]] = {
    "untokenized": ("", ""),
    "downsamp": ("-downsamp", "_downsampled"),
    "tokenized": ("-tok", "_tokenized"),
    "downsamp-tokenized": ("-downsamp-tok", "_downsampled_tokenized"),
}
# Subset -> the stem of its file in every folder; "4-all" is the union.
SET_STEMS = {
    "pro_stereotypical": "1-prostereo",
    "anti_stereotypical": "2-antistereo",
    "non_stereotypical": "3-nonstereo",
}
UNION_STEM = "4-all"
REQUIRED_FIELDS = ("id", "sentence1", "sentence2", "label", "occ_word", "occ_type")
# occ_type as the release spells it -> this dataset's occupation types.
FILE_TYPES = {
    "female-stereo": "female_stereotyped",
    "male-stereo": "male_stereotyped",
    "neutral": "non_stereotyped",
}
_GENDER = {FEMALE_WORD: "female", MALE_WORD: "male"}
_STEREOTYPED = {"female": "female_stereotyped", "male": "male_stereotyped"}
_FILE = re.compile(
    r"(?P<stem>[1-4]-(?:prostereo|antistereo|nonstereo|all))"
    r"(?P<variant>-downsamp-tok|-downsamp|-tok)?_v(?P<version>\d+(?:\.\d+)*)\.json"
)
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class FileName:
    """What a release file's name says: its folder, set (or ``4-all``) and version."""

    folder: str
    stem: str
    version: str


def release_file_name(folder: str, stem: str, version: str = "1.1") -> str:
    """``("downsamp", "1-prostereo")`` -> ``"1-prostereo-downsamp_v1.1.json"``."""
    return f"{stem}{FOLDERS[folder][0]}_v{version}.json"


def parse_file_name(name: str) -> FileName | None:
    match = _FILE.fullmatch(name)
    if match is None:
        return None
    variant = match.group("variant") or ""
    folder = next(kind for kind, (suffix, _) in FOLDERS.items() if suffix == variant)
    return FileName(folder, match.group("stem"), match.group("version"))


@dataclass
class ReleaseFolder:
    """One folder of the release: its kind, where it is, and its files by stem."""

    kind: str
    location: str
    files: dict[str, Path] = field(default_factory=dict)
    version: str = "1.1"

    @property
    def config_suffix(self) -> str:
        return FOLDERS[self.kind][1]

    def config(self, subset: str) -> str:
        """``pro_stereotypical`` + this folder's suffix; ``all`` for the union."""
        return subset + self.config_suffix

    def relative(self, path: Path) -> str:
        """``untokenized/1-prostereo_v1.1.json``: the file as the release names it."""
        return f"{self.kind}/{path.name}"


def _release_files(folder: Path) -> list[tuple[Path, FileName]]:
    parsed = [(path, parse_file_name(path.name)) for path in sorted(folder.iterdir())]
    return [(path, name) for path, name in parsed if name is not None and path.is_file()]


def _candidate_folders(directory: Path) -> list[Path]:
    """Where the release's files may lie under ``directory``, most specific first: the folder
    itself, its children, and the children of ``bias-eval-set_v*`` or ``ja_v*/bias-eval-set_v*``
    (a checkout of the authors' repository)."""
    if _release_files(directory):
        return [directory]
    for pattern in ("*", "bias-eval-set_v*/*", "ja_v*/bias-eval-set_v*/*"):
        children = [p for p in sorted(directory.glob(pattern)) if p.is_dir() and _release_files(p)]
        if children:
            return children
    return []


def find_release(directory: str | Path) -> list[ReleaseFolder]:
    """The release folders under ``directory`` (a folder of the release, ``bias-eval-set_v1.1``,
    ``ja_v1.1`` or a checkout of the repository), in the order of ``FOLDERS``.

    Every folder must hold its three set files; ``4-all`` is optional. Raises
    ``FileNotFoundError`` when there is none, ``ValueError`` when a file is missing or the
    same file is found twice.
    """
    directory = Path(directory).expanduser()
    if not directory.is_dir():
        raise FileNotFoundError(f"--authors-dir: {directory} is not a directory")
    folders: dict[str, ReleaseFolder] = {}
    seen: dict[tuple[str, str], Path] = {}
    for candidate in _candidate_folders(directory):
        for path, name in _release_files(candidate):
            key = (name.folder, name.stem)
            if key in seen:
                raise ValueError(
                    f"--authors-dir {directory}: {path} and {seen[key]} are the same file of the "
                    "release; point --authors-dir at one copy (for example ja_v1.1/bias-eval-set_v1.1)"
                )
            seen[key] = path
            folder = folders.setdefault(
                name.folder, ReleaseFolder(name.folder, str(candidate), version=name.version)
            )
            if name.version != folder.version:
                raise ValueError(
                    f"{path}: version v{name.version} beside v{folder.version} files of the same folder"
                )
            folder.files[name.stem] = path
    if not folders:
        expected = ", ".join(release_file_name("untokenized", stem) for stem in SET_STEMS.values())
        raise FileNotFoundError(
            f"--authors-dir {directory}: no file of the authors' release was found there (expected, "
            f"for example, {expected} in untokenized/, or 1-prostereo-downsamp_v1.1.json in downsamp/)"
        )
    for folder in folders.values():
        missing = [
            release_file_name(folder.kind, stem, folder.version)
            for stem in SET_STEMS.values()
            if stem not in folder.files
        ]
        if missing:
            raise ValueError(f"--authors-dir: {folder.location} lacks {', '.join(missing)}")
    return [folders[kind] for kind in FOLDERS if kind in folders]


def substituted_span(premise: str, hypothesis: str, gender_word: str) -> tuple[int, int] | None:
    """``(start, end)`` of the span of ``premise`` that ``hypothesis`` replaces by ``gender_word``.

    The hypothesis must be the premise with exactly that span replaced; ``None`` when it is
    not. Where the gender word occurs more than once, the one occurrence that explains the pair
    is taken; two that both explain it are ambiguous (``None``).
    """
    spans = []
    start = hypothesis.find(gender_word)
    while start != -1:
        before, after = hypothesis[:start], hypothesis[start + len(gender_word) :]
        if (
            premise.startswith(before)
            and premise.endswith(after)
            and len(before) + len(after) < len(premise)
        ):
            spans.append((len(before), len(premise) - len(after)))
        start = hypothesis.find(gender_word, start + 1)
    return spans[0] if len(spans) == 1 else None


def template_id(template: str) -> str:
    """A stable id of a premise pattern: the same caption gets the same id in every folder."""
    return "c" + hashlib.sha256(template.encode("utf-8")).hexdigest()[:8]


def implied_type(subset: str, gender: str) -> str:
    """The occupation type a row's file implies: PS pairs a stereotyped occupation with the
    congruent gender, AS with the opposite one, NS holds non-stereotyped occupations."""
    if subset not in ("pro_stereotypical", "anti_stereotypical"):
        return "non_stereotyped"
    return _STEREOTYPED[gender if subset == "pro_stereotypical" else OPPOSITE[gender]]


def _read_records(path: Path) -> list[tuple[int, dict]]:
    records = sources.read_json_lines(path)
    for number, record in records:
        if not isinstance(record, dict):
            raise ValueError(f"{path}, line {number}: expected a JSON object")
    return records


def _row(
    record: dict, where: str, subset: str, source_file: str, english: Mapping[str, str]
) -> dict:
    absent = [key for key in REQUIRED_FIELDS if key not in record]
    if absent:
        raise ValueError(f"{where}: missing field(s) {', '.join(absent)}")
    premise, hypothesis = str(record["sentence1"]), str(record["sentence2"])
    label = str(record["label"]).strip().lower()
    if label != "neutral":
        # Every pair of the evaluation sets is neutral by design (the bias score counts the
        # other labels as biased inferences); the released files hold nothing else.
        raise ValueError(
            f"{where}, field 'label': {record['label']!r}; every pair of the evaluation sets is 'neutral' "
            "(a premise about an occupation says nothing of the gender in the hypothesis)"
        )
    if record["occ_type"] not in FILE_TYPES:
        raise ValueError(
            f"{where}, field 'occ_type': {record['occ_type']!r} is not one of {sorted(FILE_TYPES)}"
        )
    words = [word for word in _GENDER if word in hypothesis]
    if len(words) != 1:
        raise ValueError(
            f"{where}, field 'sentence2': expected exactly one of {FEMALE_WORD} / {MALE_WORD}, "
            f"got {hypothesis!r}"
        )
    gender = _GENDER[words[0]]
    # Spaces removed: the tokenized folders split premise and hypothesis differently at times
    # (お 話 して / お 話して), and the occupation is then the word the untokenized file has.
    bare_premise, bare_hypothesis = _SPACE.sub("", premise), _SPACE.sub("", hypothesis)
    span = substituted_span(bare_premise, bare_hypothesis, words[0])
    if span is None:
        raise ValueError(
            f"{where}: sentence2 is not sentence1 with one span replaced by {words[0]} "
            f"(sentence1 {premise!r}, sentence2 {hypothesis!r})"
        )
    occupation = bare_premise[span[0] : span[1]]
    template = bare_premise[: span[0]] + SLOT + bare_premise[span[1] :]
    return {
        "id": f"{ABBREVIATION[subset]}-{record['id']}",
        "premise": premise,
        "hypothesis": hypothesis,
        "label": LABELS.index(label),
        "occupation": occupation,
        "occupation_en": english.get(occupation, ""),
        "occupation_type": implied_type(subset, gender),
        "hypothesis_gender": gender,
        "template_id": template_id(template),
        "subset": subset,
        "occupation_in_file": str(record["occ_word"]),
        "occupation_type_in_file": str(record["occ_type"]),
        "source_file": source_file,
    }


@dataclass
class ReleaseRead:
    """One release folder read: rows per subset, the rows whose fields disagree, the union check."""

    folder: ReleaseFolder
    rows: dict[str, list[dict]]
    disagreements: list[dict]
    union_check: str

    @property
    def all_rows(self) -> list[dict]:
        """PS, AS and NS one after the other: the ``all`` config."""
        return [row for subset in SET_STEMS for row in self.rows[subset]]


def disagrees(row: dict) -> bool:
    """Whether the file's ``occ_word`` / ``occ_type`` differ from what the pair and file say."""
    return (
        _SPACE.sub("", row["occupation_in_file"]) != row["occupation"]
        or FILE_TYPES[row["occupation_type_in_file"]] != row["occupation_type"]
    )


OCCUPATION_WORDS = Path("occupation-words") / "occup_en-ja_v1.1.tsv"


def _occupation_words_file(directory: Path) -> Path | None:
    """The release's occupation-words TSV beside a copy: in ``directory``, a parent of it (up to
    the checkout), or under its ``ja_v1.1``."""
    for base in (directory, *list(directory.parents)[:3]):
        for candidate in (base / OCCUPATION_WORDS, base / "ja_v1.1" / OCCUPATION_WORDS):
            if candidate.is_file():
                return candidate
    return None


def read_occupation_words(path: Path) -> dict[str, str]:
    """``{Japanese name: English name}`` of the release's ``occup_en-ja_v1.1.tsv`` (En, Ja, Type)."""
    english: dict[str, str] = {}
    with open_text(path) as handle:
        header = handle.readline().rstrip("\n").split("\t")
        if header[:2] != ["En", "Ja"]:
            raise ValueError(
                f"{path}, line 1: expected the header En<TAB>Ja<TAB>Type, got {header}"
            )
        for number, line in enumerate(handle, start=2):
            if not line.strip():
                continue
            fields = line.rstrip("\n").split("\t")
            if len(fields) < 2 or not fields[0].strip() or not fields[1].strip():
                raise ValueError(
                    f"{path}, line {number}: expected En<TAB>Ja<TAB>Type, got {line.strip()!r}"
                )
            english[fields[1].strip()] = fields[0].strip()
    return english


def release_english(directory: str | Path | None) -> tuple[dict[str, str], dict[str, str] | None]:
    """The release's own English occupation names and the provenance of the file they come from:
    the TSV beside the user's copy (``directory``), else the pinned one fetched; ``({}, None)``
    where neither can be had (the caller falls back to the project lexicon)."""
    name = sources.NLI_RELEASE_OCCUPATIONS
    if directory is not None:
        path = _occupation_words_file(Path(directory).expanduser())
        if path is None:
            return {}, None
        resolved = sources.resolve(name, path)
    else:
        try:
            resolved = sources.resolve(name)
        except sources.SourceUnavailable:
            return {}, None
    return read_occupation_words(resolved.path), _with_pin(resolved.provenance(), name)


def read_folder(folder: ReleaseFolder, english: Mapping[str, str] | None = None) -> ReleaseRead:
    """Rows of one release folder, in file order, PS then AS then NS."""
    english = dict(english or {})
    rows: dict[str, list[dict]] = {}
    records: list[dict] = []
    ids: dict[str, str] = {}
    for subset, stem in SET_STEMS.items():
        path = folder.files[stem]
        rows[subset] = []
        for number, record in _read_records(path):
            where = f"{path}, line {number}"
            row = _row(record, where, subset, folder.relative(path), english)
            if row["id"] in ids:
                raise ValueError(f"{where}: id {record['id']!r} already used at {ids[row['id']]}")
            ids[row["id"]] = where
            rows[subset].append(row)
            records.append(record)
        if not rows[subset]:
            raise ValueError(f"{path}: the file holds no rows")
    disagreements = [row for subset_rows in rows.values() for row in subset_rows if disagrees(row)]
    if disagreements:
        logger.warning(
            "%s: %d row(s) whose occ_word/occ_type disagree with the pair and the file's set; kept in "
            "their file's set with both values, listed in the card:",
            folder.location,
            len(disagreements),
        )
        for row in disagreements:
            logger.warning(
                "  %s id %s: occupation %s (%s, from the pair and the set); the file says %s (%s)",
                row["source_file"],
                row["id"].split("-", 1)[1],
                row["occupation"],
                row["occupation_type"],
                row["occupation_in_file"],
                row["occupation_type_in_file"],
            )
    return ReleaseRead(folder, rows, disagreements, _check_union(folder, records))


def _check_union(folder: ReleaseFolder, records: list[dict]) -> str:
    """Compare ``4-all`` with the three set files one after the other; the card's sentence."""
    path = folder.files.get(UNION_STEM)
    if path is None:
        return "absent from this copy, not checked"
    union = [record for _, record in _read_records(path)]
    name = folder.relative(path)
    if union == records:
        return f"`{name}` checked: equal, record for record, to the three set files in order ({len(union):,} rows)"
    first = next((i for i, (a, b) in enumerate(zip(union, records, strict=False)) if a != b), None)
    where = (
        f"first at record {first + 1}"
        if first is not None
        else f"{len(union):,} records against {len(records):,}"
    )
    message = (
        f"`{name}` differs from the three set files in order ({where}); the `all{folder.config_suffix}` "
        "config holds the three set files"
    )
    logger.warning("%s", message)
    return message


@dataclass
class Fetched:
    """The release folders a build reads, where each file came from, or why there are none;
    ``reads`` holds the folders once read."""

    folders: list[ReleaseFolder]
    provenance: list[dict[str, str]]
    unavailable: str | None = None
    reads: list[ReleaseRead] = field(default_factory=list)


def _with_pin(provenance: dict[str, str], name: str) -> dict[str, str]:
    """The provenance row, saying whether the file is the one pinned at the release commit."""
    source = sources.SOURCES.get(name)
    pinned = next(iter(source.url_sha256.values()), None) if source is not None else None
    if pinned is None:
        release = "not a file of the pinned release"
    elif provenance["sha256"] == pinned:
        release = f"same file as {sources.NLI_RELEASE_COMMIT[:7]}"
    else:
        release = f"DIFFERS from {sources.NLI_RELEASE_COMMIT[:7]}"
    return {**provenance, "release": release}


def local_release(directory: str | Path) -> Fetched:
    """The release folders under the user's ``directory``, each file's sha256 recorded."""
    folders = find_release(directory)
    provenance = []
    for folder in folders:
        for stem, path in folder.files.items():
            name = sources.nli_release_source_name(folder.kind, stem + FOLDERS[folder.kind][0])
            if name in sources.SOURCES and folder.version == "1.1":
                row = sources.resolve(name, path).provenance()
            else:
                row = {
                    "source": f"{folder.kind}/{path.name}",
                    "origin": "user",
                    "location": str(path),
                    "sha256": sources.sha256_of(path),
                    "license": "MIT (Anantaprayoon et al., bias-eval-nli-considering-all-labels)",
                }
            provenance.append(_with_pin(row, name))
    return Fetched(folders, provenance)


def _tried(err: Exception) -> str:
    """The places ``resolve`` tried and why each failed, on one line."""
    tried = [line.strip()[2:] for line in str(err).splitlines() if line.strip().startswith("- ")]
    return "; ".join(tried) or str(err)


AUTHORS_DIR_FLAG = "--authors-dir DIR (ja_v1.1/bias-eval-set_v1.1 or one of its folders)"


def fetch_release(required: bool) -> Fetched:
    """Every file of the four folders from the canonical URLs (pinned commit and sha256).

    When a file cannot be fetched (no network, downloads switched off, a file missing upstream)
    and the release is not ``required``, return the reason instead: the build goes on without
    the release rather than with part of it. A checksum mismatch is always an error: an altered
    release is never built, nor silently replaced by the generated sets.
    """
    folders, provenance = [], []
    base = f"github.com/{sources.NLI_RELEASE_REPOSITORY}@{sources.NLI_RELEASE_COMMIT[:7]}"
    for kind, (suffix, _) in FOLDERS.items():
        folder = ReleaseFolder(kind, f"{base}:{sources.NLI_RELEASE_EVAL_FOLDER}/{kind}")
        for stem in (*SET_STEMS.values(), UNION_STEM):
            name = sources.nli_release_source_name(kind, stem + suffix)
            try:
                resolved = sources.resolve(name, flag=AUTHORS_DIR_FLAG)
            except sources.SourceError as err:
                # resolve() reports an altered file as a checksum mismatch: never a fallback.
                unreachable = "checksum mismatch" not in str(err)
                if unreachable and not required:
                    return Fetched([], [], f"it could not be fetched: {_tried(err)}")
                raise
            folder.files[stem] = resolved.path
            provenance.append(_with_pin(resolved.provenance(), name))
        folders.append(folder)
    return Fetched(folders, provenance)
