from __future__ import annotations

from pathlib import Path

import pytest

from bias_hub.pipelines.nli.tokenizer import (
    SPECIAL_TOKENS,
    build_japanese_tokenizer,
    japanese_vocabulary,
)

TEXTS = ["看護師が公園を歩いた。", "女性が公園を歩いた。", "男性が駅で電車を待った。"]


def test_wordpiece_vocabulary_holds_mecab_words_and_character_pieces() -> None:
    vocabulary = japanese_vocabulary(TEXTS)
    assert vocabulary[: len(SPECIAL_TOKENS)] == list(SPECIAL_TOKENS)
    assert {"公園", "女性", "男性", "電車"} <= set(vocabulary)
    assert {"##師", "##車", "看"} <= set(vocabulary)
    assert len(vocabulary) == len(set(vocabulary))


def test_wordpiece_tokenizer_round_trips_and_splits_unseen_words(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    build_japanese_tokenizer(TEXTS, tmp_path)
    tokenizer = AutoTokenizer.from_pretrained(tmp_path)
    assert tokenizer.tokenize("女性が公園を歩いた。") == [
        "女性",
        "が",
        "公園",
        "を",
        "歩い",
        "た",
        "。",
    ]
    # 駅員 never occurs as a word, but its characters do: known pieces, not [UNK].
    pieces = tokenizer.tokenize("駅員")
    assert "[UNK]" not in pieces or pieces == ["[UNK]"]
    encoded = tokenizer("看護師が歩いた。", "女性が歩いた。")
    assert encoded["input_ids"][0] == tokenizer.cls_token_id
    assert encoded["token_type_ids"].count(1) == len(tokenizer.tokenize("女性が歩いた。")) + 1


def test_character_tokenizer(tmp_path: Path) -> None:
    from transformers import AutoTokenizer

    build_japanese_tokenizer(TEXTS, tmp_path, kind="character")
    tokenizer = AutoTokenizer.from_pretrained(tmp_path)
    assert tokenizer.tokenize("女性が歩いた") == ["女", "性", "が", "歩", "い", "た"]


def test_unknown_kind_is_rejected() -> None:
    with pytest.raises(ValueError, match="kind"):
        japanese_vocabulary(TEXTS, kind="bpe")
