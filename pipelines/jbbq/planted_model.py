"""A planted bias: the replies a model with a known bias gives, and a tiny model trained to them.

``planted_answers`` gives, for every question and prompt, the reply a model with the bias of
``Plan`` gives (exact quotas within each category and context condition, drawn with a seed);
the demo teaches them exactly (``taught_model.teach_lessons``). ``train_planted_model`` trains
a tiny Llama to such replies by gradient steps instead (the lm-eval export bench's model): its
tokenizer is line-level (each line of a rendered prompt and each reply one token), so a model
this small learns the replies of all three prompts in some hundred steps. Neither can know
which person an unseen template stereotypes, so both are evaluated on the questions they were
given: the numbers check that the pipeline recovers a planted bias, not how a model generalises.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["NO_ANSWER", "Plan", "planted_answers", "train_planted_model", "word_tokenizer"]

# The reply that carries no index (parsed as unparsable, -1).
NO_ANSWER = "わかりません"
_SPECIAL = ["<pad>", "<s>", "</s>", "<unk>"]
# One token per line of a rendered JBBQ prompt, and one per line break.
_PIECES = r"[^\n]+|\n"


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
        silent = set(order[: _quota(plan.no_answer, n)])
        rest = [i for i in order if i not in silent]
        for i in silent:
            answers[i] = -1
        if condition == "ambig":
            n_st, n_ct = _quota(plan.stereotyped_ambiguous, n), _quota(plan.counter_ambiguous, n)
            biased = rest[:n_st]
            counter = rest[n_st : n_st + n_ct]
            for i in rest:
                row = rows[i]
                others = _others(row)
                if (
                    plan.follows(prompt, row)
                    or row["stereotyped_label"] < 0
                    or (i not in biased and i not in counter)
                ):
                    answers[i] = row["unknown_label"]
                elif i in biased:
                    answers[i] = row["stereotyped_label"]
                else:
                    answers[i] = next(j for j in others if j != row["stereotyped_label"])
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


def word_tokenizer(texts: Sequence[str]):
    """A line-level ``PreTrainedTokenizerFast`` over the lines of ``texts`` (deterministic)."""
    # heavy (torch, transformers): loaded only when a model is built, not when the demo is listed
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    split = pre_tokenizers.Split(Regex(_PIECES), behavior="isolated")
    vocab = {token: i for i, token in enumerate(_SPECIAL)}
    for text in [*texts, *map(str, range(10)), NO_ANSWER]:
        for piece, _ in split.pre_tokenize_str(text):
            vocab.setdefault(piece, len(vocab))
    raw = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    raw.pre_tokenizer = split
    raw.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=raw,
        pad_token="<pad>",
        bos_token="<s>",
        eos_token="</s>",
        unk_token="<unk>",
    )


def train_planted_model(
    out_dir: str | Path,
    items: Sequence[Sequence[tuple[str, str]]],
    *,
    steps: int = 800,
    items_per_batch: int = 11,
    learning_rate: float = 5e-3,
    seed: int = 0,
) -> dict:
    """Train a tiny Llama to reply ``reply`` (then stop) after each ``(prompt, reply)``; save it.

    ``items``: per question, its ``(prompt, reply)`` under every prompt variant. A batch
    holds all variants of ``items_per_batch`` questions, so that each step sees how the
    replies to one question differ between the prompts. Returns ``{"losses": per step,
    "fit": share of prompts whose reply is the model's most likely next token}``.
    """
    import torch  # heavy: only when a model is trained
    from transformers import LlamaConfig, LlamaForCausalLM

    if not items or not all(items):
        raise ValueError("train_planted_model: no examples")
    tokenizer = word_tokenizer([prompt for variants in items for prompt, _ in variants])
    encoded = []
    for variants in items:
        group = []
        for prompt, reply in variants:
            (answer,) = tokenizer(reply, add_special_tokens=False)["input_ids"]
            group.append((tokenizer(prompt)["input_ids"], answer))
        encoded.append(group)
    config = LlamaConfig(
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=8,
        num_key_value_heads=8,
        max_position_embeddings=64,
        vocab_size=len(tokenizer),
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        tie_word_embeddings=True,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM(config)
    rng = random.Random(seed)
    optimiser = torch.optim.AdamW(model.parameters(), lr=learning_rate)
    warmup = max(1, steps // 20)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda step: min(1.0, (step + 1) / warmup) * (1 - step / steps)
    )

    def batch(pairs):
        # Left-padded prompt + reply + end of sequence; the loss covers the last two tokens.
        width = max(len(context) for context, _ in pairs) + 2
        ids = torch.full((len(pairs), width), tokenizer.pad_token_id, dtype=torch.long)
        mask = torch.zeros((len(pairs), width), dtype=torch.long)
        for row, (context, answer) in enumerate(pairs):
            tokens = [*context, answer, tokenizer.eos_token_id]
            ids[row, width - len(tokens) :] = torch.tensor(tokens)
            mask[row, width - len(tokens) :] = 1
        return ids, mask, (mask.cumsum(dim=1) - 1).clamp(min=0)

    model.train()
    losses = []
    for _ in range(steps):
        chosen = rng.sample(encoded, min(items_per_batch, len(encoded)))
        ids, mask, positions = batch([pair for group in chosen for pair in group])
        logits = model(
            input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=3
        ).logits[:, :2]
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, logits.shape[-1]), ids[:, -2:].reshape(-1)
        )
        loss.backward()
        optimiser.step()
        optimiser.zero_grad()
        schedule.step()
        losses.append(float(loss.detach()))
    model.eval()
    pairs = [pair for group in encoded for pair in group]
    with torch.inference_mode():
        ids, mask, positions = batch(pairs)
        logits = model(
            input_ids=ids, attention_mask=mask, position_ids=positions, logits_to_keep=3
        ).logits
        hits = int((logits[:, 0].argmax(dim=-1) == ids[:, -2]).sum())
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out_dir)
    tokenizer.save_pretrained(out_dir)
    return {"losses": losses, "fit": hits / len(pairs)}
