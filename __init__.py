"""bias-hub: social-bias benchmarks for Japanese and English language models.

The repository's root folder is this package (setup.py maps it): ``bias_hub.builders``,
``bias_hub.pipelines`` and the ``evaluate`` modules under ``bias_hub/metrics/<name>/`` are the
checkout's ``builders/``, ``pipelines/`` and ``metrics/`` folders, in a checkout and installed.

>>> import datasets, evaluate
>>> import bias_hub
>>> jbbq = datasets.load_dataset(str(bias_hub.dataset_path("jbbq")), "all")  # doctest: +SKIP
>>> bbq_bias = evaluate.load(str(bias_hub.metric_path("bbq_bias")))  # doctest: +SKIP
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

__all__ = ["__version__", "dataset_path", "metric_path"]

try:
    __version__ = metadata.version("bias-hub")
except metadata.PackageNotFoundError:  # imported from a checkout that was never installed
    __version__ = "0+unknown"


def metric_path(name: str) -> Path:
    """The folder of the metric module ``name`` (``bbq_bias``, ``weat``, ...), for
    ``evaluate.load(str(metric_path(name)))``: the checkout's ``metrics/<name>/`` or the copy an
    installed wheel carries. Raises ``ValueError`` naming the modules there for any other name."""
    root = Path(__file__).resolve().parent / "metrics"
    if not isinstance(name, str) or "/" in name or not (root / name / f"{name}.py").is_file():
        known = sorted(p.name for p in root.iterdir() if (p / f"{p.name}.py").is_file())
        raise ValueError(
            f"metric_path: no metric module named {name!r}; expected one of {', '.join(known)}"
        )
    return root / name


def dataset_path(name: str) -> Path:
    """The folder ``bias-hub build NAME`` wrote: the checkout's ``datasets/<name>/`` or, installed,
    ``<name>/`` under the data root; ``FileNotFoundError`` saying how to build it if it is not."""
    from bias_hub.pipelines.common.locations import dataset_folder  # the one place that decides

    return dataset_folder(name)
