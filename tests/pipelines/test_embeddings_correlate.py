"""Correlation of score columns: Pearson vs Spearman on hand-made tables."""

from __future__ import annotations

import re

import pytest

from bias_hub.pipelines.embeddings.correlate import (
    correlation_table,
    merge_tables,
    read_score_table,
    scatter_figure,
)


def table(xs, ys):
    return {f"e{i}": {"x": x, "y": y} for i, (x, y) in enumerate(zip(xs, ys, strict=False))}


def test_monotone_outlier_separates_rank_from_linear():
    # y rises with x everywhere, but one extreme member: ranks agree perfectly (rho = 1)
    # while the linear fit does not (r < 1).
    rows = correlation_table(["x", "y"], table([1, 2, 3, 4, 5], [1, 2, 3, 4, 100]))
    (row,) = rows
    assert row["spearman"]["statistic"] == pytest.approx(1.0)
    assert row["pearson"]["statistic"] < 0.8
    exact = correlation_table(["x", "y"], table([1, 2, 3, 4, 5], [2, 4, 6, 8, 10]))[0]
    assert exact["pearson"]["statistic"] == pytest.approx(1.0) and exact["spearman"][
        "statistic"
    ] == pytest.approx(1.0)
    # Pearson r of (1..4) with (1, 3, 2, 4): cov 1, var 1.25 each -> 0.8 (by hand).
    hand = correlation_table(["x", "y"], table([1, 2, 3, 4], [1, 3, 2, 4]))[0]
    assert hand["pearson"]["statistic"] == pytest.approx(0.8) and hand["spearman"][
        "statistic"
    ] == pytest.approx(0.8)


def test_too_few_or_constant_columns_give_no_number():
    assert correlation_table(["x", "y"], table([1, 2], [3, 4]))[0]["pearson"]["statistic"] is None
    assert (
        correlation_table(["x", "y"], table([1, 2, 3], [5, 5, 5]))[0]["spearman"]["statistic"]
        is None
    )


def test_reading_and_merging_user_tables(tmp_path):
    (tmp_path / "ours.csv").write_text("embedding,weat\ne1,0.1\ne2,0.5\ne3,0.9\n", encoding="utf-8")
    (tmp_path / "theirs.tsv").write_text(
        "embedding\twinobias_gap\ne1\t0.2\ne2\t0.1\ne3\t0.4\n", encoding="utf-8"
    )
    columns, merged = merge_tables(
        read_score_table(tmp_path / "ours.csv"), read_score_table(tmp_path / "theirs.tsv")
    )
    assert columns == ["weat", "winobias_gap"] and merged["e2"] == {
        "weat": 0.5,
        "winobias_gap": 0.1,
    }
    rows = correlation_table(columns, merged)
    figure = scatter_figure(rows, merged)
    assert (
        len([axis for axis in figure.axes if axis.get_visible()]) == 1
    )  # one pair of columns, one panel
    (tmp_path / "bad.csv").write_text("embedding,weat\ne1,high\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.csv, line 2, column 'weat': not a number"):
        read_score_table(tmp_path / "bad.csv")
    with pytest.raises(ValueError, match="--pairs: unknown columns"):
        correlation_table(columns, merged, [("weat", "nope")])


def test_holm_adjustment_by_hand():
    from bias_hub.pipelines.common.stats import holm

    # Sorted 0.01, 0.03, 0.04 of m = 3: 3 x 0.01 = 0.03, max(0.03, 2 x 0.03) = 0.06,
    # max(0.06, 1 x 0.04) = 0.06; a missing p-value stays missing and does not count.
    assert holm([0.01, 0.04, 0.03, None]) == pytest.approx([0.03, 0.06, 0.06, None])
    assert holm([0.6, 0.9]) == pytest.approx([1.0, 1.0])


def test_bootstrap_interval_over_embeddings():
    from bias_hub.pipelines.common.stats import correlation

    xs = [1.0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    ys = [2.0, 1, 4, 3, 6, 5, 8, 7, 10, 9, 12, 11]
    rows = correlation_table(
        ["x", "y"], table(xs, ys), confidence_level=0.9, n_resamples=500, seed=1
    )
    interval = rows[0]["pearson"]["interval"]
    assert (
        interval["method"] == "BCa"
        and interval["n_units"] == 12
        and interval["unit"] == "embeddings"
    )
    assert interval["low"] < rows[0]["pearson"]["statistic"] < interval["high"] <= 1.0
    again = correlation_table(
        ["x", "y"], table(xs, ys), confidence_level=0.9, n_resamples=500, seed=1
    )
    assert again[0]["pearson"]["interval"] == interval
    assert again[0]["spearman"]["interval"] == rows[0]["spearman"]["interval"]
    # Four embeddings: 4 of the 4^4 index draws are constant, so with 500 resamples some
    # correlation is undefined and the interval says so instead of guessing.
    small = correlation(
        [1.0, 2, 3, 4],
        [1.0, 3, 2, 4],
        "pearson",
        confidence_level=0.9,
        n_resamples=500,
        seed=0,
        unit="embeddings",
    )["interval"]
    assert small["low"] is None and "undefined in" in small["reason"]


def test_table2_layout_marks_holm_significant_cells():
    from bias_hub.pipelines.embeddings.correlate import table2_pairs
    from bias_hub.pipelines.embeddings.report import table2_markdown

    columns = [
        "weat_weat7",
        "rnsb_attributes_weat7",
        "winobias_type1_precision_gap",
        "winobias_type2_recall_gap",
    ]
    assert table2_pairs(columns) == [
        ("weat_weat7", "winobias_type1_precision_gap"),
        ("weat_weat7", "winobias_type2_recall_gap"),
        ("rnsb_attributes_weat7", "winobias_type1_precision_gap"),
        ("rnsb_attributes_weat7", "winobias_type2_recall_gap"),
    ]
    rows = [
        {
            "x": "weat_weat7",
            "y": "winobias_type1_precision_gap",
            "pearson": {"statistic": 0.25, "p_value_holm": 0.01, "interval": None},
        },
        {
            "x": "rnsb_attributes_weat7",
            "y": "winobias_type2_recall_gap",
            "pearson": {
                "statistic": -0.64,
                "p_value_holm": 0.2,
                "interval": {"low": -0.9, "high": -0.1},
            },
        },
    ]
    lines = table2_markdown(rows).splitlines()
    assert lines[2] == "| weat7 | WEAT (value) | 0.25* |  |  |  |"
    assert lines[3] == "| weat7 | RNSB (on A, B) |  |  |  | -0.64 [-0.90, -0.10] |"


@pytest.mark.parametrize(
    ("table", "message"),
    [
        # The second row of e1 used to replace the first without a word.
        (
            "embedding,weat\ne1,0.1\ne2,0.5\ne1,0.9\n",
            "line 4: the embedding 'e1' again (first on line 2)",
        ),
        # NaN and inf used to be read as numbers and make every correlation they touch NaN.
        ("embedding,weat\ne1,0.1\ne2,nan\n", "line 3, column 'weat': 'nan' is not a finite number"),
        ("embedding,weat\ne1,inf\ne2,0.1\n", "line 2, column 'weat': 'inf' is not a finite number"),
        # A short row used to be filled with blanks, a long one to lose its extra cells.
        ("embedding,weat,gap\ne1,0.1\n", "line 2: 2 cells where the header has 3"),
        ("embedding,weat\ne1,0.1,0.2\n", "line 2: 3 cells where the header has 2"),
    ],
)
def test_a_score_table_row_that_cannot_be_read_as_one_is_refused_with_its_line(
    tmp_path, table, message
):
    (tmp_path / "s.csv").write_text(table, encoding="utf-8")
    with pytest.raises(
        ValueError, match="^" + re.escape(f"--scores {tmp_path / 's.csv'}, {message}")
    ):
        read_score_table(tmp_path / "s.csv")
