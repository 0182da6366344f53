"""The LLM swapper against a local chat-completions server on 127.0.0.1."""

from __future__ import annotations

import json
import select
import socket
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bias_hub.builders.shared.api_cache import APIFailure
from bias_hub.builders.stereoset_gender_swap.lexicon import load_lexicon
from bias_hub.builders.stereoset_gender_swap.llm_swap import STUDY_INSTRUCTION, LLMSwapper
from bias_hub.builders.stereoset_gender_swap.pairs import Candidate, build_pairs

# What the fake model answers for each sentence (after the instruction line).
REPLIES = {
    "He is tall.": "She is tall.",
    "She fixes cars.": "「He fixes cars」",  # quoted, no period: the clean-up handles both
    "His dad cooks.": "",  # empty reply
    "He is kind.": "She is cruel.",  # changes the meaning
    "The man sings.": "The woman sings.",  # the server fails once before answering
}


class _Server:
    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.failures_left = {"The man sings.": 1}
        # sentence -> raw bodies sent (with status 200) before the real reply
        self.malformed: dict[str, list[bytes]] = {}
        self.delays: dict[str, list[float]] = {}  # sentence -> seconds to wait, one per attempt
        self.delay_all = 0.0
        # Set when the test ends: a request still waiting out its delay (one the client gave up
        # on) ends without an answer instead of answering after the test changed REPLIES.
        self.closing = threading.Event()
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                sentence = body["messages"][-1]["content"].split("\n", 1)[1]
                with server.lock:
                    server.requests.append(body)
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                    delay = (
                        server.delays[sentence].pop(0)
                        if server.delays.get(sentence)
                        else server.delay_all
                    )
                try:
                    if self._gone_before(delay):
                        return
                    self._answer(body, sentence)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client timed out and closed the connection
                finally:
                    with server.lock:
                        server.in_flight -= 1

            def _gone_before(self, delay: float) -> bool:
                """Wait out ``delay``; True when the test ends first or the client hangs up (a
                request the client gave up on is in flight no longer, so it leaves the count)."""
                end = time.monotonic() + delay
                while (left := end - time.monotonic()) > 0:
                    if server.closing.wait(min(left, 0.02)):
                        return True
                    readable, _, _ = select.select([self.connection], [], [], 0)
                    if readable and not self.connection.recv(1, socket.MSG_PEEK):
                        return True
                return False

            def _answer(self, body: dict, sentence: str) -> None:
                if server.malformed.get(sentence):
                    data = server.malformed[sentence].pop(0)
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                if server.failures_left.get(sentence, 0) > 0:
                    server.failures_left[sentence] -= 1
                    self._send(500, {"error": {"message": "try again"}})
                    return
                reply = {
                    "id": "x",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "finish_reason": "stop",
                            "message": {"role": "assistant", "content": REPLIES[sentence]},
                        }
                    ],
                }
                self._send(200, reply)

            def _send(self, status: int, payload: dict) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def server() -> Iterator[_Server]:
    fake = _Server()
    thread = threading.Thread(target=fake.httpd.serve_forever, daemon=True)
    thread.start()
    yield fake
    fake.closing.set()
    fake.httpd.shutdown()
    fake.httpd.server_close()


def _candidates() -> list[Candidate]:
    return [
        Candidate(f"{i}:stereotype", "gender", "t", "stereotype", text)
        for i, text in enumerate(REPLIES)
    ]


def test_llm_swaps_are_filtered_counted_and_cached(server: _Server, tmp_path: Path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    lexicon = load_lexicon()
    cache = tmp_path / "replies"
    swapper = LLMSwapper(
        cache, base_url=server.url, model="local-model", max_retries=2, backoff=0.01
    )
    build = build_pairs(_candidates(), lexicon, swapper.swap, "llm", progress=False)

    assert [(r["male_sentence"], r["female_sentence"]) for r in build.rows] == [
        ("He is tall.", "She is tall."),
        ("He fixes cars.", "She fixes cars."),
        ("The man sings.", "The woman sings."),
    ]
    assert dict(build.rejected) == {"empty_reply": 1, "differs_beyond_gender_words": 1}
    # Five sentences, one 500 retried by the client: six requests.
    assert len(server.requests) == 6
    first = server.requests[0]
    assert first["model"] == "local-model"
    assert first["messages"] == [{"role": "user", "content": f"{STUDY_INSTRUCTION}\nHe is tall."}]
    entries = [path.read_text(encoding="utf-8") for path in cache.rglob("*.json")]
    assert len(entries) == 5  # one file per sentence asked
    assert all(
        "not-needed" not in entry and "Authorization" not in entry for entry in entries
    )  # no key

    again = LLMSwapper(cache, base_url=server.url, model="local-model", max_retries=2)
    rebuilt = build_pairs(_candidates(), lexicon, again.swap, "llm", progress=False)
    assert again.requests_sent == 0 and len(server.requests) == 6
    assert rebuilt.rows == build.rows


def test_a_killed_writer_or_a_damaged_entry_costs_at_most_that_entry(
    server: _Server, tmp_path: Path
):
    cache = tmp_path / "replies"
    swapper = LLMSwapper(cache, base_url=server.url, model="local-model")
    swapper.swap("He is tall.")
    swapper.swap("He is kind.")
    tall, kind = sorted(
        cache.rglob("*.json"), key=lambda p: "tall" in p.read_text(encoding="utf-8")
    )[::-1]
    # A writer killed mid-write leaves only its temporary file; the entry itself is whole or absent.
    (tall.parent / f".{tall.name}.x1y2z3").write_text('{"endpoint": "http://', encoding="utf-8")
    # An entry damaged by hand (or a full disk) is asked again and rewritten.
    kind.write_text(kind.read_text(encoding="utf-8")[:40], encoding="utf-8")
    again = LLMSwapper(cache, base_url=server.url, model="local-model")
    assert again.swap("He is tall.") == "She is tall." and again.requests_sent == 0
    assert again.swap("He is kind.") == "She is cruel." and again.requests_sent == 1
    third = LLMSwapper(cache, base_url=server.url, model="local-model")
    third.swap("He is tall.")
    third.swap("He is kind.")
    assert third.requests_sent == 0 and len(server.requests) == 3


def test_default_endpoint_needs_a_key(tmp_path: Path, monkeypatch):
    monkeypatch.delenv("MY_KEY", raising=False)
    with pytest.raises(ValueError, match="MY_KEY"):
        LLMSwapper(tmp_path / "cache", api_key_env="MY_KEY")
    assert not (tmp_path / "cache").exists()


def test_builder_adds_the_llm_config_with_an_endpoint(server: _Server, tmp_path: Path):
    import datasets

    from bias_hub.pipelines.cli import main

    # the llm config swaps the context sentences, as the study did
    rows = [
        {
            "type": "intersentence",
            "target": "t",
            "bias_type": "gender",
            "context": context,
            "stereotype": "Her cat purrs.",
            "anti-stereotype": "Dogs bark.",
            "unrelated": "Fish swim.",
        }
        for context in ("He is tall.", "He is kind.", "The man sings.")
    ]
    source = tmp_path / "test.jsonl"
    source.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    argv = [
        "build",
        "stereoset_gender_swap",
        "--source",
        str(source),
        "--out-root",
        str(tmp_path),
        "--llm-base-url",
        server.url,
        "--llm-model",
        "local-model",
        "--llm-cache-dir",
        str(tmp_path / "cache"),
        "--llm-concurrency",
        "2",
        "--llm-timeout",
        "30",
    ]
    assert main(argv) == 0
    folder = tmp_path / "stereoset_gender_swap"
    llm = datasets.load_dataset(str(folder), "llm", split="test")
    assert llm["female_sentence"] == ["She is tall.", "The woman sings."]
    assert set(llm["swap_method"]) == {"llm"}
    rule = datasets.load_dataset(str(folder), "contexts", split="test")
    assert len(rule) == 3
    card = (folder / "README.md").read_text(encoding="utf-8")
    assert "`local-model`" in card and "| differs_beyond_gender_words |" in card


def test_an_endpoint_that_keeps_failing_is_a_clear_error(
    server: _Server, tmp_path: Path, monkeypatch
):
    monkeypatch.setattr(
        sys, "argv", ["bias-hub", "build", "stereoset_gender_swap", "--llm-base-url", server.url]
    )
    server.failures_left["He is tall."] = 10
    swapper = LLMSwapper(
        tmp_path / "c", base_url=server.url, model="local-model", max_retries=1, backoff=0.01
    )
    with pytest.raises(APIFailure) as err:
        swapper.swap("He is tall.")
    message = str(err.value)
    assert message.startswith(
        f"{server.url}/chat/completions still failing after 2 attempt(s): InternalServerError (HTTP 500)"
    )
    assert "0 of 1 requests answered" in message
    assert message.endswith(
        f"resumes without paying twice: bias-hub build stereoset_gender_swap --llm-base-url {server.url}"
    )
    assert len(server.requests) == 2  # the request and one retry


@pytest.mark.parametrize(
    "reply",
    [b"<html>bad gateway</html>", b'{"id": "x", "choices": []}', b'{"choices": [{"text": "x"}]}'],
)
def test_malformed_replies_are_retried_within_the_budget(
    server: _Server, tmp_path: Path, reply: bytes
):
    server.malformed["He is tall."] = [reply, reply]
    swapper = LLMSwapper(
        tmp_path / "c", base_url=server.url, model="local-model", max_retries=2, backoff=0.01
    )
    assert swapper.swap("He is tall.") == "She is tall."
    assert len(server.requests) == 3  # two malformed replies, then the answer

    server.malformed["He is kind."] = [reply] * 3
    with pytest.raises(
        APIFailure,
        match=r"still failing after 3 attempt\(s\): MalformedReply.*0 of 1 requests answered",
    ):
        swapper.swap("He is kind.")
    assert len(server.requests) == 6


def test_timeout_and_concurrency_bound_a_slow_endpoint(server: _Server, tmp_path: Path):
    lexicon = load_lexicon()
    sentences = [f"He is tall ({i})." for i in range(8)]
    REPLIES.update({s: s.replace("He", "She") for s in sentences})
    try:
        server.delay_all = 0.3
        server.delays[sentences[0]] = [10.0]  # the first attempt stalls; the retry is answered
        swapper = LLMSwapper(
            tmp_path / "c",
            base_url=server.url,
            model="local-model",
            timeout=1.0,
            concurrency=4,
            backoff=0.01,
        )
        candidates = [
            Candidate(f"{i}:stereotype", "gender", "t", "stereotype", s)
            for i, s in enumerate(sentences)
        ]
        started = time.monotonic()
        swapper.prefetch(candidates, lexicon, progress=False)
        seconds = time.monotonic() - started
        assert len(server.requests) == 9 and swapper.requests_sent == 8
        assert 2 <= server.max_in_flight <= 4
        # One at a time with a 10 s stall this would take > 12 s.
        assert seconds < 8
        build = build_pairs(candidates, lexicon, swapper.swap, "llm", progress=False)
        assert (
            len(build.rows) == 8 and len(server.requests) == 9
        )  # swap() reads the prefetched replies
    finally:
        for s in sentences:
            REPLIES.pop(s)


def test_an_unwritable_cache_folder_fails_before_any_request(server: _Server, tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    with pytest.raises(
        ValueError, match=r"--llm-cache-dir .*file/c: the API response cache cannot be written"
    ):
        LLMSwapper(blocker / "c", base_url=server.url, model="local-model")
    assert server.requests == []
