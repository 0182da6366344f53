"""``publish --push`` deletes nothing on the Hub that it did not list first and was told to
delete (``--prune``); a Hub error that echoes the token prints ``***``.

The sweep found ``upload_folder(..., delete_patterns="*")``: a file added on the Hub by hand
went with the next push, and neither the dry run nor ``--help`` said so; and the CLI's last
error line printed a token a Hub error echoed (log lines were redacted, that line was not).
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from bias_hub.builders.shared import secrets
from bias_hub.pipelines import cli
from bias_hub.pipelines.publish.command import publish

TOKEN = "hf_STOREDLOGIN1234567"
_spec = importlib.util.spec_from_file_location(
    "publish_fixtures", Path(__file__).resolve().parents[1] / "pipelines" / "publish_fixtures.py"
)
fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fixtures)


@pytest.fixture(autouse=True)
def _own_registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(secrets, "_values", set())
    monkeypatch.setattr(secrets, "_pattern", None)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    fixtures.make_nli_folder(tmp_path / "datasets")
    fixtures.make_metric_module(tmp_path / "metrics")
    return tmp_path


def _publish(root: Path, hub, **kwargs) -> str:
    lines: list[str] = []
    publish(
        "bias-hub",
        datasets_root=root / "datasets",
        metrics_root=root / "metrics",
        only=["tiny_nli"],
        api=hub,
        echo=lines.append,
        **kwargs,
    )
    return "\n".join(lines)


def test_a_push_keeps_files_added_on_the_hub_unless_prune(tree: Path) -> None:
    hub = fixtures.FakeHub()
    _publish(tree, hub, push=True)
    files = hub.repos[("dataset", "bias-hub/tiny_nli")]["files"]
    files["notes/by hand [draft].md"] = b"written on the Hub"
    printed = _publish(tree, hub, push=True)
    assert files["notes/by hand [draft].md"] == b"written on the Hub"
    assert (
        "bias-hub/tiny_nli: 1 files on the Hub kept: not in the plan (--prune deletes them): "
        "notes/by hand [draft].md"
    ) in printed
    # --prune deletes exactly what it listed (the brackets matched as themselves), nothing else.
    files["keep.md"] = b"added after the listing"
    printed = _publish(tree, hub, push=True, prune=True)
    assert "2 files on the Hub deleted by this push (--prune)" in printed
    assert "notes/by hand [draft].md" not in files and "keep.md" not in files
    assert ".gitattributes" in files and "README.md" in files


def test_the_dry_run_and_help_say_what_a_push_deletes(tree: Path, capsys) -> None:
    printed = _publish(tree, fixtures.FakeHub())
    assert "A push lists the files on the Hub that the plan lacks and keeps them" in printed
    assert "(--prune deletes them)" in printed
    with pytest.raises(SystemExit):
        cli.main(["publish", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "--prune" in help_text and "A push never deletes a file already on the Hub" in help_text


class _EchoingHub(fixtures.FakeHub):
    """A Hub that rejects the token and echoes it in its error, as some proxies do."""

    def __init__(self, token: str | None = None) -> None:
        super().__init__()
        self.token = token

    def whoami(self):
        import httpx2
        from huggingface_hub.errors import HfHubHTTPError

        response = httpx2.Response(
            401, request=httpx2.Request("GET", "https://huggingface.co/api/whoami-v2")
        )
        raise HfHubHTTPError(f"401 Unauthorized: token {self.token} is invalid", response=response)


@pytest.mark.parametrize("where", ["stored login", "HF_TOKEN"])
def test_a_hub_error_that_echoes_the_token_prints_stars(
    tree: Path, monkeypatch, capsys, where: str
) -> None:
    import huggingface_hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    if where == "HF_TOKEN":
        monkeypatch.setenv("HF_TOKEN", TOKEN)
    else:
        monkeypatch.delenv("HF_TOKEN", raising=False)
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: TOKEN)
    # A class, as HfApi is (transformers annotates with `HfApi | None` when imported).
    monkeypatch.setattr(huggingface_hub, "HfApi", _EchoingHub)
    code = cli.main(
        [
            "publish",
            "--namespace",
            "bias-hub",
            "--only",
            "tiny_nli",
            "--datasets-root",
            str(tree / "datasets"),
            "--metrics-root",
            str(tree / "metrics"),
            "--push",
        ]
    )
    printed = capsys.readouterr()
    assert code == 2 and "the Hub rejected the token" in printed.err
    assert TOKEN not in printed.out + printed.err
    assert "token *** is invalid" in printed.err


def test_a_traceback_is_redacted_too(capsys) -> None:
    secrets.register(TOKEN)
    try:
        raise RuntimeError(f"a library failed with {TOKEN}")
    except RuntimeError as err:
        cli._redacting_excepthook(type(err), err, err.__traceback__)
    err = capsys.readouterr().err
    assert "RuntimeError: a library failed with ***" in err and TOKEN not in err


def test_a_data_file_linked_from_outside_the_folder_is_not_published(tmp_path: Path) -> None:
    # A public folder whose split is a link into another (say, a licensed) dataset's files.
    fixtures.make_nli_folder(tmp_path / "datasets")
    fixtures.make_metric_module(tmp_path / "metrics")
    data = tmp_path / "datasets" / "tiny_nli" / "ps" / "test-00000-of-00001.parquet"
    elsewhere = tmp_path / "licensed.parquet"
    data.rename(elsewhere)
    data.symlink_to(elsewhere)
    hub = fixtures.FakeHub()
    with pytest.raises(ValueError, match="is a link to .*licensed.parquet, outside the folder"):
        _publish(tmp_path, hub, push=True)
    assert hub.uploads() == []
