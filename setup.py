"""What pyproject.toml cannot declare: which folders the wheel carries, metric modules included.

``metrics/<name>/`` (the module, its card, its requirements and its ``bias_hub_common.py``, a
symlink in the checkout that the build copies as a real file) is installed as
``bias_hub_metrics/<name>/`` beside ``pipelines``, where ``pipelines.common.paths`` finds it.
The data files the builders and pipelines read (templates, lexicons, prompt and study YAML, the
dataset card template) travel as package data. The rest of the metadata is in pyproject.toml.
"""

from pathlib import Path

from setuptools import find_namespace_packages, setup

METRICS = sorted(
    folder.name
    for folder in (Path(__file__).resolve().parent / "metrics").iterdir()
    if (folder / f"{folder.name}.py").is_file()
)
DATA_FILES = ["*.tsv", "*.csv", "*.json", "*.yaml", "*.txt", "*.md"]

setup(
    # Namespace packages too: pipelines/studies and the prompt folders hold only data.
    packages=find_namespace_packages(include=["builders*", "pipelines*"], exclude=["*__pycache__*"])
    + ["bias_hub_metrics", *(f"bias_hub_metrics.{name}" for name in METRICS)],
    package_dir={"bias_hub_metrics": "metrics"},
    package_data={"": DATA_FILES},
)
