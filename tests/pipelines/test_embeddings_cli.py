"""bias-hub embeddings score | control | correlate on small vectors written by the test."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import numpy as np
import pytest

from bias_hub.builders.weat_word_sets import build as build_word_sets
from bias_hub.builders.weat_word_sets.rows import ROLES
from bias_hub.pipelines.cli import main

TESTS = ["weat6_gender_terms", "weat7"]


@pytest.fixture(scope="session")
def setup(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("embeddings_cli")
    build_word_sets(root / "datasets")
    rows = datasets.load_dataset(str(root / "datasets" / "weat_word_sets"), "en", split="test")
    words = sorted(
        {
            w
            for row in rows
            if row["test_id"] in TESTS
            for role in ROLES
            for w in row[f"{role}_words"]
        }
    )
    words += [f"filler{i}" for i in range(30)]
    rng = np.random.default_rng(0)
    lines = [f"{len(words)} 12"] + [
        w + " " + " ".join(f"{v:.5f}" for v in rng.normal(size=12)) for w in words
    ]
    (root / "vectors.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return {"root": root, "datasets": str(root / "datasets"), "vectors": str(root / "vectors.txt")}


def _weat_value_by_hand(vectors_path: str, datasets_root: str, test_id: str) -> float:
    """c(X,A) + c(Y,B) - c(X,B) - c(Y,A), c(T,A) = sum_t mean_a cos(t, a), from the text file."""
    lines = Path(vectors_path).read_text(encoding="utf-8").splitlines()[1:]
    table = {line.split(" ")[0]: np.array(line.split(" ")[1:], dtype=float) for line in lines}
    row = next(
        r
        for r in datasets.load_dataset(
            str(Path(datasets_root) / "weat_word_sets"), "en", split="test"
        )
        if r["test_id"] == test_id
    )
    x, y, a, b = (row[f"{role}_words"] for role in ROLES)

    def c(targets, attributes):
        cos = [
            [
                table[t] @ table[w] / np.linalg.norm(table[t]) / np.linalg.norm(table[w])
                for w in attributes
            ]
            for t in targets
        ]
        return float(np.sum(np.mean(cos, axis=1)))

    return c(x, a) + c(y, b) - c(x, b) - c(y, a)


def test_score_writes_results_for_every_test_and_metric(setup):
    out = setup["root"] / "score"
    code = main(
        [
            "embeddings",
            "score",
            "--vectors",
            setup["vectors"],
            "--tests",
            *TESTS,
            "--rnsb-iterations",
            "2",
            "--n-resamples",
            "200",
            "--datasets-root",
            setup["datasets"],
            "--out",
            str(out),
        ]
    )
    assert code == 0
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    calls = [(r["test_id"], r["metric"], r["train_on"]) for r in rows]
    assert calls == [
        (t, m, o)
        for t in TESTS
        for m, o in [("weat", None), ("rnsb", "attribute_sets"), ("rnsb", "target_sets")]
    ]
    assert rows[0]["result"]["p_value_method"] == "exact"  # 8 + 8 words: 12,870 partitions
    assert rows[1]["result"]["trained_on"] == [
        "Career",
        "Family",
    ]  # WEAT 6 variant: attributes career/family
    assert rows[2]["result"]["trained_on"] == ["Male terms", "Female terms"]
    scores = json.loads((out / "scores.json").read_text())
    assert scores["columns"] == [
        f"{c}_{t}"
        for t in TESTS
        for c in ("weat", "weat_effect_size", "rnsb_attributes", "rnsb_targets")
    ]
    # The default WEAT column is the study's value, computed here from the vectors file by hand.
    by_hand = _weat_value_by_hand(setup["vectors"], setup["datasets"], "weat7")
    assert scores["table"]["vectors"]["weat_weat7"] == pytest.approx(by_hand, abs=1e-4)
    header = (out / "scores.csv").read_text().splitlines()[0]
    assert header.startswith(
        "embedding,weat_weat6_gender_terms,weat_effect_size_weat6_gender_terms,"
    )
    low, high = scores["intervals"]["vectors"]["weat_weat7"]
    assert low <= by_hand <= high
    report = (out / "report.md").read_text()
    assert "| weat7 | WEAT value |" in report and "95% bootstrap intervals" in report
    assert f"| vectors | weat7 | WEAT value | {by_hand:.3f} [" in report


def test_missing_words_are_refused_with_names(setup, tmp_path, capsys):
    small = tmp_path / "small.txt"
    kept = [
        line
        for line in Path(setup["vectors"]).read_text().splitlines()[1:]
        if not line.startswith(("math ", "algebra "))
    ]
    small.write_text(f"{len(kept)} 12\n" + "\n".join(kept) + "\n", encoding="utf-8")
    code = main(
        [
            "embeddings",
            "score",
            "--vectors",
            str(small),
            "--tests",
            "weat7",
            "--metrics",
            "weat",
            "--datasets-root",
            setup["datasets"],
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2
    assert "target_sets['Math'] lost 2 of 8 words" in capsys.readouterr().err
    assert (
        main(
            [
                "embeddings",
                "score",
                "--vectors",
                setup["vectors"],
                "--tests",
                "weat99",
                "--datasets-root",
                setup["datasets"],
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )


@pytest.mark.slow
def test_control_scores_a_family_and_correlates(setup):
    out = setup["root"] / "control"
    code = main(
        [
            "embeddings",
            "control",
            "--vectors",
            setup["vectors"],
            "--tests",
            *TESTS,
            "--epochs",
            "2",
            "--rnsb-iterations",
            "1",
            "--n-resamples",
            "200",
            "--datasets-root",
            setup["datasets"],
            "--out",
            str(out),
        ]
    )
    assert code == 0
    scores = json.loads((out / "scores.json").read_text())
    assert len(scores["table"]) == 11 and len(scores["members"]) == 11
    table = scores["table"]
    # Amplifying pushes WEAT 6 (gender terms vs career/family) up, reducing pushes it down.
    assert (
        table["amplify-1"]["weat_weat6_gender_terms"] > table["original"]["weat_weat6_gender_terms"]
    )
    assert (
        table["reduce-1"]["weat_weat6_gender_terms"] < table["original"]["weat_weat6_gender_terms"]
    )
    correlations = json.loads((out / "correlations.json").read_text())
    assert {(r["x"], r["y"]) for r in correlations} >= {
        ("weat_weat7", "rnsb_attributes_weat7"),
        ("weat_weat7", "rnsb_targets_weat7"),
        ("abs_weat_weat7", "rnsb_attributes_weat7"),
        ("weat_effect_size_weat7", "rnsb_attributes_weat7"),
    }
    first = correlations[0]
    interval = first["pearson"]["interval"]
    assert interval["unit"] == "embeddings" and interval["n_units"] == 11
    assert interval["low"] <= first["pearson"]["statistic"] <= interval["high"]
    report = (out / "report.md").read_text()
    assert (out / "scatter.png").stat().st_size > 1000 and "Table 3 analogue" in report
    assert "this project's variant" in report

    extrinsic = setup["root"] / "winobias.csv"
    extrinsic.write_text(
        "embedding,winobias_gap\n"
        + "\n".join(f"{name},{i * 0.01}" for i, name in enumerate(table))
        + "\n"
    )
    joined = setup["root"] / "joined"
    assert (
        main(
            [
                "embeddings",
                "correlate",
                "--scores",
                str(out / "scores.json"),
                str(extrinsic),
                "--pairs",
                "weat_weat7:winobias_gap",
                "rnsb_attributes_weat7:winobias_gap",
                "--n-resamples",
                "200",
                "--out",
                str(joined),
            ]
        )
        == 0
    )
    rows = json.loads((joined / "correlations.json").read_text())
    assert [(r["x"], r["y"], r["n"]) for r in rows] == [
        ("weat_weat7", "winobias_gap", 11),
        ("rnsb_attributes_weat7", "winobias_gap", 11),
    ]


def test_oov_share_is_judged_before_balancing():
    from bias_hub.pipelines.embeddings.scoring import Query, prepare
    from bias_hub.pipelines.embeddings.vectors import WordVectors

    vectors = WordVectors(["x1", "x2", "x3", "y1", "a", "b"], np.eye(6))
    query = Query(
        "t",
        {"X": ["x1", "x2", "x3", "x4"], "Y": ["y1", "y2", "y3", "y4"]},
        {"A": ["a"], "B": ["b"]},
    )
    with pytest.raises(
        ValueError, match=r"target_sets\['Y'\] lost 3 of 4 words .*\['y2', 'y3', 'y4'\]"
    ):
        prepare(query, vectors, max_oov_share=0.5)
    # Allowed: X keeps x1 only (balanced to |Y| = 1); 'X' is named in the note, not as OOV.
    prepared, inputs = prepare(query, vectors, max_oov_share=0.75)
    assert prepared.target_sets == {"X": ["x1", "x4"], "Y": ["y1", "y2", "y3", "y4"]}
    assert prepared.notes == ["balanced 'X' by dropping ['x2', 'x3']"]
    assert inputs["words"] == ["x1", "x2", "x3", "y1", "a", "b"]


# Slow: every step run again end to end when this worker has not run them (8 s on 2 cores).
@pytest.mark.slow
def test_each_step_writes_results_json_and_its_report_renders_from_it_alone(setup, tmp_path):
    from bias_hub.pipelines.embeddings import report

    score_out, control_out = setup["root"] / "score", setup["root"] / "control"
    if not (score_out / "results.json").is_file():
        test_score_writes_results_for_every_test_and_metric(setup)
    if not (control_out / "results.json").is_file():
        test_control_scores_a_family_and_correlates(setup)
    for out, step in (
        (score_out, "score"),
        (control_out, "control"),
        (setup["root"] / "joined", "correlate"),
    ):
        results = json.loads((out / "results.json").read_text())
        assert results["part"] == "embeddings" and results["step"] == step
        again = tmp_path / step
        again.mkdir()
        report.render(results, again)
        assert (again / "report.md").read_text() == (out / "report.md").read_text()
        if step != "score":
            assert (again / "correlations.md").read_text() == (out / "correlations.md").read_text()
            assert (again / "scatter.png").stat().st_size > 1000
    # correlate reads a step's results.json as it reads scores.json.
    joined = tmp_path / "from_results"
    assert (
        main(
            [
                "embeddings",
                "correlate",
                "--scores",
                str(control_out / "results.json"),
                "--pairs",
                "weat_weat7:rnsb_attributes_weat7",
                "--n-resamples",
                "200",
                "--out",
                str(joined),
            ]
        )
        == 0
    )
    row = json.loads((joined / "correlations.json").read_text())[0]
    control_row = next(
        r
        for r in json.loads((control_out / "correlations.json").read_text())
        if (r["x"], r["y"]) == ("weat_weat7", "rnsb_attributes_weat7")
    )
    assert row["n"] == 11 and row["pearson"]["statistic"] == pytest.approx(
        control_row["pearson"]["statistic"]
    )


def test_correlate_names_a_results_file_of_another_part(tmp_path, capsys):
    # An NLI results.json used to end in KeyError: 'columns' and a traceback.
    other = tmp_path / "results.json"
    other.write_text(
        json.dumps({"part": "nli", "step": "evaluate", "scores": {"bias_score": 0.1}}),
        encoding="utf-8",
    )
    code = main(["embeddings", "correlate", "--scores", str(other), "--out", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert (
        f"--scores {other}: results.json of part 'nli' is no score table; expected scores.json or results.json"
        in err
    )
    assert not (tmp_path / "x").exists()
    other.write_text("[1, 2]", encoding="utf-8")
    assert (
        main(["embeddings", "correlate", "--scores", str(other), "--out", str(tmp_path / "x")]) == 2
    )
    assert "a JSON list is no score table" in capsys.readouterr().err
