"""Secrets are redacted by value, not by the spelling of a flag.

The sweep found ``--tok hf_SECRET`` (argparse took the prefix for ``--token``) written in clear
into manifest.json, ``--toke`` in a printed resume command, and ``user:password@`` of
``--base-url`` in report.md, results.json, the manifest and every cache entry.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from test_jbbq_openai_faults import METRICS_DIR, FakeChatServer, write_fixture_dataset

from bias_hub.builders.shared import secrets
from bias_hub.builders.shared.console import command_line
from bias_hub.pipelines import cli

URL_PASSWORD = "SECRETINURL"
TOKEN = "hf_TOKENSECRET1"
ENV_KEY = "sk-ENVSECRET123"


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test registers its secrets in a registry of its own: "pass" registered here must
    not mask a later test's "pass" (one process runs the whole suite)."""
    monkeypatch.setattr(secrets, "_values", set())
    monkeypatch.setattr(secrets, "_pattern", None)


def _leaks(folder: Path, *values: str) -> list[str]:
    found = []
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            data = path.read_bytes()
            found += [
                f"{path.relative_to(folder)}: {value}" for value in values if value.encode() in data
            ]
    return found


def test_url_userinfo_is_redacted_whether_or_not_it_was_registered() -> None:
    assert secrets.redact(
        "asked http://alice:pa55word@host:8000/v1 and https://tok@h.example/x"
    ) == ("asked http://***@host:8000/v1 and https://***@h.example/x")
    # Not a URL's userinfo: left alone.
    assert secrets.redact("mail me at alice@example.org, or see git@github.com:o/r") == (
        "mail me at alice@example.org, or see git@github.com:o/r"
    )


def test_a_registered_value_is_redacted_everywhere_and_as_percent_encoded() -> None:
    secrets.register("p@ss/word#42")
    text = "token p@ss/word#42 in a URL p%40ss%2Fword%2342"
    assert secrets.redact(text) == "token *** in a URL ***"
    assert secrets.redact_data({"a": ["x p@ss/word#42"], "p@ss/word#42": 1}) == {
        "a": ["x ***"],
        "***": 1,
    }


def test_a_short_secret_is_replaced_where_it_stands_alone_only() -> None:
    secrets.register("pass")
    assert (
        secrets.redact("user pass, pass=pass; passed the compass")
        == "user ***, ***=***; passed the compass"
    )
    secrets.register("hf_LONGTOKENVALUE")
    assert secrets.redact("xhf_LONGTOKENVALUEx") == "x***x"


def test_short_values_are_not_registered(monkeypatch) -> None:
    secrets.register("ab")
    # A setting found by its name only (not a key) stays: "true" is no secret.
    monkeypatch.setenv("SOME_FEATURE_TOKEN", "true")
    secrets.register_environment()
    assert secrets.redact("a tab and a cab, true") == "a tab and a cab, true"


def test_a_secret_flag_is_known_by_its_dest_and_an_env_flag_by_the_variable_it_names(
    monkeypatch,
) -> None:
    monkeypatch.setenv("MY_LLM_KEY", "sk-FROMNAMEDVAR9")
    monkeypatch.setenv("SOME_SERVICE_API_KEY", "sk-FROMANYKEYVAR8")
    secrets.register_namespace(
        {
            "token": "hf_FROMFLAG77",
            "api_key_env": "MY_LLM_KEY",
            "tokens": "not-a-secret",
            "base_url": "http://u:FROMURL66@h/v1",
        }
    )
    text = "hf_FROMFLAG77 sk-FROMNAMEDVAR9 sk-FROMANYKEYVAR8 FROMURL66 not-a-secret"
    assert secrets.redact(text) == "*** *** *** *** not-a-secret"


def test_the_printed_command_hides_secrets_by_value() -> None:
    secrets.register("hf_GIVENBYVALUE5")
    line = command_line(
        [
            "nli",
            "evaluate",
            "--model",
            "m",
            "--tokn=hf_GIVENBYVALUE5",
            "--base-url",
            "http://a:b@h/v1",
        ]
    )
    assert line == "bias-hub nli evaluate --model m '--tokn=***' --base-url 'http://***@h/v1'"


@pytest.fixture
def cache_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The response cache, and the key in the environment as a user would set it."""
    root = tmp_path / "bias-hub-cache"
    monkeypatch.setenv("BIAS_HUB_CACHE", str(root))
    monkeypatch.setenv("OPENAI_API_KEY", ENV_KEY)
    return root


def _argv(url: str, dataset: Path, out: Path, *extra: str) -> list[str]:
    with_password = url.replace("http://", f"http://someone:{URL_PASSWORD}@")
    argv = [
        "jbbq",
        "evaluate",
        "--backend",
        "openai",
        "--model",
        "fake-model",
        "--base-url",
        with_password,
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
        "--token",
        TOKEN,
        "--preset",
        "",
        *extra,
    ]
    # The manifest and the resume command repeat the command line as the process got it.
    sys.argv = ["bias-hub", *argv]
    return argv


@pytest.fixture(autouse=True)
def _keep_argv(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", list(sys.argv))


def test_no_secret_reaches_the_run_folder_the_cache_or_the_console(
    tmp_path: Path, cache_root: Path, capsys
) -> None:
    dataset = write_fixture_dataset(tmp_path / "jbbq")
    out = tmp_path / "run"
    with FakeChatServer() as server:
        assert cli.main(_argv(server.url, dataset, out, "--scoring", "generate")) == 0
    printed = capsys.readouterr()
    assert (out / "results.json").is_file() and (out / "report.md").is_file()
    assert list(cache_root.rglob("*.json")), "the run cached no reply"
    assert _leaks(out, URL_PASSWORD, TOKEN, ENV_KEY) == []
    assert _leaks(cache_root, URL_PASSWORD, TOKEN, ENV_KEY) == []
    for value in (URL_PASSWORD, TOKEN, ENV_KEY):
        assert value not in printed.out + printed.err
    manifest = json.loads((out / "manifest.json").read_text())
    assert "--base-url 'http://***@127.0.0.1:" in manifest["command"]
    assert "--token '***'" in manifest["command"]


def test_the_resume_command_of_a_failed_run_carries_no_secret(
    tmp_path: Path, cache_root: Path, capsys
) -> None:
    dataset = write_fixture_dataset(tmp_path / "jbbq")
    with FakeChatServer() as server:
        server.plan = lambda key, attempt: 500
        code = cli.main(
            _argv(
                server.url, dataset, tmp_path / "run", "--scoring", "generate", "--max-retries", "0"
            )
        )
    err = capsys.readouterr().err
    assert code == 2
    assert "resumes" in err and "bias-hub jbbq evaluate" in err
    for value in (URL_PASSWORD, TOKEN, ENV_KEY):
        assert value not in err


QUERY_KEY = "QUERYKEY0123456789"


def test_a_key_in_the_base_url_s_query_reaches_no_file_cache_or_console(
    tmp_path: Path, cache_root: Path, capsys
) -> None:
    # Some proxies take the key as ?api_key=...: it is redacted as a URL's password is, and
    # the cache keys the endpoint without it.
    dataset = write_fixture_dataset(tmp_path / "jbbq")
    out = tmp_path / "run"
    with FakeChatServer() as server:
        argv = _argv(server.url, dataset, out, "--scoring", "generate")
        at = argv.index("--base-url") + 1
        argv[at] = f"{server.url}?api_key={QUERY_KEY}&model=x"
        sys.argv = ["bias-hub", *argv]
        assert cli.main(argv) == 0
    printed = capsys.readouterr()
    assert list(cache_root.rglob("*.json")), "the run cached no reply"
    assert _leaks(out, QUERY_KEY) == [] and _leaks(cache_root, QUERY_KEY) == []
    assert QUERY_KEY not in printed.out + printed.err
    manifest = json.loads((out / "manifest.json").read_text())
    assert "?api_key=***&model=x" in manifest["command"]
    entry = json.loads(next(cache_root.rglob("*.json")).read_text(encoding="utf-8"))
    assert entry["endpoint"].endswith("/v1/chat/completions?api_key=***&model=x")


def test_query_values_named_like_keys_are_redacted_whether_or_not_registered() -> None:
    text = (
        "GET https://proxy.example/v1/chat?apiKey=A1B2C3&lang=ja&access_token=T0K3N "
        "and https://x.example/blob?sig=S1G&se=2030 but ?api_key=outside-a-url stays"
    )
    assert secrets.redact(text) == (
        "GET https://proxy.example/v1/chat?apiKey=***&lang=ja&access_token=*** "
        "and https://x.example/blob?sig=***&se=2030 but ?api_key=outside-a-url stays"
    )


def test_variables_named_like_keys_tokens_and_secrets_are_registered(monkeypatch) -> None:
    monkeypatch.setenv("MY_SERVICE_KEY", "svc-KEYVALUE-1")
    monkeypatch.setenv("CI_DEPLOY_TOKEN", "dep-TOKENVALUE-2")
    monkeypatch.setenv("WEBHOOK_SECRET", "whk-SECRETVALUE-3")
    monkeypatch.setenv("KEYBOARD_LAYOUT", "jp106-layout")  # not named like a key
    secrets.register_environment()
    text = "svc-KEYVALUE-1 dep-TOKENVALUE-2 whk-SECRETVALUE-3 jp106-layout"
    assert secrets.redact(text) == "*** *** *** jp106-layout"


def test_a_secret_percent_encoded_in_either_case_or_wrapped_over_lines_is_redacted() -> None:
    secrets.register("hf_AbC/dEf+GhI=jKl")
    text = (
        "upper hf_AbC%2FdEf%2BGhI%3DjKl, lower hf_AbC%2fdEf%2bGhI%3djKl, "
        "wrapped hf_AbC/dEf+G\n    hI=jKl, and quoted\n> hf_AbC/dEf+GhI=\n> jKl."
    )
    assert secrets.redact(text) == ("upper ***, lower ***, wrapped ***, and quoted\n> ***.")
