"""Local models through ``transformers``: greedy generation and choice log-likelihoods.

Log-likelihood scoring is the fast path. When every choice (``"0"``, ``"1"``,
``"2"``) is a single token, one forward pass per question gives all three
scores from the logits at the last prompt position, and only that position is
projected onto the vocabulary (``logits_to_keep=1``). The token prefix that
every prompt of a run shares (instruction and few-shot examples) is computed
once and its key/value cache reused by every batch, with explicit position ids
so the result equals scoring each full prompt on its own.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from builders.shared.console import progress as progress_bar
from pipelines.common import ModelOptions, load_model

__all__ = ["HFModel", "common_prefix_length"]

log = logging.getLogger(__name__)


def common_prefix_length(sequences: Sequence[Sequence[int]]) -> int:
    """Length of the token prefix shared by every sequence."""
    if not sequences:
        return 0
    first = sequences[0]
    length = min(len(seq) for seq in sequences)
    for seq in sequences[1:]:
        limit = length
        length = 0
        while length < limit and seq[length] == first[length]:
            length += 1
        if length == 0:
            break
    return length


@dataclass
class HFModel:
    """A causal LM and its tokenizer, with the two JBBQ scoring modes."""

    model: object
    tokenizer: object
    batch_size: int = 16
    prefix_cache: bool = True

    @classmethod
    def load(cls, name: str, options: ModelOptions | None = None, *, batch_size: int = 16,
             prefix_cache: bool = True) -> HFModel:  # fmt: skip
        """A causal LM by Hub id or local folder (any other head is refused before loading)."""
        model, tokenizer = load_model(name, "causal-lm", options)
        return cls(model=model, tokenizer=tokenizer, batch_size=batch_size, prefix_cache=prefix_cache)

    # ---- prompts -------------------------------------------------------------------------

    @property
    def has_chat_template(self) -> bool:
        return bool(getattr(self.tokenizer, "chat_template", None))

    def render_chat(self, messages: list[dict[str, str]]) -> str:
        """The chat template's text for ``messages``, ending where the reply starts."""
        if not self.has_chat_template:
            raise ValueError(
                "--chat yes: the tokenizer of this model has no chat template; "
                "use --chat no (plain prompt) or a model with a chat template"
            )
        try:
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        except Exception as err:  # noqa: BLE001 - templates raise anything (jinja errors)
            if messages[0]["role"] != "system" or "system" not in str(err).lower():
                raise
        # Some templates (Gemma, Mistral) reject a system turn: fold it into the first user turn.
        merged = [dict(m) for m in messages[1:]]
        merged[0]["content"] = messages[0]["content"] + "\n\n" + merged[0]["content"]
        return self.tokenizer.apply_chat_template(merged, tokenize=False, add_generation_prompt=True)

    def encode(self, text: str, chat: bool) -> list[int]:
        # A rendered chat template already holds its special tokens (BOS etc.).
        return list(self.tokenizer(text, add_special_tokens=not chat)["input_ids"])

    def _forward(self, keep: int, **kwargs):
        """The model's outputs, projecting only the last ``keep`` positions onto the vocabulary
        where the model supports ``logits_to_keep``; returns ``(logits of those, outputs)``."""
        if getattr(self, "_keeps_logits", True):
            try:
                outputs = self.model(**kwargs, logits_to_keep=keep)
                return outputs.logits[:, -keep:, :], outputs
            except TypeError as err:  # older or remote-code models
                if "logits_to_keep" not in str(err):
                    raise
                self._keeps_logits = False
        outputs = self.model(**kwargs)
        return outputs.logits[:, -keep:, :], outputs

    @property
    def device(self):
        return next(self.model.parameters()).device

    @property
    def _pad_id(self) -> int:
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        return 0 if pad is None else int(pad)

    # ---- log-likelihood ------------------------------------------------------------------

    def continuation_ids(self, text: str, continuation: str, chat: bool) -> list[int]:
        """The tokens ``continuation`` adds when it follows ``text``.

        Tokenizing the choice on its own can differ from how it is tokenized after the
        prompt (SentencePiece's word-start marker, for one: "0" alone is "▁0" for many
        Llama-family tokenizers, but after a newline it is "0"). Falls back to the
        choice on its own where the prompt's tokens change at the boundary.
        """
        context = self.encode(text, chat)
        whole = self.encode(text + continuation, chat)
        if len(whole) > len(context) and whole[: len(context)] == context:
            return whole[len(context) :]
        return list(self.tokenizer(continuation, add_special_tokens=False)["input_ids"])

    def choice_logprobs(
        self,
        prompts: Sequence[Sequence[int]],
        choices: Sequence[str] | Sequence[Sequence[int]],
        progress: bool = True,
    ) -> np.ndarray:
        """``(n_prompts, n_choices)`` log-probabilities of each choice after each prompt.

        ``choices`` are texts (tokenized on their own) or token ids (see ``continuation_ids``).
        """
        import torch

        if not prompts:
            return np.zeros((0, len(choices)))
        if any(len(p) == 0 for p in prompts):
            raise ValueError("a prompt encodes to no tokens; the model needs at least one token of context")
        choice_ids = [
            self.tokenizer(c, add_special_tokens=False)["input_ids"] if isinstance(c, str) else list(c)
            for c in choices
        ]
        with torch.inference_mode():
            if all(len(ids) == 1 for ids in choice_ids):
                return self._next_token_logprobs(prompts, [ids[0] for ids in choice_ids], progress)
            return self._continuation_logprobs(prompts, choice_ids, progress)

    def _each_batch(self, order: list[int], progress: bool, desc: str, work) -> None:
        """``work(batch)`` over ``order`` in batches of ``batch_size``.

        Out of accelerator memory, the batch size halves (and stays halved) and the
        same batch is tried again, down to one question at a time.
        """
        for _ in progress_bar(self._batches(order, work), desc=desc, total=len(order), unit="q", enabled=progress):
            pass

    def _batches(self, order: list[int], work):
        """Runs the batches; yields once per question done."""
        import torch

        start = 0
        while start < len(order):
            batch = order[start : start + self.batch_size]
            try:
                work(batch)
            except torch.OutOfMemoryError:
                if self.batch_size == 1:
                    raise
                self.batch_size = max(1, self.batch_size // 2)
                if torch.cuda.is_available():
                    torch.cuda.empty_cache()
                log.warning("out of memory: batch size now %d", self.batch_size)
                continue
            start += len(batch)
            yield from batch

    def _left_pad(self, rows: list[Sequence[int]]):
        import torch

        width = max(len(r) for r in rows)
        ids = torch.full((len(rows), width), self._pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), width), dtype=torch.long)
        for i, row in enumerate(rows):
            ids[i, width - len(row) :] = torch.tensor(row, dtype=torch.long)
            mask[i, width - len(row) :] = 1
        return ids.to(self.device), mask.to(self.device)

    def _next_token_logprobs(
        self, prompts: Sequence[Sequence[int]], choice_ids: list[int], progress: bool
    ) -> np.ndarray:
        import torch

        # Keep one token of every prompt out of the shared prefix: its logits are the scores.
        shared = min(common_prefix_length(prompts), min(len(p) for p in prompts) - 1)
        prefix_cache = None
        if self.prefix_cache and shared >= 8:
            prefix = torch.tensor([list(prompts[0][:shared])], dtype=torch.long, device=self.device)
            prefix_cache = self._forward(1, input_ids=prefix, use_cache=True)[1].past_key_values
        else:
            shared = 0
        # Longest first: the first batch shows at once whether memory suffices.
        order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
        out = np.zeros((len(prompts), len(choice_ids)))
        index = torch.tensor(choice_ids, device=self.device)
        def work(batch: list[int]) -> None:
            ids, mask = self._left_pad([prompts[i][shared:] for i in batch])
            kwargs = {"input_ids": ids}
            if prefix_cache is not None:
                cache = copy.deepcopy(prefix_cache)
                cache.batch_repeat_interleave(len(batch))
                kwargs["past_key_values"] = cache
                kwargs["attention_mask"] = torch.cat(
                    [torch.ones((len(batch), shared), dtype=mask.dtype, device=mask.device), mask], dim=1
                )
                # Left padding sits between prefix and suffix: number the real tokens on.
                kwargs["position_ids"] = (shared + mask.cumsum(dim=1) - 1).clamp(min=shared)
            else:
                kwargs["attention_mask"] = mask
                kwargs["position_ids"] = (mask.cumsum(dim=1) - 1).clamp(min=0)
            logits = self._forward(1, **kwargs)[0][:, -1, :].float()
            logprobs = torch.log_softmax(logits, dim=-1)[:, index]
            out[batch] = logprobs.cpu().numpy()

        self._each_batch(order, progress, "loglikelihood", work)
        return out

    def _continuation_logprobs(
        self, prompts: Sequence[Sequence[int]], choice_ids: list[list[int]], progress: bool
    ) -> np.ndarray:
        """Multi-token choices: score prompt + choice for each choice (no prefix reuse)."""
        import torch

        if any(len(ids) == 0 for ids in choice_ids):
            raise ValueError("a choice encodes to no tokens")
        pairs = [(q, c) for q in range(len(prompts)) for c in range(len(choice_ids))]
        order = sorted(range(len(pairs)), key=lambda j: -len(prompts[pairs[j][0]]))
        out = np.zeros((len(prompts), len(choice_ids)))
        def work(batch: list[int]) -> None:
            rows = [list(prompts[pairs[j][0]]) + choice_ids[pairs[j][1]] for j in batch]
            ids, mask = self._left_pad(rows)
            keep = max(len(choice_ids[pairs[j][1]]) for j in batch) + 1
            logits = self._forward(
                keep,
                input_ids=ids,
                attention_mask=mask,
                position_ids=(mask.cumsum(dim=1) - 1).clamp(min=0),
            )[0].float()
            logprobs = torch.log_softmax(logits, dim=-1)
            for row, j in enumerate(batch):
                q, c = pairs[j]
                cont = choice_ids[c]
                # Logits at position t predict token t + 1; the kept window ends at the last token.
                positions = range(keep - 1 - len(cont), keep - 1)
                out[q, c] = float(sum(logprobs[row, p, t] for p, t in zip(positions, cont, strict=True)))

        self._each_batch(order, progress, "loglikelihood", work)
        return out

    # ---- generation ----------------------------------------------------------------------

    def generate(
        self, prompts: Sequence[Sequence[int]], max_new_tokens: int, progress: bool = True
    ) -> list[str]:
        """Greedy continuations (decoded, special tokens dropped) of each prompt."""
        import torch

        order = sorted(range(len(prompts)), key=lambda i: -len(prompts[i]))
        replies: list[str] = [""] * len(prompts)

        def work(batch: list[int]) -> None:
            ids, mask = self._left_pad([prompts[i] for i in batch])
            generated = self.model.generate(
                input_ids=ids,
                attention_mask=mask,
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=self._pad_id,
            )  # stop tokens come from the model's generation_config (chat models list several)
            new = generated[:, ids.shape[1] :]
            for row, i in enumerate(batch):
                replies[i] = self.tokenizer.decode(new[row], skip_special_tokens=True)

        with torch.inference_mode():
            self._each_batch(order, progress, "generate", work)
        return replies

