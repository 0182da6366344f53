"""Inputs that gave a traceback or were misread in silence, each now one line naming the file, the
line or row and the field: lm-eval samples, Inspect logs, prediction values, encodings, dataset
paths, reproduction ledgers and study files.

The questions are the JBBQ-shaped fixture (``jbbq_fixtures``: 40 questions in two categories);
lm-eval and Inspect files are written as those tools write them."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from jbbq_fixtures import fixture_rows, write_fixture_dataset

from bias_hub.pipelines.cli import main
from bias_hub.pipelines.common.presets import safe_yaml
from bias_hub.pipelines.reproduce.study import StudyError, load_study

DATE = "2025-01-02T03-04-05.678901"
QUESTIONS = fixture_rows()["all"]


@pytest.fixture(scope="module")
def datasets_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("reading_errors") / "datasets"
    write_fixture_dataset(root / "jbbq")
    return root


def _samples(docs: list[dict] = QUESTIONS) -> list[dict]:
    """Multiple-choice samples that choose the gold answer."""
    return [
        {
            "doc_id": number,
            "doc": doc,
            "filtered_resps": [[-1.0 if i == doc["label"] else -3.0, False] for i in range(3)],
        }
        for number, doc in enumerate(docs)
    ]


def _lm_eval(folder: Path, samples: list[dict], task: str = "jbbq_t", results_task=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    named = results_task or task
    sizes = {named: {"original": 40, "effective": 40}}
    (folder / f"results_{DATE}.json").write_text(
        json.dumps({"results": {named: {}}, "n-samples": sizes}), encoding="utf-8"
    )
    path = folder / f"samples_{task}_{DATE}.jsonl"
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples), "utf-8")
    return path


def _inspect(path: Path, samples, total=40) -> Path:
    spec = {"task": "jbbq", "dataset": {"samples": total}}
    path.write_text(json.dumps({"eval": spec, "samples": samples}), encoding="utf-8")
    return path


def _inspect_samples(docs: list[dict] = QUESTIONS, reader: str = "llm-jp-eval") -> list[dict]:
    return [
        {
            "id": d["example_id"],
            "epoch": 1,
            "metadata": {**d, "answer_reader": reader},
            "output": {"completion": str(d["label"])},
        }
        for d in docs
    ]


def _score(capsys, tmp_path: Path, *args: str) -> tuple[int, str]:
    code = main(
        ["score", "bbq_bias", "--confidence-level", "none", *args, "--out", str(tmp_path / "o")]
    )
    err = capsys.readouterr().err.strip()
    if code == 2:
        assert len(err.splitlines()) == 1 and not (tmp_path / "o").exists(), err
    return code, err


# ---- lm-eval samples ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "responses",
    [
        [[None, False]] * 3,
        [["2"]],
        [[-1.0, False], [-2.0]],
        [["minus one", "False"]] * 3,
        [["-1.0", "no"]] * 3,
        "2",
        [],
    ],
)
def test_responses_that_are_no_log_likelihoods_and_no_reply_name_their_line(
    tmp_path: Path, capsys, responses
) -> None:
    samples = _samples()
    samples[2]["filtered_resps"] = responses
    path = _lm_eval(tmp_path / "s", samples)
    code, err = _score(capsys, tmp_path, "--from-lm-eval", str(path))
    assert code == 2 and f"--from-lm-eval {path}, line 3: filtered_resps" in err
    assert "neither one [log-likelihood, is_greedy] per choice" in err


def test_log_likelihoods_written_as_texts_read_as_numbers(tmp_path: Path, capsys) -> None:
    """lm-eval 0.4 writes each choice's pair as texts in its samples file
    (``[["-15.33", "False"], ...]``): they read as the numbers they spell."""
    samples = _samples()
    for sample in samples:
        sample["filtered_resps"] = [[str(s), str(g)] for s, g in sample["filtered_resps"]]
    samples[4]["filtered_resps"][0] = ["0.5", "True"]  # option 0 now the most likely
    path = _lm_eval(tmp_path / "s", samples)
    code, err = _score(capsys, tmp_path, "--from-lm-eval", str(path))
    assert code == 0, err
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    wrong = 0 if QUESTIONS[4]["label"] == 0 else 1
    assert results["result"]["accuracy"] == pytest.approx((40 - wrong) / 40)


def test_tied_log_likelihoods_are_no_answer_and_are_counted(tmp_path: Path, capsys) -> None:
    samples = _samples()
    for number in (2, 5):
        samples[number]["filtered_resps"] = [[-1.0, False]] * 3  # every choice alike
    path = _lm_eval(tmp_path / "s", samples)
    # lenient counts a -1 wrong (bbq, the default for texts, would leave it out)
    code, err = _score(capsys, tmp_path, "--from-lm-eval", str(path), "--answer-reader", "lenient")
    assert code == 0, err
    assert (
        "2 samples give two or more choices the same highest log-likelihood (samples 3, 6)" in err
    )
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert results["predictions"]["tied_log_likelihoods"] == 2
    rows = [json.loads(x) for x in (tmp_path / "o" / "predictions.jsonl").read_text().splitlines()]
    assert [n for n, row in enumerate(rows, 1) if row["prediction_index"] == -1] == [3, 6]
    # 38 questions answered right, 2 not answered (main read both as option 0): 38/40.
    assert results["result"]["accuracy"] == pytest.approx(38 / 40)


def test_a_sample_that_scores_part_of_the_choices_is_refused(tmp_path: Path, capsys) -> None:
    samples = _samples()
    samples[6]["filtered_resps"] = [[-1.0, False], [-2.0, False]]
    path = _lm_eval(tmp_path / "s", samples)
    code, err = _score(capsys, tmp_path, "--from-lm-eval", str(path))
    assert code == 2 and "row 7, column 'prediction': lm-eval scored 2 choices" in err
    assert "the question has 3" in err


def test_two_filters_are_named_as_such(tmp_path: Path, capsys) -> None:
    strict, flexible = _samples(), _samples()
    for sample in strict:
        sample["filter"] = "strict-match"
    for sample in flexible:
        sample["filter"] = "flexible-extract"
    path = _lm_eval(tmp_path / "s", strict + flexible)
    code, err = _score(capsys, tmp_path, "--from-lm-eval", str(path))
    assert (
        code == 2 and "lines 1 and 41 log the filters 'strict-match' and 'flexible-extract'" in err
    )
    assert "appears twice" not in err


def test_a_results_file_of_another_task_is_named_as_such(tmp_path: Path, capsys) -> None:
    path = _lm_eval(tmp_path / "s", _samples(), results_task="bbq_other")
    code, err = _score(capsys, tmp_path, "--from-lm-eval", str(path))
    assert code == 2 and f"results_{DATE}.json) are of task bbq_other, not jbbq_t" in err
    assert "no lm-eval results file" not in err


# ---- Inspect logs -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("samples", "said"),
    [
        ({"a": 1}, "'samples' is a mapping of 1; expected a list of sample objects"),
        (["x", "y"], 'sample 1 is a str "x"; expected a sample object'),
        ([None], "sample 1 is a NoneType null"),
    ],
)
def test_inspect_samples_that_are_no_sample_objects_are_named(
    tmp_path: Path, capsys, samples, said: str
) -> None:
    path = _inspect(tmp_path / "log.json", samples)
    code, err = _score(capsys, tmp_path, "--from-inspect", str(path))
    assert code == 2 and f"--from-inspect {path}: {said}" in err


def test_epochs_of_an_inspect_log_are_named_as_epochs(tmp_path: Path, capsys) -> None:
    second = copy.deepcopy(_inspect_samples())
    for sample in second:
        sample["epoch"] = 2
    path = _inspect(tmp_path / "log.json", _inspect_samples() + second)
    code, err = _score(capsys, tmp_path, "--from-inspect", str(path))
    assert code == 2 and "answered 2 times (epochs 1, 2)" in err and "--epochs 1" in err
    assert "appears twice" not in err


@pytest.mark.parametrize("total", [0, -5, 10])
def test_an_inspect_header_count_below_the_samples_it_holds_is_refused(
    tmp_path: Path, capsys, total: int
) -> None:
    path = _inspect(tmp_path / "log.json", _inspect_samples(), total)
    code, err = _score(capsys, tmp_path, "--from-inspect", str(path))
    assert code == 2
    assert f"its header gives the task's dataset {total} samples (eval.dataset.samples)" in err
    assert "the log answers 40 distinct samples" in err


@pytest.mark.parametrize("recorded", [["strict"], ["lenient", "llm-jp-eval"]])
def test_an_answer_reader_the_rows_record_must_be_one_known_reader(
    tmp_path: Path, capsys, recorded: list[str]
) -> None:
    samples = _inspect_samples()
    for number, sample in enumerate(samples):
        sample["metadata"]["answer_reader"] = recorded[number % len(recorded)]
    path = _inspect(tmp_path / "log.json", samples)
    code, err = _score(capsys, tmp_path, "--from-inspect", str(path))
    assert code == 2 and "its rows record the answer reader" in err
    assert "--answer-reader" in err and "bbq reader" not in err


# ---- prediction values --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (float("nan"), "NaN"),
        (float("inf"), "Infinity"),
        (1.5, "1.5"),
        (None, "null"),
        (True, "true"),
        ("2.5", "2.5"),
        ("1" * 10_000, "a number of 10,000 digits"),
    ],
)
def test_a_prediction_that_is_no_whole_number_is_refused_with_its_row(
    datasets_root: Path, tmp_path: Path, capsys, value, shown: str
) -> None:
    rows = [
        {"example_id": q["example_id"], "category": q["category"], "prediction": q["label"]}
        for q in QUESTIONS
    ]
    rows[4]["prediction"] = value
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    code, err = _score(
        capsys,
        tmp_path,
        "--predictions",
        str(path),
        "--datasets-root",
        str(datasets_root),
        "--answer-reader",
        "bbq",
    )
    assert code == 2
    assert f"--predictions {path}, row 5, column 'prediction': {shown} is no answer index" in err


def test_a_signed_index_is_the_index(datasets_root: Path, tmp_path: Path, capsys) -> None:
    path = tmp_path / "predictions.csv"
    lines = [f"{q['example_id']},{q['category']},+{q['label']}" for q in QUESTIONS]
    path.write_text("example_id,category,prediction\n" + "\n".join(lines) + "\n", "utf-8")
    code, err = _score(
        capsys, tmp_path, "--predictions", str(path), "--datasets-root", str(datasets_root)
    )
    assert code == 0, err
    results = json.loads((tmp_path / "o" / "results.json").read_text(encoding="utf-8"))
    assert results["result"]["accuracy"] == 1.0


@pytest.mark.parametrize(
    ("encoding", "said"),
    [
        ("utf-16", "its byte order mark says UTF-16"),
        ("utf-16-le", "a NUL byte says UTF-16 or UTF-32"),
        ("utf-32", "its byte order mark says UTF-32"),
    ],
)
def test_a_utf_16_file_is_named_as_utf_16_not_shift_jis(
    datasets_root: Path, tmp_path: Path, capsys, encoding: str, said: str
) -> None:
    path = tmp_path / "predictions.csv"
    lines = [f"{q['example_id']},{q['category']},{q['label']}" for q in QUESTIONS]
    path.write_text("example_id,category,prediction\n" + "\n".join(lines), encoding=encoding)
    code, err = _score(
        capsys, tmp_path, "--predictions", str(path), "--datasets-root", str(datasets_root)
    )
    assert code == 2 and said in err and "Shift-JIS" not in err


# ---- dataset paths, ledgers, study files --------------------------------------------------


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("/nonexistent/jbbq_copy", "--jbbq /nonexistent/jbbq_copy: no such folder"),
        ("not_a_dataset", "bias-hub builds no dataset named 'not_a_dataset'"),
    ],
)
def test_export_names_the_folder_it_cannot_find_not_a_build_of_it(
    tmp_path: Path, capsys, given: str, said: str
) -> None:
    code = main(
        [
            "export",
            "lm-eval",
            "--jbbq",
            given,
            "--datasets-root",
            str(tmp_path / "none"),
            "--out",
            str(tmp_path / "tasks"),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and said in err and len(err.splitlines()) == 1
    assert f"bias-hub build {Path(given).name}" not in err


@pytest.mark.parametrize("ledger", ["[]", '"steps"', '{"count": 3}', "[" * 100_000, "{"])
def test_a_reproduction_ledger_that_is_none_is_refused_naming_it(
    tmp_path: Path, capsys, ledger: str
) -> None:
    out = tmp_path / "repro"
    out.mkdir()
    (out / "steps.json").write_text(ledger, encoding="utf-8")
    code = main(["reproduce", "jbbq", "--variant", "offline", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and f"{out / 'steps.json'}: not a reproduction ledger" in err, err


def test_a_study_file_with_a_key_twice_is_refused_naming_both_lines(tmp_path: Path) -> None:
    study = tmp_path / "twice.yaml"
    study.write_text(
        'study: twice\nversion: "1"\ntitle: t\nstudy: other\nsteps: []\n', encoding="utf-8"
    )
    with pytest.raises(
        StudyError,
        match=r"line 4: the key 'study' is given twice in one mapping \(first on line 1\)",
    ):
        load_study(str(study))
    with pytest.raises(ValueError, match=r"line 3: the key 'a' is given twice"):
        safe_yaml("x:\n  a: 1\n  a: 2\n", "--set x")


@pytest.mark.parametrize("style", ["flow", "block"])
def test_a_study_file_nested_deep_is_one_line(tmp_path: Path, style: str) -> None:
    study = tmp_path / "deep.yaml"
    if style == "flow":
        body = "steps: " + "[" * 100_000 + "]" * 100_000 + "\n"
    else:
        body = "steps:\n" + "".join("  " * i + "- \n" for i in range(1, 2_000))
    study.write_text('study: deep\nversion: "1"\n' + body, encoding="utf-8")
    with pytest.raises(StudyError, match=r"nested more than 100 levels deep") as raised:
        load_study(str(study))
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize("command", [["jbbq", "evaluate", "--model", "m"], ["export", "lm-eval"]])
def test_a_reply_length_past_any_answer_is_refused(tmp_path: Path, capsys, command) -> None:
    code = main([*command, "--max-new-tokens", "99999999999", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and "--max-new-tokens: expected an integer from 1 to 32,768" in err
    assert "99999999999" in err and not (tmp_path / "o").exists()
