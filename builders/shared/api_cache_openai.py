"""OpenAI-compatible completions through the official ``openai`` client, cached (``api_cache``).

``ChatCompletions`` (``{base_url}/chat/completions``: the server applies the chat template) and
``TextCompletions`` (``{base_url}/completions``: a plain prompt a base model continues, as a
paper that prompts base models ran them), alike in key, retries, cache and concurrency.
Completions send several prompts per request where the endpoint takes a list (vLLM, the OpenAI
API), match the choices back by ``index`` and cache each prompt as if asked alone; an endpoint
that refuses a list is asked one prompt at a time from then on. The reply is read as the JSON
the server sent; one without ``choices[0].message`` / ``.text`` is retried like a 5xx.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import logging
import urllib.parse
from collections.abc import Sequence
from pathlib import Path

from bias_hub.builders.shared.api_cache import (
    CachedAPI,
    MalformedReply,
    ResponseCache,
    api_key,
    default_cache_dir,
    retry_after_seconds,
)

__all__ = [
    "OPENAI_URL",
    "ChatCompletions",
    "TextCompletions",
    "chat_reply",
    "completion_reply",
    "reply_text",
    "split_completions",
]

log = logging.getLogger(__name__)

OPENAI_URL = "https://api.openai.com/v1"
# HTTP statuses the openai client itself would retry: timeout, lock conflict, rate limit.
_RETRIED_STATUS = {408, 409, 429}


def _first_choice(text: str, field: str, kind: type) -> tuple[dict, dict]:
    """The reply in ``text`` and its ``choices[0]``, which must hold ``field`` of type ``kind``;
    ``MalformedReply`` otherwise."""
    try:
        data = json.loads(text)
    except ValueError:
        raise MalformedReply(f"the reply is not JSON: {text[:80]!r}") from None
    choices = data.get("choices") if isinstance(data, dict) else None
    first = choices[0] if isinstance(choices, list) and choices else None
    if not isinstance(first, dict) or not isinstance(first.get(field), kind):
        raise MalformedReply(f"the reply holds no choices[0].{field}: {text[:80]!r}")
    return data, first


def chat_reply(text: str) -> dict:
    """The chat-completions reply in ``text``; ``MalformedReply`` when it is not one."""
    data, choice = _first_choice(text, "message", dict)
    content = choice["message"].get("content")
    if content is not None and not isinstance(content, str):
        raise MalformedReply(
            f"choices[0].message.content is {type(content).__name__}, expected text"
        )
    return data


def completion_reply(text: str) -> dict:
    """The completions reply in ``text``; ``MalformedReply`` when it is not one."""
    return _first_choice(text, "text", str)[0]


def _client_error(err: BaseException) -> bool:
    import openai  # imported already: the request that raised went through it

    return isinstance(err, openai.OpenAIError)


def _retryable(err: BaseException) -> bool:
    import openai

    if isinstance(err, openai.APIStatusError):
        return err.status_code in _RETRIED_STATUS or err.status_code >= 500
    return isinstance(err, openai.APIConnectionError)  # timeouts included


def _wait_hint(err: BaseException) -> float | None:
    response = getattr(err, "response", None)
    return retry_after_seconds(getattr(response, "headers", None))


class ChatCompletions:
    """``complete(bodies) -> replies`` against ``{base_url}/chat/completions``.

    ``bodies`` are chat-completions request fields without ``model`` (added here).
    The key is read from ``api_key_env``; a local server needs none, the OpenAI API does.
    """

    # The endpoint under the base URL, and how its reply is checked.
    path = "chat/completions"
    check_reply = staticmethod(chat_reply)

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        cache_dir: str | Path | None = None,
        service: str = "openai",
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 1.0,
        concurrency: int = 4,
        prompts_per_request: int = 1,
        flag_prefix: str = "--",
    ) -> None:
        if importlib.util.find_spec("openai") is None:  # the `api` extra, named before any work
            raise ModuleNotFoundError("No module named 'openai'", name="openai")
        if timeout <= 0:
            raise ValueError(f"{flag_prefix}timeout must be > 0 seconds, got {timeout}")
        self.model = model
        self.base_url = (base_url or OPENAI_URL).rstrip("/")
        key = api_key(
            api_key_env,
            flag=f"{flag_prefix}api-key-env",
            needed_for=self.base_url if "api.openai.com" in self.base_url else None,
        )
        cache = ResponseCache(
            cache_dir or default_cache_dir(service), flag=f"{flag_prefix}cache-dir"
        )
        # A query in the base URL (a proxy's tenant, Azure's api-version) goes with every request:
        # the client joins the endpoint's path onto the URL, so it would land after the query.
        address, _, query = self.base_url.partition("?")
        self._client_options = {
            "base_url": address.rstrip("/"),
            "default_query": dict(urllib.parse.parse_qsl(query, keep_blank_values=True)) or None,
            "api_key": key or "not-needed",
            # The client's own retries are off for this client only: CachedAPI counts one
            # budget for transient errors and malformed replies alike.
            "max_retries": 0,
            "timeout": timeout,
        }
        self.api = CachedAPI(
            f"{address.rstrip('/')}/{self.path}" + (f"?{query}" if query else ""),
            self._send,
            cache,
            retryable=_retryable,
            client_errors=_client_error,
            wait_hint=_wait_hint,
            max_retries=max_retries,
            backoff=backoff,
            concurrency=concurrency,
            batch_size=prompts_per_request,
            flag_prefix=flag_prefix,
        )

    @functools.cached_property
    def _client(self):
        """The official client, made for the first request: a run answered from the cache never
        imports ``openai`` (2 s of CPU here)."""
        import openai

        return openai.OpenAI(**self._client_options)

    def _create(self, body: dict):
        return self._client.chat.completions.with_raw_response.create(**body)

    def _send(self, bodies: list[dict]) -> list[dict]:
        return [self.check_reply(self._create(body).http_response.text) for body in bodies]

    def complete(
        self, bodies: Sequence[dict], *, progress: bool = True, desc: str = "api"
    ) -> list[dict]:
        return self.api.answer(
            [{"model": self.model, **body} for body in bodies], progress_bar=progress, desc=desc
        )


class TextCompletions(ChatCompletions):
    """``complete(bodies) -> replies`` against ``{base_url}/completions``: ``bodies`` hold a
    ``prompt`` the model continues as it is, without a chat template, ``prompts_per_request`` of
    them in one request (everything else as ``ChatCompletions``)."""

    path = "completions"
    check_reply = staticmethod(completion_reply)
    # Set on the client once its endpoint has refused a list: one prompt a request from then on.
    _one_at_a_time = False

    def _create(self, body: dict):
        return self._client.completions.with_raw_response.create(**body)

    def _send(self, bodies: list[dict]) -> list[dict]:
        shared = [{k: v for k, v in body.items() if k != "prompt"} for body in bodies]
        if len(bodies) == 1 or self._one_at_a_time or any(s != shared[0] for s in shared):
            return super()._send(bodies)
        import openai

        try:
            response = self._create({**shared[0], "prompt": [b["prompt"] for b in bodies]})
            return split_completions(response.http_response.text, len(bodies))
        except (openai.BadRequestError, openai.UnprocessableEntityError, MalformedReply) as err:
            # Retried as it is, the list would fail the same way every time.
            if not self._one_at_a_time:
                self._one_at_a_time = True
                log.warning(
                    "%s does not answer a list of prompts (%s); asking one prompt per request",
                    self.api.endpoint,
                    (str(err).strip().splitlines() or [type(err).__name__])[0][:120],
                )
        return super()._send(bodies)


def split_completions(text: str, count: int) -> list[dict]:
    """The completions reply in ``text`` to a list of ``count`` prompts, as one reply per prompt
    (in the list's order, each with its own choice as ``choices[0]``, ``index`` 0, and without the
    request's ``usage``, which counts them all); ``MalformedReply`` unless there is exactly one
    choice per prompt."""
    data = completion_reply(text)
    choices = data["choices"]
    if not all(isinstance(c, dict) and isinstance(c.get("text"), str) for c in choices):
        raise MalformedReply(f"a choice without text in the reply to {count} prompts")
    indices = sorted(str(choice.get("index")) for choice in choices)
    if indices != sorted(str(i) for i in range(count)):
        raise MalformedReply(
            f"{len(choices)} choices, indices {indices[:5]}, for a list of {count} prompts"
        )
    rest = {key: value for key, value in data.items() if key not in ("choices", "usage")}
    ordered = sorted(choices, key=lambda choice: int(choice["index"]))
    return [{**rest, "choices": [{**choice, "index": 0}]} for choice in ordered]


def reply_text(response: dict) -> str:
    """The text a model replied: the assistant message of a chat-completions reply, the
    continuation of a completions reply ('' when the server sent none)."""
    choice = response["choices"][0]
    if "message" in choice:
        return choice["message"].get("content") or ""
    return choice.get("text") or ""
