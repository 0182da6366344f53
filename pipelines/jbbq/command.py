"""``bias-hub jbbq evaluate`` (a pipeline command) and ``jbbq figure``: flags only.

``evaluate`` runs ``bias_hub.pipelines.jbbq.run:run_evaluate`` with ``bias_hub.pipelines.jbbq.settings:Settings``
(every flag's default is that field's); ``--preset`` (default ``paper``) reads the study file
``pipelines/studies/jbbq.yaml``. ``figure`` draws the paper's Figure 1 (and Table 4) for several
results files (``bias_hub.pipelines.jbbq.report``). Translating BBQ's templates is a dataset-building
step: ``bias-hub build jbbq-translation`` (``builders/jbbq/command.py``).
"""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from bias_hub.pipelines.common import pipeline_command
from bias_hub.pipelines.common.arguments import (
    add_answer_reader_flag,
    add_flags,
    add_interval_flags,
    add_root_flags,
)
from bias_hub.pipelines.jbbq.prompting import LAYOUTS, PROMPT_NAMES
from bias_hub.pipelines.jbbq.report import write_figure_folder
from bias_hub.pipelines.jbbq.settings import PROMPTS_PER_REQUEST, Settings
from bias_hub.pipelines.jbbq.taught_model import build_for_dataset

# The CLI imports torch and transformers before running these commands, with Ctrl-C held
# meanwhile (a SIGINT inside torch's import can abort the process); `evaluate`
# with an API backend and `figure` say otherwise below.
LOADS_MODELS = True

log = logging.getLogger(__name__)


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {text!r}"
        ) from err
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected one or more integers >= 0, got {text!r}")
    return values


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _prompts(text: str) -> list[str]:
    return list(PROMPT_NAMES) if text == "all" else _names(text)


def add_evaluate_arguments(parser: argparse.ArgumentParser) -> None:
    """The part's own flags (after the shared ones); each dest is a field of ``settings.Settings``,
    whose default is the flag's (no ``default=`` here)."""
    parser.add_argument(
        "--backend",
        choices=["hf", "openai"],
        help="hf: a local or Hub causal LM (--model); openai: an OpenAI-compatible API",
    )

    task = parser.add_argument_group(
        "task (--preset paper by default: Figure 1, 4-shot, generated answers, three prompts, every question; "
        "table4: 0-shot, basic prompt; none: the defaults shown)"
    )
    task.add_argument(
        "--prompt",
        dest="prompts",
        type=_prompts,
        metavar="PROMPT",
        help="basic, unknown, paraphrase, all, or comma-separated names / prompt .yaml paths",
    )
    task.add_argument(
        "--layout",
        metavar="LAYOUT",
        help=f"how a prompt is laid out: {', '.join(LAYOUTS)} (ours, labelled so), or a layout .yaml path",
    )
    task.add_argument(
        "--shots", type=_int_list, help="few-shot counts, e.g. 0 or 0,4 (seeded by --seed)"
    )
    task.add_argument(
        "--shot-pool",
        type=int,
        metavar="N",
        help="few-shot templates drawn once per seed (k shots take the first k); where the evaluated "
        "split holds them they are held out at every shot count, so the questions scored do not "
        "depend on which counts are asked for (default: %(default)s)",
    )
    task.add_argument(
        "--scoring",
        choices=["generate", "loglikelihood"],
        help="generate: parse the model's reply; loglikelihood: pick the answer the model finds "
        "most likely (default: %(default)s)",
    )
    task.add_argument(
        "--chat",
        choices=["auto", "yes", "no"],
        help="use the model's chat template (auto: when it has one)",
    )
    task.add_argument("--max-new-tokens", type=int, help="reply length (generate)")
    add_answer_reader_flag(
        task, "the preset's (paper, table4: llm-jp-eval); lenient with --preset none"
    )
    task.add_argument(
        "--split",
        help="evaluated split: test, dev, train or all (every question; few-shot examples come from "
        "train templates, which are then held out of the evaluation)",
    )
    task.add_argument("--config", help="dataset config (a category or all)")
    task.add_argument("--categories", type=_names, help="comma-separated categories (default: all)")
    task.add_argument(
        "--limit", type=int, help="at most this many questions per category (a seeded sample)"
    )

    add_interval_flags(
        parser,
        unit="templates within each category (or questions, see --bootstrap-unit)",
        bootstrap_units=Settings.BOOTSTRAP_UNITS,
    )

    local = parser.add_argument_group("local model (--backend hf)")
    local.add_argument(
        "--batch-size",
        type=int,
        help="at most this many questions per forward pass (default: as many as --batch-tokens allows)",
    )
    local.add_argument(
        "--batch-tokens",
        type=int,
        help="tokens one forward pass holds, questions x the longest prompt (default: %(default)s; "
        "halved on out-of-memory, doubled on a GPU with memory to spare)",
    )
    local.add_argument(
        "--no-prefix-cache",
        dest="prefix_cache",
        action="store_false",
        help="tokenize and compute the prompt text all questions share for every question "
        "(slower; the results are the same)",
    )

    api = parser.add_argument_group("OpenAI-compatible API (--backend openai)")
    api.add_argument(
        "--api",
        choices=["chat", "completions"],
        help="chat: /chat/completions, chat messages (the server applies the model's chat "
        "template); completions: /completions, the plain prompt as --chat no lays it out, for a "
        "base model behind vllm serve, llama-server or TGI (default: %(default)s)",
    )
    api.add_argument("--base-url", help="API base URL")
    api.add_argument("--api-key-env", help="environment variable holding the key")
    api.add_argument("--concurrency", type=int, help="requests in flight at most")
    api.add_argument(
        "--prompts-per-request",
        type=int,
        help=f"--api completions: prompts sent in one request as a list (default: "
        f"{PROMPTS_PER_REQUEST}; an endpoint that refuses a list gets one prompt per request)",
    )
    add_flags(
        api,
        ("--max-retries", int, "retries per request (429, 5xx, timeouts, malformed replies)"),
        ("--backoff", float, "first retry delay in seconds (doubles)"),
        ("--timeout", float, "seconds per request"),
    )
    api.add_argument(
        "--max-tokens-field",
        choices=["max_tokens", "max_completion_tokens"],
        help="request field for the reply length (OpenAI's newer models take max_completion_tokens)",
    )
    api.add_argument(
        "--cache-dir",
        type=Path,
        help="response cache; re-running resumes from it (default: $BIAS_HUB_CACHE/api/jbbq_openai)",
    )


def add_figure_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "results", nargs="+", metavar="RESULTS.json", help="results.json of `jbbq evaluate` runs"
    )
    parser.add_argument(
        "--out", required=True, help="output folder (figure, figure.md), replaced whole"
    )
    parser.add_argument(
        "--shots",
        type=int,
        help="the shot count to draw (default: the largest one every file has)",
    )
    parser.add_argument("--labels", type=_names, help="comma-separated model names, one per file")
    parser.set_defaults(func=_figure, loads_models=False)  # draws; runs no model


def _figure(args: argparse.Namespace) -> int:
    out = write_figure_folder(args.results, args.out, shots=args.shots, labels=args.labels)
    log.info(
        "wrote %s (Figure 1 layout and Table 4 for %d results file(s))", out, len(args.results)
    )
    return 0


def add_tiny_model_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--out", required=True, help="the model folder, replaced whole")
    parser.add_argument(
        "--dataset",
        help="a JBBQ-format dataset folder or a name under --datasets-root (default: jbbq)",
    )
    add_root_flags(parser, metrics=False)
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random weights and of the questions"
    )
    parser.add_argument(
        "--teach",
        nargs="+",
        default=[],
        metavar="PRESET",
        help="teach it to answer, by a planted rule, every question `jbbq evaluate --preset "
        "PRESET --limit LIMIT` asks (default: none, random weights)",
    )
    add_flags(
        parser,
        ("--limit", int, "the --limit of the runs it is taught for (questions per category)"),
    )
    parser.set_defaults(func=_tiny_model)


def _tiny_model(args: argparse.Namespace) -> int:
    from bias_hub.pipelines.common.prerequisites import check_prerequisites

    check_prerequisites(
        "jbbq tiny-model",
        extras=("models",),
        datasets=[("--dataset", args.dataset or "jbbq")],
        datasets_root=args.datasets_root,
    )
    out = build_for_dataset(
        args.out,
        args.dataset,
        datasets_root=args.datasets_root,
        seed=args.seed,
        teach=args.teach,
        limit=args.limit,
    )
    what = "taught a planted rule" if args.teach else "random weights, its answers mean nothing"
    log.info("wrote %s: a tiny Llama (%s)", out, what)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("jbbq", help="JBBQ bias QA: evaluate an LLM, draw Figure 1")
    inner = parser.add_subparsers(dest="jbbq_command", required=True, metavar="COMMAND")
    evaluate = pipeline_command(
        inner,
        "evaluate",
        run="bias_hub.pipelines.jbbq.run:run_evaluate",
        settings="bias_hub.pipelines.jbbq.settings:Settings",
        preset_command="jbbq evaluate",
        help="prompt a model (local or OpenAI-compatible API) with JBBQ and score its bias",
        description="Prompt a model with JBBQ questions (basic / unknown / paraphrase prompts, 0..k shots; "
        "--preset paper by default, --preset none for the defaults shown) and write results.json, "
        "predictions.jsonl, Figure 1 per shot count and report.md with intervals and paired comparisons.",
        model_help="Hub id or local folder of a causal LM (--backend hf), or the API's model name (--backend openai)",
        dataset_help="a JBBQ-format dataset folder, or a dataset name under --datasets-root (default: jbbq)",
    )
    add_evaluate_arguments(evaluate)
    # An API backend runs no local model: no torch to wait for (a cached rerun costs seconds).
    evaluate.set_defaults(loads_models=lambda args: args.backend != "openai")
    add_figure_arguments(
        inner.add_parser(
            "figure",
            help="draw the paper's Figure 1 (and Table 4) for several models' results.json",
            description="Figure 1 of Yanaka et al. (2024) for several `jbbq evaluate` runs, models side by side: "
            "accuracy per category on ambiguous and disambiguated contexts per prompt, the accuracy difference and "
            "bias scores of the basic prompt, chance rate 0.33; plus Table 4 (accuracy and error rate).",
        )
    )
    add_tiny_model_arguments(
        inner.add_parser(
            "tiny-model",
            help="make a tiny Llama for offline runs (random, or taught to answer by a planted rule)",
            description="A tiny Llama with a byte-level BPE tokenizer trained on the prompts and a JBBQ-format "
            "dataset's questions: the model of the study's offline variant. With --teach it answers every "
            "question of those presets' runs by a planted rule whose scores follow by hand "
            "(pipelines/jbbq/taught_model.py), so that the plumbing and the scorer are both exercised.",
        )
    )
