"""The shared API helper on its own: cache entries, concurrent writers, retry budget and waits."""

from __future__ import annotations

import email.utils
import json
import multiprocessing
import os
import time
from pathlib import Path

import pytest

from bias_hub.builders.shared.api_cache import (
    APIFailure,
    CachedAPI,
    MalformedReply,
    ResponseCache,
    retry_after_seconds,
)


class Transient(Exception):
    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


class Refused(Exception):
    status_code = 401


def _api(
    tmp_path: Path, replies: list, **options
) -> tuple[CachedAPI, list[list[dict]], list[float]]:
    """A CachedAPI whose ``send`` plays ``replies`` in order (an exception is raised)."""
    sent: list[list[dict]] = []
    waits: list[float] = []

    def send(bodies: list[dict]) -> list:
        sent.append(bodies)
        reply = replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return reply

    api = CachedAPI(
        "http://127.0.0.1:9/v1/echo",
        send,
        ResponseCache(tmp_path / "cache"),
        retryable=lambda err: isinstance(err, Transient),
        client_errors=(Transient, Refused),
        wait_hint=lambda err: getattr(err, "wait", None),
        sleep=waits.append,
        **options,
    )
    return api, sent, waits


def test_transient_errors_and_malformed_replies_share_one_budget(tmp_path: Path) -> None:
    replies = [Transient("503"), MalformedReply("not JSON"), Transient("429", wait=7.0), [{"a": 1}]]
    api, sent, waits = _api(tmp_path, replies, max_retries=3, backoff=0.5)
    assert api.answer([{"q": 1}], progress_bar=False) == [{"a": 1}]
    assert len(sent) == 4 and api.attempts == 4 and api.answered == 1
    # Doubling from 0.5 s, except where the server said how long to wait.
    assert waits == [0.5, 1.0, 7.0]


def test_the_server_wait_is_capped_and_the_budget_ends_the_request(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr("sys.argv", ["bias-hub", "jbbq", "evaluate", "--model", "m"])
    api, sent, waits = _api(
        tmp_path,
        [Transient("429", wait=3600.0), MalformedReply("no choices")],
        max_retries=1,
        max_backoff=30.0,
    )
    with pytest.raises(APIFailure) as err:
        api.answer([{"q": 1}, {"q": 2}], progress_bar=False)
    assert waits == [30.0] and len(sent) == 2
    assert str(err.value) == (
        "http://127.0.0.1:9/v1/echo still failing after 2 attempt(s): MalformedReply: no choices. "
        f"Stopped with 0 of 2 requests answered; the answers are cached in {tmp_path / 'cache'}, so running "
        "the same command again resumes without paying twice: bias-hub jbbq evaluate --model m"
    )


def test_a_refusal_is_not_retried(tmp_path: Path) -> None:
    api, sent, waits = _api(tmp_path, [Refused("bad key")], max_retries=5)
    with pytest.raises(
        APIFailure,
        match=r"refused a request \(Refused \(HTTP 401\): bad key\); this is not retried",
    ):
        api.answer([{"q": 1}], progress_bar=False)
    assert len(sent) == 1 and waits == []


def test_a_bug_is_not_dressed_up_as_an_api_failure(tmp_path: Path) -> None:
    api, sent, _ = _api(tmp_path, [KeyError("choices")], max_retries=5)
    with pytest.raises(KeyError, match="choices"):
        api.answer([{"q": 1}], progress_bar=False)
    assert len(sent) == 1


def test_cached_and_repeated_requests_are_not_sent(tmp_path: Path) -> None:
    api, sent, _ = _api(tmp_path, [[{"a": 1}], [{"a": 2}]])
    assert api.answer([{"q": 1}, {"q": 2}, {"q": 1}], progress_bar=False) == [
        {"a": 1},
        {"a": 2},
        {"a": 1},
    ]
    assert sent == [[{"q": 1}], [{"q": 2}]]
    again, sent_again, _ = _api(tmp_path, [])
    assert again.answer([{"q": 2}, {"q": 1}], progress_bar=False) == [{"a": 2}, {"a": 1}]
    assert sent_again == [] and again.from_cache == 2


def test_batches_carry_several_items_and_a_short_answer_is_malformed(tmp_path: Path) -> None:
    api, sent, _ = _api(
        tmp_path, [["x"], ["x", "y"], ["z"]], batch_size=2, max_retries=1, backoff=0
    )
    assert api.answer([{"t": "a"}, {"t": "b"}, {"t": "c"}], progress_bar=False) == ["x", "y", "z"]
    assert sent == [[{"t": "a"}, {"t": "b"}], [{"t": "a"}, {"t": "b"}], [{"t": "c"}]]


def test_entries_hold_endpoint_request_and_response_and_a_mismatch_is_asked_again(
    tmp_path: Path,
) -> None:
    cache = ResponseCache(tmp_path / "c")
    path = cache.put("http://x/v1", {"q": 1}, {"a": 1})
    assert path.parent.name == path.stem[:2]
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "endpoint": "http://x/v1",
        "request": {"q": 1},
        "response": {"a": 1},
    }
    assert cache.key("http://x/v1", {"q": 1}) != cache.key(
        "http://y/v1", {"q": 1}
    )  # the endpoint is in the key
    # A file copied under the wrong name (or damaged) is not trusted.
    other = cache.path("http://x/v1", {"q": 2})
    other.parent.mkdir(parents=True, exist_ok=True)
    other.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    assert cache.get("http://x/v1", {"q": 2}) is None
    assert cache.get("http://x/v1", {"q": 1}) == {"a": 1}


def test_stale_temporary_files_of_killed_writers_are_removed(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "c")
    path = cache.put("e", {"q": 1}, "r")
    old = path.parent / f".{path.name}.abc123"
    fresh = path.parent / f".{path.name}.def456"
    old.write_text('{"endp', encoding="utf-8")
    fresh.write_text('{"endp', encoding="utf-8")
    hours_ago = time.time() - 2 * 3600
    os.utime(old, (hours_ago, hours_ago))
    ResponseCache(tmp_path / "c")
    assert not old.exists() and fresh.exists()  # a fresh one may belong to a live writer
    assert cache.get("e", {"q": 1}) == "r"


def _writer(root: str, worker: int) -> None:
    cache = ResponseCache(root)
    for round_ in range(30):
        for item in range(10):
            cache.put(
                "e",
                {"item": item},
                {"text": f"answer {item}", "pad": "x" * 20000, "by": worker, "round": round_},
            )


def test_concurrent_writers_never_leave_half_an_entry(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_writer, args=(str(tmp_path / "c"), w)) for w in range(4)]
    for worker in workers:
        worker.start()
    cache = ResponseCache(tmp_path / "c")
    seen = 0
    while any(worker.is_alive() for worker in workers):
        for item in range(10):
            entry = cache.get("e", {"item": item})
            if entry is not None:
                assert entry["text"] == f"answer {item}" and len(entry["pad"]) == 20000
                seen += 1
    for worker in workers:
        worker.join(timeout=60)
        assert worker.exitcode == 0
    assert seen > 0
    assert sorted(p.name for p in (tmp_path / "c").rglob(".*")) == []  # no temporary file left
    assert len(list((tmp_path / "c").rglob("*.json"))) == 10


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after": "2"}) == 2.0
    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    in_ten = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 8 <= retry_after_seconds({"retry-after": in_ten}) <= 10
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None and retry_after_seconds(None) is None


def test_bad_settings_name_the_flag(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="--llm-concurrency must be >= 1, got 0"):
        CachedAPI(
            "e",
            lambda b: b,
            ResponseCache(tmp_path / "c"),
            retryable=bool,
            concurrency=0,
            flag_prefix="--llm-",
        )
