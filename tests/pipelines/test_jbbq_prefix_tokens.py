"""Tokenizing prompts that share their start: the result must be the tokenizer's own,
prompt by prompt, whatever the tokenizer's kind, and the shared text read once."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import pytest
from jbbq_fixtures import fixture_rows
from tokenizers import (
    Tokenizer,
    decoders,
    models,
    normalizers,
    pre_tokenizers,
    processors,
    trainers,
)

from bias_hub.pipelines.jbbq.prefix_tokens import MARGIN, encode_sharing_prefix, encode_whole
from bias_hub.pipelines.jbbq.prompting import load_prompt
from bias_hub.pipelines.jbbq.random_model import build_tokenizer

if TYPE_CHECKING:  # annotations only; the functions import what they run
    from transformers import PreTrainedTokenizerFast


def _prompts() -> list[str]:
    """Few-shot prompts as the paper preset builds them, plus texts that end mid-word, in
    digits, spaces and full-width characters right where the shared text ends."""
    rows = fixture_rows()
    texts = [load_prompt("unknown").plain(row, rows["train"][:3]) for row in rows["all"]]
    shared = texts[0][: len(texts[0]) - 40]
    texts += [
        shared + tail for tail in ("２番です", "2 ones", "  two spaces", "ん", "abc def 12", "。")
    ]
    return texts


def _corpus() -> list[str]:
    return _prompts() + ["The quick brown fox 0 1 2", "年齢 性別 回答"]


def _vocab_size(extra: int = 60) -> int:
    """The corpus' characters and a few merges: words split into several tokens, so
    cuts fall inside words, where a window's first tokens can differ."""
    return len(set("".join(_corpus()))) + extra


def _wordpiece() -> PreTrainedTokenizerFast:
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tokenizer.train_from_iterator(
        _corpus(),
        trainers.WordPieceTrainer(
            vocab_size=2 * _vocab_size(),
            special_tokens=["[PAD]", "[UNK]", "[CLS]", "[SEP]"],
            show_progress=False,
        ),
    )
    cls, sep = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", cls), ("[SEP]", sep)]
    )
    tokenizer.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="[UNK]", pad_token="[PAD]")


def _metaspace(
    scheme: str, corpus: list[str] | None = None, merges: int = 60
) -> PreTrainedTokenizerFast:
    """SentencePiece-style: spaces become "▁", one prepended at the start, a BOS added."""
    from transformers import PreTrainedTokenizerFast

    tokenizer = Tokenizer(models.BPE(byte_fallback=True, unk_token="<unk>"))
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace(prepend_scheme=scheme)
    tokenizer.decoder = decoders.Metaspace(prepend_scheme=scheme)
    corpus = corpus or _corpus()
    tokenizer.train_from_iterator(
        corpus,
        trainers.BpeTrainer(
            vocab_size=len(set("".join(corpus))) + merges,
            special_tokens=["<unk>", "<s>", "</s>"],
            show_progress=False,
        ),
    )
    bos = tokenizer.token_to_id("<s>")
    tokenizer.post_processor = processors.TemplateProcessing(
        single="<s> $A", special_tokens=[("<s>", bos)]
    )
    return PreTrainedTokenizerFast(tokenizer_object=tokenizer, unk_token="<unk>", bos_token="<s>")


TOKENIZERS = {
    "byte-level BPE": lambda: build_tokenizer(_corpus(), vocab_size=320, chat_template=False),
    "WordPiece, lowercased, [CLS] [SEP]": _wordpiece,
    "Metaspace first, BOS": lambda: _metaspace("first"),
    "Metaspace always, BOS": lambda: _metaspace("always"),
}


class _Counting:
    """A tokenizer that counts the characters it is asked to read."""

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.is_fast = tokenizer.is_fast
        self.characters = 0

    def __call__(self, text, **kwargs):
        self.characters += len(text) if isinstance(text, str) else sum(map(len, text))
        return self.tokenizer(text, **kwargs)


@pytest.mark.parametrize("kind", list(TOKENIZERS))
@pytest.mark.parametrize("add_special_tokens", [True, False])
def test_each_prompt_gets_the_tokens_of_tokenizing_it_whole(
    kind: str, add_special_tokens: bool
) -> None:
    tokenizer = TOKENIZERS[kind]()
    texts = _prompts()
    counting = _Counting(tokenizer)
    got = encode_sharing_prefix(counting, texts, add_special_tokens=add_special_tokens)
    expected = [
        tokenizer(text, add_special_tokens=add_special_tokens)["input_ids"] for text in texts
    ]
    assert got == expected
    # The shared text was read once, not once per prompt: past the first prompt each reads at
    # most half of it again (the window before the cut, back to a word boundary).
    shared = len(os.path.commonprefix(texts))
    assert counting.characters < sum(map(len, texts)) - (len(texts) - 1) * shared / 2


def test_the_cut_keeps_its_margins() -> None:
    """Few prompts, or a short shared text, take the plain path (nothing to save)."""
    tokenizer = TOKENIZERS["byte-level BPE"]()
    texts = _prompts()
    short = [f"{'x' * (3 * MARGIN - 2)} {i}" for i in range(20)]  # shares 3 * MARGIN - 1 characters
    for sample in (texts[:8], short):
        counting = _Counting(tokenizer)
        assert encode_sharing_prefix(counting, sample) == encode_whole(tokenizer, sample)
        assert counting.characters == sum(map(len, sample))


def _unspaced(spaced_at: int | None) -> list[str]:
    """Prompts sharing 400 characters of one word, with a space ``spaced_at`` characters
    from their start (or none)."""
    word = "あいうえおかきくけこ" * 40
    if spaced_at is not None:
        word = word[:spaced_at] + " " + word[spaced_at:]
    return [f"{word}質問{i}です" for i in range(60)]


@pytest.mark.parametrize(("spaced_at", "shares"), [(300, True), (None, False)])
def test_a_window_does_not_start_inside_a_word(spaced_at: int | None, shares: bool) -> None:
    """A window that starts inside a word gets a word-start mark from a SentencePiece-style
    tokenizer that the whole text does not have there. The window starts after the space
    instead (100 characters before the shared text ends, beyond the nearest boundaries),
    and with no space at all, every prompt is read whole."""
    tokenizer = _metaspace("always", _unspaced(300), merges=4)  # tokens of a few characters
    texts = _unspaced(spaced_at)
    counting = _Counting(tokenizer)
    assert encode_sharing_prefix(counting, texts) == encode_whole(tokenizer, texts)
    assert (counting.characters < sum(map(len, texts)) / 2) is shares


class _Characters:
    """A tokenizer of one token per character (``_ids`` says which), with offsets."""

    is_fast = True

    def _ids(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def __call__(self, text, add_special_tokens=True, return_offsets_mapping=False):
        if not isinstance(text, str):
            return {"input_ids": [self._ids(t) for t in text]}
        out = {"input_ids": self._ids(text)}
        if return_offsets_mapping:
            out["offset_mapping"] = [(i, i + 1) for i in range(len(text))]
        return out


class _Global(_Characters):
    """Every token depends on the whole text: a text longer than 150 characters that
    ends in "!" has all its ids shifted. A window (shorter) does not show it, so only
    comparing whole prompts can."""

    def _ids(self, text: str) -> list[int]:
        shift = 1000 if len(text) > 150 and text.endswith("!") else 0
        return [ord(c) + shift for c in text]


class _FirstLooksAhead(_Characters):
    """The first token depends on the whole text: shifted when a "?" comes anywhere after
    it. A window that holds the "?" shows it in its first token, which no longer equals
    the first prompt's token there."""

    def _ids(self, text: str) -> list[int]:
        return [ord(text[0]) + (1000 if "?" in text else 0)] + [ord(c) for c in text[1:]]


def test_a_window_whose_first_tokens_differ_is_read_whole() -> None:
    texts = [f"{'shared few-shot text ' * 10}question {i}" for i in range(30)]
    texts[1] += "?"  # not among the prompts compared whole (0, 4, 8, ..., 28, 29)
    assert encode_sharing_prefix(_FirstLooksAhead(), texts) == [
        _FirstLooksAhead()._ids(t) for t in texts
    ]


def test_a_tokenizer_that_looks_past_the_window_is_caught_and_read_whole() -> None:
    texts = [f"{'shared few-shot text ' * 10}question {i}" for i in range(30)]
    texts[-1] += "!"  # the last prompt is always among those checked
    assert encode_sharing_prefix(_Global(), texts) == [_Global()._ids(text) for text in texts]
