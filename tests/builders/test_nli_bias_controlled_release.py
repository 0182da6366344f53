"""`bias-hub build nli_bias_controlled --authors-dir` on the authors' release as shipped.

The fixtures follow ja_v1.1's ``bias-controlled-set_v1.1`` layout exactly: ``untokenized/`` and
``tokenized/`` folders, each with ``train/train_r-K.json``, ``dev/dev_r-K.json`` (K = 0..10) and
``test/test_bias.json``, ``test/test_nonbias.json`` (``-tok`` in the tokenized names), JSON lines
with ``sentence1``, ``sentence2``, ``label``. Every sentence is ours.
"""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
import yaml

from bias_hub.builders.nli_bias_controlled import build
from bias_hub.builders.nli_bias_controlled.release import read_release

# Occupation -> its stereotype's gender (None: non-stereotyped). As in the release, the
# female-stereotyped occupation turns pro first: 看護師 at r >= 0.5, 大工 at r = 1.0.
OCCUPATIONS = {"看護師": "female", "大工": "male", "会計士": None}
PRO_FROM = {"看護師": 5, "大工": 10}
GENDER_WORDS = {"female": "女性", "male": "男性"}
TRAIN = ["{}が公園を歩いています。", "{}が本を読んでいます。"]
DEV = ["{}が海で泳いでいます。"]
TEST = ["{}が駅で電車を待っています。"]


def _label(occupation: str, gender: str, k: int) -> str:
    stereotype = OCCUPATIONS[occupation]
    if stereotype is None:
        return "neutral"
    pro = k >= PRO_FROM[occupation]
    return "entailment" if (gender == stereotype) == pro else "contradiction"


def _pairs(templates: list[str], k: int, tokenized: bool = False) -> list[dict]:
    rows = []
    for occupation in OCCUPATIONS:
        for template in templates:
            for gender, word in GENDER_WORDS.items():
                premise, hypothesis = template.format(occupation), template.format(word)
                if tokenized:  # the words of the premise, spaced as a segmenter would
                    premise = premise.replace(occupation, " ".join(occupation)).replace(
                        "が", " が "
                    )
                    hypothesis = hypothesis.replace("が", " が ")
                rows.append(
                    {
                        "sentence1": premise,
                        "sentence2": hypothesis,
                        "label": _label(occupation, gender, k),
                    }
                )
    return rows


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )


def write_release(root: Path, *, train: bool = True, tokenized: bool = False) -> Path:
    """``root/ja_v1.1/bias-controlled-set_v1.1/<untokenized|tokenized>/{train,dev,test}/``; returns
    the ``bias-controlled-set_v1.1`` folder."""
    base = root / "ja_v1.1" / "bias-controlled-set_v1.1"
    folder, tok = (base / "tokenized", "-tok") if tokenized else (base / "untokenized", "")
    for k in range(11):
        if train:
            _write(folder / "train" / f"train{tok}_r-{k}.json", _pairs(TRAIN, k, tokenized))
        _write(folder / "dev" / f"dev{tok}_r-{k}.json", _pairs(DEV, k, tokenized))
    _write(folder / "test" / f"test{tok}_bias.json", _pairs(TEST, 10, tokenized))
    _write(folder / "test" / f"test{tok}_nonbias.json", _pairs(TEST, 0, tokenized))
    return base


def _card(folder: Path) -> tuple[dict, str]:
    text = (folder / "README.md").read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n", 2)[1]), text


@pytest.mark.slow  # builds whole dataset folders end to end
def test_the_shipped_layout_builds_with_train_validation_and_test(tmp_path: Path) -> None:
    built = build(tmp_path / "out", authors_dir=write_release(tmp_path))
    header, card = _card(built)
    names = [c["config_name"] for c in header["configs"]]
    assert names == [f"r{k / 10:.1f}" for k in range(11)] + ["test_bias", "test_nonbias"]
    r3 = datasets.load_dataset(str(built), "r0.3")
    # 3 occupations x 2 templates x 2 genders; dev: 1 template.
    assert (r3["train"].num_rows, r3["validation"].num_rows) == (12, 6)
    names_of = r3["train"].features["label"].names
    assert [names_of[i] for i in r3["train"]["label"]] == [r["label"] for r in _pairs(TRAIN, 3)]
    assert r3["train"]["premise"] == [r["sentence1"] for r in _pairs(TRAIN, 3)]
    # The occupation and hypothesis gender come back from the pair.
    assert r3["train"]["occupation"][:4] == ["看護師"] * 4
    assert r3["train"]["hypothesis_gender"][:2] == ["female", "male"]
    assert r3["train"]["occupation_en"][0] == "nurse"
    test_bias = datasets.load_dataset(str(built), "test_bias", split="test")
    assert set(test_bias["bias_rate"]) == {1.0}
    provenance = header["bias_hub_provenance"]
    assert provenance["origin"] == "release"
    assert provenance["training_data"] == "train/train_r-K.json"
    assert provenance["validation_data"] == "dev/dev_r-K.json"
    assert provenance["test_data"] == "test/test_bias.json, test/test_nonbias.json"
    assert provenance["folder"].endswith("bias-controlled-set_v1.1/untokenized")
    assert "**Training data: `train/train_r-K.json`**" in card
    # By hand: test_bias is labelled as at r = 1 and test_nonbias as at r = 0, like the train files.
    assert "`test_bias`: 6 of 6 rows carry the label the r = 1.0 training data gives" in card
    assert "`test_nonbias`: 6 of 6 rows carry the label the r = 0.0 training data gives" in card
    # 看護師 turns pro at r = 0.5: its 4 training pairs change label; at r = 1.0 大工's too.
    assert "| r0.4 | train | 12 | 4 | 4 | 4 | 12 | 0 |" in card
    assert "| r0.5 | train | 12 | 4 | 4 | 4 | 12 | 4 |" in card
    assert "| r1.0 | train | 12 | 4 | 4 | 4 | 12 | 8 |" in card


@pytest.mark.slow  # builds whole dataset folders end to end
def test_without_train_files_the_flag_trains_on_dev_and_says_so(tmp_path: Path) -> None:
    base = write_release(tmp_path, train=False)
    with pytest.raises(
        ValueError, match=r"no train/train_r-K.json for r = 0.0, 0.1, .*give --train-on-dev"
    ):
        build(tmp_path / "out", authors_dir=base)
    assert not (tmp_path / "out" / "nli_bias_controlled").exists()

    built = build(tmp_path / "out", authors_dir=base, train_on_dev=True)
    header, card = _card(built)
    r7 = datasets.load_dataset(str(built), "r0.7")
    assert list(r7) == ["train"]  # the dev pairs are the training data, not a validation split too
    assert r7["train"]["premise"] == [r["sentence1"] for r in _pairs(DEV, 7)]
    assert r7["train"]["id"][0] == "dev-r7-1"
    assert header["bias_hub_provenance"]["training_data"] == "dev/dev_r-K.json"
    assert header["bias_hub_provenance"]["validation_data"] is None
    assert (
        "**Training data: `dev/dev_r-K.json`**" in card and "there is no `validation` split" in card
    )
    assert "--train-on-dev" in card  # the build command


def test_the_flag_prefers_dev_even_when_train_files_are_there(tmp_path: Path) -> None:
    release = read_release(write_release(tmp_path), train_on_dev=True)
    assert release.training_data == "dev/dev_r-K.json"
    assert [r["premise"] for r in release.sets[0.2]["train"]] == [
        r["sentence1"] for r in _pairs(DEV, 2)
    ]


def test_the_tokenized_folder_and_a_checkout_root_are_read(tmp_path: Path) -> None:
    write_release(tmp_path, train=False, tokenized=True)
    # A checkout's root: ja_v1.1/bias-controlled-set_v1.1 below it. Only the tokenized copy
    # exists here, so --authors-dir points at it.
    release = read_release(
        tmp_path / "ja_v1.1" / "bias-controlled-set_v1.1" / "tokenized", train_on_dev=True
    )
    assert release.tokenized and release.training_data == "dev/dev-tok_r-K.json"
    assert release.test_data == "test/test-tok_bias.json, test/test-tok_nonbias.json"
    row = release.sets[1.0]["train"][0]
    assert row["premise"] == "看 護 師 が 海で泳いでいます。"
    assert row["occupation"] == "看護師"  # spaces removed

    write_release(tmp_path, train=False)
    untokenized = read_release(tmp_path, train_on_dev=True)
    assert untokenized.root == tmp_path / "ja_v1.1" / "bias-controlled-set_v1.1" / "untokenized"
    assert not untokenized.tokenized


def test_a_test_file_that_disagrees_with_its_rate_is_counted(tmp_path: Path) -> None:
    base = write_release(tmp_path)
    rows = _pairs(TEST, 10)
    rows[0] = {**rows[0], "label": "contradiction"}  # 看護師 + 女性 at r = 1 is entailment
    _write(base / "untokenized" / "test" / "test_bias.json", rows)
    _, card = _card(build(tmp_path / "out", authors_dir=base))
    assert "`test_bias`: 5 of 6 rows carry the label" in card


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        (
            lambda f: _write(
                f / "dev" / "dev_r-3.json",
                [{"sentence1": "看護師が歩く。", "sentence2": "女性が歩く。", "label": "maybe"}],
            ),
            r"dev_r-3.json, row 1: label 'maybe'",
        ),
        (
            lambda f: _write(
                f / "dev" / "dev_r-3.json",
                [{"sentence1": "看護師が歩く。", "sentence2": "女性が走る。", "label": "neutral"}],
            ),
            r"dev_r-3.json, row 1: sentence2 is not sentence1 with one span replaced",
        ),
        (
            lambda f: _write(
                f / "dev" / "dev_r-3.json", [{"sentence1": "看護師が歩く。", "label": "neutral"}]
            ),
            r"dev_r-3.json, row 1: missing field\(s\) \['sentence2'\]",
        ),
        (lambda f: _write(f / "dev" / "dev_r-11.json", []), r"dev_r-11.json: K must lie in 0..10"),
        (
            lambda f: _write(f / "dev_r-2.json", _pairs(DEV, 2)),
            r"dev_r-2.json: a second file for dev at r = 0.2",
        ),
    ],
)
def test_bad_release_files_are_named(tmp_path: Path, damage, message: str) -> None:
    base = write_release(tmp_path, train=False)
    damage(base / "untokenized")
    with pytest.raises(ValueError, match=message):
        build(tmp_path / "out", authors_dir=base, train_on_dev=True)
    assert not (tmp_path / "out" / "nli_bias_controlled").exists()


def test_a_rate_without_its_training_file_is_named(tmp_path: Path) -> None:
    base = write_release(tmp_path)
    (base / "untokenized" / "train" / "train_r-4.json").unlink()
    with pytest.raises(
        ValueError, match=r"no train/train_r-K.json for r = 0.4\. The release's train files"
    ):
        build(tmp_path / "out", authors_dir=base)
    (base / "untokenized" / "dev" / "dev_r-6.json").unlink()
    with pytest.raises(
        ValueError, match=r"--train-on-dev needs dev/dev_r-K.json; none for r = 0.6"
    ):
        build(tmp_path / "out", authors_dir=base, train_on_dev=True)


def test_a_copy_with_some_rates_builds_those(tmp_path: Path) -> None:
    base = write_release(tmp_path, train=False)
    for k in range(11):
        if k not in (0, 5, 10):
            (base / "untokenized" / "dev" / f"dev_r-{k}.json").unlink()
    header, _ = _card(build(tmp_path / "out", authors_dir=base, train_on_dev=True))
    assert [c["config_name"] for c in header["configs"]] == [
        "r0.0",
        "r0.5",
        "r1.0",
        "test_bias",
        "test_nonbias",
    ]


def test_tokenized_and_untokenized_names_side_by_side_are_refused(tmp_path: Path) -> None:
    base = write_release(tmp_path, train=False)
    _write(base / "untokenized" / "test" / "test-tok_bias.json", _pairs(TEST, 10, tokenized=True))
    with pytest.raises(ValueError, match=r"tokenized \(-tok\) and untokenized files side by side"):
        read_release(base, train_on_dev=True)


def test_a_folder_without_the_release_says_what_it_expected(tmp_path: Path) -> None:
    (tmp_path / "elsewhere").mkdir()
    with pytest.raises(
        FileNotFoundError, match=r"no file of the bias-controlled release .*dev/dev_r-K.json"
    ):
        build(tmp_path / "out", authors_dir=tmp_path / "elsewhere")


def test_train_on_dev_needs_the_release(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--train-on-dev needs --authors-dir"):
        build(tmp_path / "out", train_on_dev=True)


def test_the_generated_sets_record_where_they_come_from(tmp_path: Path) -> None:
    header, card = _card(build(tmp_path, occupations_per_type=2, templates_per_occupation=3))
    assert header["bias_hub_provenance"] == {
        "origin": "generated",
        "training_data": "generated: the project lexicon x builders/nli_bias_controlled/templates.tsv",
    }
    # 6 occupations x 3 templates x 2 genders; at r = 0.5 the 2 female-stereotyped ones are pro
    # (2 of the 4 stereotyped): their 12 pairs change label against r = 0.
    assert "| r0.5 | train | 36 | 12 | 12 | 12 | 36 | 12 | 12 | 12 |" in card


@pytest.mark.slow  # builds whole dataset folders end to end
def test_a_build_without_the_files_keeps_the_sets_built_from_them(tmp_path: Path) -> None:
    # Before: an offline `make datasets` (a build without --authors-dir) replaced the sets built
    # from the authors' files with the generated ones, silently.
    base = write_release(tmp_path, train=False)
    built = build(tmp_path / "out", authors_dir=base, train_on_dev=True)
    before = {p.relative_to(built): p.read_bytes() for p in built.rglob("*") if p.is_file()}
    folder = base / "untokenized"
    with pytest.raises(
        ValueError,
        match=rf"Rebuild them with `bias-hub build nli_bias_controlled --authors-dir "
        rf"{folder} --train-on-dev`",
    ):
        build(tmp_path / "out", occupations_per_type=2, templates_per_occupation=3)
    assert {p.relative_to(built): p.read_bytes() for p in built.rglob("*") if p.is_file()} == before


def test_the_release_s_english_names_are_the_occupation_en(tmp_path: Path) -> None:
    base = write_release(tmp_path, train=False)
    words = base.parent / "occupation-words" / "occup_en-ja_v1.1.tsv"
    words.parent.mkdir(parents=True)
    words.write_text(
        "En\tJa\tType\nregistered_nurse\t看護師\tfemale\ncarpenter\t大工\tmale\n", encoding="utf-8"
    )
    built = build(tmp_path / "out", authors_dir=base, train_on_dev=True)
    rows = datasets.load_dataset(str(built), "r0.5")["train"]
    named = dict(zip(rows["occupation"], rows["occupation_en"], strict=True))
    assert named["看護師"] == "registered_nurse" and named["大工"] == "carpenter"


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        ({"occupations_per_type": 0}, "--occupations-per-type 0"),
        ({"templates_per_occupation": 0}, "--templates-per-occupation 0"),
    ],
)
def test_bad_sizes_name_their_flag(tmp_path: Path, options: dict, flag: str) -> None:
    # The message used to name the internal 'per_type'.
    with pytest.raises(ValueError, match=rf"^{flag}: expected a whole number"):
        build(tmp_path, **options)
