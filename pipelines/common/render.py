"""The one report renderer: every part's report.md, the demo's index (Markdown and HTML) and the
leaderboard are Jinja templates over a run's results, written through ``write_report``; every
figure is written through ``save_figure``, its intervals drawn by ``draw_intervals``.

A template is named by its path under ``pipelines/`` and lives beside the part that owns it;
shared ones are in ``common/templates/``. ``.html.j2`` templates escape every value as HTML; a
Markdown template writes each name a user chose through ``cell``, ``code`` or ``code_cell``,
so that no name can write Markdown. A name the template does not know is an error, not a
blank. The filters are ``_environment``'s; ``macros(template)`` gives Python its macros.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from urllib.parse import unquote

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.builders.shared.text import (
    code_cell,
    code_span,
    fmt,
    markdown_table,
    table_cell,
    with_interval,
)

__all__ = [
    "draw_intervals",
    "macros",
    "markdown_html",
    "markdown_targets",
    "paper_layouts",
    "pyplot",
    "rebase_markdown_links",
    "relative_target",
    "render",
    "save_figure",
    "write_report",
]

PIPELINES = Path(__file__).resolve().parents[1]
# href/src values left alone: absolute URLs, in-page anchors, data URIs, absolute paths.
_NOT_RELATIVE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|#|/)")


def _percent(value: float, digits: int = 1) -> str:
    return f"{value:.{digits}%}"


def _markdown_filter(text: str, base: str = "", shift_headings: int = 0):
    from markupsafe import Markup

    return Markup(markdown_html(text, base, shift_headings))


@functools.cache
def _environment():
    import jinja2  # loaded where a report is written, not by every command

    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(PIPELINES),
        autoescape=jinja2.select_autoescape(("html.j2",), default_for_string=False),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        extensions=["jinja2.ext.do", "jinja2.ext.loopcontrols"],
    )
    env.filters.update(
        cell=table_cell,
        code=code_span,
        code_cell=code_cell,
        num=fmt,
        estimate=with_interval,
        pct=_percent,
        repr=repr,
        sorted=sorted,
        markdown=_markdown_filter,
        rebase=rebase_markdown_links,
    )
    env.globals.update(table=markdown_table)
    return env


def render(template: str, /, **context) -> str:
    """The text of ``template`` (a path under ``pipelines/``) with ``context``; a key the record
    lacks (a damaged results.json, or one another version wrote) is a ``KeyError``, as in Python."""
    import jinja2

    try:
        return _environment().get_template(template).render(**context)
    except jinja2.UndefinedError as err:
        raise KeyError(f"{template}: {err}") from None


def macros(template: str, /, **helpers):
    """The macros of ``template``, callable from Python (``macros(t).run_table(run)``);
    ``helpers`` are names its macros may use besides their arguments (Python functions)."""
    return _environment().get_template(template).make_module(helpers)


def paper_layouts(template: str, /, *names: str, **helpers) -> dict:
    """A part's ``PAPER_LAYOUTS``: for each name, ``layout(results, printed) -> str`` calling
    the macro of that name in ``template`` (``results`` None: the step did not run)."""

    def layout(name: str):
        return lambda results, printed: getattr(macros(template, **helpers), name)(results, printed)

    return {name: layout(name) for name in names}


def write_report(
    folder: str | Path, template: str, /, *, name: str = "report.md", **context
) -> Path:
    """Render ``template`` with ``context`` into ``folder/name`` (written whole or not at all)."""
    return atomic_write_text(Path(folder) / name, render(template, **context))


def pyplot():
    """matplotlib's pyplot on the headless Agg backend; heavy, so imported only when a figure is
    drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure, path: str | Path, dpi: int = 120, tight: bool = True, **savefig) -> Path:
    """A matplotlib figure as PNG at ``path``, laid out tight (``tight``), closed afterwards."""
    import matplotlib.pyplot as plt  # heavy: loaded only when a figure is drawn

    try:
        if tight:
            figure.tight_layout()
        figure.savefig(path, dpi=dpi, **savefig)
    finally:
        plt.close(figure)
    return Path(path)


def draw_intervals(axis, x, intervals, cap: float = 0.0, **line) -> None:
    """Each interval (a dict with ``low`` and ``high``, or None) as a line from its low to its high
    end at ``x``, with ends ``cap`` wide: a bootstrap interval need not hold its estimate, so it
    is drawn where it lies, not as errors around the value. Nothing where there is none."""
    import numpy as np

    line = {"color": "black", "linewidth": 0.8, **line}
    ends = [[(i or {}).get(end) for end in ("low", "high")] for i in intervals]
    low, high = np.array([[np.nan if v is None else v for v in pair] for pair in ends], float).T
    x, ok = np.asarray(x, dtype=float), np.isfinite(low) & np.isfinite(high)
    if ok.any():
        axis.vlines(x[ok], low[ok], high[ok], **line)
        for end in (low[ok], high[ok]) if cap else ():
            axis.hlines(end, x[ok] - cap / 2, x[ok] + cap / 2, **line)


def relative_target(target: object) -> bool:
    """Whether a link or image target is a path relative to the page (not a URL, anchor or
    absolute path)."""
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


def _parser():
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False}).enable("table")


def markdown_html(text: str, base: str = "", shift_headings: int = 0) -> str:
    """Markdown (CommonMark + tables, raw HTML escaped) to HTML.

    Relative link and image targets are prefixed with ``base`` so that a part's report, shown
    inside the index, still points into the part's folder; its headings move
    ``shift_headings`` levels down, below the part's own heading. Every image links to its own
    file (a figure opens full size).
    """
    md = _parser()
    tokens = md.parse(text)
    for token in tokens:
        if shift_headings and token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + shift_headings)}"
        if token.children:
            token.children = _link_images_to_themselves(token.children)
    if base:
        prefix = base.rstrip("/") + "/"
        for child, attr, value in _targets(tokens, ("src", "href")):
            if relative_target(value):
                child.attrSet(attr, prefix + value)
    return md.renderer.render(tokens, md.options, {})


def _targets(tokens: list, attributes: tuple[str, ...]) -> list[tuple]:
    """``(token, attribute, value)`` of every link or image target in ``tokens``, in order."""
    return [
        (child, attr, value)
        for token in tokens
        for child in token.children or []
        for attr in attributes
        if isinstance(value := child.attrGet(attr), str) and value
    ]


def markdown_targets(text: str) -> list[str]:
    """Every link and image target of a Markdown text, in order."""
    return [value for _, _, value in _targets(_parser().parse(text), ("href", "src"))]


def rebase_markdown_links(text: str, base: str) -> str:
    """Markdown whose relative link and image targets point into ``base``: a part's summary,
    written relative to the part's folder, shown in the index one folder up."""
    prefix = base.rstrip("/") + "/"
    # markdown-it gives targets percent-encoded (``<d e.png>`` -> ``d%20e.png``): look for both.
    written = {
        form for t in markdown_targets(text) if relative_target(t) for form in (t, unquote(t))
    }
    for target in sorted(written, key=len, reverse=True):
        opening = re.compile(r"(\]\(\s*<?)" + re.escape(target) + r"(?=[\s>)])")
        text = opening.sub(lambda match, target=target: match.group(1) + prefix + target, text)
    return text
