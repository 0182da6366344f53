"""Vector loaders: word2vec binary/text, GloVe text, spaCy vocab files, chiVe from the ja-ginza wheel."""

from __future__ import annotations

import numpy as np
import pytest

from bias_hub.pipelines.embeddings.vectors import (
    WordVectors,
    _read_key2row,
    load_chive,
    load_vectors,
    load_word2vec_binary,
    load_word2vec_text,
    save_word2vec_binary,
    spacy_hash,
)


def test_word2vec_binary_round_trip(tmp_path):
    vectors = WordVectors(["he", "she", "über"], np.arange(12, dtype=np.float32).reshape(3, 4))
    path = save_word2vec_binary(vectors, tmp_path / "v.bin")
    loaded = load_word2vec_binary(path)
    assert loaded.words == ["he", "she", "über"]
    assert loaded.matrix.tolist() == vectors.matrix.tolist()
    assert load_vectors(str(path)).words == loaded.words  # format from the suffix
    assert load_word2vec_binary(path, limit=2).words == ["he", "she"]


def test_text_formats_with_and_without_header(tmp_path):
    (tmp_path / "w2v.txt").write_text("2 3\nman 1 0 0\nwoman 0 1 0.5\n", encoding="utf-8")
    (tmp_path / "glove.txt").write_text("man 1 0 0\nwoman 0 1 0.5\n", encoding="utf-8")
    for name in ("w2v.txt", "glove.txt"):
        loaded = load_word2vec_text(tmp_path / name)
        assert loaded.words == ["man", "woman"] and loaded.matrix[1].tolist() == [0, 1, 0.5]
    (tmp_path / "bad.txt").write_text("2 3\nman 1 0\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.txt, line 2: expected a word and 3 numbers"):
        load_word2vec_text(tmp_path / "bad.txt")


def test_lookup_keeps_order_and_drops_repeats_and_unknown_words():
    vectors = WordVectors(["a", "b"], np.eye(2))
    words, matrix = vectors.lookup(["a", "zz", "b", "a"])
    assert words == ["a", "b"] and matrix.tolist() == [[1, 0], [0, 1]]


def test_key2row_reader_on_hand_made_msgpack(tmp_path):
    # fixmap of 2: key uint64 (0xcf) -> fixint 3, key uint64 -> uint16 (0xcd) 300.
    data = (
        bytes([0x82, 0xCF]) + (7).to_bytes(8, "big") + bytes([3, 0xCF]) + (2**63).to_bytes(8, "big")
    )
    data += bytes([0xCD]) + (300).to_bytes(2, "big")
    (tmp_path / "key2row").write_bytes(data)
    assert _read_key2row(tmp_path / "key2row") == {7: 3, 2**63: 300}


def test_spacy_hash_is_murmurhash64a_with_seed_1():
    # Finalisation only (empty input): h = 1 ^ (0 * m) = 1, then h ^= h >> 47; h *= m; h ^= h >> 47.
    m, mask = 0xC6A4A7935BD1E995, (1 << 64) - 1
    h = (1 * m) & mask
    assert spacy_hash("") == h ^ (h >> 47)


def test_chive_from_the_ja_ginza_wheel():
    vectors = load_chive(["男性", "女性", "数学", "代数", "存在しない語彙xyz"])
    assert vectors.words == ["男性", "女性", "数学", "代数"] and vectors.dim == 300
    # chiVe as ja-ginza ships it keeps 20,000 rows for 480,443 keys: similar words share a row.
    assert np.array_equal(vectors.matrix[2], vectors.matrix[3])
    assert not np.array_equal(vectors.matrix[0], vectors.matrix[1])
    assert "share" in vectors.note


def test_gensim_keyed_vectors_and_fasttext_bin(tmp_path):
    # gensim is a dev extra: users who load these formats install it themselves.
    import gensim.models as gensim_models
    from gensim.models.fasttext import save_facebook_model

    from bias_hub.pipelines.embeddings.vectors import load_fasttext

    keyed = gensim_models.KeyedVectors(vector_size=4)
    keyed.add_vectors(["he", "she"], np.array([[1, 2, 3, 4], [5, 6, 7, 8]], dtype=np.float32))
    keyed.save(str(tmp_path / "v.kv"))
    loaded = load_vectors(str(tmp_path / "v.kv"))
    assert loaded.words == ["he", "she"] and loaded.matrix[1].tolist() == [5, 6, 7, 8]
    sentences = [["the", "doctor", "said", "he", "was", "late"]] * 10
    model = gensim_models.FastText(vector_size=8, min_count=1, epochs=1, seed=0, workers=1)
    model.build_vocab(sentences)
    model.train(sentences, total_examples=len(sentences), epochs=1)
    save_facebook_model(model, str(tmp_path / "ft.bin"))
    words, matrix = load_fasttext(tmp_path / "ft.bin").lookup(["doctor", "doctors"])
    assert words == ["doctor", "doctors"] and matrix.shape == (2, 8)  # "doctors" from subwords


def test_a_word_twice_in_a_text_file_is_named_and_its_first_vector_kept(tmp_path, caplog):
    # 'math' on lines 2 and 4 used to pass without a word (gensim's loader warns).
    path = tmp_path / "twice.txt"
    path.write_text("3 2\nmath 1 0\narts 0 1\nmath 0.5 0.5\n", encoding="utf-8")
    with caplog.at_level("WARNING"):
        vectors = load_word2vec_text(path)
    assert (
        "twice.txt, line 4: the word 'math' again (first on line 2); its first vector is kept"
        in caplog.text
    )
    assert vectors.matrix[vectors.index["math"]].tolist() == [1, 0]
    assert "1 repeated words, each read with its first vector (such as 'math')" in vectors.note
    # The note travels with the vectors into every member of a family (once).
    assert vectors.with_matrix(vectors.matrix, name="copy").note.count("repeated words") == 1


def test_a_vector_with_a_number_that_is_not_finite_is_refused_with_its_line(tmp_path):
    # A NaN (or a value past float32's range) used to load and turn every score it touched
    # into NaN.
    for field in ("nan", "1e39", "-inf", "abc"):
        path = tmp_path / "v.vec"
        path.write_text(f"2 2\nman 0.1 0.2\nwoman 0.3 {field}\n", encoding="utf-8")
        with pytest.raises(ValueError, match=rf"v.vec, line 3: '{field}' is not a finite number"):
            load_word2vec_text(path)
