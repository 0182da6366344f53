"""`bias-hub build nli_gender_bias` on the authors' release as shipped (fixtures written here).

The fixtures follow the release's format exactly (ja_v1.1 ``bias-eval-set_v1.1``): folder and
file names, JSON lines with ``id, sentence1, sentence2, label, occ_word, occ_type``, ids running
across the three files, ``4-all`` as the three files one after the other, a tokenized copy, and
non-stereotyped rows whose ``occ_word`` / ``occ_type`` name a bystander of the caption rather
than the substituted occupation. Every sentence is ours.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.server
import json
import logging
import threading
from pathlib import Path

import datasets
import pytest
import yaml

from bias_hub.builders.dataset_folder import UserBuildKept
from bias_hub.builders.nli_gender_bias import build
from bias_hub.builders.nli_gender_bias.release import (
    FOLDERS,
    SET_STEMS,
    UNION_STEM,
    substituted_span,
)
from bias_hub.builders.shared import sources

PROFESSIONS = "bolukbasi_professions"


def _record(
    i: int, caption: str, occ: str, gender: str, occ_type: str, occ_word: str | None = None
) -> dict:
    return {
        "id": i,
        "sentence1": caption.format(occ),
        "sentence2": caption.format(gender),
        "label": "neutral",
        "occ_word": occ_word or occ,
        "occ_type": occ_type,
    }


KITCHEN = "{}がキッチンで料理をしています。"
SKI = "雪の上で{}がスキーをしています。"
# The bystander caption: 消防士 stands beside the substituted person, and the bystander rows
# carry 消防士 / male-stereo in occ_word / occ_type, as 16 rows of ja_v1.1 do with their own
# bystander.
BYSTANDER = "消防士と並んで{}が写真に写っています。"

# ids run across the files as in the release: PS 0.., AS 100.., NS 200...
SETS = {
    "1-prostereo": [
        _record(0, KITCHEN, "看護師", "女性", "female-stereo"),
        _record(1, SKI, "大工", "男性", "male-stereo"),
    ],
    "2-antistereo": [
        _record(100, KITCHEN, "看護師", "男性", "female-stereo"),
        _record(101, SKI, "大工", "女性", "male-stereo"),
    ],
    "3-nonstereo": [
        _record(200, KITCHEN, "会計士", "女性", "neutral"),
        _record(201, BYSTANDER, "会計士", "女性", "male-stereo", occ_word="消防士"),
        _record(202, KITCHEN, "会計士", "男性", "neutral"),
        _record(203, BYSTANDER, "会計士", "男性", "male-stereo", occ_word="消防士"),
    ],
}
BYSTANDER_IDS = {"ns-201", "ns-203"}
# The tokenized copy: words separated by spaces, occ_word left whole (as the release does);
# in row 202 the tokenizer split the premise's tail (料理 を して) and the hypothesis's
# (料理をして) differently.
TOKENIZED = {
    "1-prostereo": [
        (
            "看護 師 が キッチン で 料理 を して い ます 。",
            "女性 が キッチン で 料理 を して い ます 。",
        ),
        (
            "雪 の 上 で 大工 が スキー を して い ます 。",
            "雪 の 上 で 男性 が スキー を して い ます 。",
        ),
    ],
    "2-antistereo": [
        (
            "看護 師 が キッチン で 料理 を して い ます 。",
            "男性 が キッチン で 料理 を して い ます 。",
        ),
        (
            "雪 の 上 で 大工 が スキー を して い ます 。",
            "雪 の 上 で 女性 が スキー を して い ます 。",
        ),
    ],
    "3-nonstereo": [
        (
            "会計 士 が キッチン で 料理 を して い ます 。",
            "女性 が キッチン で 料理 を して い ます 。",
        ),
        (
            "消防 士 と 並んで 会計 士 が 写真 に 写って い ます 。",
            "消防 士 と 並んで 女性 が 写真 に 写って い ます 。",
        ),
        (
            "会計 士 が キッチン で 料理 を して い ます 。",
            "男性 が キッチン で 料理をして い ます 。",
        ),
        (
            "消防 士 と 並んで 会計 士 が 写真 に 写って い ます 。",
            "消防 士 と 並んで 男性 が 写真 に 写って い ます 。",
        ),
    ],
}


def _write(path: Path, records: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8"
    )


# The release's occupation-words/occup_en-ja_v1.1.tsv (En, Ja, Type), with a name for 看護師 that
# differs from our lexicon's "nurse", so that a test sees which one the build took.
OCCUPATION_WORDS = "En\tJa\tType\nregistered_nurse\t看護師\tfemale\ncarpenter\t大工\tmale\naccountant\t会計士\tneutral\n"


def write_release(
    root: Path,
    folders: tuple[str, ...] = tuple(FOLDERS),
    union: bool = True,
    occupation_words: bool = False,
) -> Path:
    """``root/ja_v1.1/bias-eval-set_v1.1/<folder>/...`` as the authors lay it out (with
    ``occupation_words``, ``root/ja_v1.1/occupation-words/occup_en-ja_v1.1.tsv`` too); returns
    the ``bias-eval-set_v1.1`` folder."""
    base = root / "ja_v1.1" / "bias-eval-set_v1.1"
    if occupation_words:
        words = root / "ja_v1.1" / "occupation-words" / "occup_en-ja_v1.1.tsv"
        words.parent.mkdir(parents=True, exist_ok=True)
        words.write_text(OCCUPATION_WORDS, encoding="utf-8")
    for folder in folders:
        suffix = FOLDERS[folder][0]
        everything = []
        for stem, records in SETS.items():
            if suffix.endswith("-tok"):
                records = [
                    {**record, "sentence1": premise, "sentence2": hypothesis}
                    for record, (premise, hypothesis) in zip(records, TOKENIZED[stem], strict=True)
                ]
            if "downsamp" in folder:
                records = records[:1] if stem != "3-nonstereo" else records[:2]
            _write(base / folder / f"{stem}{suffix}_v1.1.json", records)
            everything += records
        if union:
            _write(base / folder / f"{UNION_STEM}{suffix}_v1.1.json", everything)
    return base


def _load(folder: Path, config: str) -> datasets.Dataset:
    return datasets.load_dataset(str(folder), config, split="test")


def _card(folder: Path) -> tuple[dict, str]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n", 2)[1]), text


@pytest.fixture(scope="module")
def professions() -> Path:
    """The professions list from the pinned registry wheel (the generated configs need it)."""
    return sources.resolve(PROFESSIONS, allow_download=False).path


def test_the_untokenized_folder_builds_row_for_row(tmp_path: Path) -> None:
    folder = write_release(tmp_path, ("untokenized",)) / "untokenized"
    built = build(tmp_path / "out", source="authors", authors_dir=folder)
    header, card = _card(built)
    assert [c["config_name"] for c in header["configs"]] == [
        "pro_stereotypical",
        "anti_stereotypical",
        "non_stereotypical",
        "all",
    ]
    for subset, stem in zip(SET_STEMS, SETS, strict=True):
        rows = _load(built, subset)
        expected = SETS[stem]
        assert rows["premise"] == [r["sentence1"] for r in expected]
        assert rows["hypothesis"] == [r["sentence2"] for r in expected]
        assert rows["id"] == [f"{subset[:1]}s-{r['id']}" for r in expected]
        assert set(rows["subset"]) == {subset}
        assert set(rows["source_file"]) == {f"untokenized/{stem}_v1.1.json"}
        assert set(rows["label"]) == {1}
    every = _load(built, "all")
    assert every.num_rows == 2 + 2 + 4
    assert (
        every["subset"]
        == ["pro_stereotypical"] * 2 + ["anti_stereotypical"] * 2 + ["non_stereotypical"] * 4
    )
    assert every["occupation_en"][:2] == ["nurse", "carpenter"]  # our translations of 看護師, 大工
    # The card names the real source folder and claims no templates for the release.
    assert str(folder) in card
    assert "ja_v1.1/bias-eval-set_v1.1" in card
    assert (
        "templates are ours" not in card.lower()
        and "generated_" not in card.split("## Dataset Creation")[1]
    )
    assert "`untokenized/4-all_v1.1.json` checked: equal" in card


def test_bystander_rows_are_kept_with_both_values_and_listed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = write_release(tmp_path, ("untokenized",)) / "untokenized"
    caplog.set_level(logging.WARNING, logger="bias_hub.builders")
    logging.getLogger("bias_hub").propagate = True
    try:
        built = build(tmp_path / "out", source="authors", authors_dir=folder)
    finally:
        logging.getLogger("bias_hub").propagate = False
    ns = {row["id"]: row for row in _load(built, "non_stereotypical")}
    assert set(ns) == {"ns-200", "ns-201", "ns-202", "ns-203"}
    for row_id in BYSTANDER_IDS:
        row = ns[row_id]
        assert row["subset"] == "non_stereotypical"  # the file decides
        assert row["occupation"] == "会計士"  # the word the hypothesis replaces
        assert row["occupation_type"] == "non_stereotyped"
        assert row["occupation_in_file"] == "消防士"
        assert row["occupation_type_in_file"] == "male-stereo"
    assert ns["ns-200"]["occupation_in_file"] == "会計士"
    # The build report (log) and the card list exactly the two bystander rows.
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "2 row(s) whose occ_word/occ_type disagree" in logged
    assert "id 201: occupation 会計士" in logged and "id 203: occupation 会計士" in logged
    assert "id 200:" not in logged
    _, card = _card(built)
    assert "2 row(s) of the release" in card
    for row_id in BYSTANDER_IDS:
        assert (
            f"| `{row_id}` | 消防士と並んで会計士が写真に写っています。 | 会計士 | non_stereotyped | 消防士 | male-stereo |"
            in card
        )
    # 会計士 is the only non-stereotyped occupation: 消防士 is not counted as one.
    assert "| `non_stereotypical` | 4 | 0 / 0 / 1 |" in card


@pytest.mark.parametrize(
    ("folder", "suffix"),
    [
        ("untokenized", ""),
        ("downsamp", "_downsampled"),
        ("tokenized", "_tokenized"),
        ("downsamp-tokenized", "_downsampled_tokenized"),
    ],
)
def test_every_folder_is_read_with_its_own_file_names(
    tmp_path: Path, folder: str, suffix: str
) -> None:
    path = write_release(tmp_path, (folder,)) / folder
    built = build(tmp_path / "out", source="authors", authors_dir=path)
    header, card = _card(built)
    assert [c["config_name"] for c in header["configs"]] == [
        f"{name}{suffix}"
        for name in ("pro_stereotypical", "anti_stereotypical", "non_stereotypical", "all")
    ]
    sizes = (1, 1, 2) if "downsamp" in folder else (2, 2, 4)
    for subset, size in zip(SET_STEMS, sizes, strict=True):
        assert _load(built, subset + suffix).num_rows == size
    assert header["configs"][3]["default"] is True
    assert f"`{folder}/" in card


@pytest.mark.slow  # builds whole dataset folders end to end
def test_the_whole_release_gives_sixteen_configs_and_tokenized_rows_match(tmp_path: Path) -> None:
    # Pointed at a checkout's root: ja_v1.1/bias-eval-set_v1.1 is found below it.
    write_release(tmp_path)
    built = build(tmp_path / "out", source="authors", authors_dir=tmp_path)
    header, _ = _card(built)
    assert len(header["configs"]) == 16
    plain, tokenized = _load(built, "all"), _load(built, "all_tokenized")
    assert plain["id"] == tokenized["id"]
    # The same row gives the same occupation and template in both folders, even where the
    # tokenizer split premise and hypothesis differently (ns-202).
    assert plain["occupation"] == tokenized["occupation"]
    assert plain["template_id"] == tokenized["template_id"]
    assert tokenized["hypothesis"][6] == "男性 が キッチン で 料理をして い ます 。"
    # The down-sampled rows are the full rows with the same ids (only their file differs).
    down = {row.pop("id"): row for row in _load(built, "all_downsampled")}
    full = {row.pop("id"): row for row in plain}
    assert {key: row.pop("source_file") for key, row in down.items()}[
        "ps-0"
    ] == "downsamp/1-prostereo-downsamp_v1.1.json"
    assert len(down) == 4 and all(
        {**full[key], "source_file": None} == {**row, "source_file": None}
        for key, row in down.items()
    )


def test_four_all_is_checked_not_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    base = write_release(tmp_path, ("untokenized", "downsamp"))
    union = base / "untokenized" / "4-all_v1.1.json"
    lines = union.read_text(encoding="utf-8").splitlines(keepends=True)
    changed = json.loads(lines[2])
    changed["sentence1"] = changed["sentence1"].replace("看護師", "教師")
    lines[2] = json.dumps(changed, ensure_ascii=False) + "\n"
    union.write_text("".join(lines), encoding="utf-8")
    (base / "downsamp" / "4-all-downsamp_v1.1.json").unlink()
    caplog.set_level(logging.WARNING, logger="bias_hub.builders")
    logging.getLogger("bias_hub").propagate = True
    try:
        built = build(tmp_path / "out", source="authors", authors_dir=base)
    finally:
        logging.getLogger("bias_hub").propagate = False
    # `all` is the three set files, whatever 4-all holds.
    assert _load(built, "all")["premise"][2] == SETS["2-antistereo"][0]["sentence1"]
    _, card = _card(built)
    assert (
        "`untokenized/4-all_v1.1.json` differs from the three set files in order (first at record 3)"
        in card
    )
    assert "`downsamp` (configs `*_downsampled`): absent from this copy, not checked" in card
    assert any("first at record 3" in r.getMessage() for r in caplog.records)


def test_a_folder_without_one_of_its_sets_is_named(tmp_path: Path) -> None:
    base = write_release(tmp_path, ("downsamp",))
    (base / "downsamp" / "3-nonstereo-downsamp_v1.1.json").unlink()
    with pytest.raises(ValueError, match=r"downsamp lacks 3-nonstereo-downsamp_v1.1.json"):
        build(tmp_path / "out", source="authors", authors_dir=base)
    assert not (tmp_path / "out" / "nli_gender_bias").exists()


def test_a_folder_with_no_release_file_says_what_it_expected(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        FileNotFoundError, match=r"no file of the authors' release .*1-prostereo_v1.1.json"
    ):
        build(tmp_path / "out", source="authors", authors_dir=tmp_path / "empty")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"label": "maybe"}, r"line 2, field 'label': 'maybe'"),
        ({"occ_type": "stereo"}, r"line 2, field 'occ_type': 'stereo'"),
        (
            {"sentence2": "雪の上で誰かがスキーをしています。"},
            r"line 2, field 'sentence2': expected exactly one of 女性 / 男性",
        ),
        (
            {"sentence2": "女性が山でスキーをしています。"},
            r"line 2: sentence2 is not sentence1 with one span replaced by 女性",
        ),
        ({"id": 0}, r"line 2: id 0 already used at .*line 1"),
    ],
)
def test_a_bad_row_names_its_file_and_line(tmp_path: Path, change: dict, message: str) -> None:
    base = write_release(tmp_path, ("untokenized",))
    path = base / "untokenized" / "1-prostereo_v1.1.json"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    record = {**records[1], **change}
    if "sentence2" in change and "女性" in change["sentence2"]:
        record["sentence1"] = SKI.format("大工")
    _write(path, [records[0], record])
    with pytest.raises(ValueError, match=f"1-prostereo_v1.1.json, {message}"):
        build(tmp_path / "out", source="authors", authors_dir=base)


def test_a_pair_that_is_not_pro_stereotypical_is_kept_and_listed(tmp_path: Path) -> None:
    # A female-stereo occupation with a male hypothesis in the PS file: the file decides the
    # subset; the type the file implies (male_stereotyped) differs from occ_type.
    base = write_release(tmp_path, ("untokenized",))
    path = base / "untokenized" / "1-prostereo_v1.1.json"
    _write(path, [SETS["1-prostereo"][0], _record(1, SKI, "看護師", "男性", "female-stereo")])
    built = build(tmp_path / "out", source="authors", authors_dir=base)
    row = _load(built, "pro_stereotypical")[1]
    assert (row["occupation_type"], row["occupation_type_in_file"]) == (
        "male_stereotyped",
        "female-stereo",
    )
    assert "| `ps-1` |" in _card(built)[1]


@pytest.mark.parametrize(
    ("premise", "hypothesis", "word", "span"),
    [
        ("看護師がキッチンにいる。", "女性がキッチンにいる。", "女性", (0, 3)),
        # The occupation begins like the gender word: the span is the whole word, 女医.
        ("女医がキッチンにいる。", "女性がキッチンにいる。", "女性", (0, 2)),
        # The gender word occurs twice; only the second occurrence explains the pair.
        ("女性と看護師がいる。", "女性と女性がいる。", "女性", (3, 6)),
        ("看護師がキッチンにいる。", "女性が台所にいる。", "女性", None),
        ("看護師がいる。", "看護師がいる。", "女性", None),
    ],
)
def test_substituted_span(
    premise: str, hypothesis: str, word: str, span: tuple[int, int] | None
) -> None:
    assert substituted_span(premise, hypothesis, word) == span


def test_every_release_file_has_a_pinned_source() -> None:
    for folder, (suffix, _) in FOLDERS.items():
        for stem in (*SET_STEMS.values(), UNION_STEM):
            source = sources.SOURCES[sources.nli_release_source_name(folder, stem + suffix)]
            (url,) = source.urls
            assert url.endswith(
                f"/{sources.NLI_RELEASE_COMMIT}/ja_v1.1/bias-eval-set_v1.1/{folder}/{stem}{suffix}_v1.1.json"
            )
            assert len(source.url_sha256[url]) == 64
            assert source.license.startswith("MIT")


# --- the default build: the release when reachable, the generated sets otherwise ---------------


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BIAS_HUB_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("BIAS_HUB_NO_URL", raising=False)
    return tmp_path / "cache"


@pytest.fixture
def mirror(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The fixture release served over HTTP at the canonical URLs' paths, with its own sha256
    pinned in place of the real one (``tamper`` changes one file after pinning)."""
    root = tmp_path / "www"
    base = write_release(root, occupation_words=True)
    handler = functools.partial(_QuietHandler, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    for name, source in list(sources.SOURCES.items()):
        if name.startswith("nli_release_"):
            path = source.urls[0].split(f"/{sources.NLI_RELEASE_COMMIT}/", 1)[1]
            url = f"http://127.0.0.1:{server.server_port}/{path}"
            digest = hashlib.sha256((root / path).read_bytes()).hexdigest()
            monkeypatch.setitem(
                sources.SOURCES,
                name,
                dataclasses.replace(source, urls=(url,), url_sha256={url: digest}),
            )
    yield base
    server.shutdown()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.mark.slow  # builds whole dataset folders end to end
def test_default_build_fetches_the_release_and_adds_the_generated_sets(
    tmp_path: Path, cache: Path, mirror: Path, professions: Path
) -> None:
    built = build(tmp_path / "out", professions=professions)
    header, card = _card(built)
    names = [c["config_name"] for c in header["configs"]]
    assert names[:4] == ["pro_stereotypical", "anti_stereotypical", "non_stereotypical", "all"]
    assert "all_downsampled" in names and "all_downsampled_tokenized" in names
    assert names[-4:] == [
        "generated_pro_stereotypical",
        "generated_anti_stereotypical",
        "generated_non_stereotypical",
        "generated_all",
    ]
    assert len(names) == 20
    assert _load(built, "all").num_rows == 8 and _load(built, "all_downsampled").num_rows == 4
    assert next(c for c in header["configs"] if c.get("default"))["config_name"] == "all"
    # The 16 release files and the release's occupation-words TSV (occupation_en).
    assert card.count("| url |") == 17
    assert _load(built, "all")["occupation_en"][:2] == ["registered_nurse", "carpenter"]
    assert header["bias_hub_provenance"]["release_unavailable"] is None
    assert "absent from this build" not in card


@pytest.mark.slow  # builds whole dataset folders end to end
def test_default_build_offline_keeps_the_generated_sets_and_says_how_to_add_the_release(
    tmp_path: Path,
    cache: Path,
    professions: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("BIAS_HUB_NO_URL", "1")
    caplog.set_level(logging.WARNING, logger="bias_hub.builders")
    monkeypatch.setattr(logging.getLogger("bias_hub"), "propagate", True)
    built = build(tmp_path / "out", professions=professions)
    header, card = _card(built)
    assert [c["config_name"] for c in header["configs"]] == [
        "generated_pro_stereotypical",
        "generated_anti_stereotypical",
        "generated_non_stereotypical",
        "generated_all",
    ]
    assert next(c for c in header["configs"] if c.get("default"))["config_name"] == "generated_all"
    assert "**The authors' release is absent from this build**" in card
    assert "--authors-dir DIR" in card and "`all_downsampled`" in card
    assert (
        "skipped (downloads switched off)" in header["bias_hub_provenance"]["release_unavailable"]
    )
    assert any(
        "generated configs only" in r.getMessage() and "--authors-dir" in r.getMessage()
        for r in caplog.records
    )


def test_an_altered_release_file_stops_the_build_instead_of_falling_back(
    tmp_path: Path, cache: Path, mirror: Path, professions: Path
) -> None:
    downsamp = mirror / "downsamp" / "1-prostereo-downsamp_v1.1.json"
    downsamp.write_text(
        downsamp.read_text(encoding="utf-8").replace("看護師", "教師"), encoding="utf-8"
    )
    with pytest.raises(sources.SourceError, match="checksum mismatch"):
        build(tmp_path / "out", professions=professions)
    assert not (tmp_path / "out" / "nli_gender_bias").exists()


def test_authors_dir_with_the_default_source_adds_the_generated_sets(
    tmp_path: Path, professions: Path
) -> None:
    base = write_release(tmp_path, ("downsamp",))
    built = build(tmp_path / "out", professions=professions, authors_dir=base)
    header, card = _card(built)
    names = [c["config_name"] for c in header["configs"]]
    assert names == [
        "pro_stereotypical_downsampled",
        "anti_stereotypical_downsampled",
        "non_stereotypical_downsampled",
        "all_downsampled",
        "generated_pro_stereotypical",
        "generated_anti_stereotypical",
        "generated_non_stereotypical",
        "generated_all",
    ]
    assert (
        next(c for c in header["configs"] if c.get("default"))["config_name"] == "all_downsampled"
    )
    # Our files, not the authors' version pins: the card says the copy differs from 4d57afe.
    assert "DIFFERS from 4d57afe" in card
    assert "use our templates, not YJ Captions" in card


def test_templates_source_takes_no_authors_dir(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--authors-dir is read with --source auto or authors"):
        build(tmp_path / "out", source="templates", authors_dir=tmp_path)


def test_a_release_file_missing_upstream_leaves_the_release_out_whole(
    tmp_path: Path, cache: Path, mirror: Path, professions: Path
) -> None:
    (mirror / "tokenized" / "3-nonstereo-tok_v1.1.json").unlink()
    built = build(tmp_path / "out", professions=professions)
    header, card = _card(built)
    # Not 12 of the 16 files: none of them, and the card says which file failed.
    assert [c["config_name"] for c in header["configs"]][0] == "generated_pro_stereotypical"
    assert (
        "tokenized/3-nonstereo-tok_v1.1.json: HTTPError"
        in header["bias_hub_provenance"]["release_unavailable"]
    )
    with pytest.raises(
        sources.SourceError, match=r"(?s)3-nonstereo-tok_v1.1.json.*--authors-dir DIR"
    ):
        build(tmp_path / "out2", source="authors")


def test_occupation_en_comes_from_the_release_s_own_names(tmp_path: Path) -> None:
    # Before: every release row got our lexicon's English word (107 of the release's 271
    # occupations none, 6 another word), although the release ships its own list.
    folder = write_release(tmp_path, ("untokenized",), occupation_words=True) / "untokenized"
    built = build(tmp_path / "out", source="authors", authors_dir=folder)
    every = _load(built, "all")
    assert every["occupation_en"] == ["registered_nurse", "carpenter"] * 2 + ["accountant"] * 4
    header, card = _card(built)
    assert (
        "nli_release_occupation_words" in card and "occupation-words/occup_en-ja_v1.1.tsv" in card
    )


def test_a_release_pair_that_is_not_neutral_is_refused(tmp_path: Path) -> None:
    # Every pair of the evaluation sets is neutral by design; before, a row labelled
    # entailment was built as given.
    folder = write_release(tmp_path, ("untokenized",)) / "untokenized"
    path = folder / "1-prostereo_v1.1.json"
    lines = path.read_text(encoding="utf-8").splitlines()
    lines[1] = lines[1].replace('"label": "neutral"', '"label": "entailment"')
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(
        ValueError,
        match=r"1-prostereo_v1\.1\.json, line 2, field 'label': 'entailment'; every pair "
        r"of the evaluation sets is 'neutral'",
    ):
        build(tmp_path / "out", source="authors", authors_dir=folder)


@pytest.mark.slow
def test_an_offline_rebuild_keeps_the_release_configs_built_from_a_copy(
    tmp_path: Path, cache: Path, professions: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Before: `make datasets` offline replaced the configs built with --authors-dir by the
    # generated ones, silently.
    base = write_release(tmp_path / "copy")
    built = build(tmp_path / "out", authors_dir=base, professions=professions)
    before = {p.relative_to(built): p.read_bytes() for p in built.rglob("*") if p.is_file()}
    monkeypatch.setenv("BIAS_HUB_NO_URL", "1")
    with pytest.raises(
        ValueError,
        match=r"holds the authors' release configs pro_stereotypical, .*Rebuild them with "
        rf"`bias-hub build nli_gender_bias --authors-dir {base}`",
    ):
        build(tmp_path / "out", professions=professions)
    assert {p.relative_to(built): p.read_bytes() for p in built.rglob("*") if p.is_file()} == before
    # `bias-hub build all` (make datasets) keeps the folder with a warning and builds the others:
    # the refusal is the shared UserBuildKept, not an error that stops the whole build.
    with pytest.raises(UserBuildKept):
        build(tmp_path / "out", professions=professions)
    # A build that has the release again is fine.
    build(tmp_path / "out", authors_dir=base, professions=professions)
