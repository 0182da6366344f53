"""A Hub id that cannot load fails at once, in one line, instead of a minute of retries.

The Hub is never contacted here: offline mode is checked without a request, and "out of reach"
is a local port that refuses connections or a local server that accepts and never answers.
"""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest
from huggingface_hub import constants

from bias_hub.pipelines.common import models
from bias_hub.pipelines.common.models import check_model_name


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """An empty Hugging Face cache, online mode, and a fresh reachability memo."""
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(tmp_path / "hub-cache"))
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    models._hub_unreachable.cache_clear()
    yield monkeypatch
    models._hub_unreachable.cache_clear()


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _no_request(*args, **kwargs):
    raise AssertionError("the Hub was asked")


def _count_requests(hub: pytest.MonkeyPatch) -> list[tuple[str, dict]]:
    """Every request made through huggingface_hub's session from now on: (method, keywords)."""
    import huggingface_hub

    made: list[tuple[str, dict]] = []
    real = huggingface_hub.get_session

    class Counting:
        def __init__(self, session) -> None:
            self.session = session

        def __getattr__(self, name: str):
            attribute = getattr(self.session, name)
            if name not in ("head", "get", "post", "request", "stream", "send"):
                return attribute

            def counted(*args, **kwargs):
                made.append((name, kwargs))
                return attribute(*args, **kwargs)

            return counted

    hub.setattr("huggingface_hub.get_session", lambda: Counting(real()))
    return made


def test_offline_and_not_cached_is_refused_without_a_request(hub) -> None:
    hub.setattr(constants, "HF_HUB_OFFLINE", True)
    hub.setattr("huggingface_hub.get_session", _no_request)
    with pytest.raises(FileNotFoundError) as caught:
        check_model_name("some-org/some-model")
    message = str(caught.value)
    assert message.startswith(
        "--model some-org/some-model: no local folder of that name and not in the Hugging Face cache ("
    )
    assert "HF_HUB_OFFLINE is set" in message and "pass a local model folder" in message
    assert "\n" not in message


def test_a_cached_model_is_left_to_transformers(hub) -> None:
    hub.setattr(constants, "HF_HUB_OFFLINE", True)
    hub.setattr("huggingface_hub.get_session", _no_request)
    snapshot = Path(constants.HF_HUB_CACHE) / "models--some-org--some-model" / "snapshots" / "abc"
    snapshot.mkdir(parents=True)
    check_model_name("some-org/some-model")  # no error, no request


def test_refused_connection_fails_at_once_naming_offline_mode_and_local_folders(hub) -> None:
    hub.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    made = _count_requests(hub)
    with pytest.raises(FileNotFoundError) as caught:
        check_model_name("some-org/some-model", flag="--lm")
    # One probe, bounded by the probe's timeout, and no retry.
    assert [(name, kwargs.get("timeout")) for name, kwargs in made] == [
        ("head", models.HUB_PROBE_TIMEOUT)
    ]
    message = str(caught.value)
    assert message.startswith(
        f"--lm some-org/some-model: no local folder of that name, not in the Hugging Face cache, and the Hub at "
        f"{constants.ENDPOINT} cannot be reached (ConnectError"
    )
    assert "pass a local model folder" in message and "set HF_HUB_OFFLINE=1" in message
    # The answer is kept: a second model does not wait again.
    hub.setattr("huggingface_hub.get_session", _no_request)
    with pytest.raises(FileNotFoundError, match="cannot be reached"):
        check_model_name("some-org/other-model")


def test_a_silent_hub_counts_as_out_of_reach_after_the_probe_timeout(hub) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(server.accept()[0]), daemon=True)
    thread.start()
    hub.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{server.getsockname()[1]}")
    hub.setattr(models, "HUB_PROBE_TIMEOUT", 1.0)
    made = _count_requests(hub)
    started = time.perf_counter()
    try:
        with pytest.raises(FileNotFoundError, match=r"cannot be reached \(\w*Timeout"):
            check_model_name("some-org/some-model")
    finally:
        for sock in accepted:
            sock.close()
        server.close()
    # It waited for the probe's timeout (1 s) once, and asked nothing more.
    assert time.perf_counter() - started >= 1.0
    assert [(name, kwargs.get("timeout")) for name, kwargs in made] == [("head", 1.0)]


def test_cli_prints_one_line_and_no_retry_lines(hub, tmp_path: Path, capsys, caplog) -> None:
    from bias_hub.builders.speciesism_templates import build
    from bias_hub.pipelines.cli import main

    build(tmp_path / "datasets")
    hub.setattr(constants, "ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    capsys.readouterr()
    made = _count_requests(hub)
    code = main(
        [
            "speciesism",
            "--model",
            "some-org/some-model",
            "--out",
            str(tmp_path / "run"),
            "--datasets-root",
            str(tmp_path / "datasets"),
            "-q",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert err.startswith(
        "bias-hub: error: --model some-org/some-model: no local folder of that name, not in the Hugging Face cache"
    )
    assert "Retry" not in caplog.text
    assert [name for name, _ in made] == ["head"]  # one probe; no retry, no download
