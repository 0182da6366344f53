"""``bias-hub nli train | evaluate | meta-evaluate`` (pipeline commands) and ``nli init-model``: flags only."""

from __future__ import annotations

import argparse
from pathlib import Path

from bias_hub.pipelines.common import pipeline_command
from bias_hub.pipelines.common.arguments import (
    add_flags,
    add_interval_flags,
    add_root_flags,
    settings_defaults,
    settings_from_args,
)
from bias_hub.pipelines.nli.data import FORMATS
from bias_hub.pipelines.nli.random_model import SIZES
from bias_hub.pipelines.nli.segmentation import CHOICES
from bias_hub.pipelines.nli.settings import EvaluateSettings, InitSettings

# The CLI imports torch and transformers before running these commands, with Ctrl-C held
# meanwhile (a SIGINT inside torch's import can abort the process).
LOADS_MODELS = True


# The --max-length row (``add_flags``) of train, evaluate and meta-evaluate.
MAX_LENGTH = ("--max-length", int, "tokens per pair, longer pairs cut (default: %(default)s)")


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(","))


def _train(inner: argparse._SubParsersAction) -> None:
    train = pipeline_command(
        inner,
        "train",
        run="bias_hub.pipelines.nli.run:run_train",
        settings="bias_hub.pipelines.nli.settings:TrainSettings",
        preset_command="nli train",
        help="fine-tune a model on NLI with Trainer (paper defaults: 5 epochs, lr 2e-5, batch 32, length 128)",
        description="Fine-tune any sequence-classification model (or a base model, which gets a new NLI head) "
        "on NLI. Checkpoints go to OUT.checkpoints/ and the same command resumes from the last one; the model "
        "folder --out appears when training has finished. --dtype bfloat16/float16 trains in mixed precision. "
        "Several GPUs: accelerate launch -m bias_hub nli train ...",
        model_help="Hub id or local folder of the model to fine-tune",
        dataset_help="training data: a Hub dataset id, a dataset folder, JSNLI's train_w_filtering.tsv as "
        "distributed, or a .jsonl/.json/.csv/.tsv/.parquet file",
    )
    # Unlike evaluation, training has no data set of its own to fall back on.
    train._option_string_actions["--dataset"].required = True
    data = train.add_argument_group("training data")
    add_flags(
        data,
        ("--config", None, "dataset config (Hub or folder datasets)"),
        ("--split", None, "split to train on (default: %(default)s)"),
        ("--dataset-revision", None, "dataset revision on the Hub"),
        ("--eval-dataset", None, "optional evaluation set, same forms as --dataset"),
        ("--eval-split", None, "split of --eval-dataset to evaluate on (default: %(default)s)"),
        ("--columns", None, "PREMISE,HYPOTHESIS,LABEL column names (default: %(default)s)"),
        (
            "--label-names",
            _names,
            "the dataset's label values for entailment,neutral,contradiction (e.g. 0,1,2 or E,N,C)",
        ),
    )
    data.add_argument(
        "--format",
        dest="dataset_format",
        choices=FORMATS,
        help="jsnli: JSNLI's header-less label/premise/hypothesis TSV; table: named columns; "
        "auto (default): JSNLI's TSV is recognised by its first line",
    )
    data.add_argument("--max-train-samples", type=int, help="train on a seeded sample of this size")
    schedule = train.add_argument_group("training")
    _segmentation(train)
    add_flags(
        schedule,
        ("--tokenizer", None, "tokenizer id or folder (default: the model's)"),
        ("--epochs", float, "training epochs (default: %(default)s)"),
        ("--learning-rate", float, "peak learning rate of AdamW (default: %(default)s)"),
        ("--batch-size", int, "per device (default: %(default)s)"),
        MAX_LENGTH,
        (
            "--warmup-ratio",
            float,
            "share of the steps the learning rate warms up over (default: %(default)s)",
        ),
        ("--weight-decay", float, "AdamW weight decay (default: %(default)s)"),
    )
    schedule.add_argument(
        "--no-resume",
        dest="resume",
        action="store_false",
        help="start over: delete OUT.checkpoints/ instead of resuming from it",
    )


def _evaluate(inner: argparse._SubParsersAction) -> None:
    evaluate = pipeline_command(
        inner,
        "evaluate",
        run="bias_hub.pipelines.nli.run:run_evaluate",
        settings="bias_hub.pipelines.nli.settings:EvaluateSettings",
        preset_command="nli evaluate",
        help="predict the PS/AS/NS sets with one or more NLI classifiers and write the bias report",
        model_help="trained NLI classifiers: Hub ids or local folders",
        several_models=True,
        dataset_help="the evaluation sets: a dataset folder or a name under --datasets-root (default: nli_gender_bias)",
        out_default="reports/nli",
    )
    evaluate.add_argument(
        "--config",
        help="dataset config (default: the release's `all`, or `generated_all` when the folder "
        "was built without the release)",
    )
    evaluate.add_argument(
        "--batch-size",
        type=int,
        help="at most this many pairs per forward pass (default: as many as --batch-tokens allows)",
    )
    evaluate.add_argument(
        "--batch-tokens",
        type=int,
        help="tokens one forward pass holds, pairs x the longest (default: %(default)s; halved "
        "on out-of-memory)",
    )
    add_flags(evaluate, MAX_LENGTH)
    evaluate.add_argument(
        "--label-map",
        help="map model labels when their names are not NLI names, "
        "e.g. LABEL_0=entailment,LABEL_1=neutral,LABEL_2=contradiction",
    )
    _segmentation(evaluate)
    add_interval_flags(
        evaluate,
        unit="pairs within their set (or templates, see --bootstrap-unit)",
        bootstrap_units=EvaluateSettings.BOOTSTRAP_UNITS,
    )
    add_flags(
        evaluate,
        ("--threads", int, "torch CPU threads (default: torch's choice)"),
        ("--limit", int, "score a sample of this many pairs, drawn with --seed (smoke tests)"),
    )


def _meta(inner: argparse._SubParsersAction) -> None:
    meta = pipeline_command(
        inner,
        "meta-evaluate",
        run="bias_hub.pipelines.nli.run:run_meta_evaluate",
        settings="bias_hub.pipelines.nli.settings:MetaSettings",
        preset_command="nli meta-evaluate",
        help="bias-rate meta-evaluation: Spearman of s and 1 - FN with r",
        description="Fine-tune one model per seed and bias rate on the bias-controlled training sets, score "
        "each on the evaluation sets (by default the authors' down-sampled sets, all_downsampled) and correlate "
        "the scores with r (the paper: 0.820 for s, -0.114 for 1 - FN). A CPU run from scratch: "
        "bias-hub nli init-model --out M, then --model M --reinitialize --base-rate 0.5.",
        model_help="starting checkpoint (an NLI model in the paper)",
        dataset_help="the evaluation sets: a dataset folder or a name under --datasets-root (default: nli_gender_bias); "
        "--seed draws the pairs scored",
        out_default="reports/nli_meta",
    )
    meta.add_argument(
        "--training-sets",
        type=Path,
        help="built nli_bias_controlled folder (default: nli_bias_controlled under --datasets-root); "
        "the authors' released sets: bias-hub build nli_bias_controlled --authors-dir DIR "
        "--train-on-dev (the release tarball ships no train_r-K.json files: --train-on-dev trains on "
        "its dev/dev_r-K.json, and the report says so)",
    )
    meta.add_argument(
        "--config",
        help="evaluation config (default: the release's all_downsampled, the authors' recommended "
        "200 pairs per set; generated_all with --eval-per-subset pairs drawn where the folder "
        "has no release)",
    )
    meta.add_argument(
        "--rates",
        type=float,
        nargs="+",
        help="the bias rates r to train on, each a training config of --training-sets "
        "(default: 0.0 0.1 ... 1.0)",
    )
    meta.add_argument("--seeds", type=int, nargs="+", help="one training run per seed and rate")
    add_flags(
        meta,
        ("--epochs", float, "fine-tuning epochs per rate (paper: 3)"),
        ("--learning-rate", float, "fine-tuning learning rate (default: %(default)s)"),
        ("--batch-size", int, "pairs per training step (default: %(default)s)"),
        MAX_LENGTH,
        (
            "--base-rate",
            float,
            "first train one base model per seed on this rate, then fine-tune it on every rate "
            "(needed for models trained from scratch; 0.5 works)",
        ),
        ("--base-epochs", float, "epochs of the base model (default: %(default)s)"),
    )
    meta.add_argument(
        "--shared-base",
        action="store_true",
        help="one base model for every seed, trained with the first seed (the paper starts "
        "every run from one NLI model); the seeds then differ in their fine-tuning only",
    )
    meta.add_argument(
        "--base-learning-rate",
        type=float,
        help="learning rate of the base model (default: --learning-rate)",
    )
    meta.add_argument(
        "--reinitialize",
        action="store_true",
        help="ignore the checkpoint's weights: initialise from its config with each seed (from-scratch runs)",
    )
    meta.add_argument(
        "--eval-per-subset",
        type=int,
        help="pairs per set drawn from a config that is not down-sampled (default: 200, as the authors)",
    )
    meta.add_argument(
        "--max-train-samples",
        type=int,
        help="train on a seeded sample of this many pairs per rate (the same pairs at every rate)",
    )
    meta.add_argument(
        "--token-dropout",
        type=float,
        help="share of tokens replaced by [UNK] in training batches (from-scratch models; default 0)",
    )
    add_flags(meta, ("--workers", int, "run the seeds in this many processes (CPU: one per core)"))
    meta.add_argument(
        "--threads",
        type=int,
        help="torch threads per worker process (default 1; the numbers are the same on any "
        "machine for the same --threads)",
    )
    _segmentation(meta)
    add_interval_flags(meta, unit="evaluation pairs")
    meta.add_argument(
        "--target-spearman",
        type=float,
        help="state in the report whether the mean Spearman(r, s) over seeds reaches this value",
    )
    meta.add_argument("--description", help="Markdown put at the top of the report")


def _segmentation(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--segmentation",
        choices=CHOICES,
        help="how text meets the tokenizer: auto (default: Juman++ words for nlp-waseda/roberta-* "
        "and ku-nlp/deberta-v2-*, raw text otherwise), raw, jumanpp (needs rhoknp and the jumanpp "
        "program), as-is",
    )


def _init_model(inner: argparse._SubParsersAction) -> None:
    init = inner.add_parser(
        "init-model",
        help="create the from-scratch BERT NLI classifier a CPU meta-evaluation starts from",
        description="Write a randomly initialised BERT sequence classifier (entailment/neutral/contradiction) "
        "with a Japanese tokenizer whose vocabulary is built from the bias-controlled training text. No "
        "pretrained Japanese model is needed: nli meta-evaluate --model OUT --reinitialize --base-rate 0.5 "
        "trains it per seed (or --preset from-scratch). Its init_model.json marks it as never trained: "
        "nli evaluate refuses it without --allow-untrained.",
    )
    settings_defaults(init, InitSettings)
    init.add_argument(
        "--out", type=Path, required=True, help="model folder to write (replaced whole)"
    )
    init.add_argument(
        "--training-sets",
        type=Path,
        help="built nli_bias_controlled folder (default: nli_bias_controlled under --datasets-root)",
    )
    add_root_flags(init, metrics=False)
    add_flags(init, ("--rate", float, "the rate whose training text builds the vocabulary"))
    init.add_argument("--size", choices=SIZES, help="BERT size (default: %(default)s)")
    init.add_argument(
        "--tokenizer",
        choices=("wordpiece", "character"),
        help="wordpiece over fugashi words (default) or characters",
    )
    add_flags(
        init,
        ("--max-length", int, "the tokenizer's longest input in tokens (default: %(default)s)"),
    )
    init.add_argument(
        "--dropout",
        type=float,
        help="BERT's hidden and attention dropout (default: %(default)s; the demo trains with 0 "
        "and --token-dropout 0.1)",
    )
    init.add_argument("--seed", type=int, help="seed of the initial weights (default: %(default)s)")
    init.set_defaults(func=_run_init_model)


def _run_init_model(args: argparse.Namespace) -> int:
    from bias_hub.pipelines.nli.run import run_init_model

    run_init_model(None, args.training_sets, Path(args.out), settings_from_args(InitSettings, args))
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    nli = subparsers.add_parser("nli", help="NLI gender bias: fine-tune, evaluate, meta-evaluate")
    inner = nli.add_subparsers(dest="nli_command", required=True, metavar="STEP")
    _train(inner)
    _evaluate(inner)
    _meta(inner)
    _init_model(inner)
