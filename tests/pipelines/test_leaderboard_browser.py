"""leaderboard.html in a real browser: headless Chromium opens the static page, runs its script
(no console message, nothing fetched), shows every row, and sorts a column as worked out by hand.

CI installs Chromium (`.ci/run`, Debian's `chromium`); where that cannot happen it sets
BIAS_HUB_SKIP_BROWSER with the reason and the test skips saying so. Anywhere else a missing
browser fails the test, naming the install command.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from jbbq_fixtures import write_score_runs

from bias_hub.pipelines.cli import main

SKIP = os.environ.get("BIAS_HUB_SKIP_BROWSER")
# As root on a closed network: no sandbox, no GPU, no background fetches or first-run work.
FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
]


@pytest.mark.slow
@pytest.mark.timeout(600)
def test_the_page_shows_every_row_and_sorts_in_a_real_browser(tmp_path: Path) -> None:
    if SKIP:
        pytest.skip(f"BIAS_HUB_SKIP_BROWSER: {SKIP}")
    browser = shutil.which("chromium")
    assert browser, (
        "no chromium: `apt-get install -y --no-install-recommends chromium` (CI installs it)"
    )
    runs = write_score_runs(tmp_path)
    out = tmp_path / "board"
    code = main(
        [
            "leaderboard",
            str(runs / "gold"),
            str(runs / "stereotyped"),
            "study:jbbq",
            "--out",
            str(out),
            "-q",
        ]
    )
    assert code == 0
    page = out / "leaderboard.html"
    assert "http://" not in page.read_text(encoding="utf-8") and "https://" not in page.read_text(
        encoding="utf-8"
    )
    # First by ambiguous accuracy: gold (1) before stereotyped (0). Opened sorted by s_AMB: gold
    # answered every ambiguous question "unknown", so its s_AMB is undefined (-) and sorts last.
    done = subprocess.run(
        [
            browser,
            *FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            f"{page.as_uri()}#sort=bias_score_ambiguous",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    console = [line for line in done.stderr.splitlines() if ":CONSOLE" in line]
    assert console == [], console
    dom = done.stdout
    assert 'data-sortable="ready"' in dom  # the script ran to its end
    first = dom.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    assert re.findall(r'data-model="([^"]+)"', first) == ["stereotyped", "gold"]
    # Every row of every table, the paper's included.
    models = set(re.findall(r'data-model="([^"]+)"', dom))
    assert {
        "gold",
        "stereotyped",
        "llm-jp/llm-jp-13b-v1.0",
        "matsuo-lab/weblab-10b-instruction-sft",
    } <= models
