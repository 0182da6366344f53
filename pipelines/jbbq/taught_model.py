"""A tiny Llama taught to answer JBBQ questions by a rule: ``bias-hub jbbq tiny-model --teach``.

The study's offline variant needs a model whose every answer is known, so that its scores can
be worked out by hand and a broken scorer shows. ``build_for_dataset`` makes a tiny random Llama
whose tokenizer knows the prompts, fits the output-layer rows its replies use (``teach_answers``)
so that, prompted exactly as ``jbbq evaluate`` prompts it under each preset named, it answers as
``planted_reply`` says, then checks every taught answer through ``HFScorer`` before saving.

The planted rule, by prompt (BBQ's scores of it follow by hand, whatever the questions):

- ``basic``: the stereotyped person in ambiguous contexts, the correct answer in disambiguated
  ones: accuracy 0 (ambiguous) and 1 (disambiguated), s_AMB = 1, accuracy gap 0;
- ``unknown``: "unknown" in ambiguous contexts, the stereotyped person in disambiguated ones:
  accuracy 1 (ambiguous), s_DIS = 1, accuracy gap -1, s_AMB undefined (no non-unknown answer);
- ``paraphrase`` (and any other): no index at all ("わかりません"): every reply unread.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from bias_hub.builders.shared.errors import UserError
from bias_hub.pipelines.common import RunFolder, dataset_folder
from bias_hub.pipelines.common.answer_reading import UNPARSABLE
from bias_hub.pipelines.common.provenance import mark_stand_in

if TYPE_CHECKING:
    from bias_hub.pipelines.jbbq.prompting import PromptSpec
    from bias_hub.pipelines.jbbq.settings import Settings

__all__ = [
    "MARGIN",
    "NO_INDEX",
    "Lesson",
    "Taught",
    "Teaching",
    "build_for_dataset",
    "planted_reply",
    "taught_index",
    "taught_reply",
    "teach_answers",
    "teach_lessons",
]

# The reply that carries no index (read as unparsable, -1).
NO_INDEX = "わかりません"
# Logits by which each taught token leads the others at its state (``teach_answers``): room
# for the ~1e-5 by which a state moves between batchings of the same prompt.
MARGIN = 10.0


def planted_reply(prompt: str, row: Mapping) -> str:
    """The answer the taught model gives to ``row`` under the prompt named ``prompt`` (see the
    module's docstring): an index as text, or ``NO_INDEX``."""
    ambiguous = row["context_condition"] == "ambig"
    if prompt == "basic":
        return str(row["stereotyped_label"] if ambiguous else row["label"])
    if prompt == "unknown":
        return str(row["unknown_label"] if ambiguous else row["stereotyped_label"])
    return NO_INDEX


def taught_reply(target: str) -> str:
    """The whole reply taught for ``target``: the target, then a blank line, which ends an
    answer for the llm-jp-eval reader. The no-index reply is taught whole too, so that a stop
    string meets the line break a model that answers would write, instead of running to the
    token limit on random tokens."""
    return target + "\n\n"


def taught_index(target: str) -> int:
    """The index a reply taught for ``target`` reads as (-1 for the no-index reply)."""
    return UNPARSABLE if target == NO_INDEX else int(target)


class Teaching(NamedTuple):
    """How well ``teach_answers`` fitted: the states it fitted, how many of them still give
    another top token than the wanted one, and the smallest margin (wanted logit minus the
    highest other; negative where one is wrong)."""

    states: int
    wrong: int
    margin: float


def teach_answers(
    hf,
    texts: Sequence[str],
    replies: Sequence[str],
    groups: Sequence[object],
    margin: float = MARGIN,
) -> Teaching:
    """Fit the rows of the model's output layer that ``replies`` use, so that greedy decoding
    continues each of ``texts`` with its reply: the state after the text gives the reply's
    first token, the state after each of its tokens the next one (teacher-forced). The body
    and the other rows of the output layer keep their random weights.

    The states are read where the generation path reads them: each group of ``groups`` (one
    per ``HFScorer.score`` call) tokenized by ``encode_all`` and computed after its own shared
    prefix's key/value cache. The rows are the least-squares solution that gives each state
    its wanted token ``margin`` above the highest other token's logit (the others taught
    ``margin`` below it): with fewer states than the hidden size, exact.

    Why not gradient steps on cross entropy over the whole layer: the llm-jp-eval layout's
    prompt ends with a line break ("### 応答:" and "\\n"), and with random weights the state
    after it lies close to the state after a reply's own "1\\n", which must give a second
    line break instead of a digit (0.24 apart at a norm of 23, at the small shape). 300 Adam
    steps left 50 of 228 such states wrong, and the model answered most questions with an
    empty line that no reader reads.
    """
    import torch

    model, tokenizer = hf.model, hf.tokenizer
    head = model.get_output_embeddings()
    if getattr(head, "bias", None) is not None:
        raise ValueError("teach_answers: an output layer with a bias is not handled")
    if head.weight is model.get_input_embeddings().weight:  # tied (tiny): untie first
        head.weight = torch.nn.Parameter(head.weight.detach().clone())
        model.config.tie_word_embeddings = False
    reply_ids = [tokenizer(r, add_special_tokens=False)["input_ids"] for r in replies]
    states, wanted = [], []
    # What the output layer reads: its input, at each row's last position.
    hook = head.register_forward_hook(lambda _m, args, _o: states.append(args[0][:, -1].float()))
    try:
        with torch.inference_mode():
            for group in dict.fromkeys(groups):
                members = [i for i, g in enumerate(groups) if g == group]
                prompts = hf.encode_all([texts[i] for i in members], chat=False)
                rows = []
                for prompt, i in zip(prompts, members, strict=True):
                    for t, token in enumerate(reply_ids[i]):
                        rows.append(list(prompt) + reply_ids[i][:t])
                        wanted.append(token)
                before = len(states)
                shared, cache = hf._shared_prefix(rows)
                del states[before:]  # the prefix's own pass: no row's state
                for start in range(0, len(rows), 16):
                    kwargs = hf._batch_inputs(rows[start : start + 16], shared, cache, 0)
                    model(**kwargs, logits_to_keep=1)
    finally:
        hook.remove()
    states = torch.cat(states).double()
    wanted = torch.tensor(wanted)
    taught = sorted(set(wanted.tolist()))
    weight = head.weight.detach().double()
    others = torch.ones(weight.shape[0], dtype=torch.bool)
    others[taught] = False
    rival = (states @ weight[others].T).max(dim=1).values
    column = {token: c for c, token in enumerate(taught)}
    goal = (rival - margin)[:, None].repeat(1, len(taught))
    goal[torch.arange(len(wanted)), [column[t] for t in wanted.tolist()]] = rival + margin
    rows = torch.linalg.lstsq(states, goal, driver="gelsd").solution.T
    with torch.no_grad():
        head.weight[taught] = rows.to(head.weight.dtype)
        logits = states @ head.weight.detach().double().T
        top = logits.gather(1, wanted[:, None])[:, 0]
        logits[torch.arange(len(wanted)), wanted] = -float("inf")
        margins = top - logits.max(dim=1).values
    return Teaching(len(wanted), int((margins <= 0).sum()), float(margins.min()))


class Lesson(NamedTuple):
    """The questions one ``jbbq evaluate`` run asks under one prompt and shot count (``rows``,
    ``shots``, as ``settings`` asks them), and the reply taught for each row (``targets``: an
    index as text, or ``NO_INDEX``)."""

    settings: Settings
    prompt: PromptSpec
    rows: list[dict]
    shots: list[dict]
    targets: list[str]


class Taught(NamedTuple):
    """A model taught its lessons (``teach_lessons``): the model and tokenizer (in memory),
    the least-squares fit, and how many of the ``questions`` it answered otherwise than taught
    when asked as ``jbbq evaluate`` asks them (``wrong``)."""

    model: object
    tokenizer: object
    teaching: Teaching
    wrong: int
    questions: int

    def misses(self) -> str:
        """The check's finding, for the error that refuses a model that misses some."""
        return (
            f"answers {self.wrong} of {self.questions} questions otherwise than taught "
            f"({self.teaching.wrong} of {self.teaching.states} states unfitted)"
        )


def teach_lessons(lessons: Sequence[Lesson], *, seed: int = 0, config: str = "taught") -> Taught:
    """A tiny Llama of shape ``config`` whose tokenizer knows the lessons' prompts and replies,
    taught every lesson's replies (``teach_answers``), then asked every question through
    ``HFScorer`` under the lesson's settings: the check that it answers as taught. A shape fits
    exactly as many reply tokens (two per reply) as its width."""
    from bias_hub.pipelines.jbbq.hf_backend import HFModel
    from bias_hub.pipelines.jbbq.random_model import build_tiny_model
    from bias_hub.pipelines.jbbq.scorers import HFScorer

    texts, targets, groups = [], [], []
    for number, lesson in enumerate(lessons):
        # The plain prompt, as HFScorer gives it (the answers checked below prove it).
        texts += [lesson.prompt.plain(row, lesson.shots) for row in lesson.rows]
        targets += lesson.targets
        groups += [number] * len(lesson.rows)
    replies = [taught_reply(target) for target in targets]
    model, tokenizer = build_tiny_model(None, texts + replies, config=config, seed=seed, save=False)
    hf = HFModel(model=model, tokenizer=tokenizer)
    teaching = teach_answers(hf, texts, replies, groups)
    answered = []
    for lesson in lessons:
        scorer = HFScorer(
            hf,
            chat=lesson.settings.chat,
            max_new_tokens=lesson.settings.max_new_tokens,
            progress=False,
            reader=lesson.settings.answer_reader,
        )
        scored = scorer.score(lesson.prompt, lesson.rows, lesson.shots, "generate")
        answered += [item["prediction"] for item in scored]
    wrong = sum(a != taught_index(t) for a, t in zip(answered, targets, strict=True))
    return Taught(model, tokenizer, teaching, wrong, len(targets))


def _lessons(source: Path, presets: Sequence[str], limit: int | None, seed: int) -> list[Lesson]:
    """A lesson of ``planted_reply``'s answers for every prompt x shot count ``jbbq evaluate
    --preset P --limit L --seed S`` asks, for each preset ``P``."""
    from bias_hub.pipelines.jbbq.prompting import load_prompt
    from bias_hub.pipelines.jbbq.run import load_questions
    from bias_hub.pipelines.jbbq.settings import with_preset

    lessons = []
    for name in presets:
        settings = with_preset(name, limit=limit, seed=seed)
        if settings.scoring != "generate" or settings.chat != "no":
            raise ValueError(
                f"--teach {name}: only presets that generate replies to plain prompts are taught"
            )
        rows, shots, _ = load_questions(source, settings)
        for prompt in settings.prompts:
            targets = [planted_reply(prompt, row) for row in rows]
            for k in settings.shots:
                lessons.append(
                    Lesson(settings, load_prompt(prompt, settings.layout), rows, shots[:k], targets)
                )
    return lessons


def build_for_dataset(
    out_dir: str | Path,
    dataset: str | Path | None = None,
    *,
    datasets_root: str | Path | None = None,
    seed: int = 0,
    teach: Sequence[str] = (),
    limit: int | None = None,
) -> Path:
    """``bias-hub jbbq tiny-model``: a tiny Llama whose tokenizer knows the prompts and the
    questions of a JBBQ-format dataset (default: ``jbbq`` under ``datasets_root``), written whole
    into ``out_dir``. With ``teach`` (presets of ``jbbq evaluate``) and ``limit``, it answers
    every question those runs ask as ``planted_reply`` says (refused, naming how many it misses,
    when the tiny shape cannot hold them); without, its weights are random (plumbing only)."""
    from bias_hub.pipelines.common.locations import load_dataset_split
    from bias_hub.pipelines.jbbq.prompting import PROMPT_NAMES, load_prompt
    from bias_hub.pipelines.jbbq.random_model import build_tiny_model

    folder = RunFolder(out_dir)
    with folder:
        source = dataset_folder(dataset or "jbbq", datasets_root)
        folder.record_inputs(
            datasets=[(source, "all")],
            settings={"seed": seed, "teach": list(teach), "limit": limit},
        )
        lessons = _lessons(source, teach, limit, seed)
        if lessons:
            taught = teach_lessons(lessons, seed=seed)
            model, tokenizer = taught.model, taught.tokenizer
            if taught.wrong:
                raise UserError(
                    f"jbbq tiny-model: the taught model {taught.misses()}: its output layer "
                    "cannot hold them all; teach fewer (--limit)"
                )
        else:
            rows = load_dataset_split(source, "all", "all")
            texts = [load_prompt(name).system for name in PROMPT_NAMES]
            texts += [load_prompt("basic").plain(row) for row in rows]
            model, tokenizer = build_tiny_model(
                folder.staging, texts, config="tiny", seed=seed, save=False
            )
        model.save_pretrained(folder.staging)
        tokenizer.save_pretrained(folder.staging)
        mark_stand_in(
            folder.staging,
            f"a tiny Llama taught to answer {taught.questions} questions by a planted rule"
            if lessons
            else "a tiny random Llama (its answers mean nothing)",
        )
    return folder.target
