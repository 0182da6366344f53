"""Reading JBBQ answers out of OpenAI-compatible replies, chat or completions (the clients are
``bias_hub.builders.shared.api_cache_openai``)."""

from __future__ import annotations

from collections.abc import Sequence

from bias_hub.builders.shared.api_cache_openai import reply_text

__all__ = ["API_KINDS", "choice_logprobs_from_top", "first_token_candidates", "reply_text"]

# --api: the chat-completions endpoint (chat messages) or the completions one (a plain prompt).
API_KINDS = ("chat", "completions")


def first_token_candidates(response: dict) -> list[tuple[str, float]]:
    """``(token, logprob)`` of the first reply token: its ``top_logprobs`` and the token itself.

    Chat replies list them as ``logprobs.content[0]`` (``{"token", "logprob", "top_logprobs":
    [{"token", "logprob"}]}``); completions replies as ``logprobs.tokens[0]``,
    ``logprobs.token_logprobs[0]`` and ``logprobs.top_logprobs[0]`` (``{token: logprob}``).
    An answer without them gives none.
    """
    try:
        logprobs = response["choices"][0]["logprobs"] or {}
        if "content" in logprobs:
            first = logprobs["content"][0]
            listed = list(first.get("top_logprobs") or []) + [first]
            return [(str(c.get("token", "")), float(c["logprob"])) for c in listed]
        top = logprobs.get("top_logprobs") or [{}]
        listed = [(str(token), float(value)) for token, value in (top[0] or {}).items()]
        tokens, values = logprobs.get("tokens") or [], logprobs.get("token_logprobs") or []
        if tokens and values and values[0] is not None:
            listed.append((str(tokens[0]), float(values[0])))
        return listed
    except (KeyError, IndexError, TypeError, AttributeError, ValueError):
        return []


def choice_logprobs_from_top(response: dict, choices: Sequence[str]) -> list[float]:
    """Log-probabilities of ``choices`` as the first reply token, from ``top_logprobs``.

    A choice missing from the top list gets ``-inf`` (the API does not say). Tokens are
    compared without surrounding spaces: a plain prompt's answer often starts with one.
    """
    scores = [float("-inf")] * len(choices)
    for token, logprob in first_token_candidates(response):
        token = token.strip()
        if token in choices:
            j = choices.index(token)
            scores[j] = max(scores[j], logprob)
    return scores
