"""Secrets redacted by their value, wherever the project writes text.

A token must never reach a shared file, a log, a cached API entry or a printed command,
however the user spelled the flag that carried it, so redaction replaces every *value* known
to be secret and every text shaped like a credential, not a flag name.

- ``register(value)``: a secret from now on (the command line registers secret-named flags and
  environment variables; ``api_cache.api_key`` what it reads).
- ``redact(text)``: each registered value -> ``***`` (as typed, percent-encoded, HTML-escaped,
  in hex, inside base64, broken over lines); and, registered or not, URL credentials and
  key-named query values, ``Bearer``/``Basic`` credentials and JWT-shaped texts.
- ``redact_data(data)``: the same through dicts, lists and strings.

Values shorter than ``MIN_LENGTH`` are not registered (replacing every ``ab`` would garble a
report and protects nothing); one shorter than 12 characters is replaced only where no letter
or digit touches it (``pass`` leaves ``passed`` alone).
"""

from __future__ import annotations

import base64
import html
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
# *_TOKEN, *_KEY, *_SECRET, *_PASSWORD, *_PAT and the like (not PWD, the working folder), and
# their plurals after a prefix (API_KEYS; a flag ``--tokens`` counts words).
_SECRET_NAME = re.compile(
    r"(^|_)(token|password|passwd|secret|key|apikey|pat|credentials?)$"
    r"|_(tokens|passwords|secrets|keys|apikeys|pats)$",
    re.I,
)
# scheme://USERINFO@ -- the userinfo runs to the last @ before the path.
_USERINFO = re.compile(
    r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s@]+(?:@[^/?#\s@]+)*)@"
)
# A URL with a query or a fragment, and in it a parameter whose name says key (api_key, apiKey,
# access_token, sig, session, jwt, an OAuth code...): some proxies take the key there instead
# of in a header, and an OAuth redirect puts its token in the fragment.
# (From "://" on, a literal the regex engine finds fast: this runs over every file a run writes.)
_URL = re.compile(r"://[^\s'\"<>`?#]*[?#][^\s'\"<>`]+")
_SECRET_QUERY = re.compile(
    r"(?P<name>[?&;#](?:[\w.\-]*?(?:key|token|secret|password|passwd|pwd|sig|signature|auth|"
    r"credentials?|session|jwt)|code|state)=)(?P<value>[^&#;\s'\"<>`]+)",
    re.I,
)
# An HTTP authorization's credential: a Bearer token (16 characters at least) or Basic's base64
# of user:password (it must decode to one), so that "Basic settings" or a progress line's
# "basic 0-shot" stays.
_AUTHORIZATION = re.compile(
    r"(?P<scheme>\b(?:Bearer|Basic)\s+)(?P<value>[A-Za-z0-9\-._~+/]+=*)", re.I
)
# A JSON Web Token: three base64url parts, the first two JSON objects ("eyJ" is base64 of '{"').
_JWT = re.compile(r"\beyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*")
# The characters of a run of base64 (standard or URL-safe): around the base64 of a registered
# value, the whole run is masked, so that no part of the credential it encodes stays.
_BASE64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")

_lock = threading.Lock()
_values: set[str] = set()
_pattern: re.Pattern[str] | None = None


def is_secret_name(name: str) -> bool:
    """Whether a flag dest or environment variable name says it holds a secret."""
    return bool(_SECRET_NAME.search(name))


def register(value: Any) -> None:
    """Redact ``value`` (a string of at least ``MIN_LENGTH`` characters) from now on, as typed,
    percent-encoded as in a URL, HTML-escaped, in hex and inside base64, and (given
    percent-encoded) decoded."""
    global _pattern
    if not isinstance(value, str) or len(value) < MIN_LENGTH:
        return
    forms = {value, urllib.parse.unquote(value)}
    forms |= {html.escape(form, quote=quote) for form in forms for quote in (True, False)}
    forms |= {form.encode().hex() for form in forms} | {
        form.encode().hex().upper() for form in forms
    }
    forms = {form for form in forms if len(form) >= MIN_LENGTH}
    with _lock:
        if forms <= _values:
            return
        _values.update(forms)
        ordered = sorted(_values, key=len, reverse=True)
        cores = sorted({core for v in ordered for core in _base64_cores(v)}, key=len, reverse=True)
        _pattern = re.compile(
            "|".join(_alternative(v) for v in ordered)
            + (f"|(?P<base64>{'|'.join(map(re.escape, cores))})" if cores else "")
        )


def _base64_cores(value: str) -> set[str]:
    """The base64 text of ``value`` wherever it sits in a longer text (the three alignments to
    base64's 3-byte groups, each the groups that hold its bytes alone), standard and URL-safe."""
    data = value.encode("utf-8")
    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data).decode("ascii")
        first, last = (1 if offset else 0), (offset + len(data)) // 3
        core = encoded[4 * first : 4 * last]
        if len(core) >= 8:  # two groups at least: a shorter one is too common to mean the value
            cores |= {core, core.replace("+", "-").replace("/", "_")}
    return cores


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
        register(match.group("userinfo"))
        register(match.group("userinfo").partition(":")[2])  # the password
    for url in _URL.finditer(text):
        for match in _SECRET_QUERY.finditer(url.group()):
            register(match.group("value"))


# An environment variable found by its name alone must look like a secret to be registered: a
# setting such as SOME_TOKEN=true or MAX_TOKENS=4096 must not turn every "true" or "4096" of a
# report into ***; a 7-character password must still be.
_ENV_MIN_LENGTH = 6
_SETTING_WORDS = {"true", "false", "none", "null", "auto", "enabled", "disabled", "default"}


def _looks_secret(value: str) -> bool:
    return (
        len(value) >= _ENV_MIN_LENGTH
        and any(c.isalpha() for c in value)
        and value.lower() not in _SETTING_WORDS
    )


def register_environment(names: Iterable[str] = ()) -> None:
    """Register every environment variable whose name says secret (values of at least 6
    characters holding a letter, settings words aside), and the variables ``names`` (the ones
    a flag says hold a key)."""
    for name, value in os.environ.items():
        if is_secret_name(name) and _looks_secret(value):
            register(value)
    for name in names:
        register(os.environ.get(name))


def register_namespace(values: Mapping[str, Any]) -> None:
    """Register the secrets among parsed flags: the value of every flag whose dest is a secret,
    the variable every ``*_env`` flag names, and the userinfo of every URL given."""
    env_names = []
    for dest, value in values.items():
        for item in value if isinstance(value, (list, tuple)) else [value]:
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
    if "eyJ" in text:
        text = _JWT.sub(MASK, text)
    text = _AUTHORIZATION.sub(_redact_authorization, text)
    pattern = _pattern
    return _mask(pattern, text) if pattern is not None else text


def _mask(pattern: re.Pattern[str], text: str) -> str:
    """Every match of ``pattern`` as ``***``; a base64 one with the whole base64 run around it."""
    if "base64" not in pattern.groupindex:
        return pattern.sub(MASK, text)
    parts, done = [], 0
    for match in pattern.finditer(text):
        start, end = match.span()
        if start < done:
            continue
        if match.lastgroup == "base64":
            while start > done and text[start - 1] in _BASE64_CHARS:
                start -= 1
            while end < len(text) and text[end] in _BASE64_CHARS:
                end += 1
            while end < len(text) and text[end] == "=":
                end += 1
        parts += [text[done:start], MASK]
        done = end
    return "".join(parts) + text[done:]


def _redact_authorization(match: re.Match[str]) -> str:
    value = match.group("value")
    if match.group("scheme").lower().startswith("bearer"):
        credential = len(value) >= 16
    else:
        try:
            credential = b":" in base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        except ValueError:
            credential = False
    return f"{match.group('scheme')}{MASK}" if credential else match.group()


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
