"""Local-model scoring on a tiny Llama created here, and the CLI end to end."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from jbbq_fixtures import fixture_rows, write_fixture_dataset

from bias_hub.pipelines import cli
from bias_hub.pipelines.common import ModelOptions
from bias_hub.pipelines.jbbq.hf_backend import HFModel, common_prefix_length
from bias_hub.pipelines.jbbq.prompting import PROMPT_NAMES, load_prompt
from bias_hub.pipelines.jbbq.random_model import build_tiny_model
from bias_hub.pipelines.jbbq.run import load_questions, run_evaluate
from bias_hub.pipelines.jbbq.settings import Settings

REPO_ROOT = Path(__file__).resolve().parents[2]
METRICS_DIR = REPO_ROOT / "metrics"
N_TEST_QUESTIONS = 16
CPU = ModelOptions(device="cpu")


def _corpus() -> list[str]:
    rows = fixture_rows()["all"]
    texts = [load_prompt(name).system for name in PROMPT_NAMES]
    texts += [load_prompt("basic").plain(row) for row in rows]
    return texts


@pytest.fixture(scope="module")
def tiny_models(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    import torch

    root = tmp_path_factory.mktemp("jbbq_tiny")
    # One thread: a model this small gains nothing from two, and two threads on a busy
    # machine make each forward pass up to 100x slower (threads wait for each other).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    build_tiny_model(root / "chat", _corpus(), seed=0)
    build_tiny_model(root / "plain", _corpus(), seed=1, chat_template=False)
    yield {"chat": root / "chat", "plain": root / "plain"}
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def fixture_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixture_dataset(tmp_path_factory.mktemp("jbbq_hf_fixture") / "jbbq")


def _reference_logprobs(
    model: HFModel, prompts: list[list[int]], choices: list[list[int]]
) -> np.ndarray:
    """Each prompt + choice on its own, no batching, padding or cache: the definition."""
    import torch

    out = np.zeros((len(prompts), len(choices)))
    with torch.inference_mode():
        for i, prompt in enumerate(prompts):
            for j, choice in enumerate(choices):
                ids = torch.tensor([prompt + choice])
                logprobs = torch.log_softmax(model.model(input_ids=ids).logits[0].float(), dim=-1)
                out[i, j] = sum(
                    float(logprobs[len(prompt) - 1 + t, tok]) for t, tok in enumerate(choice)
                )
    return out


def test_common_prefix_length() -> None:
    assert common_prefix_length([[1, 2, 3, 4], [1, 2, 5], [1, 2, 3]]) == 2
    assert common_prefix_length([[1, 2], [3]]) == 0
    assert common_prefix_length([[4, 5, 6]]) == 3


@pytest.mark.parametrize("prefix_cache", [True, False])
def test_choice_logprobs_equal_scoring_each_prompt_alone(
    tiny_models: dict[str, Path], prefix_cache: bool
) -> None:
    model = HFModel.load(str(tiny_models["chat"]), CPU, batch_size=3, prefix_cache=prefix_cache)
    prompt = load_prompt("unknown")
    rows = fixture_rows()["test"][:7]
    shots = fixture_rows()["train"][:2]
    prompts = [
        model.encode(model.render_chat(prompt.messages(row, shots)), chat=True) for row in rows
    ]
    assert common_prefix_length(prompts) > 8  # the system turn and shots are shared
    choices = [model.tokenizer(str(i), add_special_tokens=False)["input_ids"] for i in range(3)]
    assert all(len(c) == 1 for c in choices)
    expected = _reference_logprobs(model, prompts, choices)
    got = model.choice_logprobs(prompts, ["0", "1", "2"], progress=False)
    np.testing.assert_allclose(got, expected, atol=1e-4)
    # Multi-token choices take the general path.
    texts = [f"{i} です！" for i in range(3)]
    choice_ids = [model.tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
    assert max(len(c) for c in choice_ids) > 1
    np.testing.assert_allclose(
        model.choice_logprobs(prompts[:3], texts, progress=False),
        _reference_logprobs(model, prompts[:3], choice_ids),
        atol=1e-4,
    )


def _counting_forward(model: HFModel) -> list[tuple[int, int]]:
    """Record ``(rows, new tokens)`` of every forward pass of ``model``."""
    seen: list[tuple[int, int]] = []
    forward = model.model.forward

    def counted(*args, **kwargs):
        seen.append(tuple(kwargs["input_ids"].shape))
        return forward(*args, **kwargs)

    model.model.forward = counted
    return seen


def test_multi_token_choices_compute_each_prompt_once_after_the_shared_prefix(
    tiny_models: dict[str, Path],
) -> None:
    """The shared prefix once, each prompt's own tokens once, each choice's tokens but its
    first once per prompt: before, every choice went through its whole prompt again."""
    model = HFModel.load(str(tiny_models["chat"]), CPU, prefix_cache=True)
    prompt = load_prompt("unknown")
    shots = fixture_rows()["train"][:2]
    prompts = [
        model.encode(model.render_chat(prompt.messages(row, shots)), chat=True)
        for row in fixture_rows()["test"][:6]
    ]
    texts = [f"{i} です！" for i in range(3)]
    choice_ids = [model.tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]
    shared = common_prefix_length(prompts)
    expected = _reference_logprobs(model, prompts, choice_ids)
    seen = _counting_forward(model)
    np.testing.assert_allclose(
        model.choice_logprobs(prompts, texts, progress=False), expected, atol=1e-4
    )
    longest_choice = max(len(c) for c in choice_ids)
    # At most: the prefix, each prompt's rest padded to the longest rest, each choice's tokens
    # but the last padded to the longest choice.
    bound = shared + len(prompts) * (max(len(p) for p in prompts) - shared)
    bound += len(prompts) * len(choice_ids) * (longest_choice - 1)
    assert sum(rows * new for rows, new in seen) <= bound
    assert bound < sum(len(p) for p in prompts) * len(choice_ids) / 3


def test_batches_hold_as_many_prompts_as_the_token_budget_allows(
    tiny_models: dict[str, Path],
) -> None:
    """No fixed number of rows: a budget of tokens (rows x longest prompt) sizes each batch,
    and a larger budget takes larger batches."""
    prompts = [
        [5 + (i * 7 + j) % 50 for j in range(12 + i % 5)] for i in range(40)
    ]  # 40 short prompts, no shared prefix worth caching
    # 64 tokens: 5 rows of the shortest prompts (12 tokens); 1,000: all 40 (at most 16 tokens).
    for tokens, most in ((64, 5), (1000, 40)):
        model = HFModel.load(str(tiny_models["plain"]), CPU, batch_tokens=tokens)
        seen = _counting_forward(model)
        model.choice_logprobs(prompts, ["0", "1", "2"], progress=False)
        assert all(rows * width <= max(tokens, width) for rows, width in seen)
        assert max(rows for rows, _ in seen) == most


def test_out_of_memory_halves_the_batch_and_retries(tiny_models: dict[str, Path]) -> None:
    import torch

    model = HFModel.load(str(tiny_models["plain"]), CPU, batch_size=8, prefix_cache=False)
    prompt = load_prompt("basic")
    prompts = [model.encode(prompt.plain(row), chat=False) for row in fixture_rows()["test"]]
    expected = model.choice_logprobs(prompts, ["0", "1", "2"], progress=False)
    forward = model.model.forward
    seen: list[int] = []

    def small_memory(*args, **kwargs):
        seen.append(kwargs["input_ids"].shape[0])
        if kwargs["input_ids"].shape[0] > 3:
            raise torch.OutOfMemoryError("fake: out of memory")
        return forward(*args, **kwargs)

    model.model.forward = small_memory
    got = model.choice_logprobs(prompts, ["0", "1", "2"], progress=False)
    np.testing.assert_allclose(got, expected, atol=1e-5)
    assert model.batch_size == 2  # 8 -> 4 -> 2, then kept
    assert seen[:3] == [8, 4, 2] and set(seen[3:]) <= {2}


def _evaluate(model: Path, dataset: Path, out: Path, *extra: str) -> int:
    return cli.main(
        [
            "jbbq",
            "evaluate",
            "--model",
            str(model),
            "--dataset",
            str(dataset),
            "--metrics-root",
            str(METRICS_DIR),
            "--out",
            str(out),
            "--device",
            "cpu",
            "--quiet",
            *extra,
        ]
    )


def test_cli_loglikelihood_all_prompts_with_shots(
    tiny_models: dict[str, Path], fixture_dataset: Path, tmp_path: Path
) -> None:
    assert (
        _evaluate(
            tiny_models["chat"],
            fixture_dataset,
            tmp_path,
            "--preset",
            "none",
            "--shots",
            "0,2",
            "--seed",
            "3",
            "--n-resamples",
            "200",
        )
        == 0
    )
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert [(r["prompt"], r["shots"]) for r in results["runs"]] == [
        (p, k) for p in PROMPT_NAMES for k in (0, 2)
    ]
    train = {(row["category"], row["example_id"]) for row in fixture_rows()["train"]}
    for item in results["runs"]:
        assert item["metrics"]["unparsable_rate"] == 0.0
        assert set(item["metrics"]["per_category"]) == {"Age", "Gender_identity"}
        assert len(item["shot_examples"]) == item["shots"]
        assert all(
            (s["category"], s["example_id"]) in train for s in item["shot_examples"]
        )  # train only
    rows = [
        json.loads(line)
        for line in (tmp_path / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(rows) == 6 * N_TEST_QUESTIONS
    for row in rows:
        assert row["prediction"] == int(np.argmax(row["logprobs"]))
    # The metric sees exactly these predictions: overall accuracy recomputed by hand.
    basic0 = [r for r in rows if r["prompt"] == "basic" and r["shots"] == 0]
    accuracy = sum(r["prediction"] == r["label"] for r in basic0) / len(basic0)
    assert results["runs"][0]["metrics"]["accuracy"] == pytest.approx(accuracy)
    assert (tmp_path / "figure1_0shot.png").stat().st_size > 0
    assert (tmp_path / "figure1_2shot.png").stat().st_size > 0
    # Both shot counts answer the same questions; the pool holds the default 4 train templates, of
    # which the 2-shot run shows the first 2.
    assert (
        results["few_shot"]["held_out_questions"] == 0 and len(results["few_shot"]["examples"]) == 4
    )
    report = (tmp_path / "report.md").read_text(encoding="utf-8")
    for name in PROMPT_NAMES:
        assert f"prompt `{name}`" in report
    # The chat template's text, with the system turn and the first evaluated question.
    example = results["runs"][0]["example_prompt"]
    assert example.startswith("<|system|>\n" + load_prompt("basic").system)
    assert example.endswith("<|assistant|>\n")
    assert example in report


def test_cli_generate_plain_model_counts_unparsable(
    tiny_models: dict[str, Path], fixture_dataset: Path, tmp_path: Path
) -> None:
    code = _evaluate(
        tiny_models["plain"],
        fixture_dataset,
        tmp_path,
        "--preset",
        "table4",
        "--split",
        "test",
        "--max-new-tokens",
        "3",
        "--categories",
        "Age",
        "--confidence-level",
        "0",
    )
    assert code == 0
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    rows = [
        json.loads(line)
        for line in (tmp_path / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert len(rows) == 8 and {r["category"] for r in rows} == {"Age"}
    unparsable = sum(r["prediction"] == -1 for r in rows) / len(rows)
    assert results["runs"][0]["metrics"]["unparsable_rate"] == pytest.approx(unparsable)
    assert results["scorer"] == "hf (plain prompt)" and results["scoring"] == "generate"
    assert results["preset"]["name"] == "table4" and results["preset"]["departures"] == [
        {"setting": "split", "preset": "all", "used": "test", "section": None},
        {"setting": "max_new_tokens", "preset": 1, "used": 3, "section": None},
        # Only one category asked: a subset of the work, a departure too.
        {"setting": "categories", "preset": "all", "used": ["Age"], "section": None},
    ]
    assert (
        "confidence_intervals" not in results["runs"][0]["metrics"]
        and results["comparisons"] is None
    )
    # The Table 4 error rate is the share of unparsable replies per category and context.
    for condition in ("ambig", "disambig"):
        part = [r for r in rows if r["context_condition"] == condition]
        assert results["runs"][0]["error_rates"]["Age"][condition] == pytest.approx(
            sum(r["prediction"] == -1 for r in part) / len(part)
        )


def test_chat_mode_without_a_chat_template_is_an_error(
    tiny_models: dict[str, Path],
    fixture_dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert _evaluate(tiny_models["plain"], fixture_dataset, tmp_path, "--chat", "yes") == 2
    assert "no chat template" in capsys.readouterr().err


def test_empty_category_is_an_error(
    tiny_models: dict[str, Path],
    fixture_dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert (
        _evaluate(tiny_models["chat"], fixture_dataset, tmp_path, "--categories", "Age,Religion")
        == 2
    )
    err = capsys.readouterr().err
    assert "Religion" in err and "'Age', 'Gender_identity'" in err
    assert not (tmp_path / "results.json").exists()


def _questions(dataset: Path, **settings) -> list[dict]:
    return load_questions(dataset, Settings(preset=None, **settings))[0]


def test_limit_is_a_seeded_sample_per_category(fixture_dataset: Path) -> None:
    rows = _questions(fixture_dataset, limit=3, seed=5)
    assert [r["category"] for r in rows] == ["Age"] * 3 + ["Gender_identity"] * 3
    assert _questions(fixture_dataset, limit=3, seed=5) == rows
    everything = _questions(fixture_dataset)
    assert len(everything) == N_TEST_QUESTIONS
    ids = [(r["category"], r["example_id"]) for r in everything]
    picked = [ids.index((r["category"], r["example_id"])) for r in rows]
    assert picked == sorted(picked)  # dataset order kept
    with pytest.raises(ValueError, match="--limit"):
        run_evaluate("unused", fixture_dataset, fixture_dataset.parent / "never", Settings(limit=0))
    assert not (fixture_dataset.parent / "never").exists()


def test_run_with_a_settings_object_replaces_the_folder_whole(
    tiny_models: dict[str, Path], fixture_dataset: Path, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    settings = Settings(
        device="cpu",
        preset="none",
        prompts=["basic"],
        shots=[0, 2],
        progress=False,
        metrics_root=METRICS_DIR,
        token="hf_secret_value",
        model_label="tiny chat model",
        n_resamples=200,
    )
    first = run_evaluate(str(tiny_models["chat"]), fixture_dataset, out, settings)
    assert first["model"] == "tiny chat model" and [r["shots"] for r in first["runs"]] == [0, 2]
    assert json.loads((out / "results.json").read_text(encoding="utf-8")) == json.loads(
        json.dumps(first)
    )
    assert (out / "figure1_2shot.png").is_file()
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(f["path"] for f in manifest["files"]) == [
        "figure1_0shot.png",
        "figure1_2shot.png",
        "predictions.jsonl",
        "report.md",
        "results.json",
    ]
    assert all(
        "hf_secret_value" not in p.read_text(encoding="utf-8", errors="ignore")
        for p in out.iterdir()
    )
    # A second, smaller run leaves nothing of the first (no figure1_2shot.png, 16 prediction rows).
    run_evaluate(
        str(tiny_models["chat"]),
        fixture_dataset,
        out,
        Settings(
            device="cpu", preset=None, prompts=["basic"], progress=False, metrics_root=METRICS_DIR
        ),
    )
    assert not (out / "figure1_2shot.png").exists()
    assert (
        len((out / "predictions.jsonl").read_text(encoding="utf-8").splitlines())
        == N_TEST_QUESTIONS
    )


def test_a_model_that_is_not_a_causal_lm_is_refused_before_any_work(
    fixture_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from transformers import BertConfig, BertForSequenceClassification

    config = BertConfig(
        vocab_size=64,
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=4096,
    )
    BertForSequenceClassification(config).save_pretrained(tmp_path / "classifier")
    assert _evaluate(tmp_path / "classifier", fixture_dataset, tmp_path / "out") == 2
    err = capsys.readouterr().err
    assert (
        "BertForSequenceClassification; expected a causal language model" in err
        and "Traceback" not in err
    )
    assert not (tmp_path / "out").exists()
    assert _evaluate(tmp_path / "no-such-model", fixture_dataset, tmp_path / "out") == 2
    assert "no-such-model: no such model folder" in capsys.readouterr().err


def test_choices_are_tokenized_as_they_follow_the_prompt() -> None:
    """A SentencePiece-style tokenizer writes "0" alone as "▁0" but "応答:\\n0" ends in "0"."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    raw = Tokenizer(models.BPE(unk_token="<unk>"))
    raw.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme="always")
    raw.decoder = decoders.Metaspace(prepend_scheme="always")
    corpus = ["応答:\n0", "応答:\n1", "応答:\n2", "0 1 2", "質問 応答"] * 5
    raw.train_from_iterator(
        corpus, trainers.BpeTrainer(vocab_size=60, special_tokens=["<unk>"], show_progress=False)
    )
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, unk_token="<unk>")
    model = HFModel(model=None, tokenizer=tokenizer, batch_size=1)
    alone = tokenizer("0", add_special_tokens=False)["input_ids"]
    after = model.continuation_ids("質問\n応答:\n", "0", chat=False)
    assert tokenizer.convert_ids_to_tokens(alone)[0].startswith("▁")
    assert tokenizer.convert_ids_to_tokens(after) == ["0"]
    whole = model.encode("質問\n応答:\n0", chat=False)
    assert whole[-len(after) :] == after


def test_a_dataset_that_is_not_jbbq_format_is_one_line_naming_it_and_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An NLI dataset given to `jbbq evaluate` (was: KeyError 'category' traceback)."""
    import datasets

    from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder

    pairs = datasets.Dataset.from_list([{"premise": "p", "hypothesis": "h", "label": 0}] * 4)
    folder = write_dataset_folder(
        tmp_path / "nli",
        {"all": {"test": pairs}},
        CardMetadata(
            pretty_name="pairs",
            license="mit",
            language=["ja"],
            task_categories=["text-classification"],
        ),
        "# pairs\n",
        "all",
    )
    capsys.readouterr()  # the folder writer's progress bars
    # A folder that holds no model: it is never loaded, the dataset is refused first.
    (tmp_path / "no-model-needed").mkdir()
    code = _evaluate(
        tmp_path / "no-model-needed", folder, tmp_path / "out", "--preset", "none", "--shots", "0"
    )
    assert code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(
        f"bias-hub: error: --dataset {folder} (config 'all', split 'test'): not a JBBQ-format "
        "QA dataset, its rows have no field 'context', 'question', 'ans0'"
    )
    assert "'category'" in err and not (tmp_path / "out").exists()
