"""`bias-hub build nli_gender_bias`: the generated sets (our lexicon x our templates), card, bad input.

The authors' release is tested in ``test_nli_gender_bias_release.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
import yaml

from bias_hub.builders.nli_gender_bias import build
from bias_hub.builders.nli_gender_bias.lexicon import (
    PROFESSIONS_SOURCE,
    load_occupations,
    load_templates,
    read_professions,
)
from bias_hub.builders.shared.sources import resolve
from bias_hub.pipelines.cli import build_parser


@pytest.fixture(scope="module")
def wheel_copy() -> Path:
    """The real professions list as the pinned registry wheel holds it (cached after first use)."""
    return resolve(PROFESSIONS_SOURCE, allow_download=False).path


def _professions_list(path: Path, wheel_copy: Path) -> list[list]:
    """The upstream shape (a JSON list of [word, s1, s2]) of the real list, written to ``path``."""
    rows = [list(row) for row in read_professions(wheel_copy)]
    path.write_text(json.dumps(rows), encoding="utf-8")
    return rows


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory, wheel_copy: Path) -> Path:
    root = tmp_path_factory.mktemp("nli_build")
    _professions_list(root / "professions.json", wheel_copy)
    build(root / "out", source="templates", professions=root / "professions.json")
    return root / "out" / "nli_gender_bias"


def _load(folder: Path, config: str) -> datasets.Dataset:
    return datasets.load_dataset(str(folder), config)["test"]


def test_counts_follow_from_lexicon_and_templates(built: Path, wheel_copy: Path) -> None:
    occupations, templates = load_occupations(professions=wheel_copy), load_templates()
    stereotyped = sum(o.type != "non_stereotyped" for o in occupations)
    neutral = sum(o.type == "non_stereotyped" for o in occupations)
    # one PS and one AS row per stereotyped occupation and template; two NS rows
    # (female, male) per non-stereotyped occupation and template.
    expected = {
        "generated_pro_stereotypical": stereotyped * len(templates),
        "generated_anti_stereotypical": stereotyped * len(templates),
        "generated_non_stereotypical": 2 * neutral * len(templates),
    }
    expected["generated_all"] = sum(expected.values())
    # The shipped lexicon: 12 + 77 stereotyped, 143 non-stereotyped; 12 templates.
    assert expected == {
        "generated_pro_stereotypical": 89 * 12,
        "generated_anti_stereotypical": 89 * 12,
        "generated_non_stereotypical": 2 * 143 * 12,
        "generated_all": 2 * 89 * 12 + 2 * 143 * 12,
    }
    for config, rows in expected.items():
        assert _load(built, config).num_rows == rows
    card = (built / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---\n", 2)[1])
    assert {
        i["config_name"]: i["splits"][0]["num_examples"] for i in header["dataset_info"]
    } == expected
    assert (
        f"| `generated_pro_stereotypical` | {expected['generated_pro_stereotypical']:,} | 12 / 77 / 0 |"
        in card
    )
    # --source templates asks for no release: the card says so without pointing at a download.
    assert "is not in this build: not requested (--source templates)" in card
    assert "| female_stereotyped | 17 |" in card  # 17 source words have s2 < -0.5, |s1| < 0.5
    assert "| bolukbasi_professions | user |" in card  # where the scores came from


def test_rows_are_what_each_subset_promises(built: Path) -> None:
    table = _load(built, "generated_all")
    assert table.features["label"].names == ["entailment", "neutral", "contradiction"]
    assert set(table["label"]) == {1}
    congruent = {"female_stereotyped": "female", "male_stereotyped": "male"}
    words = {"female": "女性", "male": "男性"}
    for row in table:
        assert row["hypothesis"] == row["premise"].replace(
            row["occupation"], words[row["hypothesis_gender"]]
        )
        if row["subset"] == "pro_stereotypical":
            assert row["hypothesis_gender"] == congruent[row["occupation_type"]]
        elif row["subset"] == "anti_stereotypical":
            assert row["hypothesis_gender"] != congruent[row["occupation_type"]]
        else:
            assert row["occupation_type"] == "non_stereotyped"
    assert len(set(table["id"])) == table.num_rows
    example = next(r for r in table if r["id"] == "ps-nurse-t02-female")
    assert example["premise"] == "駅のホームで看護師が電車を待っている。"
    assert example["hypothesis"] == "駅のホームで女性が電車を待っている。"


@pytest.mark.slow  # builds whole dataset folders end to end
def test_building_twice_gives_identical_rows(built: Path, tmp_path: Path, wheel_copy: Path) -> None:
    # Second build straight from the wheel's shape of the list (key gender.professions).
    build(tmp_path, source="templates", professions=wheel_copy)
    again = _load(tmp_path / "nli_gender_bias", "generated_all")
    assert again.to_list() == _load(built, "generated_all").to_list()


def test_a_source_that_disagrees_with_the_review_stops_the_build(
    tmp_path: Path, wheel_copy: Path
) -> None:
    out = tmp_path / "out"
    rows = _professions_list(tmp_path / "p.json", wheel_copy)
    nurse = next(row for row in rows if row[0] == "nurse")
    nurse[2] = 0.0  # no longer female-stereotyped: the reviewed type is stale
    (tmp_path / "p.json").write_text(json.dumps(rows), encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"occupations.tsv, line [0-9]+ \(nurse\), field 'expected_type'"
    ):
        build(out, source="templates", professions=tmp_path / "p.json")
    (tmp_path / "p.json").write_text(
        json.dumps([r for r in rows if r[0] != "nurse"]), encoding="utf-8"
    )
    with pytest.raises(ValueError, match=r"not in the professions list .*line [0-9]+ \(nurse\)"):
        build(out, source="templates", professions=tmp_path / "p.json")
    assert not out.exists() or list(out.iterdir()) == []


def test_no_source_check_is_refused_with_the_reason(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["build", "nli_gender_bias", "--no-source-check"])
    assert "--professions PATH" in capsys.readouterr().err


def test_a_bad_template_leaves_no_folder_behind(tmp_path: Path, wheel_copy: Path) -> None:
    templates = tmp_path / "templates.tsv"
    templates.write_text(
        "template_id\ttext\tstructure\nt01\t誰かが走る。\tno slot\n", encoding="utf-8"
    )
    out = tmp_path / "out"
    with pytest.raises(ValueError, match=r"templates.tsv, line 2 \(t01\)"):
        build(out, source="templates", professions=wheel_copy, templates=templates)
    assert not (out / "nli_gender_bias").exists()
    leftovers = list(out.iterdir()) if out.exists() else []
    assert leftovers == []


def test_authors_mode_without_files_says_which_option_to_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bias_hub.builders.shared.sources import SourceError

    monkeypatch.setenv("BIAS_HUB_NO_URL", "1")
    monkeypatch.setenv("BIAS_HUB_CACHE", str(tmp_path / "cache"))
    with pytest.raises(
        SourceError, match=r"--authors-dir DIR \(ja_v1.1/bias-eval-set_v1.1 or one of its folders\)"
    ):
        build(tmp_path / "out", source="authors")
    assert not (tmp_path / "out" / "nli_gender_bias").exists()


def test_templates_mode_without_the_list_says_which_option_to_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bias_hub.builders.shared import sources

    # A list with nowhere to come from: the message must point at this command's option.
    nowhere = sources.Source(name=PROFESSIONS_SOURCE, license="MIT", description="professions")
    monkeypatch.setitem(sources.SOURCES, PROFESSIONS_SOURCE, nowhere)
    with pytest.raises(sources.SourceError, match=r"Give a local copy with --professions PATH\."):
        build(tmp_path / "out", source="templates")
    assert not (tmp_path / "out" / "nli_gender_bias").exists()
