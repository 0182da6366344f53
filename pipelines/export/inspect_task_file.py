"""bias-hub's JBBQ and BBQ as Inspect AI tasks: the ``tasks.py`` that ``bias-hub export inspect``
writes beside ``scoring.py``, ``prompts.json``, ``data/`` and ``bbq_bias/``. Never imported by
bias-hub (Inspect is not one of its dependencies): the export copies this file's text.

    inspect eval tasks.py@jbbq -T prompt=basic -T shots=4 --model hf/MODEL
    inspect eval tasks.py@bbq --model openai/MODEL

``jbbq``: the paper's prompt laid out as the export's preset says (one plain user message; the
few-shot examples inside it, as ``jbbq evaluate --chat no`` sends them), the reply generated and
read by the preset's answer reader. ``bbq``: BBQ's question with its three answers listed
(ours), the reply read as BBQ's analysis script reads answer texts. Both score every sample with
``bbq_bias``: accuracy (overall, ambiguous, disambiguated), s_DIS, s_AMB and the error rate.
"""

import scoring
from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState, generate


def _bbq_bias(key: str):
    @metric(name=key)
    def named() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            value = scoring.bbq_bias_scores([s.score.metadata for s in scores])[key]
            return float("nan") if value is None else float(value)

        return compute

    return named()


@scorer(metrics=[_bbq_bias(key) for key in scoring.SCORES])
def bbq_bias():
    """Each reply read by its question's answer reader; bbq_bias over all samples."""

    async def score(state: TaskState, target: Target) -> Score:
        item = scoring.score_item(state.metadata, state.output.completion)
        return Score(
            value=float(item["prediction"] == item["label"]),
            answer=str(item["prediction"]),
            explanation=f"read by rule {item['rule']}",
            metadata=item,
        )

    return score


def _samples(questions: list[dict], text) -> MemoryDataset:
    return MemoryDataset(
        [
            Sample(
                input=text(q),
                target=str(q["label"]),
                id=f"{q['category']}-{q['example_id']}",
                metadata=q,
            )
            for q in questions
        ]
    )


@task
def jbbq(prompt: str = "basic", shots: int = 0) -> Task:
    """JBBQ with one of the exported prompts at one of the exported few-shot counts."""
    shape = scoring.variant(f"{prompt}_{shots}shot")
    return Task(
        dataset=_samples(scoring.questions("jbbq"), lambda q: scoring.prompt_text(q, shape)),
        solver=generate(),
        scorer=bbq_bias(),
        config=GenerateConfig(**shape["generate"]),
    )


@task
def bbq() -> Task:
    """BBQ, 0-shot, the answer texts listed in the question."""
    shape = scoring.variant("bbq")
    return Task(
        dataset=_samples(scoring.questions("bbq"), lambda q: scoring.prompt_text(q, shape)),
        solver=generate(),
        scorer=bbq_bias(),
        config=GenerateConfig(**shape["generate"]),
    )
