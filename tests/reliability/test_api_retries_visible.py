"""Retries against a paid API are said and counted: a line on the console when they start, a
summary at the end and, in results.json, the requests sent, retried (by HTTP status), the cache
hits and the cache folder. The counts are checked against the test server's own log."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from test_jbbq_openai_faults import FakeChatServer, _args, api_cache, write_fixture_dataset

from bias_hub.builders.shared.api_cache import CachedAPI, MalformedReply, ResponseCache
from bias_hub.pipelines import cli

__all__ = ["api_cache"]  # the fixture, used by every test here


def _failing(key: str, attempt: int):
    """The first attempt of every third request fails: 503 for odd keys, else 429."""
    number = int(key, 16)
    if attempt == 0 and number % 3 == 0:
        return 500 if number % 2 else 429
    return "ok"


@pytest.mark.slow  # a whole API run against a failing server
def test_retries_are_said_when_they_start_summed_up_at_the_end_and_recorded(
    tmp_path: Path, capsys
) -> None:
    dataset = write_fixture_dataset(tmp_path / "datasets" / "jbbq")
    out = tmp_path / "out"
    with FakeChatServer() as server:
        server.plan = _failing
        code = cli.main(_args(server, dataset, out, "--scoring", "generate", "--concurrency", "1"))
        err = capsys.readouterr().err
        attempts = Counter(server.attempts)
        # The same command again: every answer from the cache, nothing sent, nothing retried.
        again = cli.main(_args(server, dataset, tmp_path / "again", "--scoring", "generate"))
        assert again == 0 and server.attempts == attempts
    assert code == 0, err
    # From the server's log: every request asked until answered once.
    sent = sum(attempts.values())
    failed = Counter(
        "HTTP 500" if int(key, 16) % 2 else "HTTP 429" for key in attempts if int(key, 16) % 3 == 0
    )
    assert sum(failed.values()) == sent - len(attempts) > 0
    usage = json.loads((out / "results.json").read_text(encoding="utf-8"))["api_usage"]
    assert usage["sent"] == sent and usage["retried"] == sum(failed.values())
    assert usage["retried_by_cause"] == dict(failed)
    assert usage["answered"] == len(attempts) and usage["cache_hits"] == 0
    assert Path(usage["cache_dir"]).is_dir()
    assert "a request failed: " in err and "it is sent again" in err
    assert f"retried {sum(failed.values())} of {sent} requests: " in err
    assert "cache hits 0" in err
    reused = json.loads((tmp_path / "again" / "results.json").read_text())["api_usage"]
    assert reused["sent"] == reused["retried"] == 0 and reused["cache_hits"] == len(attempts)


def test_the_client_counts_retries_by_cause(tmp_path: Path) -> None:
    replies = iter(
        [MalformedReply("not JSON"), _Status(503), _Status(429), ["a"], _Status(503), ["b"], ["c"]]
    )

    def send(bodies):
        reply = next(replies)
        if isinstance(reply, Exception):
            raise reply
        return reply

    api = CachedAPI(
        "http://x/v1", send, ResponseCache(tmp_path), retryable=lambda e: True, sleep=lambda s: None
    )
    assert api.answer([{"n": 1}, {"n": 2}, {"n": 3}], progress_bar=False) == ["a", "b", "c"]
    used = api.usage()
    # 7 requests for 3 answers: 4 sent again, 2 after a 503, one after a 429, one malformed.
    assert used["sent"] == 7 and used["retried"] == 4 and used["answered"] == 3
    assert used["retried_by_cause"] == {"HTTP 503": 2, "malformed reply": 1, "HTTP 429": 1}
    assert api.summary().startswith(
        "http://x/v1: retried 4 of 7 requests: 2 × HTTP 503, 1 × malformed reply, 1 × HTTP 429;"
    )


class _Status(Exception):
    def __init__(self, status: int) -> None:
        super().__init__(f"status {status}")
        self.status_code = status
