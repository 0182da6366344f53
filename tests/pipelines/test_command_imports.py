"""Commands that run no model import no model library: building, scoring, exporting, re-rendering
and a study's dry run never import torch or transformers, and ``score`` gives the numbers of
``evaluate.load(...).compute(...)`` on the same inputs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from jbbq_fixtures import fixture_rows, write_fixture_dataset

from bias_hub.pipelines.common.locations import import_evaluate, metric_folder

# Runs each command in this one process, in turn, and says after each which libraries are loaded.
COMMANDS = """
import json, sys
from bias_hub.pipelines.cli import main
seen = []
for argv in json.loads(sys.argv[1]):
    code = main(argv)
    seen.append([" ".join(argv[:2]), code, sorted(m for m in ("torch", "transformers") if m in sys.modules)])
print(json.dumps(seen))
"""


def test_commands_that_run_no_model_never_import_torch_or_transformers(tmp_path: Path) -> None:
    jbbq = write_fixture_dataset(tmp_path / "jbbq")
    test_rows = fixture_rows()["test"]
    # Predictions chosen by hand: every third question answered with choice 0, 1 or 2 in turn.
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"example_id": row["example_id"], "prediction": i % 3}) + "\n"
            for i, row in enumerate(test_rows)
        ),
        encoding="utf-8",
    )
    score_out = tmp_path / "score"
    commands = [
        ["build", "weat_word_sets", "--out-root", str(tmp_path / "built"), "-q"],
        ["score", "bbq_bias", "--predictions", str(predictions), "--dataset", str(jbbq)]
        + ["--split", "test", "--out", str(score_out), "-q"],
        ["report", str(score_out), "-q"],
        ["export", "lm-eval", "--out", str(tmp_path / "lm-eval"), "--jbbq", str(jbbq), "-q"],
        ["reproduce", "jbbq", "--dry-run", "--datasets-root", str(tmp_path)],
    ]
    done = subprocess.run(
        [sys.executable, "-c", COMMANDS, json.dumps(commands)],
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen == [[" ".join(argv[:2]), 0, []] for argv in commands], done.stderr[-3000:]

    # The same numbers as the metric module loaded the way a user loads it.
    result = json.loads((score_out / "results.json").read_text(encoding="utf-8"))["result"]
    metric = import_evaluate().load(str(metric_folder("bbq_bias")))
    expected = metric.compute(
        predictions=[i % 3 for i in range(len(test_rows))],
        references=[row["label"] for row in test_rows],
        unknown_labels=[row["unknown_label"] for row in test_rows],
        stereotyped_labels=[row["stereotyped_label"] for row in test_rows],
        context_conditions=[row["context_condition"] for row in test_rows],
        categories=[row["category"] for row in test_rows],
        templates=[row["question_index"] for row in test_rows],
        confidence_level=0.95,
        n_resamples=2000,
        seed=0,
    )
    assert result == json.loads(json.dumps(expected))


# ``score`` in this one process, then which of the libraries it has no use for it imported
# (scipy.stats: the bootstrap draws its resamples itself; datasets, the Hub's card module and
# pandas: a built folder's card and rows are read without them).
SCORE = """
import json, sys
from bias_hub.pipelines.cli import main
code = main(json.loads(sys.argv[1]))
left = ("evaluate", "torch", "transformers", "scipy.stats")
left += ("datasets", "huggingface_hub.repocard", "pandas")
print(json.dumps([code, sorted(m for m in left if m in sys.modules)]))
"""


def test_score_computes_without_importing_evaluate(tmp_path: Path) -> None:
    jbbq = write_fixture_dataset(tmp_path / "jbbq")
    test_rows = fixture_rows()["test"]
    # Every question answered with its correct choice: accuracy 1 by hand.
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"example_id": row["example_id"], "prediction": row["label"]}) + "\n"
            for row in test_rows
        ),
        encoding="utf-8",
    )
    argv = ["score", "bbq_bias", "--predictions", str(predictions), "--dataset", str(jbbq)]
    argv += ["--split", "test", "--out", str(tmp_path / "score"), "-q"]
    done = subprocess.run(
        [sys.executable, "-c", SCORE, json.dumps(argv)], capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, []], done.stderr[-3000:]
    results = json.loads((tmp_path / "score" / "results.json").read_text(encoding="utf-8"))
    assert results["result"]["accuracy"] == 1.0
    assert results["result"]["confidence_intervals"]["accuracy"]["n_resamples"] == 2000
