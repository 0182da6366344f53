"""The nli commands end to end on a tiny model and a small evaluation-set fixture."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import datasets
import numpy as np
import pytest

from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder
from bias_hub.builders.nli_bias_controlled.rows import TrainingTemplate, build_rows, features
from bias_hub.builders.nli_gender_bias.lexicon import Occupation
from bias_hub.pipelines import cli
from bias_hub.pipelines.common import ModelOptions, RunFolder, load_model
from bias_hub.pipelines.common.render import macros
from bias_hub.pipelines.common.stats import correlation, holm
from bias_hub.pipelines.nli import meta_evaluation, report
from bias_hub.pipelines.nli.evaluation import load_evaluation_rows
from bias_hub.pipelines.nli.run import run_evaluate
from bias_hub.pipelines.nli.settings import EvaluateSettings, MetaSettings
from bias_hub.pipelines.nli.training import checkpoint_folder

REPO = Path(__file__).resolve().parents[2]
SUBSETS = ("pro_stereotypical", "anti_stereotypical", "non_stereotypical")
TEMPLATES = ("{}が公園を歩いている。", "{}が駅で電車を待っている。")
OCCUPATIONS = {
    "看護師": ("nurse", "female_stereotyped"),
    "大工": ("carpenter", "male_stereotyped"),
    "会計士": ("accountant", "non_stereotyped"),
}


@pytest.fixture(autouse=True, scope="module")
def _one_torch_thread():
    """Tiny models train faster on one thread, and threads fight on a shared 2-core machine."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _evaluation_rows() -> list[dict]:
    rows = []
    for ja, (en, kind) in OCCUPATIONS.items():
        for t, template in enumerate(TEMPLATES):
            for gender, word in (("female", "女性"), ("male", "男性")):
                if kind == "non_stereotyped":
                    subset = "non_stereotypical"
                else:
                    subset = (
                        "pro_stereotypical" if kind.startswith(gender) else "anti_stereotypical"
                    )
                rows.append(
                    {
                        "id": f"{en}-{t}-{gender}",
                        "premise": template.format(ja),
                        "hypothesis": template.format(word),
                        "label": 1,
                        "occupation": ja,
                        "occupation_en": en,
                        "occupation_type": kind,
                        "hypothesis_gender": gender,
                        "template_id": f"t{t}",
                        "subset": subset,
                    }
                )
    return rows


@pytest.fixture(scope="session")
def fixture_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nli")
    features = datasets.Features(
        {
            **{
                k: datasets.Value("string")
                for k in (
                    "id",
                    "premise",
                    "hypothesis",
                    "occupation",
                    "occupation_en",
                    "occupation_type",
                    "hypothesis_gender",
                    "template_id",
                    "subset",
                )
            },
            "label": datasets.ClassLabel(names=["entailment", "neutral", "contradiction"]),
        }
    )
    rows = _evaluation_rows()
    configs = {"all": {"test": datasets.Dataset.from_list(rows, features=features)}}
    for subset in SUBSETS:
        configs[subset] = {
            "test": datasets.Dataset.from_list(
                [r for r in rows if r["subset"] == subset], features=features
            )
        }
    metadata = CardMetadata("fixture", "mit", ["ja"], ["text-classification"])
    write_dataset_folder(root / "datasets" / "nli_gender_bias", configs, metadata, "# fixture")
    return root


@pytest.fixture(scope="session")
def tiny_model(fixture_root: Path) -> Path:
    from transformers import BertConfig, BertForSequenceClassification

    from bias_hub.pipelines.nli.tokenizer import build_japanese_tokenizer

    out = fixture_root / "tiny-model"
    texts = [t for r in _evaluation_rows() for t in (r["premise"], r["hypothesis"])] + [
        "医者が走った。"
    ]
    tokenizer = build_japanese_tokenizer(texts, out)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        num_labels=3,
        id2label={0: "entailment", 1: "neutral", 2: "contradiction"},
        label2id={"entailment": 0, "neutral": 1, "contradiction": 2},
    )
    import torch

    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(str(out))
    return out


def test_batched_prediction_equals_one_pair_at_a_time(tiny_model: Path) -> None:
    import torch

    from bias_hub.pipelines.nli.predict import encode_pairs, predict_logits

    model, tokenizer = load_model(
        str(tiny_model), "sequence-classification", ModelOptions(device="cpu")
    )
    rows = _evaluation_rows()
    premises = [r["premise"] for r in rows] + ["医者が走った。"]
    hypotheses = [r["hypothesis"] for r in rows] + ["女性が走った。"]
    logits = predict_logits(
        model, encode_pairs(tokenizer, premises, hypotheses, 128), batch_size=5, progress=False
    )
    with torch.inference_mode():
        single = np.stack(
            [
                model(**tokenizer(p, h, return_tensors="pt")).logits[0].numpy()
                for p, h in zip(premises, hypotheses, strict=True)
            ]
        )
    np.testing.assert_allclose(logits, single, atol=1e-5)


def test_evaluate_writes_the_full_report(
    tiny_model: Path, fixture_root: Path, tmp_path: Path, repo_root: Path
) -> None:
    out = tmp_path / "report"
    code = cli.main(
        [
            "nli",
            "evaluate",
            "--model",
            str(tiny_model),
            str(tiny_model),
            "--out",
            str(out),
            "--datasets-root",
            str(fixture_root / "datasets"),
            "--batch-size",
            "4",
        ]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert results["pairs"] == 12
    model = results["models"][str(tiny_model)]
    # PS: nurse+female and carpenter+male, 2 templates each; AS the reverse; NS accountant x 2 genders x 2.
    assert model["counts"] == {
        "pro_stereotypical": 4,
        "anti_stereotypical": 4,
        "non_stereotypical": 4,
    }
    assert set(model["table"]) >= {
        "e_PS",
        "n_PS",
        "c_AS",
        "n_NS",
        "bias_score",
        "FN",
        "NN",
        "T:0.5",
        "T:0.7",
    }
    shares = json.loads((out / "per_occupation.json").read_text())[str(tiny_model)]
    assert sum(o["score_share"] for o in shares) == pytest.approx(model["bias_score"])
    assert (out / "label_fractions.png").stat().st_size > 0
    report_text = (out / "report.md").read_text()
    assert "Occupations that drive the score" in report_text and "| model |" in report_text
    assert len((out / "predictions_0.jsonl").read_text().splitlines()) == 12
    assert (results["part"], results["step"]) == ("nli", "evaluate")
    # report.md and the figure come from results.json alone: rendered again, the same report.
    again = tmp_path / "again"
    again.mkdir()
    report.render(results, again)
    assert (again / "report.md").read_text() == report_text and (
        again / "label_fractions.png"
    ).is_file()


def test_unmappable_model_labels_fail_with_the_labels_found(
    fixture_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], tiny_model: Path
) -> None:
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    model = AutoModelForSequenceClassification.from_pretrained(str(tiny_model))
    model.config.id2label = {0: "LABEL_0", 1: "LABEL_1", 2: "LABEL_2"}
    model.config.label2id = {v: k for k, v in model.config.id2label.items()}
    plain = tmp_path / "plain"
    model.save_pretrained(str(plain))
    AutoTokenizer.from_pretrained(str(tiny_model)).save_pretrained(str(plain))
    args = [
        "nli",
        "evaluate",
        "--model",
        str(plain),
        "--out",
        str(tmp_path / "r"),
        "--datasets-root",
        str(fixture_root / "datasets"),
    ]
    assert cli.main(args) == 2
    assert "['LABEL_0', 'LABEL_1', 'LABEL_2'] cannot be mapped" in capsys.readouterr().err
    assert (
        cli.main([*args, "--label-map", "LABEL_0=entailment,LABEL_1=neutral,LABEL_2=contradiction"])
        == 0
    )


def _train_file(path: Path) -> Path:
    rows = [
        {
            "s1": r["premise"],
            "s2": r["hypothesis"],
            "gold": ["entailment", "neutral", "contradiction"][i % 3],
        }
        for i, r in enumerate(_evaluation_rows())
    ]
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )
    return path


def _train_args(model: Path, data: Path, out: Path) -> list[str]:
    return [
        "nli",
        "train",
        "--model",
        str(model),
        "--dataset",
        str(data),
        "--columns",
        "s1,s2,gold",
        "--out",
        str(out),
        "--batch-size",
        "4",
        "--learning-rate",
        "1e-3",
    ]


@pytest.mark.slow  # trains or evaluates end to end through the CLI
def test_train_saves_checkpoints_and_resumes(
    tiny_model: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from transformers import Trainer

    data = _train_file(tmp_path / "train.jsonl")
    out = tmp_path / "run"
    checkpoints = checkpoint_folder(out)
    assert checkpoints == tmp_path / "run.checkpoints"
    args = _train_args(tiny_model, data, out)
    # The model folder appears only once training has finished.
    seen_during_training = []
    train = Trainer.train

    def watched(self, *positional, **keywords):
        seen_during_training.append(out.exists())
        return train(self, *positional, **keywords)

    monkeypatch.setattr(Trainer, "train", watched)
    assert cli.main([*args, "--epochs", "1"]) == 0
    assert seen_during_training == [False]
    # 12 rows in batches of 4: 3 steps per epoch, a checkpoint after each epoch.
    assert (checkpoints / "checkpoint-3").is_dir()
    assert cli.main([*args, "--epochs", "2"]) == 0
    console = capsys.readouterr()
    assert "resuming from" in console.err
    # Trainer's loss dicts go to the model folder's log, not to the console.
    assert "train_runtime" not in console.out + console.err
    state = json.loads((checkpoints / "checkpoint-6" / "trainer_state.json").read_text())
    assert state["global_step"] == 6
    summary = json.loads((out / "results.json").read_text())
    assert summary["train_rows"] == 12 and summary["global_step"] == 6
    assert json.loads((out / "config.json").read_text())["id2label"] == {
        "0": "entailment",
        "1": "neutral",
        "2": "contradiction",
    }
    logged = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    assert logged[-1]["step"] == 6 and "train_loss" in logged[-1]
    manifest = {entry["path"] for entry in json.loads((out / "manifest.json").read_text())["files"]}
    assert {
        "config.json",
        "model.safetensors",
        "vocab.txt",
        "results.json",
        "train_log.jsonl",
    } <= manifest


@pytest.mark.slow  # trains or evaluates end to end through the CLI
def test_interrupted_training_keeps_the_finished_model_folder(
    tiny_model: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from transformers import Trainer

    data = _train_file(tmp_path / "train.jsonl")
    out = tmp_path / "run"
    args = _train_args(tiny_model, data, out)
    assert cli.main([*args, "--epochs", "1"]) == 0
    before = (out / "model.safetensors").read_bytes()

    def interrupted(self, *positional, **keywords):
        raise KeyboardInterrupt

    monkeypatch.setattr(Trainer, "train", interrupted)
    assert cli.main([*args, "--epochs", "2"]) == 2
    assert (
        f"training interrupted; the last checkpoint is {checkpoint_folder(out) / 'checkpoint-3'}"
        in capsys.readouterr().err
    )
    assert (out / "model.safetensors").read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run", "run.checkpoints", "train.jsonl"]


def test_train_with_an_unusable_out_fails_before_training(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _train_file(tmp_path / "train.jsonl")
    out = tmp_path / "a-file"
    out.write_text("not a folder")
    assert cli.main(_train_args(tiny_model, data, out)) == 2
    assert f"--out {out}: is a file" in capsys.readouterr().err
    assert not checkpoint_folder(out).exists()


def test_train_rejects_labels_outside_the_mapping(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "bad.jsonl"
    data.write_text('{"premise": "a", "hypothesis": "b", "label": "maybe"}\n', encoding="utf-8")
    code = cli.main(
        [
            "nli",
            "train",
            "--model",
            str(tiny_model),
            "--dataset",
            str(data),
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code == 2
    assert "['maybe'] outside the mapping" in capsys.readouterr().err


@pytest.mark.slow
def test_train_under_accelerate_launch_one_cpu_process(tiny_model: Path, tmp_path: Path) -> None:
    data = _train_file(tmp_path / "train.jsonl")
    out = tmp_path / "accelerated"
    command = [
        str(Path(sys.executable).with_name("accelerate")),
        "launch",
        "--cpu",
        "--num_processes",
        "1",
        "--num_machines",
        "1",
        "--mixed_precision",
        "no",
        "--dynamo_backend",
        "no",
        "-m",
        "bias_hub",
        "nli",
        "train",
        "--model",
        str(tiny_model),
        "--dataset",
        str(data),
        "--columns",
        "s1,s2,gold",
        "--out",
        str(out),
        "--epochs",
        "1",
        "--batch-size",
        "6",
    ]
    done = subprocess.run(
        command,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "ACCELERATE_CONFIG_FILE": str(tmp_path / "none.yaml")},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads((out / "results.json").read_text())["global_step"] == 2


def test_spearman_by_hand() -> None:
    # The meta-evaluation's correlations come from the shared helper.
    assert correlation([0.0, 0.5, 1.0], [0.1, 0.2, 0.3])["statistic"] == pytest.approx(1.0)
    assert correlation([0.0, 0.5, 1.0], [0.3, 0.2, 0.1])["statistic"] == pytest.approx(-1.0)
    assert correlation([0.0, 0.5, 1.0], [0.2, 0.2, 0.2])["statistic"] is None


@pytest.mark.slow
def test_meta_evaluation_runs_per_seed_and_rate(
    tiny_model: Path, fixture_root: Path, tmp_path: Path, repo_root: Path
) -> None:

    selected = {
        kind: [Occupation(en, ja, kind, 0.0, -0.9 if kind.startswith("female") else 0.9)]
        for ja, (en, kind) in OCCUPATIONS.items()
    }
    templates = [
        TrainingTemplate("a", "{subject}が本を読んだ。"),
        TrainingTemplate("b", "{subject}が走った。"),
    ]
    rates = [0.0, 0.5, 1.0]
    training = {
        r: datasets.Dataset.from_list(build_rows(selected, templates, r, 2), features=features())
        for r in rates
    }
    evaluation = load_evaluation_rows(None, fixture_root / "datasets")
    occupations = meta_evaluation.training_occupations(training, evaluation["occupation"])
    assert occupations == set(OCCUPATIONS)
    evaluation = evaluation.select(
        meta_evaluation.downsample_evaluation(evaluation, occupations, per_subset=3)
    )
    # The fixture holds 4 pairs per set (2 occupations or genders x 2 templates): 3 drawn from each.
    assert len(evaluation) == 9 and sorted(set(evaluation["subset"])) == sorted(SUBSETS)
    settings = MetaSettings(
        rates=rates,
        seeds=[0, 1],
        epochs=1,
        learning_rate=1e-3,
        batch_size=4,
        base_rate=0.5,
        base_epochs=1,
        reinitialize=True,
        progress=False,
        max_length=32,
    )
    summary = meta_evaluation.run_meta_evaluation(str(tiny_model), training, evaluation, settings)
    assert len(summary["runs"]) == 6
    assert {(r["seed"], r["rate"]) for r in summary["runs"]} == {
        (s, r) for s in (0, 1) for r in rates
    }
    assert summary["spearman_bias_score"]["n"] <= 2
    out = tmp_path / "meta"
    results = {
        "part": "nli",
        "step": "meta-evaluate",
        "description": "fixture",
        **{k: v for k, v in summary.items() if k != "train_log"},
    }
    with RunFolder(out) as folder:
        report.render(results, folder.path("."))
    assert (
        "Spearman(r, s)" in (out / "report.md").read_text()
        and (out / "scores_vs_rate.png").is_file()
    )


def test_token_dropout_replaces_only_ordinary_tokens(tiny_model: Path) -> None:
    from transformers import AutoTokenizer

    from bias_hub.pipelines.nli.training import _collator

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_model))
    features = [
        dict(tokenizer("看護師が公園を歩いている。", "女性が公園を歩いている。")),
        dict(tokenizer("医者が走った。", "女性")),
    ]
    everything = _collator(tokenizer, 1.0)(features)["input_ids"]
    nothing = _collator(tokenizer, 0.0)(features)["input_ids"]
    special = {tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id}
    keep = np.isin(nothing.numpy(), list(special))
    # At rate 1 every ordinary token is [UNK]; [CLS], [SEP] and padding stay where they were.
    assert (everything.numpy()[keep] == nothing.numpy()[keep]).all()
    assert (everything.numpy()[~keep] == tokenizer.unk_token_id).all()


@pytest.mark.slow
def test_meta_evaluate_command_writes_report(
    tiny_model: Path, fixture_root: Path, tmp_path: Path
) -> None:
    selected = {
        kind: [Occupation(en, ja, kind, 0.0, 0.0)] for ja, (en, kind) in OCCUPATIONS.items()
    }
    templates = [
        TrainingTemplate("a", "{subject}が本を読んだ。"),
        TrainingTemplate("b", "朝に{subject}が走った。"),
    ]
    configs = {
        f"r{r:.1f}": {
            "train": datasets.Dataset.from_list(
                build_rows(selected, templates, r, 2), features=features()
            )
        }
        for r in (0.0, 0.5, 1.0)
    }
    training = tmp_path / "nli_bias_controlled"
    write_dataset_folder(
        training,
        configs,
        CardMetadata("fixture", "mit", ["ja"], ["text-classification"]),
        "# fixture",
    )
    out = tmp_path / "meta"
    code = cli.main(
        [
            "nli",
            "meta-evaluate",
            "--model",
            str(tiny_model),
            "--training-sets",
            str(training),
            "--datasets-root",
            str(fixture_root / "datasets"),
            "--rates",
            "0",
            "0.5",
            "1",
            "--seeds",
            "0",
            "--epochs",
            "1",
            "--learning-rate",
            "1e-3",
            "--base-rate",
            "0.5",
            "--base-epochs",
            "1",
            "--reinitialize",
            "--eval-per-subset",
            "3",
            "--batch-size",
            "4",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    assert [run["rate"] for run in results["runs"]] == [0.0, 0.5, 1.0]
    assert results["settings"]["base_rate"] == 0.5
    assert "Spearman(r, 1 − FN)" in (out / "report.md").read_text()


def test_occupations_of_authors_files_are_found_in_the_premises() -> None:
    # The authors' files carry no occupation column: names are matched in the premises, longest
    # first, so a premise about 建設作業員 does not also count for 作業員.
    table = datasets.Dataset.from_dict(
        {"premise": ["建設作業員が歩いた。", "看護師が座った。"], "occupation": ["", ""]}
    )
    found = meta_evaluation.training_occupations(
        {0.0: table}, ["作業員", "建設作業員", "看護師", "医者"]
    )
    assert found == {"建設作業員", "看護師"}


def _copy_model(tiny_model: Path, where: Path) -> Path:
    import shutil

    return Path(shutil.copytree(tiny_model, where))


@pytest.mark.slow  # trains or evaluates end to end through the CLI
def test_a_second_evaluation_replaces_the_whole_run_folder(
    tiny_model: Path, fixture_root: Path, tmp_path: Path, repo_root: Path
) -> None:
    other = _copy_model(tiny_model, tmp_path / "other-model")
    out = tmp_path / "report"
    common = [
        "--out",
        str(out),
        "--datasets-root",
        str(fixture_root / "datasets"),
        "--batch-size",
        "4",
    ]
    assert cli.main(["nli", "evaluate", "--model", str(tiny_model), str(other), *common]) == 0
    assert (out / "predictions_1.jsonl").is_file()
    # Fewer models the second time: nothing of the first run may stay beside the new one.
    assert cli.main(["nli", "evaluate", "--model", str(other), *common]) == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == [
        "label_fractions.png",
        "manifest.json",
        "per_occupation.json",
        "predictions_0.jsonl",
        "report.md",
        "results.json",
    ]
    assert list(json.loads((out / "results.json").read_text())["models"]) == [str(other)]
    listed = {entry["path"] for entry in json.loads((out / "manifest.json").read_text())["files"]}
    assert listed == set(files) - {"manifest.json"}


@pytest.mark.slow  # trains or evaluates end to end through the CLI
def test_a_failed_evaluation_leaves_the_previous_run_folder(
    tiny_model: Path,
    fixture_root: Path,
    tmp_path: Path,
    repo_root: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    out = tmp_path / "report"
    settings = EvaluateSettings(
        datasets_root=fixture_root / "datasets", batch_size=4, progress=False, device="cpu"
    )
    run_evaluate([str(tiny_model)], None, out, settings)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def broken(results: dict):
        raise RuntimeError("figure failed")

    # results.json and the predictions are written before the figure.
    monkeypatch.setattr(report, "plot_label_fractions", broken)
    with pytest.raises(RuntimeError, match="figure failed"):
        run_evaluate([str(tiny_model)], None, out, dataclasses.replace(settings, limit=5))
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]


@pytest.mark.parametrize("step", ["evaluate", "train", "meta-evaluate"])
def test_a_missing_model_folder_is_named_in_one_line(
    step: str, fixture_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-such-model"
    out = tmp_path / "report"
    data = ["--dataset", str(_train_file(tmp_path / "train.jsonl"))] if step == "train" else []
    code = cli.main(
        [
            "nli",
            step,
            "--model",
            str(missing),
            "--out",
            str(out),
            *data,
            "--datasets-root",
            str(fixture_root / "datasets"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert (
        err
        == f"bias-hub: error: --model {missing}: no such model folder (and not a Hub id of the form ORG/NAME)"
    )
    assert not out.exists()


def test_evaluate_refuses_a_model_without_a_trained_classifier(
    tiny_model: Path, fixture_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from transformers import AutoConfig, AutoTokenizer, BertForMaskedLM

    masked = tmp_path / "masked-lm"
    BertForMaskedLM(AutoConfig.from_pretrained(str(tiny_model))).save_pretrained(str(masked))
    AutoTokenizer.from_pretrained(str(tiny_model)).save_pretrained(str(masked))
    out = tmp_path / "report"
    code = cli.main(
        [
            "nli",
            "evaluate",
            "--model",
            str(masked),
            "--out",
            str(out),
            "--datasets-root",
            str(fixture_root / "datasets"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    # A masked LM has neither the pooler nor the classifier (two weights each) a classifier needs.
    assert (
        f"--model {masked}: BertForSequenceClassification would start with 4 newly initialised weight(s)"
        in err
    )
    assert "classifier.bias" in err
    assert not out.exists()


def test_meta_evaluate_points_to_the_builder_when_the_training_sets_are_missing(
    tiny_model: Path, fixture_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = cli.main(
        [
            "nli",
            "meta-evaluate",
            "--model",
            str(tiny_model),
            "--training-sets",
            str(tmp_path / "nowhere"),
            "--datasets-root",
            str(fixture_root / "datasets"),
            "--out",
            str(tmp_path / "meta"),
        ]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert f"--training-sets {tmp_path / 'nowhere'}: not a built dataset folder" in err
    assert "bias-hub build nli_bias_controlled --authors-dir DIR" in err
    assert not (tmp_path / "meta").exists()


def _authors_training_file(path: Path, rate: float) -> None:
    """A training file in the authors' release format: JSON lines of sentence1, sentence2, label."""
    rows = []
    for ja, (_, kind) in OCCUPATIONS.items():
        # At r the female-stereotyped occupations turn pro first (as in the release).
        pro = (
            kind == "female_stereotyped"
            and rate >= 0.5
            or kind == "male_stereotyped"
            and rate >= 1.0
        )
        for template in ("{}が本を読んだ。", "朝に{}が走った。"):
            for gender, word in (("female", "女性"), ("male", "男性")):
                if kind == "non_stereotyped":
                    label = "neutral"
                else:
                    congruent = kind.startswith(gender)
                    label = "entailment" if congruent == pro else "contradiction"
                rows.append(
                    {
                        "sentence1": template.format(ja),
                        "sentence2": template.format(word),
                        "label": label,
                    }
                )
    path.write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8"
    )


@pytest.mark.slow
def test_meta_evaluate_reads_the_authors_sets_once_built(
    tiny_model: Path, fixture_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    release = tmp_path / "bias-controlled-set_v1.1" / "train"
    release.mkdir(parents=True)
    for k in (0, 5, 10):
        _authors_training_file(release / f"train_r-{k}.json", k / 10)
    built = tmp_path / "built"
    assert (
        cli.main(
            [
                "build",
                "nli_bias_controlled",
                "--authors-dir",
                str(release.parent),
                "--out-root",
                str(built),
            ]
        )
        == 0
    )
    out = tmp_path / "meta"
    # Two seeds in two worker processes: their log lines reach this console.
    code = cli.main(
        [
            "nli",
            "meta-evaluate",
            "--model",
            str(tiny_model),
            "--training-sets",
            str(built / "nli_bias_controlled"),
            "--datasets-root",
            str(fixture_root / "datasets"),
            "--rates",
            "0",
            "0.5",
            "1",
            "--seeds",
            "0",
            "1",
            "--workers",
            "2",
            "--threads",
            "1",
            "--epochs",
            "1",
            "--learning-rate",
            "1e-3",
            "--base-rate",
            "0.5",
            "--base-epochs",
            "1",
            "--reinitialize",
            "--eval-per-subset",
            "3",
            "--batch-size",
            "4",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    err = capsys.readouterr().err
    assert "seed 1 r=1.0: s=" in err and "seed 0 r=0.0: s=" in err
    results = json.loads((out / "results.json").read_text())
    assert {(run["seed"], run["rate"]) for run in results["runs"]} == {
        (s, r) for s in (0, 1) for r in (0.0, 0.5, 1.0)
    }
    logged = [json.loads(line) for line in (out / "train_log.jsonl").read_text().splitlines()]
    # One Trainer summary line per trained model: a base model and three rates per seed.
    trained = Counter((line["seed"], line["rate"]) for line in logged if "train_loss" in line)
    assert trained == Counter(
        [(s, "base") for s in (0, 1)] + [(s, r) for s in (0, 1) for r in (0.0, 0.5, 1.0)]
    )


def test_holm_by_hand() -> None:
    # Sorted: 0.01 x 3 = 0.03, 0.03 x 2 = 0.06, 0.04 x 1 = 0.04 -> running maximum 0.03, 0.06, 0.06.
    np.testing.assert_allclose(holm([0.01, 0.04, 0.03]), [0.03, 0.06, 0.06])
    np.testing.assert_allclose(holm([0.5, 0.9]), [1.0, 1.0])


@pytest.mark.slow  # trains or evaluates end to end through the CLI
def test_evaluate_shows_intervals_and_holm_corrected_comparisons(
    tiny_model: Path, fixture_root: Path, tmp_path: Path
) -> None:
    other = _copy_model(tiny_model, tmp_path / "other-model")
    out = tmp_path / "report"
    common = [
        "--out",
        str(out),
        "--datasets-root",
        str(fixture_root / "datasets"),
        "--batch-size",
        "4",
        "--n-resamples",
        "200",
    ]
    assert cli.main(["nli", "evaluate", "--model", str(tiny_model), str(other), *common]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["intervals"] == {
        "confidence_level": 0.95,
        "n_resamples": 200,
        "bootstrap_unit": "items",
        "seed": 0,
    }
    model = results["models"][str(tiny_model)]
    interval = model["confidence_intervals"]["bias_score"]
    assert interval["confidence_level"] == 0.95 and interval["low"] <= interval["high"]
    # Wilson intervals of each label share: 4 pairs per set.
    share = model["fraction_intervals"]["pro_stereotypical"]["entailment"]
    low, high = share["low"], share["high"]
    assert 0 <= low <= model["fractions"]["pro_stereotypical"]["entailment"] <= high <= 1
    # Two copies of one model answer alike: B - A is 0 on every pair and nothing is significant.
    comparisons = results["comparisons"]
    assert comparisons["correction"] == "Holm" and len(comparisons["pairs"]) == 1
    pair = comparisons["pairs"][0]
    assert pair["bias_score"]["difference"] == 0 and pair["bias_score"]["significant"] is False
    report_text = (out / "report.md").read_text()
    s = model["bias_score"]
    assert f"{s:.3f} [{interval['low']:.3f}, {interval['high']:.3f}]" in report_text
    assert "## Paired comparisons" in report_text and "Holm-corrected" in report_text
    # --confidence-level none: bare values, no comparisons.
    assert (
        cli.main(
            [
                "nli",
                "evaluate",
                "--model",
                str(tiny_model),
                str(other),
                *common,
                "--confidence-level",
                "none",
            ]
        )
        == 0
    )
    results = json.loads((out / "results.json").read_text())
    assert (
        results["comparisons"] is None
        and "confidence_intervals" not in results["models"][str(tiny_model)]
    )
    assert "Paired comparisons: off" in (out / "report.md").read_text()


def test_an_unusable_confidence_level_fails_before_any_model_loads(
    tiny_model: Path, fixture_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The shared flag's type refuses it while parsing (argparse exits with 2).
    with pytest.raises(SystemExit) as exit_info:
        cli.main(
            [
                "nli",
                "evaluate",
                "--model",
                str(tiny_model),
                "--out",
                str(tmp_path / "r"),
                "--datasets-root",
                str(fixture_root / "datasets"),
                "--confidence-level",
                "95",
            ]
        )
    assert exit_info.value.code == 2
    assert (
        "--confidence-level: expected a number between 0 and 1 such as 0.95, or none (no intervals); got '95'"
        in capsys.readouterr().err
    )


def _training_folder(where: Path, rates=(0.0, 0.5, 1.0)) -> Path:
    selected = {
        kind: [Occupation(en, ja, kind, 0.0, 0.0)] for ja, (en, kind) in OCCUPATIONS.items()
    }
    templates = [
        TrainingTemplate("a", "{subject}が本を読んだ。"),
        TrainingTemplate("b", "朝に{subject}が走った。"),
    ]
    configs = {
        f"r{r:.1f}": {
            "train": datasets.Dataset.from_list(
                build_rows(selected, templates, r, 2), features=features()
            )
        }
        for r in rates
    }
    write_dataset_folder(
        where, configs, CardMetadata("fixture", "mit", ["ja"], ["text-classification"]), "# fixture"
    )
    return where


def test_init_model_writes_a_classifier_with_the_training_vocabulary(tmp_path: Path) -> None:
    training = _training_folder(tmp_path / "nli_bias_controlled")
    out = tmp_path / "scratch-model"
    assert (
        cli.main(
            [
                "nli",
                "init-model",
                "--out",
                str(out),
                "--training-sets",
                str(training),
                "--size",
                "mini",
                "--dropout",
                "0",
            ]
        )
        == 0
    )
    config = json.loads((out / "config.json").read_text())
    assert config["hidden_dropout_prob"] == config["attention_probs_dropout_prob"] == 0
    assert config["id2label"] == {"0": "entailment", "1": "neutral", "2": "contradiction"}
    assert (config["hidden_size"], config["num_hidden_layers"]) == (64, 2)
    vocabulary = (out / "vocab.txt").read_text(encoding="utf-8").split()
    # Every training sentence reads without [UNK]; characters never seen in training do not.
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(out))
    assert "[UNK]" not in tokenizer.tokenize("朝に看護師が走った。") + tokenizer.tokenize(
        "会計士が本を読んだ。"
    )
    assert tokenizer.tokenize("鰻") == ["[UNK]"]
    record = json.loads((out / "init_model.json").read_text())
    assert (
        record["size"] == "mini" and record["vocabulary"] == len(vocabulary) == config["vocab_size"]
    )
    # 3 occupations x 2 templates x 2 hypothesis genders.
    assert record["training_pairs"] == 12


@pytest.mark.slow
def test_meta_evaluate_uses_the_downsampled_sets_and_records_its_sources(tmp_path: Path) -> None:
    root = tmp_path / "datasets"
    training = _training_folder(root / "nli_bias_controlled")
    model = tmp_path / "from-init"
    assert (
        cli.main(
            [
                "nli",
                "init-model",
                "--out",
                str(model),
                "--datasets-root",
                str(root),
                "--size",
                "mini",
            ]
        )
        == 0
    )
    # An evaluation folder as the release: `all` and the authors' `all_downsampled` (here 2 pairs per set).
    features = datasets.Features(
        {
            **{
                k: datasets.Value("string")
                for k in (
                    "id",
                    "premise",
                    "hypothesis",
                    "occupation",
                    "occupation_en",
                    "occupation_type",
                    "hypothesis_gender",
                    "template_id",
                    "subset",
                )
            },
            "label": datasets.ClassLabel(names=["entailment", "neutral", "contradiction"]),
        }
    )
    rows = _evaluation_rows()
    chosen = [r for subset in SUBSETS for r in [x for x in rows if x["subset"] == subset][:2]]
    configs = {
        "all": {"test": datasets.Dataset.from_list(rows, features=features)},
        "all_downsampled": {"test": datasets.Dataset.from_list(chosen, features=features)},
    }
    write_dataset_folder(
        root / "nli_gender_bias",
        configs,
        CardMetadata("fixture", "mit", ["ja"], ["text-classification"]),
        "# f",
    )
    out = tmp_path / "meta"
    code = cli.main(
        [
            "nli",
            "meta-evaluate",
            "--model",
            str(model),
            "--datasets-root",
            str(root),
            "--rates",
            "0",
            "0.5",
            "1",
            "--seeds",
            "0",
            "1",
            "--epochs",
            "1",
            "--learning-rate",
            "1e-3",
            "--reinitialize",
            "--batch-size",
            "4",
            "--n-resamples",
            "200",
            "--target-spearman",
            "0.8",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    provenance = results["provenance"]
    assert provenance["evaluation"]["config"] == "all_downsampled"
    assert provenance["evaluation"]["per_subset"] == {subset: 2 for subset in SUBSETS}
    assert provenance["training"]["folder"] == str(training.resolve())
    assert provenance["training"]["configs"] == {"0.0": "r0.0", "0.5": "r0.5", "1.0": "r1.0"}
    assert provenance["model"]["created_by"]["size"] == "mini" and provenance["seeds"] == [0, 1]
    assert {"torch", "transformers", "datasets"} <= set(provenance["versions"])
    # Per seed, r = 0 against r = 1 on the same pairs, Holm over the two seeds.
    paired = results["paired"]
    assert paired["correction"] == "Holm" and [c["seed"] for c in paired["comparisons"]] == [0, 1]
    report_text = (out / "report.md").read_text()
    assert "config `all_downsampled`" in report_text and "Versions:" in report_text
    assert "Criterion mean Spearman(r, s) ≥ 0.8:" in report_text
    assert "## The lowest against the highest rate" in report_text


@pytest.mark.slow  # trains or evaluates end to end through the CLI
def test_train_reads_jsnli_as_distributed(tiny_model: Path, tmp_path: Path) -> None:
    # JSNLI's layout: no header, label<TAB>premise<TAB>hypothesis, Juman++ words joined by spaces.
    lines = [
        f"{['entailment', 'neutral', 'contradiction'][i % 3]}\t{' '.join(r['premise'])}\t{' '.join(r['hypothesis'])}"
        for i, r in enumerate(_evaluation_rows())
    ]
    data = tmp_path / "train_w_filtering.tsv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "run"
    assert (
        cli.main(
            [
                "nli",
                "train",
                "--model",
                str(tiny_model),
                "--dataset",
                str(data),
                "--out",
                str(out),
                "--epochs",
                "1",
                "--batch-size",
                "4",
                "--learning-rate",
                "1e-3",
            ]
        )
        == 0
    )
    summary = json.loads((out / "results.json").read_text())
    assert summary["dataset_format"] == "jsnli" and summary["train_rows"] == 12
    # A raw-text model gets the sentences back without the spaces between words.
    assert summary["text"] == {
        "segmentation": "raw",
        "done": "JSNLI's Juman++ segmentation joined back into sentences",
    }
    # 12 pairs in batches of 4.
    assert summary["global_step"] == 3


def test_a_juman_model_without_juman_is_one_line_naming_what_to_install(
    tiny_model: Path,
    fixture_root: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    from bias_hub.pipelines.nli import segmentation

    monkeypatch.setattr(segmentation.shutil, "which", lambda name: None)
    code = cli.main(
        [
            "nli",
            "evaluate",
            "--model",
            str(tiny_model),
            "--out",
            str(tmp_path / "r"),
            "--datasets-root",
            str(fixture_root / "datasets"),
            "--segmentation",
            "jumanpp",
        ]
    )
    assert code == 2
    errors = [
        line for line in capsys.readouterr().err.splitlines() if line.startswith("bias-hub: error:")
    ]
    assert len(errors) == 1 and errors[0].startswith("bias-hub: error: --segmentation jumanpp:")
    assert "the jumanpp program (not on PATH)" in errors[0] and "pip install rhoknp" in errors[0]
    assert not (tmp_path / "r").exists()


# --- hostile input to the NLI commands ------------------------------------------------------


@pytest.mark.slow  # trains or evaluates end to end through the CLI
def test_train_refuses_to_resume_another_dataset_s_checkpoints(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `nli train --dataset B --out m` after `--dataset A --out m` resumed A's
    # checkpoint, trained 0 steps on B and said it was trained on B.
    first = _train_file(tmp_path / "a.jsonl")
    second = tmp_path / "b.jsonl"
    second.write_text(first.read_text(encoding="utf-8").replace("公園", "海辺"), encoding="utf-8")
    out = tmp_path / "run"
    assert cli.main([*_train_args(tiny_model, first, out), "--epochs", "1"]) == 0
    before = (out / "model.safetensors").read_bytes()
    assert cli.main([*_train_args(tiny_model, second, out), "--epochs", "1"]) == 2
    err = capsys.readouterr().err
    assert (
        f"--out: {checkpoint_folder(out)} holds checkpoints of another training (dataset: {first} then, {second} now)"
        in err
    )
    assert "Pass --no-resume to start over on this data" in err
    assert (out / "model.safetensors").read_bytes() == before
    # --no-resume starts over on B: 12 pairs in batches of 4, 3 steps of its own.
    assert cli.main([*_train_args(tiny_model, second, out), "--epochs", "1", "--no-resume"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["dataset"] == str(second) and results["global_step"] == 3
    assert (results["part"], results["step"]) == ("nli", "train")


def test_train_refuses_changed_pairs_under_the_same_file_name(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _train_file(tmp_path / "train.jsonl")
    out = tmp_path / "run"
    assert cli.main([*_train_args(tiny_model, data, out), "--epochs", "1"]) == 0
    data.write_text(data.read_text(encoding="utf-8").replace("公園", "海辺"), encoding="utf-8")
    assert cli.main([*_train_args(tiny_model, data, out), "--epochs", "2"]) == 2
    assert f"the pairs of {data} differ from the ones trained on" in capsys.readouterr().err


@pytest.mark.slow  # trains or evaluates end to end through the CLI
def test_evaluate_refuses_a_never_trained_init_model(
    fixture_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Before: `nli evaluate` scored the random classifier of `nli init-model` (s = 0.667) without a word.
    model = tmp_path / "scratch"
    training = _training_folder(tmp_path / "nli_bias_controlled")
    assert (
        cli.main(
            [
                "nli",
                "init-model",
                "--out",
                str(model),
                "--training-sets",
                str(training),
                "--size",
                "mini",
            ]
        )
        == 0
    )
    assert json.loads((model / "results.json").read_text())["step"] == "init-model"
    out = tmp_path / "report"
    args = [
        "nli",
        "evaluate",
        "--model",
        str(model),
        "--out",
        str(out),
        "--datasets-root",
        str(fixture_root / "datasets"),
        "--batch-size",
        "4",
        "--confidence-level",
        "none",
    ]
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert (
        f"--model {model}: made by `nli init-model` and never trained (its init_model.json says so)"
        in err
    )
    assert "--allow-untrained" in err and not out.exists()
    assert cli.main([*args, "--allow-untrained"]) == 0
    assert json.loads((out / "results.json").read_text())["pairs"] == 12


def test_evaluate_names_a_dataset_that_is_not_the_nli_sets(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # JBBQ's folder used to be loaded as 'pairs', then a bare datasets error.
    other = tmp_path / "jbbq"
    rows = [{"question": "誰？", "answer": 0}]
    configs = {
        "Age": {"test": datasets.Dataset.from_list(rows)},
        "all": {"test": datasets.Dataset.from_list(rows)},
    }
    write_dataset_folder(
        other, configs, CardMetadata("fixture", "mit", ["ja"], ["question-answering"]), "# f"
    )
    out = tmp_path / "r"
    assert (
        cli.main(
            [
                "nli",
                "evaluate",
                "--model",
                str(tiny_model),
                "--dataset",
                str(other),
                "--out",
                str(out),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert (
        f"--dataset {other}, config all: no column(s) premise, hypothesis, subset, occupation"
        in err
    )
    assert (
        cli.main(
            [
                "nli",
                "evaluate",
                "--model",
                str(tiny_model),
                "--dataset",
                str(other),
                "--config",
                "pairs",
                "--out",
                str(out),
            ]
        )
        == 2
    )
    assert (
        f"--dataset {other}: has no config 'pairs' (its configs: Age, all)"
        in capsys.readouterr().err
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        # `if settings.limit:` read 0 as no limit.
        (["--limit", "0"], "--limit 0: expected a whole number of at least 1"),
        # An IndexError traceback.
        (["--limit", "-5"], "--limit -5: expected a whole number of at least 1"),
        # 0 threads accepted.
        (["--threads", "0"], "--threads 0: expected a whole number of at least 1"),
        # A report written from pairs cut to no text.
        (["--max-length", "1"], "--max-length 1: a pair needs at least 5 tokens"),
    ],
)
def test_evaluate_refuses_sizes_that_cannot_be_meant(
    tiny_model: Path,
    fixture_root: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: list,
    message: str,
) -> None:
    out = tmp_path / "r"
    code = cli.main(
        [
            "nli",
            "evaluate",
            "--model",
            str(tiny_model),
            "--out",
            str(out),
            "--datasets-root",
            str(fixture_root / "datasets"),
            *flags,
        ]
    )
    assert code == 2
    errors = [
        line for line in capsys.readouterr().err.splitlines() if line.startswith("bias-hub: error:")
    ]
    assert len(errors) == 1 and errors[0].startswith(f"bias-hub: error: {message}")
    assert not out.exists()


def test_train_names_the_row_without_a_hypothesis(
    tiny_model: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A TypeError traceback from the tokenizer.
    data = tmp_path / "train.jsonl"
    data.write_text(
        '{"premise": "看護師が走った。", "hypothesis": "女性が走った。", "label": "neutral"}\n'
        '{"premise": "大工が走った。", "label": "neutral"}\n',
        encoding="utf-8",
    )
    assert (
        cli.main(
            [
                "nli",
                "train",
                "--model",
                str(tiny_model),
                "--dataset",
                str(data),
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    assert (
        "column 'hypothesis' of row 1 is missing; expected a sentence in every row"
        in capsys.readouterr().err
    )
    assert not (tmp_path / "o").exists()


def _provenance(training_data: str) -> dict:
    return {
        "model": {"name": "m", "reinitialize": False, "created_by": None},
        "training": {
            "folder": "/d/nli_bias_controlled",
            "split": "train",
            "configs": {"0.0": "r0.0"},
            "rows": {"0.0": 12},
            "rows_used": None,
            "card": {"training_data": training_data},
        },
        "evaluation": {
            "folder": "/d/nli_gender_bias",
            "config": "all_downsampled",
            "selection": "all",
            "per_subset": {"pro_stereotypical": 2},
        },
        "seeds": [0],
        "versions": {"torch": "2"},
    }


def test_the_report_says_when_the_models_trained_on_the_release_s_dev_files() -> None:
    # The release tarball ships no train_r-K.json, so `--train-on-dev` trains on
    # dev/dev_r-K.json; report.md never said so.
    lines = macros(report.TABLES, **report.HELPERS).provenance(_provenance("dev/dev_r-K.json"))
    assert (
        "training data: the release's dev files `dev/dev_r-K.json` (built with `--train-on-dev`"
        in lines
    )
    lines = macros(report.TABLES, **report.HELPERS).provenance(_provenance("train/train_r-K.json"))
    assert "training data: `train/train_r-K.json`." in lines and "dev files" not in lines


def test_meta_evaluate_help_names_train_on_dev(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # argparse may break a long flag at its hyphens
    with pytest.raises(SystemExit):
        cli.main(["nli", "meta-evaluate", "--help"])
    assert "--train-on-dev" in " ".join(capsys.readouterr().out.split())


# Slow: a model initialised and fine-tuned end to end under the preset (12 s on 2 cores).
@pytest.mark.slow
def test_a_preset_fills_the_settings_and_records_each_departure(tmp_path: Path) -> None:
    root = tmp_path / "datasets"
    _training_folder(root / "nli_bias_controlled")
    model = tmp_path / "from-init"
    assert (
        cli.main(
            [
                "nli",
                "init-model",
                "--out",
                str(model),
                "--datasets-root",
                str(root),
                "--size",
                "mini",
            ]
        )
        == 0
    )
    features = datasets.Features(
        {
            **{
                k: datasets.Value("string")
                for k in (
                    "id",
                    "premise",
                    "hypothesis",
                    "occupation",
                    "occupation_en",
                    "occupation_type",
                    "hypothesis_gender",
                    "template_id",
                    "subset",
                )
            },
            "label": datasets.ClassLabel(names=["entailment", "neutral", "contradiction"]),
        }
    )
    write_dataset_folder(
        root / "nli_gender_bias",
        {"all": {"test": datasets.Dataset.from_list(_evaluation_rows(), features=features)}},
        CardMetadata("fixture", "mit", ["ja"], ["text-classification"]),
        "# f",
    )
    out = tmp_path / "meta"
    # The offline preset with a smaller run: 3 rates, one seed, one epoch each (three departures).
    code = cli.main(
        [
            "nli",
            "meta-evaluate",
            "--model",
            str(model),
            "--datasets-root",
            str(root),
            "--preset",
            "from-scratch",
            "--rates",
            "0",
            "0.5",
            "1",
            "--seeds",
            "0",
            "--base-epochs",
            "1",
            "--eval-per-subset",
            "3",
            "--batch-size",
            "4",
            "--n-resamples",
            "200",
            "--out",
            str(out),
        ]
    )
    assert code == 0
    results = json.loads((out / "results.json").read_text())
    settings = results["settings"]
    assert (
        settings["reinitialize"],
        settings["base_rate"],
        settings["learning_rate"],
        settings["token_dropout"],
        settings["max_length"],
    ) == (True, 0.5, 1e-3, 0.1, 64)
    departures = {d["setting"]: d for d in results["preset"]["departures"]}
    # and the stand-in it read: the from-scratch model of `nli init-model`, not a pretrained BERT
    assert set(departures) == {"rates", "seeds", "base_epochs", "eval_per_subset", "stand-in"}
    assert any(
        d["used"].endswith("BERT made from scratch, not a pretrained one")
        for d in results["preset"]["departures"]
        if d["setting"] == "stand-in"
    )
    assert departures["base_epochs"]["preset"] == 4.0 and departures["base_epochs"]["used"] == 1.0
    report_text = (out / "report.md").read_text()
    assert "Preset `from-scratch`, with these departures from it:" in report_text
    assert "- `base_epochs`: 1.0 instead of 4.0" in report_text
