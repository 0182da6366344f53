"""The study's family: NLTK tokens and <unk>, dataset balancing by hand, the union set pair,
and ``embeddings control --corpus`` building 17 members on a corpus the test writes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from bias_hub.builders.weat_word_sets import build as build_word_sets
from bias_hub.pipelines.cli import main
from bias_hub.pipelines.embeddings.control import FamilyMember
from bias_hub.pipelines.embeddings.corpus import balance_corpus, prepare_corpus, tokenise
from bias_hub.pipelines.embeddings.family import union_pair
from bias_hub.pipelines.embeddings.scoring import Query, load_queries

TESTS = ["weat6_gender_terms", "weat7", "weat8"]


@pytest.fixture(scope="module")
def datasets_root(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("family_sets")
    build_word_sets(root)
    return root


def test_nltk_tokens_and_rare_words_as_unk(tmp_path):
    assert tokenise("He didn't like Einstein's theory.") == [
        "He",
        "did",
        "n't",
        "like",
        "Einstein",
        "'s",
        "theory",
        ".",
    ]
    source = tmp_path / "corpus.txt"
    source.write_text("She likes math.\n\nHe likes math too.\n", encoding="utf-8")
    stats = prepare_corpus(source, tmp_path / "tokens.txt", min_count=2)
    # Tokens: She likes math . / He likes math too . -> likes, math and "." twice; She, He, too once.
    assert stats == {"sentences": 2, "tokens": 9, "types": 6, "types_replaced_by_unk": 3}
    assert (tmp_path / "tokens.txt").read_text(
        encoding="utf-8"
    ) == "<unk> likes math .\n<unk> likes math <unk> .\n"
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"empty.txt: no sentence"):
        prepare_corpus(empty, tmp_path / "out.txt", min_count=1)


SETS = ({"X": ["math"], "Y": ["art"]}, {"A": ["he"], "B": ["she"]})
LINES = (
    ["he likes math"] * 3  # X and A: stereotypical
    + ["she likes art"] * 2  # Y and B: stereotypical
    + ["he likes art"]  # Y and A: anti-stereotypical
    + ["she likes math"] * 2  # X and B: anti-stereotypical
    + ["nothing here", "He and she like math"]  # neither; X, A and B (stereotypical and anti)
)


def test_amplifying_deletes_every_anti_stereotypical_sentence(tmp_path):
    source = tmp_path / "corpus.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    stats = balance_corpus(source, tmp_path / "amplified.txt", *SETS, "amplify")
    # Before (by hand): X-A 3 + 1, Y-B 2, Y-A 1, X-B 2 + 1 ("He" matches "he").
    assert stats["before"] == {"x_a": 4, "y_b": 2, "y_a": 1, "x_b": 3}
    assert stats["after"] == {"x_a": 3, "y_b": 2, "y_a": 0, "x_b": 0}
    kept = (tmp_path / "amplified.txt").read_text(encoding="utf-8").splitlines()
    assert kept == ["he likes math"] * 3 + ["she likes art"] * 2 + ["nothing here"]


def test_reducing_subsamples_stereotypical_sentences_to_the_anti_count(tmp_path):
    source = tmp_path / "corpus.txt"
    source.write_text("\n".join(LINES) + "\n", encoding="utf-8")
    stats = balance_corpus(source, tmp_path / "reduced.txt", *SETS, "reduce", seed=3)
    # X-A sentences (4, the mixed one among them) keep as many as Y-A (1); Y-B (2) may keep
    # up to X-B (3), so both stay; every other sentence stays: 10 - 3 = 7.
    assert stats["sentences_before"] == 10 and stats["sentences_after"] == 7
    assert stats["after"]["x_a"] == 1 and stats["after"]["y_b"] == 2 and stats["after"]["y_a"] == 1
    kept = (tmp_path / "reduced.txt").read_text(encoding="utf-8").splitlines()
    assert (
        "nothing here" in kept
        and kept.count("she likes art") == 2
        and kept.count("he likes art") == 1
    )
    again = balance_corpus(source, tmp_path / "again.txt", *SETS, "reduce", seed=3)
    assert (
        again == stats
        and (tmp_path / "again.txt").read_text() == (tmp_path / "reduced.txt").read_text()
    )
    with pytest.raises(ValueError, match="direction must be one of"):
        balance_corpus(source, tmp_path / "x.txt", *SETS, "neutral")


def test_union_puts_gender_terms_on_one_side(datasets_root):
    queries = load_queries("en", TESTS, datasets_root)
    union = union_pair(queries, None, 0)
    (x, xs), (y, ys) = union.target_sets.items()
    (a, as_), (b, bs) = union.attribute_sets.items()
    assert (x, y, a, b) == (
        "Career + Math + Science",
        "Family + Arts",
        "Male terms",
        "Female terms",
    )
    # 8 + 8 + 8 concept words; family 8 + arts 8 + Shakespeare; 8 male terms + father, uncle,
    # grandfather (WEAT 8); the same for female terms.
    assert [len(xs), len(ys), len(as_), len(bs)] == [24, 17, 11, 11]
    assert {"grandfather", "he"} <= set(as_) and "Shakespeare" in ys and "career" in xs


def test_union_expansion_adds_neighbours_to_the_nearer_set():
    from bias_hub.pipelines.embeddings.vectors import WordVectors

    words = ["he", "she", "math", "art", "guy", "lady", "algebra", "painting", "far"]
    matrix = np.array(
        [
            [1, 0, 0, 0],
            [0, 1, 0, 0],
            [0, 0, 1, 0],
            [0, 0, 0, 1],
            [0.9, 0.1, 0, 0],
            [0.1, 0.9, 0, 0],
            [0, 0, 0.9, 0.1],
            [0, 0, 0.1, 0.9],
            [0.5, 0.5, 0.5, 0.5],
        ],
        dtype=float,
    )
    query = Query("weat7", {"Math": ["math"], "Arts": ["art"]}, {"Male": ["he"], "Female": ["she"]})
    union = union_pair([query], WordVectors(words, matrix), neighbours=1)
    assert union.test_id == "union_expanded1"
    assert union.target_sets == {"Math": ["math", "algebra"], "Arts": ["art", "painting"]}
    assert union.attribute_sets == {"Male": ["he", "guy"], "Female": ["she", "lady"]}


def _union_sets(queries) -> list[list[str]]:
    union = union_pair(queries, None, 0)
    return [*union.target_sets.values(), *union.attribute_sets.values()]


def _expansion_vectors(path: Path, queries) -> None:
    """Word vectors in which each union set's words share a direction and have one of their
    own, and two new words per set ("extra<k>_<i>") lie on the set's direction: the two
    nearest neighbours of every listed word (cos 0.89, against 0.8 for another listed word)."""
    sets = _union_sets(queries)
    listed = [word for words in sets for word in words]
    size = 4 + len(listed) + 8
    rows = {}
    for k, words in enumerate(sets):
        for word in words:
            vector = np.zeros(size)
            vector[k], vector[4 + listed.index(word)] = 1.0, 0.5
            rows[word] = vector
        for i in range(2):
            vector = np.zeros(size)
            vector[k], vector[4 + len(listed) + 2 * k + i] = 1.0, 0.01
            rows[f"extra{k}_{i}"] = vector
    lines = [f"{len(rows)} {size}"] + [
        w + " " + " ".join(f"{v:.4f}" for v in vec) for w, vec in rows.items()
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _corpus(path: Path, queries, lines: int = 1500) -> None:
    """Every set word alone in a sentence, then sentences pairing random set words of one test
    (the extra words among them), with more X-A and Y-B pairs than the reverse."""
    rng = np.random.default_rng(0)
    filler = [f"word{i}" for i in range(40)]
    sets = []
    for query in queries:
        (x, y), (a, b) = list(query.target_sets.values()), list(query.attribute_sets.values())
        sets.append((x, y, a, b))
    extras = [[f"extra{k}_{i}" for i in range(2)] for k in range(4)]
    text = [f"The {word} {filler[0]} ." for words in _union_sets(queries) for word in words] * 3
    for number in range(lines):
        x, y, a, b = (
            words + extra for words, extra in zip(sets[number % len(sets)], extras, strict=True)
        )
        pair = [(x, a), (y, b), (x, b), (y, a)][rng.choice(4, p=[0.35, 0.35, 0.15, 0.15])]
        words = [
            str(rng.choice(pair[0])),
            str(rng.choice(pair[1])),
            *rng.choice(filler, size=4).tolist(),
        ]
        rng.shuffle(words)
        text.append("The " + " ".join(words) + ".")
    path.write_text("\n".join(text) + "\n", encoding="utf-8")


@pytest.mark.slow
def test_control_with_a_corpus_builds_the_studys_17_members(datasets_root, tmp_path):
    queries = load_queries("en", TESTS, datasets_root)
    corpus, expansion = tmp_path / "corpus.txt", tmp_path / "expansion.txt"
    _corpus(corpus, queries)
    _expansion_vectors(expansion, queries)
    out = tmp_path / "family"
    code = main(
        [
            "embeddings",
            "control",
            "--corpus",
            str(corpus),
            "--datasets-root",
            str(datasets_root),
            "--expansion-vectors",
            str(expansion),
            "--expansion-neighbours",
            "2",
            "--dimensions",
            "16",
            "--min-count",
            "2",
            "--w2v-epochs",
            "2",
            "--epochs",
            "1",
            "--rnsb-iterations",
            "1",
            "--n-resamples",
            "100",
            "--permutations",
            "200",
            "--out",
            str(out),
            "-q",
        ]
    )
    assert code == 0
    scores = json.loads((out / "scores.json").read_text())
    pairs = [*TESTS, "union_expanded2"]
    expected = ["original"] + [
        f"{p}-{m}-{d}"
        for p in pairs
        for m in ("attract_repel", "balance")
        for d in ("reduce", "amplify")
    ]
    assert list(scores["members"]) == expected and len(expected) == 17
    assert list(scores["table"]) == expected and scores["not_scored"] == {}
    family = json.loads((out / "family.json").read_text())
    assert (
        family["word2vec"]["vector_size"] == 16 and family["corpus"]["sentences"] == 1500 + 3 * 63
    )
    for name, stats in family["balancing"].items():
        if name.endswith("amplify"):
            assert stats["after"]["y_a"] == stats["after"]["x_b"] == 0 < stats["before"]["y_a"], (
                name
            )
        else:
            assert stats["after"]["x_a"] <= stats["before"]["y_a"] < stats["before"]["x_a"], name
    # Each union set gained its two extra words (the listed words' nearest neighbours).
    union = family["set_pairs"]["union_expanded2"]
    assert union["target_sets"]["Career + Math + Science"][-2:] == ["extra0_0", "extra0_1"]
    assert union["attribute_sets"]["Female terms"][-2:] == ["extra3_0", "extra3_1"]
    # ATTRACT-REPEL moves the WEAT value of its own set pair's test the way it was asked to.
    table = scores["table"]
    assert table["weat7-attract_repel-amplify"]["weat_weat7"] > table["original"]["weat_weat7"]
    assert table["weat7-attract_repel-reduce"]["weat_weat7"] < table["original"]["weat_weat7"]
    report = (out / "report.md").read_text()
    assert (
        "The study's bias-controlled family (17 embeddings)" in report
        and "## Dataset balancing" in report
    )
    correlations = json.loads((out / "correlations.json").read_text())
    assert all(row["n"] == 17 for row in correlations)


def test_a_member_that_lost_the_tests_words_is_left_out_with_the_reason(datasets_root, tmp_path):
    from bias_hub.pipelines.common import RunFolder
    from bias_hub.pipelines.embeddings.run import score_members
    from bias_hub.pipelines.embeddings.settings import ControlSettings
    from bias_hub.pipelines.embeddings.vectors import WordVectors

    queries = load_queries("en", ["weat7"], datasets_root)
    words = [
        w for q in queries for s in [*q.target_sets.values(), *q.attribute_sets.values()] for w in s
    ]
    full = WordVectors(
        words, np.random.default_rng(1).normal(size=(len(words), 6)), name="original"
    )
    without_math = WordVectors(words[8:], full.matrix[8:], name="balanced")
    settings = ControlSettings(
        datasets_root=datasets_root, metrics=["weat"], progress=False, confidence_level=None
    )
    with RunFolder(tmp_path / "out") as out:
        rows, skipped = score_members(
            [(FamilyMember("original"), full), (FamilyMember("balanced"), without_math)],
            queries,
            settings,
            out,
        )
        assert [row["embedding"] for row in rows] == ["original"]
        assert (
            list(skipped) == ["balanced"]
            and "target_sets['Math'] lost 8 of 8 words" in skipped["balanced"]
        )
        with pytest.raises(ValueError, match="lost 8 of 8"):
            score_members([(FamilyMember("original"), without_math)], queries, settings, out)


def test_corpus_and_vectors_together_are_refused(datasets_root, tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("he likes math\n", encoding="utf-8")
    code = main(
        [
            "embeddings",
            "control",
            "--corpus",
            str(corpus),
            "--vectors",
            "googlenews",
            "--datasets-root",
            str(datasets_root),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2 and "--vectors and --corpus" in capsys.readouterr().err
    code = main(
        [
            "embeddings",
            "control",
            "--corpus",
            str(tmp_path / "missing.txt"),
            "--datasets-root",
            str(datasets_root),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2 and "missing.txt: no such file" in capsys.readouterr().err
    code = main(
        [
            "embeddings",
            "control",
            "--datasets-root",
            str(datasets_root),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    assert code == 2 and "--vectors: give the embedding" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
