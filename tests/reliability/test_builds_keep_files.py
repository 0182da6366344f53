"""`bias-hub build` replaces a dataset folder whole, so it refuses a folder that holds files no
build wrote (the card lists what one wrote) and keeps it, naming them; `build all` keeps it and
builds the rest, as run folders keep what their last run did not write."""

from __future__ import annotations

from pathlib import Path

from bias_hub.builders import build_all
from bias_hub.pipelines import cli
from bias_hub.pipelines.discovery import builder_commands


def test_a_build_keeps_a_folder_holding_files_it_did_not_write(tmp_path: Path, capsys) -> None:
    root = tmp_path / "dsroot"
    assert cli.main(["build", "jbbq", "--out-root", str(root)]) == 0
    folder = root / "jbbq"
    (folder / "tasks").mkdir()
    (folder / "tasks" / "jbbq.yaml").write_text("task: mine\n", encoding="utf-8")
    (folder / "notes.md").write_text("my notes\n", encoding="utf-8")
    card = (folder / "README.md").read_bytes()
    capsys.readouterr()
    assert cli.main(["build", "jbbq", "--out-root", str(root)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert f"{folder}: holds 2 file(s) no build wrote" in err
    assert "notes.md, tasks/jbbq.yaml" in err
    assert (folder / "tasks" / "jbbq.yaml").read_text(encoding="utf-8") == "task: mine\n"
    assert (folder / "notes.md").read_text(encoding="utf-8") == "my notes\n"
    assert (folder / "README.md").read_bytes() == card
    # --force replaces configs built from a copy of the user's; never files no build wrote.
    assert cli.main(["build", "jbbq", "--out-root", str(root), "--force"]) == 2
    assert (folder / "notes.md").is_file()


def test_build_all_keeps_that_folder_and_builds_the_others(tmp_path: Path, caplog) -> None:
    root = tmp_path / "dsroot"
    (root / "jbbq").mkdir(parents=True)
    (root / "jbbq" / "export.jsonl").write_text("{}\n", encoding="utf-8")
    commands = {name: builder_commands()[name] for name in ("jbbq", "speciesism_templates")}
    build_all(root, commands)
    assert "export.jsonl" in caplog.text and "kept" in caplog.text
    assert sorted(p.name for p in (root / "jbbq").iterdir()) == ["export.jsonl"]
    assert (root / "speciesism_templates" / "README.md").is_file()
