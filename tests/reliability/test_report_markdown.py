"""Names a user chose (a model folder, a vectors file, a category of their own data, a study's
run folder) cannot write Markdown into any part's report: no link, heading or emphasis of
theirs, and no table loses or gains a column.

Each report is rendered from a results record holding one hostile name and parsed back with
markdown-it, the parser the combined report uses.
"""

from __future__ import annotations

from pathlib import Path

from markdown_it import MarkdownIt

# A pipe (ends a table cell), a backtick (ends a code span), a link, emphasis and a heading.
EVIL = "my|model`](https://evil.example) **loud**\n# Heading"


def _tokens(markdown: str) -> list:
    parser = MarkdownIt("commonmark", {"html": False}).enable("table")
    flat = []
    for token in parser.parse(markdown):
        flat += [token, *(token.children or [])]
    return flat


def _assert_inert(markdown: str) -> None:
    tokens = _tokens(markdown)
    assert not [t for t in tokens if t.type == "link_open"], markdown
    emphasised = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "strong_open"]
    assert "loud" not in emphasised, markdown
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert "Heading" not in headings, headings
    # Every row of every table has its header's number of cells.
    cells, width = 0, None
    for token in tokens:
        if token.type == "tr_open":
            cells = 0
        elif token.type in ("th_open", "td_open"):
            cells += 1
        elif token.type == "tr_close":
            width = cells if width is None else width
            assert cells == width, markdown
        elif token.type == "table_close":
            width = None


def test_nli_tables_keep_a_hostile_model_name_in_its_cell() -> None:
    from bias_hub.pipelines.nli.report import PAPER_LAYOUTS

    models = {EVIL: {"bias_score": 0.25}, "other": {"bias_score": 0.5}}
    _assert_inert(PAPER_LAYOUTS["table4"]({"models": models}, {}))


def test_jbbq_tables_keep_a_hostile_category_and_model_in_their_cells() -> None:
    from bias_hub.pipelines.jbbq.report import run_table

    run = {"metrics": {"per_category": {EVIL: {"accuracy_ambiguous": 0.5}}}}
    _assert_inert(run_table(run))


def test_embeddings_tables_keep_a_hostile_vectors_name_in_its_cell() -> None:
    from bias_hub.pipelines.embeddings.report import scores_markdown

    row = {
        "embedding": EVIL,
        "test_id": "weat_1",
        "metric": "weat",
        "p_value": 0.01,
        "notes": [],
        "result": {"oov": {"X": ["a|b"]}},
        "values": [{"name": "effect size", "value": 0.5, "interval": None}],
    }
    _assert_inert(scores_markdown([row]))


def test_speciesism_tables_keep_a_hostile_model_label_in_its_cell() -> None:
    from bias_hub.pipelines.speciesism.report import negative_share_markdown

    model = {
        "label": EVIL,
        "sentiment": {"negative_share": {"cow": 0.5}, "overall_negative_share": 0.5},
    }
    _assert_inert(negative_share_markdown({"models": [model]}))


def test_the_reproduction_report_keeps_hostile_names_inert(tmp_path: Path) -> None:
    from bias_hub.pipelines.reproduce.run import render_reproduction

    record = {
        "study": "toy",
        "version": "1",
        "title": "Toy",
        "paper": {},
        "variant": None,
        "models": [EVIL],
        "overrides": {"step.limit": EVIL},
        "steps": [
            {"id": "count", "model": EVIL, "command": f"toy count --model {EVIL}", "out": "a|b"}
        ],
        "tables": [],
    }
    _assert_inert(render_reproduction(record, tmp_path).read_text(encoding="utf-8"))


def test_a_failed_part_s_error_in_the_demo_index_writes_no_markdown(tmp_path: Path) -> None:
    # An error message quotes what the user gave; a backtick in it ended the code span.
    from bias_hub.pipelines.report_index import write_index

    entry = {
        "part": "nli",
        "title": "NLI",
        "seconds": 1.0,
        "status": "failed",
        "error": f"ValueError: --model {EVIL}",
        "log": "logs/nli.log",
    }
    tokens = _tokens(write_index(tmp_path, [entry]).read_text(encoding="utf-8"))
    links = [t.attrs.get("href") for t in tokens if t.type == "link_open"]
    assert links == ["logs/nli.log"], links
    assert "loud" not in [
        tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "strong_open"
    ]


def test_a_pipe_after_an_escaped_backslash_gets_its_own_backslash() -> None:
    # GitHub's table rows (GFM) read two backslashes as an escaped backslash, so the "|" after it ends the
    # cell unless it is escaped itself (markdown-it splits rows more loosely, so this is
    # checked as text).
    from bias_hub.builders.shared.text import code_cell, markdown_table

    name = "C:\\models\\\\|odd"  # two backslashes, then the pipe
    row = markdown_table(["a", "b"], [[name, code_cell(name)]]).splitlines()[2]
    assert row == "| C:\\models\\\\\\|odd | `C:\\models\\\\\\|odd` |"


def test_a_step_folder_named_with_a_pipe_and_a_space_links_to_its_report(tmp_path: Path) -> None:
    from bias_hub.pipelines.report_index import broken_links
    from bias_hub.pipelines.reproduce.run import render_reproduction

    (tmp_path / "my run|2").mkdir()
    (tmp_path / "my run|2" / "report.md").write_text("# step\n", encoding="utf-8")
    record = {
        "study": "toy",
        "version": "1",
        "title": "Toy",
        "paper": {},
        "variant": None,
        "models": ["m"],
        "steps": [{"id": "count", "command": "toy count", "out": "my run|2"}],
        "tables": [],
    }
    report = render_reproduction(record, tmp_path)
    tokens = _tokens(report.read_text(encoding="utf-8"))
    assert [t.attrs.get("href") for t in tokens if t.type == "link_open"] == [
        "my%20run%7C2/report.md"
    ]
    assert broken_links(tmp_path, start="report.md") == []
