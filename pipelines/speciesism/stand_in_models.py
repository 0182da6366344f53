"""The offline stand-ins of the study's two masked LMs: ``bias-hub speciesism-tiny-models --out DIR``.

No registry package ships a masked-LM head (BERT-large or RoBERTa-large), so the study file's
offline variant uses two tiny BERTs made here (``planted_model``), trained for seconds on the
English templates with a planted bias, one per paper model: ``DIR/roberta-stand-in`` for the
paper's Tables 1-2 and ``DIR/bert-stand-in`` for Tables 3-4 (the reports find a model's tables by
its name). They differ only in their seed. Their numbers show the pipeline recovers what was
planted; they say nothing about BERT, RoBERTa or any trained model.
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from bias_hub.pipelines.common.arguments import add_root_flags
from bias_hub.pipelines.common.locations import dataset_folder, load_dataset_split
from bias_hub.pipelines.common.provenance import mark_stand_in
from bias_hub.pipelines.common.run_folder import RunFolder
from bias_hub.pipelines.speciesism.planted_model import STEPS, make_tiny_masked_lm
from bias_hub.pipelines.speciesism.settings import CONFIGS, DATASET

__all__ = ["STAND_INS", "load_templates", "write_stand_ins"]

log = logging.getLogger(__name__)
# Folder name -> seed; "roberta" and "bert" in the names are what the paper's layouts match.
STAND_INS = {"roberta-stand-in": 0, "bert-stand-in": 1}


def load_templates(datasets_root: Path | None, language: str = "en") -> list[dict]:
    """The speciesism_templates rows of ``language`` (each template once), as
    ``make_tiny_masked_lm`` takes them."""
    folder = dataset_folder(DATASET, datasets_root)
    rows = []
    for config in CONFIGS[language]:
        rows += [dict(row) for row in load_dataset_split(folder, config, "test")]
    return list({row["template_id"]: row for row in rows}.values())


def write_stand_ins(out: Path, datasets_root: Path | None = None, steps: int = STEPS) -> list[Path]:
    """``out/roberta-stand-in`` and ``out/bert-stand-in``, written whole; returns both paths."""
    templates = load_templates(datasets_root)
    with RunFolder(out) as folder:
        folder.record_inputs(
            datasets=[dataset_folder(DATASET, datasets_root)], settings={"steps": steps}
        )
        for name, seed in STAND_INS.items():
            make_tiny_masked_lm(folder.staging / name, templates, "en", steps=steps, seed=seed)
            mark_stand_in(folder.staging / name, f"a tiny BERT with a planted bias ({name})")
    paths = [folder.target / name for name in STAND_INS]
    log.info("wrote %s: tiny BERTs with a planted bias (plumbing only)", ", ".join(map(str, paths)))
    return paths


def _run(args: argparse.Namespace) -> int:
    write_stand_ins(Path(args.out), args.datasets_root, args.steps)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "speciesism-tiny-models",
        help="write two tiny masked LMs with a planted bias, the offline stand-ins (plumbing only)",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("--out", type=Path, required=True, help="folder that gets the two models")
    add_root_flags(parser, metrics=False)
    parser.add_argument(
        "--steps", type=int, default=STEPS, help="training steps per model (default: %(default)s)"
    )
    parser.set_defaults(func=_run)
