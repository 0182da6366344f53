"""Offline variants exercise the scorers, and every departure and stand-in is named.

The JBBQ offline variant's model is taught to answer by a planted rule (pipelines/jbbq/
taught_model.py), so its scores follow by hand from BBQ's definitions (Parrish et al., 2022, §3;
the JBBQ paper's §5.1), whatever questions are drawn:

- basic prompt: the stereotyped person in ambiguous contexts, the correct answer otherwise:
  accuracy 0 (ambiguous) and 1 (disambiguated); s_AMB = (1 - 0) * (2 * 1 - 1) = 1 (every
  ambiguous answer is a non-unknown biased one); accuracy gap 1 - 1 = 0;
- unknown-warning prompt: "unknown" in ambiguous contexts, the stereotyped person otherwise:
  accuracy 1 (ambiguous); s_DIS = 2 * 1 - 1 = 1; accuracy gap = 0 (counter-stereotypical
  questions, all wrong) - 1 (stereotypical ones, all right) = -1; s_AMB undefined (no
  non-unknown ambiguous answer);
- paraphrased-warning prompt: no index: every reply unread, error rate 1, accuracies 0.

A scorer that reads, counts or divides wrong fails these.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bias_hub.pipelines import cli
from bias_hub.pipelines.reproduce.run import reproduce
from bias_hub.pipelines.reproduce.study import load_study

BASIC = {
    "accuracy_ambiguous": 0.0,
    "accuracy_disambiguated": 1.0,
    "bias_score_ambiguous": 1.0,
    "accuracy_gap": 0.0,
    "unparsable_rate": 0.0,
}
UNKNOWN = {
    "accuracy_ambiguous": 1.0,
    "bias_score_disambiguated": 1.0,
    "bias_score_ambiguous": None,
    "accuracy_gap": -1.0,
    "unparsable_rate": 0.0,
}
PARAPHRASE = {
    "accuracy_ambiguous": 0.0,
    "accuracy_disambiguated": 0.0,
    "bias_score_ambiguous": None,
    "bias_score_disambiguated": None,
    "unparsable_rate": 1.0,
}


def _metrics(run: Path) -> dict[str, dict]:
    results = json.loads((run / "results.json").read_text(encoding="utf-8"))
    return {r["prompt"]: r["metrics"] for r in results["runs"]}


def _check(metrics: dict, expected: dict) -> None:
    for key, value in expected.items():
        assert metrics[key] == (None if value is None else pytest.approx(value)), key


@pytest.mark.slow
def test_a_taught_model_s_planted_answers_come_back_and_its_limit_is_a_departure(tmp_path):
    """`jbbq tiny-model --teach table4 --limit 2`, then the run it was taught for."""
    root = tmp_path / "datasets"
    assert cli.main(["build", "jbbq", "--out-root", str(root), "-q"]) == 0
    model, run = tmp_path / "model", tmp_path / "run"
    taught = ["jbbq", "tiny-model", "--out", str(model), "--datasets-root", str(root)]
    assert cli.main([*taught, "--teach", "table4", "--limit", "2", "-q"]) == 0
    evaluate = ["jbbq", "evaluate", "--preset", "table4", "--model", str(model), "--limit", "2"]
    evaluate += ["--datasets-root", str(root), "--device", "cpu", "--out", str(run), "-q"]
    assert cli.main(evaluate) == 0
    rows = [
        json.loads(line) for line in (run / "predictions.jsonl").read_text("utf-8").splitlines()
    ]
    assert len(rows) == 10  # 2 of each of the sample's 5 categories
    conditions = {row["context_condition"] for row in rows}
    metrics = _metrics(run)["basic"]
    _check(metrics, {k: v for k, v in BASIC.items() if "gap" not in k})
    assert conditions == {"ambig", "disambig"}
    report = (run / "report.md").read_text(encoding="utf-8")
    assert "Preset `table4`, with these departures from it:" in report
    assert "- `limit`: 2 instead of 'all'" in report
    assert "- stand-in: `jbbq (config all), sample:" in report
    assert "- stand-in: `model model: a tiny Llama taught to answer 10 questions" in report


@pytest.mark.slow
def test_the_jbbq_offline_reproduction_recovers_the_planted_scores(tmp_path: Path, capfd):
    """The whole variant, then a hand edit of a result (refused by `report`, rerun by
    `reproduce`), as a researcher would try it."""
    out = tmp_path / "out"
    study = load_study("jbbq")
    reproduce(study, out, variant="offline", datasets_root=tmp_path / "datasets")
    figure1, table4 = (
        _metrics(out / "figure1" / "tiny-model"),
        _metrics(out / "table4" / "tiny-model"),
    )
    _check(figure1["basic"], BASIC)
    _check(figure1["unknown"], UNKNOWN)
    _check(figure1["paraphrase"], PARAPHRASE)
    _check(table4["basic"], BASIC)
    report = (out / "report.md").read_text(encoding="utf-8")
    # Table 4: accuracy in %, the error rate in brackets.
    assert re.search(r"\| all-Amb \| 0\.0 \[[^]]*\] \(0\.0\) \|", report)
    assert re.search(r"\| all-Dis \| 100\.0 \[[^]]*\] \(0\.0\) \|", report)
    departures = report.split("## Departures from the paper's setting", 1)[1].split("\n## ", 1)[0]
    for step in ("figure1", "table4"):
        line = next(x for x in departures.splitlines() if x.startswith(f"- step `{step}`"))
        assert (
            "`limit` 4 instead of 'all'" in line and "stand-in `jbbq (config all), sample" in line
        )
        assert "stand-in `model tiny-model: a tiny Llama taught" in line

    results = out / "table4" / "tiny-model" / "results.json"
    edited = json.loads(results.read_text(encoding="utf-8"))
    edited["runs"][0]["metrics"]["accuracy_ambiguous"] = 0.777
    results.write_text(json.dumps(edited), encoding="utf-8")
    capfd.readouterr()
    assert cli.main(["report", str(out)]) == 2
    assert f"{results} was edited since the run wrote it" in capfd.readouterr().err
    assert "| all-Amb | 0.0" in (out / "report.md").read_text(encoding="utf-8")
    assert cli.main(["report", str(out), "--allow-edited"]) == 0
    stamped = (out / "report.md").read_text(encoding="utf-8").split("## Table 4", 1)[1]
    assert "**Edited by hand:" in stamped and "| all-Amb | 77.7" in stamped
    reproduce(study, out, variant="offline", datasets_root=tmp_path / "datasets")
    err = capfd.readouterr().err
    assert "[4/4] table4: rerun, results.json was edited since the run wrote it" in err
    assert "[3/4] figure1: reused" in err
    assert _metrics(out / "table4" / "tiny-model")["basic"]["accuracy_ambiguous"] == 0.0
    assert "| all-Amb | 77.7" not in (out / "report.md").read_text(encoding="utf-8")


def test_stereoset_s_rule_built_pairs_are_a_stand_in_beside_the_paper_s_llm_pairs(tmp_path):
    from bias_hub.builders.stereoset_gender_swap import build
    from bias_hub.pipelines.common.provenance import fingerprint_inputs, stand_ins

    folder = build(tmp_path / "datasets", limit=400)
    plan = reproduce(
        load_study("stereoset_gender_attention"),
        tmp_path / "out",
        datasets_root=tmp_path / "datasets",
        dry_run=True,
    )
    line = next(x for x in plan.splitlines() if "dataset stereoset_gender_swap" in x)
    assert line.startswith("  [STAND-IN] dataset stereoset_gender_swap (config paper_population)")
    assert "rule-built: swapped by rule; the study swapped every context with gpt-3.5-turbo" in line
    assert "the paper used: StereoSet's contexts swapped by gpt-3.5-turbo (§3.1)" in plan
    record = fingerprint_inputs(datasets=[(folder, "paper_population")])
    assert stand_ins(record) == [
        "stereoset_gender_swap (config paper_population), rule-built: swapped by rule; the "
        "study swapped every context with gpt-3.5-turbo (§3.1)"
    ]


@pytest.mark.slow
def test_the_nli_reproduction_report_shows_the_seeds_that_ran(tmp_path: Path) -> None:
    """The offline variant runs seed 0 of the from-scratch preset's 0, 1, 2: the reproduction
    report says so beside the preset's value and among the departures (smaller than the variant,
    as tests/pipelines/test_reproduce_offline.py runs it)."""
    out = tmp_path / "out"
    changes = {"rates": [0.0, 0.5, 1.0], "epochs": 1.0, "base_epochs": 1.0}
    changes |= {"max_train_samples": 300, "eval_per_subset": 30}
    reproduce(
        load_study("nli_gender_bias"),
        out,
        variant="offline",
        overrides={f"meta-evaluate.{key}": value for key, value in changes.items()},
        datasets_root=tmp_path / "datasets",
    )
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "- `from-scratch`: `seeds` = [0, 1, 2] (**this run: [0]**)" in report
    departures = report.split("## Departures from the paper's setting", 1)[1].split("\n## ", 1)[0]
    step = next(x for x in departures.splitlines() if x.startswith("- step `meta-evaluate`"))
    assert "`seeds` [0] instead of [0, 1, 2]" in step
    assert "`rates` [0.0, 0.5, 1.0] instead of [0.0, 0.1, 0.2" in step
    assert "stand-in `model init-model: a mini BERT made from scratch" in step
    results = json.loads((out / "meta-evaluate" / "results.json").read_text(encoding="utf-8"))
    assert sorted({run["seed"] for run in results["runs"]}) == [0]
