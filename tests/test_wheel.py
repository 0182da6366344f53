"""The package as a user installs it: the wheel, fresh environments, any folder.

The fast test reads the wheel: one import package and its metadata at the top, the metric modules
and data files inside. The slow tests build the wheel with ``uv build --wheel`` from a copy of the
sources and install it into new venvs (``uv pip install``, served by the local cache once the
stack was installed once), then work from a folder that is not the checkout:

- the base install (``bias-hub``, no extras; no torch in the venv) builds BBQ from a copy in its
  release layout, scores predictions in UnifiedQA's format with ``bias-hub score``, loads every
  metric module with ``evaluate.load(str(bias_hub.metric_path(name)))``, runs the metric cards'
  examples, and names the extra a model command needs;
- ``bias-hub[all]`` (with the CPU torch wheel ``make setup`` uses) runs ``bias-hub demo`` and
  ``bias-hub build speciesism_templates`` + ``bias-hub speciesism`` on a tiny masked LM.

The fast tests at the top check where the data root is, in and out of a checkout.
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


def _venv(root: Path, *requirements: str) -> Path:
    """A fresh venv under ``root`` with ``requirements`` installed; its folder."""
    uv = _uv()
    venv = root / "venv"
    _run([uv, "venv", "--quiet", "--python", sys.executable, str(venv)], root, dict(os.environ))
    _run(
        [uv, "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"), *requirements],
        root,
        dict(os.environ),
        timeout=900,
    )
    return venv


@pytest.fixture(scope="module")
def base_venv(wheel: Path, tmp_path_factory) -> Path:
    """``pip install bias-hub``: no extras."""
    return _venv(tmp_path_factory.mktemp("base"), str(wheel))


@pytest.fixture(scope="module")
def full_venv(wheel: Path, tmp_path_factory) -> Path:
    """``pip install 'bias-hub[all]'``, torch being the CPU wheel ``make setup`` uses; with pip in
    the venv, as a user who installs with pip has (sources pinned to a PyPI wheel use it)."""
    return _venv(
        tmp_path_factory.mktemp("full"),
        _torch_requirement(),
        f"bias-hub[all] @ {wheel.as_uri()}",
        "pip",
    )


def _user(venv: Path, home: Path) -> dict[str, str]:
    """A user's environment: the venv's commands first, a home and data folder of its own, offline."""
    return {
        "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
        "HOME": str(home / "home"),
        "XDG_DATA_HOME": str(home / "xdg"),
        "HF_HOME": str(home / "hf"),
        **OFFLINE,
    }


def test_wheel_carries_metric_modules_as_real_files_and_the_data_files(wheel: Path) -> None:
    shared = {
        name: (REPO_ROOT / "metrics" / "_common" / name).read_bytes()
        for name in ("bias_hub_common.py", "bias_hub_intervals.py")
    }
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
            assert {
                f"{folder}/{name}.py",
                f"{folder}/{name}_scores.py",
                f"{folder}/README.md",
            } <= names, name
            # Symlinks in the checkout; the wheel must hold the files themselves.
            for file, content in shared.items():
                if (REPO_ROOT / "metrics" / name / file).exists():
                    assert archive.read(f"{folder}/{file}") == content, name
        # The pipelines import the intervals from the shared folder itself.
        for file, content in shared.items():
            assert archive.read(f"bias_hub/metrics/_common/{file}") == content, file
        studies = {p.name for p in (REPO_ROOT / "pipelines" / "studies").glob("*.yaml")}
        assert studies and {f"bias_hub/pipelines/studies/{s}" for s in studies} <= names
        prompts = {
            "bias_hub/" + p.relative_to(REPO_ROOT).as_posix()
            for p in (REPO_ROOT / "pipelines").rglob("prompts/*.yaml")
        }
        assert prompts and prompts <= names
        assert "bias_hub/builders/shared/dataset_card.md" in names
        templates = {
            "bias_hub/" + p.relative_to(REPO_ROOT).as_posix()
            for p in (REPO_ROOT / "pipelines").rglob("templates/*.j2")
        }
        assert templates and templates <= names, sorted(templates - names)
        data_files = {
            "bias_hub/" + p.relative_to(REPO_ROOT).as_posix()
            for p in (REPO_ROOT / "builders").rglob("*")
            if p.suffix in (".tsv", ".csv", ".txt") and "__pycache__" not in p.parts
        }
        assert data_files and data_files <= names, sorted(data_files - names)


@pytest.mark.slow
def test_installed_wheel_builds_and_runs_speciesism_from_another_folder(
    full_venv: Path, tmp_path: Path
) -> None:
    import datasets
    import torch

    from bias_hub.pipelines.speciesism.planted_model import make_tiny_masked_lm

    bias_hub = str(full_venv / "bin" / "bias-hub")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = _user(full_venv, tmp_path)
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


# --- the base install: no model, no torch -------------------------------------------------------

# BBQ's release layout (data/<Category>.jsonl, results/UnifiedQA/preds_<Category>.jsonl), with
# questions of our own: three templates (the builder splits by template), each asked negatively
# and non-negatively after an ambiguous and a disambiguated context.
ANSWERS = {"ans0": "The grandfather", "ans1": "The grandson", "ans2": "Can't be determined"}
INFO = {
    "ans0": ["grandfather", "old"],
    "ans1": ["grandson", "nonOld"],
    "ans2": ["Can't be determined", "unknown"],
}
# (example_id, question_index, polarity, condition, label)
QUESTIONS = [
    (i, str(template), polarity, condition, label)
    for i, (template, polarity, condition, label) in enumerate(
        (template, polarity, condition, label)
        for template, disambiguated in ((1, (1, 0)), (2, (0, 1)), (3, (0, 1)))
        for polarity, answer in zip(("neg", "nonneg"), disambiguated, strict=True)
        for condition, label in (("ambig", 2), ("disambig", answer))
    )
]
# A model that always gives the stereotyped answer (the grandfather to a negative question, the
# grandson to a non-negative one), spelled as UnifiedQA does and less tidily.
SAID = {"neg": "the grandfather", "nonneg": "  The grandson. "}
# By hand, over the 12 questions: every ambiguous answer (6) is wrong; of the disambiguated ones
# the stereotyped answer is right where the label is the stereotyped person: templates 2 and 3
# (label 0 for neg, 1 for nonneg) -> 4 of 6. Accuracy 4/12, ambiguous 0, disambiguated 4/6.
# s_DIS = 2 * 6/6 - 1 = 1 (every non-unknown answer is the biased one); s_AMB = (1 - 0) * 1 = 1.
EXPECTED = {
    "accuracy": 4 / 12,
    "accuracy_ambiguous": 0.0,
    "accuracy_disambiguated": 4 / 6,
    "bias_score_disambiguated": 1.0,
    "bias_score_ambiguous": 1.0,
    "unparsable_rate": 0.0,
}


def _bbq_release(root: Path) -> Path:
    rows = [
        {
            "example_id": example_id,
            "question_index": index,
            "question_polarity": polarity,
            "context_condition": condition,
            "category": "Age",
            "answer_info": INFO,
            "additional_metadata": {
                "subcategory": "None",
                "stereotyped_groups": ["old"],
                "version": "a",
                "source": "",
            },
            "context": f"Context {example_id}.",
            "question": f"Question {index} {polarity}?",
            **ANSWERS,
            "label": label,
        }
        for example_id, index, polarity, condition, label in QUESTIONS
    ]
    (root / "data").mkdir(parents=True)
    (root / "results" / "UnifiedQA").mkdir(parents=True)
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    (root / "data" / "Age.jsonl").write_text(lines, encoding="utf-8")
    predictions = [
        {**row, "unifiedqa-t5-11b_pred_race": SAID[row["question_polarity"]]} for row in rows
    ]
    (root / "results" / "UnifiedQA" / "preds_Age.jsonl").write_text(
        "".join(json.dumps(row) + "\n" for row in predictions), encoding="utf-8"
    )
    return root


@pytest.mark.slow
def test_the_base_install_builds_bbq_and_scores_predictions_without_torch(
    base_venv: Path, tmp_path: Path
) -> None:
    env = _user(base_venv, tmp_path)
    python = str(base_venv / "bin" / "python")
    absent = _run(
        [
            python,
            "-c",
            "import importlib.util as u; print(sorted(m for m in ('torch', 'transformers', "
            "'accelerate', 'fugashi', 'unidic_lite', 'openai', 'deepl', 'tenacity') if u.find_spec(m)))",
        ],
        tmp_path,
        env,
    )
    assert absent.stdout.strip() == "[]"
    release = _bbq_release(tmp_path / "BBQ")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _run(["bias-hub", "build", "bbq", "--source", str(release)], elsewhere, env)
    built = tmp_path / "xdg" / "bias-hub" / "datasets" / "bbq"
    assert (built / "README.md").is_file() and not (elsewhere / "datasets").exists()
    _run(
        [
            "bias-hub",
            "score",
            "bbq_bias",
            "--predictions",
            str(release / "results" / "UnifiedQA" / "preds_Age.jsonl"),
            "--prediction-column",
            "unifiedqa-t5-11b_pred_race",
            "--dataset",
            "bbq",
            "--config",
            "Age",
            "--out",
            "scores",
            "--n-resamples",
            "200",
        ],
        elsewhere,
        env,
    )
    results = json.loads((elsewhere / "scores" / "results.json").read_text(encoding="utf-8"))
    assert results["dataset"]["folder"] == str(built)
    assert results["join"]["joined"] == 12
    for key, value in EXPECTED.items():
        assert results["result"][key] == pytest.approx(value, abs=1e-12), key
    # A command that runs a model names the extra it needs, in one line.
    _run(["bias-hub", "build", "jbbq"], elsewhere, env)
    done = subprocess.run(
        ["bias-hub", "jbbq", "tiny-model", "--out", "model"],
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "bias-hub: error: this needs the extra 'models' (not installed: torch, transformers, "
        "accelerate, wordfreq, vadersentiment): pip install 'bias-hub[models]'"
    )


# Runs the cards' Python blocks in the installed venv, one namespace per card, as a reader types
# them: a block of >>> lines as a doctest, any other block as a script.
CARD_RUNNER = """
import doctest, json, sys

failed = []
for card, blocks in json.load(open(sys.argv[1], encoding="utf-8")).items():
    namespace = {}
    for where, text in blocks:
        if ">>>" in text:
            test = doctest.DocTestParser().get_doctest(text, namespace, where, card, 0)
            runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
            runner.run(test, clear_globs=False)
            namespace.update(test.globs)
            failed += [where] * runner.failures
        else:
            exec(compile(text, where, "exec"), namespace)
    print("ran", card, len(blocks))
sys.exit(f"failed: {failed}" if failed else 0)
"""


@pytest.mark.slow
def test_the_base_install_loads_every_metric_module_and_runs_the_cards(
    base_venv: Path, tmp_path: Path
) -> None:
    from test_docs_examples import code_blocks

    env = _user(base_venv, tmp_path)
    python = str(base_venv / "bin" / "python")
    loaded = _run(
        [
            python,
            "-c",
            "import evaluate, sys, bias_hub\n"
            "for name in sys.argv[1:]:\n"
            "    module = evaluate.load(str(bias_hub.metric_path(name)))\n"
            "    print(name, bias_hub.metric_path(name))",
            *_metric_names(),
        ],
        tmp_path,
        env,
    )
    site = base_venv / "lib"
    for line, name in zip(loaded.stdout.splitlines(), _metric_names(), strict=True):
        folder = Path(line.split()[1])
        assert line.split()[0] == name and folder.is_relative_to(site), line  # the installed copy
    # The cards' examples from a folder with the datasets they read (datasets/<name>, as the
    # cards write them) and no metrics/ folder: they find the modules through bias_hub alone.
    cards = tmp_path / "cards"
    cards.mkdir()
    _run(["bias-hub", "build", "jbbq", "--out-root", "datasets"], cards, env)
    blocks = {
        str(card.relative_to(REPO_ROOT)): [
            (block.where, block.text)
            for block in code_blocks(card)
            if block.language == "python" and block.marker is None
        ]
        for card in sorted(REPO_ROOT.glob("metrics/*/README.md"))
    }
    assert all(blocks.values()), [card for card, found in blocks.items() if not found]
    (tmp_path / "blocks.json").write_text(json.dumps(blocks), encoding="utf-8")
    ran = _run([python, "-c", CARD_RUNNER, str(tmp_path / "blocks.json")], cards, env, timeout=600)
    assert ran.stdout.count("ran metrics/") == len(_metric_names()), ran.stdout


# --- bias-hub[all]: every part ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_the_full_install_runs_the_demo_from_another_folder(
    full_venv: Path, tmp_path: Path
) -> None:
    env = _user(full_venv, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    _run(["bias-hub", "demo", "--out", "demo"], elsewhere, env, timeout=2200)
    manifest = json.loads((elsewhere / "demo" / "demo.json").read_text(encoding="utf-8"))
    status = {part: entry["status"] for part, entry in manifest["parts"].items()}
    assert status and set(status.values()) == {"ok"}, status
    assert {"nli", "jbbq", "stereoset", "speciesism", "embeddings", "dataset_stats"} <= set(status)
    # What the demo read, it built under the data root: nothing under the current folder.
    root = tmp_path / "xdg" / "bias-hub" / "datasets"
    for name in ("jbbq", "nli_gender_bias", "nli_bias_controlled", "speciesism_templates"):
        assert (root / name / "README.md").is_file(), name
    assert sorted(p.name for p in elsewhere.iterdir()) == ["demo"]
    assert (elsewhere / "demo" / "index.html").is_file()


# --- the manual, from an installed wheel ----------------------------------------------------

# Runs the examples of README.md and docs/ in the installed venv, from another folder, as
# tests/test_docs_examples.py runs them in a checkout: one namespace per document, a block of
# >>> lines as a doctest, bash lines through the CLI's main in this one process.
DOCS_RUNNER = """
import doctest, json, shlex, sys
from bias_hub.pipelines.cli import main

failed = []
for document, blocks in json.load(open(sys.argv[1], encoding="utf-8")).items():
    namespace = {"__name__": "__docs__"}
    for where, language, payload in blocks:
        try:
            if language == "bash":
                for line in payload:
                    if main([*shlex.split(line, comments=True)[1:], "-q"]) != 0:
                        failed.append(f"{where}: `{line}` failed")
            elif ">>>" in payload:
                test = doctest.DocTestParser().get_doctest(payload, namespace, where, document, 0)
                runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
                runner.run(test, clear_globs=False)
                namespace.update(test.globs)
                failed += [f"{where}: a doctest failed"] * runner.failures
            else:
                exec(compile(payload, where, "exec"), namespace)
        except (Exception, SystemExit) as err:
            failed.append(f"{where}: {type(err).__name__}: {err}")
    print("ran document", document, len(blocks))
sys.exit("failed:\\n" + "\\n".join(failed) if failed else 0)
"""


@pytest.mark.slow
@pytest.mark.timeout(2400)
def test_the_manuals_examples_run_from_the_full_install_in_another_folder(
    full_venv: Path, tmp_path: Path
) -> None:
    from test_docs_examples import DOCUMENTS, code_blocks, commands

    env = _user(full_venv, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # What `make datasets` is to a checkout: the examples read the datasets it builds.
    _run(["bias-hub", "build", "all", "-q"], elsewhere, env, timeout=900)
    manual = [d for d in DOCUMENTS if d.parent in (REPO_ROOT, REPO_ROOT / "docs")]
    blocks = {
        str(document.relative_to(REPO_ROOT)): [
            (
                block.where,
                block.language,
                [c for c in commands(block.text) if not c.startswith("make ")]
                if block.language == "bash"
                else block.text,
            )
            for block in code_blocks(document)
            if block.language in ("python", "bash") and block.marker is None
        ]
        for document in manual
    }
    (tmp_path / "blocks.json").write_text(json.dumps(blocks), encoding="utf-8")
    ran = _run(
        [str(full_venv / "bin" / "python"), "-c", DOCS_RUNNER, str(tmp_path / "blocks.json")],
        elsewhere,
        env,
        timeout=1800,
    )
    done = [line for line in ran.stdout.splitlines() if line.startswith("ran document ")]
    assert len(done) == len(manual), ran.stdout
    # Everything they built went under the data root; what they wrote, under this folder.
    assert not (elsewhere / "datasets").exists()
