"""bias-hub speciesism end to end on tiny masked LMs made here, plus its bad-input paths."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from bias_hub.pipelines.common import ModelOptions
from bias_hub.pipelines.speciesism import sentiment as sentiment_module
from bias_hub.pipelines.speciesism.fill_mask import (
    MaskedLM,
    name_pieces,
    token_strings,
    vocabulary_view,
)
from bias_hub.pipelines.speciesism.run import Settings, run


@pytest.fixture(scope="session", autouse=True)
def one_thread():
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny models: one thread beats an oversubscribed shared CPU
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def datasets_root(tmp_path_factory) -> Path:
    from bias_hub.builders.speciesism_templates import build

    root = tmp_path_factory.mktemp("speciesism_ds")
    build(root)
    return root


def _templates(root: Path, language: str) -> list[dict]:
    import datasets

    configs = (
        ("probability", "sentiment") if language == "en" else ("probability_ja", "sentiment_ja")
    )
    rows = [
        r
        for c in configs
        for r in datasets.load_dataset(str(root / "speciesism_templates"), c, split="test")
    ]
    return list({row["template_id"]: row for row in rows}.values())


@pytest.fixture(scope="session")
def tiny_en(tmp_path_factory, datasets_root) -> Path:
    from bias_hub.pipelines.speciesism.planted_model import make_tiny_masked_lm

    return make_tiny_masked_lm(
        tmp_path_factory.mktemp("tiny_en"), _templates(datasets_root, "en"), "en", steps=20
    )


@pytest.fixture(scope="session")
def english_run(tmp_path_factory, tiny_en, datasets_root) -> tuple[dict, Path]:
    out = tmp_path_factory.mktemp("speciesism_en_out")
    settings = Settings(
        animals=("pig", "cow", "dog", "person"),
        sentiment_top_k=3,
        association_words=2,
        datasets_root=datasets_root,
        batch_size=16,
        device="cpu",
        progress=False,
    )
    return run(str(tiny_en), None, out, settings), out


def test_english_run_writes_tables_chart_and_results(english_run):
    results, out = english_run
    for name in ("results.json", "report.md", "negative_share.png"):
        assert (out / name).stat().st_size > 0
    assert json.loads((out / "results.json").read_text())["language"] == "en"
    model = results["models"][0]
    assert set(model["change_rate"]) == {"study", "companion", "control"}
    study = model["change_rate"]["study"]
    assert study["n_rows"] == {
        "human": 4,
        "object": 12,
    }  # 2 animals x (2 human + 6 object templates)
    chance = 1 / model["vocabulary_size"]
    for entry in study["human_to_object"] + study["object_to_human"]:
        # The paper's tables: above chance in the starting form, and dropping.
        assert entry["p_start"] > chance and entry["p_end"] < entry["p_start"]
        # pieces, punctuation, numbers and special tokens never reach the tables
        assert entry["word"] not in {"##s", "##ed", ",", ".", "1", "[MASK]", "[PAD]", "ster"}
    for entry in study["gains"]["human_to_object"]:
        assert entry["p_start"] > chance and entry["p_end"] > entry["p_start"]
    report = (out / "report.md").read_text()
    assert "Object form → human form (as the paper's Tables 1 and 3)" in report
    assert "Human form → object form (as the paper's Tables 2 and 4)" in report
    # The paper's layout: word, probability in the object form, in the human form.
    assert "| word | P(object form) | P(human form) | change rate [95% CI] |" in report


def test_english_run_has_template_intervals(english_run):
    results, out = english_run
    study = results["models"][0]["change_rate"]["study"]
    assert study["n_templates"] == {"human": 2, "object": 6}
    intervals = study["confidence_intervals"]
    for key in ("object_to_human", "human_to_object"):
        assert study[key]
        for i in range(len(study[key])):
            interval = intervals[f"{key}[{i}]"]
            # Whole templates resampled within each form: 2 + 6 units.
            assert interval["unit"] == "templates" and interval["n_units"] == 8
            assert interval["confidence_level"] == 0.95
            if interval["low"] is not None:
                assert interval["low"] <= interval["high"]
    sentiment = results["models"][0]["sentiment"]
    overall = sentiment["confidence_intervals"]["overall_negative_share"]
    # The fills of one sentence move together: 4 animals, one sentence each.
    assert overall["n_units"] == 4
    pig = sentiment["confidence_intervals"]["negative_share.pig"]
    assert pig["unit"] == "fills" and pig["n_units"] == 3
    report = (out / "report.md").read_text()
    assert "resamples the **templates** within each form" in report


def test_english_sentiment_counts_three_fills_per_animal(english_run):
    results, _ = english_run
    sentiment = results["models"][0]["sentiment"]
    assert sentiment["n"] == {"cow": 3, "dog": 3, "person": 3, "pig": 3}
    for animal, share in sentiment["negative_share"].items():
        labels = [f["label"] for f in sentiment["fills"] if f["animal"] == animal]
        assert share == pytest.approx(labels.count("negative") / 3)


def test_split_name_gets_one_mask_per_piece(tmp_path, tiny_en, datasets_root):
    from bias_hub.pipelines.speciesism.fill_mask import load_masked_lm

    lm = load_masked_lm(str(tiny_en), ModelOptions(device="cpu"))
    pieces = name_pieces(lm, "It is a ", "hamster")
    assert lm.tokenizer.convert_ids_to_tokens(pieces) == ["ham", "##ster"]
    settings = Settings(
        animals=("hamster",),
        sentiment_top_k=2,
        association_words=1,
        datasets_root=datasets_root,
        device="cpu",
        progress=False,
    )
    results = run(str(tiny_en), None, tmp_path, settings)
    split = [
        count for text, count in results["warnings"].items() if "split into several pieces" in text
    ]
    assert split == [8]  # the 8 English probability templates, each naming the hamster once
    by_group = results["models"][0]["association"]["by_group"]
    assert (
        by_group["human|human_to_object"]["n"] == 2 and by_group["object|human_to_object"]["n"] == 6
    )


class _FakeTokenizer:
    """A byte-level-BPE-like vocabulary: word starts carry the Ġ marker."""

    tokens = ["<s>", "</s>", "<mask>", "Ġdried", "ed", "Ġ,", "Ġ1", "Ġhappy", ".", "Ġsliced"]
    all_special_tokens = ["<s>", "</s>", "<mask>"]

    def __len__(self) -> int:
        return len(self.tokens)

    def tokenize(self, text):
        return ["a", "Ġis", "Ġit"]

    def convert_ids_to_tokens(self, ids):
        return [self.tokens[i] for i in ids]

    def convert_tokens_to_string(self, tokens):
        return "".join(tokens).replace("Ġ", " ")


def test_vocabulary_view_keeps_only_word_starts_for_bpe():
    weight = SimpleNamespace(shape=(11, 4))  # one output row more than the tokenizer knows
    model = SimpleNamespace(get_output_embeddings=lambda: SimpleNamespace(weight=weight))
    lm = MaskedLM("fake", model, _FakeTokenizer(), "cpu")
    words, word_like = vocabulary_view(lm, "en")
    assert token_strings(lm)[3] == "Ġdried" and token_strings(lm)[10] == "<unused:10>"
    assert len(words) == 11 and words[3] == "dried"
    assert [w for w, keep in zip(words, word_like, strict=True) if keep] == [
        "dried",
        "happy",
        "sliced",
    ]
    assert not word_like[10]


def test_vader_backend_labels_by_hand():
    backend = sentiment_module.get_backend("bias_hub.pipelines.speciesism.sentiment:VaderBackend")
    labels = [
        label
        for label, _ in backend.judge(
            ["A person is dirty.", "A person is wonderful.", "A person is sliced."]
        )
    ]
    # VADER's lexicon: dirty is negative, wonderful positive, sliced absent (score 0).
    assert labels == ["negative", "positive", "neutral"]


@pytest.fixture(scope="session")
def ja_lexicon(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("ja_lexicon")
    nouns, wago = folder / "pn_noun.json", folder / "pn_wago.json"
    nouns.write_text(json.dumps({"天才": "p", "泥棒": "n"}, ensure_ascii=False), encoding="utf-8")
    wago.write_text(
        json.dumps(
            {
                "汚い": "ネガ（評価）",
                "臭い": "ネガ（評価）",
                "可愛い": "ポジ（評価）",
                "賢い": "ポジ（評価）",
            },
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    return nouns, wago


def test_japanese_lexicon_backend_by_hand(ja_lexicon):
    backend = sentiment_module.JapaneseLexiconBackend(*ja_lexicon)
    judged = backend.judge(
        [
            "その人は汚い。",
            "その人は汚くない。",
            "その人は天才だ。",
            "その人は人だ。",
            "その人は可愛いが臭い。",
        ]
    )
    assert [label for label, _ in judged] == [
        "negative",
        "positive",
        "positive",
        "neutral",
        "neutral",
    ]
    assert [score for _, score in judged] == [-1.0, 1.0, 1.0, 0.0, 0.0]


def test_japanese_run_with_lexicon(
    tmp_path, tmp_path_factory, datasets_root, ja_lexicon, monkeypatch
):
    from bias_hub.pipelines.speciesism.planted_model import make_tiny_masked_lm

    model = make_tiny_masked_lm(
        tmp_path_factory.mktemp("tiny_ja"), _templates(datasets_root, "ja"), "ja", steps=20
    )
    monkeypatch.setitem(
        sentiment_module.BACKENDS,
        "ja-lexicon",
        lambda language: sentiment_module.JapaneseLexiconBackend(*ja_lexicon),
    )
    settings = Settings(
        language="ja",
        animals=("pig", "dog"),
        sentiment_top_k=4,
        association_words=1,
        datasets_root=datasets_root,
        device="cpu",
        progress=False,
    )
    results = run(str(model), None, tmp_path / "out", settings)
    model_result = results["models"][0]
    assert model_result["change_rate"]["study"]["n_rows"] == {"human": 4, "object": 5}
    assert model_result["sentiment"]["backend"] == "ja-lexicon"
    assert model_result["sentiment"]["n"] == {"dog": 4, "pig": 4}
    for fill in model_result["sentiment"]["fills"]:
        assert not fill["fill"].startswith("##")
    assert np.isfinite(model_result["association"]["mean_association"])


def test_model_without_mask_token_is_a_clear_error(tmp_path, datasets_root, capsys):
    from transformers import GPT2Tokenizer

    (tmp_path / "vocab.json").write_text(json.dumps({"a": 0, "b": 1, "<|endoftext|>": 2}))
    (tmp_path / "merges.txt").write_text("#version: 0.2\n")
    GPT2Tokenizer(str(tmp_path / "vocab.json"), str(tmp_path / "merges.txt")).save_pretrained(
        tmp_path / "gpt"
    )
    from transformers import GPT2Config, GPT2LMHeadModel

    GPT2LMHeadModel(GPT2Config(vocab_size=3, n_embd=8, n_layer=1, n_head=2)).save_pretrained(
        tmp_path / "gpt"
    )
    from bias_hub.pipelines.cli import main

    code = main(
        [
            "speciesism",
            "--model",
            str(tmp_path / "gpt"),
            "--out",
            str(tmp_path / "out"),
            "--datasets-root",
            str(datasets_root),
        ]
    )
    assert code == 2
    assert "has no mask token" in capsys.readouterr().err
    assert not (tmp_path / "out" / "results.json").exists()


def test_missing_dataset_and_unknown_backend(tmp_path, tiny_en):
    with pytest.raises(FileNotFoundError, match="bias-hub build speciesism_templates"):
        run(str(tiny_en), None, tmp_path / "out", Settings(datasets_root=tmp_path))
    with pytest.raises(ValueError, match="--sentiment-backend 'nope'"):
        sentiment_module.get_backend("nope")


@pytest.fixture(scope="session")
def tiny_bpe(tmp_path_factory, datasets_root) -> Path:
    """A RoBERTa-style masked LM: byte-level BPE (word starts marked with Ġ), random weights."""
    from tokenizers import ByteLevelBPETokenizer
    from transformers import RobertaConfig, RobertaForMaskedLM, RobertaTokenizerFast

    folder = tmp_path_factory.mktemp("tiny_bpe")
    texts = [
        row["text"].replace("<MASK>", word)
        for row in _templates(datasets_root, "en")
        for word in ("happy", "dried", "sliced", "kind")
    ]
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(
        texts * 5,
        vocab_size=400,
        min_frequency=1,
        special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"],
    )
    bpe.save_model(str(folder))
    tokenizer = RobertaTokenizerFast(str(folder / "vocab.json"), str(folder / "merges.txt"))
    config = RobertaConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=40,
        pad_token_id=tokenizer.pad_token_id,
    )
    RobertaForMaskedLM(config).save_pretrained(folder / "model")
    tokenizer.save_pretrained(folder / "model")
    return folder / "model"


def test_bpe_model_lists_only_word_start_tokens(tmp_path, tiny_bpe, tiny_en, datasets_root):
    from bias_hub.pipelines.speciesism.fill_mask import load_masked_lm

    lm = load_masked_lm(str(tiny_bpe), ModelOptions(device="cpu"))
    pieces = lm.tokenizer.tokenize(f"It is a {lm.mask_token} that is dried.")
    separate = pieces[pieces.index(lm.mask_token) - 1] == "Ġ"
    assert lm.glue_mask == separate
    settings = Settings(
        animals=("pig", "hamster"),
        top_k=50,
        sentiment_top_k=3,
        association_words=1,
        datasets_root=datasets_root,
        device="cpu",
        progress=False,
    )
    results = run([str(tiny_bpe), str(tiny_en)], None, tmp_path, settings)
    vocab = lm.tokenizer.get_vocab()
    table = results["models"][0]["change_rate"]["study"]
    listed = table["human_to_object"] + table["object_to_human"]
    assert listed
    # Two models side by side: one column each in the negative-share table.
    assert [m["label"] for m in results["models"]] == ["model", tiny_en.name]
    # A label from the user is a table cell with its Markdown escaped ("tiny\_en0").
    label = tiny_en.name.replace("_", "\\_")
    assert f"| animal | model | {label} |" in (tmp_path / "report.md").read_text()
    for entry in listed:
        token = lm.tokenizer.convert_ids_to_tokens(entry["index"])
        assert token.startswith("Ġ") and vocab[token] == entry["index"]
        assert entry["word"] == token[1:]
    # Two models: their negative shares compared on matched fills (2 animals x 3 fills).
    (comparison,) = results["comparisons"]
    assert (comparison["a"], comparison["b"], comparison["matched_fills"]) == (
        "model",
        tiny_en.name,
        6,
    )
    shares = {m["label"]: m["sentiment"]["negative_share"] for m in results["models"]}
    pig = comparison["scores"]["negative_share.pig"]
    assert pig["difference"] == pytest.approx(shares[tiny_en.name]["pig"] - shares["model"]["pig"])
    assert comparison["confidence_intervals"]["overall_negative_share"]["n_units"] == 2  # sentences
    for score in comparison["scores"].values():
        if score["p_value"] is not None:
            assert score["p_value"] <= score["p_holm"] <= 1
    assert "## Comparing the models' negative shares" in (tmp_path / "report.md").read_text()


def test_raw_tokens_list_every_item_beside_the_word_filter(tmp_path, tiny_bpe, datasets_root):
    from bias_hub.pipelines.speciesism.fill_mask import load_masked_lm

    lm = load_masked_lm(str(tiny_bpe), ModelOptions(device="cpu"))
    _, word_like = vocabulary_view(lm, "en")
    listed = {}
    for tokens in ("raw", "words"):
        settings = Settings(
            animals=("pig",),
            tokens=tokens,
            top_k=1000,
            sentiment_top_k=3,
            association_words=0,
            confidence_level=None,
            datasets_root=datasets_root,
            device="cpu",
            progress=False,
        )
        results = run(str(tiny_bpe), None, tmp_path / tokens, settings)
        assert results["tokens"] == tokens
        listed[tokens] = results["models"][0]["change_rate"]["study"]
    for key in ("object_to_human", "human_to_object"):
        raw = listed["raw"][key]
        # Raw: every vocabulary item may be listed, shown with the token the model has.
        for entry in raw:
            assert entry["token"] == lm.tokenizer.convert_ids_to_tokens(entry["index"])
        # The word filter lists exactly the word-like items of the raw table, in its order.
        assert [e["index"] for e in listed["words"][key]] == [
            e["index"] for e in raw if word_like[e["index"]]
        ]
    assert any(
        not word_like[e["index"]]
        for e in listed["raw"]["object_to_human"] + listed["raw"]["human_to_object"]
    )
    report = (tmp_path / "raw" / "report.md").read_text()
    assert "| word | token | P(object form) | P(human form) | change rate |" in report


def test_piece_probabilities_multiply_and_unscored_masks_are_skipped(tiny_en):
    import torch

    from bias_hub.pipelines.speciesism.fill_mask import load_masked_lm, mask_probabilities

    lm = load_masked_lm(str(tiny_en), ModelOptions(device="cpu"))
    tokenizer = lm.tokenizer
    ham, ster = tokenizer.convert_tokens_to_ids(["ham", "##ster"])
    text = "It is a [MASK][MASK] that is [MASK]."
    encoded = tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        logits = lm.model(**encoded).logits[0]
    positions = (encoded["input_ids"][0] == tokenizer.mask_token_id).nonzero()[:, 0]
    probs = torch.softmax(logits[positions], dim=-1)
    expected = float(probs[0, ham] * probs[1, ster])
    (got,) = mask_probabilities(lm, [text], 1, targets=[[ham, ster, -1]])
    assert got == pytest.approx(expected, rel=1e-5)


def test_unknown_animal_is_named(tmp_path, tiny_en, datasets_root):
    settings = Settings(animals=("pig", "unicorn"), datasets_root=datasets_root, device="cpu")
    with pytest.raises(ValueError, match=r"\['unicorn'\] select no rows"):
        run(str(tiny_en), None, tmp_path / "out", settings)


def test_missing_model_is_a_clear_error(tmp_path, datasets_root, capsys):
    from bias_hub.pipelines.cli import main

    missing = str(tmp_path / "no-such-model")
    code = main(
        [
            "speciesism",
            "--model",
            missing,
            "--out",
            str(tmp_path / "out"),
            "--datasets-root",
            str(datasets_root),
        ]
    )
    assert code == 2
    error = capsys.readouterr().err
    # One line naming the path, not a chain of tracebacks ending in a Hub id error.
    assert (
        error.strip()
        == f"bias-hub: error: --model {missing}: no such model folder (and not a Hub id of the form ORG/NAME)"
    )


def test_preset_paper_fills_what_is_unset_and_reports_departures():
    # The paper preset lives in pipelines/studies/speciesism.yaml and goes through the shared loader.
    from bias_hub.pipelines.common.presets import apply_preset, load_preset

    preset = load_preset("speciesism", "paper")
    assert list(preset.models) == ["bert-large-uncased", "roberta-large"]  # the paper's §3 models
    settings = apply_preset(Settings(), preset, explicit=set())
    assert (settings.tokens, settings.sentiment_backend) == ("raw", "google-cloud")
    assert (settings.language, settings.groups, settings.top_k, settings.sentiment_top_k) == (
        "en",
        ("study",),
        15,
        10,
    )
    assert settings.departures == []
    given = Settings(top_k=5, tokens="words", sentiment_backend="vader", groups=["study"])
    settings = apply_preset(
        given, preset, explicit={"top_k", "tokens", "sentiment_backend", "groups"}
    )
    assert settings.tokens == "words"
    assert sorted((d["setting"], d["preset"], d["used"]) for d in settings.departures) == [
        ("sentiment_backend", "google-cloud", "vader"),
        ("tokens", "raw", "words"),
        ("top_k", 15, 5),
    ]
    assert {d["setting"]: d["section"] for d in settings.departures}[
        "top_k"
    ] == "Tables 1-4 (15 words each)"
    # Without a preset the project's defaults: whole-word tokens, no departures.
    assert (Settings().tokens, Settings().departures) == ("words", [])
    with pytest.raises(ValueError, match="--preset 'book': no such preset for `speciesism`"):
        load_preset("speciesism", "book")


def test_no_model_and_no_preset_is_a_clear_error(tmp_path, datasets_root):
    with pytest.raises(ValueError, match="--model: give at least one .* --preset paper"):
        run(None, None, tmp_path / "out", Settings(datasets_root=datasets_root))


def test_holm_by_hand():
    from bias_hub.pipelines.common.stats import holm

    # sorted 0.01, 0.03, 0.04 -> 3 x 0.01 = 0.03, 2 x 0.03 = 0.06, max(0.06, 1 x 0.04) = 0.06
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    assert holm([0.5, 0.9]) == pytest.approx([1.0, 1.0])


def test_confidence_level_flag():
    import argparse

    from bias_hub.pipelines.common.arguments import confidence_level

    assert confidence_level("0.9") == 0.9
    assert confidence_level("none") is None and confidence_level("0") is None
    with pytest.raises(argparse.ArgumentTypeError, match="between 0 and 1"):
        confidence_level("95")


@pytest.mark.slow
def test_demo_model_plants_a_bias_the_tables_recover_in_the_papers_direction(
    tmp_path, datasets_root
):
    """The demo's tiny model, trained as the demo trains it: farmed animals described as
    objects are followed by food words 3 times in 4 (by person words otherwise), described
    as persons by person words 3 times in 4. Each planted word then has about 0.75/8 of the
    mass in its own form and 0.25/8 in the other: a change rate near -2/3 from its own form.
    So the paper's Table 1 direction (object -> human, drops) must list the food words and
    Table 2's (human -> object) the person words."""
    from bias_hub.pipelines.speciesism.planted_model import FARMED, WORDS, make_tiny_masked_lm

    model = make_tiny_masked_lm(tmp_path / "tiny", _templates(datasets_root, "en"), "en")
    settings = Settings(
        animals=FARMED,
        top_k=8,
        sentiment_top_k=3,
        association_words=0,
        confidence_level=None,
        datasets_root=datasets_root,
        device="cpu",
        progress=False,
    )
    study = run(str(model), None, tmp_path / "out", settings)["models"][0]["change_rate"]["study"]
    food, person = set(WORDS["en"]["object"]), set(WORDS["en"]["human"])
    object_to_human = [e["word"] for e in study["object_to_human"]]
    human_to_object = [e["word"] for e in study["human_to_object"]]
    assert set(object_to_human[:5]) <= food, object_to_human
    assert set(human_to_object[:5]) <= person, human_to_object
    for entry in study["object_to_human"][:5] + study["human_to_object"][:5]:
        assert -0.9 < entry["change_rate"] < -0.3


def test_table_layouts_put_this_runs_words_beside_the_papers():
    # PAPER_LAYOUTS lay out Tables 1-4 with the printed values (from the study file) beside ours.
    import yaml

    from bias_hub.pipelines.common.presets import STUDIES_DIR
    from bias_hub.pipelines.speciesism.report import PAPER_LAYOUTS

    study = yaml.safe_load((STUDIES_DIR / "speciesism.yaml").read_text(encoding="utf-8"))
    printed = {table["id"]: table["printed"] for table in study["tables"]}
    assert printed["table1"]["rows"][0] == [
        "dried",
        0.00020683,
        0.0000005,
    ]  # Table 1's first row as printed
    assert len(printed["table4"]["rows"]) == 15 and printed["table4"]["rows"][0][0] == "who"
    # Object form -> human form: p_start is the object form's probability, p_end the human form's.
    table = {
        "object_to_human": [{"word": "dried", "p_start": 0.0002, "p_end": 0.0000004}],
        "human_to_object": [],
    }
    results = {"models": [{"label": "roberta-large", "change_rate": {"study": table}}]}
    text = PAPER_LAYOUTS["table1"](results, printed["table1"])
    assert "| 1 | dried | 0.00020683 | 0.00000050 | dried | 0.00020000 | 0.00000040 |" in text
    assert "| 15 | undeniable | 0.00017082 | 0.00000139 |  |  |  |" in text
    # No BERT model in the run: the paper's Table 3 alone, said so.
    assert PAPER_LAYOUTS["table3"](results, printed["table3"]).startswith(
        "_Ours: no bert model in this run; the paper's table alone._"
    )
