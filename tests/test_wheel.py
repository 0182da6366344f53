"""The package as a user installs it: the wheel, a fresh environment, any folder.

The slow test builds the wheel with ``uv build --wheel`` from a copy of the sources, installs
it with the CPU torch wheel ``make setup`` uses into a new venv (``uv pip install``, served by
the local cache once the stack was installed once), then, from a folder that is not the
checkout, runs ``bias-hub build speciesism_templates`` and ``bias-hub speciesism`` on a tiny
masked LM made here. The fast tests check where the data root is, in and out of a checkout.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from bias_hub.pipelines.common import locations

REPO_ROOT = Path(__file__).resolve().parents[1]
# What `uv build` reads: the metadata, the packages and the metric modules (tests, datasets,
# reports and the venv stay behind, as in an sdist).
SOURCES = (
    "pyproject.toml",
    "setup.py",
    "README.md",
    "__init__.py",
    "__main__.py",
    "builders",
    "pipelines",
    "metrics",
)
TORCH = "torch==2.13.0"
OFFLINE = {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "HF_EVALUATE_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "MPLBACKEND": "Agg",
    "OMP_NUM_THREADS": "1",
    "PYTHONDONTWRITEBYTECODE": "1",
}


def _metric_names() -> list[str]:
    return sorted(
        p.name for p in (REPO_ROOT / "metrics").iterdir() if (p / f"{p.name}.py").is_file()
    )


# --- where the data lives ------------------------------------------------------------------


def test_a_checkout_reads_and_builds_its_own_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(locations.DATA_ENV, "/somewhere/else")  # only an installed copy reads it
    assert locations.in_checkout()
    assert locations.default_datasets_root() == REPO_ROOT / "datasets"
    assert locations.default_metrics_root() == REPO_ROOT / "metrics"
    from bias_hub.pipelines.cli import build_parser

    args = build_parser().parse_args(["build", "speciesism_templates"])
    assert Path(args.out_root) == REPO_ROOT / "datasets"


def test_installed_copy_uses_the_data_root_and_its_own_metrics(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    site = tmp_path / "site-packages"
    monkeypatch.setattr(locations, "repo_root", lambda: site)
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_DATA_HOME", raising=False)
    monkeypatch.delenv(locations.DATA_ENV, raising=False)
    assert not locations.in_checkout()
    assert (
        locations.default_datasets_root()
        == tmp_path / "home" / ".local" / "share" / "bias-hub" / "datasets"
    )
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert locations.default_datasets_root() == tmp_path / "xdg" / "bias-hub" / "datasets"
    monkeypatch.setenv(locations.DATA_ENV, str(tmp_path / "mine"))
    assert locations.default_datasets_root() == tmp_path / "mine" / "datasets"
    assert locations.default_metrics_root() == site / "metrics"
    # A flag still wins over every default.
    with pytest.raises(
        FileNotFoundError, match=r"--dataset x: .*/flag/x is not a built dataset folder"
    ):
        locations.dataset_folder("x", tmp_path / "flag")
    with pytest.raises(FileNotFoundError, match=r"/mine/datasets/x is not a built dataset folder"):
        locations.dataset_folder("x")


# --- the wheel, installed ------------------------------------------------------------------


def _uv() -> str:
    uv = shutil.which(
        "uv", path=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"
    )
    if uv is None:
        pytest.skip(
            "uv is not installed (make setup installs it into .venv when the registry allows)"
        )
    return uv


def _torch_requirement() -> str:
    """The CPU torch wheel `make setup` installs: pip's choice under this machine's configuration
    (a bare `torch` from the registry would be a multi-GB CUDA build)."""
    report = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "--dry-run",
            "--quiet",
            "--no-deps",
            "--ignore-installed",
            "--report",
            "-",
            TORCH,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if report.returncode != 0:
        return TORCH
    return f"torch @ {json.loads(report.stdout)['install'][0]['download_info']['url']}"


def _run(
    command: list[str], cwd: Path, env: dict[str, str], timeout: int = 300
) -> subprocess.CompletedProcess:
    done = subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, (
        f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    )
    return done


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    source = tmp_path_factory.mktemp("source")
    for name in SOURCES:
        if (REPO_ROOT / name).is_dir():
            shutil.copytree(
                REPO_ROOT / name,
                source / name,
                symlinks=True,
                ignore=shutil.ignore_patterns("__pycache__", "*.pyc", ".*"),
            )
        else:
            shutil.copy2(REPO_ROOT / name, source / name)
    dist = tmp_path_factory.mktemp("dist")
    _run(
        [_uv(), "build", "--wheel", "--quiet", "--out-dir", str(dist), str(source)],
        source,
        dict(os.environ),
    )
    (built,) = dist.glob("bias_hub-*.whl")
    return built


def test_wheel_carries_metric_modules_as_real_files_and_the_data_files(wheel: Path) -> None:
    common = (REPO_ROOT / "metrics" / "_common" / "bias_hub_common.py").read_bytes()
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        # One import package at the top of site-packages, and its dist-info; nothing generic.
        tops = {n.split("/")[0] for n in names}
        assert {t for t in tops if not t.endswith(".dist-info")} == {"bias_hub"}, tops
        assert len(tops) == 2, tops
        # The checkout's own files stay behind: the root package holds only its modules.
        assert {n for n in names if n.count("/") == 1 and n.startswith("bias_hub/")} == {
            "bias_hub/__init__.py",
            "bias_hub/__main__.py",
        }
        for name in _metric_names():
            folder = f"bias_hub/metrics/{name}"
            assert {f"{folder}/{name}.py", f"{folder}/README.md"} <= names, name
            # A symlink in the checkout; the wheel must hold the file itself.
            assert archive.read(f"{folder}/bias_hub_common.py") == common, name
        studies = {p.name for p in (REPO_ROOT / "pipelines" / "studies").glob("*.yaml")}
        assert studies and {f"bias_hub/pipelines/studies/{s}" for s in studies} <= names
        prompts = {
            "bias_hub/" + p.relative_to(REPO_ROOT).as_posix()
            for p in (REPO_ROOT / "pipelines").rglob("prompts/*.yaml")
        }
        assert prompts and prompts <= names
        assert "bias_hub/builders/shared/dataset_card.md" in names
        data_files = {
            "bias_hub/" + p.relative_to(REPO_ROOT).as_posix()
            for p in (REPO_ROOT / "builders").rglob("*")
            if p.suffix in (".tsv", ".csv", ".txt") and "__pycache__" not in p.parts
        }
        assert data_files and data_files <= names, sorted(data_files - names)


@pytest.mark.slow
def test_installed_wheel_builds_and_runs_speciesism_from_another_folder(
    wheel: Path, tmp_path: Path
) -> None:
    import datasets
    import torch

    from bias_hub.pipelines.speciesism.planted_model import make_tiny_masked_lm

    uv = _uv()
    venv = tmp_path / "venv"
    _run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], tmp_path, dict(os.environ))
    python = venv / "bin" / "python"
    _run(
        [
            uv,
            "pip",
            "install",
            "--quiet",
            "--python",
            str(python),
            _torch_requirement(),
            str(wheel),
        ],
        tmp_path,
        dict(os.environ),
        timeout=600,
    )
    bias_hub = str(venv / "bin" / "bias-hub")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(tmp_path / "home"),
        "XDG_DATA_HOME": str(tmp_path / "xdg"),
        "HF_HOME": str(tmp_path / "hf"),
        **OFFLINE,
    }
    _run([bias_hub, "build", "speciesism_templates"], elsewhere, env)
    # The platform's user data folder, not ./datasets under the current folder.
    built = tmp_path / "xdg" / "bias-hub" / "datasets" / "speciesism_templates"
    assert (built / "README.md").is_file()
    assert not (elsewhere / "datasets").exists()

    templates = [
        row
        for config in ("probability", "sentiment")
        for row in datasets.load_dataset(
            str(built), config, split="test", cache_dir=str(tmp_path / "cache")
        )
    ]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        model = make_tiny_masked_lm(tmp_path / "tiny", templates, "en", steps=2)
    finally:
        torch.set_num_threads(threads)

    _run(
        [
            bias_hub,
            "speciesism",
            "--model",
            str(model),
            "--out",
            "run",
            "--animals",
            "pig",
            "dog",
            "--sentiment-top-k",
            "2",
            "--association-words",
            "0",
            "--n-resamples",
            "100",
            "-q",
        ],
        elsewhere,
        env,
    )
    results = json.loads((elsewhere / "run" / "results.json").read_text(encoding="utf-8"))
    # Read from the folder `bias-hub build` wrote, with the model and animals asked for.
    assert results["dataset"] == str(built)
    assert results["animals"] == ["pig", "dog"]
    assert [m["model"] for m in results["models"]] == [str(model)]
    assert (elsewhere / "run" / "report.md").stat().st_size > 0
