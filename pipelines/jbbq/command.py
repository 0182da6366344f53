"""``bias-hub jbbq evaluate`` (a pipeline command), ``jbbq figure`` and ``jbbq translate``: flags only.

``evaluate`` runs ``pipelines.jbbq.run:run``; ``figure`` draws the paper's Figure 1 (and
Table 4) for several results files (``pipelines.jbbq.report``); ``translate`` is the DeepL
flow of ``builders.jbbq.translate`` (its summary, the command's result, is JSON on
standard output; status lines go through ``logging``).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path

from builders.shared.errors import UserError

log = logging.getLogger(__name__)


def _int_list(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from err
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"expected one or more integers >= 0, got {text!r}")
    return values


def _names(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def _prompts(text: str) -> list[str]:
    from pipelines.jbbq.prompting import PROMPT_NAMES

    return list(PROMPT_NAMES) if text == "all" else _names(text)


def _level(text: str) -> float | None:
    if text.strip().lower() in ("0", "none", "off"):
        return None
    try:
        return float(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"expected a level such as 0.95, or 0 / none; got {text!r}") from err


def add_evaluate_arguments(parser: argparse.ArgumentParser) -> None:
    """The part's own flags (after the shared ones); each dest is a field of ``run.Settings``."""
    parser.add_argument("--backend", choices=["hf", "openai"], default="hf",
                        help="hf: a local or Hub causal LM (--model); openai: an OpenAI-compatible API")  # fmt: skip

    task = parser.add_argument_group("task (flags left out take the preset's value)")
    task.add_argument("--preset", default="paper", metavar="NAME",
                      help="paper (Figure 1: 4-shot, generated answers, three prompts, every question), table4 "
                      "(0-shot, basic prompt), none, or a preset .yaml path (default: %(default)s)")  # fmt: skip
    task.add_argument("--prompt", dest="prompts", type=_prompts, default=None, metavar="PROMPT",
                      help="basic, unknown, paraphrase, all, or comma-separated names / prompt .yaml paths")  # fmt: skip
    task.add_argument("--shots", type=_int_list, default=None, help="few-shot counts, e.g. 0 or 0,4 (seeded by --seed)")
    task.add_argument("--scoring", choices=["generate", "loglikelihood"], default=None)
    task.add_argument("--chat", choices=["auto", "yes", "no"], default=None,
                      help="use the model's chat template (auto: when it has one)")  # fmt: skip
    task.add_argument("--max-new-tokens", type=int, default=None, help="reply length (generate)")
    task.add_argument("--split", default=None,
                      help="evaluated split: test, dev, train or all (every question; few-shot examples come from "
                      "train templates, which are then held out of the evaluation)")  # fmt: skip
    task.add_argument("--config", default="all", help="dataset config (a category or all)")
    task.add_argument("--categories", type=_names, default=None, help="comma-separated categories (default: all)")
    task.add_argument("--limit", type=int, default=None,
                      help="at most this many questions per category (a seeded sample)")  # fmt: skip

    uncertainty = parser.add_argument_group("uncertainty")
    uncertainty.add_argument("--confidence-level", type=_level, default=0.95,
                             help="bootstrap intervals and paired comparisons at this level; 0 or none: off "
                             "(default: %(default)s)")  # fmt: skip
    uncertainty.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples and permutations")
    uncertainty.add_argument("--resample", choices=["templates", "items"], default="templates",
                             help="resample whole templates (questions of one template are not independent) "
                             "or single questions (default: %(default)s)")  # fmt: skip

    local = parser.add_argument_group("local model (--backend hf)")
    local.add_argument("--batch-size", type=int, default=16, help="questions per forward pass (halved on out-of-memory)")
    local.add_argument("--no-prefix-cache", dest="prefix_cache", action="store_false",
                       help="(loglikelihood) recompute the shared prompt prefix for every question")  # fmt: skip

    api = parser.add_argument_group("OpenAI-compatible API (--backend openai)")
    api.add_argument("--base-url", default="https://api.openai.com/v1", help="API base URL")
    api.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the key")
    api.add_argument("--concurrency", type=int, default=4, help="requests in flight at most")
    api.add_argument("--max-retries", type=int, default=6,
                     help="retries per request (429, 5xx, timeouts, malformed replies)")  # fmt: skip
    api.add_argument("--backoff", type=float, default=1.0, help="first retry delay in seconds (doubles)")
    api.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    api.add_argument("--max-tokens-field", choices=["max_tokens", "max_completion_tokens"], default="max_tokens",
                     help="request field for the reply length (OpenAI's newer models take max_completion_tokens)")  # fmt: skip
    api.add_argument("--cache-dir", type=Path, default=None,
                     help="response cache; re-running resumes from it (default: $BIAS_HUB_CACHE/api/jbbq_openai)")  # fmt: skip


def add_figure_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("results", nargs="+", metavar="RESULTS.json", help="results.json of `jbbq evaluate` runs")
    parser.add_argument("--out", required=True, help="output folder (figure, figure.md), replaced whole")
    parser.add_argument("--shots", type=int, default=None,
                        help="the shot count to draw (default: the largest one every file has)")  # fmt: skip
    parser.add_argument("--labels", type=_names, default=None, help="comma-separated model names, one per file")
    parser.set_defaults(func=_figure)


def _figure(args: argparse.Namespace) -> int:
    from pipelines.jbbq.report import write_figure_folder

    out = write_figure_folder(args.results, args.out, shots=args.shots, labels=args.labels)
    log.info("wrote %s (Figure 1 layout and Table 4 for %d results file(s))", out, len(args.results))
    return 0


def add_translate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("templates", nargs="*", help="BBQ template CSV file(s) to translate (and vocabulary.csv)")
    parser.add_argument("--out", required=True, help="folder for the drafts and review_sheet.csv")
    parser.add_argument("--route", choices=["both", "templates", "examples"], default="both",
                        help="templates: translate the templates with their slots protected; examples: translate "
                        "filled examples and align them back to the slots (the JBBQ authors' route); both "
                        "(default): both drafts side by side in the review sheet")  # fmt: skip
    parser.add_argument("--apply-review", metavar="SHEET", default=None,
                        help="instead of translating: read a filled-in review_sheet.csv (decision "
                        "keep/example/edit/exclude) and its drafts, and write <stem>.reviewed.csv into --out")  # fmt: skip
    parser.add_argument("--allow-unreviewed", action="store_true",
                        help="with --apply-review: keep the draft where 'decision' is blank instead of stopping")  # fmt: skip
    parser.add_argument("--server-url", default=os.environ.get("DEEPL_SERVER_URL"),
                        help="DeepL API base URL (default: $DEEPL_SERVER_URL, else DeepL's own, chosen by the key)")  # fmt: skip
    parser.add_argument("--cache-dir", default=None,
                        help="response cache; re-running resumes from it (default: $BIAS_HUB_CACHE/api/deepl)")  # fmt: skip
    parser.add_argument("--source-lang", default="EN")
    parser.add_argument("--target-lang", default="JA")
    parser.add_argument("--batch-size", type=int, default=25, help="texts per request")
    parser.add_argument("--max-retries", type=int, default=5,
                        help="retries per request (429, 5xx, dropped connections, malformed replies)")  # fmt: skip
    parser.add_argument("--backoff", type=float, default=1.0, help="first retry delay in seconds (doubles)")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    parser.set_defaults(func=_translate)


def _translate(args: argparse.Namespace) -> int:
    from builders.jbbq.translate import TranslationError, apply_review, translate_template_files

    if bool(args.apply_review) == bool(args.templates):
        raise ValueError("give template CSV files to translate, or --apply-review SHEET, not both")
    try:
        if args.apply_review:
            summary = apply_review(args.apply_review, args.out, target_lang=args.target_lang,
                                   allow_unreviewed=args.allow_unreviewed)  # fmt: skip
        else:
            summary = translate_template_files(
                args.templates, args.out, route=args.route, server_url=args.server_url, cache_dir=args.cache_dir,
                source_lang=args.source_lang, target_lang=args.target_lang, batch_size=args.batch_size,
                max_retries=args.max_retries, backoff_seconds=args.backoff, timeout=args.timeout,
                progress=args.verbosity >= 0,
            )  # fmt: skip
            log.info("translated %d texts (%d from the cache, %d requests); review %s",
                     summary["texts"], summary["cache_hits"], summary["requests"], summary["review_sheet"])  # fmt: skip
    except TranslationError as err:
        raise UserError(str(err)) from err
    sys.stdout.write(json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    from pipelines.common import pipeline_command

    parser = subparsers.add_parser("jbbq", help="JBBQ bias QA: evaluate an LLM, draw Figure 1, translate BBQ templates")
    inner = parser.add_subparsers(dest="jbbq_command", required=True, metavar="COMMAND")
    evaluate = pipeline_command(
        inner, "evaluate",
        run="pipelines.jbbq.run:run", settings="pipelines.jbbq.run:Settings",
        help="prompt a model (local or OpenAI-compatible API) with JBBQ and score its bias",
        description="Prompt a model with JBBQ questions (basic / unknown / paraphrase prompts, 0..k shots; "
        "--preset paper by default) and write results.json, predictions.jsonl, Figure 1 per shot count and "
        "report.md with intervals and paired comparisons.",
        model_help="Hub id or local folder of a causal LM (--backend hf), or the API's model name (--backend openai)",
        dataset_help="a JBBQ-format dataset folder, or a dataset name under --datasets-root (default: jbbq)",
    )  # fmt: skip
    add_evaluate_arguments(evaluate)
    add_figure_arguments(inner.add_parser(
        "figure", help="draw the paper's Figure 1 (and Table 4) for several models' results.json",
        description="Figure 1 of Yanaka et al. (2024) for several `jbbq evaluate` runs, models side by side: "
        "accuracy per category on ambiguous and disambiguated contexts per prompt, the accuracy difference and "
        "bias scores of the basic prompt, chance rate 0.33; plus Table 4 (accuracy and error rate).",
    ))  # fmt: skip
    add_translate_arguments(inner.add_parser(
        "translate", help="translate BBQ template CSVs to Japanese drafts with DeepL, plus a review sheet",
        description="Machine-translate BBQ template CSVs with DeepL (key from DEEPL_AUTH_KEY) into draft "
        "templates in the same CSV schema plus review_sheet.csv for the human review that JBBQ's authors did "
        "for every template; then --apply-review turns the filled-in sheet into reviewed templates.",
    ))  # fmt: skip
