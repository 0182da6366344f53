"""The LLM swapper: the study's instruction sent to any OpenAI-compatible endpoint.

Requests go through ``bias_hub.builders.shared.api_cache_openai.ChatCompletions``: every reply is
cached on disk keyed by the request (endpoint, model, messages, temperature; never
the key), transient errors and malformed replies are retried with backoff within
``max_retries``, each request waits at most ``timeout`` seconds and ``concurrency``
run at once. ``prefetch`` asks for every sentence the build will swap in parallel;
``swap`` then reads the answers. The API key comes from an environment variable and
is neither logged nor cached.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from bias_hub.builders.shared.api_cache_openai import ChatCompletions, reply_text
from bias_hub.builders.stereoset_gender_swap.swap import normalise_sentence, sentence_gender

__all__ = ["DEFAULT_MODEL", "STUDY_INSTRUCTION", "LLMSwapper"]

# "Output the sentence with only the gender reversed." -- the study's prompt, verbatim.
STUDY_INSTRUCTION = "性別だけを反対にした文章を出力してください。"
DEFAULT_MODEL = "gpt-3.5-turbo-1106"


class LLMSwapper:
    """``swap(sentence) -> reply`` through a chat-completions endpoint, cached."""

    def __init__(
        self,
        cache_dir: Path | str | None = None,
        base_url: str | None = None,
        model: str = DEFAULT_MODEL,
        api_key_env: str = "OPENAI_API_KEY",
        instruction: str = STUDY_INSTRUCTION,
        max_retries: int = 5,
        timeout: float = 60.0,
        concurrency: int = 4,
        backoff: float = 1.0,
        temperature: float = 0.0,
    ) -> None:
        self.client = ChatCompletions(
            model,
            base_url=base_url,
            api_key_env=api_key_env,
            cache_dir=cache_dir,
            service="stereoset_llm_swap",
            timeout=timeout,
            max_retries=max_retries,
            backoff=backoff,
            concurrency=concurrency,
            flag_prefix="--llm-",
        )
        self.base_url = self.client.base_url
        self.model = model
        self.instruction = instruction
        self.temperature = temperature

    @property
    def requests_sent(self) -> int:
        """Requests that got an answer in this run (the cache answers the rest)."""
        return self.client.api.answered

    def _body(self, sentence: str) -> dict:
        messages = [{"role": "user", "content": f"{self.instruction}\n{sentence}"}]
        return {"messages": messages, "temperature": self.temperature}

    def swap_all(self, sentences: Iterable[str], progress: bool = True) -> list[str]:
        """The replies for ``sentences``, asked ``concurrency`` at a time (cached ones not asked)."""
        replies = self.client.complete(
            [self._body(s) for s in sentences], progress=progress, desc="LLM swap"
        )
        return [reply_text(reply).strip() for reply in replies]

    def prefetch(
        self,
        candidates: Iterable,
        lexicon,
        progress: bool = True,
    ) -> None:
        """Ask in parallel for every candidate sentence a build will swap: those of one gender."""
        sentences = [normalise_sentence(c.text) for c in candidates]
        self.swap_all(
            dict.fromkeys(
                s for s in sentences if sentence_gender(s, lexicon) in ("male", "female")
            ),
            progress=progress,
        )

    def swap(self, sentence: str) -> str:
        return self.swap_all([sentence], progress=False)[0]
