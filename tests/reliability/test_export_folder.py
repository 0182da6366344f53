"""``bias-hub export lm-eval`` never deletes what it did not write, and refuses a reply length of 0.

An lm-eval task folder is where a user naturally puts a task of their own beside ours
(``--include_path`` reads every YAML in it): a re-export replaces the folder whole, so it must
stop and name such files, not delete them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbbq_fixtures import write_fixture_dataset

from bias_hub.pipelines.cli import main


@pytest.fixture(scope="module")
def datasets_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("export_hostile") / "datasets"
    write_fixture_dataset(root / "jbbq")
    return root


def _export(datasets_root: Path, out: Path, *flags: str) -> int:
    return main(
        [
            "export",
            "lm-eval",
            "--out",
            str(out),
            "--datasets-root",
            str(datasets_root),
            "--prompt",
            "basic",
            "--shots",
            "0",
            *flags,
        ]
    )


def test_a_re_export_keeps_files_it_did_not_write(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "tasks"
    assert _export(datasets_root, out) == 0
    mine = out / "jbbq" / "my_own_task.yaml"
    mine.write_text("task: my_own_task\n", encoding="utf-8")
    readme = out / "README.md"
    readme.write_text(readme.read_text(encoding="utf-8") + "\nMy notes.\n", encoding="utf-8")
    capsys.readouterr()
    assert _export(datasets_root, out) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert (
        "holds 2 file(s) its last run did not write, which this run would delete (it replaces "
        "the folder whole): jbbq/my_own_task.yaml (added), README.md (changed since); move them "
        "out of the folder, or give a new --out" in err
    )
    assert mine.read_text(encoding="utf-8") == "task: my_own_task\n"
    assert readme.read_text(encoding="utf-8").endswith("My notes.\n")
    assert not list(tmp_path.glob(".tasks.staging-*"))


def test_bytecode_lm_eval_left_does_not_stop_a_re_export(
    datasets_root: Path, tmp_path: Path
) -> None:
    out = tmp_path / "tasks"
    assert _export(datasets_root, out) == 0
    (out / "jbbq" / "__pycache__").mkdir()
    (out / "jbbq" / "__pycache__" / "utils.cpython-311.pyc").write_bytes(b"\x00")
    assert _export(datasets_root, out) == 0
    assert json.loads((out / "tasks.json").read_text(encoding="utf-8"))["tasks"] == [
        "jbbq_basic_0shot_gen",
        "jbbq_basic_0shot_mc",
    ]


def test_a_reply_length_of_zero_is_refused_not_replaced(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    assert _export(datasets_root, tmp_path / "t", "--max-new-tokens", "0") == 2
    assert "--max-new-tokens: expected an integer from 1 to 32,768" in capsys.readouterr().err
    assert not (tmp_path / "t").exists()


def test_the_export_records_the_absolute_dataset_folder(
    datasets_root: Path, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(datasets_root.parent)
    assert _export(Path("datasets"), tmp_path / "t") == 0
    record = json.loads((tmp_path / "t" / "tasks.json").read_text(encoding="utf-8"))
    assert record["jbbq"]["dataset"] == str((datasets_root / "jbbq").resolve())


def test_a_prompt_file_in_shift_jis_is_named_with_its_line(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    from bias_hub.pipelines.jbbq.prompting import PROMPT_DIR

    prompt = tmp_path / "mine.yaml"
    prompt.write_bytes((PROMPT_DIR / "basic.yaml").read_text(encoding="utf-8").encode("cp932"))
    data = prompt.read_bytes()
    offset = next(i for i, byte in enumerate(data) if byte > 0x7F)
    line = data[:offset].count(b"\n") + 1
    code = main(
        [
            "export",
            "lm-eval",
            "--out",
            str(tmp_path / "t"),
            "--datasets-root",
            str(datasets_root),
            "--prompt",
            str(prompt),
            "--shots",
            "0",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert (
        f"{prompt}: not UTF-8 text (line {line}: byte 0x{data[offset]:02x} at offset {offset})"
        in err
    )


def test_a_re_export_for_inspect_keeps_files_it_did_not_write(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "inspect"
    argv = ["export", "inspect", "--out", str(out), "--datasets-root", str(datasets_root)]
    assert main([*argv, "--prompt", "basic", "--shots", "0"]) == 0
    mine = out / "my_task.py"
    mine.write_text("# a task of my own\n", encoding="utf-8")
    capsys.readouterr()
    assert main([*argv, "--prompt", "basic", "--shots", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "my_task.py (added)" in err, err
    assert mine.read_text(encoding="utf-8") == "# a task of my own\n"
