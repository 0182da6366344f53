"""The OpenAI-compatible backend against a local chat-completions server on 127.0.0.1.

The fake server answers every question with the index of the "unknown" choice
(判断できない), so on the fixture (8 ambiguous + 8 disambiguated test questions)
the run must score accuracy 1 on ambiguous and 0 on disambiguated contexts.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from jbbq_fixtures import write_fixture_dataset

from bias_hub.pipelines import cli

REPO_ROOT = Path(__file__).resolve().parents[2]
METRICS_DIR = REPO_ROOT / "metrics"
N_TEST_QUESTIONS = 16  # fixture: 2 categories x 2 test templates x 4 rows


# 200 replies that are not a chat completion: not JSON, and JSON of the wrong shape.
MALFORMED = {
    "not-json": b"<html>upstream error</html>",
    "no-choices": b'{"id": "x", "object": "chat.completion"}',
}


class FakeChatServer:
    """``POST /v1/chat/completions``; ``plan(key, attempt)`` picks each reply.

    Actions: ``"ok"``, an HTTP error status (``429``, ``500``, ...), ``("slow", seconds)`` (then ok), ``"hang"``
    (no reply until ``release`` is set), ``"not-json"`` / ``"no-choices"`` (200, malformed). ``ok`` counts the 200 replies actually
    written, per request key.
    """

    def __init__(self) -> None:
        self.plan = lambda key, attempt: "ok"
        self.lock = threading.Lock()
        self.attempts: Counter[str] = Counter()
        self.ok: Counter[str] = Counter()
        self.bodies: list[dict] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.release = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep the test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                key = hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()
                with server.lock:
                    server.bodies.append(body)
                    attempt = server.attempts[key]
                    server.attempts[key] += 1
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                try:
                    server.handle(self, body, key, server.plan(key, attempt))
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout) or was killed
                finally:
                    with server.lock:
                        server.in_flight -= 1

        self.errors: list[str] = []

        class Server(ThreadingHTTPServer):
            def handle_error(self, request, client_address) -> None:
                # Kept, not printed: a stray connection (a client of an earlier test that
                # retried into a port the system gave this server) must not write a traceback
                # into the stderr the test reads for the command's own lines.
                server.errors.append(f"{client_address}: {sys.exc_info()[1]!r}")

        self.httpd = Server(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> FakeChatServer:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()

    def handle(self, handler: BaseHTTPRequestHandler, body: dict, key: str, action) -> None:
        if action == "hang":
            self.release.wait(30)
            return
        if action in MALFORMED:
            payload = MALFORMED[action]
            handler.send_response(200)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            handler.end_headers()
            handler.wfile.write(payload)
            return
        if isinstance(action, int):  # an HTTP error status
            payload = json.dumps({"error": {"message": f"fake {action}", "type": "fake"}}).encode()
            handler.send_response(action)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(payload)))
            if action == 429:
                handler.send_header("Retry-After", "0")
            handler.end_headers()
            handler.wfile.write(payload)
            return
        if isinstance(action, tuple) and action[0] == "slow":
            time.sleep(action[1])
        payload = json.dumps(self.completion(body)).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(payload)))
        handler.end_headers()
        handler.wfile.write(payload)
        handler.wfile.flush()
        with self.lock:
            self.ok[key] += 1

    @staticmethod
    def completion(body: dict) -> dict:
        question = body["messages"][-1]["content"]
        choices = re.search(r"選択肢: 0\.(.*), 1\.(.*), 2\.(.*)$", question).groups()
        answer = str(choices.index("判断できない"))
        message = {"role": "assistant", "content": answer}
        choice = {"index": 0, "message": message, "finish_reason": "stop"}
        if body.get("logprobs"):
            top = [{"token": answer, "logprob": -0.1, "bytes": None}] + [
                {"token": str(i), "logprob": -3.0, "bytes": None}
                for i in range(3)
                if str(i) != answer
            ]
            choice["logprobs"] = {
                "content": [{"token": answer, "logprob": -0.1, "bytes": None, "top_logprobs": top}]
            }
        return {
            "id": "fake",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [choice],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }


@pytest.fixture(scope="module")
def fixture_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_fixture_dataset(tmp_path_factory.mktemp("jbbq_fixture") / "jbbq")


@pytest.fixture(autouse=True)
def api_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own response cache, where the default puts it: $BIAS_HUB_CACHE/api/jbbq_openai."""
    root = tmp_path_factory.mktemp("bias-hub-cache")
    monkeypatch.setenv("BIAS_HUB_CACHE", str(root))
    return root / "api" / "jbbq_openai"


def _without_server_reports(err: str) -> str:
    """Standard error less what a test HTTP server's thread printed (socketserver's report of a
    request it failed to handle, between two rules of dashes): under xdist a client of another
    test may reach a server here, and that report is not the command's output."""
    rule = "-" * 40
    return re.sub(
        rf"{rule}\nException occurred during processing of request.*?\n{rule}\n?",
        "",
        err,
        flags=re.S,
    )


def _args(server: FakeChatServer, dataset: Path, out: Path, *extra: str) -> list[str]:
    return [
        "jbbq",
        "evaluate",
        "--backend",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        server.url,
        "--dataset",
        str(dataset),
        "--metrics-root",
        str(METRICS_DIR),
        "--prompt",
        "basic",
        "--split",
        "test",
        "--shots",
        "0",
        "--out",
        str(out),
        "--backoff",
        "0.01",
        # No test here reads an interval: the default 2000 resamples would be most of each run.
        "--n-resamples",
        "200",
        "--quiet",
        *extra,
    ]


def _results(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


@pytest.mark.slow
def test_retries_429_500_and_timeouts_then_scores(fixture_dataset: Path, tmp_path: Path) -> None:
    # The timeout is generous so that a busy test machine never times out a normal reply.
    script = {0: 429, 1: 500, 2: ("slow", 2.5), 3: ("slow", 0.05)}
    with FakeChatServer() as server:
        server.plan = lambda key, attempt: script.get(attempt, "ok")
        code = cli.main(
            _args(
                server,
                fixture_dataset,
                tmp_path,
                "--scoring",
                "generate",
                "--timeout",
                "1.5",
                "--concurrency",
                "8",
            )
        )
    assert code == 0
    # Every question answered exactly once after 429, 500 and a timed-out attempt.
    assert len(server.ok) == N_TEST_QUESTIONS
    assert set(server.ok.values()) == {1}
    assert set(server.attempts.values()) == {4}
    metrics = _results(tmp_path)["runs"][0]["metrics"]
    assert metrics["accuracy_ambiguous"] == 1.0
    assert metrics["accuracy_disambiguated"] == 0.0
    assert metrics["unparsable_rate"] == 0.0
    rows = (tmp_path / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == N_TEST_QUESTIONS


def test_loglikelihood_reads_top_logprobs_with_bounded_concurrency(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    with FakeChatServer() as server:
        server.plan = lambda key, attempt: ("slow", 0.1)
        code = cli.main(
            _args(
                server,
                fixture_dataset,
                tmp_path,
                "--scoring",
                "loglikelihood",
                "--concurrency",
                "3",
                "--max-tokens-field",
                "max_completion_tokens",
            )
        )
    assert code == 0
    assert 2 <= server.max_in_flight <= 3
    body = server.bodies[0]
    assert body["max_completion_tokens"] == 1 and "max_tokens" not in body
    assert body["logprobs"] is True and body["temperature"] == 0 and body["model"] == "fake-model"
    metrics = _results(tmp_path)["runs"][0]["metrics"]
    assert metrics["accuracy_ambiguous"] == 1.0 and metrics["accuracy_disambiguated"] == 0.0
    assert _results(tmp_path)["runs"][0]["example_prompt"].startswith("[system]\n以下は、")
    first = json.loads((tmp_path / "predictions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert sorted(first["logprobs"]) == [-3.0, -3.0, -0.1]


def test_failing_api_stops_with_progress_and_resumes_from_cache(
    fixture_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    answered: set[str] = set()

    def first_six_then_500(key: str, attempt: int):
        if key in answered or len(answered) < 6:
            answered.add(key)
            return "ok"
        return 500

    with FakeChatServer() as server:
        server.plan = first_six_then_500
        code = cli.main(
            _args(
                server,
                fixture_dataset,
                tmp_path,
                "--scoring",
                "generate",
                "--concurrency",
                "1",
                "--max-retries",
                "2",
            )
        )
        err = capsys.readouterr().err
        assert code == 2
        assert "6 of 16 requests answered" in err
        assert "again" in err and "resumes" in err
        assert sum(server.ok.values()) == 6
        assert max(server.attempts.values()) == 3  # one try + 2 retries, then stop
        assert not (tmp_path / "results.json").exists()

        server.plan = lambda key, attempt: "ok"
        assert cli.main(_args(server, fixture_dataset, tmp_path, "--scoring", "generate")) == 0
    assert len(server.ok) == N_TEST_QUESTIONS and set(server.ok.values()) == {1}
    assert _results(tmp_path)["runs"][0]["metrics"]["accuracy_ambiguous"] == 1.0


@pytest.mark.slow
def test_killed_run_resumes_without_losing_or_repeating_requests(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    answered: set[str] = set()
    lock = threading.Lock()

    def five_then_hang(key: str, attempt: int):
        with lock:
            if len(answered) < 5:
                answered.add(key)
                return "ok"
        return "hang"

    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    with FakeChatServer() as server:
        server.plan = five_then_hang
        command = [
            sys.executable,
            "-m",
            "bias_hub",
            *_args(
                server, fixture_dataset, tmp_path, "--scoring", "generate", "--concurrency", "2"
            ),
        ]
        process = subprocess.Popen(
            command, env=env, cwd=REPO_ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            with server.lock:
                if sum(server.ok.values()) == 5 and server.in_flight == 2:
                    break
            if process.poll() is not None:
                pytest.fail(f"the run ended early: {process.stderr.read().decode()}")
            time.sleep(0.05)
        else:
            pytest.fail("the run never reached 5 answers with 2 requests in flight")
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
        process.stderr.close()
        server.release.set()  # the hanging handlers return without a reply
        assert not (tmp_path / "results.json").exists()

        server.plan = lambda key, attempt: "ok"
        assert cli.main(_args(server, fixture_dataset, tmp_path, "--scoring", "generate")) == 0
    # 5 answers before the kill, 11 after: each question paid for exactly once.
    assert len(server.ok) == N_TEST_QUESTIONS and set(server.ok.values()) == {1}
    rows = (tmp_path / "predictions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(rows) == N_TEST_QUESTIONS
    # The killed run's staging folder is cleared by the next run.
    assert not list(tmp_path.parent.glob(f".{tmp_path.name}.staging-*"))


def test_missing_key_for_the_real_openai_api_is_a_clear_error(
    fixture_dataset: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    code = cli.main(
        [
            "jbbq",
            "evaluate",
            "--backend",
            "openai",
            "--model",
            "gpt-x",
            "--api-key-env",
            "NO_SUCH_KEY_VAR",
            "--dataset",
            str(fixture_dataset),
            "--metrics-root",
            str(METRICS_DIR),
            "--out",
            str(tmp_path / "out"),
            "-q",
        ]
    )
    assert code == 2
    assert (
        "--api-key-env: environment variable NO_SUCH_KEY_VAR is not set" in capsys.readouterr().err
    )
    assert not (tmp_path / "out").exists()


def test_the_cache_lives_outside_the_run_folder_and_a_rerun_pays_nothing(
    fixture_dataset: Path, tmp_path: Path, api_cache: Path
) -> None:
    out = tmp_path / "run"
    with FakeChatServer() as server:
        assert cli.main(_args(server, fixture_dataset, out, "--scoring", "generate")) == 0
        assert sum(server.ok.values()) == N_TEST_QUESTIONS
        entries = list(api_cache.rglob("*.json"))
        assert len(entries) == N_TEST_QUESTIONS
        entry = json.loads(entries[0].read_text(encoding="utf-8"))
        assert entry["endpoint"] == f"{server.url}/chat/completions"
        assert (
            entry["request"]["model"] == "fake-model"
            and entry["response"]["choices"][0]["message"]["content"]
        )
        assert sorted(p.name for p in out.iterdir()) == [
            "figure1_0shot.png",
            "manifest.json",
            "predictions.jsonl",
            "report.md",
            "results.json",
        ]
        first = (out / "predictions.jsonl").read_text(encoding="utf-8")
        # The run folder is replaced whole; the answers survive it and nothing is asked twice.
        assert cli.main(_args(server, fixture_dataset, out, "--scoring", "generate")) == 0
    assert sum(server.ok.values()) == N_TEST_QUESTIONS and len(server.bodies) == N_TEST_QUESTIONS
    assert (out / "predictions.jsonl").read_text(encoding="utf-8") == first


@pytest.mark.parametrize("out_kind", ["a file", "below a file"])
def test_an_unwritable_out_fails_before_the_first_paid_request(
    fixture_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], out_kind: str
) -> None:
    blocker = tmp_path / "results.txt"
    blocker.write_text("not a folder", encoding="utf-8")
    out = blocker if out_kind == "a file" else blocker / "run"
    with FakeChatServer() as server:
        assert cli.main(_args(server, fixture_dataset, out, "--scoring", "generate")) == 2
    err = _without_server_reports(capsys.readouterr().err)
    assert f"--out {out}:" in err and "Traceback" not in err
    assert server.bodies == []  # nothing was paid for
    assert blocker.read_text(encoding="utf-8") == "not a folder"


def test_an_unwritable_cache_folder_fails_before_the_first_paid_request(
    fixture_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "cache-file"
    blocker.write_text("", encoding="utf-8")
    with FakeChatServer() as server:
        code = cli.main(
            _args(server, fixture_dataset, tmp_path / "out", "--cache-dir", str(blocker / "api"))
        )
    assert code == 2
    assert (
        f"--cache-dir {blocker / 'api'}: the API response cache cannot be written"
        in capsys.readouterr().err
    )
    assert server.bodies == [] and not (tmp_path / "out").exists()


def test_malformed_replies_are_retried_within_the_budget(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    script = {0: "not-json", 1: "no-choices"}
    with FakeChatServer() as server:
        server.plan = lambda key, attempt: script.get(attempt, "ok")
        assert (
            cli.main(
                _args(
                    server, fixture_dataset, tmp_path, "--scoring", "generate", "--max-retries", "2"
                )
            )
            == 0
        )
    assert set(server.attempts.values()) == {3} and len(server.ok) == N_TEST_QUESTIONS
    assert _results(tmp_path)["runs"][0]["metrics"]["accuracy_ambiguous"] == 1.0


def test_malformed_replies_past_the_budget_name_endpoint_count_and_resume_command(
    fixture_dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    answered: set[str] = set()

    def four_then_garbage(key: str, attempt: int):
        if key in answered or len(answered) < 4:
            answered.add(key)
            return "ok"
        return "not-json"

    with FakeChatServer() as server:
        server.plan = four_then_garbage
        args = _args(
            server,
            fixture_dataset,
            tmp_path / "out",
            "--scoring",
            "generate",
            "--concurrency",
            "1",
            "--max-retries",
            "1",
        )
        monkeypatch.setattr("sys.argv", ["bias-hub", *args])  # as typed in a shell
        assert cli.main(args) == 2
    # The retry was said when it started, and counted when the run stopped; then the error.
    *said, err = capsys.readouterr().err.strip().splitlines()
    assert "retried 1 of 6 requests: 1 × malformed reply" in said[-1]
    assert err.startswith(
        f"bias-hub: error: {server.url}/chat/completions still failing after 2 attempt(s): "
        "MalformedReply: the reply is not JSON"
    )
    assert "Stopped with 4 of 16 requests answered" in err
    assert err.endswith("resumes without paying twice: " + shlex.join(["bias-hub", *args]))
    assert not (tmp_path / "out").exists()


def test_the_resume_command_carries_no_secret_value(
    fixture_dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The resume line is the command as typed; a password in --base-url (and the
    endpoint named beside it) is replaced by *** by value, whatever flag spelling carried it."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-SECRETKEY-0123")
    with FakeChatServer() as server:
        server.plan = lambda key, attempt: 500
        url = server.url.replace("http://", "http://alice:SECRETPW-987@")
        args = _args(
            server, fixture_dataset, tmp_path / "out", "--scoring", "generate", "--max-retries", "0"
        )
        args[args.index(server.url)] = url
        monkeypatch.setattr("sys.argv", ["bias-hub", *args])
        assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert "resumes without paying twice: bias-hub jbbq evaluate" in err
    assert "SECRETPW-987" not in err and "sk-test-SECRETKEY-0123" not in err
    # The whole userinfo is masked (bias_hub.builders.shared.secrets; shell-quoted for the *), the host stays readable.
    assert "--base-url 'http://***@127.0.0.1:" in err and not (tmp_path / "out").exists()
