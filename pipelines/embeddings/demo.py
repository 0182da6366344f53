"""Demo part: WEAT 6/7/8 and RNSB (both orientations) on the GoogleNews subset with intervals,
bias-hub's ATTRACT-REPEL strength family, WEAT vs RNSB across it; Japanese WEAT on chiVe.

The study's own 17-member family needs a corpus to train Word2Vec on (``embeddings
control --corpus``) and its WinoBias correlation a coreference model per member; neither
fits a one-minute offline demo."""

from __future__ import annotations

from pathlib import Path

ORDER = 50
TESTS = ["weat6_gender_terms", "weat7", "weat8"]
# WEAT 8 loses "Einstein" and "NASA" (2 of 8 science words) in the GoogleNews subset even in
# lower case: allow that 25% loss rather than drop the test; the report lists it.
MAX_OOV_SHARE = 0.25


def run_demo(out_dir: Path, datasets_root: Path | None = None) -> dict:
    from pipelines.common import RunFolder
    from pipelines.embeddings import report
    from pipelines.embeddings.control import AttractRepelConfig, make_family
    from pipelines.embeddings.run import ScoreSettings
    from pipelines.embeddings.scoring import load_queries, prepare, score
    from pipelines.embeddings.vectors import load_googlenews_subset

    settings = ScoreSettings(datasets_root=datasets_root, max_oov_share=MAX_OOV_SHARE, progress=False)
    options = settings.score_options()
    queries = load_queries("en", TESTS, datasets_root)
    vectors = load_googlenews_subset()
    config = AttractRepelConfig(seed=0)
    constraint_queries = [prepare(query, vectors)[0] for query in queries]
    family = make_family(vectors, [(q.target_sets, q.attribute_sets) for q in constraint_queries], config=config,
                         progress=False)  # fmt: skip
    rows = []
    for _, member_vectors in family:
        rows += score(member_vectors, queries, **options)
    names = load_queries("en", ["weat6"], datasets_root)[0]
    try:
        score(vectors, [names], ["weat"], **options)
        names_note = "- WEAT 6 with first names could be scored on this embedding."
    except ValueError as err:
        names_note = f"- Why the WEAT 6 variant: the original WEAT 6 (first names) cannot be scored here -- {err}"
    with RunFolder(out_dir) as out:
        japanese = japanese_section(out.sub("chive"), datasets_root, options)
        written = report.write_family(out, rows, family, config, vectors, settings, extra=f"{names_note}\n\n{japanese}")
    base = [row for row in rows if row["embedding"] == "original"]
    summary = "\n\n".join(
        [
            f"GoogleNews subset ({len(vectors):,} words x {vectors.dim}), {len(family)} bias-controlled members.",
            report.scores_markdown(base),
            "WEAT vs RNSB across the family:",
            written["correlations"],
            japanese,
        ]
    )
    return {"title": "Word-embedding bias (WEAT, RNSB)", "summary": summary, "report": "report.md"}


def japanese_section(out, datasets_root: Path | None, options: dict) -> str:
    """WEAT and RNSB of the Japanese WEAT 6/7/8 on chiVe (ja-ginza 5.3.0), written into ``out``."""
    from pipelines.embeddings import report
    from pipelines.embeddings.scoring import load_queries, score
    from pipelines.embeddings.vectors import load_chive

    queries = load_queries("ja", ["weat6", "weat7", "weat8"], datasets_root)
    words = [w for q in queries for s in [*q.target_sets.values(), *q.attribute_sets.values()] for w in s]
    vectors = load_chive(words)
    rows = score(vectors, queries, **options)
    report.write_scores(out, rows, vectors, title="Japanese WEAT 6/7/8 on chiVe")
    return "\n\n".join(
        [
            "## Japanese WEAT 6/7/8 on chiVe (ja-ginza 5.3.0)",
            f"{vectors.note}. The notes list, per test, the words that share one vector "
            "(their associations are tied).",
            report.scores_markdown(rows),
        ]
    )
