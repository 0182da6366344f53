"""bias-hub's tasks where people run them: Inspect finds them through the package's entry point
(``inspect eval bias_hub/jbbq``, no export step), its ``.eval`` logs are read as Inspect writes
them, and every help text names the file it writes.

The end-to-end test runs Inspect AI 0.3.285 in its own venv (``bench/.venv-inspect``, created
with ``python -m bench.inspect_bbq --setup-inspect``; CI creates it) with its mock model,
offline: the mock model counts tokens with tiktoken's o200k_base encoding, found through
tiktoken's cache folder in the copy a registry wheel ships (``bench.inspect_bbq.inspect_env``).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import tomllib
from jbbq_fixtures import fixture_rows, write_fixture_dataset

from bias_hub.pipelines.cli import main

REPO = Path(__file__).resolve().parents[2]
INSPECT_PYTHON = REPO / "bench" / ".venv-inspect" / "bin" / "python"
# CI sets it, with the reason, where the Inspect venv could not be created; the test then
# skips saying so. Anywhere else a missing venv fails the test, naming how to create it.
SKIP = os.environ.get("BIAS_HUB_SKIP_INSPECT")


def test_the_package_registers_its_tasks_with_inspect() -> None:
    pyproject = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    module = pyproject["project"]["entry-points"]["inspect_ai"]["bias_hub"]
    assert module == "bias_hub.pipelines.export.inspect_task_file"
    source = (REPO / "pipelines/export/inspect_task_file.py").read_text(encoding="utf-8")
    assert "@task\ndef jbbq(" in source and "@task\ndef bbq(" in source
    assert pyproject["project"]["optional-dependencies"]["inspect"] == ["inspect-ai>=0.3.285"]


def test_a_zstd_eval_log_is_read_as_inspect_writes_it(tmp_path: Path, capsys) -> None:
    """Inspect compresses each entry of a .eval log with Zstandard (method 93)."""
    from backports.zstd import zipfile

    dataset = write_fixture_dataset(tmp_path / "jbbq")
    rows = fixture_rows()["all"]
    log = tmp_path / "run.eval"
    with zipfile.ZipFile(log, "w", compression=zipfile.ZIP_ZSTANDARD) as archive:
        archive.writestr(
            "header.json",
            json.dumps(
                {
                    "eval": {
                        "task": "jbbq",
                        "model": "mockllm/model",
                        "dataset": {"samples": len(rows)},
                    }
                }
            ),
        )
        for row in rows:
            sample = {
                "id": row["example_id"],
                "metadata": row,
                "output": {"completion": str(row["label"])},
            }
            archive.writestr(f"samples/{row['example_id']}_epoch_1.json", json.dumps(sample))
    code = main(
        [
            "score",
            "bbq_bias",
            "--from-inspect",
            str(log),
            "--dataset",
            str(dataset),
            "--answer-reader",
            "llm-jp-eval",
            "--confidence-level",
            "none",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    results = json.loads((tmp_path / "out/results.json").read_text(encoding="utf-8"))
    # Every reply the gold index: accuracy 1 over all 40 questions.
    assert results["result"]["accuracy"] == 1.0 and results["join"]["joined"] == 40
    assert results["model"] == "mockllm/model"


def test_every_export_help_names_the_files_it_writes(capsys) -> None:
    with pytest.raises(SystemExit):
        main(["export", "--help"])
    said = " ".join(capsys.readouterr().out.split())
    assert "writes DIR/tasks.py" in said and "inspect eval DIR/tasks.py@jbbq" in said
    assert "jbbq_tasks.py" not in said  # the name an earlier help gave a file it never wrote
    assert "writes DIR/jbbq/*.yaml" in said
    assert "writes DIR/<model>/.eval_results/<benchmark>_<setting>.yaml" in said


def _inspect(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    from bench.inspect_bbq import inspect_env

    env = dict(inspect_env(), NO_COLOR="1", COLUMNS="200")
    inspect = INSPECT_PYTHON.parent / "inspect"
    return subprocess.run(
        [
            str(inspect),
            "eval",
            *args,
            "--model",
            "mockllm/model",
            "--display",
            "plain",
            "--log-dir",
            str(cwd / "logs"),
        ],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_inspect_eval_bias_hub_jbbq_runs_offline_with_no_export_step(
    tmp_path: Path, capsys
) -> None:
    if SKIP:
        pytest.skip(f"BIAS_HUB_SKIP_INSPECT: {SKIP}")
    assert INSPECT_PYTHON.exists(), (
        "bench/.venv-inspect is absent: create it with `python -m bench.inspect_bbq --setup-inspect` "
        "(needs PyPI); CI creates it"
    )
    from bias_hub.builders.jbbq import build

    dataset = build(tmp_path / "datasets")  # the sample templates
    done = _inspect(
        "bias_hub/jbbq",
        "-T",
        "prompt=unknown",
        "-T",
        "shots=4",
        "-T",
        "limit=3",
        "-T",
        f"dataset={dataset}",
        cwd=tmp_path,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    # bbq_bias's scores in Inspect's own summary, under the module's names; no warning at all.
    for name in ("accuracy_ambiguous", "bias_score_disambiguated", "unparsable_rate"):
        assert name in output
    assert "WARNING" not in output and "empty sample set" not in output
    (log,) = (tmp_path / "logs").glob("*.eval")
    # The mock model's fixed reply names no answer: nothing is read, every question counts as
    # unparsable, accuracy 0 (5 categories x 3 questions).
    code = main(
        [
            "score",
            "bbq_bias",
            "--from-inspect",
            str(log),
            "--allow-partial",
            "--confidence-level",
            "none",
            "--out",
            str(tmp_path / "score"),
        ]
    )
    assert code == 0, capsys.readouterr().err
    results = json.loads((tmp_path / "score/results.json").read_text(encoding="utf-8"))
    assert results["result"]["unparsable_rate"] == 1.0 and results["result"]["accuracy"] == 0.0
    assert results["join"]["joined"] == 15 and results["model"] == "mockllm/model"
