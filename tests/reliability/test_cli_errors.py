"""Hostile command lines: each is refused before any work with one line naming the thing.

Models of the wrong kind used to run (a speciesism report from a randomly initialised masked-LM
head, "perplexities" from a masked LM) or to fail deep inside (a BERT classifier as JBBQ's LLM:
"index 128 is out of bounds"); a missing local path ended in chained tracebacks about Hub ids;
CUDA without CUDA and an unknown dtype were raw AssertionError / AttributeError.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bias_hub.pipelines.cli import main

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "he", "she", "is", "a", "pig", "."]


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        BertForSequenceClassification,
        BertTokenizerFast,
        GPT2Config,
        GPT2LMHeadModel,
    )

    root = tmp_path_factory.mktemp("hostile_models")
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(WORDS)})
    bert = BertConfig(
        vocab_size=len(WORDS),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=128,
    )
    made = {
        "classifier": BertForSequenceClassification(bert),
        "masked_lm": BertForMaskedLM(bert),
        "causal_lm": GPT2LMHeadModel(
            GPT2Config(vocab_size=len(WORDS), n_embd=16, n_layer=1, n_head=2)
        ),
    }
    for name, model in made.items():
        model.save_pretrained(root / name)
        tokenizer.save_pretrained(root / name)
    return {name: root / name for name in made}


@pytest.fixture(scope="module")
def datasets_root(tmp_path_factory) -> Path:
    """The parts' dataset folders, so every refusal below is the model's and not a missing dataset."""
    import json

    from bias_hub.builders import jbbq, speciesism_templates, stereoset_gender_swap

    root = tmp_path_factory.mktemp("hostile_datasets")
    source = root / "stereoset.jsonl"
    row = {
        "type": "intersentence",
        "target": "t",
        "bias_type": "gender",
        "context": "He is tall.",
        "stereotype": "She cooks.",
        "anti-stereotype": "He sings.",
        "unrelated": "A pig is.",
    }
    source.write_text(json.dumps(row) + "\n", encoding="utf-8")
    stereoset_gender_swap.build(root, source=source, use_names=False)
    speciesism_templates.build(root)
    jbbq.build(root)
    return root


def _error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert err, "no error line"
    return err[-1]


def test_speciesism_refuses_a_sequence_classifier(models, datasets_root, tmp_path, capsys) -> None:
    # Bad case 1 of README.md: used to exit 0 with a report from a randomly initialised masked-LM head.
    code = main(
        [
            "speciesism",
            "--model",
            str(models["classifier"]),
            "--out",
            str(tmp_path / "out"),
            "--datasets-root",
            str(datasets_root),
        ]
    )
    assert code == 2
    assert _error(capsys) == (
        f"bias-hub: error: --model {models['classifier']}: the checkpoint is a BertForSequenceClassification; "
        "expected a masked language model (…ForMaskedLM)"
    )
    assert not (tmp_path / "out").exists()


def test_stereoset_refuses_a_masked_lm_as_the_causal_lm(
    models, datasets_root, tmp_path, capsys
) -> None:
    # Bad case 2 of README.md: used to exit 0 with "perplexities" from a non-causal model.
    code = main(
        [
            "stereoset",
            "attention",
            "--model",
            str(models["masked_lm"]),
            "--lm",
            str(models["masked_lm"]),
            "--out",
            str(tmp_path / "out"),
            "--datasets-root",
            str(datasets_root),
        ]
    )
    assert code == 2
    assert _error(capsys) == (
        f"bias-hub: error: --lm {models['masked_lm']}: the checkpoint is a BertForMaskedLM; "
        "expected a causal language model (…ForCausalLM / …LMHeadModel)"
    )


def test_jbbq_refuses_a_bert_classifier(models, datasets_root, tmp_path, capsys) -> None:
    # Bad case 3 of README.md: used to fail with "index 128 is out of bounds" (and run with longer positions).
    code = main(
        [
            "jbbq",
            "evaluate",
            "--model",
            str(models["classifier"]),
            "--out",
            str(tmp_path / "out"),
            "--datasets-root",
            str(datasets_root),
        ]
    )
    assert code == 2
    assert (
        "the checkpoint is a BertForSequenceClassification; expected a causal language model"
        in _error(capsys)
    )


@pytest.mark.parametrize(
    "command",
    [
        ["nli", "evaluate"],
        ["jbbq", "evaluate"],
        ["stereoset", "attention", "--lm", "gpt2"],
        ["speciesism"],
    ],
    ids=["nli", "jbbq", "stereoset", "speciesism"],
)
def test_a_missing_local_model_path_is_one_line(command, datasets_root, tmp_path, capsys) -> None:
    # Bad case 10 of README.md: used to end in chained tracebacks: "Repo id must be in the form 'repo_name'".
    missing = tmp_path / "models" / "no-such-model"
    assert (
        main(
            [
                *command,
                "--model",
                str(missing),
                "--out",
                str(tmp_path / "out"),
                "--datasets-root",
                str(datasets_root),
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        f"bias-hub: error: --model {missing}: no such model folder (and not a Hub id of the form ORG/NAME)"
    )


def test_cuda_without_cuda_is_one_line(
    models, datasets_root, tmp_path, capsys, monkeypatch
) -> None:
    import torch

    # Whatever this machine has, the check is the same: pretend it has no CUDA.
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    code = main(
        [
            "speciesism",
            "--model",
            str(models["masked_lm"]),
            "--device",
            "cuda",
            "--out",
            str(tmp_path / "o"),
            "--datasets-root",
            str(datasets_root),
        ]
    )
    assert code == 2
    assert "--device cuda: CUDA is not available on this machine" in _error(capsys)


@pytest.mark.parametrize(
    "command",
    [["speciesism"], ["stereoset", "attention", "--lm", "x"]],
    ids=["speciesism", "stereoset"],
)
def test_unknown_dtype_is_one_line(command, models, datasets_root, tmp_path, capsys) -> None:
    code = main(
        [
            *command,
            "--model",
            str(models["masked_lm"]),
            "--dtype",
            "garbage",
            "--out",
            str(tmp_path / "o"),
            "--datasets-root",
            str(datasets_root),
        ]
    )
    assert code == 2
    assert _error(capsys).endswith(
        "--dtype garbage: expected one of auto, float32, bfloat16, float16"
    )


def test_out_that_is_a_file_fails_before_the_model_loads(
    models, datasets_root, tmp_path, capsys
) -> None:
    (tmp_path / "report.md").write_text("keep me")
    code = main(
        [
            "speciesism",
            "--model",
            str(models["masked_lm"]),
            "--out",
            str(tmp_path / "report.md"),
            "--datasets-root",
            str(datasets_root),
        ]
    )
    assert code == 2
    assert (
        _error(capsys)
        == f"bias-hub: error: --out {tmp_path / 'report.md'}: is a file; expected a folder (or a path to create one)"
    )
    assert (tmp_path / "report.md").read_text() == "keep me"


def test_verbose_shows_the_traceback(tmp_path) -> None:
    with pytest.raises(FileNotFoundError, match="no such folder"):
        main(
            [
                "speciesism",
                "-v",
                "--dataset",
                str(tmp_path / "no_dataset"),
                "--model",
                str(tmp_path / "absent"),
                "--out",
                str(tmp_path / "out"),
            ]
        )


def test_failed_correlate_leaves_no_files(tmp_path, capsys) -> None:
    # Bad case 8 of README.md: a correlate that exited 2 left correlations.json ("[]") and a header-only table.
    lonely = tmp_path / "lonely.csv"
    lonely.write_text("embedding,weat\ne1,0.1\n", encoding="utf-8")
    out = tmp_path / "correlation"
    assert main(["embeddings", "correlate", "--scores", str(lonely), "--out", str(out)]) == 2
    assert "no pair of columns has two embeddings" in capsys.readouterr().err
    assert not out.exists() and list(tmp_path.iterdir()) == [lonely]
