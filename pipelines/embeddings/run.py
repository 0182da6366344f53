"""``run_score`` and ``run_control``: one embedding, or a bias-controlled family, scored on WEAT tests.

Both take the shared pipeline shape ``(model, dataset, out_dir, settings)``: ``model`` names
the vectors (``googlenews``, ``chive`` or a path), ``dataset`` the WEAT word sets folder
(default ``weat_word_sets``). ``run_control`` builds the RNSB-vs-WinoBias study's
17-member family from ``settings.corpus`` (Word2Vec, ATTRACT-REPEL and dataset
balancing), or without a corpus this project's ATTRACT-REPEL strength family of ``model``.
``run_correlate`` joins score tables and WinoBias gaps; it runs no model.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from builders.shared.console import stage
from pipelines.common import RunFolder, RunSettings

__all__ = ["ControlSettings", "CorrelateSettings", "ScoreSettings", "run_control", "run_correlate", "run_score"]

log = logging.getLogger(__name__)
DEFAULT_TESTS = {"en": ["weat6_gender_terms", "weat7", "weat8"], "ja": ["weat6", "weat7", "weat8"]}


@dataclass(kw_only=True)
class ScoreSettings(RunSettings):
    """``bias-hub embeddings score``'s own settings (the shared ones come from ``RunSettings``)."""

    format: str | None = None
    limit: int | None = None
    config: str = "en"
    tests: list[str] | None = None
    metrics: Sequence[str] = ("weat", "rnsb")
    rnsb_train_on: Sequence[str] = ("attribute_sets", "target_sets")
    permutations: int = 10000
    rnsb_iterations: int = 10
    max_oov_share: float = 0.2
    lowercase_fallback: bool = True
    # Bootstrap intervals over the word sets' members; None or 0: none.
    confidence_level: float | None = 0.95
    n_resamples: int = 2000

    def interval_options(self) -> dict:
        if not self.confidence_level:
            return {}
        return {"confidence_level": self.confidence_level, "n_resamples": self.n_resamples}

    def score_options(self) -> dict:
        common = {"seed": self.seed, "max_oov_share": self.max_oov_share, **self.interval_options()}
        return {
            "weat_options": {"permutations": self.permutations, **common},
            "rnsb_options": {"iterations": self.rnsb_iterations, **common},
            "rnsb_train_on": list(self.rnsb_train_on),
            "lowercase_fallback": self.lowercase_fallback,
            "metrics_root": self.metrics_root,
        }


@dataclass(kw_only=True)
class ControlSettings(ScoreSettings):
    """``bias-hub embeddings control``: the study's family from a corpus, or the ATTRACT-REPEL variant."""

    corpus: str | None = None
    expansion_vectors: str | None = None
    expansion_format: str | None = None
    expansion_neighbours: int = 100
    dimensions: int = 300
    min_count: int = 10
    w2v_window: int = 5
    w2v_epochs: int = 5
    w2v_skipgram: bool = False
    workers: int = 1
    epochs: int = 5
    strengths: Sequence[float] = (0.05, 0.1, 0.25, 1.0)
    expand: int = 3
    save_vectors: bool = False


def _queries(dataset: str | Path | None, settings: ScoreSettings):
    from pipelines.embeddings.scoring import load_queries

    if settings.config not in DEFAULT_TESTS and not settings.tests:
        raise ValueError(f"--config {settings.config!r}: give --tests (default tests exist for {sorted(DEFAULT_TESTS)})")
    tests = settings.tests or DEFAULT_TESTS[settings.config]
    return load_queries(settings.config, tests, settings.datasets_root, dataset)


def _vectors(model: str, settings: ScoreSettings, queries, fmt: str | None = None):
    from pipelines.embeddings.vectors import load_chive, load_vectors

    with stage(f"load vectors {model}", log):
        if model == "chive":
            words = [w for q in queries for s in [*q.target_sets.values(), *q.attribute_sets.values()] for w in s]
            return load_chive(words + [w.lower() for w in words])
        return load_vectors(model, fmt or settings.format, settings.limit)


def run_score(model: str, dataset: str | Path | None, out_dir: Path, settings: ScoreSettings) -> dict:
    """WEAT and RNSB of one embedding on the chosen tests: results.jsonl, scores.json/.csv, report.md."""
    from pipelines.embeddings import report
    from pipelines.embeddings.scoring import score, wide_table

    queries = _queries(dataset, settings)
    with RunFolder(out_dir) as out:
        vectors = _vectors(model, settings, queries)
        with stage(f"score {len(queries)} tests", log):
            rows = score(vectors, queries, settings.metrics, **settings.score_options())
        report.write_scores(out, rows, vectors, title=f"Word-embedding bias: {vectors.name}")
    log.info("%s", report.scores_markdown(rows))
    columns, table = wide_table(rows)
    return {"columns": columns, "table": table, "rows": rows}


def _score_members(family, queries, settings: ControlSettings, out: RunFolder) -> tuple[list[dict], dict[str, str]]:
    """Every member scored; a member that lost too many of the tests' words (balancing can delete
    every sentence of a word) is left out with the reason, so a long run still reports the rest."""
    from pipelines.embeddings.scoring import score

    rows, skipped = [], {}
    with stage(f"score {len(family)} members", log):
        for member, member_vectors in family:
            try:
                rows += score(member_vectors, queries, settings.metrics, **settings.score_options())
            except ValueError as err:
                if member.name == "original":
                    raise
                log.warning("%s is not scored: %s", member.name, err)
                skipped[member.name] = str(err)
            if settings.save_vectors:
                from pipelines.embeddings.vectors import save_word2vec_binary

                save_word2vec_binary(member_vectors, out.path(f"vectors/{member.name}.bin"))
    return rows, skipped


def run_control(model: str | None, dataset: str | Path | None, out_dir: Path, settings: ControlSettings) -> dict:
    """A bias-controlled family, every member scored, WEAT vs RNSB correlated across members."""
    if settings.corpus is not None:
        return _run_paper_family(model, dataset, out_dir, settings)
    if model is None:
        raise ValueError("--vectors: give the embedding to specialise, or --corpus to build the study's family")
    from pipelines.embeddings import report
    from pipelines.embeddings.control import AttractRepelConfig, family_members, make_family
    from pipelines.embeddings.scoring import prepare

    queries = _queries(dataset, settings)
    with RunFolder(out_dir) as out:
        vectors = _vectors(model, settings, queries)
        config = AttractRepelConfig(epochs=settings.epochs, seed=settings.seed)
        constraints = [prepare(q, vectors)[0] for q in queries]
        with stage("bias-controlled family (ATTRACT-REPEL strengths)", log):
            family = make_family(vectors, [(q.target_sets, q.attribute_sets) for q in constraints],
                                 family_members(list(settings.strengths), settings.expand), config=config,
                                 progress=settings.progress)  # fmt: skip
        rows, skipped = _score_members(family, queries, settings, out)
        written = report.write_family(out, rows, family, config, vectors, settings, skipped=skipped)
    log.info("%s", report.scores_markdown(rows))
    return {**written, "rows": rows}


def _run_paper_family(model: str | None, dataset: str | Path | None, out_dir: Path, settings: ControlSettings) -> dict:
    from pipelines.embeddings import report
    from pipelines.embeddings.control import AttractRepelConfig
    from pipelines.embeddings.corpus import Word2VecConfig
    from pipelines.embeddings.family import paper_family

    if model is not None:
        raise ValueError(
            "--vectors and --corpus: with --corpus the original embedding is Word2Vec trained on the corpus; "
            "give the vectors that expand the union with --expansion-vectors"
        )
    if not Path(settings.corpus).is_file():
        raise FileNotFoundError(f"--corpus {settings.corpus}: no such file")
    queries = _queries(dataset, settings)
    word2vec = Word2VecConfig(
        vector_size=settings.dimensions, min_count=settings.min_count, window=settings.w2v_window,
        epochs=settings.w2v_epochs, skipgram=settings.w2v_skipgram, workers=settings.workers, seed=settings.seed,
    )  # fmt: skip
    config = AttractRepelConfig(epochs=settings.epochs, seed=settings.seed)
    with RunFolder(out_dir) as out:
        expansion = None
        if settings.expansion_vectors and settings.expansion_neighbours > 0:
            expansion = _vectors(settings.expansion_vectors, settings, queries, settings.expansion_format)
        family, record = paper_family(
            settings.corpus, queries, word2vec=word2vec, attract_repel_config=config, expansion=expansion,
            neighbours=settings.expansion_neighbours, work_dir=Path(out_dir).resolve().parent, seed=settings.seed,
        )  # fmt: skip
        rows, skipped = _score_members(family, queries, settings, out)
        written = report.write_paper_family(out, rows, family, record, word2vec, config, settings, skipped=skipped)
    log.info("%s", report.scores_markdown(rows))
    return {**written, "rows": rows}


@dataclass(kw_only=True)
class CorrelateSettings:
    """``bias-hub embeddings correlate``: score tables, WinoBias outputs, the bootstrap."""

    pairs: Sequence[str] | None = None
    coref: Sequence[str] | None = None
    winobias: str | Path | None = None
    split: str = "test"
    datasets_root: Path | None = None
    metrics_root: Path | None = None
    confidence_level: float | None = 0.95
    n_resamples: int = 2000
    seed: int = 0


def run_correlate(scores: Sequence[str], out_dir: Path, settings: CorrelateSettings | None = None) -> str:
    """Pearson and Spearman between score columns of one or more tables (ours and/or extrinsic),
    with the WinoBias gaps of each embedding's coreference outputs joined first (``coref``)."""
    settings = settings or CorrelateSettings()
    from pipelines.embeddings import report
    from pipelines.embeddings.correlate import merge_tables, read_score_table, table2_pairs

    columns, table = read_score_table(scores[0])
    for extra in scores[1:]:
        columns, table = merge_tables((columns, table), read_score_table(extra))
    chosen = None
    if settings.pairs:
        chosen = []
        for text in settings.pairs:
            if ":" not in text:
                raise ValueError(f"--pairs: expected X:Y, got {text!r}")
            chosen.append(tuple(text.split(":", 1)))
    gaps = None
    if settings.coref:
        from pipelines.embeddings.coref import parse_coref_flags, winobias_gaps

        outputs = parse_coref_flags(settings.coref)
        unknown = sorted(set(outputs) - set(table))
        if unknown:
            raise ValueError(f"--coref {unknown}: no such embedding in --scores (it has {sorted(table)})")
        with stage(f"WinoBias gaps of {len(outputs)} coreference outputs", log):
            gaps = winobias_gaps(outputs, settings)
        columns, table = merge_tables((columns, table), (gaps["columns"], gaps["table"]))
        if chosen is None:
            chosen = table2_pairs(columns)
    with RunFolder(out_dir) as out:
        markdown = report.write_correlations(out, columns, table, chosen, settings=settings, winobias=gaps)
    log.info("%s", markdown)
    return markdown
