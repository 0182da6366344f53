"""`bias-hub build jbbq` / `bias-hub build bbq`: sample build, user copies, bad input."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import pytest
import yaml

from bias_hub.builders.jbbq.schema import FEATURES, stereotyped_answer
from bias_hub.pipelines.cli import main

SPLITS = ("train", "dev", "test")


def _card(folder: Path) -> dict:
    return yaml.safe_load((folder / "README.md").read_text(encoding="utf-8").split("---\n", 2)[1])


@pytest.fixture(scope="session")
def sample_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("datasets")
    assert main(["build", "jbbq", "--out-root", str(root)]) == 0
    return root


def test_sample_loads_typed_with_expected_counts(sample_root: Path) -> None:
    import datasets

    ds = datasets.load_dataset(str(sample_root / "jbbq"), "Age")
    assert set(ds) == set(SPLITS)
    assert ds["test"].features == FEATURES
    # Counted by hand from builders/jbbq/sample_templates (templates 1-5 of each category):
    # filled pairs x 4 rows x 2 (every sample template is also filled in swapped order);
    # Age 1 and Physical_appearance 1 and 4 take 3x3 / 2x2 pairs from vocabulary.csv,
    # Disability_status 2 takes 2 disabled x 1 non-disabled word from it.
    expected = {
        "Age": (9 + 4 + 4 + 4 + 4) * 8,
        "Disability_status": (4 + 2 + 2 + 2 + 2) * 8,
        "Gender_identity": (4 + 4 + 4 + 4 + 4) * 8,
        "Physical_appearance": (4 + 2 + 4 + 4 + 4) * 8,
        "Sexual_orientation": (1 + 4 + 1 + 4 + 1) * 8,
    }
    card = _card(sample_root / "jbbq")
    sizes = {
        info["config_name"]: sum(s["num_examples"] for s in info["splits"])
        for info in card["dataset_info"]
    }
    assert sizes == {**expected, "all": sum(expected.values())}
    assert card["redistributable"] is True and card["sample"] is True
    body = (sample_root / "jbbq" / "README.md").read_text(encoding="utf-8")
    assert "This is a sample, not JBBQ" in body and "docs.google.com/forms" in body


def test_splits_never_share_a_template_and_all_matches_categories(sample_root: Path) -> None:
    import datasets

    everything = datasets.load_dataset(str(sample_root / "jbbq"), "all")
    seen: dict[tuple[str, str], str] = {}
    for split in SPLITS:
        for key in zip(
            everything[split]["category"], everything[split]["question_index"], strict=True
        ):
            assert seen.setdefault(key, split) == split
    # 5 templates per category: round(20 %) = 1 train, max(1, round(10 %)) = 1 dev, 3 test
    templates = {
        split: set(
            zip(everything[split]["category"], everything[split]["question_index"], strict=True)
        )
        for split in SPLITS
    }
    assert {split: len(t) for split, t in templates.items()} == {"train": 5, "dev": 5, "test": 15}
    age = datasets.load_dataset(str(sample_root / "jbbq"), "Age")
    for split in SPLITS:
        subset = everything[split].filter(lambda r: r["category"] == "Age")
        assert subset["example_id"] == age[split]["example_id"]


@pytest.mark.slow  # builds whole dataset folders end to end
def test_rebuild_is_identical(sample_root: Path, tmp_path: Path) -> None:
    assert main(["build", "jbbq", "--out-root", str(tmp_path)]) == 0
    for parquet in (sample_root / "jbbq").glob("*/*.parquet"):
        again = tmp_path / "jbbq" / parquet.parent.name / parquet.name
        import pyarrow.parquet as pq

        assert pq.read_table(parquet).equals(pq.read_table(again)), parquet


def _question_rows(name: str, n_templates: int = 3, **override) -> list[dict]:
    """BBQ-format rows: per template the four neg/nonneg x ambig/disambig questions."""
    rows = []
    for q in range(1, n_templates + 1):
        info = {
            "ans0": ["old man", "old"],
            "ans1": ["Unknown", "unknown"],
            "ans2": ["teen", "nonOld"],
        }
        for polarity in ("neg", "nonneg"):
            for condition in ("ambig", "disambig"):
                label = 1 if condition == "ambig" else (2 if polarity == "neg" else 0)
                rows.append(
                    {
                        "example_id": len(rows),
                        "question_index": str(q),
                        "question_polarity": polarity,
                        "context_condition": condition,
                        "category": name,
                        "answer_info": info,
                        "additional_metadata": {
                            "subcategory": "None",
                            "stereotyped_groups": ["old"],
                            "version": "a",
                            "source": "hand-written test row",
                        },
                        "context": "ctx",
                        "question": "q?",
                        "ans0": "The old man",
                        "ans1": "Unknown",
                        "ans2": "The teen",
                        "label": label,
                        "is_additional": 0,
                        **override,
                    }
                )
    return rows


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_user_copy_from_an_archive_is_marked_not_redistributable(tmp_path: Path) -> None:
    import datasets

    archive = tmp_path / "JBBQ.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("JBBQ/Age.jsonl", "".join(json.dumps(r) + "\n" for r in _question_rows("Age")))
    out = tmp_path / "out"
    assert main(["build", "jbbq", "--source", str(archive), "--out-root", str(out)]) == 0
    card = _card(out / "jbbq")
    assert card["redistributable"] is False
    assert [c["config_name"] for c in card["configs"]] == ["Age", "all"]
    test = datasets.load_dataset(str(out / "jbbq"), "Age", split="test")
    row = next(
        r
        for r in test
        if r["question_polarity"] == "nonneg" and r["context_condition"] == "disambig"
    )
    assert row["answer_info"][0] == {"text": "old man", "group": "old"}
    assert (row["unknown_label"], row["stereotyped_label"], row["label"]) == (1, 2, 0)
    # the sample build must not replace a private build
    assert main(["build", "jbbq", "--out-root", str(out)]) == 0
    assert _card(out / "jbbq")["redistributable"] is False


def test_card_of_a_private_build_shows_no_row_text(tmp_path: Path) -> None:
    rows = _question_rows("Age", context="秘密の文脈です", question="誰が秘密?")
    source = _write_jsonl(tmp_path / "JBBQ" / "Age.jsonl", rows)
    out = tmp_path / "out"
    assert main(["build", "jbbq", "--source", str(source.parent), "--out-root", str(out)]) == 0
    card_text = (out / "jbbq" / "README.md").read_text(encoding="utf-8")
    for text in ("秘密の文脈です", "誰が秘密?", "The old man", "hand-written test row"):
        assert text not in card_text
    assert '"context": "<text>"' in card_text


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ({"label": 3}, "field 'label' is 3"),
        (
            {"answer_info": {"ans0": ["a", "old"], "ans1": ["b", "nonOld"], "ans2": ["c", "old"]}},
            "exactly one answer as 'unknown', found 0",
        ),
        (
            {
                "answer_info": {
                    "ans0": ["a", "unknown"],
                    "ans1": ["b", "unknown"],
                    "ans2": ["c", "old"],
                }
            },
            "found 2",
        ),
        ({"category": "Race_ethnicity"}, "field 'category' is 'Race_ethnicity'"),
        ({"context_condition": "ambiguous"}, "field 'context_condition'"),
    ],
)
def test_bad_rows_name_file_line_and_field(
    tmp_path: Path, override: dict, message: str, capsys
) -> None:
    _write_jsonl(tmp_path / "src" / "Age.jsonl", _question_rows("Age", **override))
    out = tmp_path / "out"
    assert main(["build", "jbbq", "--source", str(tmp_path / "src"), "--out-root", str(out)]) == 2
    error = capsys.readouterr().err
    assert "Age.jsonl, line 1" in error and message in error
    assert not (out / "jbbq").exists()


def test_an_archive_that_is_not_jbbq(tmp_path: Path, capsys) -> None:
    archive = tmp_path / "photos.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("img/readme.txt", "nothing here")
    assert (
        main(["build", "jbbq", "--source", str(archive), "--out-root", str(tmp_path / "out")]) == 2
    )
    assert "does not look like a BBQ/JBBQ release" in capsys.readouterr().err


@pytest.mark.slow  # builds whole dataset folders end to end
def test_bbq_from_a_local_copy_and_offline_failure(tmp_path: Path, monkeypatch, capsys) -> None:
    src = tmp_path / "BBQ" / "data"
    _write_jsonl(src / "Age.jsonl", _question_rows("Age"))
    _write_jsonl(src / "Religion.jsonl", _question_rows("Religion"))
    out = tmp_path / "out"
    assert main(["build", "bbq", "--source", str(src), "--out-root", str(out)]) == 0
    card = _card(out / "bbq")
    assert card["license"] == "cc-by-4.0"
    assert [c["config_name"] for c in card["configs"]] == ["Age", "Religion", "all"]
    monkeypatch.setenv("BIAS_HUB_NO_URL", "1")
    monkeypatch.setenv("BIAS_HUB_CACHE", str(tmp_path / "cache"))
    assert main(["build", "bbq", "--out-root", str(tmp_path / "none")]) == 2
    error = capsys.readouterr().err
    assert "nyu-mll/BBQ" in error and "--source" in error


@pytest.mark.parametrize(
    ("info", "groups", "polarity", "expected"),
    [
        # rewrites BBQ's R analysis makes: "low SES" / "lowSES", "transgender women" / "trans_F"
        (
            [("Unknown", "unknown"), ("cashier", "lowSES"), ("dentist", "highSES")],
            ["low SES"],
            "neg",
            1,
        ),
        (
            [("trans woman", "trans_F"), ("Unknown", "unknown"), ("cis man", "nonTrans_M")],
            ["transgender women"],
            "neg",
            0,
        ),
        # gender words are matched as M/F, as BBQ's analysis does
        ([("woman", "woman"), ("man", "man"), ("Unknown", "unknown")], ["F"], "neg", 0),
        ([("woman", "woman"), ("man", "man"), ("Unknown", "unknown")], ["F"], "nonneg", 1),
        # intersectional codes match on their parts
        (
            [("Unknown", "unknown"), ("Black woman", "F-Black"), ("White man", "M-White")],
            ["Black"],
            "neg",
            1,
        ),
        # 'old' must not match 'nonOld'
        ([("teen", "nonOld"), ("retiree", "old"), ("Unknown", "unknown")], ["nonOld"], "neg", 0),
        # Nationality: the text is the group
        (
            [("Japanese", "AsiaPacific"), ("Unknown", "unknown"), ("Irish", "Europe")],
            ["Japanese"],
            "neg",
            0,
        ),
        # neither or both answers in a stereotyped group: undecided
        ([("a", "x"), ("b", "y"), ("Unknown", "unknown")], ["z"], "neg", -1),
        ([("a", "old"), ("b", "old"), ("Unknown", "unknown")], ["old"], "nonneg", -1),
    ],
)
def test_stereotyped_answer(info, groups, polarity, expected) -> None:
    answer_info = [{"text": t, "group": g} for t, g in info]
    unknown = next(i for i, (_, g) in enumerate(info) if g == "unknown")
    assert stereotyped_answer(answer_info, polarity, groups, unknown) == expected


def test_every_disability_template_targets_disabled_people() -> None:
    # BBQ names specific disabilities as stereotyped groups; the answers carry "disabled"
    info = [
        {"text": "wheelchair user", "group": "disabled"},
        {"text": "Unknown", "group": "unknown"},
        {"text": "friend", "group": "nonDisabled"},
    ]
    assert stereotyped_answer(info, "neg", ["physically disabled"], 1) == -1
    assert stereotyped_answer(info, "neg", ["physically disabled"], 1, "Disability_status") == 0


def test_tar_archives_and_unsafe_zip_members(tmp_path: Path, capsys) -> None:
    import tarfile

    src = _write_jsonl(
        tmp_path / "JBBQ" / "Gender_identity.jsonl", _question_rows("Gender_identity")
    )
    archive = tmp_path / "JBBQ.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(src, arcname="JBBQ/Gender_identity.jsonl")
    assert (
        main(["build", "jbbq", "--source", str(archive), "--out-root", str(tmp_path / "out")]) == 0
    )
    assert [c["config_name"] for c in _card(tmp_path / "out" / "jbbq")["configs"]] == [
        "Gender_identity",
        "all",
    ]
    evil = tmp_path / "evil.zip"
    with zipfile.ZipFile(evil, "w") as zf:
        zf.writestr("../outside.jsonl", "{}")
    assert main(["build", "jbbq", "--source", str(evil), "--out-root", str(tmp_path / "out2")]) == 2
    assert "escapes the archive" in capsys.readouterr().err
    assert not (tmp_path / "outside.jsonl").exists()


@pytest.mark.slow  # builds whole dataset folders end to end
def test_skip_invalid_leaves_bad_rows_out_and_reports_them(tmp_path: Path, capsys) -> None:
    rows = _question_rows("Age")
    rows[5] = {**rows[5], "label": 7}
    _write_jsonl(tmp_path / "src" / "Age.jsonl", rows)
    out = tmp_path / "out"
    assert (
        main(
            [
                "build",
                "jbbq",
                "--source",
                str(tmp_path / "src"),
                "--out-root",
                str(out),
                "--skip-invalid",
            ]
        )
        == 0
    )
    assert "Age.jsonl, line 6: field 'label' is 7" in capsys.readouterr().err
    card = _card(out / "jbbq")
    assert sum(s["num_examples"] for s in card["dataset_info"][0]["splits"]) == len(rows) - 1
    assert "1 source row(s) broke the schema" in (out / "jbbq" / "README.md").read_text(
        encoding="utf-8"
    )


def test_missing_stereotyped_groups_come_from_shipped_templates(tmp_path: Path) -> None:
    import datasets

    rows = _question_rows("Physical_appearance")
    for row in rows:
        del row["additional_metadata"]["stereotyped_groups"]
    _write_jsonl(tmp_path / "src" / "data" / "Physical_appearance.jsonl", rows)
    # BBQ's template CSVs spell the category without an underscore
    header = "Q_id,Category,Ambiguous_Context,Disambiguating_Context,Lexical_diversity,Question_negative_stereotype,Question_non_negative,Answer_negative,Answer_non_negative,Known_stereotyped_groups\n"
    body = "".join(
        f'{q},PhysicalAppearance,a,b,,q,r,{{{{NAME1}}}},{{{{NAME2}}}},"[""old""]"\n'
        for q in (1, 2, 3)
    )
    (tmp_path / "src" / "templates").mkdir()
    (tmp_path / "src" / "templates" / "new_templates - Physical_appearance.csv").write_text(
        header + body, encoding="utf-8"
    )
    assert (
        main(
            [
                "build",
                "jbbq",
                "--source",
                str(tmp_path / "src"),
                "--out-root",
                str(tmp_path / "out"),
            ]
        )
        == 0
    )
    test = datasets.load_dataset(str(tmp_path / "out" / "jbbq"), "all", split="test")
    assert set(test["stereotyped_label"]) <= {0, 2} and test[0]["additional_metadata"][
        "stereotyped_groups"
    ] == ["old"]


def test_canonical_category_spellings() -> None:
    from bias_hub.builders.jbbq.bbq_format import canonical_category
    from bias_hub.builders.jbbq.schema import BBQ_CATEGORIES

    assert canonical_category("GenderIdentity", BBQ_CATEGORIES) == "Gender_identity"
    assert canonical_category("Religion ", BBQ_CATEGORIES) == "Religion"
    assert canonical_category("Race_x_SES", BBQ_CATEGORIES) == "Race_x_SES"
    assert canonical_category("Gender", BBQ_CATEGORIES) == "Gender"


# ---- unreadable copies, licences, published counts, stereotyped groups, schema ----


def test_a_truncated_tgz_is_not_a_readable_archive(tmp_path: Path, capsys) -> None:
    """Half of a .tgz ends the gzip stream early (EOFError inside tarfile)."""
    import tarfile

    _write_jsonl(tmp_path / "src" / "data" / "Age.jsonl", _question_rows("Age", n_templates=40))
    whole = tmp_path / "ok.tgz"
    with tarfile.open(whole, "w:gz") as archive:
        archive.add(tmp_path / "src" / "data", arcname="data")
    truncated = tmp_path / "trunc.tgz"
    truncated.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    assert (
        main(["build", "jbbq", "--source", str(truncated), "--out-root", str(tmp_path / "out")])
        == 2
    )
    err = capsys.readouterr().err
    assert f"--source {truncated}: not a readable archive" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "out" / "jbbq").exists()


def test_build_bbq_refuses_a_jbbq_format_copy(tmp_path: Path, capsys) -> None:
    """Japanese rows in BBQ's categories would have been labelled CC BY, English and public."""
    rows = _question_rows(
        "Age", context="高齢の男性と若い男性が来ていた。", question="誰が忘れっぽい？"
    )
    source = _write_jsonl(tmp_path / "JBBQ" / "data" / "Age.jsonl", rows)
    assert (
        main(["build", "bbq", "--source", str(source.parent), "--out-root", str(tmp_path / "out")])
        == 2
    )
    err = capsys.readouterr().err
    assert "Age.jsonl, line 1: field 'context' is not English text ('高'" in err
    assert "is not BBQ (a JBBQ copy is built with `bias-hub build jbbq --source`)" in err
    assert not (tmp_path / "out" / "bbq").exists()
    # A category outside BBQ's is refused too (validate_row with BBQ's categories).
    _write_jsonl(tmp_path / "other" / "X.jsonl", _question_rows("Caste"))
    assert (
        main(
            [
                "build",
                "bbq",
                "--source",
                str(tmp_path / "other"),
                "--out-root",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    assert "field 'category' is 'Caste'" in capsys.readouterr().err


def test_rows_that_name_no_stereotyped_group_stop_the_build(tmp_path: Path, capsys) -> None:
    """The authors' README: ``additional_metadeta`` holds only the source. Without template CSVs
    beside the rows every bias score would be undefined: the build stops and says what is needed."""
    rows = _question_rows("Age")
    for row in rows:
        del row["additional_metadata"]
        row["additional_metadeta"] = {"source": "https://example.org/age"}
    source = _write_jsonl(tmp_path / "JBBQ" / "data" / "Age.jsonl", rows)
    assert (
        main(
            [
                "build",
                "jbbq",
                "--source",
                str(source.parent.parent),
                "--out-root",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert (
        f"12 of 12 question rows name no stereotyped group (first: {source}, line 1; categories Age)"
        in err
    )
    assert "Known_stereotyped_groups" in err and not (tmp_path / "out" / "jbbq").exists()


def test_the_copy_is_compared_with_the_published_counts(tmp_path: Path, caplog) -> None:
    import logging

    from bias_hub.builders.jbbq.paper_counts import comparison_lines

    _write_jsonl(tmp_path / "src" / "Age.jsonl", _question_rows("Age"))
    with caplog.at_level(logging.INFO, logger="bias_hub.builders"):
        assert (
            main(
                [
                    "build",
                    "jbbq",
                    "--source",
                    str(tmp_path / "src"),
                    "--out-root",
                    str(tmp_path / "out"),
                ]
            )
            == 0
        )
    warnings = [
        r.getMessage()
        for r in caplog.records
        if r.levelno == logging.WARNING and "published counts" in r.getMessage()
    ]
    # 3 templates x 4 questions of Age; §4.1: 245 templates, 8,476 questions; the README: 50,856.
    assert len(warnings) == 1
    assert "your copy: 3 templates (Age 3, Disability_status 0," in warnings[0]
    assert "12 questions (Age 12," in warnings[0]
    assert (
        "§4.1 of the paper (NLP2024): 245 templates (Age 72, Disability_status 52, Gender_identity 41, "
        "Physical_appearance 52, Sexual_orientation 28), 8,476 questions (Age 4,696, Disability_status 1,344, "
        "Gender_identity 652, Physical_appearance 1,256, Sexual_orientation 528)"
    ) in warnings[0]
    assert "the authors' README: 50,856 questions" in warnings[0]
    # A copy with §4.1's counts matches: per category, templates x questions as printed.
    paper = [
        {"category": c, "question_index": str(i % t)}
        for c, t, q in (
            ("Age", 72, 4696),
            ("Disability_status", 52, 1344),
            ("Gender_identity", 41, 652),
            ("Physical_appearance", 52, 1256),
            ("Sexual_orientation", 28, 528),
        )
        for i in range(q)
    ]
    assert len(paper) == 8476 and comparison_lines(paper)[1] is True
    assert comparison_lines(paper[:-1])[1] is False


def test_the_authors_schema_maps_as_the_card_says(tmp_path: Path) -> None:
    """A row in the authors' shape (their README's field names) becomes the row the card's
    mapping table describes."""
    import datasets

    from bias_hub.builders.jbbq.cards import AUTHORS_SCHEMA_MAPPING

    rows = _question_rows("Age", is_additional="1")
    for row in rows:
        row["example_id"] = str(row["example_id"])
        row["question_index"] = int(row["question_index"]) + 6  # numbers, templates 7, 8, 9
        row["additional_metadeta"] = row.pop("additional_metadata")
        del row["additional_metadeta"]["version"]
    _write_jsonl(tmp_path / "src" / "Age.jsonl", rows)
    out = tmp_path / "out"
    assert main(["build", "jbbq", "--source", str(tmp_path / "src"), "--out-root", str(out)]) == 0
    assert AUTHORS_SCHEMA_MAPPING in (out / "jbbq" / "README.md").read_text(encoding="utf-8")
    built = datasets.load_dataset(str(out / "jbbq"), "all")
    row = next(r for split in built.values() for r in split if r["example_id"] == 1)  # template 7
    assert row["answer_info"] == [
        {"text": "old man", "group": "old"},
        {"text": "Unknown", "group": "unknown"},
        {"text": "teen", "group": "nonOld"},
    ]
    assert row["additional_metadata"] == {
        "subcategory": "None",
        "stereotyped_groups": ["old"],
        "version": "None",
        "source": "hand-written test row",
    }
    assert (row["question_index"], row["is_additional"]) == ("7", True)
    # example 1: neg, disambig -> label 2 (the teen); unknown is ans1; the old man is stereotyped for neg.
    assert (row["label"], row["unknown_label"], row["stereotyped_label"]) == (2, 1, 0)
