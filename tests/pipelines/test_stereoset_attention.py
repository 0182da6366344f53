"""bias-hub stereoset attention: word folding, attention mass, perplexity, the whole command."""

from __future__ import annotations

import json
import math
import shutil
import zipfile
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from bias_hub.builders.shared.text import split_words

WORDS = "he she his her dad mom man woman the is tall and cook ##s sing ##er . ,".split()


@pytest.fixture(scope="session")
def tiny_models(tmp_path_factory) -> dict[str, Path]:
    """A BERT whose last layer attends uniformly, a random GPT-2 and a uniform GPT-2."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast, GPT2Config, GPT2LMHeadModel

    root = tmp_path_factory.mktemp("stereoset_models")
    # transformers 5 ignores a vocab_file here (every word becomes [UNK]); pass the vocab itself.
    vocab = {
        word: index
        for index, word in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *WORDS])
    }
    tokenizer = BertTokenizerFast(vocab=vocab, do_lower_case=True)
    torch.manual_seed(0)
    bert = BertModel(
        BertConfig(
            vocab_size=len(tokenizer),
            hidden_size=16,
            num_hidden_layers=2,
            num_attention_heads=2,
            intermediate_size=32,
        )
    )
    with torch.no_grad():  # zero queries in the last layer: every score 0, softmax uniform
        bert.encoder.layer[-1].attention.self.query.weight.zero_()
        bert.encoder.layer[-1].attention.self.query.bias.zero_()
    paths = {"bert": root / "bert", "gpt": root / "gpt", "uniform_gpt": root / "uniform_gpt"}
    bert.save_pretrained(paths["bert"])
    tokenizer.save_pretrained(paths["bert"])
    config = GPT2Config(
        vocab_size=len(tokenizer),
        n_positions=64,
        n_embd=16,
        n_layer=2,
        n_head=2,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
    )
    gpt = GPT2LMHeadModel(config)
    gpt.save_pretrained(paths["gpt"])
    tokenizer.save_pretrained(paths["gpt"])
    with torch.no_grad():  # tied input/output embeddings at zero: every logit 0
        gpt.transformer.wte.weight.zero_()
    gpt.save_pretrained(paths["uniform_gpt"])
    tokenizer.save_pretrained(paths["uniform_gpt"])
    return paths


def _load(path: Path, causal: bool = False):
    from transformers import AutoModel, AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    if causal:
        return AutoModelForCausalLM.from_pretrained(path).eval(), tokenizer
    return AutoModel.from_pretrained(path, attn_implementation="eager").eval(), tokenizer


def test_word_piece_matrix_folds_pieces_and_rejects_straddling_pieces():
    from bias_hub.pipelines.stereoset.attention import AlignmentError, word_piece_matrix

    words = split_words("He cooks.")  # He [0,2) cooks [3,8) . [8,9)
    matrix = word_piece_matrix(words, [(0, 0), (0, 2), (3, 7), (7, 8), (8, 9), (0, 0)])
    assert matrix.tolist() == [[0, 1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0], [0, 0, 0, 0, 1, 0]]
    with pytest.raises(AlignmentError, match="covers 2 words"):
        word_piece_matrix(words, [(0, 5)])


def test_uniform_attention_gives_gender_pieces_over_sequence_length(tiny_models):
    from bias_hub.pipelines.stereoset.attention import gender_attention

    model, tokenizer = _load(tiny_models["bert"])
    sentences = ["He cooks.", "The man and his dad sing."]
    # [CLS] he cook ##s . [SEP]: 6 pieces, 1 of them a gender word -> 1/6 for every other word.
    # [CLS] the man and his dad sing . [SEP]: 9 pieces, 3 gender pieces -> 3/9; this sentence
    # pads the first one, so 1/6 also checks that padding gets no attention.
    spans = [[(0, 2)], [(4, 7), (12, 15), (16, 19)]]
    result = gender_attention(model, tokenizer, sentences, spans, batch_size=2, progress=False)
    assert result[0].words == ["He", "cooks", "."]
    assert np.isnan(result[0].mass[0])
    assert result[0].mass[1:] == pytest.approx([1 / 6, 1 / 6])
    masses = result[1].mass
    assert [w for w, m in zip(result[1].words, masses, strict=True) if np.isfinite(m)] == [
        "The",
        "and",
        "sing",
        ".",
    ]
    assert masses[np.isfinite(masses)] == pytest.approx([3 / 9] * 4)


def test_gender_attention_rejects_bad_layer_and_heads(tiny_models):
    from bias_hub.pipelines.stereoset.attention import gender_attention

    model, tokenizer = _load(tiny_models["bert"])
    with pytest.raises(ValueError, match="--layer"):
        gender_attention(
            model, tokenizer, ["He is."], [[(0, 2)]], batch_size=1, layer=5, progress=False
        )
    with pytest.raises(ValueError, match="--heads"):
        gender_attention(
            model, tokenizer, ["He is."], [[(0, 2)]], batch_size=1, heads=[2], progress=False
        )


SENTENCES = ["He is tall.", "The woman and her mom sing, and she cooks.", "Dad sings.", "she"]


def test_uniform_lm_perplexity_is_the_vocabulary_size(tiny_models):
    from bias_hub.pipelines.stereoset.perplexity import sentence_perplexities

    model, tokenizer = _load(tiny_models["uniform_gpt"], causal=True)
    values = sentence_perplexities(model, tokenizer, SENTENCES, batch_size=4, progress=False)
    assert values == pytest.approx([len(tokenizer)] * 4)


def test_padded_and_unpadded_perplexities_agree(tiny_models):
    from bias_hub.pipelines.stereoset.perplexity import sentence_perplexities

    model, tokenizer = _load(tiny_models["gpt"], causal=True)
    batched = sentence_perplexities(model, tokenizer, SENTENCES, batch_size=4, progress=False)
    alone = sentence_perplexities(model, tokenizer, SENTENCES, batch_size=1, progress=False)
    assert batched == pytest.approx(alone, rel=1e-5)
    assert len(set(np.round(batched, 3))) == 4  # the random model tells sentences apart


def test_perplexity_matches_the_models_own_loss(tiny_models):
    import torch

    from bias_hub.pipelines.stereoset.perplexity import sentence_perplexities

    model, tokenizer = _load(tiny_models["gpt"], causal=True)
    ids = [tokenizer.cls_token_id] + tokenizer("He is tall.", add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        loss = model(input_ids=torch.tensor([ids]), labels=torch.tensor([ids])).loss
    ours = sentence_perplexities(
        model, tokenizer, ["He is tall.", SENTENCES[1]], batch_size=2, progress=False
    )
    assert ours[0] == pytest.approx(math.exp(loss.item()), rel=1e-5)


def _stereoset_rows() -> list[dict]:
    # the contexts are the study's sentences (the default config); the continuations another config
    sentences = [
        ("He is tall.", "He is tall.", "She cooks.", "The man sings."),
        (
            "Her mom cooks, and she sings.",
            "His dad is tall.",
            "Her mom cooks, and she sings.",
            "The woman is tall.",
        ),
        ("The man cooks.", "He and his dad sing.", "She is tall and sings.", "The man cooks."),
    ]
    return [
        {
            "type": "intersentence",
            "target": "t",
            "bias_type": "gender",
            "context": context,
            "stereotype": a,
            "anti-stereotype": b,
            "unrelated": c,
        }
        for context, a, b, c in sentences
    ]


@pytest.fixture(scope="module")
def built_root(tmp_path_factory) -> Path:
    from bias_hub.pipelines.cli import main

    root = tmp_path_factory.mktemp("stereoset_datasets")
    source = root / "test.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in _stereoset_rows()), encoding="utf-8")
    assert (
        main(
            [
                "build",
                "stereoset_gender_swap",
                "--source",
                str(source),
                "--out-root",
                str(root),
                "--no-names",
            ]
        )
        == 0
    )
    return root


@pytest.mark.parametrize(
    ("level", "expected"),
    [("token", {"is", "tall", "cook", "sing", "##s"}), ("word", {"is", "tall", "cooks", "sings"})],
)
def test_stereoset_attention_command_writes_the_report(
    tiny_models, built_root, tmp_path, level, expected
):
    from bias_hub.pipelines.cli import main

    out = tmp_path / "report"
    argv = [
        "stereoset",
        "attention",
        "--model",
        str(tiny_models["bert"]),
        "--lm",
        str(tiny_models["gpt"]),
        "--datasets-root",
        str(built_root),
        "--out",
        str(out),
        "--device",
        "cpu",
        "--config",
        "continuations",
        "--batch-size",
        "4",
        "--top-k",
        "3",
        "--level",
        level,
        "--n-resamples",
        "200",
    ]
    assert main(argv) == 0
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["counts"]["pairs_used"] == 9 and results["counts"]["pairs_aligned"] == 9
    assert results["perplexity"]["n_pairs"] == 9
    # Uniform last-layer attention is the same in both forms: every attention gap is 0
    # unless the forms differ in length (they never do here: he/she, his/her are one piece).
    assert results["attention"]["attention_gap"] == pytest.approx(
        [0.0] * results["attention"]["n_words"]
    )
    assert expected <= set(results["attention"]["words"])
    assert not {".", "[cls]", "[sep]"} & set(
        results["attention"]["words"]
    )  # periods and special tokens left out
    assert results["settings"]["min_count"] == 1 and results["preset"] is None
    assert (out / "plot.png").stat().st_size > 0 and (out / "figure2.png").stat().st_size > 0
    report = (out / "report.md").read_text(encoding="utf-8")
    assert (
        "frequency-matched" in report
        and "Figure 2" in report
        and "95% bootstrap intervals" in report
    )
    # every pair goes to exactly one word (no duplication), and every word's pairs hold it
    words = [
        json.loads(line) for line in (out / "words.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [row["word"] for row in words] == results["attention"]["words"]
    assert (
        sum(row["n_pairs"] for row in words) == results["perplexity"]["pairs_used_by_a_word"] == 9
    )
    top = [
        json.loads(line)
        for line in (out / "top_words.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert top and all(
        row["word"].removeprefix("##") in " ".join(p["male_sentence"].lower() for p in row["pairs"])
        for row in top
        if row["pairs"]
    )


def test_stereoset_attention_names_a_missing_config(tiny_models, built_root, tmp_path, capsys):
    from bias_hub.pipelines.cli import main

    argv = [
        "stereoset",
        "attention",
        "--model",
        str(tiny_models["bert"]),
        "--lm",
        str(tiny_models["gpt"]),
        "--datasets-root",
        str(built_root),
        "--config",
        "llm",
        "--out",
        str(tmp_path / "out"),
    ]
    assert main(argv) == 2
    assert "--config" in capsys.readouterr().err


def test_model_wheel_is_checked_and_extracted(tmp_path, monkeypatch):
    from bias_hub.builders.shared import model_wheels
    from bias_hub.builders.shared.sources import SourceError, sha256_of

    monkeypatch.setenv("BIAS_HUB_CACHE", str(tmp_path))
    wheel = tmp_path / "wheels" / "fake_model-0.1.0-py3-none-any.whl"
    wheel.parent.mkdir()
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("fake_model/model/config.json", '{"model_type": "bert"}')
        archive.writestr("fake_model/model/sub/vocab.txt", "[PAD]\n")
        archive.writestr("fake_model/__init__.py", "")
    spec = model_wheels.ModelWheel(
        "fake", "fake-model", "0.1.0", "fake_model/model/", "0" * 64, "MIT", "test"
    )
    monkeypatch.setitem(model_wheels.MODEL_WHEELS, "fake", spec)
    with pytest.raises(SourceError, match="expected 0000"):
        model_wheels.model_path("fake")
    good = model_wheels.ModelWheel(
        "fake", "fake-model", "0.1.0", "fake_model/model/", sha256_of(wheel), "MIT", "t"
    )
    monkeypatch.setitem(model_wheels.MODEL_WHEELS, "fake", good)
    folder = model_wheels.model_path("fake")
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "config.json",
        "sub/vocab.txt",
    ]
    with pytest.raises(SourceError, match="unknown model wheel"):
        model_wheels.model_path("nope")


def test_heads_argument():
    import argparse

    from bias_hub.pipelines.stereoset.command import _heads

    assert _heads("mean") is None
    assert _heads("0,3, 7") == [0, 3, 7]
    with pytest.raises(argparse.ArgumentTypeError, match="--heads"):
        _heads("first")


def test_demo_runs_on_a_stand_in_encoder(tiny_models, built_root, tmp_path, monkeypatch):
    from bias_hub.builders.shared import model_wheels
    from bias_hub.pipelines.stereoset import demo

    monkeypatch.setattr(model_wheels, "model_path", lambda name: tiny_models["bert"])
    summary = demo.run_demo(tmp_path / "demo", datasets_root=built_root, max_pairs=2)
    assert summary["report"] == "report.md"
    report = (tmp_path / "demo" / "report.md").read_text(encoding="utf-8")
    assert "plumbing only" in report and "Subsampled: 2 of 3 pairs" in report
    assert (tmp_path / "demo" / "plot.png").is_file()


# --- Hand-made attention: the end-to-end path must find the gender words, fold pieces,
# --- average the heads of the chosen layer, and subtract the forms.

MALE_PIECES = {"he", "his", "dad", "man"}
FEMALE_PIECES = {"she", "her", "mom", "woman"}
# Share of attention one query piece gives to EACH gender-word piece of its sentence,
# per layer and head, by the gender of that key piece: SHARE[layer][head][gender].
# Layer 0 is reversed (female > male): reading the wrong layer flips every gap's sign.
SHARE = [
    [{"male": 0.1, "female": 0.4}, {"male": 0.1, "female": 0.4}],
    [{"male": 0.4, "female": 0.2}, {"male": 0.2, "female": 0.1}],
]
# The share is scaled by the query piece: "##s" gives half, "." none, every other piece all.
QUERY_SCALE = {"##s": 0.5, ".": 0.0}


class ScriptedEncoder:
    """Stands in for an encoder: returns attentions written by the rules above.

    Query piece q (token t_q), head h, layer l: each gender-word key piece k of gender g
    gets SHARE[l][h][g] * QUERY_SCALE.get(t_q, 1); the rest of the row is spread evenly
    over the other real pieces, so rows sum to 1 like softmax attention; padding gets 0.
    The rule looks at key TOKENS, never positions, so a pipeline that reads the piece
    next to a gender word reads a spread share instead.
    """

    def __init__(self, tokenizer) -> None:
        from types import SimpleNamespace

        import torch

        self.tokenizer = tokenizer
        self.config = SimpleNamespace(
            num_hidden_layers=len(SHARE), num_attention_heads=len(SHARE[0])
        )
        self.weight = torch.zeros(1)

    def parameters(self):
        return iter([self.weight])

    def __call__(self, input_ids, attention_mask, output_attentions=False, **_unused):
        from types import SimpleNamespace

        import torch

        assert output_attentions
        batch, length = input_ids.shape
        layers = []
        for heads in SHARE:
            attention = torch.zeros(batch, len(heads), length, length)
            for row in range(batch):
                n = int(attention_mask[row].sum())
                tokens = self.tokenizer.convert_ids_to_tokens(input_ids[row, :n].tolist())
                gender = [
                    "male" if t in MALE_PIECES else "female" if t in FEMALE_PIECES else None
                    for t in tokens
                ]
                n_gender = sum(g is not None for g in gender)
                for h, share in enumerate(heads):
                    for q, token in enumerate(tokens):
                        to_gender = [
                            share[g] * QUERY_SCALE.get(token, 1.0) if g else 0.0 for g in gender
                        ]
                        rest = (1.0 - sum(to_gender)) / (n - n_gender)
                        row_values = [
                            v if g else rest for v, g in zip(to_gender, gender, strict=True)
                        ]
                        attention[row, h, q, :n] = torch.tensor(row_values)
            layers.append(attention)
        return SimpleNamespace(attentions=tuple(layers))


def test_scripted_attention_picks_the_layer_and_heads(tiny_models):
    from bias_hub.pipelines.stereoset.attention import gender_attention

    _, tokenizer = _load(tiny_models["bert"])
    encoder = ScriptedEncoder(tokenizer)
    # "He cooks." -> [CLS] he cook ##s . [SEP]; "cooks" = cook (scale 1) + ##s (scale 0.5),
    # so its mass is share(he) * (1 + 0.5) / 2 = 0.75 * share(he), "." has scale 0.
    expected = {
        (-1, None): 0.75 * (0.4 + 0.2) / 2,  # last layer, heads averaged: 0.225
        (-1, (0,)): 0.75 * 0.4,  # 0.3
        (-1, (1,)): 0.75 * 0.2,  # 0.15
        (0, None): 0.75 * (0.1 + 0.1) / 2,  # first layer: 0.075
    }
    for (layer, heads), mass in expected.items():
        [result] = gender_attention(
            encoder,
            tokenizer,
            ["He cooks."],
            [[(0, 2)]],
            batch_size=1,
            layer=layer,
            heads=heads,
            progress=False,
        )
        assert result.words == ["He", "cooks", "."]
        assert result.mass[1:] == pytest.approx([mass, 0.0], rel=1e-5), (layer, heads)


@pytest.fixture(scope="module")
def scripted_root(tmp_path_factory) -> Path:
    """The dataset the scripted runs read, built once for the module: three context pairs
    (and, in ``paper_population``, a fourth context without a gender word: an identical pair)."""
    from bias_hub.pipelines.cli import main

    tmp_path = tmp_path_factory.mktemp("scripted")
    root = tmp_path / "datasets"
    source = tmp_path / "test.jsonl"
    rows = [
        {
            "type": "intersentence",
            "target": "t",
            "bias_type": "gender",
            "context": context,
            "stereotype": "Cats purr.",
            "anti-stereotype": "Her cat naps.",
            "unrelated": "Dogs bark.",
        }
        for context in ("He cooks.", "Her mom is tall.", "The man sings.", "The cook is tall.")
    ]
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    assert (
        main(
            [
                "build",
                "stereoset_gender_swap",
                "--source",
                str(source),
                "--out-root",
                str(root),
                "--no-names",
            ]
        )
        == 0
    )
    return root


def _scripted_command(tiny_models, root: Path, out: Path, monkeypatch: pytest.MonkeyPatch):
    """The command on three context pairs with the ScriptedEncoder's attentions, into ``out``."""
    from bias_hub.pipelines.cli import main
    from bias_hub.pipelines.stereoset import run

    _, tokenizer = _load(tiny_models["bert"])
    lm, lm_tokenizer = _load(tiny_models["gpt"], causal=True)
    monkeypatch.setattr(
        run,
        "load_models",
        lambda model, settings: (ScriptedEncoder(tokenizer), tokenizer, lm, lm_tokenizer),
    )

    def command(*flags: str) -> tuple[dict, Path]:
        argv = [
            "stereoset",
            "attention",
            "--model",
            "scripted",
            "--lm",
            "tiny-gpt",
            "--datasets-root",
            str(root),
            "--out",
            str(out),
            "--batch-size",
            "2",
            "--top-k",
            "5",
            "--n-resamples",
            "200",
            *flags,
        ]
        assert main(argv) == 0
        return json.loads((out / "results.json").read_text(encoding="utf-8")), out

    return command


@pytest.fixture
def scripted_run(tiny_models, scripted_root, tmp_path, monkeypatch):
    """Runs the command with the flags given (each call into the same run folder)."""
    return _scripted_command(tiny_models, scripted_root, tmp_path / "report", monkeypatch)


@pytest.fixture(scope="module")
def scripted_default_run(tiny_models, scripted_root, tmp_path_factory) -> tuple[dict, Path]:
    """The scripted run with the study's defaults (no flags), made once for the tests that read
    it; a test that changes the run folder works on a copy."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        out = tmp_path_factory.mktemp("scripted_default") / "report"
        return _scripted_command(tiny_models, scripted_root, out, monkeypatch)()


def test_stereoset_attention_gaps_from_hand_made_attention(scripted_run):
    results, out = scripted_run("--level", "word")
    assert results["counts"]["pairs_aligned"] == 3
    # Last layer, heads averaged: a query piece of scale 1 gives each male piece
    # (0.4 + 0.2) / 2 = 0.3 and each female piece (0.2 + 0.1) / 2 = 0.15.
    # He cooks. / She cooks.  (cooks = cook + ##s, mean scale (1 + 0.5) / 2 = 0.75)
    #   cooks: male 0.3 * 0.75 = 0.225, female 0.15 * 0.75 = 0.1125 -> gap 0.1125
    # His dad is tall. / Her mom is tall.  (two gender pieces, summed)
    #   is, tall: male 2 * 0.3 = 0.6, female 2 * 0.15 = 0.3 -> gap 0.3
    # The man sings. / The woman sings.  (sings = sing + ##s)
    #   the: male 0.3, female 0.15 -> gap 0.15;  sings: 0.225 - 0.1125 = 0.1125
    # "." is punctuation and left out; the gender words themselves are left out.
    # Heads summed would double every gap (cooks 0.225); the first layer would make every
    # gap negative (cooks (0.1 - 0.4) * 0.75 = -0.225); a key one piece off would read a
    # spread share instead: in "He cooks." the piece after "he" is "cook", which gets
    # (1 - 0.4) / 5 = 0.12 in head 0 and (1 - 0.2) / 5 = 0.16 in head 1 from a "cook" query.
    gaps = dict(
        zip(results["attention"]["words"], results["attention"]["attention_gap"], strict=True)
    )
    assert gaps == pytest.approx(
        {"is": 0.3, "tall": 0.3, "the": 0.15, "cooks": 0.1125, "sings": 0.1125}, rel=1e-5
    )
    assert results["attention"]["words"][:3] in (["is", "tall", "the"], ["tall", "is", "the"])
    assert results["attention"]["mean_gap"] == pytest.approx(
        (0.3 + 0.3 + 0.15 + 0.1125 + 0.1125) / 5, rel=1e-5
    )
    top = {
        r["word"]: r
        for r in map(json.loads, (out / "top_words.jsonl").read_text(encoding="utf-8").splitlines())
    }
    assert top["cooks"]["male_mean"] == pytest.approx(0.225, rel=1e-5)
    assert top["cooks"]["female_mean"] == pytest.approx(0.1125, rel=1e-5)
    assert top["is"]["male_mean"] == pytest.approx(0.6, rel=1e-5)
    assert top["is"]["female_mean"] == pytest.approx(0.3, rel=1e-5)


def test_stereoset_token_level_and_pairs_without_duplication_from_hand_made_attention(
    scripted_run, scripted_default_run
):
    # the study's defaults: tokens, periods out, pairs taken once
    results, out = scripted_default_run
    # Each BERT token is its own item. With the shares above (male piece 0.3, female 0.15 for a
    # query of scale 1; "##s" has scale 0.5):
    #   "He cooks."        cook 0.3 / 0.15 -> 0.15;   ##s 0.15 / 0.075
    #   "His dad is tall." is, tall: 2 * 0.3 = 0.6 / 2 * 0.15 = 0.3 -> 0.3
    #   "The man sings."   the, sing 0.3 / 0.15 -> 0.15;   ##s 0.15 / 0.075
    # ##s occurs in two pairs: mean male (0.15 + 0.15) / 2, female 0.075 -> gap 0.075.
    # [CLS], [SEP] and the periods (6 of them: 3 pairs x 2 forms) are left out.
    gaps = dict(
        zip(results["attention"]["words"], results["attention"]["attention_gap"], strict=True)
    )
    assert gaps == pytest.approx(
        {"is": 0.3, "tall": 0.3, "cook": 0.15, "sing": 0.15, "the": 0.15, "##s": 0.075}, rel=1e-5
    )
    assert results["counts"]["tokens_excluded_period"] == 6
    # Ties keep the metric's (alphabetical) order: is, tall, cook, sing, the, ##s. Taking pairs in
    # that order: is takes "His dad is tall."; tall finds it taken; cook takes "He cooks.";
    # sing takes "The man sings."; the and ##s find theirs taken. Every pair is used once.
    words = [
        json.loads(line) for line in (out / "words.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert [row["word"] for row in words] == ["is", "tall", "cook", "sing", "the", "##s"]
    assert [row["n_pairs"] for row in words] == [1, 0, 1, 1, 0, 0]
    assert (
        results["perplexity"]["words_with_pairs"] == 3
        and results["perplexity"]["pairs_used_by_a_word"] == 3
    )
    ppl = results["perplexity"]
    gap_of = {
        pair_id: male - female
        for pair_id, male, female in zip(
            ppl["pair_ids"], ppl["male_perplexity"], ppl["female_perplexity"], strict=True
        )
    }
    top = {
        row["word"]: row
        for row in map(
            json.loads, (out / "top_words.jsonl").read_text(encoding="utf-8").splitlines()
        )
    }
    assert top["is"]["pairs"][0]["male_sentence"] == "His dad is tall."
    assert top["is"]["perplexity_gap"] == pytest.approx(gap_of[top["is"]["pairs"][0]["id"]])
    assert top["tall"]["perplexity_gap"] is None
    # a word seen once per form has no interval for its gap; the mean perplexity gap has one
    assert top["is"]["attention_gap_interval"]["reason"].startswith("needs at least 2 occurrences")
    assert results["perplexity"]["intervals"]["mean_gap"]["unit"] == "pairs"
    # "all" (the earlier behaviour): ##s averages both of its pairs
    results, out = scripted_run("--pair-assignment", "all", "--confidence-level", "0")
    words = {
        row["word"]: row
        for row in map(json.loads, (out / "words.jsonl").read_text(encoding="utf-8").splitlines())
    }
    assert words["##s"]["n_pairs"] == 2 and words["tall"]["n_pairs"] == 1
    assert results["perplexity"]["intervals"]["mean_gap"] is None


def test_the_paper_preset_is_recorded_and_an_override_is_a_departure(scripted_run):
    # The study file's preset fills every setting not given (its config: the paper population);
    # a flag given beside it wins and is recorded, with the section that states the paper's value
    # (one preset behaviour for every part; this one used to refuse any override).
    results, out = scripted_run("--preset", "paper")
    assert results["preset"] == {
        "name": "paper",
        "departures": [
            {
                "setting": "model",
                "preset": ["bert-base-uncased"],
                "used": ["scripted"],
                "section": None,
            },
            {
                "setting": "lm",
                "preset": "openai-community/gpt2",
                "used": "tiny-gpt",
                "section": "§4.2 (2)",
            },
        ],
    }
    assert (
        results["settings"]["config"] == "paper_population"
        and results["dataset"]["config"] == "paper_population"
    )
    assert (
        results["settings"]["layer"],
        results["settings"]["level"],
        results["settings"]["min_count"],
    ) == (-1, "token", 1)
    # Three contexts hold a gender word (three swapped pairs); "The cook is tall." is an identical
    # pair, kept in the data and left out of the statistics by default.
    assert results["counts"]["pairs_used"] == 3
    assert (results["dataset"]["pairs"], results["dataset"]["identical_pairs"]) == (4, 1)
    assert results["dataset"]["name_list"].startswith(
        "gender-guesser==0.4.0:gender_guesser/data/nam_dict.txt"
    )
    report = (out / "report.md").read_text(encoding="utf-8")
    assert "Preset `paper`, with these departures from it:" in report
    assert "- `lm`: 'tiny-gpt' instead of 'openai-community/gpt2' (§4.2 (2))" in report
    results, _ = scripted_run("--preset", "paper", "--level", "word")
    assert {
        "setting": "level",
        "preset": "token",
        "used": "word",
        # The study marks the token level as assumed (§4.2 (1) speaks of words), so no section.
        "section": None,
    } in results["preset"]["departures"]


def test_identical_pairs_stay_in_the_data_but_out_of_the_statistics_by_default(scripted_run):
    flags = ("--config", "paper_population", "--level", "word", "--confidence-level", "0")
    results, out = scripted_run(*flags)
    assert results["dataset"] | {"name_list": None} == {
        "config": "paper_population",
        "name_list": None,
        "pairs": 4,
        "differing_pairs": 3,
        "identical_pairs": 1,
        "identical_pairs_studied": False,
        "left_out_at_build": {},  # the fixture's card records none
    }
    assert results["counts"]["pairs_used"] == 3 and results["perplexity"]["n_pairs"] == 3
    gaps = dict(
        zip(results["attention"]["words"], results["attention"]["attention_gap"], strict=True)
    )
    # The gaps of the three pairs that differ (worked out in the test above); no "cook".
    assert gaps == pytest.approx(
        {"is": 0.3, "tall": 0.3, "the": 0.15, "cooks": 0.1125, "sings": 0.1125}, rel=1e-5
    )
    report = (out / "report.md").read_text(encoding="utf-8")
    assert (
        "| pairs in the dataset config `paper_population` | 4: 3 that differ, 1 identical (no gender "
        "word; left out; `--identical-pairs include` studies them) |"
    ) in report

    # The other reading: "The cook is tall." in both forms gives every word 0 attention to gender
    # words. is, tall: male (0.6 + 0) / 2 = 0.3, female (0.3 + 0) / 2 = 0.15 -> 0.15 (half);
    # the: male (0.3 + 0) / 2, female (0.15 + 0) / 2 -> 0.075; cook: 0 - 0 = 0.
    results, out = scripted_run(*flags, "--identical-pairs", "include")
    assert results["dataset"]["identical_pairs_studied"] is True
    assert results["counts"]["pairs_used"] == 4 and results["perplexity"]["n_pairs"] == 4
    gaps = dict(
        zip(results["attention"]["words"], results["attention"]["attention_gap"], strict=True)
    )
    assert gaps == pytest.approx(
        {"is": 0.15, "tall": 0.15, "the": 0.075, "cooks": 0.1125, "sings": 0.1125, "cook": 0.0},
        rel=1e-5,
        abs=1e-9,
    )
    ppl = results["perplexity"]
    same = [
        (male, female)
        for male, female in zip(ppl["male_perplexity"], ppl["female_perplexity"], strict=True)
        if male == female
    ]
    assert len(same) == 1  # the identical pair: no perplexity gap


def test_a_config_of_identical_pairs_only_says_how_to_study_them():
    from bias_hub.builders.shared.errors import UserError
    from bias_hub.pipelines.stereoset.run import Settings, _sample

    pairs = [{"gender_words": [], "male_sentence": "A.", "female_sentence": "A."}] * 2
    with pytest.raises(UserError, match="all 2 pairs are identical .*--identical-pairs include"):
        _sample(pairs, Settings(config="paper_population"), Counter())


def test_without_model_or_lm_the_error_says_what_to_give(tmp_path):
    from bias_hub.pipelines.stereoset.run import Settings, run

    with pytest.raises(ValueError, match="--model: give the encoder"):
        run(None, None, tmp_path / "out", Settings())
    with pytest.raises(ValueError, match="--lm: give the causal LM"):
        run("bert", None, tmp_path / "out", Settings())


def test_a_causal_model_is_refused_as_the_encoder(tiny_models, built_root, tmp_path, capsys):
    # A GPT2LMHeadModel used to run and exited 0; attending backwards only, 32 of
    # 175 words got exactly zero attention.
    from bias_hub.pipelines.cli import main

    gpt = tiny_models["gpt"]
    argv = [
        "stereoset",
        "attention",
        "--model",
        str(gpt),
        "--lm",
        str(gpt),
        "--datasets-root",
        str(built_root),
        "--out",
        str(tmp_path / "out"),
        "--device",
        "cpu",
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1] == (
        f"bias-hub: error: --model {gpt}: the checkpoint is a GPT2LMHeadModel; it attends to earlier tokens only "
        "(a causal, decoder-only model), so a word would get no attention from the words after it; the attention "
        "gap needs a bidirectional encoder (BERT-like)"
    )
    assert not (tmp_path / "out").exists()


def test_attentions_that_look_back_only_are_refused(tiny_models):
    # A bare GPT2Model checkpoint names no LM head; its attentions show what it is.
    from transformers import GPT2Model

    from bias_hub.pipelines.stereoset.attention import gender_attention

    _, tokenizer = _load(tiny_models["bert"])
    model = GPT2Model.from_pretrained(tiny_models["gpt"], attn_implementation="eager").eval()
    with pytest.raises(ValueError, match=r"^--model: the encoder attends to earlier tokens only"):
        gender_attention(
            model, tokenizer, ["He is tall."], [[(0, 2)]], batch_size=1, progress=False
        )
    bert, _ = _load(tiny_models["bert"])
    assert (
        gender_attention(
            bert, tokenizer, ["He is tall."], [[(0, 2)]], batch_size=1, progress=False
        )[0]
        is not None
    )


def test_the_report_is_rendered_again_from_the_run_folder_alone(scripted_default_run, tmp_path):
    # report.py alone renders report.md and the figures, from results.json and the run's files.
    from bias_hub.pipelines.stereoset.report import render

    results, shared = scripted_default_run
    out = Path(shutil.copytree(shared, tmp_path / "report"))  # the shared run stays whole
    report = (out / "report.md").read_text(encoding="utf-8")
    for name in ("report.md", "figure2.png", "plot.png"):
        (out / name).unlink()
    render(json.loads((out / "results.json").read_text(encoding="utf-8")), out)
    assert (out / "report.md").read_text(encoding="utf-8") == report
    assert (out / "figure2.png").stat().st_size > 0 and (out / "plot.png").stat().st_size > 0
    assert results["part"] == "stereoset" and results["step"] == "attention"


def test_every_word_of_the_plot_has_a_mark_or_the_legend_says_why(scripted_default_run):
    # plot.png used to draw words with no bar and no explanation. At the token level "tall",
    # "the" and "##s" find their pairs taken (see the test above): each gets an x and a legend entry.
    from types import SimpleNamespace

    from bias_hub.pipelines.stereoset.report import top_figure

    results, out = scripted_default_run
    words = [
        json.loads(line) for line in (out / "words.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    figure = top_figure(words, results["correlation"], SimpleNamespace(**results["settings"]))
    _, bottom, _ = figure.axes
    missing = [line for line in bottom.get_lines() if line.get_marker() == "x"]
    assert len(missing) == 1 and list(missing[0].get_xdata()) == [1, 4, 5]  # tall, the, ##s
    assert (
        missing[0].get_label()
        == "no pair left: every pair holding the token was taken by an earlier token"
    )
    assert all(axis.get_xlabel() and axis.get_ylabel() for axis in figure.axes)


@pytest.mark.parametrize("study", ["stereoset_gender_attention", "speciesism"])
def test_the_study_steps_name_real_commands_and_flags(study):
    # Every step of this area's study files is a bias-hub command, and every argument a flag of it.
    import importlib

    import yaml

    from bias_hub.pipelines.cli import _leaf_parsers, build_parser
    from bias_hub.pipelines.common.presets import STUDIES_DIR, load_preset

    data = yaml.safe_load((STUDIES_DIR / f"{study}.yaml").read_text(encoding="utf-8"))
    commands = {
        parser.prog.removeprefix("bias-hub ").strip(): parser
        for parser in _leaf_parsers(build_parser())
    }
    steps = data["steps"] + data.get("variants", {}).get("offline", {}).get("steps", [])
    for step in steps:
        parser = commands[step["command"]]
        dests = {action.dest for action in parser._actions}
        assert set(step["args"]) <= dests, (step["id"], set(step["args"]) - dests)
    for key in data.get("variants", {}).get("offline", {}).get("set", {}):
        step_id, _, dest = key.partition(".")
        (step,) = [s for s in steps if s["id"] == step_id]
        assert dest in {action.dest for action in commands[step["command"]]._actions}, key
    model_ids = [model["id"] for model in data["models"]]
    for name, preset in data["presets"].items():
        loaded = load_preset(preset["command"], name)
        assert set(loaded.models) <= set(model_ids)
        assert set(model_ids) - set(loaded.models) <= {
            loaded.values.get("lm")
        }  # the LM is a setting
    layouts = importlib.import_module(f"bias_hub.pipelines.{PARTS[study]}.report").PAPER_LAYOUTS
    for table in data["tables"]:
        assert table["step"] in {s["id"] for s in steps} and table["layout"] in layouts


PARTS = {"stereoset_gender_attention": "stereoset", "speciesism": "speciesism"}
