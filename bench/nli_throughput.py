"""Throughput of ``bias-hub nli evaluate``'s prediction path against ``transformers.pipeline``.

Both run the same model on the same premise/hypothesis pairs (the nli_gender_bias sets),
tokenisation included, in one process: ours tokenises once, sorts by length and pads each
batch to its own longest pair under ``torch.inference_mode``; the baseline is
``pipeline("text-classification")`` at several batch sizes (``--pipeline-batch-sizes``), and
the ratio that counts is against the best of them. Predictions must be identical.

On a shared CPU, run both at one thread (``--threads 1``): with two intra-op threads a
small BERT's throughput collapses whenever the other core is busy (measured 13-86 pairs/s
against about 300 at one thread on this project's 2-core machine), for ours and the
pipeline alike, and the ratio then measures the neighbours.

The model is a randomly initialised BERT of a named size (no Hub access here) with a Japanese
WordPiece tokenizer built from the pairs; its classifier weights are scaled up so that the
three logits are far apart and float rounding cannot flip an argmax between the two paths.

    python -m bench.nli_throughput                      # CPU, small BERT
    python -m bench.nli_throughput --device cuda --dtype bfloat16 --config bert-base
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np


def _pairs(datasets_root: Path | None, limit: int | None) -> tuple[list[str], list[str], str]:
    """The evaluation pairs: the built dataset, else lexicon x templates (no build needed)."""
    from bias_hub.pipelines.common.locations import default_datasets_root
    from bias_hub.pipelines.nli.evaluation import evaluation_config, load_evaluation_rows
    from bias_hub.pipelines.nli.settings import DATASET

    folder = (datasets_root or default_datasets_root()) / DATASET
    if (folder / "README.md").is_file():
        config = evaluation_config(folder)
        rows = load_evaluation_rows(folder, config=config)
        premises, hypotheses, source = (
            list(rows["premise"]),
            list(rows["hypothesis"]),
            f"{folder} ({config})",
        )
    else:
        from bias_hub.builders.nli_gender_bias.lexicon import (
            GENDER_WORDS,
            load_occupations,
            load_templates,
        )

        premises, hypotheses = [], []
        for occupation in load_occupations():
            for template in load_templates():
                for word in GENDER_WORDS.values():
                    premises.append(template.fill(occupation.ja))
                    hypotheses.append(template.fill(word))
        source = "lexicon x templates (dataset folder not built)"
    if limit:
        premises, hypotheses = premises[:limit], hypotheses[:limit]
    return premises, hypotheses, source


def _timed(function, repeats: int) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeats):
        started = time.perf_counter()
        result = function()
        best = min(best, time.perf_counter() - started)
    return best, result


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--config", default="small", help="model size: tiny, small or bert-base (default: small)"
    )
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument("--batch-size", type=int, default=64, help="ours (default: %(default)s)")
    parser.add_argument(
        "--pipeline-batch-sizes",
        default="1,8,32,64,128",
        help="comma-separated batch sizes tried for the pipeline (default: %(default)s)",
    )
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--pairs", type=int, default=None, help="use only the first N pairs")
    parser.add_argument("--repeats", type=int, default=1, help="best of N timings per method")
    parser.add_argument("--datasets-root", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=None, help="torch CPU threads")
    parser.add_argument(
        "--out", type=Path, default=None, help="also write the numbers as JSON here"
    )
    args = parser.parse_args(argv)

    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    from bias_hub.pipelines.nli.labels import LABELS
    from bias_hub.pipelines.nli.predict import encode_pairs, predict_logits
    from bias_hub.pipelines.nli.random_model import make_classifier

    if args.threads:
        torch.set_num_threads(args.threads)
    premises, hypotheses, source = _pairs(args.datasets_root, args.pairs)
    dtype = getattr(torch, args.dtype)
    with tempfile.TemporaryDirectory() as folder:
        make_classifier(folder, premises + hypotheses, size=args.config, max_length=args.max_length)
        tokenizer = AutoTokenizer.from_pretrained(folder)
        model = (
            AutoModelForSequenceClassification.from_pretrained(folder, dtype=dtype)
            .to(args.device)
            .eval()
        )
    with torch.no_grad():
        model.classifier.weight.mul_(100.0)

    def ours() -> np.ndarray:
        encodings = encode_pairs(tokenizer, premises, hypotheses, args.max_length)
        return predict_logits(
            model, encodings, args.batch_size, tokenizer.pad_token_id, progress=False
        ).argmax(axis=1)

    classifier = pipeline(
        "text-classification", model=model, tokenizer=tokenizer, device=torch.device(args.device)
    )
    inputs = [{"text": p, "text_pair": h} for p, h in zip(premises, hypotheses, strict=True)]
    to_index = {name: LABELS.index(name) for name in LABELS}

    def baseline(batch_size: int) -> np.ndarray:
        outputs = classifier(
            inputs, batch_size=batch_size, truncation=True, max_length=args.max_length
        )
        return np.array([to_index[o["label"]] for o in outputs])

    # Warm-up (kernel selection, lazy initialisation) outside the timings.
    warm = slice(0, min(64, len(premises)))
    predict_logits(
        model,
        encode_pairs(tokenizer, premises[warm], hypotheses[warm], args.max_length),
        args.batch_size,
        progress=False,
    )
    classifier(inputs[warm], truncation=True)

    n = len(premises)
    seconds_ours, predicted_ours = _timed(ours, args.repeats)
    pipeline_seconds = {}
    for batch_size in [int(x) for x in args.pipeline_batch_sizes.split(",")]:
        seconds, predicted = _timed(lambda b=batch_size: baseline(b), args.repeats)
        differ = int((predicted != predicted_ours).sum())
        assert differ == 0, (
            f"pipeline (batch {batch_size}): {differ} of {n} predictions differ from ours"
        )
        pipeline_seconds[batch_size] = seconds
    best = min(pipeline_seconds, key=pipeline_seconds.get)

    result = {
        "device": args.device,
        "dtype": args.dtype,
        "config": args.config,
        "pairs": n,
        "source": source,
        "batch_size": args.batch_size,
        "torch_threads": torch.get_num_threads(),
        "ours_pairs_per_s": n / seconds_ours,
        "pipeline_pairs_per_s": {str(b): n / t for b, t in pipeline_seconds.items()},
        "pipeline_best_batch_size": best,
        "ratio_vs_pipeline_best": pipeline_seconds[best] / seconds_ours,
        "identical_predictions": True,
        "predicted_label_counts": np.bincount(predicted_ours, minlength=3).tolist(),
    }
    print(
        f"{n} pairs ({source}); BERT {args.config}, {args.device}, {args.dtype}, {torch.get_num_threads()} threads"
    )
    print(f"{'method':<28}{'pairs/s':>10}{'seconds':>10}{'ours is':>10}")
    print(
        f"{f'ours (sorted, batch {args.batch_size})':<28}{n / seconds_ours:>10.1f}{seconds_ours:>10.2f}{'':>10}"
    )
    for batch_size, seconds in pipeline_seconds.items():
        label = f"pipeline, batch {batch_size}" + (" (best)" if batch_size == best else "")
        print(f"{label:<28}{n / seconds:>10.1f}{seconds:>10.2f}{seconds / seconds_ours:>9.2f}x")
    print(
        f"ours against the best pipeline batch size ({best}): {pipeline_seconds[best] / seconds_ours:.2f}x; "
        "predictions identical: yes"
    )
    if args.out:
        from bias_hub.builders.shared.files import write_json

        write_json(args.out, result)
    return result


if __name__ == "__main__":
    main()
