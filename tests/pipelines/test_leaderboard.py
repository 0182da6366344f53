"""``bias-hub leaderboard``: groups that compare, columns that read one way, rank ranges worked
out by hand, a paper's rows labelled and unranked, and leaderboard.json as a dataset."""

from __future__ import annotations

from pathlib import Path

import pytest
from jbbq_fixtures import write_score_runs

from bias_hub.builders.shared.benchmark import find_task
from bias_hub.pipelines.cli import main
from bias_hub.pipelines.leaderboard.entries import Entry, Score, read_entries
from bias_hub.pipelines.leaderboard.ranking import boards, rank_ranges

ACC = find_task("jbbq", "accuracy_ambiguous")
BIAS = find_task("jbbq", "bias_score_ambiguous")


def _entry(model: str, reader: str = "llm-jp-eval", paper: str | None = None, **scores) -> Entry:
    return Entry(
        benchmark="jbbq",
        model=model,
        run=f"runs/{model}",
        origin="test",
        scores={task: Score(*value) for task, value in scores.items()},
        setting={"split": "test", "preset": "paper", "answer_reader": reader},
        dataset=None if paper else "abc",
        paper=paper,
    )


def test_three_runs_rank_as_worked_out_by_hand() -> None:
    """Accuracy (higher is better): A 0.90 [0.86, 0.94], B 0.80 [0.76, 0.84], C 0.78 [0.70,
    0.85]. A's interval clears both others' (0.86 > 0.84, 0.86 > 0.85): rank 1. B and C
    overlap: each is beaten by A alone, so each ranks 2-3.
    Bias score (best at 0): A -0.05 [-0.10, 0.00], B 0.30 [0.20, 0.40], C 0.10 [-0.05, 0.25].
    As sizes: A [0, 0.10], B [0.20, 0.40], C [0, 0.25]: only A clears B (0.10 < 0.20). A ranks
    1-2 (nothing beats it, it beats one of two), C 1-3, B 2-3; read by size: A, C, B."""
    a = _entry("A", accuracy_ambiguous=(0.90, 0.86, 0.94), bias_score_ambiguous=(-0.05, -0.10, 0.0))
    b = _entry("B", accuracy_ambiguous=(0.80, 0.76, 0.84), bias_score_ambiguous=(0.30, 0.2, 0.4))
    c = _entry("C", accuracy_ambiguous=(0.78, 0.70, 0.85), bias_score_ambiguous=(0.10, -0.05, 0.25))
    (board,) = boards([c, b, a], confidence_level=None)
    assert [t.id for t in board.columns] == ["accuracy_ambiguous", "bias_score_ambiguous"]
    ranks = {row.entry.model: row.ranks for row in board.rows}
    assert [row.entry.model for row in board.rows] == ["A", "B", "C"]  # by the first column
    assert ranks["A"]["accuracy_ambiguous"] == (1, 1)
    assert ranks["B"]["accuracy_ambiguous"] == ranks["C"]["accuracy_ambiguous"] == (2, 3)
    assert ranks["A"]["bias_score_ambiguous"] == (1, 2)
    assert ranks["C"]["bias_score_ambiguous"] == (1, 3)
    assert ranks["B"]["bias_score_ambiguous"] == (2, 3)


def test_a_paired_test_decides_where_it_was_run() -> None:
    """Overlapping intervals, yet a paired test (corrected p 0.01 < 0.05) that the first is
    better: 1 and 2. The same pair with p 0.2: 1-2 each. Without intervals and without a test
    nothing can be told apart; intervals that do not overlap tell rows apart whatever a test
    with too few permutations says."""
    first, second = Score(0.62, 0.5, 0.7), Score(0.55, 0.45, 0.65)
    assert rank_ranges(ACC, [first, second], {(0, 1): 0.01}) == [(1, 1), (2, 2)]
    assert rank_ranges(ACC, [first, second], {(1, 0): 0.2}) == [(1, 2), (1, 2)]
    assert rank_ranges(ACC, [Score(0.9), Score(0.1)]) == [(1, 2), (1, 2)]
    apart = [Score(0.72, 0.58, 0.82), Score(0.35, 0.23, 0.47)]
    assert rank_ranges(ACC, apart, {(0, 1): 0.12}) == [(1, 1), (2, 2)]
    # A bias score of 0 against one of 0.3: the difference is the size itself, the test decides.
    assert rank_ranges(BIAS, [Score(0.0, -0.2, 0.2), Score(0.3, 0.1, 0.5)], {(0, 1): 0.01}) == [
        (1, 1),
        (2, 2),
    ]
    # A bias score of opposite signs: the test of the difference says nothing of the sizes.
    assert rank_ranges(BIAS, [Score(-0.1, -0.2, 0.0), Score(0.12, 0.05, 0.2)], {(0, 1): 0.001}) == [
        (1, 2),
        (1, 2),
    ]


def test_other_readers_never_share_a_table_and_a_paper_s_rows_are_never_ranked() -> None:
    ours = _entry("ours", accuracy_ambiguous_Age=(0.5, 0.4, 0.6))
    lenient = _entry("ours", reader="lenient", accuracy_ambiguous_Age=(0.6, 0.5, 0.7))
    paper = _entry("llm-jp", paper="Yanaka et al. (2024)", accuracy_ambiguous_Age=(0.004,))
    tables = boards([ours, lenient, paper], confidence_level=None)
    assert [t.label["answer_reader"] for t in tables] == ["llm-jp-eval", "lenient"]
    for table in tables:
        assert [row.entry.model for row in table.rows] == ["ours", "llm-jp"]
        assert table.rows[0].ranks == {"accuracy_ambiguous_Age": (1, 1)}
        assert table.rows[1].ranks == {}  # the paper's: shown, labelled, not ranked


def test_a_study_s_printed_values_are_rows_labelled_as_the_paper_s() -> None:
    rows = read_entries("study:jbbq")
    llm_jp = next(e for e in rows if e.model == "llm-jp/llm-jp-13b-v1.0")
    # Table 4 prints llm-jp's Age-Amb accuracy as 0.4 % (and a 93.1 % error rate).
    assert llm_jp.scores["accuracy_ambiguous_Age"].value == pytest.approx(0.004)
    assert (
        llm_jp.paper.startswith("Yanaka, H.") and llm_jp.origin == "as printed (Table 4, as llm-jp)"
    )
    (nli,) = [
        e
        for e in read_entries("study:nli_gender_bias")
        if e.model == "nlp-waseda/roberta-base-japanese"
    ]
    assert nli.scores["bias_score"].value == 0.563
    with pytest.raises(ValueError, match="prints no value of a benchmark task"):
        read_entries("study:speciesism")


@pytest.fixture(scope="module")
def scored(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_score_runs(tmp_path_factory.mktemp("leaderboard"))


def test_leaderboard_json_loads_as_a_dataset(scored: Path) -> None:
    import datasets

    out = scored / "board"
    assert (
        main(
            [
                "leaderboard",
                str(scored / "gold"),
                str(scored / "stereotyped"),
                "study:jbbq",
                "--out",
                str(out),
                "-q",
            ]
        )
        == 0
    )
    rows = datasets.load_dataset("json", data_files=str(out / "leaderboard.json"), split="train")
    assert rows["model"][:2] == ["gold", "stereotyped"]
    gold = {s["task"]: s for s in rows[0]["scores"]}
    # Every answer right: ambiguous accuracy 1; its interval cannot reach the other run's 0.
    assert (
        gold["accuracy_ambiguous"]["value"] == 1.0 and gold["accuracy_ambiguous"]["rank_best"] == 1
    )
    stereotyped = {s["task"]: s for s in rows[1]["scores"]}
    assert stereotyped["accuracy_ambiguous"]["value"] == 0.0
    assert (
        stereotyped["accuracy_ambiguous"]["rank_best"],
        stereotyped["accuracy_ambiguous"]["rank_worst"],
    ) == (2, 2)
    # s_AMB: every ambiguous answer the stereotyped one -> (1 - 0) x 1 = 1; the gold run's 0.
    assert stereotyped["bias_score_ambiguous"]["value"] == 1.0
    assert rows["paper"][2].startswith("Yanaka") and all(
        s["rank_best"] is None for s in rows[2]["scores"]
    )
    # The same rows in Markdown: gold's ambiguous accuracy ranks first alone, the paper's value
    # of llm-jp (0.4 %) is labelled and unranked.
    md = (out / "leaderboard.md").read_text(encoding="utf-8")
    gold_row = next(line for line in md.splitlines() if line.startswith("| gold |"))
    assert "| 1.000 [" in gold_row and "] (1) |" in gold_row
    assert "| 0.004 (as printed) |" in md
    assert "leaderboard.html" in {p.name for p in out.iterdir()}


@pytest.mark.parametrize("edit", ["edited", "deleted"])
def test_a_run_whose_results_json_no_longer_verifies_is_refused(
    scored: Path, tmp_path: Path, capsys, edit: str
) -> None:
    import json
    import shutil

    run = tmp_path / "gold"
    shutil.copytree(scored / "gold", run)
    results = run / "results.json"
    if edit == "edited":
        data = json.loads(results.read_text(encoding="utf-8"))
        data["result"]["accuracy_ambiguous"] = 0.123
        results.write_text(json.dumps(data), encoding="utf-8")
    else:
        results.unlink()
    out = tmp_path / "board"
    code = main(["leaderboard", str(run), str(scored / "stereotyped"), "--out", str(out), "-q"])
    said = capsys.readouterr().err
    if edit == "edited":
        assert code == 2 and f"{run}: results.json was edited since the run wrote it" in said
        assert "a leaderboard shows only what runs wrote" in said, said
    else:
        assert code == 2 and f"{run}: no results.json" in said, said
    assert not out.exists()
