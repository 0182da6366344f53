"""Throughput of ``bias-hub nli evaluate``'s prediction path against ``transformers.pipeline``.

    python -m bench.nli_throughput                      # CPU, small BERT, 1 thread
    python -m bench.nli_throughput --device cuda --dtype bfloat16 --config bert-base

Both run the same model on the same premise/hypothesis pairs (the nli_gender_bias sets), from
the texts to one label per pair, tokenisation included, in one process:

- bias-hub: ``encode_pairs`` (the fast tokenizer over all pairs at once), then
  ``predict_logits``: pairs sorted by length and packed into batches by a token budget (rows x
  the batch's longest pair), each padded only to its own longest, under ``inference_mode``;
- ``pipeline("text-classification")`` at the batch size that serves it best here: each of
  ``--pipeline-batch-sizes`` is timed once after the warm-up, and the fastest is the one timed
  against bias-hub.

Timing as every bench (``bench/_harness.py``), with the floor: the FLOPs the pairs need (no
padding) against a plain matrix product on the model's shape. Predictions must be identical.
One thread by default: with two, a small BERT's throughput collapses whenever the other core
of a shared machine is busy, for both alike. The model is a random BERT with a WordPiece
tokenizer built from the pairs, its classifier scaled up so that float rounding cannot flip
an argmax between the two paths.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

import numpy as np

from bench._harness import (
    MIN_ROUNDS,
    PhaseClock,
    Run,
    bert_flops,
    describe_load,
    floor,
    interleave,
    phase_table,
    summary,
    timed,
)

PHASES = ["tokenize", "forward", "rest"]


def _pairs(datasets_root: Path | None, limit: int | None) -> tuple[list[str], list[str], str]:
    """The evaluation pairs: the built dataset, else lexicon x templates (no build needed)."""
    from bias_hub.pipelines.common.locations import default_datasets_root
    from bias_hub.pipelines.nli.evaluation import evaluation_config, load_evaluation_rows
    from bias_hub.pipelines.nli.settings import DATASET

    folder = (datasets_root or default_datasets_root()) / DATASET
    if (folder / "README.md").is_file():
        config = evaluation_config(folder)
        rows = load_evaluation_rows(folder, config=config)
        premises, hypotheses = list(rows["premise"]), list(rows["hypothesis"])
        source = f"{folder} ({config})"
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


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    from bias_hub.pipelines.common.batching import DEFAULT_BATCH_TOKENS

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--config", default="small", help="model size: tiny, small or bert-base (default: small)"
    )
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    parser.add_argument("--dtype", default="float32", choices=["float32", "bfloat16", "float16"])
    parser.add_argument(
        "--batch-tokens",
        type=int,
        default=DEFAULT_BATCH_TOKENS,
        help="bias-hub's token budget per batch (default: %(default)s)",
    )
    parser.add_argument(
        "--pipeline-batch-sizes",
        default="8,32,64,128",
        help="comma-separated batch sizes tried for the pipeline (default: %(default)s)",
    )
    parser.add_argument("--max-length", type=int, default=128)
    parser.add_argument("--pairs", type=int, default=None, help="use only the first N pairs")
    parser.add_argument(
        "--rounds", type=int, default=MIN_ROUNDS, help="timed runs of each, interleaved"
    )
    parser.add_argument("--datasets-root", type=Path, default=None)
    parser.add_argument("--threads", type=int, default=1, help="torch CPU threads (default 1)")
    parser.add_argument("--out", type=Path, default=None, help="also write the numbers as JSON")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> dict:
    args = _arguments(argv)
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer, pipeline

    from bias_hub.pipelines.nli.labels import LABELS
    from bias_hub.pipelines.nli.predict import encode_pairs, predict_logits
    from bias_hub.pipelines.nli.random_model import make_classifier

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
    clock = PhaseClock()
    clock.time_forward(model)
    computed = {"tokens": 0}  # rows x width of every forward pass, padding included

    def count(_module, _args, kwargs) -> None:
        computed["tokens"] += int(kwargs["input_ids"].numel())

    model.register_forward_pre_hook(count, with_kwargs=True)
    n = len(premises)

    def measured(labels: Callable[[], np.ndarray]) -> Run:
        """One timed run of ``labels()``, with its phases and the tokens it computed."""

        def run():
            clock.reset()
            computed["tokens"] = 0
            started = time.perf_counter()
            output = labels()
            return clock.split(time.perf_counter() - started), output, dict(computed)

        return timed(run)

    def our_labels() -> np.ndarray:
        with clock.phase("tokenize"):
            encodings = encode_pairs(tokenizer, premises, hypotheses, args.max_length)
        options = {"pad_token_id": tokenizer.pad_token_id, "batch_tokens": args.batch_tokens}
        return predict_logits(model, encodings, progress=False, **options).argmax(axis=1)

    ours = partial(measured, our_labels)

    classifier = pipeline(
        "text-classification", model=model, tokenizer=tokenizer, device=torch.device(args.device)
    )
    clock.wrap(classifier, "preprocess", "tokenize")
    inputs = [{"text": p, "text_pair": h} for p, h in zip(premises, hypotheses, strict=True)]
    to_index = {name: LABELS.index(name) for name in LABELS}

    def theirs(batch_size: int, items: list[dict] = inputs) -> Run:
        def labels() -> np.ndarray:
            options = {"batch_size": batch_size, "truncation": True, "max_length": args.max_length}
            return np.array([to_index[o["label"]] for o in classifier(items, **options)])

        return measured(labels)

    print(
        f"{n} pairs ({source}); BERT {args.config} ({sum(p.numel() for p in model.parameters()) / 1e6:.1f} M "
        f"parameters), {args.device}, {args.dtype}, {torch.get_num_threads()} thread(s); {describe_load()}"
    )
    warm = slice(0, min(256, n))
    predict_logits(
        model,
        encode_pairs(tokenizer, premises[warm], hypotheses[warm], args.max_length),
        progress=False,
    )
    sizes = [int(x) for x in args.pipeline_batch_sizes.split(",")]
    sweep = {}
    for size in sizes:
        theirs(size, inputs[warm])  # warm-up at this size
        sweep[size] = theirs(size)
        print(f"  pipeline, batch {size}: {sweep[size].seconds:.2f} s ({describe_load()})")
    best = min(sweep, key=lambda size: sweep[size].seconds)
    print(f"  the pipeline's best batch size here: {best}")
    runs = interleave(
        {"bias-hub": ours, f"pipeline({best})": lambda: theirs(best)},
        args.rounds,
        {"bias-hub": ours},
    )
    name = f"pipeline({best})"
    reference = runs["bias-hub"][0].output
    differ = [int((run.output != reference).sum()) for r in runs.values() for run in r]
    differ += [int((run.output != reference).sum()) for run in sweep.values()]
    whole = {key: summary(r) for key, r in runs.items()}
    cpu = {key: summary(r, key=lambda run: run.cpu_seconds) for key, r in runs.items()}
    fastest = {key: min(r, key=lambda run: run.seconds) for key, r in runs.items()}

    encodings = encode_pairs(tokenizer, premises, hypotheses, args.max_length)
    lengths = [len(x) for x in encodings["input_ids"]]
    needed = bert_flops(model.config, lengths)
    rate = floor(model, args)
    floor_seconds = needed / rate
    ratio_min = whole[name]["min"] / whole["bias-hub"]["min"]
    ratio_median = whole[name]["median"] / whole["bias-hub"]["median"]
    print(f"\nresults: min and median of {args.rounds} interleaved runs each; {describe_load()}")
    for key in runs:
        print(
            f"  {key:<16} {n / whole[key]['min']:8.1f} pairs/s (min {whole[key]['min']:.2f} s, "
            f"median {whole[key]['median']:.2f} s, CPU {cpu[key]['min']:.2f} s; load "
            f"{whole[key]['load'][0]}-{whole[key]['load'][1]})"
        )
    print(
        f"  bias-hub against the pipeline's best: {ratio_min:.2f}x (min), {ratio_median:.2f}x (median)"
    )
    print(phase_table(fastest, PHASES))
    unit = "s" if args.device.startswith("cuda") else "CPU s"
    spent = whole if args.device.startswith("cuda") else cpu
    print("the floor:")
    print(
        f"  the pairs need {needed / 1e9:.1f} GFLOP (mean {np.mean(lengths):.1f} tokens, no padding); a "
        f"plain matrix product on the model's shape reaches {rate / 1e9:.2f} GFLOP per {unit}: "
        f"the floor is {floor_seconds:.2f} {unit}"
    )
    for key in runs:
        print(
            f"  {key}: {spent[key]['min']:.2f} {unit}, {spent[key]['min'] / floor_seconds:.2f}x the floor"
        )
    ceiling = spent[name]["min"] / floor_seconds
    # The CPU bound: the pipeline's run is its forward passes and a little else. A path that
    # computes the same forward passes can at best drop the padding in them and everything else.
    theirs_run = fastest[name]
    padding = 1 - sum(lengths) / theirs_run.extra["tokens"]
    bound = theirs_run.seconds / (theirs_run.phases["forward"] * (1 - padding))
    print(
        f"  the pipeline's fastest run: {theirs_run.phases['forward'] / theirs_run.seconds:.0%} of "
        f"it in forward passes, {padding:.0%} of their tokens padding; bias-hub's padding: "
        f"{1 - sum(lengths) / fastest['bias-hub'].extra['tokens']:.1%}"
    )
    print(
        f"  the CPU bound: the same forward passes without padding and without anything else "
        f"would be {bound:.2f}x the pipeline, and the matrix-product floor {ceiling:.2f}x"
    )
    print(
        f"predictions identical: {max(differ) == 0} (largest number differing in a run: {max(differ)})"
    )
    result = {
        "device": args.device,
        "dtype": args.dtype,
        "config": args.config,
        "pairs": n,
        "source": source,
        "torch_threads": torch.get_num_threads(),
        "pipeline_sweep_seconds": {str(k): v.seconds for k, v in sweep.items()},
        "pipeline_best_batch_size": best,
        "runs": {key: [run.record() for run in r] for key, r in runs.items()},
        "ratio_vs_pipeline_best_min": ratio_min,
        "ratio_vs_pipeline_best_median": ratio_median,
        "needed_gflop": needed / 1e9,
        "floor_gflop_per_s": rate / 1e9,
        "bias_hub_over_floor": spent["bias-hub"]["min"] / floor_seconds,
        "pipeline_over_floor": ceiling,
        "bound_same_forward_without_padding": bound,
        "identical_predictions": max(differ) == 0,
    }
    if args.out:
        from bias_hub.builders.shared.files import write_json

        write_json(args.out, result)
    return result


if __name__ == "__main__":
    sys.exit(0 if main()["identical_predictions"] else 1)
