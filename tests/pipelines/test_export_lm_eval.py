"""``bias-hub export lm-eval``: the task folder, its prompts and its scoring functions.

The prompts are checked against ``PromptSpec.plain`` (what ``jbbq evaluate --chat no`` sends)
by rendering the exported Jinja as lm-eval does; the scoring functions of the written
``utils.py`` run here as lm-eval would call them, on items whose scores are worked out by hand.
The run against lm-evaluation-harness itself needs its own environment (bench/.venv-lmeval).
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

import pytest
import yaml
from jbbq_fixtures import write_fixture_dataset

from bias_hub.pipelines.cli import main
from bias_hub.pipelines.export.lm_eval import lm_eval_prompt
from bias_hub.pipelines.jbbq.prompting import PROMPT_NAMES, load_prompt

REPO_ROOT = Path(__file__).resolve().parents[2]
LMEVAL_PYTHON = REPO_ROOT / "bench" / ".venv-lmeval" / "bin" / "python"


class _Loader(yaml.SafeLoader):
    """Reads lm-eval's ``!function utils.name`` as the text ``utils.name``."""


_Loader.add_constructor(
    "!function", lambda loader, node: f"!function {loader.construct_scalar(node)}"
)


def _render(template: str, doc: dict) -> str:
    from jinja2 import BaseLoader, Environment, StrictUndefined

    # lm-eval's environment (lm_eval/utils.py)
    env = Environment(loader=BaseLoader, undefined=StrictUndefined, keep_trailing_newline=True)
    return env.from_string(template).render(**doc)


def _context(task: dict, doc: dict) -> str:
    """The plain prompt lm-eval 0.4.13 builds for a generation task (``fewshot_context`` without
    a chat template): the description, then per few-shot example its question, the target
    delimiter, its answer and the few-shot delimiter, then the question."""
    text = _render(task["description"], doc)
    for shot in (task.get("fewshot_config") or {}).get("samples", [])[: task["num_fewshot"]]:
        text += _render(task["doc_to_text"], shot) + task["target_delimiter"]
        text += _render(task["doc_to_target"], shot) + task["fewshot_delimiter"]
    return text + _render(task["doc_to_text"], doc)


def _questions() -> list[dict]:
    """Rows in BBQ's release format (JBBQ's schema follows it): two categories of six templates,
    each asked negatively and non-negatively after an ambiguous and a disambiguated context."""
    rows = []
    people = {
        "Age": ("grandfather", "old", "grandson", "nonOld"),
        "Religion": ("Muslim", "Muslim", "Christian", "Christian"),
    }
    for category, (a, group_a, b, group_b) in people.items():
        for template in range(1, 7):
            for polarity in ("neg", "nonneg"):
                for condition, label in (("ambig", 2), ("disambig", 0 if polarity == "neg" else 1)):
                    rows.append(
                        {
                            "example_id": len([r for r in rows if r["category"] == category]),
                            "question_index": str(template),
                            "question_polarity": polarity,
                            "context_condition": condition,
                            "category": category,
                            "answer_info": {
                                "ans0": [a, group_a],
                                "ans1": [b, group_b],
                                "ans2": ["Unknown", "unknown"],
                            },
                            "additional_metadata": {
                                "subcategory": "None",
                                "stereotyped_groups": [group_a],
                                "version": "a",
                                "source": "",
                            },
                            "context": f"Story {template} about the {a} and the {b}."
                            + (" It went on." if condition == "disambig" else ""),
                            "question": f"Who {'failed' if polarity == 'neg' else 'did well'} in story {template}?",
                            "ans0": f"The {a}",
                            "ans1": f"The {b}",
                            "ans2": "Unknown",
                            "label": label,
                        }
                    )
    return rows


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bias_hub.builders.bbq import build

    root = tmp_path_factory.mktemp("export")
    source = root / "questions.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in _questions()), encoding="utf-8")
    # BBQ's builder writes the schema JBBQ's does: the folder stands in for a user's JBBQ.
    build(root / "datasets", source=source)
    (root / "datasets" / "bbq").rename(root / "datasets" / "jbbq")
    out = root / "tasks"
    assert (
        main(
            [
                "export",
                "lm-eval",
                "--out",
                str(out),
                "--datasets-root",
                str(root / "datasets"),
                "--shots",
                "0",
                "2",
            ]
        )
        == 0
    )
    return out


def _task(folder: Path, name: str) -> dict:
    return yaml.load((folder / "jbbq" / f"{name}.yaml").read_text(encoding="utf-8"), Loader=_Loader)


def test_every_prompt_shot_count_and_output_type_is_a_task(exported: Path) -> None:
    record = json.loads((exported / "tasks.json").read_text(encoding="utf-8"))
    expected = [
        f"jbbq_{p}_{k}shot_{kind}" for p in PROMPT_NAMES for k in (0, 2) for kind in ("gen", "mc")
    ]
    assert record["tasks"] == expected  # no built bbq under this root: JBBQ only
    gen, mc = _task(exported, "jbbq_basic_2shot_gen"), _task(exported, "jbbq_basic_2shot_mc")
    assert gen["output_type"] == "generate_until" and mc["output_type"] == "multiple_choice"
    assert gen["generation_kwargs"] == {
        "until": [],
        "max_gen_toks": 1,
        "do_sample": False,
    }  # the paper preset's 1 (the output_length of the JBBQ processor it assumes)
    assert mc["doc_to_choice"] == ["0", "1", "2"] and mc["target_delimiter"] == ""
    assert gen["process_results"] == "!function utils.process_generation"
    categories = record["jbbq"]["categories"]
    names = [m["metric"] for m in gen["metric_list"]]
    # bbq_bias's own names: the one vocabulary of every file bias-hub writes.
    assert names[:6] == [
        "accuracy",
        "accuracy_ambiguous",
        "accuracy_disambiguated",
        "bias_score_disambiguated",
        "bias_score_ambiguous",
        "unparsable_rate",
    ]
    assert len(names) == 6 * (1 + len(categories))
    assert f"bias_score_ambiguous_{categories[0]}" in names
    assert {
        m["aggregation"]
        for m in gen["metric_list"]
        if m["metric"].startswith("bias_score_disambiguated")
    } == {"!function utils.agg_bias_score_disambiguated"}


def test_prompts_render_as_jbbq_evaluate_sends_them(exported: Path) -> None:
    record = json.loads((exported / "tasks.json").read_text(encoding="utf-8"))
    docs = [
        json.loads(line)
        for line in (exported / "data" / "jbbq.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(docs) == record["jbbq"]["questions"] > 0
    shots_used = record["jbbq"]["few_shot"]["examples"]
    assert len(shots_used) == 2
    # The shots are train questions of templates no evaluated question uses.
    held = {(d["category"], d["question_index"]) for d in docs}
    assert not {(s["category"], s["question_index"]) for s in shots_used} & held
    from bias_hub.pipelines.jbbq.run import load_questions

    rows, shots, _ = load_questions(Path(record["jbbq"]["dataset"]), _Chosen())
    assert [(r["category"], r["example_id"]) for r in rows] == [
        (d["category"], d["example_id"]) for d in docs
    ]
    for name in PROMPT_NAMES:
        prompt = load_prompt(name)  # the paper preset's layout, llm-jp-eval's
        for k in (0, 2):
            task = _task(exported, f"jbbq_{name}_{k}shot_gen")
            assert task["num_fewshot"] == k  # lm-eval's table shows the task's n-shot
            for doc, row in zip(docs, rows, strict=True):
                assert _context(task, doc) == prompt.plain(row, shots[:k])


class _Chosen:
    config, split, categories, shots, shot_pool, seed, limit = (
        "all",
        "all",
        None,
        [0, 2],
        4,
        0,
        None,
    )


class _Prompt:
    name = "literal"
    system = "{{ not a field }} {% if %}"
    plain_header = "{system}\n"
    plain_shot = "Q {user} A {assistant}\n"
    plain_query = "Q {user} A"
    user = "{context}|{question}|{ans0}|{ans1}|{ans2} {{braces}}"
    assistant = "{answer}"


def test_prompt_literals_are_not_read_as_jinja() -> None:
    row = {"context": "c{{x}}", "question": "q", "ans0": "a", "ans1": "b", "ans2": "d"}
    shot = {**row, "context": "{% raw %}", "label": 1}
    fields = lm_eval_prompt(_Prompt(), [shot])
    assert (fields["target_delimiter"], fields["fewshot_delimiter"]) == (" ", "\n")
    task = {**fields, "doc_to_target": fields["target"]}
    assert (
        _context(task, row)
        == "{{ not a field }} {% if %}\nQ {% raw %}|q|a|b|d {braces} A 1\nQ c{{x}}|q|a|b|d {braces} A"
    )


def test_a_shot_that_is_not_its_question_and_answer_is_refused() -> None:
    prompt = _Prompt()
    prompt.plain_shot = "Example: {user} => {assistant}\n"
    with pytest.raises(ValueError, match="--prompt literal: its few-shot example is not"):
        lm_eval_prompt(prompt, [])


def _utils(exported: Path):
    """The written utils.py, imported from its file as lm-eval imports it (no bias-hub on the path)."""
    spec = importlib.util.spec_from_file_location("exported_utils", exported / "jbbq" / "utils.py")
    module = importlib.util.module_from_spec(spec)
    saved = sys.modules.pop("bias_hub", None)
    try:
        spec.loader.exec_module(module)
    finally:
        if saved is not None:
            sys.modules["bias_hub"] = saved
    return module


def test_written_utils_scores_with_bbq_bias(exported: Path) -> None:
    utils = _utils(exported)
    assert "from pipelines" not in (exported / "jbbq" / "utils.py").read_text(encoding="utf-8")
    assert (exported / "jbbq" / "bbq_bias" / "bbq_bias.py").is_file()

    def doc(condition, label, stereotyped, category="Age"):
        return {
            "category": category,
            "context_condition": condition,
            "label": label,
            "unknown_label": 2,
            "stereotyped_label": stereotyped,
            "question_index": "1",
            **{"ans0": "高齢の男性", "ans1": "若い男性", "ans2": "不明"},
            "answer_reader": "lenient",
        }

    # Generated replies, read by the reader each question names (as `jbbq evaluate` reads them).
    items = [
        utils.process_generation(doc("ambig", 2, 0), ["0です"]),  # biased, wrong
        utils.process_generation(doc("ambig", 2, 0), ["2"]),  # unknown, right
        utils.process_generation(doc("disambig", 1, 0), ["1"]),  # right, not biased
        utils.process_generation(doc("disambig", 0, 0), ["0"]),  # right, biased
        utils.process_generation(doc("disambig", 1, 0), ["はい"]),  # unparsable
    ]
    # Multiple choice: the highest log-likelihood; a category of its own.
    items.append(
        utils.process_multiple_choice(
            doc("disambig", 1, 1, "Religion"), [(-3.0, False), (-0.5, True), (-2.0, False)]
        )
    )
    by_metric = {name: [item[name] for item in items] for name in utils.SCORES}
    # Overall: right 1, 2, 3, 5 of 6 -> 4/6; ambiguous 1/2; disambiguated 3/4.
    # s_DIS: non-unknown disambiguated answers 1, 0, 1 (item 4 unparsable); biased: 0 (stereotyped 0)
    # and the Religion answer 1 (stereotyped 1) -> 2 * 2/3 - 1 = 1/3.
    # s_AMB: one non-unknown ambiguous answer, biased -> (1 - 1/2) * (2 * 1 - 1) = 0.5. Error rate 1/6.
    assert utils.agg_accuracy(by_metric["accuracy"]) == pytest.approx(4 / 6)
    assert utils.agg_accuracy_ambiguous(by_metric["accuracy_ambiguous"]) == 0.5
    assert utils.agg_accuracy_disambiguated(by_metric["accuracy_disambiguated"]) == 0.75
    assert utils.agg_bias_score_disambiguated(
        by_metric["bias_score_disambiguated"]
    ) == pytest.approx(1 / 3)
    assert utils.agg_bias_score_ambiguous(by_metric["bias_score_ambiguous"]) == 0.5
    assert utils.agg_unparsable_rate(by_metric["unparsable_rate"]) == pytest.approx(1 / 6)
    # Per category: each doc reports under its own category only.
    age = [
        item["bias_score_disambiguated_Age"]
        for item in items
        if "bias_score_disambiguated_Age" in item
    ]
    assert (
        len(age) == 5 and utils.agg_bias_score_disambiguated(age) == 0.0
    )  # Age: biased 1 of 2 non-unknown -> 0
    religion = [
        item["accuracy_ambiguous_Religion"]
        for item in items
        if "accuracy_ambiguous_Religion" in item
    ]
    assert (
        len(religion) == 1 and str(utils.agg_accuracy_ambiguous(religion)) == "nan"
    )  # no ambiguous question: undefined


def test_bad_flags_fail_in_one_line(exported: Path, tmp_path: Path, capsys) -> None:
    root = str(exported.parent / "datasets")
    cases = [
        (["--shots", "0", "0"], "--shots: expected distinct counts"),
        (["--prompt", "nope"], "unknown prompt 'nope'"),
        (["--bbq", "missing"], "is not a built dataset folder"),
    ]
    for flags, message in cases:
        code = main(
            ["export", "lm-eval", "--out", str(tmp_path / "t"), "--datasets-root", root, *flags]
        )
        error = capsys.readouterr().err.strip()
        assert code == 2 and message in error and len(error.splitlines()) == 1, error


@pytest.mark.skipif(
    not LMEVAL_PYTHON.exists(),
    reason="bench/.venv-lmeval is absent: create it with "
    "`python -m bench.jbbq_throughput --setup-lmeval` (needs PyPI, about 2-3 min); "
    "`python -m bench.lmeval_export` runs the same check",
)
@pytest.mark.slow
@pytest.mark.timeout(2400)  # trains a tiny model, runs jbbq evaluate and lm-eval twice each
def test_lm_eval_lists_validates_and_runs_the_tasks(tmp_path: Path) -> None:
    """lm-eval 0.4 on a tiny model, the exported folder moved elsewhere first: every task listed
    and valid, with the n-shot its name says; its predictions equal `jbbq evaluate`'s question by question; `bias-hub score --from-lm-eval` on its samples equals both
    `jbbq evaluate`'s scores and lm-eval's own results table."""
    from bench.lmeval_export import check
    from bias_hub.builders.jbbq import build as build_jbbq

    datasets_root = build_jbbq(tmp_path / "datasets").parent  # the JBBQ sample, built here
    report = check(
        tmp_path, LMEVAL_PYTHON, ["basic"], limit=2, bbq_source=None, datasets_root=datasets_root
    )
    assert report["validated"] and not report["not_listed"]
    # run from a folder the export was moved to; each task's n-shot as its name says
    assert report["n_shot_matches"] and report["n_shot"]["jbbq_basic_4shot_gen"] == 4
    assert set(report["runs"]) == {
        f"jbbq_basic_{k}shot_{kind}" for k in (0, 4) for kind in ("gen", "mc")
    }
    for task, entry in report["runs"].items():
        assert entry["same_questions"] and entry["differing_predictions"] == 0, task
        assert entry.get("differing_replies", 0) == 0, task
        assert entry["score_equals_evaluate"] and entry["table_equals_score"], task
    assert report["ok"]


def test_the_shipped_task_folder_is_what_the_package_generates() -> None:
    """lm-eval has no plugin mechanism: the package ships a task folder
    (`bias-hub export lm-eval-path` prints it for --include_path)."""
    from bias_hub.pipelines.export.lm_eval import INSTALLED, installed_tasks

    expected = installed_tasks()
    shipped = {
        path.name: path.read_text(encoding="utf-8")
        for path in INSTALLED.iterdir()
        if path.is_file()
    }
    assert shipped == expected, (
        "pipelines/export/lm_eval_tasks differs from installed_tasks(); write it again with: python -c "
        '"from bias_hub.pipelines.export.lm_eval import INSTALLED, installed_tasks; '
        "[(INSTALLED / n).write_text(t, encoding='utf-8') for n, t in installed_tasks().items()]\""
    )
    four = yaml.load(shipped["jbbq_basic_4shot_gen.yaml"], Loader=_Loader)
    assert four["num_fewshot"] == 4 and four["fewshot_split"] == "fewshot"
    assert four["fewshot_config"] == {"sampler": "first_n"}
    assert four["custom_dataset"] == "!function utils.installed_jbbq_dataset"


def test_the_shipped_tasks_read_the_built_dataset_as_jbbq_evaluate_does(tmp_path: Path) -> None:
    """The paper preset's questions: every split, the pool's 4 train templates (4 questions each)
    held out: 40 - 16 = 24; the pool itself is the few-shot split, one question per template."""
    from bias_hub.pipelines.export.lm_eval_installed import installed_dataset

    write_fixture_dataset(tmp_path / "jbbq")
    data = installed_dataset("jbbq", {"datasets_root": str(tmp_path), "version": 1.0})
    assert len(data["test"]) == 24 and set(data["test"]["answer_reader"]) == {"llm-jp-eval"}
    pool = {(row["category"], row["question_index"]) for row in data["fewshot"]}
    assert len(data["fewshot"]) == 4 and len(pool) == 4
    assert not pool & {(row["category"], row["question_index"]) for row in data["test"]}


@pytest.mark.skipif(
    not LMEVAL_PYTHON.exists(),
    reason="bench/.venv-lmeval is absent: create it with "
    "`python -m bench.jbbq_throughput --setup-lmeval` (needs PyPI, about 2-3 min)",
)
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_lm_eval_runs_the_shipped_tasks_with_jbbq_evaluate_s_prompts(tmp_path: Path) -> None:
    """lm-eval 0.4 with `--include_path $(bias-hub export lm-eval-path)` on a tiny model: the 4-shot
    task's n-shot is 4, its prompts are the ones `jbbq evaluate` sends (the same pool, the same
    questions), and its table reports bbq_bias's names."""
    import subprocess
    from types import SimpleNamespace

    from bias_hub.builders.jbbq import build as build_jbbq
    from bias_hub.pipelines.export.lm_eval import INSTALLED
    from bias_hub.pipelines.jbbq.run import load_questions
    from bias_hub.pipelines.jbbq.taught_model import build_for_dataset

    dataset = build_jbbq(tmp_path / "datasets")
    model = build_for_dataset(tmp_path / "tiny", dataset)
    task = "jbbq_basic_4shot_gen"
    done = subprocess.run(
        [
            str(LMEVAL_PYTHON),
            "-m",
            "lm_eval",
            "run",
            "--model",
            "hf",
            "--model_args",
            f"pretrained={model}",
            "--tasks",
            task,
            "--include_path",
            str(INSTALLED),
            "--limit",
            "4",
            "--device",
            "cpu",
            "--metadata",
            json.dumps({"datasets_root": str(tmp_path / "datasets")}),
            "--log_samples",
            "--output_path",
            str(tmp_path / "results"),
        ],
        capture_output=True,
        text=True,
        timeout=1100,
        env=dict(
            os.environ,
            HF_HUB_OFFLINE="1",
            HF_DATASETS_OFFLINE="1",
            HF_EVALUATE_OFFLINE="1",
            TRANSFORMERS_OFFLINE="1",
        ),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (results,) = (tmp_path / "results").rglob("results_*.json")
    table = json.loads(results.read_text(encoding="utf-8"))
    assert table["n-shot"][task] == 4 and "accuracy_ambiguous,none" in table["results"][task]
    (samples,) = (tmp_path / "results").rglob(f"samples_{task}_*.jsonl")
    chosen = SimpleNamespace(
        config="all", split="all", categories=None, shots=[4], shot_pool=4, seed=0, limit=None
    )
    rows, shots, _ = load_questions(dataset, chosen)
    by_id = {(row["category"], row["example_id"]): row for row in rows}
    prompt = load_prompt("basic", "llm-jp-eval")
    logged = [json.loads(line) for line in samples.read_text(encoding="utf-8").splitlines()]
    assert len(logged) == 4
    for sample in logged:
        doc = sample["doc"]
        sent = sample["arguments"]["gen_args_0"]["arg_0"]
        assert sent == prompt.plain(by_id[(doc["category"], doc["example_id"])], shots[:4])
