"""Paid API calls done once: an on-disk response cache keyed by request, retries, keys from the environment.

Every external-API client (``jbbq evaluate --backend openai``, the DeepL translation, the LLM
gender swap) goes through ``CachedAPI``:

- **Cache**: one JSON file per request under ``$BIAS_HUB_CACHE/api/<service>``, keyed by the
  SHA-256 of endpoint and request body (never the API key), written by rename so that a kill
  mid-write leaves no half entry; an unreadable entry is asked again.
- **Retries** (``tenacity``): transient errors and malformed replies share one budget of
  ``max_retries`` per request, the wait doubling from ``backoff`` or following ``Retry-After``.
  The official clients' own retries are off for the client driven here, so the budget counts once.
- **Counted**: ``usage()`` / ``summary()`` give requests, retries by cause and cache hits; a
  paid API's retries are paid for.
- **Stopping**: after a failure for good nothing new is sent, requests in flight are cached, and
  ``APIFailure`` names the endpoint, the items answered and the command that resumes.
- **Keys** come from an environment variable; never logged nor written.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import logging
import os
import random
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.console import command_line, progress
from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.files import atomic_write_text
from bias_hub.builders.shared.secrets import redact, register

__all__ = [
    "APIFailure",
    "CachedAPI",
    "MalformedReply",
    "ResponseCache",
    "api_key",
    "default_cache_dir",
    "retry_after_seconds",
]

log = logging.getLogger(__name__)

# A temporary file older than this was left by a killed writer (a live one renames within seconds).
_STALE_TEMP_SECONDS = 3600


class MalformedReply(ValueError):
    """A reply that is not JSON, or not the shape the endpoint promises; retried like a 5xx."""


class APIFailure(UserError):
    """The API kept failing or refused a request; what was answered is cached."""


def default_cache_dir(service: str) -> Path:
    """``$BIAS_HUB_CACHE/api/<service>`` (default ``~/.cache/bias-hub/api/<service>``)."""
    root = os.environ.get("BIAS_HUB_CACHE") or Path.home() / ".cache" / "bias-hub"
    return Path(root) / "api" / service


def api_key(env: str, *, flag: str, needed_for: str | None) -> str | None:
    """The key in environment variable ``env``; a ``ValueError`` naming ``flag`` when it is
    missing and ``needed_for`` (an endpoint that needs one) is given. Never logged or cached."""
    key = os.environ.get(env) or None
    register(key)
    if key is None and needed_for:
        raise ValueError(
            f"{flag}: environment variable {env} is not set (needed for {needed_for}); "
            "keys are read from the environment only"
        )
    return key


def retry_after_seconds(headers: Any) -> float | None:
    """The server's wait from ``Retry-After-Ms`` / ``Retry-After`` (seconds or an HTTP date)."""
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(float(value) / scale, 0.0)
        except ValueError:
            when = email.utils.parsedate_tz(value)
            if when is not None:
                return max(email.utils.mktime_tz(when) - time.time(), 0.0)
    return None


class ResponseCache:
    """Responses on disk, one JSON file per request (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str], flag: str = "--cache-dir") -> None:
        self.root = Path(root).expanduser()
        self._check_writable(flag)
        self._remove_stale_temporaries()

    def _check_writable(self, flag: str) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            # A real write: permission bits say little (root passes os.access everywhere).
            with tempfile.TemporaryFile(dir=self.root):
                pass
        except OSError as err:
            raise ValueError(
                f"{flag} {self.root}: the API response cache cannot be written there "
                f"({err.strerror or err}); answers would be paid for and lost. Pick another "
                f"folder with {flag} or set BIAS_HUB_CACHE"
            ) from None

    def _remove_stale_temporaries(self) -> None:
        cutoff = time.time() - _STALE_TEMP_SECONDS
        for path in self.root.glob("*/.*.json.*"):
            try:
                if path.stat().st_mtime < cutoff:
                    path.unlink()
            except OSError:
                continue

    @staticmethod
    def key(endpoint: str, body: dict) -> str:
        canonical = json.dumps(
            {"endpoint": endpoint, "request": body}, sort_keys=True, ensure_ascii=False
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()

    def path(self, endpoint: str, body: dict) -> Path:
        key = self.key(endpoint, body)
        return self.root / key[:2] / f"{key}.json"

    def get(self, endpoint: str, body: dict) -> Any | None:
        """The cached response, or None (also for an entry that cannot be read: asked again)."""
        path = self.path(endpoint, body)
        try:
            entry = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as err:
            log.warning("API cache: %s is unreadable (%s); asking again", path, err)
            return None
        if (
            not isinstance(entry, dict)
            or entry.get("endpoint") != endpoint
            or entry.get("request") != body
        ):
            log.warning("API cache: %s does not hold this request; asking again", path)
            return None
        return entry.get("response")

    def put(self, endpoint: str, body: dict, response: Any) -> Path:
        entry = {"endpoint": endpoint, "request": body, "response": response}
        return atomic_write_text(
            self.path(endpoint, body), json.dumps(entry, ensure_ascii=False) + "\n"
        )


Send = Callable[[list[dict]], list]


class CachedAPI:
    """Answers for request bodies: from the cache, else from ``send`` with retries.

    ``send(bodies)`` makes ONE request to the service for a batch of bodies (one body
    when ``batch_size`` is 1) and returns one response per body, as JSON-able values;
    it raises ``MalformedReply`` for a reply of the wrong shape and the official
    client's exceptions (``client_errors``: their classes, or a test of an exception, so that
    a client imported only when a request is sent need not be imported to build this) otherwise.
    ``retryable(err)`` says which of those are transient; the others are refusals, reported at
    once. ``wait_hint(err)`` may return the server's ``Retry-After``. Any other exception is a
    bug and propagates.
    """

    def __init__(
        self,
        endpoint: str,
        send: Send,
        cache: ResponseCache,
        *,
        retryable: Callable[[BaseException], bool],
        client_errors: tuple[type[BaseException], ...] | Callable[[BaseException], bool] = (),
        wait_hint: Callable[[BaseException], float | None] = lambda err: None,
        max_retries: int = 5,
        backoff: float = 1.0,
        max_backoff: float = 60.0,
        concurrency: int = 1,
        batch_size: int = 1,
        unit: str = "requests",
        flag_prefix: str = "--",
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        for name, value, low in (
            ("max-retries", max_retries, 0),
            ("backoff", backoff, 0),
            ("concurrency", concurrency, 1),
            ("batch-size", batch_size, 1),
        ):
            if value < low:
                raise ValueError(f"{flag_prefix}{name} must be >= {low}, got {value}")
        # The endpoint is what the cache keys, its entries record and messages name: never
        # with the credentials a URL may carry (user:password@host).
        self.endpoint = redact(endpoint)
        self.cache = cache
        self._send = send
        self._retryable = retryable
        self._client_error = (
            client_errors if callable(client_errors) else lambda err: isinstance(err, client_errors)
        )
        self._wait_hint = wait_hint
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.concurrency = concurrency
        self.batch_size = batch_size
        self.unit = unit
        self._sleep = sleep
        self._lock = threading.Lock()
        # HTTP requests sent (retries included), items answered by them, items found in the cache,
        # and the failed requests that were sent again, by cause.
        self.attempts = 0
        self.answered = 0
        self.from_cache = 0
        self.retried: Counter = Counter()

    # ---- one request, with retries ---------------------------------------------------------

    def _wait(self, state) -> float:
        hint = self._wait_hint(state.outcome.exception())
        if hint is not None:
            return min(hint, self.max_backoff)
        delay = min(self.max_backoff, self.backoff * 2 ** (state.attempt_number - 1))
        # Several requests refused at once should not all come back at the same moment.
        return delay * (0.5 + random.random() / 2) if self.concurrency > 1 else delay

    def _should_retry(self, err: BaseException) -> bool:
        return isinstance(err, MalformedReply) or self._retryable(err)

    def _count_retry(self, state) -> None:
        err = state.outcome.exception()
        with self._lock:
            first = not self.retried
            self.retried[_cause(err)] += 1
        log.debug(
            "%s: attempt %d failed (%s); retrying",
            self.endpoint,
            state.attempt_number,
            _describe(err),
        )
        if first:
            log.warning(
                "%s: a request failed: %s; it is sent again (at most %d times each), and every "
                "retry is counted and said at the end",
                self.endpoint,
                _describe(err),
                self.max_retries,
            )

    def usage(self) -> dict:
        """What this client sent and found: ``sent`` (HTTP requests, retries included),
        ``retried`` (requests sent again) and ``retried_by_cause``, ``answered`` (items),
        ``cache_hits`` (items) and the ``cache_dir``."""
        with self._lock:
            return {
                "endpoint": self.endpoint,
                "sent": self.attempts,
                "retried": sum(self.retried.values()),
                "retried_by_cause": dict(self.retried.most_common()),
                "answered": self.answered,
                "cache_hits": self.from_cache,
                "cache_dir": str(self.cache.root),
            }

    def summary(self) -> str:
        """``usage()`` in a line: ``retried 299 of 2,099 requests: 150 × HTTP 503, 149 ×
        HTTP 429; cache hits 0 (...)``."""
        used = self.usage()
        causes = ", ".join(f"{n:,} × {cause}" for cause, n in used["retried_by_cause"].items())
        return (
            f"{self.endpoint}: retried {used['retried']:,} of {used['sent']:,} requests"
            f"{': ' + causes if causes else ''}; {used['answered']:,} {self.unit} answered, "
            f"cache hits {used['cache_hits']:,} (cache {used['cache_dir']})"
        )

    def _attempt(self, bodies: list[dict]) -> list:
        with self._lock:
            self.attempts += 1
        responses = self._send(bodies)
        if len(responses) != len(bodies):
            raise MalformedReply(f"{len(responses)} answers for {len(bodies)} items")
        return responses

    def _call(self, bodies: list[dict]) -> list:
        import tenacity

        retrying = tenacity.Retrying(
            stop=tenacity.stop_after_attempt(self.max_retries + 1),
            wait=self._wait,
            retry=tenacity.retry_if_exception(self._should_retry),
            sleep=self._sleep,
            before_sleep=self._count_retry,
            reraise=True,
        )
        try:
            responses = retrying(self._attempt, bodies)
        except Exception as err:
            attempts = retrying.statistics.get("attempt_number", 1)
            if self._should_retry(err):
                raise _Failed(
                    f"still failing after {attempts} attempt(s): {_describe(err)}"
                ) from err
            if self._client_error(err):
                raise _Failed(f"refused a request ({_describe(err)}); this is not retried") from err
            raise
        for body, response in zip(bodies, responses, strict=True):
            self.cache.put(self.endpoint, body, response)
        with self._lock:
            self.answered += len(bodies)
        return responses

    # ---- many requests ---------------------------------------------------------------------

    def answer(
        self, bodies: Sequence[dict], *, progress_bar: bool = True, desc: str = "api"
    ) -> list:
        """The response for each body, in order; the same body twice is sent once."""
        bodies = list(bodies)
        responses: list = [self.cache.get(self.endpoint, body) for body in bodies]
        self.from_cache += sum(response is not None for response in responses)
        first_of: dict[str, int] = {}
        for i, response in enumerate(responses):
            if response is None:
                first_of.setdefault(self.cache.key(self.endpoint, bodies[i]), i)
        todo = list(first_of.values())
        if todo:
            log.debug(
                "%s: %d of %d %s cached, %d to ask",
                self.endpoint,
                len(bodies) - len(todo),
                len(bodies),
                self.unit,
                len(todo),
            )
        batches = [todo[i : i + self.batch_size] for i in range(0, len(todo), self.batch_size)]
        for _ in progress(
            self._run(batches, bodies, responses),
            desc=desc,
            total=len(todo),
            unit="req",
            enabled=progress_bar and bool(todo),
        ):
            pass
        for i, response in enumerate(responses):
            if response is None:
                responses[i] = responses[first_of[self.cache.key(self.endpoint, bodies[i])]]
        return responses

    def _run(self, batches: list[list[int]], bodies: list[dict], responses: list) -> Iterator[int]:
        """Send the batches, at most ``concurrency`` at once; yields once per item answered.

        After a failure nothing new is sent; requests in flight finish (they are paid
        for, so they are cached) before ``APIFailure`` is raised.
        """
        if not batches:
            return
        failure: _Failed | None = None
        queue = iter(batches)
        pending: dict[Future, list[int]] = {}
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        try:
            while True:
                while failure is None and len(pending) < self.concurrency:
                    batch = next(queue, None)
                    if batch is None:
                        break
                    pending[pool.submit(self._call, [bodies[i] for i in batch])] = batch
                if not pending:
                    break
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for future in finished:
                    batch = pending.pop(future)
                    try:
                        answers = future.result()
                    except _Failed as err:
                        failure = failure or err
                        continue
                    for i, response in zip(batch, answers, strict=True):
                        responses[i] = response
                        yield i
        finally:
            # Also on Ctrl-C: requests in flight finish and are cached.
            pool.shutdown(wait=True, cancel_futures=True)
        if failure is not None:
            answered = {
                self.cache.key(self.endpoint, b)
                for b, r in zip(bodies, responses, strict=True)
                if r is not None
            }
            total = len({self.cache.key(self.endpoint, body) for body in bodies})
            raise APIFailure(
                f"{self.endpoint} {failure}. Stopped with {len(answered)} of {total} {self.unit} answered; "
                f"the answers are cached in {self.cache.root}, so running the same command again "
                f"resumes without paying twice: {command_line()}"
            ) from failure.__cause__


class _Failed(Exception):
    """One batch failed for good (its cause attached)."""


def _cause(err: BaseException | None) -> str:
    """What made a request fail, for counting: its HTTP status, else the kind of error."""
    status = getattr(err, "status_code", None) or getattr(err, "http_status_code", None)
    if status:
        return f"HTTP {status}"
    return "malformed reply" if isinstance(err, MalformedReply) else type(err).__name__


def _describe(err: BaseException | None) -> str:
    if err is None:
        return "no error"
    status = getattr(err, "status_code", None) or getattr(err, "http_status_code", None)
    text = str(err).strip().splitlines()[0] if str(err).strip() else ""
    return (
        f"{type(err).__name__}{f' (HTTP {status})' if status else ''}{': ' + text if text else ''}"
    )
