"""The combined demo report: ``index.md`` and ``index.html`` (``common/templates/index.*.j2``),
each starting with the time per stage, and ``broken_links``, which checks them. The HTML page
embeds every part's figures (base64: the page stands alone) and folds in its full report.
"""

from __future__ import annotations

import base64
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

from bias_hub.pipelines.common.render import (
    macros,
    markdown_targets,
    rebase_markdown_links,
    relative_target,
    write_report,
)

__all__ = ["broken_links", "rebase_markdown_links", "stage_table", "write_index"]

PARTS = "common/templates/index_parts.md.j2"


def _stage_rows(
    entries: list[dict], prior_stages: list[dict] | None, run: dict | None
) -> list[list[str]]:
    """(stage, seconds, when it ran) of the stages before the demo, each part, its steps, the run."""
    this_run = (run or {}).get("started")
    when = macros(PARTS).when
    rows = []
    for stage in prior_stages or []:
        this = this_run and stage.get("run") == this_run
        if this and stage.get("during_startup"):
            # run by the demo while its libraries loaded: inside the start-up's seconds
            ran = "this run, during the start-up"
        elif this:
            ran = "before this run"
        elif stage.get("run"):
            ran = f"before the run of {stage['run'][:19].replace('T', ' ')}"
        else:
            ran = "before the demo"
        rows.append([stage["stage"], f"{stage['seconds']:.1f}", ran])
    if run and run.get("startup_seconds") is not None:
        rows.append(
            ["start-up (interpreter, library imports)", f"{run['startup_seconds']:.1f}", "this run"]
        )
    for entry in entries:
        failed = " (failed)" if entry.get("status") == "failed" else ""
        rows.append([f"{entry['part']}{failed}", f"{entry['seconds']:.1f}", when(entry, run)])
        rows += [
            [f"{entry['part']}: {stage['stage']}", f"{stage['seconds']:.1f}", ""]
            for stage in entry.get("stages", [])
        ]
    if run and run.get("seconds") is not None:
        jobs = run.get("jobs", 1)
        # Parts that ran side by side: their seconds overlap, and add up to more than the wall.
        at_once = f"; {jobs} at a time, their times overlap" if jobs > 1 else ""
        wall = f"this run, wall ({', '.join(run.get('parts', []))}{at_once})"
        rows.append([wall, f"{run['seconds']:.1f}", ""])
        before = [
            s["seconds"]
            for s in prior_stages or []
            if this_run and s.get("run") == this_run and not s.get("during_startup")
        ]
        if before:
            rows.append(
                ["total with the stages before it", f"{sum(before) + run['seconds']:.1f}", ""]
            )
    return rows


def stage_table(
    entries: list[dict], prior_stages: list[dict] | None = None, run: dict | None = None
) -> str:
    """Markdown table of seconds per stage: before the demo, each part, the steps a part reports.

    ``run`` (this run's ``started``, ``seconds``, ``parts``, ``startup_seconds``, ``jobs``) adds the start-up,
    the run's wall time, and the total with the stages before it when they were given for it.
    """
    return macros(PARTS).stage_table(_stage_rows(entries, prior_stages, run))


def _sections(out_dir: Path, entries: list[dict]) -> list[dict]:
    """Per part, what the page shows besides its summary: every PNG figure it wrote (embedded,
    so the page stands alone) and its full report's text with the folder its links start from."""
    sections = []
    for entry in entries:
        part = out_dir / entry["part"]
        report = part / entry["report"] if entry.get("report") else None
        sections.append(
            {
                "entry": entry,
                "figures": [
                    (
                        png.relative_to(out_dir).as_posix(),
                        base64.b64encode(png.read_bytes()).decode(),
                    )
                    for png in sorted(part.rglob("*.png"))
                ],
                "report": report.read_text(encoding="utf-8")
                if report and report.is_file()
                else None,
                "report_base": f"{entry['part']}/{entry.get('report')}".rsplit("/", 1)[0],
            }
        )
    return sections


class _Targets(HTMLParser):
    """The href/src values and element ids of an HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            elif (
                name in ("href", "src")
                and value
                and tag in ("a", "img", "link", "script", "source")
            ):
                self.targets.append(value)


def _missing(page: Path, label: str, target: str, ids: set[str] | None) -> str | None:
    """Why ``target`` (as written in ``page``) does not resolve, or None when it does."""
    if target.startswith("#"):
        if ids is not None and target[1:] not in ids:
            return f"{label}: {target} names no element of the page"
        return None
    if not relative_target(target):
        return None  # absolute URLs and data: URIs are not files of the report
    path = _file_of(target)
    if path and not (page.parent / path).exists():
        return f"{label}: {target} -> {page.parent / path} does not exist"
    return None


def _file_of(target: str) -> str:
    return unquote(target.split("#", 1)[0].split("?", 1)[0])


def broken_links(out_dir: str | Path, start: str = "index.md") -> list[str]:
    """Every link and image of ``index.html`` and ``start`` (``index.md``; a reproduction's
    ``report.md``) in ``out_dir`` that does not resolve (a missing file, an in-page anchor with
    no element), one line each; also those of every Markdown file inside ``out_dir`` they link
    to (the parts' reports), each read relative to its own folder. Empty when all resolve."""
    out_dir = Path(out_dir).resolve()
    problems: list[str] = []
    queue: list[Path] = []
    page = out_dir / "index.html"
    if page.is_file():
        parser = _Targets()
        parser.feed(page.read_text(encoding="utf-8"))
        problems += [
            p for t in parser.targets if (p := _missing(page, "index.html", t, parser.ids))
        ]
        queue += [page.parent / _file_of(t) for t in parser.targets if relative_target(t)]
    queue.insert(0, out_dir / start)
    seen: set[Path] = set()
    for page in queue:
        page = page.resolve()
        if (
            page in seen
            or page.suffix != ".md"
            or not page.is_file()
            or not page.is_relative_to(out_dir)
        ):
            continue
        seen.add(page)
        label = page.relative_to(out_dir).as_posix()
        targets = markdown_targets(page.read_text(encoding="utf-8"))
        problems += [p for t in targets if (p := _missing(page, label, t, None))]
        queue += [page.parent / _file_of(t) for t in targets if relative_target(t)]
    return problems


def write_index(
    out_dir: Path,
    entries: list[dict],
    prior_stages: list[dict] | None = None,
    run: dict | None = None,
) -> Path:
    """Write ``index.md`` and ``index.html`` into ``out_dir``; return the Markdown one.

    ``entries``: one per part, in order (``part``, ``title``, ``seconds``, and ``summary``,
    ``report``, ``stages``, ``status``, ``error``, ``run``, ``finished``, ``log`` where known);
    ``prior_stages``: ``{"stage", "seconds"}`` rows that ran before the demo; ``run``: this
    run's ``started``, ``seconds`` and ``parts``.
    """
    out_dir = Path(out_dir)
    stages = _stage_rows(entries, prior_stages, run)
    context = {"stages": stages, "run": run}
    index = write_report(
        out_dir, "common/templates/index.md.j2", name="index.md", entries=entries, **context
    )
    sections = _sections(out_dir, entries)
    write_report(
        out_dir, "common/templates/index.html.j2", name="index.html", sections=sections, **context
    )
    return index
