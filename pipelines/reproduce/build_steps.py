"""A study's ``build`` steps: what one read and wrote, fingerprinted into reproduce's ledger.

A build writes a dataset folder, not a run folder with a manifest, so ``bias-hub reproduce``
keeps the record itself in the shape ``run_folder.why_rerun`` judges: ``inputs`` (the files its
flags name, defaults included, and the package's source files) and ``outputs`` (every dataset
folder it wrote). An edited source, or a folder rebuilt or edited since, reruns the step.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping
from typing import Any

from bias_hub.builders.shared.written import folders_written
from bias_hub.pipelines.common.provenance import fingerprint_inputs, inputs_lines

__all__ = ["READ", "WROTE", "build_lines", "run_build"]

READ, WROTE = "inputs", "outputs"


def _sources(parser: argparse.ArgumentParser, argv: list[str]) -> list:
    # bias_hub.pipelines.cli registers reproduce's command: imported where used, no import circle.
    from bias_hub.pipelines.cli import paths_read
    from bias_hub.pipelines.reproduce.steps import Commands

    args = parser.parse_args(argv)
    leaf = getattr(args, "build_parser", None) or Commands(parser).leaf(" ".join(argv[:2]))
    return paths_read(leaf, args) if leaf is not None else []


def run_build(
    argv: list[str], parser: argparse.ArgumentParser, run: Callable[[], None]
) -> dict[str, Any]:
    """Run a build step (``run``) and return its ledger record: ``inputs`` (the fingerprints of
    its sources, taken before it runs) and ``outputs`` (of the dataset folders it wrote)."""
    read = fingerprint_inputs(files=_sources(parser, argv))
    with folders_written() as written:
        run()
    return {READ: read, WROTE: fingerprint_inputs(datasets=written)}


def build_lines(earlier: Mapping[str, Any] | None) -> list[str]:
    """The record for a reader: what the build read, then what it wrote."""
    if not isinstance(earlier, Mapping) or READ not in earlier:
        return []
    read = [line for line in inputs_lines(earlier[READ]) if line.startswith("file ")]
    wrote = [line for line in inputs_lines(earlier[WROTE]) if not line.startswith("code ")]
    return [
        "read:",
        *(f"  {line}" for line in read or ["(no file given)"]),
        "wrote:",
        *(f"  {line}" for line in wrote or ["(no dataset folder)"]),
    ]
