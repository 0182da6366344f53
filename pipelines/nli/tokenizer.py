"""Japanese tokenizers built from text, for models trained from scratch (no Hub access).

Pretrained Japanese models bring their own tokenizer (``AutoTokenizer`` loads the
MeCab-based ``BertJapaneseTokenizer`` of cl-tohoku models, or a character-level one);
``fugashi`` + ``unidic-lite`` cover the MeCab ones offline. When no pretrained model is
reachable, ``build_japanese_tokenizer`` writes a ``BertJapaneseTokenizer`` whose vocabulary
comes from the training text: MeCab (unidic-lite) words, then every character, plus
``##``-continuations of every character so that an unseen word still splits into known
pieces instead of becoming ``[UNK]``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

__all__ = ["SPECIAL_TOKENS", "build_japanese_tokenizer", "japanese_vocabulary"]

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
_MECAB_KWARGS = {"mecab_dic": "unidic_lite"}


def _mecab():
    from transformers.models.bert_japanese.tokenization_bert_japanese import MecabTokenizer

    return MecabTokenizer(do_lower_case=False, **_MECAB_KWARGS)


def japanese_vocabulary(
    texts: Iterable[str], kind: str = "wordpiece", min_frequency: int = 1
) -> list[str]:
    """The vocabulary list: special tokens, then words (``wordpiece``) or characters only.

    ``kind="wordpiece"``: MeCab words seen at least ``min_frequency`` times (most frequent
    first), every character, and ``##`` + every character. ``kind="character"``: the
    characters alone, for a character-level tokenizer.
    """
    if kind not in {"wordpiece", "character"}:
        raise ValueError(f"kind must be 'wordpiece' or 'character', got {kind!r}")
    texts = list(texts)
    if not texts:
        raise ValueError("texts: no text to build a vocabulary from")
    characters = sorted({char for text in texts for char in text if not char.isspace()})
    vocabulary = list(SPECIAL_TOKENS)
    if kind == "wordpiece":
        mecab = _mecab()
        counts = Counter(word for text in texts for word in mecab.tokenize(text))
        words = sorted(
            (w for w, n in counts.items() if n >= min_frequency), key=lambda w: (-counts[w], w)
        )
        vocabulary += words
        vocabulary += [c for c in characters if c not in counts]
        vocabulary += ["##" + c for c in characters]
    else:
        vocabulary += characters
    return list(dict.fromkeys(vocabulary))


def build_japanese_tokenizer(
    texts: Iterable[str],
    out_dir: str | Path,
    kind: str = "wordpiece",
    model_max_length: int = 128,
):
    """Write a ``BertJapaneseTokenizer`` (MeCab words + WordPiece, or characters) to ``out_dir``.

    Returns the loaded tokenizer; ``AutoTokenizer.from_pretrained(out_dir)`` loads it again.
    """
    from transformers import BertJapaneseTokenizer

    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    vocabulary = japanese_vocabulary(texts, kind=kind)
    vocab_file = out_dir / "vocab.txt"
    vocab_file.write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    tokenizer = BertJapaneseTokenizer(
        vocab_file=str(vocab_file),
        do_lower_case=False,
        word_tokenizer_type="mecab",
        subword_tokenizer_type=kind,
        mecab_kwargs=dict(_MECAB_KWARGS),
        model_max_length=model_max_length,
        # transformers 5's BertJapaneseTokenizer leaves token_type_ids out unless asked;
        # BERT's sentence-pair input needs them to tell premise from hypothesis.
        model_input_names=["input_ids", "token_type_ids", "attention_mask"],
    )
    tokenizer.save_pretrained(str(out_dir))
    return tokenizer
