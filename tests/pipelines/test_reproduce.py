"""`bias-hub reproduce` interprets a study file through the real command line: a toy study whose
one command ("toy count") is registered for the test shows planning, variants, --set, inputs
checked before any work, resuming, and the paper layout beside the printed values."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest
import yaml

from bias_hub.pipelines import cli
from bias_hub.pipelines.common.arguments import add_verbosity_flags
from bias_hub.pipelines.common.run_folder import RunFolder
from bias_hub.pipelines.reproduce.run import reproduce
from bias_hub.pipelines.reproduce.study import (
    StudyError,
    command_dests,
    list_studies,
    load_study,
    plan,
    validate,
)

CALLS: list[list[str]] = []


def _toy_count(args) -> int:
    """Counts the words of --text; the result a table lays out."""
    CALLS.append([args.text, str(args.out)])
    with RunFolder(args.out) as run:
        run.record_inputs(settings={"text": args.text, "scale": args.scale})
        run.write_json(
            "results.json",
            {"part": "toy", "step": "count", "words": len(args.text.split()), "scale": args.scale},
        )
        run.write_text("report.md", "toy\n")
    return 0


def _toy_register(subparsers) -> None:
    toy = subparsers.add_parser("toy").add_subparsers(dest="toy_command", required=True)
    count = toy.add_parser("count")
    count.add_argument("--text", required=True)
    count.add_argument("--out", type=Path, required=True)
    count.add_argument("--scale", type=int, default=1)
    count.add_argument("--model", nargs="+", action="extend")
    add_verbosity_flags(count)
    count.set_defaults(func=_toy_count)


def _words_table(results: dict | None, printed: dict) -> str:
    ours = "not run" if results is None else results["words"] * results["scale"]
    return f"| | ours | paper |\n|---|---|---|\n| words | {ours} | {printed['words']} |"


@pytest.fixture
def toy(monkeypatch, tmp_path):
    real = cli.build_parser

    def build_parser(argv=None):
        parser = real()
        sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
        _toy_register(sub)
        return parser

    monkeypatch.setattr(cli, "build_parser", build_parser)
    report = types.ModuleType("bias_hub.pipelines.toy.report")
    report.PAPER_LAYOUTS = {"words": _words_table}
    monkeypatch.setitem(
        sys.modules, "bias_hub.pipelines.toy", types.ModuleType("bias_hub.pipelines.toy")
    )
    monkeypatch.setitem(sys.modules, "bias_hub.pipelines.toy.report", report)
    CALLS.clear()
    study = {
        "study": "toy",
        "version": "2",
        "title": "A toy paper",
        "paper": {"citation": "Author (2024). Toy. In Proc. Toys."},
        "models": [{"id": "org/paper-model", "section": "§3"}],
        "inputs": [
            {"kind": "file", "name": "corpus", "how": "download the corpus from the toy site"}
        ],
        "steps": [
            {
                "id": "count",
                "command": "toy count",
                "args": {"text": "one two three", "out": "{out}/count", "scale": 1},
            }
        ],
        "tables": [
            {
                "id": "t1",
                "title": "Table 1: words",
                "section": "§4",
                "step": "count",
                "layout": "words",
                "printed": {"words": 3},
            }
        ],
        "variants": {
            "double": {"description": "counts twice", "set": {"count.scale": 2}},
            "nothing": {"description": "runs no step", "skip": ["count"]},
        },
    }
    path = tmp_path / "toy.yaml"
    path.write_text(yaml.safe_dump(study, allow_unicode=True, sort_keys=False), encoding="utf-8")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("x", encoding="utf-8")
    return load_study(str(path)), corpus


def test_plan_expands_placeholders_variants_and_set(toy, tmp_path):
    study, _ = toy
    out = tmp_path / "run"
    [step] = plan(study, out)
    assert step.argv == [
        "toy",
        "count",
        "--text",
        "one two three",
        "--out",
        str(out / "count"),
        "--scale",
        "1",
    ]
    [step] = plan(study, out, variant="double")
    assert step.argv[-2:] == ["--scale", "2"]
    [step] = plan(study, out, variant="double", overrides={"scale": 5})
    assert step.argv[-2:] == ["--scale", "5"]
    with pytest.raises(StudyError, match="no step 'nope'"):
        plan(study, out, overrides={"nope.scale": 1})
    with pytest.raises(StudyError, match="--variant 'x'"):
        plan(study, out, variant="x")


def test_a_bare_set_reaches_every_step_whose_command_takes_it(toy, tmp_path):
    study, _ = toy
    accepts = command_dests(cli.build_parser())
    [step] = plan(study, tmp_path, overrides={"model": ["m1"]}, accepts=accepts)
    assert step.argv[-2:] == ["--model", "m1"]
    with pytest.raises(StudyError, match="--set colour: no step of toy takes it"):
        plan(study, tmp_path, overrides={"colour": 1}, accepts=accepts)


def test_validate_uses_the_real_parser(toy):
    study, _ = toy
    validate(study, cli.build_parser())
    broken = study.__class__(
        **{
            **study.__dict__,
            "steps": [
                {
                    "id": "count",
                    "command": "toy count",
                    "args": {"text": "a", "out": "{out}/c", "colour": 1},
                }
            ],
        }
    )
    with pytest.raises(StudyError, match="unrecognized arguments: --colour 1"):
        validate(broken, cli.build_parser())


def test_dry_run_names_models_steps_and_what_is_missing(toy, tmp_path):
    study, _ = toy
    text = reproduce(study, tmp_path / "run", dry_run=True)
    assert "Author (2024). Toy." in text
    assert "org/paper-model  (§3)" in text
    assert "[MISSING] file corpus: not given (--input corpus=PATH)" in text
    assert "how: download the corpus from the toy site" in text
    assert "bias-hub toy count --text 'one two three'" in text
    assert CALLS == []


def test_a_missing_input_stops_before_any_work(toy, tmp_path):
    study, _ = toy
    with pytest.raises(ValueError, match=r"inputs are missing \(nothing was run\)") as err:
        reproduce(study, tmp_path / "run")
    assert "corpus" in str(err.value)
    assert CALLS == [] and not (tmp_path / "run").exists()


def test_run_lays_out_the_table_beside_the_printed_values_and_resumes(toy, tmp_path):
    study, corpus = toy
    out = tmp_path / "run"
    reproduce(study, out, variant="double", inputs={"corpus": str(corpus)})
    report = (out / "report.md").read_text(encoding="utf-8")
    # 3 words x scale 2 (the variant) beside the printed 3.
    assert "| words | 6 | 3 |" in report
    assert "Variant `double` — not the paper's setting" in report
    assert json.loads((out / "results.json").read_text())["study"] == "toy"
    assert len(CALLS) == 1
    reproduce(study, out, variant="double", inputs={"corpus": str(corpus)})
    assert len(CALLS) == 1, "the finished step with the same command is reused"
    reproduce(study, out, inputs={"corpus": str(corpus)})
    assert len(CALLS) == 2 and "| words | 3 | 3 |" in (out / "report.md").read_text(
        encoding="utf-8"
    )


def test_a_table_whose_step_did_not_run_shows_the_printed_values(toy, tmp_path):
    study, corpus = toy
    out = tmp_path / "run"
    reproduce(study, out, variant="nothing", inputs={"corpus": str(corpus)})
    report = (out / "report.md").read_text(encoding="utf-8")
    assert CALLS == []
    assert "Step `count` was not run in this reproduction." in report
    assert "| words | not run | 3 |" in report


def test_report_command_rerenders_a_reproduction(toy, tmp_path):
    study, corpus = toy
    out = tmp_path / "run"
    reproduce(study, out, inputs={"corpus": str(corpus)})
    (out / "report.md").unlink()
    assert cli.main(["report", str(out)]) == 0
    assert "| words | 3 | 3 |" in (out / "report.md").read_text(encoding="utf-8")


def test_out_of_other_work_is_refused(toy, tmp_path):
    study, corpus = toy
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me", encoding="utf-8")
    with pytest.raises(ValueError, match="not a reproduction folder"):
        reproduce(study, out, inputs={"corpus": str(corpus)})
    assert (out / "notes.txt").read_text(encoding="utf-8") == "keep me"


def test_every_shipped_study_reads():
    names = [s.name for s in list_studies()]
    assert {
        "nli_gender_bias",
        "jbbq",
        "stereoset_gender_attention",
        "rnsb_winobias",
        "speciesism",
    } <= set(names)


@pytest.mark.parametrize("study", list_studies(), ids=lambda s: s.name)
def test_every_shipped_study_validates_and_dry_runs(study, tmp_path, capsys):
    """Each study's steps (and each variant's) parse with the real command line; its dry run
    names the paper's models with their sections, every table's step, and exits without work."""
    assert study.steps, f"{study.name} declares no steps"
    assert study.tables, f"{study.name} declares no tables"
    assert study.paper.get("citation"), f"{study.name} cites no paper"
    assert study.models, f"{study.name} names no models"
    validate(study, cli.build_parser())
    # The study itself is dry-run through the command line (the plan reads every step's preset
    # files, the costly part), its variants through the function.
    assert cli.main(["reproduce", study.name, "--dry-run"]) == 0
    texts = [capsys.readouterr().out]
    for variant in study.variants:
        texts.append(reproduce(study, tmp_path / "out", variant=variant, dry_run=True))
    for text in texts:
        for model in study.models:
            assert model["id"] in text
        for table in study.tables:
            assert f"{table['id']}: " in text
    assert not (tmp_path / "out").exists()
