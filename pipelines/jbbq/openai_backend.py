"""Reading JBBQ answers out of chat-completions replies (the client is ``bias_hub.builders.shared.api_cache_openai``)."""

from __future__ import annotations

from collections.abc import Sequence

from bias_hub.builders.shared.api_cache_openai import reply_text

__all__ = ["choice_logprobs_from_top", "reply_text"]


def choice_logprobs_from_top(response: dict, choices: Sequence[str]) -> list[float]:
    """Log-probabilities of ``choices`` as the first reply token, from ``top_logprobs``.

    A choice missing from the top list gets ``-inf`` (the API does not say).
    """
    scores = [float("-inf")] * len(choices)
    try:
        first = response["choices"][0]["logprobs"]["content"][0]
    except (KeyError, IndexError, TypeError):
        return scores
    candidates = list(first.get("top_logprobs") or []) + [first]
    for candidate in candidates:
        token = str(candidate.get("token", "")).strip()
        if token in choices:
            j = choices.index(token)
            scores[j] = max(scores[j], float(candidate["logprob"]))
    return scores
