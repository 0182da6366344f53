"""`bias-hub report` checks results.json against the run's manifest before it renders: an edited
file is refused, naming it, and the manifest is never re-hashed to fit; `--allow-edited` renders
it with every table stamped as edited, and the manifest still says what the run wrote.

The run scores the JBBQ fixture's 16 test questions with every prediction right: accuracy 1.0
by hand; the edit makes it 0.995.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_stale_reuse import _predictions, _write_dataset

from bias_hub.pipelines import cli

STAMP = "**Edited by hand:"


@pytest.fixture
def scored(tmp_path: Path) -> Path:
    root = tmp_path / "datasets"
    _write_dataset(root)
    predictions = _predictions(tmp_path / "preds.jsonl", right=16)
    run = tmp_path / "run"
    argv = ["score", "bbq_bias", "--predictions", str(predictions), "--dataset", str(root / "jbbq")]
    argv += ["--config", "all", "--split", "test", "--confidence-level", "none", "--out", str(run)]
    assert cli.main(argv) == 0
    return run


def _edit(run: Path) -> None:
    path = run / "results.json"
    results = json.loads(path.read_text(encoding="utf-8"))
    assert results["result"]["accuracy"] == 1.0
    results["result"]["accuracy"] = 0.995
    path.write_text(json.dumps(results), encoding="utf-8")


def test_report_refuses_an_edited_results_json_and_leaves_the_run_as_it_was(scored, capsys):
    manifest = (scored / "manifest.json").read_bytes()
    report = (scored / "report.md").read_bytes()
    _edit(scored)
    capsys.readouterr()
    assert cli.main(["report", str(scored)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert err.startswith(f"bias-hub: error: {scored / 'results.json'} was edited since")
    assert "--allow-edited" in err
    assert (scored / "manifest.json").read_bytes() == manifest  # never re-hashed
    assert (scored / "report.md").read_bytes() == report  # 1.0 stays the only number shown


def test_allow_edited_stamps_every_table_and_keeps_the_run_s_sha256(scored, capsys):
    written = json.loads((scored / "manifest.json").read_text(encoding="utf-8"))
    before = {entry["path"]: entry["sha256"] for entry in written["files"]}
    _edit(scored)
    assert cli.main(["report", str(scored), "--allow-edited"]) == 0
    lines = (scored / "report.md").read_text(encoding="utf-8").splitlines()
    tables = [
        i
        for i, line in enumerate(lines)
        if line.startswith("|") and not lines[i - 1].startswith("|")
    ]
    assert tables and "0.995" in "\n".join(lines)
    for start in tables:  # the stamp, a blank line, then the table
        assert lines[start - 2].startswith(STAMP), lines[start - 2]
    after = json.loads((scored / "manifest.json").read_text(encoding="utf-8"))
    assert {e["path"]: e["sha256"] for e in after["files"]}["results.json"] == before[
        "results.json"
    ]
    assert after["rendered_from_edited"].endswith("results.json was edited since the run wrote it")
    capsys.readouterr()
    assert cli.main(["report", str(scored)]) == 2  # still not what the run wrote
