"""Secrets redacted by their value, wherever the project writes text.

A token or key must never reach a file meant to be shared (``manifest.json``,
``results.json``, ``report.md``), a log, a cached API entry or a printed command, however
the user spelled the flag that carried it. So redaction does not look for ``--token``: it
replaces every *value* known to be secret, and the user-information part of every URL.

- ``register(value)``: a secret from now on (the command line registers the value of every
  flag whose name is a secret, ``--token`` and the like, and of every environment variable
  that holds one: ``HF_TOKEN``, ``OPENAI_API_KEY``, the variable a ``--*-api-key-env`` flag
  names, ...; ``api_cache.api_key`` registers what it reads).
- ``redact(text)``: each registered value becomes ``***`` -- as typed, percent-encoded (in
  either case of hex digit) and, for a long value, broken over lines -- and
  ``scheme://user:password@host`` becomes ``scheme://***@host`` and a URL's query value
  named like a key (``?api_key=...``, ``&token=...``, ``&sig=...``) ``***`` (registered or not).
- ``redact_data(data)``: the same through dicts, lists and strings (JSON before it is written).

Values shorter than ``MIN_LENGTH`` characters are not registered: replacing every ``ab`` of
a report would garble it, and such a value protects nothing anyway. A value shorter than 12
characters is replaced only where no letter or digit touches it (a password ``pass`` leaves
``passed`` alone); a longer one wherever it appears.
"""

from __future__ import annotations

import os
import re
import threading
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "MASK",
    "MIN_LENGTH",
    "is_secret_name",
    "redact",
    "redact_data",
    "register",
    "register_environment",
    "register_namespace",
    "registered",
]

MASK = "***"
MIN_LENGTH = 4
# A flag dest or environment variable that holds a secret itself (not its name: *_env):
# *_TOKEN, *_KEY, *_SECRET, *_PASSWORD and the like.
_SECRET_NAME = re.compile(r"(^|_)(token|password|passwd|secret|key|apikey|credentials?)$", re.I)
# scheme://USERINFO@ -- the userinfo runs to the last @ before the path.
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s@]+(?:@[^/?#\s@]+)*)@"
)
# A URL, and in it a query parameter whose name says key (api_key, apiKey, access_token, sig...):
# some proxies take the key there instead of in a header.
# (From "://" on, a literal the regex engine finds fast: this runs over every file a run writes.)
_URL = re.compile(r"://[^\s'\"<>`?]*\?[^\s'\"<>`]+")
_SECRET_QUERY = re.compile(
    r"(?P<name>[?&;][\w.\-]*?(?:key|token|secret|password|passwd|pwd|sig|signature|auth|"
    r"credentials?)=)(?P<value>[^&#;\s'\"<>`]+)",
    re.I,
)

_lock = threading.Lock()
_values: set[str] = set()
_pattern: re.Pattern[str] | None = None


def is_secret_name(name: str) -> bool:
    """Whether a flag dest or environment variable name says it holds a secret."""
    return bool(_SECRET_NAME.search(name))


def register(value: Any) -> None:
    """Redact ``value`` (a string of at least ``MIN_LENGTH`` characters) from now on, as typed,
    percent-encoded as in a URL, and (given percent-encoded) decoded."""
    global _pattern
    if not isinstance(value, str) or len(value) < MIN_LENGTH:
        return
    forms = {value, urllib.parse.unquote(value)}
    forms = {form for form in forms if len(form) >= MIN_LENGTH}
    with _lock:
        if forms <= _values:
            return
        _values.update(forms)
        _pattern = re.compile(
            "|".join(_alternative(v) for v in sorted(_values, key=len, reverse=True))
        )


# A short secret (a URL password such as "pass") is replaced only where it stands alone, so
# that "passed" in a report survives; a long one (a real token) wherever it appears.
_SHORT = 12


# Where a long value may be broken over lines (a wrapped log line, a folded report cell).
_BREAK = r"(?:\r?\n[ \t>]*)?"


def _character(char: str) -> str:
    """``char`` as typed or percent-encoded, with hex digits in either case (%2f and %2F).
    Letters, digits and ``-_.~`` are never encoded in a URL: matched as typed only (a pattern
    of literals runs several times faster over a large report)."""
    if char.isascii() and (char.isalnum() or char in "-_.~"):
        return re.escape(char)
    encoded = "".join(
        "%" + "".join(f"[{h}{h.upper()}]" if h.isalpha() else h for h in f"{byte:02x}")
        for byte in char.encode("utf-8")
    )
    return f"(?:{re.escape(char)}|{encoded})"


def _alternative(value: str) -> str:
    # Longest first (the caller sorts), so that a secret containing another is replaced whole.
    if len(value) >= _SHORT:
        return _BREAK.join(_character(char) for char in value)
    body = "".join(_character(char) for char in value)
    return rf"(?<![A-Za-z0-9]){body}(?![A-Za-z0-9])"


def registered() -> frozenset[str]:
    return frozenset(_values)


def _register_url(text: str) -> None:
    for match in _USERINFO.finditer(text):
        userinfo = match.group("userinfo")
        register(userinfo)
        _, _, password = userinfo.partition(":")
        register(password)
    for url in _URL.finditer(text):
        for match in _SECRET_QUERY.finditer(url.group()):
            register(match.group("value"))


# An environment variable found by its name alone must look like a key to be registered: a
# setting such as SOME_TOKEN=true must not turn every "true" of a report into ***.
_ENV_MIN_LENGTH = 8


def register_environment(names: Iterable[str] = ()) -> None:
    """Register every environment variable whose name says secret (values of at least 8
    characters), and the variables ``names`` (the ones a flag says hold a key)."""
    for name, value in os.environ.items():
        if is_secret_name(name) and len(value) >= _ENV_MIN_LENGTH:
            register(value)
    for name in names:
        register(os.environ.get(name))


def register_namespace(values: Mapping[str, Any]) -> None:
    """Register the secrets among parsed flags: the value of every flag whose dest is a secret,
    the variable every ``*_env`` flag names, and the userinfo of every URL given."""
    env_names = []
    for dest, value in values.items():
        items = value if isinstance(value, (list, tuple)) else [value]
        for item in items:
            if not isinstance(item, str):
                continue
            if is_secret_name(dest):
                register(item)
            elif dest.endswith("_env") and is_secret_name(dest.removesuffix("_env")):
                env_names.append(item)
            _register_url(item)
    register_environment(env_names)


def redact(text: str) -> str:
    """``text`` with every registered secret, every URL's userinfo and every URL query value
    named like a key replaced by ``***``."""
    if not isinstance(text, str) or not text:
        return text
    text = _USERINFO.sub(lambda m: f"{m.group('scheme')}{MASK}@", text)
    if "://" in text:
        text = _URL.sub(_redact_query, text)
    pattern = _pattern
    return pattern.sub(MASK, text) if pattern is not None else text


def _redact_query(url: re.Match[str]) -> str:
    return _SECRET_QUERY.sub(lambda m: f"{m.group('name')}{MASK}", url.group())


def redact_data(data: Any) -> Any:
    """``redact`` applied to every string in nested dicts (keys too), lists and tuples."""
    if isinstance(data, str):
        return redact(data)
    if isinstance(data, Mapping):
        return {redact_data(key): redact_data(value) for key, value in data.items()}
    if isinstance(data, (list, tuple)):
        return [redact_data(item) for item in data]
    return data
