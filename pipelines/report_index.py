"""The combined demo report: ``index.md`` linking every part that ran, and ``index.html``.

Both start with the time per stage (the stages before the demo, each part and
the steps it reports). The HTML page renders each part's summary tables, shows
every PNG figure the part wrote (embedded as base64, so the page stands alone),
and folds in the part's full report with its links and images pointing into the
part's folder. A part whose last run failed shows the error and its log instead.
"""

from __future__ import annotations

import base64
import html
import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.builders.shared.text import code_span

__all__ = [
    "broken_links",
    "index_html",
    "rebase_markdown_links",
    "render_markdown",
    "stage_table",
    "write_index",
]

INTRO = (
    "Every part below ran on the embedded defaults (`bias-hub demo`). Models in the demo are "
    "tiny ones created on the spot or small registry-shipped ones: their numbers show that "
    "the pipeline works end to end, not how biased any real model is."
)
# href/src values left alone: absolute URLs, in-page anchors, data URIs, absolute paths.
_NOT_RELATIVE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|#|/)")
STYLE = """
body { font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: #1b1b1b; }
/* A table wider than the page scrolls sideways instead of being cut off. */
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; display: block; max-width: 100%;
        overflow-x: auto; }
th, td { border: 1px solid #c8c8c8; padding: 0.25rem 0.6rem; text-align: left; }
th { background: #f1f1f1; }
figure { display: inline-block; margin: 0.5rem; vertical-align: top; }
figure img, details img { max-width: 28rem; border: 1px solid #e0e0e0; }
img { max-width: 100%; }
figcaption { font-size: 0.8rem; color: #555; }
details { margin: 1rem 0; }
section { border-top: 2px solid #e6e6e6; margin-top: 2rem; }
code { background: #f4f4f4; padding: 0 0.2rem; }
""".strip()


def _when(entry: dict, run: dict | None) -> str:
    if run and entry.get("run") == run.get("started"):
        return "this run"
    finished = entry.get("finished")
    return f"run of {finished.replace('T', ' ')}" if finished else "an earlier run"


def stage_table(
    entries: list[dict], prior_stages: list[dict] | None = None, run: dict | None = None
) -> str:
    """Markdown table of seconds per stage: before the demo, each part, the steps a part reports.

    ``run`` (this run's ``started``, ``seconds``, ``parts``, ``startup_seconds``, ``jobs``) adds the start-up,
    the run's wall time, and the total with the stages before it when they were given for it.
    """
    this_run = (run or {}).get("started")
    rows = []
    for stage in prior_stages or []:
        this = this_run and stage.get("run") == this_run
        when = (
            # run by the demo while its libraries loaded: inside the start-up's seconds
            "this run, during the start-up"
            if this and stage.get("during_startup")
            else "before this run"
            if this
            else (
                f"before the run of {stage['run'][:19].replace('T', ' ')}"
                if stage.get("run")
                else "before the demo"
            )
        )
        rows.append([stage["stage"], f"{stage['seconds']:.1f}", when])
    if run and run.get("startup_seconds") is not None:
        rows.append(
            ["start-up (interpreter, library imports)", f"{run['startup_seconds']:.1f}", "this run"]
        )
    for entry in entries:
        failed = " (failed)" if entry.get("status") == "failed" else ""
        rows.append([f"{entry['part']}{failed}", f"{entry['seconds']:.1f}", _when(entry, run)])
        rows += [
            [f"{entry['part']}: {stage['stage']}", f"{stage['seconds']:.1f}", ""]
            for stage in entry.get("stages", [])
        ]
    if run and run.get("seconds") is not None:
        jobs = run.get("jobs", 1)
        # Parts that ran side by side: their seconds overlap, and add up to more than the wall.
        at_once = f"; {jobs} at a time, their times overlap" if jobs > 1 else ""
        rows.append(
            [
                f"this run, wall ({', '.join(run.get('parts', []))}{at_once})",
                f"{run['seconds']:.1f}",
                "",
            ]
        )
        before = [
            s["seconds"]
            for s in prior_stages or []
            if this_run and s.get("run") == this_run and not s.get("during_startup")
        ]
        if before:
            rows.append(
                ["total with the stages before it", f"{sum(before) + run['seconds']:.1f}", ""]
            )
    lines = ["| stage | seconds | ran |", "|---|---:|---|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _footer(entry: dict, run: dict | None) -> str:
    footer = f"Ran in {entry['seconds']} s"
    if entry.get("run") or entry.get("finished"):
        footer += f" ({_when(entry, run)})"
    if entry.get("log"):
        footer += f"; log: [{entry['log']}]({entry['log']})"
    return f"_{footer}._"


def _failure(entry: dict, run: dict | None) -> str:
    return (
        f"**Failed** ({_when(entry, run)}, after {entry['seconds']} s): {code_span(entry.get('error', 'unknown error'))}. "
        f"See the log, [{entry.get('log')}]({entry.get('log')}). Files left in `{entry['part']}/` by an "
        "earlier run are not shown here."
    )


def _index_markdown(entries: list[dict], prior_stages: list[dict] | None, run: dict | None) -> str:
    lines = [
        "# bias-hub demo report",
        "",
        INTRO,
        "",
        "## Time per stage",
        "",
        stage_table(entries, prior_stages, run),
        "",
    ]
    for entry in entries:
        lines.append(f"## {entry['title']}")
        lines.append("")
        if entry.get("status") == "failed":
            lines += [_failure(entry, run), ""]
            continue
        if entry.get("report"):
            lines.append(f"Full report: [{entry['report']}]({entry['part']}/{entry['report']})")
            lines.append("")
        if entry.get("summary"):
            # The summary's links are relative to the part's folder; index.md is one level up.
            lines.append(rebase_markdown_links(entry["summary"].strip(), entry["part"]))
            lines.append("")
        lines.append(_footer(entry, run))
        lines.append("")
    return "\n".join(lines)


def _relative(target: object) -> bool:
    return isinstance(target, str) and bool(target) and not _NOT_RELATIVE.match(target)


def _link_images_to_themselves(children: list) -> list:
    """Wrap each image that is not already inside a link in a link to its own file, so a
    thumbnail opens full size."""
    from markdown_it.token import Token

    out, depth = [], 0
    for child in children:
        if child.type == "link_open":
            depth += 1
        elif child.type == "link_close":
            depth -= 1
        if child.type == "image" and depth == 0 and child.attrGet("src"):
            opening = Token("link_open", "a", 1)
            opening.attrSet("href", child.attrGet("src"))
            out += [opening, child, Token("link_close", "a", -1)]
        else:
            out.append(child)
    return out


def render_markdown(text: str, base: str = "", shift_headings: int = 0) -> str:
    """Markdown (CommonMark + tables, raw HTML escaped) to HTML.

    Relative link and image targets are prefixed with ``base`` so that a part's
    report, shown inside the index, still points into the part's folder; its
    headings move ``shift_headings`` levels down, below the part's own heading.
    Every image links to its own file (a figure opens full size).
    """
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    tokens = md.parse(text)
    for token in tokens:
        if shift_headings and token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + shift_headings)}"
        if token.children:
            token.children = _link_images_to_themselves(token.children)
    if base:
        prefix = base.rstrip("/") + "/"
        for token in tokens:
            for child in token.children or []:
                for attr in ("src", "href"):
                    value = child.attrGet(attr)
                    if _relative(value):
                        child.attrSet(attr, prefix + value)
    return md.renderer.render(tokens, md.options, {})


def _markdown_targets(text: str) -> list[str]:
    """Every link and image target of a Markdown text, in order."""
    from markdown_it import MarkdownIt

    targets = []
    for token in MarkdownIt("commonmark", {"html": False}).enable("table").parse(text):
        for child in token.children or []:
            for attr in ("href", "src"):
                value = child.attrGet(attr)
                if isinstance(value, str) and value:
                    targets.append(value)
    return targets


def rebase_markdown_links(text: str, base: str) -> str:
    """Markdown whose relative link and image targets point into ``base``: a part's summary,
    written relative to the part's folder, shown in the index one folder up."""
    prefix = base.rstrip("/") + "/"
    # markdown-it gives targets percent-encoded (``<d e.png>`` -> ``d%20e.png``): look for both.
    written = {form for t in _markdown_targets(text) if _relative(t) for form in (t, unquote(t))}
    for target in sorted(written, key=len, reverse=True):
        opening = re.compile(r"(\]\(\s*<?)" + re.escape(target) + r"(?=[\s>)])")
        text = opening.sub(lambda match, target=target: match.group(1) + prefix + target, text)
    return text


def _figures(part_dir: Path, out_dir: Path) -> str:
    figures = []
    for png in sorted(part_dir.rglob("*.png")):
        data = base64.b64encode(png.read_bytes()).decode("ascii")
        caption = html.escape(png.relative_to(out_dir).as_posix())
        # Embedded, so the page stands alone; linked to the file, so it opens full size.
        figures.append(
            f'<figure><a href="{caption}"><img src="data:image/png;base64,{data}" alt="{caption}"></a>'
            f"<figcaption>{caption}</figcaption></figure>"
        )
    return "\n".join(figures)


def index_html(
    out_dir: Path,
    entries: list[dict],
    prior_stages: list[dict] | None = None,
    run: dict | None = None,
) -> str:
    """The whole page: intro, time per stage, then per part its tables, figures and folded full report."""
    toc = "".join(
        f'<li><a href="#{html.escape(s["part"])}">{html.escape(s["title"])}</a></li>'
        for s in entries
    )
    sections = []
    for entry in entries:
        part = entry["part"]
        body = [f'<section id="{html.escape(part)}">', f"<h2>{html.escape(entry['title'])}</h2>"]
        if entry.get("status") == "failed":
            body += [render_markdown(_failure(entry, run)), "</section>"]
            sections.append("\n".join(body))
            continue
        if entry.get("summary"):
            body.append(render_markdown(entry["summary"], base=part))
        figures = _figures(out_dir / part, out_dir)
        if figures:
            body.append(f'<div class="figures">\n{figures}\n</div>')
        report = out_dir / part / entry["report"] if entry.get("report") else None
        if report is not None and report.is_file():
            link = html.escape(f"{part}/{entry['report']}")
            body.append(
                f'<details><summary>Full report (<a href="{link}">{html.escape(entry["report"])}</a>)'
                "</summary>\n"
                + render_markdown(
                    report.read_text(encoding="utf-8"),
                    base=Path(link).parent.as_posix(),
                    shift_headings=2,
                )
                + "</details>"
            )
        body.append(render_markdown(_footer(entry, run)))
        body.append("</section>")
        sections.append("\n".join(body))
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        "<title>bias-hub demo report</title>\n"
        f"<style>\n{STYLE}\n</style>\n</head>\n<body>\n"
        "<h1>bias-hub demo report</h1>\n"
        f"{render_markdown(INTRO)}\n<ul>{toc}</ul>\n"
        f"<h2>Time per stage</h2>\n{render_markdown(stage_table(entries, prior_stages, run))}\n"
        + "\n".join(sections)
        + "\n</body>\n</html>\n"
    )


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
    if not _relative(target):
        return None  # absolute URLs and data: URIs are not files of the report
    path = _file_of(target)
    if path and not (page.parent / path).exists():
        return f"{label}: {target} -> {page.parent / path} does not exist"
    return None


def _file_of(target: str) -> str:
    return unquote(target.split("#", 1)[0].split("?", 1)[0])


def broken_links(
    out_dir: str | Path, follow_markdown: bool = True, start: str = "index.md"
) -> list[str]:
    """Every link and image of ``index.html`` and ``start`` (``index.md``; a reproduction's
    ``report.md``) in ``out_dir`` that does not resolve (a missing file, an in-page anchor with
    no element), one line each; with ``follow_markdown``, also those of every Markdown file
    inside ``out_dir`` they link to (the parts' reports), each read relative to its own folder.
    Empty when all resolve."""
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
        queue += [page.parent / _file_of(t) for t in parser.targets if _relative(t)]
    queue.insert(0, out_dir / start)
    seen: set[Path] = set()
    for index, page in enumerate(queue):
        page = page.resolve()
        if (
            page in seen
            or page.suffix != ".md"
            or not page.is_file()
            or not page.is_relative_to(out_dir)
        ):
            continue
        if index > 0 and not follow_markdown:
            break
        seen.add(page)
        label = page.relative_to(out_dir).as_posix()
        targets = _markdown_targets(page.read_text(encoding="utf-8"))
        problems += [p for t in targets if (p := _missing(page, label, t, None))]
        queue += [page.parent / _file_of(t) for t in targets if _relative(t)]
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
    index = atomic_write_text(out_dir / "index.md", _index_markdown(entries, prior_stages, run))
    atomic_write_text(out_dir / "index.html", index_html(out_dir, entries, prior_stages, run))
    return index
