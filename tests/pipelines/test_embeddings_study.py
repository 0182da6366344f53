"""pipelines/studies/rnsb_winobias.yaml: its preset, its steps against the real flags, and the
paper layouts of pipelines/embeddings/report.py on numbers worked out by hand."""

from __future__ import annotations

import contextlib
import io
import re

import pytest
import yaml

from bias_hub.pipelines.cli import build_parser
from bias_hub.pipelines.common.presets import STUDIES_DIR, apply_preset, load_preset
from bias_hub.pipelines.embeddings.correlate import correlation_table
from bias_hub.pipelines.embeddings.report import PAPER_LAYOUTS
from bias_hub.pipelines.embeddings.settings import ControlSettings

STUDY = yaml.safe_load((STUDIES_DIR / "rnsb_winobias.yaml").read_text(encoding="utf-8"))


def test_the_paper_preset_carries_section_3s_settings():
    preset = load_preset("embeddings control", "paper")
    settings = apply_preset(ControlSettings(), preset, explicit={"min_count"})
    assert (
        settings.dimensions == 300
        and settings.expansion_neighbours == 100
        and settings.min_count == 10
    )
    assert (
        settings.tests == ["weat6_gender_terms", "weat7", "weat8"]
        and preset.sections["dimensions"] == "§3"
    )
    departed = apply_preset(ControlSettings(min_count=5), preset, explicit={"min_count"})
    assert departed.departures == [
        {"setting": "min_count", "preset": 10, "used": 5, "section": "§3"}
    ]


def _argv(step: dict, changes: dict) -> list[str]:
    """The step's command line as the study states it, placeholders filled with stand-ins."""
    args = {
        **step["args"],
        **{k.split(".", 1)[1]: v for k, v in changes.items() if k.startswith(step["id"] + ".")},
    }
    argv = step["command"].split()
    for key, value in args.items():
        if value is None or value is False:
            continue
        value = re.sub(r"\{[^}]+\}", "X", value) if isinstance(value, str) else value
        flag = "--" + key.replace("_", "-")
        argv += (
            [flag]
            if value is True
            else [flag, *map(str, value)]
            if isinstance(value, list)
            else [flag, str(value)]
        )
    return argv


@pytest.mark.parametrize("variant", [None, "offline"])
def test_every_step_parses_with_the_real_command(variant):
    changes = STUDY["variants"][variant]["set"] if variant else {}
    parser = build_parser()
    for step in STUDY["steps"]:
        with contextlib.redirect_stderr(io.StringIO()):
            parser.parse_args(_argv(step, changes))
    inputs = {item["name"] for item in STUDY["inputs"]}
    assert {"wikipedia_corpus", "spacy_vectors", "ontonotes", "coref_outputs"} <= inputs
    assert all(item["how"] for item in STUDY["inputs"])
    assert set(STUDY["variants"]["offline"]["inputs"]) <= inputs
    assert {table["layout"] for table in STUDY["tables"]} <= set(PAPER_LAYOUTS)


def _table(weat, rnsb, gaps=None) -> dict:
    table = {
        f"e{i}": {"weat_weat7": w, "rnsb_attributes_weat7": r}
        for i, (w, r) in enumerate(zip(weat, rnsb, strict=True))
    }
    for i, gap in enumerate(gaps or []):
        table[f"e{i}"]["winobias_type1_precision_gap"] = gap
    return table


def test_table3_layout_puts_our_pearson_r_beside_the_printed_one():
    # WEAT (1, 2, 3, 4) against RNSB (1, 3, 2, 4): deviations (-1.5, -0.5, 0.5, 1.5) and
    # (-1.5, 0.5, -0.5, 1.5), products sum to 4, squares to 5 each: r = 0.8.
    table = _table([1.0, 2, 3, 4], [1.0, 3, 2, 4])
    rows = correlation_table(["weat_weat7", "rnsb_attributes_weat7"], table)
    text = PAPER_LAYOUTS["table3"](
        {"correlations": rows, "family": "variant"}, {"weat7": -0.015, "weat8": 0.0085}
    )
    lines = text.splitlines()
    assert lines[2] == "| weat7 | 0.800 | -0.015 | 0.800 | 4 |"
    assert lines[3] == "| weat8 | n/a (not in this run) | 0.0085 | n/a | 0 |"
    assert "bias-hub's ATTRACT-REPEL strength variant (not the study's family)" in text


def test_table2_layout_needs_winobias_gaps_and_lays_them_out():
    printed = {"weat7": {"WEAT": [0.33, 0.31, 0.29, 0.19], "RNSB": [-0.32, -0.31, -0.32, -0.50]}}
    table = _table([0.0, 2, 4, 6, 8], [1.0, 3, 2, 4, 5], gaps=[0.0, 0.15, 0.3, 0.45, 0.6])
    columns = ["weat_weat7", "rnsb_attributes_weat7", "winobias_type1_precision_gap"]
    rows = correlation_table(
        columns, table, [("weat_weat7", columns[2]), ("rnsb_attributes_weat7", columns[2])]
    )
    lines = PAPER_LAYOUTS["table2"](
        {"columns": columns, "correlations": rows}, printed
    ).splitlines()
    # WEAT is 2k and the gap 0.15k: r = 1. RNSB (1, 3, 2, 4, 5) against k: r = 9 / 10 = 0.9.
    assert (
        lines[2]
        == "| weat7 | WEAT | 1.00 (paper 0.33) | n/a (paper 0.31) | n/a (paper 0.29) | n/a (paper 0.19) |"
    )
    assert lines[3].startswith("| weat7 | RNSB | 0.90 (paper -0.32) |")
    assert "![WEAT and RNSB against the WinoBias gaps](scatter.png)" in lines
    # Without gaps, or not run at all: the printed values alone, no scatter (which would be
    # another table's).
    for results in ({"columns": columns[:2], "correlations": []}, None):
        without = PAPER_LAYOUTS["table2"](results, printed).splitlines()
        assert without[2] == (
            "| weat7 | WEAT | not run (paper 0.33) | not run (paper 0.31) | not run (paper 0.29) "
            "| not run (paper 0.19) |"
        )
        assert not any("scatter" in line for line in without)


def _member(name: str, direction: str, strength: float) -> dict:
    return {"name": name, "direction": direction, "strength": strength, "expand": 0}


def test_table3_says_when_a_symmetric_family_forces_the_value_near_zero():
    # WEAT (-2, -1, 0, 1, 2) and RNSB its square (4, 1, 0, 1, 4): sum of x*y = 0, so r = 0 by
    # construction. Against |WEAT| (2, 1, 0, 1, 2): deviations (.8, -.2, -1.2, -.2, .8) and
    # (2, -1, -2, -1, 2), r = 6 / sqrt(2.8 * 14) = 0.958.
    table = _table([-2.0, -1, 0, 1, 2], [4.0, 1, 0, 1, 4])
    rows = correlation_table(["weat_weat7", "rnsb_attributes_weat7"], table)
    members = {
        "reduce-1": _member("reduce-1", "reduce", 1.0),
        "reduce-0.5": _member("reduce-0.5", "reduce", 0.5),
        "original": _member("original", "none", 1.0),
        "amplify-0.5": _member("amplify-0.5", "amplify", 0.5),
        "amplify-1": _member("amplify-1", "amplify", 1.0),
    }
    results = {"correlations": rows, "family": "variant", "members": members, "table": table}
    text = PAPER_LAYOUTS["table3"](results, {"weat7": -0.015})
    assert "| weat7 | 0.000 ‡ near 0 by construction | -0.015 |" in text
    assert "Pearson r of RNSB with |WEAT value|: weat7 0.96" in text
    # Without an amplify twin for each reduce member, nothing is forced and nothing is said.
    del members["amplify-1"]
    assert "‡" not in PAPER_LAYOUTS["table3"](results, {"weat7": -0.015})
    # Not run: the paper's value alone.
    assert "| weat7 | not run | -0.015 | not run | 0 |" in PAPER_LAYOUTS["table3"](
        None, {"weat7": -0.015}
    )
