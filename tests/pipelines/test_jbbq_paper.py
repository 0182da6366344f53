"""JBBQ as the paper ran it: presets, every question with held-out shot templates, intervals,
Holm-corrected paired comparisons, Figure 1 and Table 4, and the planted-bias demo model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbbq_fixtures import fixture_rows, write_fixture_dataset

from bias_hub.pipelines import cli
from bias_hub.pipelines.common.locations import import_evaluate
from bias_hub.pipelines.common.presets import load_preset
from bias_hub.pipelines.common.stats import holm
from bias_hub.pipelines.jbbq.comparisons import comparison_pairs
from bias_hub.pipelines.jbbq.prompting import PROMPT_NAMES, load_prompt, template_key
from bias_hub.pipelines.jbbq.random_model import build_tiny_model
from bias_hub.pipelines.jbbq.report import CHANCE, figure_one, render, table4
from bias_hub.pipelines.jbbq.run import _with_preset_record, load_questions, run_evaluate
from bias_hub.pipelines.jbbq.settings import TASK_FIELDS, Settings, with_preset

# The task settings without a preset (`--preset none`): the settings class's defaults.
TASK_DEFAULTS = {
    "prompts": ["basic", "unknown", "paraphrase"],
    "shots": [0],
    "scoring": "loglikelihood",
    "chat": "auto",
    "split": "test",
    "max_new_tokens": 8,
    "layout": "llm-jp-eval",
    "answer_reader": "lenient",
}

REPO_ROOT = Path(__file__).resolve().parents[2]
METRICS_DIR = REPO_ROOT / "metrics"


@pytest.fixture(scope="module")
def fixture_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixture_dataset(tmp_path_factory.mktemp("jbbq_paper_fixture") / "jbbq")


@pytest.fixture(scope="module")
def plain_models(tmp_path_factory: pytest.TempPathFactory):
    import torch

    root = tmp_path_factory.mktemp("jbbq_paper_models")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    corpus = [load_prompt(name).system for name in PROMPT_NAMES] + [
        load_prompt("basic").plain(row) for row in fixture_rows()["all"]
    ]
    for seed in (1, 2):
        build_tiny_model(root / f"plain{seed}", corpus, seed=seed, chat_template=False)
    yield {seed: root / f"plain{seed}" for seed in (1, 2)}
    torch.set_num_threads(threads)


# ---- presets ---------------------------------------------------------------------------


def test_presets_hold_the_papers_settings() -> None:
    # §5.1 and Figure 1: 4-shot, answers generated (llm-jp-eval), the three prompts; BBQ-style every question.
    paper = load_preset("jbbq evaluate", "paper")
    assert paper.values == {
        "prompts": ["basic", "unknown", "paraphrase"],
        "shots": [4],
        "scoring": "generate",
        "chat": "no",
        "split": "all",
        # llm-jp-eval v1.3.0's prompt layout, its reading of a reply and the one token the JBBQ
        # processor in wandb/llm-leaderboard asks for: assumed, as §5.1 names the harness only
        "max_new_tokens": 1,
        "layout": "llm-jp-eval",
        "answer_reader": "llm-jp-eval",
    }
    assert (
        paper.sections["shots"] == "§5.2, Figure 1" and paper.sections["split"] is None
    )  # `all` is ours
    for key in ("layout", "answer_reader", "max_new_tokens"):
        assert paper.sections[key] is None and paper.basis[key][0] == "assumed"
        assert "v1.3.0" in paper.basis[key][1]
    # Table 4: 0-shot, basic prompt.
    table = load_preset("jbbq evaluate", "table4")
    assert table.values["shots"] == [0] and table.values["prompts"] == ["basic"]
    assert table.values["scoring"] == "generate"
    assert table.values["layout"] == table.values["answer_reader"] == "llm-jp-eval"
    assert paper.source == table.source == "jbbq v1.3"


def test_flags_override_a_preset_and_the_record_says_which() -> None:
    resolved = with_preset("paper", shots=[0], split="test")
    assert resolved.shots == [0] and resolved.split == "test"
    assert resolved.prompts == ["basic", "unknown", "paraphrase"] and resolved.scoring == "generate"
    assert resolved.preset == "paper" and resolved.departures == [
        {"setting": "shots", "preset": [4], "used": [0], "section": "§5.2, Figure 1"},
        {"setting": "split", "preset": "all", "used": "test", "section": None},
    ]
    # A flag equal to the preset's value is no departure.
    assert with_preset("paper", scoring="generate").departures == []
    none = with_preset("none")
    assert none.preset is None and {k: getattr(none, k) for k in TASK_FIELDS} == TASK_DEFAULTS
    assert {k: getattr(Settings(preset=None), k) for k in TASK_FIELDS} == TASK_DEFAULTS
    # A chat-completions API takes messages: the preset's plain-text prompt does not apply there (a departure).
    api = _with_preset_record(with_preset("paper", backend="openai"))
    # (The plain text is our reading of llm-jp-eval, not stated in the paper: no section.)
    assert api.chat == "auto" and api.departures == [
        {"setting": "chat", "preset": "no", "used": "auto", "section": None}
    ]
    assert Settings(confidence_level=0).confidence_level is None
    # A Settings built by hand under a preset's name is recorded with every value that differs from it.
    assert [d["setting"] for d in _with_preset_record(Settings(shots=[4])).departures] == [
        "answer_reader",
        "scoring",
        "chat",
        "split",
        "max_new_tokens",  # the class's 8, the preset's 1
    ]


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        (
            "command: jbbq evaluate\nsettings: {shots: [4], temperature: 0}\n",
            "names settings that `jbbq evaluate` does not have: temperature",
        ),
        (
            "command: jbbq evaluate\nsettings: {shots: 4}\n",
            "--shots: expected a list of integers >= 0, got 4",
        ),
        ("settings: {shots: [4]}\n", "needs 'command'"),
        ("- a list\n", "expected a mapping"),
    ],
)
def test_bad_preset_files_name_the_file_and_the_key(
    tmp_path: Path, text: str, problem: str, capsys
) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(text, encoding="utf-8")
    assert (
        cli.main(
            [
                "jbbq",
                "evaluate",
                "--model",
                "m",
                "--out",
                str(tmp_path / "out"),
                "--preset",
                str(path),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert str(path) in err and problem in err and "Traceback" not in err
    assert (
        cli.main(
            ["jbbq", "evaluate", "--model", "m", "--out", str(tmp_path / "out"), "--preset", "papr"]
        )
        == 2
    )
    assert (
        "--preset 'papr': no such preset for `jbbq evaluate` (known: paper, table4)"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "out").exists()


# ---- every question, few-shot examples held out -----------------------------------------


def _plan(dataset: Path, **settings):
    return load_questions(dataset, Settings(preset=None, **settings))


def test_split_all_holds_the_shot_templates_out_of_the_evaluation(fixture_dataset: Path) -> None:
    rows, shots, record = _plan(fixture_dataset, split="all", shots=[0, 2], shot_pool=2, seed=4)
    train_templates = {template_key(r) for r in fixture_rows()["train"]}
    shot_templates = {template_key(s) for s in shots}
    assert len(shots) == 2 and len(shot_templates) == 2 and shot_templates <= train_templates
    # 10 templates x 4 questions; the 2 shot templates' 8 questions are held out.
    assert len(rows) == 40 - 8 and record["held_out_questions"] == 8
    assert not {template_key(r) for r in rows} & shot_templates
    assert sorted(map(tuple, record["held_out_templates"])) == sorted(shot_templates)
    # On the test split the shots come from train templates nobody evaluates: nothing held out.
    rows, shots, record = _plan(fixture_dataset, split="test", shots=[2], shot_pool=2, seed=4)
    assert (
        len(rows) == 16 and record["held_out_questions"] == 0 and record["held_out_templates"] == []
    )
    # Evaluating train itself holds the shot templates out as well.
    rows, shots, record = _plan(fixture_dataset, split="train", shots=[1], shot_pool=1, seed=4)
    assert len(rows) == 24 - 4 and template_key(shots[0]) not in {template_key(r) for r in rows}


def test_shot_counts_share_one_draw(fixture_dataset: Path) -> None:
    """A k-shot run uses the first k of the pool, so every run answers the same questions."""
    _, shots, _ = _plan(fixture_dataset, split="all", shots=[1, 3], seed=7)
    assert len(shots) == 4  # the default pool: the paper's largest count, 4
    rows_a, _, _ = _plan(fixture_dataset, split="all", shots=[3], seed=7)
    rows_b, _, _ = _plan(fixture_dataset, split="all", shots=[1, 3], seed=7)
    assert rows_a == rows_b


def test_the_0_shot_questions_do_not_depend_on_the_other_counts(fixture_dataset: Path) -> None:
    """`--shots 0` and `--shots 0,2` score one 0-shot set: the pool's 4 train templates (4
    questions each) are held out of `all` either way, 40 - 16 = 24 questions."""
    alone, _, record = _plan(fixture_dataset, split="all", shots=[0], seed=7)
    with_four, shots, _ = _plan(fixture_dataset, split="all", shots=[0, 2], seed=7)
    assert alone == with_four and len(alone) == 40 - 16 and record["held_out_questions"] == 16
    assert record["pool"] == 4 and len(shots) == 4
    with pytest.raises(
        ValueError, match=r"--shots 5: more than the --shot-pool of 4 .* --shot-pool 5"
    ):
        _plan(fixture_dataset, split="all", shots=[0, 5], seed=7)


# ---- comparisons -------------------------------------------------------------------------


def test_holm_adjusts_as_worked_out_by_hand() -> None:
    # Sorted: 0.005 x 4 = 0.02; 0.01 x 3 = 0.03; 0.03 x 2 = 0.06; 0.04 x 1 = 0.04 -> kept at 0.06.
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.5, 0.6]) == pytest.approx([1.0, 1.0])  # capped at 1
    assert holm([]) == []


def test_pairs_are_prompts_within_a_shot_count_and_shot_counts_within_a_prompt() -> None:
    runs = [{"prompt": p, "shots": k} for p in ("basic", "unknown") for k in (0, 4)]
    assert comparison_pairs(runs) == [(0, 2), (1, 3), (0, 1), (2, 3)]


# ---- Table 4 and Figure 1 ------------------------------------------------------------------


def _fake_run(accuracy: float, error: float) -> dict:
    interval = {"low": 0.12, "high": 0.351}
    scores = {
        "accuracy_ambiguous": accuracy,
        "accuracy_disambiguated": 0.5,
        "confidence_intervals": {"accuracy_ambiguous": interval},
    }
    return {
        "prompt": "basic",
        "shots": 0,
        "metrics": {**scores, "per_category": {"Age": scores}},
        "error_rates": {
            "Age": {"ambig": error, "disambig": 0.0},
            "overall": {"ambig": error, "disambig": 0.0},
        },
    }


def test_table4_cells_are_accuracy_interval_and_error_rate_in_percent() -> None:
    text = table4([("llm-jp", _fake_run(0.234, 0.163)), ("weblab", _fake_run(0.5, 0.0))])
    lines = text.splitlines()
    assert lines[0] == "| category-context | llm-jp | weblab |"
    assert lines[2] == "| Age-Amb | 23.4 [12.0, 35.1] (16.3) | 50.0 [12.0, 35.1] (0.0) |"
    assert lines[3] == "| Age-Dis | 50.0 (0.0) | 50.0 (0.0) |"


def test_figure_one_puts_models_side_by_side_with_a_chance_line() -> None:
    results = {"runs": [dict(_fake_run(0.4, 0.0), prompt=p) for p in PROMPT_NAMES]}
    for one in results["runs"]:
        one["metrics"].update(
            accuracy_gap=-0.2, bias_score_disambiguated=0.1, bias_score_ambiguous=0.3
        )
    figure = figure_one([("model A", results), ("model B", results)], shots=0)
    axes = figure.axes
    assert len(axes) == 8  # 4 panels x 2 models
    assert "model A" in axes[0].get_title() and "model B" in axes[1].get_title()
    for ax in axes[:4]:  # the accuracy rows of both models
        lines = [line for line in ax.lines if list(line.get_ydata()) == [CHANCE, CHANCE]]
        assert lines and lines[0].get_color() == "red" and lines[0].get_linestyle() == ":"
    # Accuracy panels: 3 prompts x (Age, all); bias panel: s_DIS and s_AMB x (Age, all).
    assert len(axes[0].patches) == 6 and len(axes[6].patches) == 4
    import matplotlib.pyplot as plt

    plt.close(figure)


# ---- the paper preset end to end, and jbbq figure ------------------------------------------


def _evaluate(model: Path, dataset: Path, out: Path, *extra: str) -> int:
    return cli.main(
        [
            "jbbq",
            "evaluate",
            "--model",
            str(model),
            "--dataset",
            str(dataset),
            "--metrics-root",
            str(METRICS_DIR),
            "--out",
            str(out),
            "--device",
            "cpu",
            "--quiet",
            "--n-resamples",
            "200",
            *extra,
        ]
    )


@pytest.mark.slow
def test_preset_paper_and_figure_end_to_end(
    plain_models, fixture_dataset: Path, tmp_path: Path, capsys
) -> None:
    for seed, model in plain_models.items():
        assert _evaluate(model, fixture_dataset, tmp_path / f"run{seed}", "--seed", str(seed)) == 0
    results = json.loads((tmp_path / "run1" / "results.json").read_text(encoding="utf-8"))
    assert results["preset"]["name"] == "paper" and results["preset"]["departures"] == []
    assert (results["part"], results["step"], results["preset"]["source"]) == (
        "jbbq",
        "evaluate",
        "jbbq v1.3",
    )
    assert results["scoring"] == "generate" and results["settings"]["split"] == "all"
    assert [(r["prompt"], r["shots"]) for r in results["runs"]] == [(p, 4) for p in PROMPT_NAMES]
    # 10 templates x 4 questions, 4 shot templates held out.
    assert (
        results["few_shot"]["held_out_questions"] == 16 and results["runs"][0]["n_questions"] == 24
    )
    # llm-jp-eval's layout: the instruction under "### 指示:", four shots and the question each
    # under "### 入力:" and answered after "### 応答:"; replies read as llm-jp-eval reads them
    prompt = results["runs"][0]["example_prompt"]
    assert prompt.count("\n\n### 指示:\n") == 1 and prompt.count("\n\n### 入力:\n") == 5
    assert prompt.endswith("\n\n### 応答:\n") and prompt.count("### 応答:") == 5
    assert results["answer_reader"] == "llm-jp-eval"
    assert results["runs"][0]["layout"] == "llm-jp-eval@1.3.0"
    reading = results["runs"][0]["reading"]
    assert sum(reading["rules"].values()) == reading["replies"] == 24
    intervals = results["runs"][0]["metrics"]["confidence_intervals"]["accuracy"]
    assert intervals["unit"] == "templates" and intervals["confidence_level"] == 0.95
    comparisons = results["comparisons"]
    assert comparisons["correction"] == "Holm" and comparisons["alpha"] == pytest.approx(0.05)
    assert len(comparisons["rows"]) == 3 * 6  # three pairs of prompts, six scores each
    tested = [row for row in comparisons["rows"] if row["p_value"] is not None]
    assert (
        comparisons["n_tests"] == len(tested) > 0
    )  # undefined scores (no readable answer) are not tested
    for row in tested:
        assert row["p_value"] <= row["p_holm"] <= 1 and row["significant"] == (row["p_holm"] < 0.05)
    report = (tmp_path / "run1" / "report.md").read_text(encoding="utf-8")
    for text in (
        "Preset `paper`, no departures.",
        "study `jbbq v1.3`",
        "## How the replies were read",
        "Prompt layout: `llm-jp-eval@1.3.0`",
        f"Holm's step-down correction over all {len(tested)} tests",
        "Table 4 layout",
        "held out of the evaluation",
        "![figure1_4shot.png](figure1_4shot.png)",
    ):
        assert text in report
    assert (tmp_path / "run1" / "figure1_4shot.png").stat().st_size > 0
    # report.py alone draws the report, from results.json: drawn again, the same text and figure file.
    again = tmp_path / "again"
    again.mkdir()
    render(results, again)
    assert (again / "report.md").read_text(encoding="utf-8") == report
    assert sorted(p.name for p in again.iterdir()) == ["figure1_4shot.png", "report.md"]

    out = tmp_path / "figure"
    files = [str(tmp_path / f"run{seed}" / "results.json") for seed in plain_models]
    assert (
        cli.main(["jbbq", "figure", *files, "--out", str(out), "--labels", "first,second", "-q"])
        == 0
    )
    assert (out / "figure1_4shot.png").stat().st_size > 0
    text = (out / "figure.md").read_text(encoding="utf-8")
    assert (
        "| category-context | first: BasicP | first: UnkP | first: ParaP | second: BasicP |" in text
    )
    assert "| Age-Amb |" in text and (out / "manifest.json").is_file()
    figure_results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert (figure_results["part"], figure_results["step"], figure_results["shots"]) == (
        "jbbq",
        "figure",
        4,
    )
    assert [m["label"] for m in figure_results["models"]] == ["first", "second"]

    # Clear errors, nothing written.
    assert (
        cli.main(
            [
                "jbbq",
                "figure",
                files[0],
                str(tmp_path / "missing.json"),
                "--out",
                str(tmp_path / "f2"),
            ]
        )
        == 2
    )
    assert "missing.json: no such results file" in capsys.readouterr().err
    assert (
        cli.main(["jbbq", "figure", files[0], "--out", str(tmp_path / "f3"), "--shots", "2"]) == 2
    )
    err = capsys.readouterr().err
    assert "--shots 2:" in err and "has no 2-shot run (it has [4])" in err
    assert (
        cli.main(["jbbq", "figure", files[0], "--out", str(tmp_path / "f4"), "--labels", "a,b"])
        == 2
    )
    assert "--labels: 2 label(s) for 1 results file(s)" in capsys.readouterr().err
    bad = tmp_path / "not-results.json"
    bad.write_text('{"model": "x"}', encoding="utf-8")
    assert cli.main(["jbbq", "figure", str(bad), "--out", str(tmp_path / "f5")]) == 2
    assert "not the results.json of a `jbbq evaluate` run" in capsys.readouterr().err
    assert not any((tmp_path / name).exists() for name in ("f2", "f3", "f4", "f5"))


# ---- the demo's planted model --------------------------------------------------------------


def test_planted_answers_follow_the_plan_worked_out_by_hand(repo_root: Path) -> None:
    evaluate = import_evaluate()

    from bias_hub.pipelines.jbbq.planted_model import Plan, planted_answers

    rows = fixture_rows()["train"]  # 2 categories x 3 templates x 4 questions
    plan = Plan()
    basic, unknown, paraphrase = (
        planted_answers(rows, name, plan, seed=3) for name in PROMPT_NAMES
    )
    for category in ("Age", "Gender_identity"):
        ambiguous = [
            i
            for i, r in enumerate(rows)
            if r["category"] == category and r["context_condition"] == "ambig"
        ]
        kinds = [
            "st"
            if basic[i] == rows[i]["stereotyped_label"]
            else "unk"
            if basic[i] == rows[i]["unknown_label"]
            else "ct"
            for i in ambiguous
        ]
        # 6 ambiguous questions: round(0.05 x 6) = 0 without an index, 3 stereotyped, round(0.6) = 1 counter.
        assert sorted(kinds) == ["ct", "st", "st", "st", "unk", "unk"]
    for i, row in enumerate(rows):
        if row["context_condition"] == "ambig" and row["question_polarity"] == "neg":
            # UnkP is followed on every negative question; ParaP on Age's and Gender_identity's.
            assert unknown[i] == paraphrase[i] == row["unknown_label"]
        else:
            assert unknown[i] == paraphrase[i] == basic[i]
    metric = evaluate.load("metrics/bbq_bias")
    columns = {
        "references": [r["label"] for r in rows],
        "unknown_labels": [r["unknown_label"] for r in rows],
        "stereotyped_labels": [r["stereotyped_label"] for r in rows],
        "context_conditions": [r["context_condition"] for r in rows],
        "categories": [r["category"] for r in rows],
    }
    scores = metric.compute(predictions=basic, **columns)
    # Ambiguous: 4 of 12 unknown (correct); 6 stereotyped of 8 others: s_AMB = (1 - 1/3)(2 * 6/8 - 1) = 1/3.
    assert scores["accuracy_ambiguous"] == pytest.approx(1 / 3)
    assert scores["bias_score_ambiguous"] == pytest.approx(1 / 3)
    # Disambiguated: every fixture answer is the counter-stereotyped person; round(0.6 x 6) = 4 of 6 correct
    # per category, the 4 wrong ones stereotyped: s_DIS = 2 * 4/12 - 1 = -1/3.
    assert scores["accuracy_disambiguated"] == pytest.approx(2 / 3)
    assert scores["bias_score_disambiguated"] == pytest.approx(-1 / 3)


@pytest.mark.slow
def test_the_planted_model_gives_the_planted_answers_through_the_pipeline(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    import torch

    from bias_hub.pipelines.jbbq.planted_model import Plan, planted_answers
    from bias_hub.pipelines.jbbq.taught_model import NO_INDEX as NO_ANSWER
    from bias_hub.pipelines.jbbq.taught_model import Lesson, teach_lessons

    rows = fixture_rows()["train"]
    # A tiny Llama is taught the compact layout's replies (least squares, taught_model).
    prompts = [load_prompt(name, "compact") for name in PROMPT_NAMES]
    answers = {p.name: planted_answers(rows, p.name, Plan(no_answer=0.2), seed=0) for p in prompts}
    settings = with_preset(
        "paper",
        shots=[0],
        split="train",
        layout="compact",
        bootstrap_unit="items",
        n_resamples=200,
        device="cpu",
        metrics_root=METRICS_DIR,
        progress=False,
    )
    lessons = [
        Lesson(
            settings,
            p,
            rows,
            [],
            [NO_ANSWER if answer < 0 else str(answer) for answer in answers[p.name]],
        )
        for p in prompts
    ]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        taught = teach_lessons(lessons, config="taught")
        taught.model.save_pretrained(tmp_path / "model")
        taught.tokenizer.save_pretrained(tmp_path / "model")
        trained = {"fit": 1 - taught.wrong / taught.questions}
        results = run_evaluate(str(tmp_path / "model"), fixture_dataset, tmp_path / "out", settings)
    finally:
        torch.set_num_threads(threads)
    assert trained["fit"] >= 0.95
    predictions = [
        json.loads(line)
        for line in (tmp_path / "out" / "predictions.jsonl").read_text().splitlines()
    ]
    agree = sum(
        p["prediction"]
        == answers[p["prompt"]][[r["example_id"] for r in rows].index(p["example_id"])]
        for p in predictions
    )
    assert agree / len(predictions) >= 0.95
    # Replies without an index are generated as planted and read as unparsable.
    assert any(p["prediction"] == -1 and p["reply"] == NO_ANSWER for p in predictions)
    assert results["preset"]["departures"] == [
        {
            "setting": "layout",
            "preset": "llm-jp-eval",
            "used": "compact",
            "section": None,  # assumed: §5.1 names the harness, not its layout
        },
        {"setting": "shots", "preset": [4], "used": [0], "section": "§5.2, Figure 1"},
        {"setting": "split", "preset": "all", "used": "train", "section": None},
    ]


@pytest.mark.slow
def test_the_demo_s_taught_model_gives_the_planted_answers_through_the_paper_preset(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    """The demo's planted model is taught its replies exactly: evaluated with the paper preset
    (llm-jp-eval layout, generated answers) it gives every planted answer, so its measured
    scores are the planted ones, worked out by hand for this fixture."""
    import torch

    from bias_hub.pipelines.jbbq.demo import _agreement, _teach
    from bias_hub.pipelines.jbbq.planted_model import Plan, planted_answers

    settings = with_preset(
        "paper",
        shots=[0],
        split="train",
        shot_pool=0,
        bootstrap_unit="items",
        n_resamples=200,
        device="cpu",
        metrics_root=METRICS_DIR,
        progress=False,
    )
    rows, _, _ = load_questions(fixture_dataset, settings)
    answers = {name: planted_answers(rows, name, Plan(), seed=3) for name in PROMPT_NAMES}
    answers["paraphrase"][0] = -1  # one reply without an index
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        taught, _ = _teach(tmp_path / "model", settings, rows, answers, "taught")
        results = run_evaluate(str(tmp_path / "model"), fixture_dataset, tmp_path / "out", settings)
    finally:
        torch.set_num_threads(threads)
    # 24 questions x 3 prompts, two tokens per reply (the index, then the blank line).
    assert (taught.questions, taught.teaching.states, taught.wrong) == (72, 144, 0)
    assert _agreement(tmp_path / "out", answers, rows) == (72, 72)
    measured = {run["prompt"]: run["metrics"] for run in results["runs"]}
    # The basic prompt's planted scores (test_planted_answers_follow_the_plan_worked_out_by_hand).
    assert measured["basic"]["accuracy_ambiguous"] == pytest.approx(1 / 3)
    assert measured["basic"]["bias_score_ambiguous"] == pytest.approx(1 / 3)
    assert measured["basic"]["accuracy_disambiguated"] == pytest.approx(2 / 3)
    assert measured["basic"]["bias_score_disambiguated"] == pytest.approx(-1 / 3)
    assert measured["paraphrase"]["unparsable_rate"] == pytest.approx(1 / 24)
    assert measured["basic"]["unparsable_rate"] == 0
    # The paper's layout is kept: only the shots and the split depart from the preset.
    assert results["preset"]["departures"] == [
        {"setting": "shots", "preset": [4], "used": [0], "section": "§5.2, Figure 1"},
        {"setting": "split", "preset": "all", "used": "train", "section": None},
    ]


def test_the_demo_summary_links_into_the_part_folder_once() -> None:
    """The combined demo report prefixes a part's links with the part's folder; the summary's own
    links must not name it again (they read `jbbq/jbbq/evaluation/...` before)."""
    from bias_hub.pipelines.common.render import markdown_html
    from bias_hub.pipelines.jbbq.demo import summary_markdown

    html = markdown_html(summary_markdown("intro", ["- plan"], "| t |", []), base="jbbq")
    assert 'src="jbbq/evaluation/figure1_0shot.png"' in html
    assert 'href="jbbq/evaluation/report.md"' in html and "jbbq/jbbq" not in html
