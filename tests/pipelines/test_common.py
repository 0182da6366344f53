"""The shared pipeline pieces: model loader checks, run folders, device and dtype flags."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bias_hub.pipelines.common import command_line, load_model, resolve_device, resolve_dtype
from bias_hub.pipelines.common.models import ModelOptions, check_model_name


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, Path]:
    import torch
    from transformers import (
        BertConfig,
        BertForMaskedLM,
        BertForSequenceClassification,
        BertModel,
        GPT2Config,
        GPT2LMHeadModel,
    )

    bert = BertConfig(
        vocab_size=40,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
    )
    root = tmp_path_factory.mktemp("models")
    torch.manual_seed(0)
    made = {
        "classifier": BertForSequenceClassification(bert),
        "masked_lm": BertForMaskedLM(bert),
        "encoder": BertModel(bert),
        "causal_lm": GPT2LMHeadModel(GPT2Config(vocab_size=40, n_embd=16, n_layer=1, n_head=2)),
    }
    for name, model in made.items():
        model.save_pretrained(root / name)
    return {name: root / name for name in made}


def test_each_kind_loads_its_own_head(checkpoints) -> None:
    assert (
        type(
            load_model(
                str(checkpoints["classifier"]), "sequence-classification", with_tokenizer=False
            )[0]
        ).__name__
        == "BertForSequenceClassification"
    )
    assert (
        type(
            load_model(str(checkpoints["masked_lm"]), "masked-lm", with_tokenizer=False)[0]
        ).__name__
        == "BertForMaskedLM"
    )
    assert (
        type(
            load_model(str(checkpoints["causal_lm"]), "causal-lm", with_tokenizer=False)[0]
        ).__name__
        == "GPT2LMHeadModel"
    )
    model, _ = load_model(
        str(checkpoints["masked_lm"]),
        "encoder",
        ModelOptions(attentions=True),
        with_tokenizer=False,
    )
    assert model.config._attn_implementation == "eager"
    assert not model.training


@pytest.mark.parametrize(
    ("checkpoint", "kind", "message"),
    [
        # A classifier has no masked-LM head: transformers would initialise one at random.
        (
            "classifier",
            "masked-lm",
            r"BertForSequenceClassification; expected a masked language model",
        ),
        # BERT loads as BertLMHeadModel without a missing weight: only the architecture tells.
        ("masked_lm", "causal-lm", r"BertForMaskedLM; expected a causal language model"),
        (
            "classifier",
            "causal-lm",
            r"BertForSequenceClassification; expected a causal language model",
        ),
        ("masked_lm", "sequence-classification", r"newly initialised weight\(s\) \(.*classifier"),
        ("causal_lm", "masked-lm", r"GPT2LMHeadModel; expected a masked language model"),
    ],
)
def test_wrong_kind_is_refused_naming_class_and_expectation(
    checkpoints, checkpoint, kind, message
) -> None:
    with pytest.raises(ValueError, match=message):
        load_model(str(checkpoints[checkpoint]), kind, with_tokenizer=False)


def test_new_head_is_allowed_when_asked(checkpoints) -> None:
    model, _ = load_model(
        str(checkpoints["masked_lm"]),
        "sequence-classification",
        ModelOptions(allow_new_head=True),
        with_tokenizer=False,
    )
    assert type(model).__name__ == "BertForSequenceClassification"


def test_missing_local_path_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=r"--model ./no/such/model: no such model folder"):
        load_model("./no/such/model", "causal-lm")
    with pytest.raises(FileNotFoundError, match=r"--model .*/absent: no such model folder"):
        check_model_name(str(tmp_path / "absent"))


def test_folder_without_config_and_a_file_are_refused(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match="holds no config.json"):
        check_model_name(str(tmp_path / "empty"))
    (tmp_path / "weights.bin").write_bytes(b"")
    with pytest.raises(ValueError, match="is a file"):
        check_model_name(str(tmp_path / "weights.bin"))


def test_unreachable_hub_id_says_offline(monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(
        FileNotFoundError, match=r"--model some-org/absent-model: no local folder .*HF_HUB_OFFLINE"
    ):
        load_model("some-org/absent-model", "causal-lm")


def test_device_and_dtype_flags() -> None:
    import torch

    assert resolve_device("cpu") == "cpu"
    assert resolve_device(None) == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(
            ValueError, match=r"--device cuda: CUDA is not available on this machine"
        ):
            resolve_device("cuda")
    with pytest.raises(ValueError, match=r"--device tpu: expected cpu, cuda, cuda:N or mps"):
        resolve_device("tpu")
    assert resolve_dtype("bf16") is torch.bfloat16
    assert resolve_dtype("auto") == "auto"
    assert resolve_dtype(None) is None
    with pytest.raises(
        ValueError, match=r"--dtype garbage: expected one of auto, float32, bfloat16, float16"
    ):
        resolve_dtype("garbage")


def test_command_line_hides_the_token() -> None:
    assert (
        command_line(["nli", "evaluate", "--token", "hf_secret", "--model", "m"])
        == "bias-hub nli evaluate --token '***' --model m"
    )
    assert "hf_secret" not in command_line(["--token=hf_secret"])


def test_a_rebuilt_dataset_folder_is_read_anew(tmp_path: Path) -> None:
    import datasets

    from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder
    from bias_hub.pipelines.common import load_dataset_split

    meta = CardMetadata(pretty_name="t", license="mit", language=["en"], task_categories=["other"])
    features = datasets.Features({"x": datasets.Value("int64")})
    for values in ([1, 2], [7, 8, 9]):
        folder = write_dataset_folder(
            tmp_path / "same_name",
            {"a": {"test": datasets.Dataset.from_dict({"x": values}, features=features)}},
            meta,
            "# t",
        )
        assert load_dataset_split(folder, "a")["x"][:] == values


def test_built_rows_are_the_rows_load_dataset_reads(tmp_path: Path) -> None:
    import datasets
    import pyarrow as pa
    import pyarrow.parquet as pq

    from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder
    from bias_hub.pipelines.common import load_dataset_split
    from bias_hub.pipelines.common.locations import built_rows

    meta = CardMetadata(pretty_name="t", license="mit", language=["en"], task_categories=["other"])
    features = datasets.Features(
        {
            "id": datasets.Value("string"),
            "label": datasets.ClassLabel(names=["no", "yes"]),
            "score": datasets.Value("float32"),
            "words": datasets.Sequence(datasets.Value("string")),
            "answer": {"text": datasets.Value("string"), "start": datasets.Value("int32")},
        }
    )
    splits = {
        "train": [
            dict(id="t1", label=1, score=0.1, words=["a", "b"], answer=dict(text="x", start=3))
        ],
        "test": [
            dict(id="s1", label=0, score=2.5, words=[], answer=dict(text="", start=0)),
            dict(id="s2", label=1, score=-1.0, words=["c"], answer=dict(text="yz", start=7)),
        ],
    }
    folder = write_dataset_folder(
        tmp_path / "d",
        {
            "c": {
                name: datasets.Dataset.from_list(rows, features=features)
                for name, rows in splits.items()
            }
        },
        meta,
        "# t",
    )
    loaded = load_dataset_split(folder, "c", None)
    read = built_rows(folder, "c", None)
    assert read == {name: loaded[name].to_list() for name in ["train", "test"]}
    assert list(read) == list(loaded) == ["train", "test"]
    # float32 as datasets gives it: 0.1 is 0.100000001490116... once stored in 32 bits
    assert read["train"][0]["score"] != 0.1 and abs(read["train"][0]["score"] - 0.1) < 1e-8
    assert built_rows(folder, "c", "test") == {"test": loaded["test"].to_list()}
    assert built_rows(folder, "c", "all") == {
        "all": load_dataset_split(folder, "c", "all").to_list()
    }
    # What only datasets reads as the card means it: an unknown split (its error names the
    # splits), a file whose features are not the card's (datasets casts it).
    assert built_rows(folder, "c", "dev") is None
    data = folder / "c" / "test-00000-of-00001.parquet"
    data.unlink()
    pq.write_table(pa.table({"id": ["s1"], "label": [0], "score": [2.5]}), data)
    assert built_rows(folder, "c", "test") is None
    data.write_bytes(b"not parquet")
    with pytest.raises(
        ValueError,
        match=re.escape(
            f"dataset {folder}: c/test-00000-of-00001.parquet: not a readable Parquet file"
        ),
    ):
        built_rows(folder, "c", "test")


def test_holm_by_hand() -> None:
    from bias_hub.pipelines.common import holm

    # Sorted 0.01, 0.03, 0.04 of m = 3: 3 x 0.01 = 0.03; 2 x 0.03 = 0.06; 1 x 0.04 = 0.04,
    # raised to the running maximum 0.06. The None is no test and does not count towards m.
    assert holm([0.01, None, 0.04, 0.03]) == pytest.approx([0.03, None, 0.06, 0.06])
    assert holm([0.5, 0.9]) == [1.0, 1.0]  # 2 x 0.5 capped at 1
    assert holm([]) == []
