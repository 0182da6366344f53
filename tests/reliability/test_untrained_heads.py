"""Untrained heads are refused by every scorer unless ``--allow-untrained``.

``nli evaluate`` scored the never-trained classifier that ``nli init-model`` writes (bias score
0.667) without a word. A model saved with ``mark_untrained`` carries the mark in its
config.json; ``load_model`` (every scorer's loader) refuses it, ``--allow-untrained`` lets
plumbing tests through, and training drops the mark (``mark_trained``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bias_hub.pipelines.cli import main
from bias_hub.pipelines.common.models import (
    UNTRAINED_MARKER,
    ModelOptions,
    load_model,
    mark_trained,
    mark_untrained,
)

WORDS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "he", "she", "is", "a", "nurse", "."]
LABELS = {0: "entailment", 1: "neutral", 2: "contradiction"}


def _classifier(folder: Path, *, untrained: bool) -> Path:
    from transformers import BertConfig, BertForSequenceClassification, BertTokenizerFast

    config = BertConfig(
        vocab_size=len(WORDS),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        num_labels=3,
        id2label=LABELS,
        label2id={v: k for k, v in LABELS.items()},
    )
    model = BertForSequenceClassification(config)
    if untrained:
        mark_untrained(model, "bias-hub nli init-model")
    model.save_pretrained(folder)
    BertTokenizerFast(vocab={w: i for i, w in enumerate(WORDS)}).save_pretrained(folder)
    return folder


def test_the_mark_is_written_into_config_json(tmp_path: Path) -> None:
    folder = _classifier(tmp_path / "m", untrained=True)
    assert (
        json.loads((folder / "config.json").read_text())[UNTRAINED_MARKER]
        == "bias-hub nli init-model"
    )


def test_a_marked_model_is_refused_by_the_loader_of_every_scorer(tmp_path: Path) -> None:
    folder = _classifier(tmp_path / "m", untrained=True)
    with pytest.raises(ValueError) as refused:
        load_model(str(folder), "sequence-classification", ModelOptions(device="cpu"))
    assert str(refused.value) == (
        f"--model {folder}: its head was never trained (config.json: {UNTRAINED_MARKER}: 'bias-hub nli init-model'); "
        "a score from it measures a random initialisation. Train it first, or pass --allow-untrained for a plumbing test"
    )
    model, _ = load_model(
        str(folder), "sequence-classification", ModelOptions(device="cpu", allow_untrained=True)
    )
    assert type(model).__name__ == "BertForSequenceClassification"


def test_a_causal_lm_marked_untrained_is_refused_too(tmp_path: Path) -> None:
    from transformers import GPT2Config, GPT2LMHeadModel

    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(WORDS), n_embd=16, n_layer=1, n_head=2))
    mark_untrained(model, "a tiny random model")
    model.save_pretrained(tmp_path / "lm")
    with pytest.raises(ValueError, match="its head was never trained"):
        load_model(
            str(tmp_path / "lm"), "causal-lm", ModelOptions(device="cpu"), with_tokenizer=False
        )


def test_training_drops_the_mark(tmp_path: Path) -> None:
    folder = _classifier(tmp_path / "m", untrained=True)
    model, _ = load_model(
        str(folder),
        "sequence-classification",
        ModelOptions(device="cpu", allow_new_head=True),
        with_tokenizer=False,
    )
    mark_trained(model)
    model.save_pretrained(tmp_path / "trained")
    assert UNTRAINED_MARKER not in json.loads((tmp_path / "trained" / "config.json").read_text())
    load_model(
        str(tmp_path / "trained"),
        "sequence-classification",
        ModelOptions(device="cpu"),
        with_tokenizer=False,
    )


@pytest.fixture(scope="module")
def datasets_root(tmp_path_factory) -> Path:
    from bias_hub.builders import nli_gender_bias

    root = tmp_path_factory.mktemp("datasets")
    nli_gender_bias.build(root, source="templates")
    return root


def test_nli_evaluate_refuses_it_and_allow_untrained_lets_a_plumbing_test_through(
    tmp_path: Path, datasets_root: Path, capsys
) -> None:
    folder = _classifier(tmp_path / "m", untrained=True)
    argv = [
        "nli",
        "evaluate",
        "--model",
        str(folder),
        "--config",
        "generated_all",
        "--device",
        "cpu",
        "--datasets-root",
        str(datasets_root),
    ]
    assert main([*argv, "--out", str(tmp_path / "refused")]) == 2
    assert "its head was never trained" in capsys.readouterr().err
    assert not (tmp_path / "refused").exists()
    assert main([*argv, "--out", str(tmp_path / "plumbing"), "--allow-untrained"]) == 0
    assert (tmp_path / "plumbing" / "results.json").is_file()


def test_the_flag_is_one_of_the_common_flags() -> None:
    from bias_hub.pipelines.common.arguments import COMMON_FLAGS
    from bias_hub.pipelines.common.settings import RunSettings

    assert "--allow-untrained" in COMMON_FLAGS
    assert RunSettings().allow_untrained is False
    assert RunSettings(allow_untrained=True).model_options().allow_untrained is True
