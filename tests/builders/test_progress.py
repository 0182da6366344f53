"""``console.progress``: a bar with rate and time left on a terminal, a line every ~10 % in a log,
nothing under ``-q``. A fake clock makes each item take a known time, so every line's numbers are
worked out by hand."""

from __future__ import annotations

import io
import re
import time

import pytest

from bias_hub.builders.shared import console


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(console, "_clock", fake)
    console.configure(0)
    yield fake
    console.configure(0)


def _run(items, clock: Clock, seconds_each: float, **options) -> list:
    seen = []
    for item in console.progress(items, **options):
        clock.now += seconds_each  # the work on this item
        seen.append(item)
    return seen


def _lines(text: str, desc: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(f"{desc}:")]


def test_without_a_terminal_a_long_loop_logs_every_tenth_with_rate_and_time_left(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    # 100 questions, 2 s each: 200 s in all.
    assert _run(list(range(100)), clock, 2.0, desc="basic 0-shot", unit="q") == list(range(100))
    lines = _lines(capsys.readouterr().err, "basic 0-shot")
    assert len(lines) == 10
    # After 10 questions: 20 s gone, 0.5 q/s, 90 questions left = 180 s = 03:00.
    assert lines[0] == "basic 0-shot: 10% (10/100 q), 2.0 s/q, 03:00 left"
    assert lines[4] == "basic 0-shot: 50% (50/100 q), 2.0 s/q, 01:40 left"
    assert lines[-1] == "basic 0-shot: 100% (100/100 q), 2.0 s/q, 00:00 left"


def test_rates_above_one_per_second_and_uneven_tenths(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    # 25 items at 0.5 s: 12.5 s in all; tenths fall at items 3, 5, 8, 10, ... (floor(10 n / 25)).
    _run(range(25), clock, 0.5, desc="rows", total=25, unit="rows")
    lines = _lines(capsys.readouterr().err, "rows")
    assert len(lines) == 10
    # Item 3: 1.5 s gone, 2 rows/s, 22 rows left = 11 s.
    assert lines[0] == "rows: 12% (3/25 rows), 2.0 rows/s, 00:11 left"
    assert lines[-1] == "rows: 100% (25/25 rows), 2.0 rows/s, 00:00 left"


def test_a_short_loop_stays_silent(clock: Clock, capsys: pytest.CaptureFixture[str]) -> None:
    # 100 items at 0.05 s: 5 s in all, under the 10 s worth a line.
    _run(range(100), clock, 0.05, desc="short")
    assert _lines(capsys.readouterr().err, "short") == []


def test_a_loop_that_slows_down_starts_reporting_once_it_is_long(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    seen = []
    for i in console.progress(range(10), desc="uneven"):
        clock.now += 0.1 if i < 5 else 3.0  # 0.5 s for the first half, then 3 s per item
        seen.append(i)
    lines = _lines(capsys.readouterr().err, "uneven")
    # Item 6 ends at 3.5 s, on course for 10 * 3.5 / 6 = 5.8 s: silent. Item 7 ends at 6.5 s,
    # on course for 9.3 s: silent. Item 8 at 9.5 s, on course for 11.9 s: reported.
    assert [line.split(" (")[0] for line in lines] == ["uneven: 80%", "uneven: 90%", "uneven: 100%"]
    assert seen == list(range(10))


def test_an_unknown_total_logs_every_half_minute(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    _run((i for i in range(65)), clock, 1.0, desc="pairs", unit="pairs")
    assert _lines(capsys.readouterr().err, "pairs") == [
        "pairs: 30 pairs, 1.0 pairs/s, 00:30 elapsed",
        "pairs: 60 pairs, 1.0 pairs/s, 01:00 elapsed",
    ]


def test_quiet_or_disabled_shows_nothing_and_passes_every_item(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(range(20), clock, 2.0, desc="off", enabled=False) == list(range(20))
    console.configure(-1)
    assert _run(range(20), clock, 2.0, desc="quiet") == list(range(20))
    assert capsys.readouterr().err == ""


def test_on_a_terminal_the_bar_shows_count_rate_and_time_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    terminal = Terminal()
    console.configure(0)
    monkeypatch.setitem(console._state, "console", terminal)
    seen = []
    for item in console.progress(range(30), desc="generate", unit="q"):
        time.sleep(0.02)  # tqdm redraws at most every 0.1 s
        seen.append(item)
    assert seen == list(range(30))
    # tqdm's meter: done/total [elapsed<remaining, rate]
    drawn = terminal.getvalue()
    assert re.search(r"generate: +\d+%\|.*\| \d+/30 \[\d\d:\d\d<\d\d:\d\d, +[\d.]+q/s\]", drawn), (
        drawn
    )


def test_a_meter_counts_work_done_outside_a_loop(
    clock: Clock, capsys: pytest.CaptureFixture[str]
) -> None:
    # Models coming back from workers, 30 s each.
    with console.progress_meter("meta-evaluation", total=4, unit="model") as advance:
        for _ in range(4):
            clock.now += 30.0
            advance(1)
    assert _lines(capsys.readouterr().err, "meta-evaluation") == [
        "meta-evaluation: 25% (1/4 model), 30.0 s/model, 01:30 left",
        "meta-evaluation: 50% (2/4 model), 30.0 s/model, 01:00 left",
        "meta-evaluation: 75% (3/4 model), 30.0 s/model, 00:30 left",
        "meta-evaluation: 100% (4/4 model), 30.0 s/model, 00:00 left",
    ]
    with console.progress_meter("off", total=4, enabled=False) as advance:
        advance(4)
    assert capsys.readouterr().err == ""
