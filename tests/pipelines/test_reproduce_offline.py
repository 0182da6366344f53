"""Every study's offline variant, run end to end through `bias-hub reproduce` with the Hub offline
(conftest sets HF_HUB_OFFLINE=1): tiny models made here or shipped in registry wheels, data built
by the variant's own steps. Each report is walked for dead links and unfilled placeholders, and
each table shows the paper's printed values beside ours, run or not (the values checked below
are the papers', cited by table and row)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bias_hub.pipelines.report_index import broken_links
from bias_hub.pipelines.reproduce.run import reproduce
from bias_hub.pipelines.reproduce.study import load_study

pytestmark = pytest.mark.slow

# The placeholders a study's steps and texts may hold (pipelines/reproduce/study.py).
PLACEHOLDER = re.compile(r"\{(?:out|models?|model_slug|datasets_root|input\.[\w-]+)\}")


def _run(tmp_path: Path, study: str, **overrides) -> str:
    """Reproduce ``study``'s offline variant into ``tmp_path/out`` (datasets under
    ``tmp_path/datasets``, never the checkout's); the report after the checks every study shares."""
    out = tmp_path / "out"
    reproduce(
        load_study(study),
        out,
        variant="offline",
        overrides=overrides,
        datasets_root=tmp_path / "datasets",
    )
    assert broken_links(out, start="report.md") == []
    for page in out.rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert not PLACEHOLDER.search(text), f"{page}: {PLACEHOLDER.search(text).group(0)}"
    report = (out / "report.md").read_text(encoding="utf-8")
    assert not re.search(r"^Models: *$", report, flags=re.MULTILINE)
    assert "Variant `offline` — not the paper's setting" in report
    assert "## Settings: what the paper states and our reading" in report
    return report


def _section(report: str, title: str) -> str:
    """The report's text under the heading that starts with ``title``, up to the next one."""
    start = report.index(f"## {title}")
    end = report.find("\n## ", start + 1)
    return report[start : end if end >= 0 else None]


def test_jbbq_offline(tmp_path: Path) -> None:
    report = _run(tmp_path, "jbbq")
    # The tiny model's folder has no report of its own: linked as a folder.
    assert "[tiny-model](tiny-model)" in report and "](tiny-model/report.md)" not in report
    table4 = _section(report, "Table 4")
    # Table 4, row Age-Amb: llm-jp 0.4 (93.1), llm-jp inst. 1.0, stablelm 23.4, weblab 25.6 (16.3),
    # shown although the tiny model is none of them.
    assert re.search(
        r"\| Age-Amb \| [^|]+ \| 0\.4 \(93\.1\) \| 1\.0 \| 23\.4 \| 25\.6 \(16\.3\) \|", table4
    )
    assert "This run's model is none of the paper's" in table4
    assert "0.33 chance rate" in _section(report, "Figure 1")
    # chat, split, max_new_tokens, layout and reader are ours or assumed, the shots the paper's
    # (§5.2, Figure 1).
    settings = _section(report, "Settings")
    assert "`paper`: `shots` = [4] (§5.2, Figure 1)" in settings
    assert "`paper`: `max_new_tokens` = 1 — assumed:" in settings
    assert "`paper`: `answer_reader` = 'llm-jp-eval' — assumed:" in settings


def test_nli_offline(tmp_path: Path) -> None:
    # Smaller than the variant (which runs all 11 rates): the plumbing, in CI's time.
    report = _run(
        tmp_path,
        "nli_gender_bias",
        **{
            "meta-evaluate.rates": [0.0, 0.5, 1.0],
            "meta-evaluate.epochs": 1.0,
            "meta-evaluate.base_epochs": 1.0,
            "meta-evaluate.max_train_samples": 300,
            "meta-evaluate.eval_per_subset": 30,
        },
    )
    # Table 2: the proposed score's printed 0.820 and the existing one's -0.114 beside ours.
    table2 = _section(report, "Table 2")
    assert re.search(r"\| 提案 \(s\) \| [^|]+ \| [^|]+ \| 0\.820 \|", table2)
    assert re.search(r"\| 既存 \(1 − FN\) \| [^|]+ \| [^|]+ \| -0\.114 \|", table2)
    # Tables 3-4 were not run offline; the paper's values stay. Table 3, Laboro DistilBERT, PS:
    # 0.525 / 0.131 / 0.344; Table 4, Waseda RoBERTa 0.563 (1).
    table3 = _section(report, "Table 3")
    assert "Step `evaluate` was not run in this reproduction." in table3
    assert (
        "| laboro-ai/distilbert-base-japanese | PS | not run (0.525) | not run (0.131) "
        "| not run (0.344) |" in table3
    )
    assert "| nlp-waseda/roberta-base-japanese | not run | 0.563 (1) |" in _section(
        report, "Table 4"
    )
    # The variant's preset is the project's own: ours throughout, but its rates (§4.1); this
    # run's three rates are said beside them.
    settings = _section(report, "Settings")
    assert (
        "`from-scratch`: `rates` = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0] "
        "(**this run: [0.0, 0.5, 1.0]**) (§4.1)" in settings
    )
    assert "`from-scratch`: `learning_rate` = 0.001 — ours:" in settings


def test_rnsb_offline(tmp_path: Path) -> None:
    report = _run(tmp_path, "rnsb_winobias")
    # Table 2 needs coreference outputs: the printed values alone (WEAT 6, WEAT, Type 1 Pre.
    # diff 0.25), and no scatter under it: the correlate step's scatter is Table 3's pairs.
    table2 = _section(report, "Table 2")
    assert "not run (paper 0.25)" in table2 and "scatter" not in table2
    # Table 3: the printed 0.0098 (WEAT 6) beside ours, marked as forced by the symmetric family,
    # and the control step's scatter under it.
    table3 = _section(report, "Table 3")
    assert re.search(
        r"\| weat6_gender_terms \| [^|]+ ‡ near 0 by construction \| 0\.0098 \|", table3
    )
    assert "(control/scatter.png)" in table3
    assert "Pearson r of RNSB with |WEAT value|" in table3


def test_stereoset_offline(tmp_path: Path) -> None:
    report = _run(tmp_path, "stereoset_gender_attention")
    assert "[models](models)" in report
    figure2 = _section(report, "Figure 2")
    assert "2,111 (§4.1)" in figure2 and "(attention/figure2.png)" in figure2
    settings = _section(report, "Settings")
    assert "`paper`: `heads` = None — assumed:" in settings
    assert "`paper`: `layer` = -1 (§4.2 (1))" in settings


def test_speciesism_offline(tmp_path: Path) -> None:
    report = _run(tmp_path, "speciesism")
    # Table 1, row 1: dried 0.00020683 / 0.00000050; Table 3, row 1: b 0.00814565 / 0.00000257;
    # each beside the stand-in for its model.
    table1 = _section(report, "Table 1")
    assert "| 1 | dried | 0.00020683 | 0.00000050 |" in table1
    assert "roberta-stand-in: word" in table1
    table3 = _section(report, "Table 3")
    assert "| 1 | b | 0.00814565 | 0.00000257 |" in table3 and "bert-stand-in: word" in table3
    # Figure 1: the paper's count of positive fills (§4.2: BERT 7 of 60) and ours with VADER.
    figure1 = _section(report, "Figure 1")
    assert "bert-large-uncased: 7 of 60" in figure1 and "This run (vader)" in figure1
