"""bias-hub's JBBQ and BBQ as Inspect AI tasks.

Installed (``pip install 'bias-hub[inspect]'``), Inspect finds them through the package's
``inspect_ai`` entry point, with no export step; the questions come from the datasets built
under bias-hub's data root:

    inspect eval bias_hub/jbbq -T prompt=basic -T shots=4 --model hf/MODEL
    inspect eval bias_hub/bbq --model openai/MODEL

``-T preset=NAME``, ``-T limit=N``, ``-T split=NAME`` and ``-T dataset=DIR`` choose as
``bias-hub export inspect`` does. That command copies this file as ``tasks.py`` beside
``scoring.py``, ``prompts.json``, ``data/`` and ``bbq_bias/``; there the tasks read those files
and need nothing of bias-hub (``inspect eval tasks.py@jbbq -T prompt=basic -T shots=4``).

``jbbq``: the paper's prompt laid out as the preset says (one plain user message; the few-shot
examples inside it, as ``jbbq evaluate --chat no`` sends them), the reply generated and read by
the preset's answer reader. ``bbq``: BBQ's question with its three answers listed (ours), the
reply read as BBQ's analysis script reads answer texts. Both score every sample with
``bbq_bias``, whose scores Inspect's summary shows under the module's own names.
"""

from pathlib import Path

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import GenerateConfig
from inspect_ai.scorer import Metric, SampleScore, Score, Target, metric, scorer
from inspect_ai.solver import TaskState, generate

# An exported folder holds prompts.json beside this file; the installed package does not.
EXPORTED = (Path(__file__).resolve().parent / "prompts.json").is_file()
if EXPORTED:
    import scoring
else:
    from bias_hub.pipelines.export import inspect_scoring as scoring


def _bbq_bias(key: str):
    @metric(name=key)
    def named() -> Metric:
        def compute(scores: list[SampleScore]) -> float:
            if not scores:
                return float("nan")  # Inspect asks before any sample is scored: nothing to say yet
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


def _task(name: str, variant: str, **options) -> Task:
    """The task over ``name``'s questions in the prompt ``variant``: from the exported files,
    else built from the data root with ``options`` (what ``bias-hub export inspect`` takes)."""
    given = {key: value for key, value in options.items() if value is not None}
    if EXPORTED:
        if set(given) - {"prompts", "shots"}:
            raise ValueError(
                f"{', '.join(sorted(set(given) - {'prompts', 'shots'}))}: fixed when this folder was "
                "exported (tasks.json says how); export it again to change them"
            )
        shape, questions = scoring.variant(variant), scoring.questions(name)
    else:
        from bias_hub.pipelines.export.inspect_tasks import live_task
        from bias_hub.pipelines.export.settings import Settings

        shape, questions = live_task(name, Settings(**given))
    return Task(
        dataset=MemoryDataset(
            [
                Sample(
                    input=scoring.prompt_text(q, shape),
                    target=str(q["label"]),
                    id=f"{q['category']}-{q['example_id']}",
                    metadata=q,
                )
                for q in questions
            ]
        ),
        solver=generate(),
        scorer=bbq_bias(),
        config=GenerateConfig(**shape["generate"]),
    )


@task
def jbbq(
    prompt: str = "basic",
    shots: int = 0,
    preset: str | None = None,
    limit: int | None = None,
    split: str | None = None,
    dataset: str | None = None,
) -> Task:
    """JBBQ with one of the paper's prompts at one few-shot count."""
    return _task(
        "jbbq",
        f"{prompt}_{int(shots)}shot",
        prompts=[prompt],
        shots=[int(shots)],
        preset=preset,
        limit=limit,
        split=split,
        jbbq=dataset,
    )


@task
def bbq(limit: int | None = None, split: str | None = None, dataset: str | None = None) -> Task:
    """BBQ, 0-shot, the answer texts listed in the question."""
    return _task("bbq", "bbq", limit=limit, split=split, bbq=dataset)
