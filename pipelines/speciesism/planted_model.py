"""A tiny masked LM made on the spot, for the demo and the tests: plumbing only.

The model is a 2-layer BERT with a word-level vocabulary, trained for a few
seconds on sentences generated from the templates, in which a bias is planted
on purpose: farmed animals described as objects are mostly (3 times in 4)
followed by words of food processing and described as persons mostly by words
used of people; their neutral sentence always takes a negative word (other
animals' a positive one). Its numbers show that the pipeline recovers a planted
effect; they say nothing about any real model.
"""

from __future__ import annotations

import random
from pathlib import Path

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
# The animals of the sentences (the dataset's keys, which are also their English names).
ANIMALS = ("cow", "cattle", "pig", "chicken", "sheep", "turkey", "dog", "cat", "person")

WORDS = {
    "en": {
        "human": ["happy", "kind", "smart", "friendly", "loved", "curious", "gentle", "playful"],
        "object": "dried processed peeled slaughtered frozen cooked sliced canned".split(),
        "negative": ["dirty", "stupid", "ugly", "dangerous", "lazy"],
        "positive": ["cute", "beautiful", "smart", "wonderful", "loyal"],
        "names": {animal: animal for animal in ANIMALS},
        # pieces the vocabulary view must leave out of the tables
        "extra": ["the", ",", "##s", "##ed", "1", "ham", "##ster"],
    },
    "ja": {
        "human": ["可愛い", "優しい", "賢い", "大きい", "小さい"],
        "object": ["冷凍", "加工", "輸入", "国産", "安い"],
        "negative": ["汚い", "臭い", "悪い", "うるさい"],
        "positive": ["可愛い", "賢い", "美しい", "楽しい"],
        # in the order of ANIMALS: cow 牛, cattle 乳牛, ..., person 人
        "names": dict(zip(ANIMALS, "牛 乳牛 豚 鶏 羊 七面鳥 犬 猫 人".split(), strict=True)),
        "extra": ["、", "##い"],
    },
}
# Training steps of the tiny model (of 128 sentences each).
STEPS = 250
FARMED = ("cow", "cattle", "pig", "chicken", "sheep", "turkey")


def _sentences(
    language: str, templates: list[dict], rng: random.Random, n: int
) -> list[tuple[str, str]]:
    """(sentence, fill) pairs from the dataset's templates, with the planted bias."""
    words = WORDS[language]
    out = []
    neutral = [t for t in templates if t["form"] == "neutral"]
    formed = [t for t in templates if t["form"] != "neutral"]
    for _ in range(n):
        # One sentiment template against several form templates: draw it more often.
        template = rng.choice(neutral) if neutral and rng.random() < 0.3 else rng.choice(formed)
        animal = rng.choice(sorted(words["names"]))
        farmed = animal in FARMED
        # In the form templates the planted bias is a tendency (3 in 4), not a rule, so
        # that words of both kinds stay above chance in both forms, as in a real model.
        planted = rng.random() < 0.75
        if template["form"] == "neutral":
            pool = words["negative"] if farmed else words["positive"]
        elif template["form"] == "object" and farmed:
            pool = words["object"] if planted else words["human"]
        else:
            pool = words["human"] if planted else words["object"]
        text = template["template"]
        name = words["names"][animal]
        if language == "en":
            text = text.replace("a <NAME>", f"a {name}").replace("A <NAME>", f"A {name}")
        fill = rng.choice(pool)
        out.append((text.replace("<NAME>", name).replace("<MASK>", fill), fill))
    return out


def _tokenizer(language: str, vocab_file: Path):
    if language == "en":
        from transformers import BertTokenizer  # heavy: loaded only when a tiny model is made

        return BertTokenizer(str(vocab_file), do_lower_case=True)
    from transformers import BertJapaneseTokenizer  # heavy: as above

    return BertJapaneseTokenizer(
        str(vocab_file),
        word_tokenizer_type="mecab",
        subword_tokenizer_type="wordpiece",
        mecab_kwargs={"mecab_dic": "unidic_lite"},
    )


def make_tiny_masked_lm(
    out_dir: Path,
    templates: list[dict],
    language: str = "en",
    steps: int = STEPS,
    seed: int = 0,
    batch_size: int = 128,
    learning_rate: float = 4e-3,
) -> Path:
    """Create, train briefly and save a tiny BERT masked LM; returns its folder.

    ``templates``: rows with ``template`` (``<NAME>``/``<MASK>`` markers) and ``form``.
    The defaults (250 steps of 128 sentences) plant as clear a bias as 800 steps of 32 did
    (change rates of the planted words -0.55 to -0.80, English and Japanese) in 30 % less time:
    a model this small spends most of a step on per-step overhead.
    """
    import torch  # heavy: loaded only when a tiny model is made
    from transformers import BertConfig, BertForMaskedLM

    rng = random.Random(seed)
    torch.manual_seed(seed)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    pairs = _sentences(language, templates, rng, 2000)
    corpus = [sentence for sentence, _ in pairs]
    vocab_file = out_dir / "vocab.txt"
    if language == "en":
        tokens = sorted({w for s in corpus for w in s.lower().replace(".", " .").split()})
    else:
        import fugashi  # optional: Japanese only
        import unidic_lite

        tagger = fugashi.Tagger(f"-d {unidic_lite.DICDIR}")
        tokens = sorted({word.surface for s in corpus for word in tagger(s)})
    extra = [t for t in WORDS[language]["extra"] if t not in tokens]
    vocab_file.write_text("\n".join(SPECIAL + tokens + extra) + "\n", encoding="utf-8")
    tokenizer = _tokenizer(language, vocab_file)
    config = BertConfig(
        vocab_size=len(tokenizer),
        hidden_size=48,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=96,
        max_position_embeddings=64,
    )
    model = BertForMaskedLM(config)
    encoded = tokenizer(corpus, padding=True, return_tensors="pt")
    ids = encoded["input_ids"]
    # The planted word is always masked (it is what the probe reads); other tokens sometimes.
    fill_ids = torch.tensor([tokenizer.convert_tokens_to_ids(fill.lower()) for _, fill in pairs])
    special = torch.tensor([tokenizer.convert_tokens_to_ids(t) for t in SPECIAL])
    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    model.train()
    for _ in range(steps):
        batch = torch.randint(0, ids.shape[0], (batch_size,))
        inputs, attention = ids[batch].clone(), encoded["attention_mask"][batch]
        maskable = ~torch.isin(inputs, special)
        chosen = (inputs == fill_ids[batch, None]) | (maskable & (torch.rand(inputs.shape) < 0.1))
        labels = torch.where(chosen, inputs, torch.full_like(inputs, -100))
        inputs[chosen] = tokenizer.mask_token_id
        loss = model(input_ids=inputs, attention_mask=attention, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    model.eval()
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return out_dir
