"""The combined demo report: index.md links, index.html tables, inline figures, folded reports."""

from __future__ import annotations

import base64
from pathlib import Path

from bias_hub.pipelines.common.render import markdown_html
from bias_hub.pipelines.report_index import stage_table, write_index

# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def _summaries(out: Path) -> list[dict]:
    (out / "nli" / "plots").mkdir(parents=True)
    (out / "nli" / "plots" / "bias_by_rate.png").write_bytes(PNG)
    (out / "nli" / "report.md").write_text(
        "# NLI\n\n![bias](plots/bias_by_rate.png)\n\nSee [the results](results.json).\n",
        encoding="utf-8",
    )
    (out / "embeddings").mkdir()
    return [
        {
            "part": "nli",
            "title": "NLI meta-evaluation",
            "summary": "| rate | s |\n|---|---|\n| 0.5 | 0.333 |\n\n<script>alert(1)</script>",
            "report": "report.md",
            "seconds": 1.5,
        },
        {
            "part": "embeddings",
            "title": "Embeddings",
            "summary": "No figures here.",
            "seconds": 0.2,
        },
    ]


def test_index_md_and_html_hold_every_part(tmp_path: Path) -> None:
    index = write_index(tmp_path, _summaries(tmp_path))
    assert index == tmp_path / "index.md"
    markdown = index.read_text(encoding="utf-8")
    assert "## NLI meta-evaluation" in markdown and "## Embeddings" in markdown
    assert "Full report: [report.md](nli/report.md)" in markdown

    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>")
    assert "<th>rate</th>" in page and "<td>0.333</td>" in page
    # The figure is embedded, so the page stands alone.
    assert f'src="data:image/png;base64,{base64.b64encode(PNG).decode()}"' in page
    assert "<figcaption>nli/plots/bias_by_rate.png</figcaption>" in page
    # The folded full report points into the part's folder.
    assert '<a href="nli/report.md">report.md</a>' in page
    assert '<img src="nli/plots/bias_by_rate.png" alt="bias"' in page
    assert '<a href="nli/results.json">the results</a>' in page
    # The report's own title sits below the part's h2.
    assert "<h3>NLI</h3>" in page and "<h1>NLI</h1>" not in page
    # Raw HTML in a summary is shown, not run.
    assert "<script>" not in page and "&lt;script&gt;" in page
    # A part without figures or report has its section and nothing else.
    embeddings = page.split('<section id="embeddings">')[1]
    assert "<figure>" not in embeddings and "<details>" not in embeddings


def test_markdown_html_keeps_absolute_links() -> None:
    html = markdown_html("[a](https://example.org/x) [b](#top) [c](c.md)", base="part")
    assert 'href="https://example.org/x"' in html
    assert 'href="#top"' in html
    assert 'href="part/c.md"' in html


def test_index_shows_the_time_per_stage_and_which_run_each_part_came_from(tmp_path: Path) -> None:
    (tmp_path / "nli").mkdir()
    (tmp_path / "jbbq").mkdir()
    (tmp_path / "jbbq" / "old_figure.png").write_bytes(PNG)
    entries = [
        {
            "part": "nli",
            "title": "NLI",
            "summary": "s follows r.",
            "seconds": 300.04,
            "status": "ok",
            "stages": [
                {"stage": "base model", "seconds": 40.0},
                {"stage": "seed 0", "seconds": 80.5},
            ],
            "run": "2026-11-23T10:00:00",
            "finished": "2026-11-23T10:05:00",
            "log": "logs/nli.log",
        },
        {
            "part": "jbbq",
            "title": "JBBQ",
            "status": "failed",
            "error": "ValueError: no rows",
            "seconds": 2.0,
            "run": "2026-11-22T09:00:00",
            "finished": "2026-11-22T09:00:02",
            "log": "logs/jbbq.log",
        },
    ]
    run = {
        "started": "2026-11-23T10:00:00",
        "seconds": 311.5,
        "parts": ["nli"],
        "startup_seconds": 9.4,
    }
    prior = [
        {"stage": "setup", "seconds": 60.0, "run": "2026-11-23T10:00:00"},
        {"stage": "datasets", "seconds": 30.5, "run": "2026-11-23T10:00:00"},
    ]
    assert stage_table(entries, prior, run).splitlines() == [
        "| stage | seconds | ran |",
        "|---|---:|---|",
        "| setup | 60.0 | before this run |",
        "| datasets | 30.5 | before this run |",
        "| start-up (interpreter, library imports) | 9.4 | this run |",
        "| nli | 300.0 | this run |",
        "| nli: base model | 40.0 |  |",
        "| nli: seed 0 | 80.5 |  |",
        "| jbbq (failed) | 2.0 | run of 2026-11-22 09:00:02 |",
        "| this run, wall (nli) | 311.5 |  |",
        "| total with the stages before it | 402.0 |  |",  # 60 + 30.5 + 311.5
    ]
    # A build the demo ran while its libraries loaded is inside the start-up: shown, not added;
    # parts run side by side say their times overlap.
    during = [prior[0], {**prior[1], "during_startup": True}]
    table = stage_table(entries, during, {**run, "jobs": 2}).splitlines()
    assert table[3] == "| datasets | 30.5 | this run, during the start-up |"
    assert table[-2] == "| this run, wall (nli; 2 at a time, their times overlap) | 311.5 |  |"
    assert table[-1] == "| total with the stages before it | 371.5 |  |"  # 60 + 311.5
    # Stages given for an earlier run are labelled with it, and no total is made from them.
    earlier = [{"stage": "setup", "seconds": 60.0, "run": "2026-11-22T09:00:00.123456"}]
    table = stage_table(entries, earlier, run)
    assert (
        "| setup | 60.0 | before the run of 2026-11-22 09:00:00 |" in table and "total" not in table
    )

    markdown = write_index(tmp_path, entries, prior, run).read_text(encoding="utf-8")
    assert markdown.index("## Time per stage") < markdown.index("## NLI")
    assert "_Ran in 300.04 s (this run); log: [logs/nli.log](logs/nli.log)._" in markdown
    assert (
        "**Failed** (run of 2026-11-22 09:00:02, after 2.0 s): `ValueError: no rows`. "
        "See the log, [logs/jbbq.log](logs/jbbq.log)."
    ) in markdown
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "<td>nli: base model</td>" in page
    # A failed part shows its error, not what an earlier run left in its folder.
    jbbq = page.split('<section id="jbbq">')[1]
    assert "<figure>" not in jbbq and '<a href="logs/jbbq.log">' in jbbq
