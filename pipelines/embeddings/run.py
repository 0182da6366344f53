"""The embeddings part's steps, each ``run_<step>(model, dataset, out_dir, settings) -> dict``.

``run_score``: one embedding on WEAT tests. ``run_control``: a bias-controlled family, every
member scored, WEAT vs RNSB correlated across it (the RNSB-vs-WinoBias study's 17 members from
``settings.corpus``, or without a corpus this project's ATTRACT-REPEL strength family of
``model``). ``run_correlate``: score tables joined with the WinoBias gaps of coreference
outputs, correlated (runs no model). ``model`` names the vectors (``googlenews``, ``chive`` or
a path), ``dataset`` the WEAT word sets folder (for ``run_correlate`` the WinoBias folder).
"""

from __future__ import annotations

import csv
import dataclasses
import functools
import io
import logging
from collections.abc import Sequence
from pathlib import Path

from bias_hub.builders.shared.console import stage
from bias_hub.builders.shared.files import to_jsonable
from bias_hub.pipelines.common import RunFolder, dataset_folder
from bias_hub.pipelines.common.presets import preset_record
from bias_hub.pipelines.common.settings import INTERVAL_FIELDS
from bias_hub.pipelines.embeddings import report
from bias_hub.pipelines.embeddings.control import (
    AttractRepelConfig,
    family_members,
    make_family,
    member_settings,
)
from bias_hub.pipelines.embeddings.coref import parse_coref_flags, winobias_gaps
from bias_hub.pipelines.embeddings.corpus import Word2VecConfig
from bias_hub.pipelines.embeddings.correlate import (
    correlation_table,
    family_pairs,
    merge_tables,
    read_score_table,
    table2_pairs,
    with_absolute_weat,
)
from bias_hub.pipelines.embeddings.family import paper_family
from bias_hub.pipelines.embeddings.scoring import (
    DATASET,
    load_queries,
    prepare,
    score,
)
from bias_hub.pipelines.embeddings.settings import (
    DEFAULT_TESTS,
    ControlSettings,
    CorrelateSettings,
    ScoreSettings,
)
from bias_hub.pipelines.embeddings.vectors import (
    WordVectors,
    load_chive,
    load_vectors,
    save_word2vec_binary,
)

__all__ = [
    "results_header",
    "run_control",
    "run_correlate",
    "run_score",
    "score_tables",
    "write_score_tables",
]

log = logging.getLogger(__name__)
PART = "embeddings"


def results_header(step: str, settings) -> dict:
    """What every results.json of the part starts with: part, step, settings (no token), the
    interval settings and the preset with its departures."""
    record = {
        f.name: to_jsonable(getattr(settings, f.name))
        for f in dataclasses.fields(settings)
        if f.name not in {"token", "preset", "departures", "progress", *INTERVAL_FIELDS}
    }
    return {
        "part": PART,
        "step": step,
        "settings": record,
        "intervals": settings.interval_record(),
        "preset": preset_record(settings),
    }


def vectors_record(vectors: WordVectors) -> dict:
    return {"name": vectors.name, "words": len(vectors), "dim": vectors.dim, "note": vectors.note}


def score_tables(rows: Sequence[dict]) -> dict:
    """The rows (one per module call) and the wide tables a report and ``correlate`` read:
    the columns (one per test and score), {embedding: {column: value}} and {embedding:
    {column: [low, high]}} where an interval was computed and defined."""
    columns: dict[str, None] = {}
    table: dict[str, dict[str, float]] = {}
    intervals: dict[str, dict[str, list[float]]] = {}
    for row in rows:
        for item in row["values"]:
            column, interval = item["column"], item["interval"]
            columns[column] = None
            if item["value"] is not None:
                table.setdefault(row["embedding"], {})[column] = item["value"]
            if interval and interval["low"] is not None:
                bounds = [interval["low"], interval["high"]]
                intervals.setdefault(row["embedding"], {})[column] = bounds
    return {
        "columns": list(columns),
        "table": table,
        "intervals_table": intervals,
        "rows": list(rows),
    }


def _csv(columns: Sequence[str], table: dict[str, dict[str, float]]) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["embedding", *columns])
    for name, values in table.items():
        writer.writerow([name, *(values.get(column, "") for column in columns)])
    return buffer.getvalue()


def write_score_tables(out: RunFolder, results: dict, extra: dict | None = None) -> None:
    """results.jsonl (one line per module call), scores.json and scores.csv (one row per embedding)."""
    columns, table = results["columns"], results["table"]
    out.write_jsonl("results.jsonl", results["rows"])
    scores = {"columns": columns, "table": table, "intervals": results["intervals_table"]}
    out.write_json("scores.json", scores | (extra or {}))
    out.write_text("scores.csv", _csv(columns, table))


def finish(out: RunFolder, results: dict) -> dict:
    """results.json, then the report rendered from it alone."""
    out.write_json("results.json", results)
    report.render(results, out.path("."))
    return results


def finish_score(out: RunFolder, settings, title: str, vectors: WordVectors, rows) -> dict:
    """A ``score`` step's files (``finish`` and the score tables) for one embedding's rows."""
    results = {
        **results_header("score", settings),
        "title": title,
        "vectors": vectors_record(vectors),
        **score_tables(rows),
    }
    write_score_tables(out, results)
    return finish(out, results)


# Vectors named by a short spec come from a registry wheel whose sha256 is checked on each load.
_PINNED_VECTORS = ("googlenews", "chive")


def _record_inputs(
    out: RunFolder,
    settings,
    *,
    word_sets: str | Path | None = None,
    vectors: Sequence[str | None] = (),
    files: Sequence[str | Path | None] = (),
    winobias: str | Path | None = None,
) -> None:
    """What an embeddings run read (``RunFolder.record_inputs``): the WEAT word sets (config
    ``settings.config``), the vectors, input files, and WinoBias when coreference outputs are scored."""
    datasets = []
    if word_sets is not None:
        datasets.append((dataset_folder(word_sets, settings.datasets_root), settings.config))
    if winobias is not None:
        datasets.append((dataset_folder(winobias, settings.datasets_root), "all"))
    models = [
        {"id": spec, "pinned": True} if spec in _PINNED_VECTORS else spec
        for spec in vectors
        if spec
    ]
    out.record_inputs(datasets=datasets, models=models, files=files, settings=settings)


def _queries(dataset: str | Path | None, settings: ScoreSettings):
    if settings.config not in DEFAULT_TESTS and not settings.tests:
        raise ValueError(
            f"--config {settings.config!r}: give --tests (default tests exist for {sorted(DEFAULT_TESTS)})"
        )
    tests = settings.tests or DEFAULT_TESTS[settings.config]
    return load_queries(settings.config, tests, settings.datasets_root, dataset)


def _vectors(model: str, settings: ScoreSettings, queries, fmt: str | None = None) -> WordVectors:
    with stage(f"load vectors {model}", log):
        if model == "chive":
            words = [w for q in queries for w in q.words()]
            return load_chive(words + [w.lower() for w in words])
        return load_vectors(model, fmt or settings.format, settings.limit)


def run_score(
    model: str, dataset: str | Path | None, out_dir: Path, settings: ScoreSettings
) -> dict:
    """WEAT and RNSB of one embedding on the chosen tests: results.json and .jsonl, scores.json
    and .csv, report.md."""
    queries = _queries(dataset, settings)
    with RunFolder(out_dir) as out:
        _record_inputs(out, settings, word_sets=dataset or DATASET, vectors=[model])
        vectors = _vectors(model, settings, queries)
        with stage(f"score {len(queries)} tests", log):
            rows = score(vectors, queries, settings.metrics, **settings.score_options())
        results = finish_score(out, settings, f"Word-embedding bias: {vectors.name}", vectors, rows)
    log.info("%s", report.scores_markdown(rows))
    return results


def score_members(
    family, queries, settings: ControlSettings, out: RunFolder
) -> tuple[list[dict], dict[str, str]]:
    """Every member scored; a member that lost too many of the tests' words (balancing can delete
    every sentence of a word) is left out with the reason, so a long run still reports the rest."""
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
                save_word2vec_binary(member_vectors, out.path(f"vectors/{member.name}.bin"))
    return rows, skipped


def _correlations(columns, table, pairs, settings) -> list[dict]:
    """``correlation_table`` of the pairs with the run's intervals (resampling the embeddings)."""
    options = {key: getattr(settings, key) for key in ("confidence_level", "n_resamples", "seed")}
    return correlation_table(columns, table, pairs, **options)


def run_control(
    model: str | None, dataset: str | Path | None, out_dir: Path, settings: ControlSettings
) -> dict:
    """A bias-controlled family, every member scored, WEAT vs RNSB correlated across members:
    the study's from ``settings.corpus``, else this project's variant of ``model``."""
    paper = settings.corpus is not None
    if paper and model is not None:
        raise ValueError(
            "--vectors and --corpus: with --corpus the original embedding is Word2Vec trained on the corpus; "
            "give the vectors that expand the union with --expansion-vectors"
        )
    if paper and not Path(settings.corpus).is_file():
        raise FileNotFoundError(f"--corpus {settings.corpus}: no such file")
    if not paper and model is None:
        raise ValueError(
            "--vectors: give the embedding to specialise, or --corpus to build the study's family"
        )
    queries = _queries(dataset, settings)
    with RunFolder(out_dir) as out:
        _record_inputs(
            out,
            settings,
            word_sets=dataset or DATASET,
            vectors=[settings.expansion_vectors if paper else model],
            files=[settings.corpus],
        )
        if paper:
            results = _paper_family(queries, settings, out, Path(out_dir).resolve().parent)
        else:
            results = variant_family(_vectors(model, settings, queries), queries, settings, out)
        finish(out, results)
    log.info("%s", report.scores_markdown(results["rows"]))
    return results


def variant_family(
    vectors: WordVectors, queries, settings: ControlSettings, out: RunFolder, notes: str = ""
) -> dict:
    """This project's ATTRACT-REPEL strength family of ``vectors``, scored and correlated: the
    results of ``control`` without a corpus (the data files written, report.md not yet)."""
    config = AttractRepelConfig(epochs=settings.epochs, seed=settings.seed)
    constraints = [prepare(q, vectors)[0] for q in queries]
    with stage("bias-controlled family (ATTRACT-REPEL strengths)", log):
        family = make_family(
            vectors,
            [(q.target_sets, q.attribute_sets) for q in constraints],
            family_members(list(settings.strengths), settings.expand),
            config=config,
            progress=settings.progress,
        )
    members = {member.name: member_settings(member, config) for member, _ in family}
    fields = {
        "family": "variant",
        "vectors": vectors_record(vectors),
        "members": members,
        "attract_repel": dataclasses.asdict(config),
        "notes_markdown": notes,
    }
    return _scored_family(
        family, queries, settings, out, fields, "attract-repel strengths (bias-hub's variant)"
    )


def _scored_family(family, queries, settings, out: RunFolder, fields, described, **extra) -> dict:
    """Every member scored and WEAT vs RNSB correlated across them: results.json's ``fields``
    (its ``members`` among them) with the scores; scores.json names the family ``described``."""
    rows, skipped = score_members(family, queries, settings, out)
    results = {
        **results_header("control", settings),
        **fields,
        "not_scored": skipped,
        **score_tables(rows),
    }
    scores = {"family": described, "members": fields["members"], "not_scored": skipped, **extra}
    write_score_tables(out, results, scores)
    # WEAT (signed and absolute) against RNSB across the members: the study's Table 3 and more.
    columns, table = with_absolute_weat(results["columns"], results["table"])
    results["correlations"] = _correlations(columns, table, family_pairs(columns), settings)
    out.write_json("correlations.json", results["correlations"])
    return results


def _paper_family(queries, settings: ControlSettings, out: RunFolder, work_dir: Path) -> dict:
    """The study's family built from ``settings.corpus``, scored and correlated (with
    family.json; report.md not yet); its corpora are written under ``work_dir`` meanwhile."""
    word2vec = Word2VecConfig(
        vector_size=settings.dimensions,
        min_count=settings.min_count,
        window=settings.w2v_window,
        epochs=settings.w2v_epochs,
        skipgram=settings.w2v_skipgram,
        workers=settings.workers,
        seed=settings.seed,
    )
    config = AttractRepelConfig(epochs=settings.epochs, seed=settings.seed)
    expansion = None
    if settings.expansion_vectors and settings.expansion_neighbours > 0:
        expansion = _vectors(
            settings.expansion_vectors, settings, queries, settings.expansion_format
        )
    family, record = paper_family(
        settings.corpus,
        queries,
        word2vec=word2vec,
        attract_repel_config=config,
        expansion=expansion,
        neighbours=settings.expansion_neighbours,
        work_dir=work_dir,
        seed=settings.seed,
    )
    members = {
        m.name: {k: v for k, v in dataclasses.asdict(m).items() if k != "name"} for m, _ in family
    }
    fields = {
        "family": "paper",
        "members": members,
        "record": record,
        "word2vec": dataclasses.asdict(word2vec),
        "attract_repel": dataclasses.asdict(config),
    }
    described = "the study's set pairs x methods x directions"
    results = _scored_family(family, queries, settings, out, fields, described, record=record)
    out.write_json(
        "family.json",
        {"word2vec": results["word2vec"], "attract_repel": results["attract_repel"], **record},
    )
    return results


def _chosen_pairs(settings: CorrelateSettings) -> list[tuple[str, str]] | None:
    for text in settings.pairs or []:
        if ":" not in text:
            raise ValueError(f"--pairs: expected X:Y, got {text!r}")
    return [tuple(text.split(":", 1)) for text in settings.pairs] if settings.pairs else None


def run_correlate(
    model: None, dataset: str | Path | None, out_dir: Path, settings: CorrelateSettings
) -> dict:
    """Pearson and Spearman between score columns of one or more tables (``settings.scores``:
    ours and/or extrinsic), with the WinoBias gaps of each embedding's coreference outputs
    (``settings.coref``, ``settings.coref_dir``) joined first. ``model``: None (no model runs);
    ``dataset``: the WinoBias folder or its name under ``settings.datasets_root``."""
    if model is not None:
        raise ValueError("embeddings correlate runs no model: give score tables with --scores")
    if not settings.scores:
        raise ValueError(
            "--scores: give at least one score table (scores.json, results.json or CSV/TSV)"
        )
    columns, table = functools.reduce(merge_tables, map(read_score_table, settings.scores))
    chosen, gaps = _chosen_pairs(settings), None
    outputs = parse_coref_flags(settings.coref or [], settings.coref_dir or None)
    if outputs:
        unknown = sorted(set(outputs) - set(table))
        if unknown:
            raise ValueError(
                f"--coref {unknown}: no such embedding in --scores (it has {sorted(table)})"
            )
        with stage(f"WinoBias gaps of {len(outputs)} coreference outputs", log):
            gaps = winobias_gaps(outputs, dataset, settings)
        columns, table = merge_tables((columns, table), (gaps["columns"], gaps["table"]))
        chosen = chosen if chosen is not None else table2_pairs(columns)
    rows = _correlations(columns, table, chosen, settings)
    results = {
        **results_header("correlate", settings),
        "columns": columns,
        "table": table,
        "correlations": rows,
        "winobias": gaps,
    }
    with RunFolder(out_dir) as out:
        _record_inputs(
            out,
            settings,
            files=[*settings.scores, *outputs.values()],
            winobias=(dataset or "winobias") if outputs else None,
        )
        out.write_json("correlations.json", rows)
        if gaps is not None:
            out.write_json("winobias.json", gaps)
        finish(out, results)
    log.info("%s", report.correlations_markdown(results))
    return results
