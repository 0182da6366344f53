"""``bias-hub build jbbq [--source PATH]``: the command-line form of ``bias_hub.builders.jbbq.build``;
and ``bias-hub build jbbq-translation``, the DeepL flow of ``bias_hub.builders.jbbq.translate`` that drafts
JBBQ-style templates from BBQ's (its summary, the command's result, is JSON on standard output;
status lines go through ``logging``)."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys

log = logging.getLogger(__name__)

NAME = "jbbq"
HELP = "JBBQ (Japanese BBQ): the project's sample templates, or your own JBBQ copy with --source"
IN_ALL = True


def add_source_arguments(parser: argparse.ArgumentParser, source_help: str) -> None:
    """``--source`` (what it reads: ``source_help``), ``--seed`` and ``--skip-invalid``: the
    flags ``build jbbq`` and ``build bbq`` share."""
    parser.add_argument("--source", help=source_help)
    parser.add_argument("--seed", type=int, default=0, help="seed of the expander and the splits")
    parser.add_argument(
        "--skip-invalid",
        action="store_true",
        help="leave out question rows that break the schema (listed on stderr and in the card) "
        "instead of stopping at the first",
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_source_arguments(
        parser,
        "your JBBQ copy: a directory (a checkout's data/*.jsonl only), the archive the "
        "authors sent, a .jsonl file or template CSVs (default: the project's sample templates)",
    )
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing build of your own JBBQ copy with the sample",
    )


# ---- `bias-hub build jbbq-translation`: BBQ's templates machine-translated for review ----------


def add_translation_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "templates", nargs="*", help="BBQ template CSV file(s) to translate (and vocabulary.csv)"
    )
    parser.add_argument("--out", required=True, help="folder for the drafts and review_sheet.csv")
    parser.add_argument(
        "--route",
        choices=["both", "templates", "examples"],
        default="both",
        help="templates: translate the templates with their slots protected; examples: translate "
        "filled examples and align them back to the slots (the JBBQ authors' route); both "
        "(default): both drafts side by side in the review sheet",
    )
    parser.add_argument(
        "--apply-review",
        metavar="SHEET",
        help="instead of translating: read a filled-in review_sheet.csv (decision "
        "keep/example/edit/exclude) and its drafts, and write <stem>.reviewed.csv into --out",
    )
    parser.add_argument(
        "--allow-unreviewed",
        action="store_true",
        help="with --apply-review: keep the draft where 'decision' is blank instead of stopping",
    )
    parser.add_argument(
        "--server-url",
        default=os.environ.get("DEEPL_SERVER_URL"),
        help="DeepL API base URL (default: $DEEPL_SERVER_URL, else DeepL's own, chosen by the key)",
    )
    parser.add_argument(
        "--cache-dir",
        help="response cache; re-running resumes from it (default: $BIAS_HUB_CACHE/api/deepl)",
    )
    for flag, default, language in (
        ("--source-lang", "EN", "the templates' language"),
        ("--target-lang", "JA", "the language to translate into"),
    ):
        parser.add_argument(
            flag, default=default, help=f"DeepL code of {language} (default: %(default)s)"
        )
    parser.add_argument("--batch-size", type=int, default=25, help="texts per request")
    parser.add_argument(
        "--max-retries",
        type=int,
        default=5,
        help="retries per request (429, 5xx, dropped connections, malformed replies)",
    )
    parser.add_argument(
        "--backoff", type=float, default=1.0, help="first retry delay in seconds (doubles)"
    )
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    parser.set_defaults(func=_translate)


def _translate(args: argparse.Namespace) -> int:
    # The translation flow (and datasets, through the template schema) loads only when it runs:
    # `bias-hub` imports every builder command to list it.
    from bias_hub.builders.jbbq.translate import apply_review, translate_template_files

    if bool(args.apply_review) == bool(args.templates):
        raise ValueError("give template CSV files to translate, or --apply-review SHEET, not both")
    # A TranslationError is a UserError: the CLI prints it as one line.
    if args.apply_review:
        summary = apply_review(
            args.apply_review,
            args.out,
            target_lang=args.target_lang,
            allow_unreviewed=args.allow_unreviewed,
        )
    else:
        summary = translate_template_files(
            args.templates,
            args.out,
            route=args.route,
            server_url=args.server_url,
            cache_dir=args.cache_dir,
            source_lang=args.source_lang,
            target_lang=args.target_lang,
            batch_size=args.batch_size,
            max_retries=args.max_retries,
            backoff_seconds=args.backoff,
            timeout=args.timeout,
            progress=args.verbosity >= 0,
        )
        log.info(
            "translated %d texts (%d from the cache, %d requests, %d of them retries: %s); review %s",
            summary["texts"],
            summary["cache_hits"],
            summary["requests"],
            sum(summary["retried_by_cause"].values()),
            summary["retried_by_cause"] or "none",
            summary["review_sheet"],
        )
    sys.stdout.write(json.dumps(summary, ensure_ascii=False, indent=2) + "\n")
    return 0


def register_steps(subparsers: argparse._SubParsersAction) -> None:
    """Dataset-building steps of this builder that make no dataset folder of their own
    (``bias-hub build`` adds them beside ``build jbbq``)."""
    add_translation_arguments(
        subparsers.add_parser(
            "jbbq-translation",
            help="translate BBQ template CSVs to Japanese drafts with DeepL, plus a review sheet",
            description="Machine-translate BBQ template CSVs with DeepL (key from DEEPL_AUTH_KEY) into draft "
            "templates in the same CSV schema plus review_sheet.csv for the human review that JBBQ's authors did "
            "for every template; then --apply-review turns the filled-in sheet into reviewed templates (the "
            "input of `bias-hub build jbbq --source`).",
        )
    )
