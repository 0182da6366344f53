"""``jbbq evaluate --backend openai --api completions``: the plain prompt to ``/v1/completions``,
as a base model behind ``vllm serve``, llama.cpp's ``llama-server`` or TGI is run.

A local server on 127.0.0.1 speaks the completions API: it answers each prompt with the index
of the "unknown" choice of its last question (判断できない), so on the fixture every ambiguous
question is right and every disambiguated one wrong, whatever the prompt or the shots.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from jbbq_fixtures import write_fixture_dataset
from test_jbbq_openai_faults import METRICS_DIR, FakeChatServer

from bias_hub.pipelines import cli
from bias_hub.pipelines.jbbq.prompting import load_prompt


class FakeCompletionsServer(FakeChatServer):
    """``POST /v1/completions`` (the paths asked are kept in ``paths``); the same plans of replies
    and failures as the chat server's. ``malformed`` extra: a chat reply, which has no ``text``."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def handle(self, handler, body: dict, key: str, action) -> None:
        with self.lock:
            self.paths.append(handler.path)
        if action == "chat-shaped":
            action = "ok"
            body = {**body, "_chat_shaped": True}
        super().handle(handler, body, key, action)

    @staticmethod
    def completion(body: dict) -> dict:
        # The evaluated question is the prompt's last one; the shots' questions come before it.
        choices = re.findall(r"選択肢: 0\.(.*), 1\.(.*), 2\.(.*)\n", body["prompt"])[-1]
        answer = str(choices.index("判断できない"))
        if body.get("_chat_shaped"):
            message = {"role": "assistant", "content": answer}
            return {"object": "chat.completion", "choices": [{"index": 0, "message": message}]}
        # The answer right after "### 応答:\n", as llm-jp-eval v1.3.0 reads it: untrimmed, so a
        # leading space would make it no answer.
        choice = {"index": 0, "text": f"{answer}\n\n入力:", "finish_reason": "length"}
        if body.get("logprobs"):
            # The legacy layout: one {token: logprob} per position; a plain prompt's answer token
            # often carries its leading space.
            top = {f" {answer}": -0.1, **{f" {i}": -3.0 for i in range(3) if str(i) != answer}}
            choice["logprobs"] = {
                "tokens": [f" {answer}"],
                "token_logprobs": [-0.1],
                "top_logprobs": [top],
                "text_offset": [0],
            }
        return {
            "id": "fake",
            "object": "text_completion",
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
    root = tmp_path_factory.mktemp("bias-hub-cache")
    monkeypatch.setenv("BIAS_HUB_CACHE", str(root))
    return root / "api" / "jbbq_openai"


def _args(server: FakeCompletionsServer, dataset: Path, out: Path, *extra: str) -> list[str]:
    return [
        "jbbq",
        "evaluate",
        "--backend",
        "openai",
        "--api",
        "completions",
        "--model",
        "base-model",
        "--base-url",
        server.url,
        "--dataset",
        str(dataset),
        "--metrics-root",
        str(METRICS_DIR),
        "--out",
        str(out),
        "--backoff",
        "0.01",
        "--n-resamples",
        "200",
        "--quiet",
        *extra,
    ]


def _results(out: Path) -> dict:
    return json.loads((out / "results.json").read_text(encoding="utf-8"))


def test_the_paper_preset_sends_the_plain_prompt_to_the_completions_endpoint(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    with FakeCompletionsServer() as server:
        # No intervals: the test is about what is sent, and they would take most of its time.
        assert cli.main(_args(server, fixture_dataset, tmp_path, "--confidence-level", "0")) == 0
    results = _results(tmp_path)
    # --preset paper as it stands: three prompts, 4 shots, generated answers, every question,
    # the plain prompt (chat: no) kept, so nothing departs from the preset.
    assert results["preset"]["name"] == "paper" and results["preset"]["departures"] == []
    assert results["settings"]["chat"] == "no" and results["settings"]["api"] == "completions"
    assert [(run["prompt"], run["shots"]) for run in results["runs"]] == [
        ("basic", 4),
        ("unknown", 4),
        ("paraphrase", 4),
    ]
    # 10 templates in `all`; the 4 shot templates are held out: 6 templates x 4 questions x 3 prompts.
    assert len(server.bodies) == 3 * 6 * 4
    assert set(server.paths) == {"/v1/completions"}
    body = server.bodies[0]
    assert "messages" not in body and body["model"] == "base-model"
    # the preset's one token (the output_length of the JBBQ processor it assumes)
    assert body["max_tokens"] == 1 and body["temperature"] == 0 and "logprobs" not in body
    # Exactly the text a local model is given with --chat no: header, four shots, the question.
    assert results["runs"][0]["example_prompt"] in {sent["prompt"] for sent in server.bodies}
    assert load_prompt("basic").system in body["prompt"]
    assert body["prompt"].count("選択肢:") == 5
    for run in results["runs"]:
        assert run["metrics"]["accuracy_ambiguous"] == 1.0
        assert run["metrics"]["accuracy_disambiguated"] == 0.0
        assert run["metrics"]["unparsable_rate"] == 0.0
    reply = json.loads((tmp_path / "predictions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    # the reply as the server sent it; the text before the blank line is the index read
    assert reply["reply"].endswith("\n\n入力:") and reply["prediction"] == int(reply["reply"][0])
    assert "completions, plain prompt" in results["scorer"]


def test_loglikelihood_reads_the_legacy_top_logprobs(fixture_dataset: Path, tmp_path: Path) -> None:
    with FakeCompletionsServer() as server:
        code = cli.main(
            _args(
                server,
                fixture_dataset,
                tmp_path,
                "--preset",
                "none",
                "--scoring",
                "loglikelihood",
                "--prompt",
                "basic",
            )
        )
    assert code == 0
    body = server.bodies[0]
    # The completions API asks for top log-probabilities with a count, not a flag.
    assert body["logprobs"] == 20 and body["max_tokens"] == 1 and "top_logprobs" not in body
    first = json.loads((tmp_path / "predictions.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert sorted(first["logprobs"]) == [-3.0, -3.0, -0.1]
    metrics = _results(tmp_path)["runs"][0]["metrics"]
    assert metrics["accuracy_ambiguous"] == 1.0 and metrics["accuracy_disambiguated"] == 0.0


def test_retries_cache_and_resume_work_as_for_chat(
    fixture_dataset: Path, tmp_path: Path, api_cache: Path
) -> None:
    # 429, 500 and a reply that is not a completion (a chat message, no text) are retried.
    script = {0: 429, 1: 500, 2: "chat-shaped"}
    flags = ("--preset", "none", "--scoring", "generate", "--prompt", "basic")
    with FakeCompletionsServer() as server:
        server.plan = lambda key, attempt: script.get(attempt, "ok")
        assert cli.main(_args(server, fixture_dataset, tmp_path / "a", *flags)) == 0
        # Four tries per question; two of them got a 200 (the chat-shaped one was refused).
        assert set(server.attempts.values()) == {4} and set(server.ok.values()) == {2}
        asked = len(server.bodies)
        entries = list(api_cache.rglob("*.json"))
        assert len(entries) == len(server.ok) == 16
        entry = json.loads(entries[0].read_text(encoding="utf-8"))
        assert entry["endpoint"] == f"{server.url}/completions"
        assert isinstance(entry["response"]["choices"][0]["text"], str)
        # Another run folder, the same requests: every answer comes from the cache.
        assert cli.main(_args(server, fixture_dataset, tmp_path / "b", *flags)) == 0
        assert len(server.bodies) == asked
    assert (tmp_path / "a" / "predictions.jsonl").read_bytes() == (
        tmp_path / "b" / "predictions.jsonl"
    ).read_bytes()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (("--chat", "yes"), "--chat yes: --api completions sends the plain prompt"),
        (
            ("--max-tokens-field", "max_completion_tokens"),
            "--max-tokens-field max_completion_tokens: the completions API takes max_tokens",
        ),
    ],
)
def test_settings_a_completions_endpoint_cannot_take_are_refused_before_any_request(
    fixture_dataset: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    flags: tuple[str, ...],
    message: str,
) -> None:
    with FakeCompletionsServer() as server:
        assert cli.main(_args(server, fixture_dataset, tmp_path / "out", *flags)) == 2
    assert message in capsys.readouterr().err
    assert server.bodies == [] and not (tmp_path / "out").exists()


def test_a_query_in_the_base_url_goes_with_every_request(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    # Proxies and Azure take parameters in the base URL's query (a tenant, an api-version):
    # the endpoint's path goes before the query, and the query is sent with every request.
    with FakeCompletionsServer() as server:
        url = server.url
        server.url = f"{url}?api-version=2024-06-01&tenant=lab"
        args = _args(server, fixture_dataset, tmp_path, "--confidence-level", "0", "--limit", "1")
        assert cli.main(args) == 0
    assert server.paths and set(server.paths) == {
        "/v1/completions?api-version=2024-06-01&tenant=lab"
    }
