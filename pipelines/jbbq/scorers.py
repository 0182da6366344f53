"""Backends behind one call: ``scorer.score(prompt, rows, shots, scoring) -> list[dict]``.

Each returned dict holds ``prediction`` (the chosen index, ``-1`` when a
generated reply could not be read) plus what it was derived from: ``reply`` and
``rule`` (generate: the reply and the rule of ``answer_reading`` that read it) or
``logprobs`` (loglikelihood, one per choice).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from bias_hub.pipelines.common.answer_reading import (
    DEFAULT_READER,
    UNPARSABLE,
    is_settled,
    read_row_reply,
)
from bias_hub.pipelines.jbbq.openai_backend import API_KINDS, choice_logprobs_from_top, reply_text
from bias_hub.pipelines.jbbq.prompting import PromptSpec

__all__ = ["SCORING_MODES", "Scorer", "HFScorer", "APIScorer", "read_replies"]

SCORING_MODES = ("generate", "loglikelihood")
N_CHOICES = 3


class Scorer(Protocol):
    description: str

    def render_example(self, prompt: PromptSpec, row: Mapping, shots: Sequence[Mapping]) -> str: ...

    def score(
        self, prompt: PromptSpec, rows: Sequence[Mapping], shots: Sequence[Mapping], scoring: str
    ) -> list[dict]: ...


def _choices(prompt: PromptSpec) -> list[str]:
    return [prompt.assistant_text(i) for i in range(N_CHOICES)]


def read_replies(rows: Sequence[Mapping], replies: Sequence[str], reader: str) -> list[dict]:
    """Each reply read against its row's options (``answer_reading``): ``prediction``, ``reply``, ``rule``."""
    out = []
    for row, reply in zip(rows, replies, strict=True):
        reading = read_row_reply(row, reply, reader)
        out.append({"prediction": reading.index, "reply": reply, "rule": reading.rule})
    return out


def _settled(reader: str):
    """The stopping test of generation under ``reader`` (None: the reply runs to its end)."""
    return None if reader != "llm-jp-eval" else lambda reply: is_settled(reply, reader)


def _argmax(logprobs: Sequence[float]) -> int:
    values = np.asarray(logprobs, dtype=float)
    if not np.isfinite(values).any():
        return UNPARSABLE
    return int(np.argmax(values))


@dataclass(eq=False)
class HFScorer:
    """A local ``transformers`` model (see ``hf_backend.HFModel``)."""

    model: Any
    chat: str = "auto"
    max_new_tokens: int = 8
    progress: bool = True
    reader: str = DEFAULT_READER

    def __post_init__(self) -> None:
        if self.chat not in ("auto", "yes", "no"):
            raise ValueError(f"--chat must be auto, yes or no, got {self.chat!r}")
        if self.chat == "yes" and not self.model.has_chat_template:
            raise ValueError(
                "--chat yes: the tokenizer of this model has no chat template; "
                "use --chat no (plain prompt) or --chat auto"
            )
        self.use_chat = self.model.has_chat_template if self.chat == "auto" else self.chat == "yes"
        self.description = f"hf ({'chat template' if self.use_chat else 'plain prompt'})"

    def prompt_texts(
        self, prompt: PromptSpec, rows: Sequence[Mapping], shots: Sequence[Mapping]
    ) -> list[str]:
        if self.use_chat:
            return [self.model.render_chat(prompt.messages(row, shots)) for row in rows]
        return [prompt.plain(row, shots) for row in rows]

    def render_example(self, prompt: PromptSpec, row: Mapping, shots: Sequence[Mapping]) -> str:
        """Exactly the text the model is given for ``row``."""
        return self.prompt_texts(prompt, [row], shots)[0]

    def score(
        self, prompt: PromptSpec, rows: Sequence[Mapping], shots: Sequence[Mapping], scoring: str
    ) -> list[dict]:
        texts = self.prompt_texts(prompt, rows, shots)
        ids = self.model.encode_all(texts, self.use_chat)
        if scoring == "loglikelihood":
            # Every prompt ends the same way, so the first one shows how the choices tokenize.
            choices = (
                [self.model.continuation_ids(texts[0], c, self.use_chat) for c in _choices(prompt)]
                if texts
                else []
            )
            logprobs = self.model.choice_logprobs(ids, choices, progress=self.progress)
            return [{"prediction": _argmax(lp), "logprobs": lp.tolist()} for lp in logprobs]
        # A reply ends once nothing that follows can change how it reads.
        replies = self.model.generate(
            ids, self.max_new_tokens, progress=self.progress, settled=_settled(self.reader)
        )
        return read_replies(rows, replies, self.reader)


@dataclass(eq=False)
class APIScorer:
    """An OpenAI-compatible endpoint (``bias_hub.builders.shared.api_cache_openai``): chat
    completions (``api="chat"``: the prompt as chat messages) or completions (``api="completions"``:
    the plain prompt, as ``--chat no`` lays it out for a local model, continued as it is).

    ``loglikelihood`` asks for one token with its top log-probabilities and reads the
    choices' log-probabilities from them; a reply whose top tokens hold none of the
    choices counts as unparsable.
    """

    client: Any
    max_new_tokens: int = 8
    top_logprobs: int = 20
    progress: bool = True
    max_tokens_field: str = "max_tokens"
    api: str = "chat"
    reader: str = DEFAULT_READER

    def __post_init__(self) -> None:
        if self.max_tokens_field not in ("max_tokens", "max_completion_tokens"):
            raise ValueError(
                f"--max-tokens-field must be max_tokens or max_completion_tokens, got {self.max_tokens_field!r}"
            )
        if self.api not in API_KINDS:
            raise ValueError(f"--api must be one of {', '.join(API_KINDS)}, got {self.api!r}")
        self._prefetched: dict[str, dict] = {}  # request body (as JSON) -> reply, from prefetch
        kind = "chat completions" if self.api == "chat" else "completions, plain prompt"
        self.description = f"openai-compatible API at {self.client.base_url} ({kind})"

    def render_example(self, prompt: PromptSpec, row: Mapping, shots: Sequence[Mapping]) -> str:
        """What is sent for ``row``: the plain prompt, or the chat messages, one ``[role]`` block each."""
        if self.api == "completions":
            return prompt.plain(row, shots)
        return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in prompt.messages(row, shots))

    def _bodies(
        self, prompt: PromptSpec, rows: Sequence[Mapping], shots: Sequence[Mapping], scoring: str
    ) -> list[dict]:
        fields = {"temperature": 0, self.max_tokens_field: self.max_new_tokens}
        if scoring == "loglikelihood":  # one token, and the log-probabilities of the top ones:
            # chat: a flag and a count; completions: the count itself (the legacy field)
            fields[self.max_tokens_field] = 1
            fields["logprobs"] = True if self.api == "chat" else self.top_logprobs
            if self.api == "chat":
                fields["top_logprobs"] = self.top_logprobs
        if self.api == "completions":
            return [{"prompt": prompt.plain(row, shots), **fields} for row in rows]
        return [{"messages": prompt.messages(row, shots), **fields} for row in rows]

    def prefetch(
        self,
        runs: Sequence[tuple[PromptSpec, Sequence[Mapping]]],
        rows: Sequence[Mapping],
        scoring: str,
    ) -> None:
        """Ask for the replies of every run, ``(prompt, shots)`` each, at once: no run then waits
        for the last requests of the one before, and ``score`` finds its replies here."""
        bodies = [
            body for prompt, shots in runs for body in self._bodies(prompt, rows, shots, scoring)
        ]
        responses = self.client.complete(bodies, progress=self.progress, desc="api")
        self._prefetched = {_key(b): r for b, r in zip(bodies, responses, strict=True)}

    def score(
        self, prompt: PromptSpec, rows: Sequence[Mapping], shots: Sequence[Mapping], scoring: str
    ) -> list[dict]:
        bodies = self._bodies(prompt, rows, shots, scoring)
        if all(_key(body) in self._prefetched for body in bodies):
            responses = [self._prefetched[_key(body)] for body in bodies]
        else:
            desc = f"{prompt.name} api"
            responses = self.client.complete(bodies, progress=self.progress, desc=desc)
        if scoring == "loglikelihood":
            choices = _choices(prompt)
            logprobs = [choice_logprobs_from_top(response, choices) for response in responses]
            return [{"prediction": _argmax(lp), "logprobs": lp} for lp in logprobs]
        return read_replies(rows, [reply_text(r) for r in responses], self.reader)


def _key(body: dict) -> str:
    return json.dumps(body, sort_keys=True, ensure_ascii=False)
