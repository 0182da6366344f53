"""Demo part: statistics of every dataset folder under the data root (what `bias-hub build` wrote)."""

from __future__ import annotations

import logging
from pathlib import Path

from bias_hub.builders.shared.files import write_json
from bias_hub.pipelines.common.render import write_report
from bias_hub.pipelines.dataset_stats.stats import dataset_statistics, statistics_markdown

ORDER = 0

logger = logging.getLogger(__name__)


def run_demo(out_dir: Path, datasets_root: Path | None = None) -> dict:
    from bias_hub.pipelines.common.locations import default_datasets_root

    # The folder `bias-hub build` writes (the checkout's datasets/, or the data root), not ./datasets.
    stats = dataset_statistics(datasets_root or default_datasets_root())
    table = statistics_markdown(stats)
    logger.info("%s", table)
    write_json(out_dir / "results.json", stats)
    write_report(out_dir, "dataset_stats/templates/report.md.j2", stats=stats)
    return {"title": "Dataset statistics", "summary": table, "report": "report.md"}
