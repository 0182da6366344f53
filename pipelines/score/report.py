"""report.md of a ``bias-hub score`` run, rendered from its results.json alone
(``score/templates/report.md.j2``)."""

from __future__ import annotations

from pathlib import Path

from bias_hub.pipelines.common.render import write_report

__all__ = ["render"]


def render(results: dict, folder: Path) -> None:
    """Write report.md of ``results`` into ``folder`` (a run folder, or its staging area)."""
    write_report(folder, "score/templates/report.md.j2", results=results)
