"""What pyproject.toml cannot declare: how the checkout's folders become one import package.

The repository's root folder is the package ``bias_hub`` (its ``__init__.py`` and ``__main__.py``
sit beside this file), so ``builders/``, ``pipelines/`` and ``metrics/`` install as
``bias_hub.builders``, ``bias_hub.pipelines`` and ``bias_hub/metrics/<name>/`` and nothing else
lands at the top of site-packages. A metric folder (its module, card, requirements and
the shared ``bias_hub_common.py`` and ``bias_hub_intervals.py``, symlinks in the checkout that
the build copies as real files) is installed whole, where ``bias_hub.metric_path`` finds it;
``metrics/_common`` too, as ``bias_hub.metrics._common``, where the pipelines import the
intervals from. The data files the builders and
pipelines read (templates, lexicons, prompt and study YAML, the dataset card template, the report
templates) travel as
package data; the root folder's own files (README, CONTRIBUTING, the project metadata) do not.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent
METRICS = sorted(
    folder.name
    for folder in (HERE / "metrics").iterdir()
    if (folder / f"{folder.name}.py").is_file()
)
DATA_FILES = ["*.tsv", "*.csv", "*.json", "*.yaml", "*.txt", "*.md", "*.j2"]
# Namespace packages too: pipelines/studies and the prompt folders hold only data.
SUBPACKAGES = find_namespace_packages(
    include=["builders*", "pipelines*"], exclude=["*__pycache__*"]
)


class BuildPy(build_py):
    """The root package's modules are ``__init__`` and ``__main__``: this file stays behind."""

    def find_package_modules(self, package, package_dir):
        modules = super().find_package_modules(package, package_dir)
        return [m for m in modules if package != "bias_hub" or m[1] in ("__init__", "__main__")]


setup(
    cmdclass={"build_py": BuildPy},
    packages=[
        "bias_hub",
        *(f"bias_hub.{name}" for name in SUBPACKAGES),
        "bias_hub.metrics",
        "bias_hub.metrics._common",
        *(f"bias_hub.metrics.{name}" for name in METRICS),
    ],
    package_dir={"bias_hub": "."},
    package_data={"": DATA_FILES},
    exclude_package_data={"bias_hub": DATA_FILES},
)
