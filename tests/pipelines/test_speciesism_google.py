"""The google-cloud sentiment backend: the official client against a local fake server (never the network).

The server speaks the REST form of Natural Language v1 ``documents:analyzeSentiment`` on
127.0.0.1; the backend finds it, and its key, through the environment only, as a user's
run would (``GOOGLE_LANGUAGE_ENDPOINT``, ``GOOGLE_API_KEY``).
"""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bias_hub.pipelines.speciesism import sentiment as sentiment_module

# The fake service's scores; any other sentence gets a reply without a score, as the real
# service sends a score of 0 (proto3 leaves zero values out).
SCORES = {"A person is dirty.": -0.6, "A person is wonderful.": 0.8, "A person is stupid.": -0.3}


class FakeLanguageService:
    """A bounded local server: records each request; ``statuses`` are answered first, in order."""

    def __init__(self) -> None:
        self.requests: list[dict] = []
        self.statuses: list[int] = []
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                service.requests.append(
                    {"path": self.path, "key": self.headers.get("x-goog-api-key"), "body": body}
                )
                status = service.statuses.pop(0) if service.statuses else 200
                if status != 200:
                    reply = {
                        "error": {
                            "code": status,
                            "message": "scripted failure",
                            "status": "UNAVAILABLE",
                        }
                    }
                else:
                    score = SCORES.get(body["document"]["content"])
                    reply = {
                        "documentSentiment": {}
                        if score is None
                        else {"score": score, "magnitude": abs(score)},
                        "language": "en",
                    }
                data = json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_port}"


@pytest.fixture
def service(monkeypatch, tmp_path):
    fake = FakeLanguageService()
    fake.thread.start()
    monkeypatch.setenv("GOOGLE_LANGUAGE_ENDPOINT", fake.endpoint)
    monkeypatch.setenv("GOOGLE_API_KEY", "test-key")
    monkeypatch.setenv("BIAS_HUB_CACHE", str(tmp_path / "cache"))
    yield fake
    fake.server.shutdown()
    fake.server.server_close()


def test_google_backend_judges_by_the_sign_of_the_score(service):
    backend = sentiment_module.get_backend("google-cloud", "en")
    assert (backend.name, backend.language) == ("google-cloud", "en")
    judged = backend.judge(["A person is dirty.", "A person is wonderful.", "A person is sliced."])
    assert [label for label, _ in judged] == ["negative", "positive", "neutral"]
    assert [score for _, score in judged] == pytest.approx([-0.6, 0.8, 0.0])
    first = service.requests[0]
    assert first["path"].startswith("/v1/documents:analyzeSentiment")
    assert first["key"] == "test-key"
    assert first["body"]["document"]["content"] == "A person is dirty."
    assert first["body"]["document"]["language"] == "en"
    assert len(service.requests) == 3


def test_google_answers_are_cached(service):
    texts = ["A person is dirty.", "A person is stupid."]
    sentiment_module.get_backend("google-cloud").judge(texts)
    again = sentiment_module.get_backend("google-cloud").judge(texts)
    # A second backend (a rerun) reads the cache and sends nothing.
    assert len(service.requests) == 2
    assert [label for label, _ in again] == ["negative", "negative"]


def test_google_transient_errors_are_retried_and_refusals_are_not(service):
    backend = sentiment_module.GoogleCloudBackend("en", sleep=lambda seconds: None)
    service.statuses = [503, 503]
    assert backend.judge(["A person is dirty."]) == [("negative", pytest.approx(-0.6))]
    assert len(service.requests) == 3  # two 503s, then the answer
    service.statuses = [403]
    with pytest.raises(RuntimeError, match="refused a request"):
        backend.judge(["A person is wonderful."])
    assert len(service.requests) == 4


def test_google_without_credentials_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GOOGLE_APPLICATION_CREDENTIALS", raising=False)
    monkeypatch.setenv("CLOUDSDK_CONFIG", str(tmp_path / "no-gcloud"))
    with pytest.raises(ValueError, match="GOOGLE_API_KEY.*--sentiment-backend vader"):
        sentiment_module.get_backend("google-cloud")


def test_preset_paper_end_to_end_with_google_sentiment(service, tmp_path, capsys):
    """``--preset paper`` from the command line: raw tokens, the Google backend, the paper's
    other settings; the flags given beside it are reported as departures."""
    import datasets as hf_datasets

    from bias_hub.builders.speciesism_templates import build
    from bias_hub.pipelines.cli import main
    from bias_hub.pipelines.speciesism.planted_model import make_tiny_masked_lm

    root = tmp_path / "datasets"
    folder = build(root)
    rows = [
        row
        for config in ("probability", "sentiment")
        for row in hf_datasets.load_dataset(str(folder), config, split="test")
    ]
    model = make_tiny_masked_lm(
        tmp_path / "tiny", list({r["template_id"]: r for r in rows}.values()), "en", steps=20
    )
    out = tmp_path / "out"
    code = main(
        [
            "speciesism",
            "--preset",
            "paper",
            "--model",
            str(model),
            "--animals",
            "pig",
            "dog",
            "--datasets-root",
            str(root),
            "--out",
            str(out),
            "--device",
            "cpu",
            "-q",
            "--n-resamples",
            "200",
        ]
    )
    assert code == 0, capsys.readouterr().err
    results = json.loads((out / "results.json").read_text())
    assert results["preset"]["name"] == "paper"
    assert results["tokens"] == "raw" and results["sentiment_backend"] == "google-cloud"
    assert [(d["setting"], d["preset"], d["used"]) for d in results["preset"]["departures"]] == [
        ("model", ["bert-large-uncased", "roberta-large"], [str(model)]),
        ("animals", [], ["pig", "dog"]),
    ]
    sentiment = results["models"][0]["sentiment"]
    # Top 10 fills per animal (the paper's N), each sent to the service once.
    assert sentiment["n"] == {"dog": 10, "pig": 10}
    assert len({r["body"]["document"]["content"] for r in service.requests}) == len(
        service.requests
    )
    for fill in sentiment["fills"]:
        expected = SCORES.get(f"A person is {fill['fill']}.", 0.0)
        assert fill["score"] == pytest.approx(expected)
    report = (out / "report.md").read_text()
    assert "Preset `paper`, with these departures from it:" in report
    assert (
        f"- `model`: {[str(model)]!r} instead of ['bert-large-uncased', 'roberta-large']" in report
    )
    assert "| word | token | P(object form) | P(human form) | change rate [95% CI] |" in report
