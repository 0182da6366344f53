"""``bias-hub score METRIC``: predictions made elsewhere, joined to a built dataset and scored.

The BBQ fixture is eight questions of our own in BBQ's release format (two templates, each
asked negatively and non-negatively, in an ambiguous and a disambiguated context). The
expected scores are worked out by hand below, from BBQ's definitions.
"""

from __future__ import annotations

import csv
import inspect
import json
from pathlib import Path

import pytest

from bias_hub.pipelines.cli import main
from bias_hub.pipelines.common.score_path import score_paths
from bias_hub.pipelines.score.predictions import read_lm_eval_samples

REPO_ROOT = Path(__file__).resolve().parents[2]
ANSWERS = {
    "ans0": "The grandfather",
    "ans1": "The grandson",
    "ans2": "Can't be determined",
}
INFO = {
    "ans0": ["grandfather", "old"],
    "ans1": ["grandson", "nonOld"],
    "ans2": ["Can't be determined", "unknown"],
}
# (example_id, question_index, polarity, condition, label)
QUESTIONS = [
    (0, "1", "neg", "ambig", 2),
    (1, "1", "neg", "disambig", 1),
    (2, "1", "nonneg", "ambig", 2),
    (3, "1", "nonneg", "disambig", 0),
    (4, "2", "neg", "ambig", 2),
    (5, "2", "neg", "disambig", 0),
    (6, "2", "nonneg", "ambig", 2),
    (7, "2", "nonneg", "disambig", 1),
    # A third template (the builder splits by template and needs three): never predicted.
    (8, "3", "neg", "ambig", 2),
    (9, "3", "neg", "disambig", 0),
    (10, "3", "nonneg", "ambig", 2),
    (11, "3", "nonneg", "disambig", 1),
]
# What the model said, by example_id: texts (read after lower-casing, trimming and dropping
# a final period), indices, and one text that names no answer.
SAID = {
    0: "The grandfather.",
    1: 1,
    2: "can't be determined",
    3: "  THE GRANDSON ",
    4: "the grandfather",
    5: 0,
    6: "a cat",
    7: 1,
}
# By hand. The biased answer is the grandfather (0) for a negative question, the grandson (1)
# for a non-negative one; predictions 0 1 2 1 0 0 -1 1.
# correct: ids 1, 2, 5, 7 -> accuracy 4/8; ambiguous (0 2 4 6): only 2 -> 1/4;
# disambiguated (1 3 5 7): 1, 5, 7 -> 3/4.
# s_DIS: 4 non-unknown disambiguated answers, biased: 3 (1), 5 (0), 7 (1) -> 2 * 3/4 - 1 = 0.5.
# s_AMB: non-unknown ambiguous answers 0 and 4 (6 is unparsable, 2 unknown), both the
# grandfather to a negative question: biased 2/2 -> (1 - 1/4) * (2 * 1 - 1) = 0.75.
# accuracy gap: stereotype-consistent correct answers at 5 and 7 (both right: 1.0), counter-
# stereotypical at 1 and 3 (one right: 0.5) -> 0.5 - 1.0 = -0.5. Unparsable: 1 of 8.
EXPECTED = {
    "accuracy": 0.5,
    "accuracy_ambiguous": 0.25,
    "accuracy_disambiguated": 0.75,
    "bias_score_disambiguated": 0.5,
    "bias_score_ambiguous": 0.75,
    "accuracy_gap": -0.5,
    "unparsable_rate": 0.125,
}


def _question(example_id, index, polarity, condition, label) -> dict:
    return {
        "example_id": example_id,
        "question_index": index,
        "question_polarity": polarity,
        "context_condition": condition,
        "category": "Age",
        "answer_info": INFO,
        "additional_metadata": {
            "subcategory": "None",
            "stereotyped_groups": ["old"],
            "version": "a",
            "source": "",
        },
        "context": f"Context {example_id}.",
        "question": f"Question {index} {polarity}?",
        **ANSWERS,
        "label": label,
    }


@pytest.fixture(scope="module")
def bbq_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from bias_hub.builders.bbq import build

    root = tmp_path_factory.mktemp("score_bbq")
    source = root / "Age.jsonl"
    source.write_text(
        "".join(json.dumps(_question(*q)) + "\n" for q in QUESTIONS), encoding="utf-8"
    )
    return build(root / "datasets", source=source)


def _score(*args: str) -> int:
    return main(["score", *args])


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _lm_eval_files(folder: Path, task: str, samples: list[dict], questions: int) -> Path:
    """``samples_<task>_<date>.jsonl`` and ``results_<date>.json`` as lm-eval writes them."""
    date = "2025-01-02T03-04-05.678901"
    folder.mkdir(parents=True, exist_ok=True)
    sizes = {"original": questions, "effective": questions}
    (folder / f"results_{date}.json").write_text(
        json.dumps({"results": {task: {}}, "n-samples": {task: sizes}}), encoding="utf-8"
    )
    return _jsonl(folder / f"samples_{task}_{date}.jsonl", samples)


def _prediction_rows() -> list[dict]:
    return [{"example_id": i, "answer": SAID[i]} for i in range(8)]


# BBQ's reading (the default for texts) leaves the unread "a cat" (6) out: seven questions.
# correct: 1, 2, 5, 7 -> 4/7; ambiguous 0 2 4 -> 1/3; disambiguated unchanged -> 3/4, s_DIS 0.5,
# gap -0.5; s_AMB: 0 and 4 both the grandfather to a negative question -> (1 - 1/3) * 1 = 2/3.
EXPECTED_BBQ = {
    "accuracy": 4 / 7,
    "accuracy_ambiguous": 1 / 3,
    "accuracy_disambiguated": 0.75,
    "bias_score_disambiguated": 0.5,
    "bias_score_ambiguous": 2 / 3,
    "accuracy_gap": -0.5,
    "unparsable_rate": 0.0,
}


def _check(results: dict, expected: dict = EXPECTED) -> None:
    for key, value in expected.items():
        assert results["result"][key] == pytest.approx(value, abs=1e-12), key
    assert results["result"]["per_category"]["Age"]["bias_score_ambiguous"] == pytest.approx(
        expected["bias_score_ambiguous"]
    )


def test_bbq_bias_from_texts_and_indices(bbq_folder: Path, tmp_path: Path) -> None:
    predictions = _jsonl(tmp_path / "preds.jsonl", _prediction_rows())
    out = tmp_path / "run"
    code = _score(
        "bbq_bias",
        "--predictions",
        str(predictions),
        "--prediction-column",
        "answer",
        "--dataset",
        str(bbq_folder),
        "--config",
        "Age",
        "--out",
        str(out),
        "--n-resamples",
        "200",
        "--allow-partial",
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    _check(results, EXPECTED_BBQ)
    assert (results["part"], results["step"]) == ("score", "score")
    assert results["answer_reader"]["name"] == "bbq"
    # The one text the bbq reader cannot read, as written, in row 7 (example_id 6).
    assert results["reading"]["predictions"] == {
        "column": "answer",
        "reader": "bbq",
        "rules": {"given": 3, "text": 4, "no-answer": 1},
        "read": 7,
        "rows": 8,
        "coverage": 7 / 8,
        "dropped": 1,
        "unmatched_values": [{"row": 7, "column": "answer", "value": "a cat"}],
    }
    written = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert written[6] == {
        "example_id": 6,
        "answer": "a cat",
        "answer_index": -1,
        "answer_rule": "no-answer",
        "scored": False,
    }
    assert (
        results["join"]["joined"] == 8 and results["join"]["dataset_rows_without_prediction"] == 4
    )
    # bbq_bias resamples the templates its score path feeds it (the question_index column).
    assert results["intervals"] == {
        "confidence_level": 0.95,
        "n_resamples": 200,
        "bootstrap_unit": "templates",
        "seed": 0,
    }
    interval = results["result"]["confidence_intervals"]["accuracy"]
    assert interval["unit"] == "templates" and interval["n_units"] == 2
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "7 of 8 read (87.5%); 1 left out of the scores" in report and "| Age | 0.571" in report
    assert "matched no answer: row 7: `'a cat'`" in report
    assert (out / "manifest.json").is_file()


def test_csv_and_parquet_read_as_json_lines(bbq_folder: Path, tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = _prediction_rows()
    with (tmp_path / "preds.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=["example_id", "answer"])
        writer.writeheader()
        writer.writerows(rows)
    # Parquet wants one type per column: the indices as texts, as a CSV has them.
    pq.write_table(
        pa.Table.from_pylist([{**r, "answer": str(r["answer"])} for r in rows]),
        tmp_path / "preds.parquet",
    )
    for name in ("preds.csv", "preds.parquet"):
        out = tmp_path / f"run_{name}"
        assert (
            _score(
                "bbq_bias",
                "--predictions",
                str(tmp_path / name),
                "--prediction-column",
                "answer",
                "--dataset",
                str(bbq_folder),
                "--config",
                "Age",
                "--out",
                str(out),
                "--confidence-level",
                "none",
                "--answer-reader",
                "lenient",
                "--allow-partial",
            )
            == 0
        )
        results = json.loads((out / "results.json").read_text(encoding="utf-8"))
        _check(results)
        assert "confidence_intervals" not in results["result"]


def test_a_subset_of_the_dataset_scores_and_counts_the_rest(
    bbq_folder: Path, tmp_path: Path
) -> None:
    # Only the disambiguated questions: 1 (right), 3 (wrong), 5, 7 (right) -> 3/4; s_DIS 0.5.
    rows = [row for row in _prediction_rows() if row["example_id"] in (1, 3, 5, 7)]
    out = tmp_path / "run"
    assert (
        _score(
            "bbq_bias",
            "--predictions",
            str(_jsonl(tmp_path / "p.jsonl", rows)),
            "--prediction-column",
            "answer",
            "--dataset",
            str(bbq_folder),
            "--config",
            "all",
            "--out",
            str(out),
            "--confidence-level",
            "none",
            "--allow-partial",
        )
        == 0
    )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert (
        results["result"]["accuracy"] == 0.75
        and results["result"]["bias_score_disambiguated"] == 0.5
    )
    assert results["join"]["dataset_rows_without_prediction"] == 8


def test_lm_eval_samples(bbq_folder: Path, tmp_path: Path) -> None:
    """Logged samples: multiple choice (the highest log-likelihood wins) and generation (the
    reply read by the answer reader: here ``lenient``, given by flag, then recorded in the docs
    as the exported tasks record it)."""
    indices = {0: 0, 1: 1, 2: 2, 3: 1, 4: 0, 5: 0, 6: -1, 7: 1}
    rows = [dict(_question(*q), unknown_label=2) for q in QUESTIONS[:8]]
    mc, gen = [], []
    for row in rows:
        chosen = indices[row["example_id"]]
        loglikelihoods = [[-1.0 - (i != chosen), False] for i in range(3)]
        if chosen == -1:
            loglikelihoods = [[float("-inf"), False]] * 3
        mc.append({"doc_id": row["example_id"], "doc": row, "filtered_resps": loglikelihoods})
        gen.append(
            {
                "doc_id": row["example_id"],
                "doc": row,
                "filtered_resps": ["はい" if chosen == -1 else f"{chosen}です"],
            }
        )
    for name, samples in (("mc", mc), ("gen", gen)):
        out = tmp_path / name
        # As lm-eval writes them: the samples beside the run's results file, which gives the
        # task's size (8 questions: the Age config's 12 rows are no measure of this task).
        samples_file = _lm_eval_files(tmp_path / "lm_eval" / name, f"age_{name}", samples, 8)
        assert (
            _score(
                "bbq_bias",
                "--from-lm-eval",
                str(samples_file),
                "--dataset",
                str(bbq_folder),
                "--config",
                "Age",
                "--out",
                str(out),
                "--confidence-level",
                "none",
                "--answer-reader",
                "lenient",
            )
            == 0
        )
        _check(json.loads((out / "results.json").read_text(encoding="utf-8")))
    assert read_lm_eval_samples(samples_file)[0]["reply"] == "0です"
    # Docs that carry every column bbq_bias needs (the exported tasks' do) need no --dataset:
    # the stereotyped answer is the grandfather (0) for a negative question, the grandson (1) otherwise.
    for sample in gen:
        sample["doc"]["stereotyped_label"] = 0 if sample["doc"]["question_polarity"] == "neg" else 1
        sample["doc"]["answer_reader"] = "lenient"
    out = tmp_path / "docs_only"
    assert (
        _score(
            "bbq_bias",
            "--from-lm-eval",
            str(_lm_eval_files(tmp_path / "lm_eval" / "docs", "age_docs", gen, 8)),
            "--out",
            str(out),
            "--confidence-level",
            "none",
        )
        == 0
    )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    _check(results)
    assert results["dataset"]["folder"] is None and results["join"]["dataset_rows"] == 8
    assert results["answer_reader"] == {
        "name": "lenient",
        "chosen_by": "recorded by the exported task",
    }


@pytest.mark.parametrize(
    ("rows", "flags", "message"),
    [
        (
            [{"example_id": 0, "answer": 1}],
            ["--prediction-column", "pred"],
            "no prediction column 'pred'",
        ),
        (
            [
                {"example_id": 0, "answer": 1},
                {"example_id": 40, "answer": 1},
                {"example_id": 41, "answer": 0},
            ],
            ["--prediction-column", "answer"],
            "2 of 3 prediction ids do not join",
        ),
        (
            [{"example_id": 0, "answer": 1}, {"example_id": 0, "answer": 2}],
            ["--prediction-column", "answer"],
            "1 ids have more than one prediction row",
        ),
        (
            [{"id_": 0, "answer": 1}],
            ["--prediction-column", "answer"],
            "has no id column 'example_id'",
        ),
        (
            [{"example_id": 0, "answer": 1}],
            ["--prediction-column", "answer", "--id-column", "nope"],
            "--id-column 'nope': not a column",
        ),
    ],
)
def test_bad_predictions_fail_in_one_line(
    bbq_folder, tmp_path, capsys, rows, flags, message
) -> None:
    path = _jsonl(tmp_path / "p.jsonl", rows)
    code = _score(
        "bbq_bias",
        "--predictions",
        str(path),
        *flags,
        "--dataset",
        str(bbq_folder),
        "--config",
        "Age",
        "--out",
        str(tmp_path / "run"),
    )
    error = capsys.readouterr().err.strip()
    assert code == 2 and message in error and len(error.splitlines()) == 1, error
    assert not (tmp_path / "run").exists()


def test_wrong_file_formats_fail_in_one_line(bbq_folder: Path, tmp_path: Path, capsys) -> None:
    cases = {
        "preds.txt": ("0\n", "unknown format '.txt'"),
        "preds.jsonl": ("{not json\n", "line 1: not JSON lines"),
        "preds.parquet": ("not parquet", "not a Parquet file"),
        "samples.jsonl": ('{"a": 1}\n', "not an lm-eval"),
    }
    for name, (text, message) in cases.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
        flag = "--from-lm-eval" if name.startswith("samples") else "--predictions"
        code = _score(
            "bbq_bias",
            flag,
            str(tmp_path / name),
            "--dataset",
            str(bbq_folder),
            "--out",
            str(tmp_path / "r"),
        )
        error = capsys.readouterr().err.strip()
        assert code == 2 and message in error and len(error.splitlines()) == 1, error


def test_speciesism_fills_several_per_sentence(tmp_path: Path) -> None:
    """speciesism_bias (negative_share): several judged fills per sentence id."""
    from bias_hub.builders.speciesism_templates import build

    root = tmp_path / "ds"
    build(root)
    fills = [
        ("en_sentiment:cow", "negative"),
        ("en_sentiment:cow", "negative"),
        ("en_sentiment:cow", "positive"),
        ("en_sentiment:pig", "neutral"),
    ]
    path = _jsonl(tmp_path / "fills.jsonl", [{"id": i, "label": label} for i, label in fills])
    out = tmp_path / "run"
    assert (
        _score(
            "speciesism_bias",
            "--predictions",
            str(path),
            "--datasets-root",
            str(root),
            "--out",
            str(out),
            "--confidence-level",
            "none",
            "--allow-partial",
        )
        == 0
    )
    result = json.loads((out / "results.json").read_text(encoding="utf-8"))["result"]
    # cow 2 of 3 negative, pig 0 of 1; overall 2 of 4.
    assert result["negative_share"] == {"cow": pytest.approx(2 / 3), "pig": 0.0}
    assert result["overall_negative_share"] == 0.5


def test_every_metric_module_has_a_score_path() -> None:
    """One path per metric folder, and every argument it names is one the module's compute takes."""
    from bias_hub.pipelines.common.locations import import_scores_module

    folders = {p.name for p in (REPO_ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file()}
    assert set(score_paths()) == folders
    for name, path in score_paths().items():
        module = import_scores_module(REPO_ROOT / "metrics" / name)
        metric_class = next(
            v
            for v in vars(module).values()
            if inspect.isclass(v) and v.__module__ == module.__name__ and hasattr(v, "_compute")
        )
        method = "_compute"
        if path.config_name:
            method = f"_compute_{path.config_name}"
        elif hasattr(metric_class, "_compute_default"):
            method = "_compute_default"
        accepted = set(inspect.signature(getattr(metric_class, method)).parameters)
        named = set(path.predictions) | set(path.dataset_columns) | set(path.fixed)
        if path.per_test:
            named |= {"target_sets", "attribute_sets"}
        assert named <= accepted, (name, named - accepted)
        assert {"confidence_level", "n_resamples", "seed"} <= accepted, name
        card = (REPO_ROOT / "datasets" / path.dataset / "README.md").read_text(encoding="utf-8")
        assert f"config_name: {path.config}\n" in card, (name, path.config)
        for column in [*path.dataset_columns.values(), path.id_columns[0]]:
            assert f"- name: {column}\n" in card, (name, column)


def test_weat_runs_once_per_test_of_the_dataset(tmp_path: Path) -> None:
    """Word vectors in the predictions file, word sets from a weat_word_sets-format folder. The
    numbers are metrics/weat's worked example: s(x1) = 0.9 / sqrt(1.01), s(x2) = 0.8 / sqrt(1.04),
    s(y_i) = -s(x_i): effect size 1.68 / 0.8418 = 1.996; no partition beats the observed one, p = 0."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "word_sets"
    (folder / "en").mkdir(parents=True)
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: en\n  data_files:\n  - split: test\n    path: en/test-00000-of-00001.parquet\n---\n",
        encoding="utf-8",
    )
    test = {
        "test_id": "t1",
        "target_x_name": "X",
        "target_x_words": ["x1", "x2"],
        "target_y_name": "Y",
        "target_y_words": ["y1", "y2"],
        "attribute_a_name": "A",
        "attribute_a_words": ["a"],
        "attribute_b_name": "B",
        "attribute_b_words": ["b"],
    }
    pq.write_table(pa.Table.from_pylist([test]), folder / "en" / "test-00000-of-00001.parquet")
    vectors = {
        "x1": [1, 0.1],
        "x2": [1, 0.2],
        "y1": [0.1, 1],
        "y2": [0.2, 1],
        "a": [1, 0],
        "b": [0, 1],
    }
    path = _jsonl(
        tmp_path / "vectors.jsonl", [{"word": w, "vector": v} for w, v in vectors.items()]
    )
    out = tmp_path / "run"
    assert (
        _score(
            "weat",
            "--predictions",
            str(path),
            "--dataset",
            str(folder),
            "--out",
            str(out),
            "--confidence-level",
            "none",
        )
        == 0
    )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert round(results["result"]["t1"]["effect_size"], 3) == 1.996
    assert results["result"]["t1"]["p_value"] == 0.0
    assert "| t1 | 1.996 | 0.000 |" in (out / "report.md").read_text(encoding="utf-8")


def test_an_index_out_of_range_is_counted_not_fatal(bbq_folder: Path, tmp_path: Path) -> None:
    # 3 is no answer of a three-answer row: read as -1 ("out-of-range") and scored as
    # unparsable, never an error. Rows 0..7 as in SAID, with 5's 0 replaced by 3: 5 turns wrong.
    rows = [
        dict(row, answer=3 if row["example_id"] == 5 else row["answer"])
        for row in _prediction_rows()
    ]
    out = tmp_path / "run"
    flags = ["--prediction-column", "answer", "--dataset", str(bbq_folder), "--config", "Age"]
    path = str(_jsonl(tmp_path / "p.jsonl", rows))
    assert (
        _score(
            "bbq_bias",
            "--predictions",
            path,
            *flags,
            "--out",
            str(out),
            "--confidence-level",
            "none",
            "--answer-reader",
            "lenient",
            "--allow-partial",
        )
        == 0
    )
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["reading"]["predictions"]["rules"]["out-of-range"] == 1
    assert results["result"]["unparsable_rate"] == pytest.approx(2 / 8)
    assert results["result"]["accuracy"] == pytest.approx(3 / 8)
