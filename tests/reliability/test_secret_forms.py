"""Secrets in the forms the sweep found in clear: variables named ``API_KEYS``, ``GITHUB_PAT`` or
``DB_PASSWORD`` (seven characters), a bearer JWT, a registered token in base64 (as in
``Authorization: Basic``), hex or HTML-escaped, URL fragments and ``session``/``jwt``/``code``
query values, and a base URL holding both in the error line of an API run."""

from __future__ import annotations

import base64
import html
from pathlib import Path

import pytest
from jbbq_fixtures import write_fixture_dataset

from bias_hub.builders.shared import secrets
from bias_hub.pipelines.cli import main

TOKEN = "hf_FormsOfASecret42"
# A JWT as RFC 7519 §3.1 shows one: {"typ":"JWT","alg":"HS256"} . {"iss":"joe",...} . signature
JWT = (
    "eyJ0eXAiOiJKV1QiLA0KICJhbGciOiJIUzI1NiJ9"
    ".eyJpc3MiOiJqb2UiLA0KICJleHAiOjEzMDA4MTkzODAsDQogImh0dHA6Ly9leGFtcGxlLmNvbS9pc19yb290Ijp0cnVlfQ"
    ".dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
)


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_values", set())
    monkeypatch.setattr(secrets, "_pattern", None)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("API_KEYS", "sk-one,sk-two-3"),
        ("GITHUB_PAT", "ghp_PATVALUE123"),
        ("DB_PASSWORD", "hunter2"),  # seven characters
        ("SERVICE_CREDENTIAL", "cred-VALUE-9"),
        ("MY_SECRETS", "s3cr3t-values"),
    ],
)
def test_variables_named_like_secrets_are_registered(monkeypatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    secrets.register_environment()
    assert secrets.redact(f"connected with {value}.") == "connected with ***."


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("MAX_TOKENS", "4096"),  # a number: a setting
        ("USE_SECRET", "true"),
        ("PWD", "/home/user/work"),  # the working folder, not a password
        ("TOKENIZERS_PARALLELISM", "false-alarm"),
    ],
)
def test_settings_named_near_secrets_are_not(monkeypatch, name: str, value: str) -> None:
    monkeypatch.setenv(name, value)
    secrets.register_environment()
    assert secrets.redact(f"see {value}") == f"see {value}"


def test_bearer_and_basic_credentials_and_jwts_are_redacted_unregistered() -> None:
    basic = base64.b64encode(b"alice:wonderland9").decode()
    text = f"Authorization: Bearer {JWT}\nauthorization: basic {basic}\nid_token={JWT}"
    assert secrets.redact(text) == (
        "Authorization: Bearer ***\nauthorization: basic ***\nid_token=***"
    )
    # The words alone are no credential: the basic prompt, Basic settings, a progress line.
    for text in ("the basic prompt; Basic settings", "basic 0-shot: 10% (10/100 q)", "Bearer 1"):
        assert secrets.redact(text) == text


def test_a_registered_secret_is_redacted_in_base64_hex_and_html() -> None:
    secrets.register(TOKEN)
    secrets.register("p<a&ss>w0rd")
    for user in ("a", "ab", "abc"):  # every alignment to base64's 3-byte groups
        header = base64.b64encode(f"{user}:{TOKEN}".encode()).decode()
        assert secrets.redact(f"Authorization: Basic {header}") == "Authorization: Basic ***"
        urlsafe = base64.urlsafe_b64encode(f"{user}:{TOKEN}!?".encode()).decode()
        assert secrets.redact(f"blob {urlsafe} end") == "blob *** end"
    hexed = TOKEN.encode().hex()
    assert secrets.redact(f"{hexed} {hexed.upper()}") == "*** ***"
    assert secrets.redact(f"<td>{html.escape('p<a&ss>w0rd')}</td>") == "<td>***</td>"


def test_url_fragments_and_session_jwt_code_queries_are_redacted_unregistered() -> None:
    text = (
        "https://h.example/cb#access_token=ACCESS1&token_type=bearer "
        "https://h.example/v1?session=SESSION2&jwt=JWT3&code=CODE4&state=STATE5&lang=ja"
    )
    assert secrets.redact(text) == (
        "https://h.example/cb#access_token=***&token_type=bearer "
        "https://h.example/v1?session=***&jwt=***&code=***&state=***&lang=ja"
    )


def test_an_api_run_s_error_line_shows_no_value_of_its_base_url(tmp_path: Path, capsys) -> None:
    dataset = write_fixture_dataset(tmp_path / "datasets" / "jbbq")
    base_url = "http://127.0.0.1:9/v1?session=SESSION7788#access_token=ACCESS9900"
    code = main(
        [
            "jbbq",
            "evaluate",
            "--backend",
            "openai",
            "--model",
            "m",
            "--base-url",
            base_url,
            "--dataset",
            str(dataset),
            "--out",
            str(tmp_path / "out"),
            "--max-retries",
            "0",
            "--timeout",
            "2",
            "--scoring",
            "generate",
            "--limit",
            "2",
            "--cache-dir",
            str(tmp_path / "cache"),
            "--api-key-env",
            "NO_SUCH_KEY_VARIABLE",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2, err
    assert "SESSION7788" not in err and "ACCESS9900" not in err
    assert "session=***" in err
