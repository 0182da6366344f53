"""``jbbq evaluate --backend openai --api completions``: the plain prompt to ``/v1/completions``,
as a base model behind ``vllm serve``, llama.cpp's ``llama-server`` or TGI is run.

A local server on 127.0.0.1 speaks the completions API: it answers each prompt with the index
of the "unknown" choice of its last question (判断できない), so on the fixture every ambiguous
question is right and every disambiguated one wrong, whatever the prompt or the shots.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from jbbq_fixtures import write_fixture_dataset
from test_jbbq_openai_faults import METRICS_DIR, FakeChatServer

from bias_hub.pipelines import cli
from bias_hub.pipelines.jbbq.prompting import load_prompt


class FakeCompletionsServer(FakeChatServer):
    """``POST /v1/completions`` (the paths asked are kept in ``paths``); the same plans of replies
    and failures as the chat server's. A list of prompts is answered as vLLM answers it, one
    choice per prompt with the prompt's ``index`` (listed last prompt first, which the client
    must sort). Extra actions: ``"chat-shaped"``, a chat reply, which has no ``text``;
    ``"no-lists"``, 400 for a list of prompts; ``"first-only"``, one choice for a whole list."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def prompts(self) -> list[str]:
        """Every prompt sent, in the order sent, lists spread."""
        listed = [body["prompt"] for body in self.bodies]
        return [p for item in listed for p in (item if isinstance(item, list) else [item])]

    def handle(self, handler, body: dict, key: str, action) -> None:
        with self.lock:
            self.paths.append(handler.path)
        if action in ("chat-shaped", "first-only"):
            body = {**body, f"_{action}": True}
            action = "ok"
        if action == "no-lists":
            action = 400 if isinstance(body["prompt"], list) else "ok"
        super().handle(handler, body, key, action)

    @classmethod
    def completion(cls, body: dict) -> dict:
        prompts = body["prompt"] if isinstance(body["prompt"], list) else [body["prompt"]]
        if body.get("_first-only"):
            prompts = prompts[:1]
        choices = [cls.choice(body, prompt, index) for index, prompt in enumerate(prompts)]
        return {
            "id": "fake",
            "object": "text_completion",
            "created": 0,
            "model": body["model"],
            "choices": choices[::-1],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }

    @staticmethod
    def choice(body: dict, prompt: str, index: int) -> dict:
        # The evaluated question is the prompt's last one; the shots' questions come before it.
        choices = re.findall(r"選択肢: 0\.(.*), 1\.(.*), 2\.(.*)\n", prompt)[-1]
        answer = str(choices.index("判断できない"))
        if body.get("_chat-shaped"):
            message = {"role": "assistant", "content": answer}
            return {"index": index, "message": message}
        # The answer right after "### 応答:\n", as llm-jp-eval v1.3.0 reads it: untrimmed, so a
        # leading space would make it no answer.
        choice = {"index": index, "text": f"{answer}\n\n入力:", "finish_reason": "length"}
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
        return choice


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
    # 10 templates in `all`; the 4 shot templates are held out: 6 templates x 4 questions x 3 prompts,
    # 8 prompts to a request (the default): 24 questions per prompt in 3 requests.
    prompts = server.prompts()
    assert len(prompts) == 3 * 6 * 4 and len(server.bodies) == 3 * 3
    assert all(len(body["prompt"]) == 8 for body in server.bodies)
    assert set(server.paths) == {"/v1/completions"}
    body = server.bodies[0]
    assert "messages" not in body and body["model"] == "base-model"
    # the preset's one token (the output_length of the JBBQ processor it assumes)
    assert body["max_tokens"] == 1 and body["temperature"] == 0 and "logprobs" not in body
    # Exactly the text a local model is given with --chat no: header, four shots, the question.
    assert results["runs"][0]["example_prompt"] in set(prompts)
    assert load_prompt("basic").system in prompts[0]
    assert prompts[0].count("選択肢:") == 5
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
    flags += ("--prompts-per-request", "1")  # per question (lists: the test below)
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


def _flat_flags(per_request: int) -> tuple[str, ...]:
    return ("--preset", "none", "--scoring", "generate", "--prompt", "basic") + (
        "--prompts-per-request",
        str(per_request),
    )


def test_lists_of_prompts_keep_order_retries_and_a_cache_entry_per_prompt(
    fixture_dataset: Path, tmp_path: Path, api_cache: Path
) -> None:
    # 16 questions, 5 to a request: lists of 5, 5, 5 and 1, each first refused with a 500.
    with FakeCompletionsServer() as server:
        server.plan = lambda key, attempt: 500 if attempt == 0 else "ok"
        assert cli.main(_args(server, fixture_dataset, tmp_path / "lists", *_flat_flags(5))) == 0
        sizes = [len(b["prompt"]) if isinstance(b["prompt"], list) else 1 for b in server.bodies]
        assert sorted(sizes) == [1, 1, 5, 5, 5, 5, 5, 5]
        assert sorted(server.attempts.values()) == [2, 2, 2, 2]
        # One entry per question, each holding a one-prompt request and its own choice.
        entries = [json.loads(e.read_text(encoding="utf-8")) for e in api_cache.rglob("*.json")]
        assert len(entries) == 16
        assert all(isinstance(e["request"]["prompt"], str) for e in entries)
        assert all(e["response"]["choices"][0]["index"] == 0 for e in entries)
        asked = len(server.bodies)
        # Asked one at a time now, every question is found in the cache.
        assert cli.main(_args(server, fixture_dataset, tmp_path / "single", *_flat_flags(1))) == 0
        assert len(server.bodies) == asked
    # The server listed each list's choices last prompt first: sorted back, the answers are the
    # same as one prompt per request gives (every ambiguous question right, every other wrong).
    with FakeCompletionsServer() as fresh:
        flags = (*_flat_flags(1), "--cache-dir", str(tmp_path / "fresh-cache"))
        assert cli.main(_args(fresh, fixture_dataset, tmp_path / "fresh", *flags)) == 0
    for name in ("lists", "single"):
        assert (tmp_path / name / "predictions.jsonl").read_bytes() == (
            tmp_path / "fresh" / "predictions.jsonl"
        ).read_bytes()
    metrics = _results(tmp_path / "lists")["runs"][0]["metrics"]
    assert metrics["accuracy_ambiguous"] == 1.0 and metrics["accuracy_disambiguated"] == 0.0


@pytest.mark.parametrize("refusal", ["no-lists", "first-only"])
def test_an_endpoint_that_does_not_answer_lists_is_asked_one_prompt_at_a_time(
    fixture_dataset: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], refusal: str
) -> None:
    # A 400 for a list, or one choice for a list of 8 (a server that reads the first prompt only).
    with FakeCompletionsServer() as server:
        server.plan = lambda key, attempt: refusal
        args = _args(server, fixture_dataset, tmp_path, *_flat_flags(8))
        args.remove("--quiet")
        assert cli.main(args) == 0
    lists = [b for b in server.bodies if isinstance(b["prompt"], list)]
    # The first list (or the two sent at once) tried, then 16 single prompts.
    assert 1 <= len(lists) <= 2 and len(server.bodies) - len(lists) == 16
    assert "does not answer a list of prompts" in capsys.readouterr().err
    metrics = _results(tmp_path)["runs"][0]["metrics"]
    assert metrics["accuracy_ambiguous"] == 1.0 and metrics["accuracy_disambiguated"] == 0.0


RERUN = """
import json, sys
from bias_hub.pipelines.cli import main
code = main(json.loads(sys.argv[1]))
left = ("torch", "transformers", "openai", "datasets", "evaluate")
print(json.dumps([code, sorted(m for m in left if m in sys.modules)]))
"""


@pytest.mark.slow  # a whole rerun in a fresh interpreter
def test_a_rerun_answered_from_the_cache_loads_no_model_library_and_no_client(
    fixture_dataset: Path, tmp_path: Path
) -> None:
    with FakeCompletionsServer() as server:
        flags = ("--confidence-level", "0")
        assert cli.main(_args(server, fixture_dataset, tmp_path / "first", *flags)) == 0
        asked = len(server.bodies)
        rerun = _args(server, fixture_dataset, tmp_path / "again", *flags)
        done = subprocess.run(
            [sys.executable, "-c", RERUN, json.dumps(rerun)],
            capture_output=True,
            text=True,
            check=True,
        )
        assert len(server.bodies) == asked  # every reply from the cache
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, []], done.stderr[-2000:]
    assert (tmp_path / "first" / "predictions.jsonl").read_bytes() == (
        tmp_path / "again" / "predictions.jsonl"
    ).read_bytes()
