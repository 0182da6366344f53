"""Every run records the model it scored: ``score --model`` for predictions made elsewhere
(a local folder fingerprinted, a Hub id with its revision), lm-eval's results file and an
Inspect log's header where they name it."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from jbbq_fixtures import fixture_rows, write_fixture_dataset

from bias_hub.pipelines.cli import main

DATE = "2025-01-02T03-04-05.678901"
QUESTIONS = fixture_rows()["all"]


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixture_dataset(tmp_path_factory.mktemp("identity") / "jbbq")


def _score(capsys, *args: str) -> tuple[int, dict, dict]:
    code = main(["score", "bbq_bias", "--confidence-level", "none", *args])
    err = capsys.readouterr().err
    assert code == 0, err
    out = Path(args[args.index("--out") + 1])
    read = lambda name: json.loads((out / name).read_text(encoding="utf-8"))  # noqa: E731
    return code, read("results.json"), read("manifest.json")


def _gold(path: Path) -> Path:
    path.write_text(
        "".join(
            json.dumps(
                {"example_id": q["example_id"], "category": q["category"], "prediction": q["label"]}
            )
            + "\n"
            for q in QUESTIONS
        ),
        encoding="utf-8",
    )
    return path


def test_score_model_records_a_local_folder_s_fingerprint_and_a_hub_id_s_revision(
    dataset: Path, tmp_path: Path, capsys
) -> None:
    model = tmp_path / "my-model"
    model.mkdir()
    (model / "config.json").write_text("{}", encoding="utf-8")
    predictions = _gold(tmp_path / "gold.jsonl")
    _, results, manifest = _score(
        capsys,
        "--predictions",
        str(predictions),
        "--dataset",
        str(dataset),
        "--model",
        str(model),
        "--out",
        str(tmp_path / "a"),
    )
    (recorded,) = manifest["inputs"]["models"]
    # The folder's content hash: sha256 over "<path>\0<sha256 of the file>\n" per file (one here).
    inner = hashlib.sha256(b"{}").hexdigest()
    assert recorded["sha256"] == hashlib.sha256(f"config.json\0{inner}\n".encode()).hexdigest()
    assert results["model"] == str(model)
    assert f"made by `{model}`" in (tmp_path / "a" / "report.md").read_text(encoding="utf-8")
    _, results, manifest = _score(
        capsys,
        "--predictions",
        str(predictions),
        "--dataset",
        str(dataset),
        "--model",
        "org/m",
        "--revision",
        "v2",
        "--out",
        str(tmp_path / "b"),
    )
    assert manifest["inputs"]["models"] == [{"id": "org/m", "revision": "v2", "resolved": False}]
    assert results["model"] == "org/m"
    # Predictions with neither --model nor a log that names one: no model, said as None.
    _, results, manifest = _score(
        capsys,
        "--predictions",
        str(predictions),
        "--dataset",
        str(dataset),
        "--out",
        str(tmp_path / "c"),
    )
    assert results["model"] is None and manifest["inputs"]["models"] == []
    code = main(
        [
            "score",
            "bbq_bias",
            "--predictions",
            str(predictions),
            "--revision",
            "v2",
            "--out",
            str(tmp_path / "d"),
        ]
    )
    assert (
        code == 2
        and "--revision: give the model it is a revision of with --model" in capsys.readouterr().err
    )


def test_lm_eval_s_results_file_names_the_model_and_its_revision(tmp_path: Path, capsys) -> None:
    folder = tmp_path / "lm"
    folder.mkdir()
    samples = [
        {
            "doc_id": i,
            "doc": q,
            "filtered_resps": [[-1.0 if k == q["label"] else -3.0, False] for k in range(3)],
        }
        for i, q in enumerate(QUESTIONS)
    ]
    header = {
        "results": {"jbbq_t": {}},
        "n-samples": {"jbbq_t": {"original": len(QUESTIONS), "effective": len(QUESTIONS)}},
        "config": {
            "model": "hf",
            "model_args": "pretrained=llm-jp/llm-jp-13b-v1.0,revision=abc123,dtype=bfloat16",
        },
    }
    (folder / f"results_{DATE}.json").write_text(json.dumps(header), encoding="utf-8")
    path = folder / f"samples_jbbq_t_{DATE}.jsonl"
    path.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in samples), "utf-8")
    _, results, manifest = _score(
        capsys, "--from-lm-eval", str(path), "--out", str(tmp_path / "out")
    )
    assert manifest["inputs"]["models"] == [
        {
            "id": "llm-jp/llm-jp-13b-v1.0",
            "reported_by": f"lm-eval results_{DATE}.json",
            "backend": "hf",
            "revision": "abc123",
        }
    ]
    assert results["model"] == "llm-jp/llm-jp-13b-v1.0"


def test_an_inspect_log_header_names_an_api_model_and_its_host(tmp_path: Path, capsys) -> None:
    spec = {
        "task": "jbbq",
        "model": "openai/gpt-4o-mini",
        "model_base_url": "http://127.0.0.1:8000/v1",
        "dataset": {"samples": len(QUESTIONS)},
    }
    samples = [
        {
            "id": q["example_id"],
            "epoch": 1,
            "metadata": {**q, "answer_reader": "llm-jp-eval"},
            "output": {"completion": str(q["label"])},
        }
        for q in QUESTIONS
    ]
    log = tmp_path / "log.json"
    log.write_text(json.dumps({"eval": spec, "samples": samples}), encoding="utf-8")
    _, results, manifest = _score(
        capsys, "--from-inspect", str(log), "--out", str(tmp_path / "out")
    )
    assert manifest["inputs"]["models"] == [
        {
            "id": "openai/gpt-4o-mini",
            "reported_by": "Inspect log log.json",
            "api": "http://127.0.0.1:8000/v1",
        }
    ]
    # --model wins over what the log says.
    _, results, manifest = _score(
        capsys, "--from-inspect", str(log), "--model", "my-name", "--out", str(tmp_path / "given")
    )
    assert results["model"] == "my-name" and manifest["inputs"]["models"][0]["id"] == "my-name"
