"""A user's JBBQ copy beside the counts its authors published.

§4.1 of Yanaka et al. (2024, NLP2024) gives 245 templates
(Age 72, Disability 52, Gender 41, Physical 52, Sexual 28) and 8,476 questions (Age 4,696,
Disability 1,344, Gender 652, Physical 1,256, Sexual 528); the authors' README (github.com/
ynklab/JBBQ_data) gives 50,856 questions for the release. A copy that differs is not wrong
(the release grew after the paper; a user may hold a newer one), so the build says how it
differs, as a warning, and carries on.
"""

from __future__ import annotations

from collections import Counter

__all__ = ["PAPER_QUESTIONS", "PAPER_TEMPLATES", "README_QUESTIONS", "comparison_lines"]

# §4.1, in JBBQ_CATEGORIES order.
PAPER_TEMPLATES = {
    "Age": 72,
    "Disability_status": 52,
    "Gender_identity": 41,
    "Physical_appearance": 52,
    "Sexual_orientation": 28,
}
PAPER_QUESTIONS = {
    "Age": 4696,
    "Disability_status": 1344,
    "Gender_identity": 652,
    "Physical_appearance": 1256,
    "Sexual_orientation": 528,
}
README_QUESTIONS = 50856


def _counts(counter: Counter | dict) -> str:
    return ", ".join(f"{category} {counter.get(category, 0):,}" for category in PAPER_TEMPLATES)


def comparison_lines(rows: list[dict]) -> tuple[list[str], bool]:
    """``(lines, same)``: the copy's templates (distinct ``question_index`` per category) and
    questions beside §4.1's and the README's counts; ``same`` when the copy matches either
    publication in total."""
    templates = Counter(
        category for category, _ in {(r["category"], r["question_index"]) for r in rows}
    )
    questions = Counter(r["category"] for r in rows)
    n_templates, n_questions = sum(templates.values()), sum(questions.values())
    lines = [
        f"your copy: {n_templates:,} templates ({_counts(templates)}), {n_questions:,} questions "
        f"({_counts(questions)})",
        f"§4.1 of the paper (NLP2024): {sum(PAPER_TEMPLATES.values()):,} templates ({_counts(PAPER_TEMPLATES)}), "
        f"{sum(PAPER_QUESTIONS.values()):,} questions ({_counts(PAPER_QUESTIONS)})",
        f"the authors' README: {README_QUESTIONS:,} questions",
    ]
    same = (
        dict(questions) == PAPER_QUESTIONS and dict(templates) == PAPER_TEMPLATES
    ) or n_questions == README_QUESTIONS
    return lines, same
