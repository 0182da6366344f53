"""embeddings correlate --coref: WinoBias gaps of CoNLL outputs, worked out by hand, correlated."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bias_hub.builders.winobias import build as build_winobias
from bias_hub.pipelines.cli import main

WEAT = [0.0, 2.0, 4.0, 6.0, 8.0]  # 2k for embedding e<k>
RNSB = [1.0, 3.0, 2.0, 4.0, 5.0]


@pytest.fixture(scope="module")
def setup(tmp_path_factory, winobias_source, winobias_documents, conll_writer) -> dict:
    """Embedding e<k>'s system resolves every sentence right except the first k type-1
    anti-stereotypical test sentences, where it links the pronoun to the other occupation."""
    root = tmp_path_factory.mktemp("coref")
    build_winobias(root / "datasets", source=winobias_source)
    scores = root / "scores.csv"
    scores.write_text(
        "embedding,weat_weat7,rnsb_attributes_weat7\n"
        + "".join(f"e{k},{w},{r}\n" for k, (w, r) in enumerate(zip(WEAT, RNSB, strict=True)))
    )
    outputs = {}
    for k in range(5):
        folder = root / f"e{k}"
        folder.mkdir()
        for kind in (1, 2):
            documents = []
            for condition in ("pro", "anti"):
                for number, (key, tokens, clusters) in enumerate(
                    winobias_documents("test", kind, condition)
                ):
                    if kind == 1 and condition == "anti" and number < k:
                        ((antecedent, pronoun),) = clusters
                        other = [3, 4] if antecedent == [0, 1] else [0, 1]
                        clusters = [[other, pronoun]]
                    documents.append((key, tokens, clusters))
            documents += winobias_documents("dev", kind, "pro")  # other documents are left out
            (folder / f"type{kind}.conll").write_text(conll_writer(documents), encoding="utf-8")
        outputs[f"e{k}"] = folder
    return {"root": root, "scores": scores, "outputs": outputs}


def _run(setup, out: Path, *extra: str) -> int:
    coref = [f"{name}={path}" for name, path in setup["outputs"].items()]
    return main(
        [
            "embeddings",
            "correlate",
            "--scores",
            str(setup["scores"]),
            "--coref",
            *coref,
            "--datasets-root",
            str(setup["root"] / "datasets"),
            "--n-resamples",
            "200",
            "--out",
            str(out),
            *extra,
        ]
    )


def test_gaps_by_hand_and_the_table2_correlations(setup):
    out = setup["root"] / "out"
    assert _run(setup, out) == 0
    gaps = json.loads((out / "winobias.json").read_text())
    # A wrongly linked sentence scores MUC 0, B-cubed 1/4 and CEAF-e 1/2 (precision = recall);
    # pro sentences are all right. With k of 5 anti sentences wrong: MUC 1 - k/5, B-cubed
    # (2(5 - k) + k/2) / 10, CEAF-e (5 - k/2) / 5, mean 1 - 0.15k: the type-1 gap is 0.15k.
    for k in range(5):
        row = gaps["table"][f"e{k}"]
        assert row["winobias_type1_precision_gap"] == pytest.approx(0.15 * k)
        assert row["winobias_type1_recall_gap"] == pytest.approx(0.15 * k)
        assert row["winobias_type2_precision_gap"] == pytest.approx(0.0)
    rows = {(r["x"], r["y"]): r for r in json.loads((out / "correlations.json").read_text())}
    assert len(rows) == 2 * 6  # two direct scores x (precision, recall, F1 gaps of two types)
    assert rows["weat_weat7", "winobias_type1_precision_gap"]["pearson"][
        "statistic"
    ] == pytest.approx(1.0)
    # RNSB (1, 3, 2, 4, 5) against k = 0..4: deviations (-2, 0, -1, 1, 2) and (-2, -1, 0, 1, 2),
    # products sum to 9, squares to 10 each: r = 0.9.
    assert rows["rnsb_attributes_weat7", "winobias_type1_recall_gap"]["pearson"][
        "statistic"
    ] == pytest.approx(0.9)
    assert (
        rows["rnsb_attributes_weat7", "winobias_type2_recall_gap"]["pearson"]["statistic"] is None
    )  # no type-2 gap
    interval = rows["rnsb_attributes_weat7", "winobias_type1_recall_gap"]["pearson"]["interval"]
    assert interval["unit"] == "embeddings" and interval["n_units"] == 5
    markdown = (out / "correlations.md").read_text()
    assert "## Table 2 layout" in markdown
    assert (
        "| weat7 | WEAT (value) | 1.00" in markdown
        and "| weat7 | RNSB (on A, B) | 0.90" in markdown
    )


def test_outputs_that_do_not_match_winobias_are_refused(setup, tmp_path, capsys, conll_writer):
    assert (
        main(
            [
                "embeddings",
                "correlate",
                "--scores",
                str(setup["scores"]),
                "--coref",
                f"e9={setup['outputs']['e0']}",
                "--datasets-root",
                str(setup["root"] / "datasets"),
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    assert "--coref ['e9']: no such embedding in --scores" in capsys.readouterr().err
    partial = tmp_path / "partial.conll"
    partial.write_text((setup["outputs"]["e0"] / "type1.conll").read_text(), encoding="utf-8")
    assert (
        main(
            [
                "embeddings",
                "correlate",
                "--scores",
                str(setup["scores"]),
                "--coref",
                f"e0={partial}",
                "--datasets-root",
                str(setup["root"] / "datasets"),
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    assert (
        "--coref e0: 10 of 20 WinoBias documents are not in the output" in capsys.readouterr().err
    )
    shifted = tmp_path / "shifted"
    shifted.mkdir()
    for name in ("type1.conll", "type2.conll"):
        text = (setup["outputs"]["e0"] / name).read_text().replace("\tcarpenter\t", "\tjoiner\t")
        (shifted / name).write_text(text, encoding="utf-8")
    assert (
        main(
            [
                "embeddings",
                "correlate",
                "--scores",
                str(setup["scores"]),
                "--coref",
                f"e0={shifted}",
                "--datasets-root",
                str(setup["root"] / "datasets"),
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    assert "the words differ from WinoBias's" in capsys.readouterr().err
    assert (
        main(
            [
                "embeddings",
                "correlate",
                "--scores",
                str(setup["scores"]),
                "--coref",
                "e0",
                "--out",
                str(tmp_path / "out"),
            ]
        )
        == 2
    )
    assert "expected NAME=PATH" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_folder_of_outputs_names_each_embedding_by_its_entry(setup, tmp_path, capsys):
    # --coref-dir DIR: DIR/e<k>/ (or DIR/e<k>.conll) is embedding e<k>'s output: the gaps by hand
    # above, 0.15 k, come out the same as with --coref e<k>=PATH.
    folder = tmp_path / "outputs"
    folder.mkdir()
    for name, path in setup["outputs"].items():
        (folder / name).symlink_to(path, target_is_directory=True)
    out = tmp_path / "out"
    assert (
        main(
            [
                "embeddings",
                "correlate",
                "--scores",
                str(setup["scores"]),
                "--coref-dir",
                str(folder),
                "--datasets-root",
                str(setup["root"] / "datasets"),
                "--n-resamples",
                "200",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    table = json.loads((out / "winobias.json").read_text())["table"]
    assert [round(table[f"e{k}"]["winobias_type1_recall_gap"], 10) for k in range(5)] == [
        0.0,
        0.15,
        0.3,
        0.45,
        0.6,
    ]
    results = json.loads((out / "results.json").read_text())
    assert (
        results["part"] == "embeddings"
        and results["step"] == "correlate"
        and "## Table 2 layout" in (out / "report.md").read_text()
    )
    assert (
        main(
            [
                "embeddings",
                "correlate",
                "--scores",
                str(setup["scores"]),
                "--coref-dir",
                str(tmp_path / "none"),
                "--out",
                str(tmp_path / "out2"),
            ]
        )
        == 2
    )
    assert "--coref-dir" in capsys.readouterr().err and not (tmp_path / "out2").exists()
