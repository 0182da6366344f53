"""``bias-hub nli train | evaluate | meta-evaluate`` (pipeline commands) and ``nli init-model``: flags only."""

from __future__ import annotations

import argparse
from pathlib import Path

from pipelines.common import pipeline_command
from pipelines.nli.data import FORMATS
from pipelines.nli.evaluation import BOOTSTRAP_UNITS
from pipelines.nli.scratch import SIZES
from pipelines.nli.segmentation import CHOICES


def _names(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(","))


def _train(inner: argparse._SubParsersAction) -> None:
    train = pipeline_command(
        inner, "train", run="pipelines.nli.run:run_train", settings="pipelines.nli.run:TrainSettings",
        help="fine-tune a model on NLI with Trainer (paper defaults: 5 epochs, lr 2e-5, batch 32, length 128)",
        description="Fine-tune any sequence-classification model (or a base model, which gets a new NLI head) "
        "on NLI. Checkpoints go to OUT.checkpoints/ and the same command resumes from the last one; the model "
        "folder --out appears when training has finished. --dtype bfloat16/float16 trains in mixed precision. "
        "Several GPUs: accelerate launch -m pipelines.cli nli train ...",
        model_help="Hub id or local folder of the model to fine-tune",
        dataset_help="training data: a Hub dataset id, a dataset folder, JSNLI's train_w_filtering.tsv as "
        "distributed, or a .jsonl/.json/.csv/.tsv/.parquet file",
    )  # fmt: skip
    # Unlike evaluation, training has no data set of its own to fall back on.
    train._option_string_actions["--dataset"].required = True
    # The seed this command has always used, so that earlier fine-tunings can be repeated.
    train.set_defaults(seed=42)
    data = train.add_argument_group("training data")
    data.add_argument("--config", default=None, help="dataset config (Hub or folder datasets)")
    data.add_argument("--split", default="train", help="split to train on (default: %(default)s)")
    data.add_argument("--dataset-revision", default=None, help="dataset revision on the Hub")
    data.add_argument("--eval-dataset", default=None, help="optional evaluation set, same forms as --dataset")
    data.add_argument("--eval-split", default="validation", help="(default: %(default)s)")
    data.add_argument("--columns", default="premise,hypothesis,label",
                      help="PREMISE,HYPOTHESIS,LABEL column names (default: %(default)s)")  # fmt: skip
    data.add_argument("--label-names", type=_names, default=None,
                      help="the dataset's label values for entailment,neutral,contradiction (e.g. 0,1,2 or E,N,C)")  # fmt: skip
    data.add_argument("--format", dest="dataset_format", choices=FORMATS, default="auto",
                      help="jsnli: JSNLI's header-less label/premise/hypothesis TSV; table: named columns; "
                      "auto (default): JSNLI's TSV is recognised by its first line")  # fmt: skip
    data.add_argument("--max-train-samples", type=int, default=None, help="train on a seeded sample of this size")
    schedule = train.add_argument_group("training")
    _segmentation(train)
    schedule.add_argument("--tokenizer", default=None, help="tokenizer id or folder (default: the model's)")
    schedule.add_argument("--epochs", type=float, default=5.0, help="(default: %(default)s)")
    schedule.add_argument("--learning-rate", type=float, default=2e-5, help="(default: %(default)s)")
    schedule.add_argument("--batch-size", type=int, default=32, help="per device (default: %(default)s)")
    schedule.add_argument("--max-length", type=int, default=128, help="(default: %(default)s)")
    schedule.add_argument("--warmup-ratio", type=float, default=0.0, help="(default: %(default)s)")
    schedule.add_argument("--weight-decay", type=float, default=0.0, help="(default: %(default)s)")
    schedule.add_argument("--no-resume", dest="resume", action="store_false",
                          help="start over: delete OUT.checkpoints/ instead of resuming from it")  # fmt: skip


def _evaluate(inner: argparse._SubParsersAction) -> None:
    evaluate = pipeline_command(
        inner, "evaluate", run="pipelines.nli.run:run_evaluate", settings="pipelines.nli.run:EvaluateSettings",
        help="predict the PS/AS/NS sets with one or more NLI classifiers and write the bias report",
        model_help="trained NLI classifiers: Hub ids or local folders", several_models=True,
        dataset_help="the evaluation sets: a dataset folder or a name under --datasets-root (default: nli_gender_bias)",
        out_default="reports/nli",
    )  # fmt: skip
    evaluate.add_argument("--config", default=None,
                          help="dataset config (default: the release's `all`, or `generated_all` when the folder "
                          "was built without the release)")  # fmt: skip
    evaluate.add_argument("--batch-size", type=int, default=64, help="(default: %(default)s)")
    evaluate.add_argument("--max-length", type=int, default=128, help="(default: %(default)s)")
    evaluate.add_argument("--label-map", default=None,
                          help="map model labels when their names are not NLI names, "
                          "e.g. LABEL_0=entailment,LABEL_1=neutral,LABEL_2=contradiction")  # fmt: skip
    _segmentation(evaluate)
    _intervals(evaluate)
    evaluate.add_argument("--bootstrap-unit", choices=BOOTSTRAP_UNITS, default="items",
                          help="what the bootstrap resamples: items (pairs within their set, default) or "
                          "templates (the pairs of one template together)")  # fmt: skip
    evaluate.add_argument("--threads", type=int, default=None, help="torch CPU threads (default: torch's choice)")
    evaluate.add_argument("--limit", type=int, default=None,
                          help="score a sample of this many pairs, drawn with --seed (smoke tests)")  # fmt: skip


def _meta(inner: argparse._SubParsersAction) -> None:
    meta = pipeline_command(
        inner, "meta-evaluate", run="pipelines.nli.run:run_meta_evaluate", settings="pipelines.nli.run:MetaSettings",
        help="bias-rate meta-evaluation: Spearman of s and 1 - FN with r",
        description="Fine-tune one model per seed and bias rate on the bias-controlled training sets, score "
        "each on the evaluation sets (by default the authors' down-sampled sets, all_downsampled) and correlate "
        "the scores with r (the paper: 0.820 for s, -0.114 for 1 - FN). A CPU run from scratch: "
        "bias-hub nli init-model --out M, then --model M --reinitialize --base-rate 0.5.",
        model_help="starting checkpoint (an NLI model in the paper)",
        dataset_help="the evaluation sets: a dataset folder or a name under --datasets-root (default: nli_gender_bias); "
        "--seed draws the pairs scored",
        out_default="reports/nli_meta",
    )  # fmt: skip
    meta.add_argument("--training-sets", type=Path, default=None,
                      help="built nli_bias_controlled folder (default: nli_bias_controlled under --datasets-root); "
                      "the authors' released sets: bias-hub build nli_bias_controlled --authors-dir DIR")  # fmt: skip
    meta.add_argument("--config", default=None,
                      help="evaluation config (default: the release's all_downsampled, the authors' recommended "
                      "200 pairs per set; generated_all with --eval-per-subset pairs drawn where the folder "
                      "has no release)")  # fmt: skip
    meta.add_argument("--rates", type=float, nargs="+", default=[k / 10 for k in range(11)])
    meta.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2], help="one training run per seed and rate")
    meta.add_argument("--epochs", type=float, default=3.0, help="fine-tuning epochs per rate (paper: 3)")
    meta.add_argument("--learning-rate", type=float, default=2e-5, help="(default: %(default)s)")
    meta.add_argument("--batch-size", type=int, default=32, help="(default: %(default)s)")
    meta.add_argument("--max-length", type=int, default=128, help="(default: %(default)s)")
    meta.add_argument("--base-rate", type=float, default=None,
                      help="first train one base model per seed on this rate, then fine-tune it on every rate "
                      "(needed for models trained from scratch; 0.5 works)")  # fmt: skip
    meta.add_argument("--base-epochs", type=float, default=10.0, help="(default: %(default)s)")
    meta.add_argument("--base-learning-rate", type=float, default=None, help="(default: --learning-rate)")
    meta.add_argument("--reinitialize", action="store_true",
                      help="ignore the checkpoint's weights: initialise from its config with each seed (from-scratch runs)")  # fmt: skip
    meta.add_argument("--eval-per-subset", type=int, default=200,
                      help="pairs per set drawn from a config that is not down-sampled (default: 200, as the authors)")  # fmt: skip
    meta.add_argument("--max-train-samples", type=int, default=None,
                      help="train on a seeded sample of this many pairs per rate (the same pairs at every rate)")  # fmt: skip
    meta.add_argument("--token-dropout", type=float, default=0.0,
                      help="share of tokens replaced by [UNK] in training batches (from-scratch models; default 0)")  # fmt: skip
    meta.add_argument("--workers", type=int, default=1, help="run the seeds in this many processes (CPU: one per core)")
    meta.add_argument("--threads", type=int, default=None, help="torch threads per process (CPU: 1 with --workers > 1)")
    _segmentation(meta)
    _intervals(meta)
    meta.add_argument("--target-spearman", type=float, default=None,
                      help="state in the report whether the mean Spearman(r, s) over seeds reaches this value")  # fmt: skip
    meta.add_argument("--description", default="", help="Markdown put at the top of the report")


def _segmentation(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--segmentation", choices=CHOICES, default="auto",
                        help="how text meets the tokenizer: auto (default: Juman++ words for nlp-waseda/roberta-* "
                        "and ku-nlp/deberta-v2-*, raw text otherwise), raw, jumanpp (needs rhoknp and the jumanpp "
                        "program), as-is")  # fmt: skip


def _level(text: str) -> float | None:
    if text.strip().lower() in {"0", "none", "off"}:
        return None
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a level such as 0.95, or 0/none to turn intervals off, got {text!r}") from None


def _intervals(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--confidence-level", type=_level, default=0.95,
                        help="interval level of every score and paired comparison (default: %(default)s; "
                        "0 or none: no intervals, no comparisons)")  # fmt: skip
    parser.add_argument("--n-resamples", type=int, default=2000, help="bootstrap resamples (default: %(default)s)")


def _init_model(inner: argparse._SubParsersAction) -> None:
    init = inner.add_parser(
        "init-model", help="create the from-scratch BERT NLI classifier a CPU meta-evaluation starts from",
        description="Write a randomly initialised BERT sequence classifier (entailment/neutral/contradiction) "
        "with a Japanese tokenizer whose vocabulary is built from the bias-controlled training text. No "
        "pretrained Japanese model is needed: nli meta-evaluate --model OUT --reinitialize --base-rate 0.5 "
        "trains it per seed.",
    )  # fmt: skip
    init.add_argument("--out", type=Path, required=True, help="model folder to write (replaced whole)")
    init.add_argument("--training-sets", type=Path, default=None,
                      help="built nli_bias_controlled folder (default: nli_bias_controlled under --datasets-root)")  # fmt: skip
    init.add_argument("--datasets-root", type=Path, default=None, help="where the built dataset folders are")
    init.add_argument("--rate", type=float, default=0.5, help="the rate whose training text builds the vocabulary")
    init.add_argument("--size", choices=SIZES, default="tiny", help="BERT size (default: %(default)s)")
    init.add_argument("--tokenizer", choices=("wordpiece", "character"), default="wordpiece",
                      help="wordpiece over fugashi words (default) or characters")  # fmt: skip
    init.add_argument("--max-length", type=int, default=128, help="(default: %(default)s)")
    init.add_argument("--dropout", type=float, default=0.1,
                      help="BERT's hidden and attention dropout (default: %(default)s; the demo trains with 0 "
                      "and --token-dropout 0.1)")  # fmt: skip
    init.add_argument("--seed", type=int, default=0, help="seed of the initial weights (default: %(default)s)")
    init.set_defaults(func=_run_init_model)


def _run_init_model(args: argparse.Namespace) -> int:
    from pipelines.nli.run import InitSettings, run_init_model

    settings = InitSettings(training_sets=args.training_sets, datasets_root=args.datasets_root, rate=args.rate,
                            size=args.size, tokenizer=args.tokenizer, max_length=args.max_length, dropout=args.dropout,
                            seed=args.seed)  # fmt: skip
    run_init_model(args.out, settings)
    return 0


def register(subparsers: argparse._SubParsersAction) -> None:
    nli = subparsers.add_parser("nli", help="NLI gender bias: fine-tune, evaluate, meta-evaluate")
    inner = nli.add_subparsers(dest="nli_command", required=True, metavar="STEP")
    _train(inner)
    _evaluate(inner)
    _meta(inner)
    _init_model(inner)
