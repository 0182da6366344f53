"""pipelines/studies/jbbq.yaml: the paper, its models, presets, steps, tables and the offline
variant, checked against the real commands and flags and against the paper's printed values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from bias_hub.pipelines import cli
from bias_hub.pipelines.cli import _leaf_parsers, build_parser
from bias_hub.pipelines.common.presets import STUDIES_DIR
from bias_hub.pipelines.jbbq.report import PAPER_LAYOUTS

table4_layout = PAPER_LAYOUTS["table4"]
STUDY = yaml.safe_load((STUDIES_DIR / "jbbq.yaml").read_text(encoding="utf-8"))
PAPERS = Path(__file__).resolve().parents[2].parent / "shared" / "papers"


def _commands() -> dict[str, object]:
    return {
        leaf.prog.removeprefix("bias-hub ").strip(): leaf for leaf in _leaf_parsers(build_parser())
    }


def _dests(parser) -> set[str]:
    return {action.dest for action in parser._actions}


def test_the_study_names_the_paper_and_its_four_models() -> None:
    assert (STUDY["study"], STUDY["paper_file"]) == ("jbbq", "002")
    assert (
        "NLP2024" in STUDY["paper"]["citation"]
        and "日本語社会的バイアス QA データセットの提案" in STUDY["paper"]["citation"]
    )
    assert "GeBNLP" in STUDY["paper"]["later_version"]
    # §5.1 names these four Hub ids, in this order.
    assert [m["id"] for m in STUDY["models"]] == [
        "llm-jp/llm-jp-13b-v1.0",
        "llm-jp/llm-jp-13b-instruct-full-jaster-dolly-oasst-v1.0",
        "stabilityai/japanese-stablelm-instruct-gamma-7b",
        "matsuo-lab/weblab-10b-instruction-sft",
    ]
    assert {m["section"] for m in STUDY["models"]} == {"§5.1"}
    if PAPERS.is_dir():  # the papers live beside the repository in this workspace
        text = next(PAPERS.glob("002_*.txt")).read_text(encoding="utf-8")
        assert all(m["id"] in text for m in STUDY["models"])
    assert [i["name"] for i in STUDY["inputs"]] == ["jbbq"] and "--source" in STUDY["inputs"][0][
        "how"
    ]


def test_every_step_is_a_real_command_with_real_flags() -> None:
    commands = _commands()
    steps = STUDY["steps"] + STUDY["variants"]["offline"]["steps"]
    for step in steps:
        assert step["command"] in commands, step["id"]
        unknown = set(step["args"]) - _dests(commands[step["command"]])
        assert not unknown, f"{step['id']}: {unknown}"
    ids = {step["id"] for step in STUDY["steps"]}
    for key in STUDY["variants"]["offline"]["set"]:
        step_id, _, dest = key.partition(".")
        assert step_id in ids and dest in _dests(commands["jbbq evaluate"]), key
    for name, preset in STUDY["presets"].items():
        assert preset["command"] == "jbbq evaluate"
        assert set(preset["settings"]) <= _dests(commands["jbbq evaluate"]), name
    for table in STUDY["tables"]:
        assert table["layout"] in PAPER_LAYOUTS and table["step"] in ids


def test_table4_printed_values_are_the_papers() -> None:
    printed = next(t for t in STUDY["tables"] if t["id"] == "table4")["printed"]
    values = printed["values"]
    assert list(values) == [m["id"] for m in STUDY["models"]]
    # Spot checks against Table 4 of the paper: llm-jp's error rates, weblab's, the others' accuracies.
    assert values["llm-jp/llm-jp-13b-v1.0"]["Sexual-Dis"] == [0.0, 100.0]
    assert values["matsuo-lab/weblab-10b-instruction-sft"]["Age-Amb"] == [25.6, 16.3]
    assert values["stabilityai/japanese-stablelm-instruct-gamma-7b"]["Gender-Amb"] == [30.8]
    assert values["llm-jp/llm-jp-13b-instruct-full-jaster-dolly-oasst-v1.0"]["Disability-Dis"] == [
        55.1
    ]
    assert all(len(column) == 10 for column in values.values())  # 5 categories x Amb / Dis


def test_table4_layout_puts_ours_beside_the_printed_cell() -> None:
    printed = next(t for t in STUDY["tables"] if t["id"] == "table4")["printed"]
    # 1 of 4 ambiguous questions right (25.0 %), 1 of 4 without an answer (25.0 %); 3 of 4 disambiguated.
    scores = {"accuracy_ambiguous": 0.25, "accuracy_disambiguated": 0.75}
    run = {
        "prompt": "basic",
        "shots": 0,
        "metrics": {**scores, "per_category": {"Age": scores}},
        "error_rates": {
            "Age": {"ambig": 0.25, "disambig": 0.0},
            "overall": {"ambig": 0.25, "disambig": 0.0},
        },
    }
    text = table4_layout({"model": "matsuo-lab/weblab-10b-instruction-sft", "runs": [run]}, printed)
    lines = text.splitlines()
    # The run's model's printed column first, then the paper's other three.
    assert (
        "| category-context | ours: matsuo-lab/weblab-10b-instruction-sft | paper: weblab (this model) "
        "| paper: llm-jp | paper: llm-jp inst. | paper: stablelm |" in lines
    )
    # Table 4, row Age-Amb: weblab 25.6 (16.3), llm-jp 0.4 (93.1), llm-jp inst. 1.0, stablelm 23.4.
    assert "| Age-Amb | 25.0 (25.0) | 25.6 (16.3) | 0.4 (93.1) | 1.0 | 23.4 |" in lines
    # Row Age-Dis: weblab 29.1 (16.1), llm-jp 2.2 (95.3), llm-jp inst. 50.0, stablelm 40.0.
    assert "| Age-Dis | 75.0 (0.0) | 29.1 (16.1) | 2.2 (95.3) | 50.0 | 40.0 |" in lines
    # A model the paper does not have: every printed column is still shown, in the paper's order.
    other = table4_layout({"model": "./my-model", "runs": [run]}, printed).splitlines()
    assert "This run's model is none of the paper's: its columns are shown for reference." in other
    assert "| Age-Amb | 25.0 (25.0) | 0.4 (93.1) | 1.0 | 23.4 | 25.6 (16.3) |" in other
    # Not run: the paper's columns alone, every printed row (Sexual-Dis: 0.0 (100.0), 53.5, 40.4, 30.0 (25.0)).
    alone = table4_layout(None, printed).splitlines()
    assert "| Sexual-Dis | not run | 0.0 (100.0) | 53.5 | 40.4 | 30.0 (25.0) |" in alone
    assert sum(line.startswith("| ") for line in alone) == 1 + 10
    assert "Table 4 needs `--preset table4`" in table4_layout(
        {"model": "m", "runs": [dict(run, shots=4)]}, printed
    )


@pytest.mark.slow
def test_the_offline_variant_runs_end_to_end(tmp_path: Path) -> None:
    """The offline variant's steps with its settings, as `bias-hub reproduce` would run them."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    out = tmp_path
    variant = STUDY["variants"]["offline"]
    try:
        for step in variant["steps"]:
            args = [*step["command"].split()]
            for dest, value in step["args"].items():
                args += [f"--{dest.replace('_', '-')}", value.format(out=out)]
            assert cli.main([*args, "-q"]) == 0, step["id"]
        model = variant["models"][0].format(out=out)
        table_step = next(s for s in STUDY["steps"] if s["id"] == "table4")
        extra = []
        for key, value in variant["set"].items():
            step_id, _, dest = key.partition(".")
            if step_id == "table4":
                extra += [f"--{dest.replace('_', '-')}", str(value).format(out=out)]
        run_out = out / "table4"
        assert (
            cli.main(
                [
                    "jbbq",
                    "evaluate",
                    "--preset",
                    table_step["args"]["preset"],
                    "--model",
                    model,
                    "--out",
                    str(run_out),
                    "-q",
                    *extra,
                ]
            )
            == 0
        )
    finally:
        torch.set_num_threads(threads)
    results = json.loads((run_out / "results.json").read_text(encoding="utf-8"))
    # The sample: 5 categories, --limit 4 questions each, 0-shot basic prompt (Table 4's setting).
    assert [(r["prompt"], r["shots"], r["n_questions"]) for r in results["runs"]] == [
        ("basic", 0, 20)
    ]
    predictions = [
        json.loads(line)
        for line in (run_out / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    age = [p for p in predictions if p["category"] == "Age" and p["context_condition"] == "ambig"]
    assert results["runs"][0]["error_rates"]["Age"]["ambig"] == pytest.approx(
        sum(p["prediction"] == -1 for p in age) / len(age)
    )
    printed = next(t for t in STUDY["tables"] if t["id"] == "table4")["printed"]
    assert "| Age-Amb |" in table4_layout(results, printed)


def test_figure1_layout_shows_our_figure_our_numbers_and_what_the_paper_says() -> None:
    printed = next(t for t in STUDY["tables"] if t["id"] == "figure1")["printed"]
    assert printed["chance_rate"] == 0.33  # Figure 1's red dotted line
    metrics = {
        "accuracy_ambiguous": 0.4,
        "accuracy_disambiguated": 0.5,
        "accuracy_gap": -0.25,
        "bias_score_disambiguated": 0.125,
        "bias_score_ambiguous": None,
        "confidence_intervals": {"accuracy_ambiguous": {"low": 0.3, "high": 0.55}},
    }
    results = {"model": "m", "runs": [{"prompt": "basic", "shots": 4, "metrics": metrics}]}
    lines = PAPER_LAYOUTS["figure1"](results, printed).splitlines()
    assert lines[0] == "![Figure 1 layout, 4-shot](figure1_4shot.png)"
    assert any(line.startswith("Paper: Figure 1 is drawn, not printed") for line in lines)
    assert "| BasicP | 0.40 [0.30, 0.55] | 0.50 | -0.25 | 0.12 | n/a |" in lines
