"""Batched, length-sorted perplexity vs one sentence at a time (the baseline), same run.

    python -m bench.stereoset_batching [--sentences 128] [--batch-size 32]

Uses a randomly initialised GPT-2 (4 layers, 256 wide) over a small WordPiece
vocabulary and StereoSet-like sentences, so it runs offline; prints seconds,
sentences per second, the speed-up ratio and the largest relative difference
between the two (which must be ~0: padding is masked out). Timed interleaved, three runs
each after a warm-up, minimum and median with the load (``bench/_harness.py``).
"""

from __future__ import annotations

import argparse
import random
from functools import partial

from bench._harness import describe_load, race, race_table


def main() -> None:
    import numpy as np
    import torch
    from transformers import BertTokenizerFast, GPT2Config, GPT2LMHeadModel

    from bias_hub.pipelines.stereoset.perplexity import sentence_perplexities

    parser = argparse.ArgumentParser()
    parser.add_argument("--sentences", type=int, default=128)
    parser.add_argument("--batch-size", type=int, default=32)
    args = parser.parse_args()

    words = (
        "he she his her man woman the a is was very tall kind and to of in at with for "
        "doctor nurse engineer cook team car house money work school smart strong"
    ).split()
    vocab = {
        w: i for i, w in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", ".", *words])
    }
    tokenizer = BertTokenizerFast(vocab=vocab, do_lower_case=True)
    rng = random.Random(0)
    sentences = [
        " ".join(rng.choice(words) for _ in range(rng.randint(4, 40))) + "."
        for _ in range(args.sentences)
    ]
    torch.manual_seed(0)
    shape = {"n_positions": 64, "n_embd": 256, "n_layer": 4, "n_head": 4}
    config = GPT2Config(vocab_size=len(vocab), bos_token_id=2, eos_token_id=3, **shape)
    model = GPT2LMHeadModel(config).eval()

    perplexities = partial(sentence_perplexities, model, tokenizer, sentences, progress=False)
    batched = f"batched ({args.batch_size})"
    sizes = {"one at a time": 1, batched: args.batch_size}
    results = race({name: partial(perplexities, batch_size=size) for name, size in sizes.items()})
    alone = results["one at a time"]["output"]
    difference = float(np.max(np.abs(results[batched]["output"] - alone) / alone))
    print(f"{len(sentences)} sentences; {describe_load()}")
    print(race_table(results, "one at a time"))
    print(f"max relative difference {difference:.2e}")


if __name__ == "__main__":
    main()
