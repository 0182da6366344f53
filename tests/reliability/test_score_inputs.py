"""``bias-hub score`` under hostile inputs: files cut short, folders of another kind or in the
wrong place, encodings, values no answer matches, names that would write Markdown.

The questions are the JBBQ-shaped fixture (``jbbq_fixtures``: 40 questions, ids 0 to 39, in
two categories); the lm-eval samples are written as lm-evaluation-harness 0.4 writes them
(``samples_<task>_<date>.jsonl`` beside ``results_<date>.json``, whose ``n-samples`` gives the
task's size).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jbbq_fixtures import fixture_rows, write_fixture_dataset

from bias_hub.pipelines.cli import main
from bias_hub.pipelines.common import RunFolder

DATE = "2025-01-02T03-04-05.678901"
QUESTIONS = fixture_rows()["all"]


@pytest.fixture(scope="module")
def datasets_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("score_hostile") / "datasets"
    write_fixture_dataset(root / "jbbq")
    return root


def _samples(docs: list[dict]) -> list[dict]:
    """Multiple-choice samples that always choose the gold answer."""
    return [
        {
            "doc_id": number,
            "doc": doc,
            "filtered_resps": [[-1.0 if i == doc["label"] else -3.0, False] for i in range(3)],
        }
        for number, doc in enumerate(docs)
    ]


def _lm_eval_run(folder: Path, samples: list[dict], original: int, effective: int | None = None):
    """The two files lm-eval writes for task ``jbbq_t``; returns the samples file."""
    folder.mkdir(parents=True, exist_ok=True)
    sizes = {"original": original, "effective": original if effective is None else effective}
    (folder / f"results_{DATE}.json").write_text(
        json.dumps({"results": {"jbbq_t": {}}, "n-samples": {"jbbq_t": sizes}}), encoding="utf-8"
    )
    path = folder / f"samples_jbbq_t_{DATE}.jsonl"
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples), "utf-8")
    return path


def _score(capsys, *args: str) -> tuple[int, str]:
    code = main(["score", "bbq_bias", "--confidence-level", "none", *args])
    captured = capsys.readouterr()
    return code, captured.err


def test_a_truncated_lm_eval_samples_file_is_refused_naming_what_it_lacks(
    tmp_path: Path, capsys
) -> None:
    # The whole task: 40 questions, every one answered.
    whole = _lm_eval_run(tmp_path / "whole", _samples(QUESTIONS), 40)
    code, err = _score(capsys, "--from-lm-eval", str(whole), "--out", str(tmp_path / "a"))
    assert code == 0, err
    results = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))
    assert results["coverage"]["answered"] == 40 and results["coverage"]["complete"] is True
    assert "coverage: 40 of 40 questions (100.0%) of lm-eval task jbbq_t" in err
    # The same file cut after 15 lines (at a line end): refused, naming the count and the gap.
    cut = _lm_eval_run(tmp_path / "cut", _samples(QUESTIONS)[:15], 40)
    code, err = _score(capsys, "--from-lm-eval", str(cut), "--out", str(tmp_path / "b"))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "answers 15 of 40 questions (37.5%) of lm-eval task jbbq_t" in err
    assert "missing doc_id 15, doc_id 16" in err and "--allow-partial" in err
    assert not (tmp_path / "b").exists()
    # Scored on purpose: a warning on the console, and partial in results.json and report.md.
    code, err = _score(
        capsys, "--from-lm-eval", str(cut), "--out", str(tmp_path / "c"), "--allow-partial"
    )
    assert code == 0 and "PARTIAL (--allow-partial): 15 of 40 questions" in err
    results = json.loads((tmp_path / "c" / "results.json").read_text(encoding="utf-8"))
    assert results["coverage"] == {
        "answered": 15,
        "expected": 40,
        "complete": False,
        "against": "lm-eval task jbbq_t (results_2025-01-02T03-04-05.678901.json: n-samples "
        "{'original': 40, 'effective': 40})",
        "unit": "questions",
        "missing_examples": ["doc_id 15", "doc_id 16", "doc_id 17", "doc_id 18", "doc_id 19"],
        "allowed_partial": True,
    }
    assert "**PARTIAL** (--allow-partial)" in (tmp_path / "c" / "report.md").read_text("utf-8")


def test_an_lm_eval_run_with_its_own_limit_is_partial_too(tmp_path: Path, capsys) -> None:
    # lm-eval --limit 10: the results file says 10 of the task's 40 were run.
    limited = _lm_eval_run(tmp_path / "limited", _samples(QUESTIONS)[:10], 40, effective=10)
    code, err = _score(capsys, "--from-lm-eval", str(limited), "--out", str(tmp_path / "r"))
    assert code == 2 and "answers 10 of 40 questions" in err


def test_samples_without_their_results_file_need_a_dataset_or_allow_partial(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    alone = tmp_path / "copied.jsonl"
    alone.write_text("".join(json.dumps(s) + "\n" for s in _samples(QUESTIONS[:15])), "utf-8")
    code, err = _score(capsys, "--from-lm-eval", str(alone), "--out", str(tmp_path / "a"))
    assert code == 2 and "how many its task holds is unknown" in err and "--dataset" in err
    # Counted against a dataset instead: 15 of its 40 rows.
    code, err = _score(
        capsys,
        "--from-lm-eval",
        str(alone),
        "--dataset",
        str(datasets_root / "jbbq"),
        "--out",
        str(tmp_path / "b"),
    )
    assert code == 2 and "answers 15 of 40 dataset rows (37.5%)" in err


def _inspect_log(path: Path, docs: list[dict], total: int) -> Path:
    """An Inspect AI eval log as Inspect 0.3 writes one (JSON, or a .eval zip of header.json and
    one samples/<id>_epoch_1.json per sample) for a task of ``total`` samples, whose model
    replied each question's gold index, and whose samples are ``docs`` (the run's --limit)."""
    import zipfile

    spec = {
        "task": "jbbq",
        "dataset": {"samples": total, "sample_ids": [d["example_id"] for d in docs]},
    }
    samples = [
        {
            "id": d["example_id"],
            "epoch": 1,
            "metadata": {**d, "answer_reader": "llm-jp-eval"},
            "output": {"completion": str(d["label"])},
        }
        for d in docs
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".json":
        path.write_text(json.dumps({"eval": spec, "samples": samples}), encoding="utf-8")
        return path
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps({"eval": spec}))
        for sample in samples:
            archive.writestr(f"samples/{sample['id']}_epoch_1.json", json.dumps(sample))
    return path


@pytest.mark.parametrize("suffix", [".json", ".eval"])
def test_an_inspect_log_of_part_of_its_task_is_refused_naming_what_it_lacks(
    tmp_path: Path, capsys, suffix: str
) -> None:
    # The whole task: 40 samples, every one answered.
    whole = _inspect_log(tmp_path / f"whole{suffix}", QUESTIONS, 40)
    code, err = _score(capsys, "--from-inspect", str(whole), "--out", str(tmp_path / "a"))
    assert code == 0, err
    results = json.loads((tmp_path / "a" / "results.json").read_text(encoding="utf-8"))
    assert results["coverage"]["complete"] is True and results["result"]["accuracy"] == 1.0
    assert "coverage: 40 of 40 samples (100.0%) of Inspect task jbbq" in err
    # Inspect --limit 15 (or a run stopped after 15): refused, naming the count and the gap.
    part = _inspect_log(tmp_path / f"part{suffix}", QUESTIONS[:15], 40)
    code, err = _score(capsys, "--from-inspect", str(part), "--out", str(tmp_path / "b"))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "answers 15 of 40 samples (37.5%) of Inspect task jbbq" in err
    assert "--allow-partial" in err and not (tmp_path / "b").exists()
    code, err = _score(
        capsys, "--from-inspect", str(part), "--out", str(tmp_path / "c"), "--allow-partial"
    )
    assert code == 0 and "PARTIAL (--allow-partial): 15 of 40 samples" in err


def test_a_question_answered_twice_is_the_samples_file_s_fault(tmp_path: Path, capsys) -> None:
    samples = _samples(QUESTIONS)
    twice = _lm_eval_run(tmp_path / "twice", samples + samples[3:4], 40)
    code, err = _score(capsys, "--from-lm-eval", str(twice), "--out", str(tmp_path / "r"))
    assert code == 2
    assert f"--from-lm-eval {twice}: doc_id 3 is answered twice (lines 4 and 41)" in err
    assert "dataset" not in err


def test_a_predictions_file_covering_part_of_the_dataset_is_refused(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"example_id": r["example_id"], "prediction": 2}) + "\n"
            for r in QUESTIONS[:30]
        ),
        encoding="utf-8",
    )
    flags = ["--predictions", str(predictions), "--datasets-root", str(datasets_root)]
    code, err = _score(capsys, *flags, "--out", str(tmp_path / "a"))
    assert code == 2 and "answers 30 of 40 dataset rows (75.0%)" in err
    # The missing rows are named by id. The first 30 questions are the train split (ids 0-11
    # and 20-31) and the first 6 of the test split (12-17): missing are 18 and 19, then 32 on.
    assert "missing 18, 19, 32, 33, 34, ...;" in err
    code, err = _score(capsys, *flags, "--out", str(tmp_path / "b"), "--allow-partial")
    assert code == 0 and "PARTIAL (--allow-partial): 30 of 40 dataset rows" in err


def test_a_folder_named_like_the_dataset_here_never_replaces_the_built_one(
    datasets_root: Path, tmp_path: Path, capsys, monkeypatch
) -> None:
    # ./jbbq in the working directory: the same questions, every gold label moved by one.
    here = tmp_path / "work"
    here.mkdir()
    write_fixture_dataset(here / "jbbq")
    monkeypatch.chdir(here)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"example_id": r["example_id"], "prediction": r["label"]}) + "\n"
            for r in QUESTIONS
        ),
        encoding="utf-8",
    )
    code, err = _score(
        capsys,
        "--predictions",
        str(predictions),
        "--datasets-root",
        str(datasets_root),
        "--out",
        str(tmp_path / "run"),
    )
    assert code == 0, err
    results = json.loads((tmp_path / "run" / "results.json").read_text(encoding="utf-8"))
    assert results["dataset"]["folder"] == str((datasets_root / "jbbq").resolve())
    # Written as a path, the local folder is read, and recorded absolute.
    code, err = _score(
        capsys, "--predictions", str(predictions), "--dataset", "./jbbq", "--out", "run2"
    )
    results = json.loads((here / "run2" / "results.json").read_text(encoding="utf-8"))
    assert code == 0 and results["dataset"]["folder"] == str((here / "jbbq").resolve())


def test_a_bare_name_that_is_not_built_says_how_to_read_the_folder_here(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    write_fixture_dataset(tmp_path / "mine")
    monkeypatch.chdir(tmp_path)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"example_id": 0, "prediction": 0}\n', encoding="utf-8")
    code, err = _score(
        capsys,
        "--predictions",
        str(predictions),
        "--dataset",
        "mine",
        "--datasets-root",
        str(tmp_path / "root"),
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2 and "for the folder mine here, write ./mine" in err


def test_a_folder_of_another_kind_is_named_as_such(tmp_path: Path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "nli_like"
    (folder / "generated_all").mkdir(parents=True)
    table = pa.table({"premise": ["a"], "hypothesis": ["b"], "label": [0]})
    pq.write_table(table, folder / "generated_all" / "test-00000-of-00001.parquet")
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: generated_all\n  data_files:\n  - split: test\n"
        "    path: generated_all/test-00000-of-00001.parquet\n---\n",
        encoding="utf-8",
    )
    predictions = tmp_path / "p.jsonl"
    predictions.write_text('{"example_id": 0, "prediction": 0}\n', encoding="utf-8")
    code, err = _score(
        capsys,
        "--predictions",
        str(predictions),
        "--dataset",
        str(folder),
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2 and "BuilderConfig" not in err
    assert f"dataset {folder}: no config 'all' (its configs: generated_all)" in err
    assert "bbq_bias scores a folder like `jbbq`" in err


def test_an_excel_csv_with_a_byte_order_mark_is_read(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    rows = "".join(f"{r['example_id']},{r['label']}\r\n" for r in QUESTIONS)
    path = tmp_path / "excel.csv"
    path.write_bytes(("\ufeffexample_id,prediction\r\n" + rows).encode("utf-8"))
    code, err = _score(
        capsys,
        "--predictions",
        str(path),
        "--datasets-root",
        str(datasets_root),
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 0, err
    results = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    assert results["result"]["accuracy"] == 1.0


def test_a_shift_jis_csv_is_named_with_its_line_and_byte(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    path = tmp_path / "sjis.csv"
    # Line 3 holds the first character that is not ASCII: 判 is 0x94 0xbb in Shift-JIS.
    path.write_bytes("example_id,prediction\n0,2\n1,判断できない\n".encode("shift_jis"))
    offset = len("example_id,prediction\n0,2\n1,")
    code, err = _score(
        capsys,
        "--predictions",
        str(path),
        "--datasets-root",
        str(datasets_root),
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert f"--predictions {path}: not UTF-8 text (line 3: byte 0x94 at offset {offset})" in err


def test_values_no_answer_matches_are_shown_as_written(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    said = {0: "²", 1: "", 2: "中立"}
    path = tmp_path / "p.jsonl"
    path.write_text(
        "".join(
            json.dumps({"example_id": r["example_id"], "prediction": said.get(i, r["label"])})
            + "\n"
            for i, r in enumerate(QUESTIONS)
        ),
        encoding="utf-8",
    )
    code, err = _score(
        capsys,
        "--predictions",
        str(path),
        "--datasets-root",
        str(datasets_root),
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 0, err
    assert "3 of 40 predictions in 'prediction' matched no answer" in err
    assert "row 1: '²'; row 2: ''; row 3: '中立'" in err
    results = json.loads((tmp_path / "r" / "results.json").read_text(encoding="utf-8"))
    assert results["reading"]["predictions"]["unmatched_values"] == [
        {"row": 1, "column": "prediction", "value": "²"},
        {"row": 2, "column": "prediction", "value": ""},
        {"row": 3, "column": "prediction", "value": "中立"},
    ]


def test_a_label_outside_a_fixed_label_set_is_refused_as_written(tmp_path: Path, capsys) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    # An nli_gender_bias-format folder of three pairs.
    folder = tmp_path / "nli"
    (folder / "generated_all").mkdir(parents=True)
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: generated_all\n  data_files:\n  - split: test\n"
        "    path: generated_all/test-00000-of-00001.parquet\n---\n",
        encoding="utf-8",
    )
    table = {"id": [0, 1, 2], "subset": ["PS", "AS", "NS"], "template_id": ["t", "t", "t"]}
    pq.write_table(pa.table(table), folder / "generated_all" / "test-00000-of-00001.parquet")
    path = tmp_path / "p.csv"
    path.write_text("id,prediction\n0,neutral\n1,中立\n2,²\n", encoding="utf-8")
    code = main(
        [
            "score",
            "nli_gender_bias",
            "--predictions",
            str(path),
            "--dataset",
            str(folder),
            "--out",
            str(tmp_path / "r"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert (
        f"--predictions {path}, column 'prediction': 2 values are neither one of entailment, "
        "neutral, contradiction nor an index 0 to 2 (row 2: '中立'; row 3: '²')"
    ) in err


def test_score_never_replaces_another_command_s_run(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "nli_run"
    with RunFolder(out) as run:
        run.write_json("results.json", {"part": "nli", "step": "evaluate"})
    before = sorted(p.name for p in out.iterdir())
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"example_id": r["example_id"], "prediction": 2}) + "\n" for r in QUESTIONS
        ),
        encoding="utf-8",
    )
    code, err = _score(
        capsys,
        "--predictions",
        str(predictions),
        "--datasets-root",
        str(datasets_root),
        "--out",
        str(out),
    )
    assert code == 2 and f"--out {out}: holds the run of another command (part 'nli'" in err
    assert sorted(p.name for p in out.iterdir()) == before
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["part"] == "nli"


def test_file_names_cannot_write_markdown_into_the_report(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "x` and\n## Injected heading | <b>bold</b>"
    samples = _lm_eval_run(folder, _samples(QUESTIONS), 40)
    code, err = _score(capsys, "--from-lm-eval", str(samples), "--out", str(tmp_path / "r"))
    assert code == 0, err
    report = (tmp_path / "r" / "report.md").read_text(encoding="utf-8")
    assert not any(line.startswith("## Injected") for line in report.splitlines())
    line = next(line for line in report.splitlines() if line.startswith("- predictions:"))
    assert "``" in line and "\\n## Injected heading" in line


# --- hostile inputs beyond the sweep's ---------------------------------------------------


def _gold(path: Path, rows: list[dict] = QUESTIONS) -> Path:
    path.write_text(
        "".join(
            json.dumps({"example_id": r["example_id"], "prediction": r["label"]}) + "\n"
            for r in rows
        ),
        encoding="utf-8",
    )
    return path


def test_an_input_inside_out_is_never_deleted_by_the_run_that_reads_it(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    flags = ["--datasets-root", str(datasets_root), "--out", str(out)]
    assert _score(capsys, "--predictions", str(_gold(tmp_path / "p.jsonl")), *flags)[0] == 0
    inside = _gold(out / "p.jsonl")
    code, err = _score(capsys, "--predictions", str(inside), *flags)
    assert code == 2 and f"--predictions {inside} lies inside --out {out}" in err
    assert inside.is_file()


def test_a_file_added_to_a_score_run_folder_is_not_deleted_by_the_next_run(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    out = tmp_path / "run"
    argv = ["--predictions", str(_gold(tmp_path / "p.jsonl")), "--datasets-root"]
    argv += [str(datasets_root), "--out", str(out)]
    assert _score(capsys, *argv)[0] == 0
    (out / "notes.md").write_text("what I saw", encoding="utf-8")
    code, err = _score(capsys, *argv)
    assert code == 2 and "1 file(s) its last run did not write, which this run would delete" in err
    assert "notes.md (added)" in err
    assert (out / "notes.md").read_text(encoding="utf-8") == "what I saw"


def test_predictions_joined_to_another_dataset_sharing_its_ids_are_refused(
    datasets_root: Path, tmp_path: Path, capsys
) -> None:
    # Docs of another benchmark whose ids and categories happen to be JBBQ's, scored against
    # the built JBBQ (the docs lack bbq_bias's columns, so the dataset is joined).
    docs = [
        {"example_id": r["example_id"], "category": r["category"], "question": f"Other {i}?"}
        for i, r in enumerate(QUESTIONS)
    ]
    samples = [
        {"doc_id": i, "doc": d, "filtered_resps": [[-1.0, False], [-2.0, False], [-3.0, False]]}
        for i, d in enumerate(docs)
    ]
    path = _lm_eval_run(tmp_path / "other", samples, 40)
    code, err = _score(
        capsys,
        "--from-lm-eval",
        str(path),
        "--datasets-root",
        str(datasets_root),
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2 and "40 of 40 rows join rows of dataset" in err
    assert "row 1, 'question': 'Other 0?' here" in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "example_id,prediction,prediction\n0,1,2\n",
            "line 1: the header names column 'prediction' twice",
        ),
        ("example_id,prediction\n0,1\n1,2,extra\n", "line 3: 3 cells where the header has 2"),
        ("example_id,prediction\n0,1\n1\n", "line 3: 1 cells where the header has 2"),
    ],
)
def test_a_csv_whose_rows_do_not_fit_its_header_is_refused_with_the_line(
    datasets_root: Path, tmp_path: Path, capsys, text: str, message: str
) -> None:
    path = tmp_path / "p.csv"
    path.write_text(text, encoding="utf-8")
    code, err = _score(
        capsys,
        "--predictions",
        str(path),
        "--datasets-root",
        str(datasets_root),
        "--out",
        str(tmp_path / "r"),
    )
    assert code == 2 and f"--predictions {path}, {message}" in err


def test_a_number_that_is_not_finite_is_named_with_its_row_and_column(
    tmp_path: Path, capsys
) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = tmp_path / "pairs"
    (folder / "contexts").mkdir(parents=True)
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: contexts\n  data_files:\n  - split: test\n"
        "    path: contexts/test-00000-of-00001.parquet\n---\n",
        encoding="utf-8",
    )
    pq.write_table(
        pa.table({"id": ["c0", "c1"]}), folder / "contexts" / "test-00000-of-00001.parquet"
    )
    path = tmp_path / "ppl.jsonl"
    path.write_text(
        '{"id": "c0", "male_perplexity": 5, "female_perplexity": 3}\n'
        '{"id": "c1", "male_perplexity": NaN, "female_perplexity": 3}\n',
        encoding="utf-8",
    )
    code = main(
        [
            "score",
            "perplexity_gap",
            "--predictions",
            str(path),
            "--dataset",
            str(folder),
            "--out",
            str(tmp_path / "r"),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2
    assert (
        f"--predictions {path}, row 2, column 'male_perplexity': expected a finite number, got nan"
        in err
    )


def test_a_folder_given_as_the_predictions_file_is_named_as_a_folder(
    tmp_path: Path, capsys
) -> None:
    (tmp_path / "preds.jsonl").mkdir()
    code, err = _score(
        capsys, "--predictions", str(tmp_path / "preds.jsonl"), "--out", str(tmp_path / "r")
    )
    assert code == 2 and "is a folder; expected a file" in err


def test_samples_and_a_results_file_of_different_runs_are_refused(tmp_path: Path, capsys) -> None:
    # The results file says 10 questions; the samples answer doc_id 0 to 39.
    path = _lm_eval_run(tmp_path / "mixed", _samples(QUESTIONS), 10)
    code, err = _score(capsys, "--from-lm-eval", str(path), "--out", str(tmp_path / "r"))
    assert code == 2 and "doc_id 10 is not one of the 10 questions of task jbbq_t" in err
    (tmp_path / "mixed" / f"results_{DATE}.json").write_text('{"n-samples": ', encoding="utf-8")
    code, err = _score(capsys, "--from-lm-eval", str(path), "--out", str(tmp_path / "r"))
    assert code == 2 and f"results_{DATE}.json (the lm-eval results beside --from-lm-eval" in err
