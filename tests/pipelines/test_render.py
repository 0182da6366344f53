"""The one report renderer (pipelines/common/render.py): what every template may rely on."""

from __future__ import annotations

from pathlib import Path

import pytest

from bias_hub.pipelines.common.render import (
    macros,
    markdown_html,
    paper_layouts,
    render,
    save_figure,
    write_report,
)
from bias_hub.pipelines.report_index import write_index

EVIL = '<script>alert(1)</script> & "q"'


def test_the_preset_block_lists_each_departure_with_its_section(tmp_path: Path) -> None:
    record = {
        "name": "paper",
        "departures": [
            {"setting": "shots", "preset": [4], "used": [0], "section": "§5.2"},
            {"setting": "split", "preset": "all", "used": "train", "section": None},
        ],
    }
    text = render("common/templates/preset.md.j2", results={"preset": record})
    assert text == (
        "Preset `paper`, with these departures from it:\n\n"
        "- `shots`: [0] instead of [4] (§5.2)\n"
        "- `split`: 'train' instead of 'all'\n\n"
    )
    no_departure = {"preset": {"name": "paper", "departures": []}}
    assert render("common/templates/preset.md.j2", results=no_departure) == (
        "Preset `paper`, no departures.\n\n"
    )
    assert render("common/templates/preset.md.j2", results={"preset": None}) == ""


def test_a_key_the_results_lack_is_a_key_error_naming_the_template(tmp_path: Path) -> None:
    with pytest.raises(
        KeyError, match=r"score/templates/report\.md\.j2: 'dict object' has no attribute"
    ):
        write_report(tmp_path, "score/templates/report.md.j2", results={"intervals": {}})
    assert not (tmp_path / "report.md").exists()


def test_the_index_page_escapes_every_name_as_html(tmp_path: Path) -> None:
    # A title and a summary are the parts' text; a part's title is shown as it is, never as markup.
    entry = {
        "part": "nli",
        "title": EVIL,
        "seconds": 1.0,
        "summary": f"a table cell: {EVIL}",
        "log": "logs/nli.log",
    }
    write_index(tmp_path, [entry])
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "<script>" not in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") == 3  # toc, heading, summary


def test_markdown_html_escapes_raw_html_and_moves_headings_and_links() -> None:
    html = markdown_html("# T\n\n<b>x</b> [r](r.md) ![f](f.png)", base="part", shift_headings=2)
    assert "<h3>T</h3>" in html and "&lt;b&gt;x&lt;/b&gt;" in html
    assert 'href="part/r.md"' in html and '<a href="part/f.png"><img src="part/f.png"' in html


def test_macros_see_the_helpers_they_are_given() -> None:
    # nli's Table 4 layout ranks with the part's helper: ties share a rank.
    from bias_hub.pipelines.nli import report

    models = {"a": {"bias_score": 0.5}, "b": {"bias_score": 0.5}, "c": {"bias_score": 0.1}}
    table = macros(report.TABLES, **report.HELPERS).comparison(
        {name: {**m, "fractions": {}} for name, m in models.items()}
    )
    assert [line.split(" | ")[1] for line in table.splitlines()[2:5]] == ["1", "1", "3"]


def test_paper_layouts_call_the_macros_of_their_names() -> None:
    layouts = paper_layouts("stereoset/templates/paper.md.j2", "figure2")
    printed = {"pairs": 2111, "gender_words": "30 + 30", "correlation": "positive"}
    assert list(layouts) == ["figure2"]
    assert layouts["figure2"](None, printed).splitlines()[2] == "| pairs | 2111 | not run |"


def test_save_figure_writes_the_png_and_closes_the_figure(tmp_path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axis = plt.subplots()
    axis.plot([0, 1], [0, 1])
    path = save_figure(figure, tmp_path / "f.png", dpi=50)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not plt.get_fignums()
