"""Every link and image of the demo report resolves: the walker, the index it walks, the demo.

The walker runs on a small report made here (fast, with planted breaks it must find) and on
the demo's own output when ``make demo`` has written it (``reports/demo``).
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from bias_hub.pipelines.report_index import broken_links, rebase_markdown_links, write_index

REPO_ROOT = Path(__file__).resolve().parents[2]
DEMO = REPO_ROOT / "reports" / "demo"
# A 1x1 transparent PNG.
PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
)


def _report(
    out: Path,
    summary: str = "See [the results](results.json) and ![rates](plots/rates.png).",
    report: str = "# NLI\n\n![rates](plots/rates.png)\n\n[results](results.json) [top](#nli)\n",
) -> Path:
    (out / "nli" / "plots").mkdir(parents=True)
    (out / "nli" / "plots" / "rates.png").write_bytes(PNG)
    (out / "nli" / "results.json").write_text("{}", encoding="utf-8")
    (out / "nli" / "report.md").write_text(report, encoding="utf-8")
    (out / "logs").mkdir()
    (out / "logs" / "nli.log").write_text("", encoding="utf-8")
    entries = [
        {
            "part": "nli",
            "title": "NLI",
            "summary": summary,
            "report": "report.md",
            "seconds": 1.0,
            "log": "logs/nli.log",
        }
    ]
    write_index(out, entries)
    return out


def test_a_sound_report_has_no_broken_link(tmp_path: Path) -> None:
    out = _report(tmp_path)
    assert broken_links(out) == []
    markdown = (out / "index.md").read_text(encoding="utf-8")
    # The summary is written relative to nli/; index.md sits one level up.
    assert "See [the results](nli/results.json) and ![rates](nli/plots/rates.png)." in markdown
    page = (out / "index.html").read_text(encoding="utf-8")
    # Figures open full size: the embedded thumbnail and every report image link to the file.
    assert '<figure><a href="nli/plots/rates.png"><img src="data:image/png;base64,' in page
    assert '<a href="nli/plots/rates.png"><img src="nli/plots/rates.png" alt="rates"' in page
    # Wide tables scroll instead of being cut off.
    assert "overflow-x: auto" in page.split("</style>")[0]


def test_planted_breaks_are_each_named(tmp_path: Path) -> None:
    out = _report(
        tmp_path,
        # Written relative to the report folder, as the JBBQ summary's doubled path was.
        summary="![figure](nli/plots/rates.png)",
        report="[elsewhere](../speciesism/report.md) [ok](results.json) ![gone](plots/gone.png)\n",
    )
    (out / "index.html").write_text(
        (out / "index.html")
        .read_text(encoding="utf-8")
        .replace("</body>", '<a href="#nowhere">x</a></body>'),
        encoding="utf-8",
    )
    broken = broken_links(out)
    assert sorted(line.split(" -> ")[0] for line in broken) == sorted(
        [
            "index.html: nli/nli/plots/rates.png",  # summary image
            "index.html: nli/nli/plots/rates.png",  # the same image's link to itself
            "index.html: #nowhere names no element of the page",
            "index.html: nli/../speciesism/report.md",
            "index.html: nli/plots/gone.png",
            "index.html: nli/plots/gone.png",
            "index.md: nli/nli/plots/rates.png",
            "nli/report.md: ../speciesism/report.md",
            "nli/report.md: plots/gone.png",
        ]
    )
    assert f"-> {out / 'nli' / 'nli' / 'plots' / 'rates.png'} does not exist" in broken[0]


def test_rebasing_moves_relative_targets_only() -> None:
    text = '[a](a.md) [b](https://x.org/b.md) [c](#c) ![d](<d e.png>) [e](e.md "title")'
    assert rebase_markdown_links(text, "part") == (
        '[a](part/a.md) [b](https://x.org/b.md) [c](#c) ![d](<part/d e.png>) [e](part/e.md "title")'
    )


def test_demo_says_when_its_report_has_a_broken_link(tmp_path: Path, monkeypatch) -> None:
    import types

    from bias_hub.builders.shared import console
    from bias_hub.pipelines import demo as demo_driver

    def run_demo(out_dir: Path) -> dict:
        out_dir.mkdir(parents=True, exist_ok=True)
        return {"title": "Broken", "summary": "[missing](missing.json)"}

    part = types.ModuleType("bias_hub.pipelines.broken.demo")
    part.ORDER, part.run_demo = 1, run_demo
    monkeypatch.setattr(demo_driver, "demo_parts", lambda: [part])
    console.configure(0)
    try:
        demo_driver.demo(tmp_path / "demo")
    finally:
        console.configure(0)
    lines = (tmp_path / "demo" / "logs" / "demo.log").read_text(encoding="utf-8").splitlines()
    warnings = [
        line.split(" WARNING bias_hub.pipelines.demo: ", 1)[1]
        for line in lines
        if " WARNING " in line
    ]
    # The summary's link, in index.html and in index.md: one line on the console, each in the log.
    assert warnings == [
        "demo: 2 link(s) of the report do not resolve, e.g. index.html: broken/missing.json -> "
        f"{tmp_path / 'demo' / 'broken' / 'missing.json'} does not exist (all of them in "
        f"{tmp_path / 'demo' / 'logs' / 'demo.log'})"
    ]
    assert sum("broken link: index" in line for line in lines) == 2


@pytest.mark.skipif(
    not (DEMO / "index.html").is_file(), reason="no demo report: run `make demo` first"
)
def test_the_demo_report_has_no_broken_link() -> None:
    broken = broken_links(DEMO)
    assert broken == [], "\n".join(broken)
