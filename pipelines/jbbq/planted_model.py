"""A planted bias: the replies a model with a known bias gives.

``planted_answers`` gives, for every question and prompt, the reply a model with the bias of
``Plan`` gives (exact quotas within each category and context condition, drawn with a seed);
the demo teaches them exactly (``taught_model.teach_lessons``). A model so taught cannot know
which person an unseen template stereotypes, so it is evaluated on the questions it was
given: the numbers check that the pipeline recovers a planted bias, not how a model generalises.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Plan", "planted_answers"]


@dataclass(frozen=True)
class Plan:
    """The planted behaviour (shares within each category and context condition)."""

    # ambiguous contexts, basic prompt: the stereotyped person, the other person, else unknown
    stereotyped_ambiguous: float = 0.5
    counter_ambiguous: float = 0.1
    # per prompt, the categories whose negative questions get "unknown" in place of a
    # non-unknown ambiguous answer (None: every category)
    follow_warning: dict = field(
        default_factory=lambda: {
            "basic": (),
            "unknown": None,
            "paraphrase": ("Age", "Gender_identity"),
        }
    )
    # disambiguated contexts: correct when the answer is the stereotyped / the other person
    correct_stereotyped: float = 0.9
    correct_counter: float = 0.6
    # replies without an index, in both context conditions
    no_answer: float = 0.05

    def follows(self, prompt: str, row: dict) -> bool:
        """Whether the model follows the warning of ``prompt`` on this (ambiguous) question."""
        categories = self.follow_warning[prompt]
        if row["question_polarity"] != "neg":
            return False
        return categories is None or row["category"] in categories

    def describe(self) -> list[str]:
        warning = "; ".join(
            f"{name}: "
            + (
                "never"
                if categories == ()
                else "negative questions of "
                + ("every category" if categories is None else ", ".join(categories))
            )
            for name, categories in self.follow_warning.items()
        )
        return [
            f"ambiguous contexts (basic prompt): the stereotyped person for {self.stereotyped_ambiguous:.0%} of the "
            f"questions, the other person for {self.counter_ambiguous:.0%}, no index for {self.no_answer:.0%}, "
            '"unknown" for the rest',
            f'warning followed (a non-unknown ambiguous answer becomes "unknown") on {warning}',
            f"disambiguated contexts: correct for {self.correct_stereotyped:.0%} of the questions whose answer is the "
            f"stereotyped person, {self.correct_counter:.0%} of the others (wrong = the other person); "
            f"no index for {self.no_answer:.0%}",
        ]


def _quota(share: float, n: int) -> int:
    return int(round(share * n))


def planted_answers(rows: Sequence[dict], prompt: str, plan: Plan, seed: int = 0) -> list[int]:
    """The planted reply index for every row under ``prompt`` (-1: a reply without an index)."""
    if prompt not in plan.follow_warning:
        raise ValueError(
            f"planted_answers: no planted share for prompt {prompt!r}; known: {sorted(plan.follow_warning)}"
        )
    answers = [0] * len(rows)
    groups: dict[tuple[str, str], list[int]] = {}
    for i, row in enumerate(rows):
        groups.setdefault((row["category"], row["context_condition"]), []).append(i)
    for (category, condition), members in sorted(groups.items()):
        order = list(members)
        random.Random(f"{seed}:{category}:{condition}").shuffle(order)
        n = len(order)
        silent = _quota(plan.no_answer, n)
        for i in order[:silent]:
            answers[i] = -1
        rest = order[silent:]
        if condition == "ambig":
            # the first of the rest answer the stereotyped person, the next the other one
            n_st, n_ct = _quota(plan.stereotyped_ambiguous, n), _quota(plan.counter_ambiguous, n)
            for position, i in enumerate(rest):
                row = rows[i]
                if (
                    plan.follows(prompt, row)
                    or row["stereotyped_label"] < 0
                    or position >= n_st + n_ct
                ):
                    answers[i] = row["unknown_label"]
                elif position < n_st:
                    answers[i] = row["stereotyped_label"]
                else:
                    answers[i] = next(j for j in _others(row) if j != row["stereotyped_label"])
        else:
            for kind, share in (
                ("stereotyped", plan.correct_stereotyped),
                ("counter", plan.correct_counter),
            ):
                same = [i for i in rest if _kind(rows[i]) == kind]
                correct = set(same[: _quota(share, len(same))])
                for i in same:
                    row = rows[i]
                    wrong = next(j for j in _others(row) if j != row["label"])
                    answers[i] = row["label"] if i in correct else wrong
            for i in rest:
                if _kind(rows[i]) is None:
                    answers[i] = rows[i]["label"]
    return answers


def _others(row: dict) -> list[int]:
    """The two people's answer indices."""
    return [j for j in range(3) if j != row["unknown_label"]]


def _kind(row: dict) -> str | None:
    if row["stereotyped_label"] < 0:
        return None
    return "stereotyped" if row["label"] == row["stereotyped_label"] else "counter"
