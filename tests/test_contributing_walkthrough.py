"""CONTRIBUTING.md's walk-through, followed literally.

In a copy of the repository (every file git tracks, links kept as links) the test writes each
fenced block of CONTRIBUTING.md whose info string holds ``path=`` to that path, runs the blocks
tagged ``sh run`` from the copy's root, and nothing else: no list is edited. It then runs the
suite of ``make test`` in the copy, which must pass and count the toy among what its contract
tests find, and runs
the toy system end to end -- its command, ``bias-hub report``, ``bias-hub reproduce`` on its
study, its demo part -- on a tokenizer whose splits CONTRIBUTING works out by hand.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from checkout_copies import pythonpath_for

from bias_hub.pipelines import cli
from bias_hub.pipelines.publish.space_repo import SECTIONS

REPO_ROOT = Path(__file__).resolve().parents[1]
CONTRIBUTING = REPO_ROOT / "CONTRIBUTING.md"
OPENING = re.compile(r"^(`{3,})([^`]*)$")
# The toy system the walk-through must keep adding whole: builder, metric module, part, study.
TOY_FILES = {
    "builders/toy_lengths/__init__.py",
    "builders/toy_lengths/card.py",
    "builders/toy_lengths/command.py",
    "builders/toy_lengths/pairs.csv",
    "metrics/toy_length_gap/toy_length_gap.py",
    "metrics/toy_length_gap/toy_length_gap_scores.py",
    "metrics/toy_length_gap/README.md",
    "metrics/toy_length_gap/requirements.txt",
    "pipelines/toy_lengths/__init__.py",
    "pipelines/toy_lengths/settings.py",
    "pipelines/toy_lengths/command.py",
    "pipelines/toy_lengths/run.py",
    "pipelines/toy_lengths/report.py",
    "pipelines/toy_lengths/demo.py",
    "pipelines/toy_lengths/score_paths.py",
    "pipelines/studies/toy_lengths.yaml",
}
# What the suite must have checked of the toy (its contract tests are parametrised by the
# folders they find).
TOY_CHECKS = {
    "tests/metrics/test_module_shared_code.py::test_the_shared_files_it_imports_are_links_to_the_one_copy[toy_length_gap]",
    "tests/metrics/test_module_shared_code.py::test_module_imports_only_what_its_requirements_list[toy_length_gap]",
    "tests/metrics/test_module_shared_code.py::test_the_computation_imports_shared_files_the_module_imports_too[toy_length_gap_scores]",
    "tests/metrics/test_module_examples.py::test_kwargs_description_example_runs[toy_length_gap]",
    "tests/metrics/test_module_examples.py::test_module_has_card_with_standard_sections[toy_length_gap]",
    "tests/builders/test_card.py::test_every_committed_card_has_the_standard_sections[toy_lengths]",
    "tests/builders/test_builder_contract.py::test_build_takes_documented_keyword_options_with_defaults[toy_lengths]",
    "tests/builders/test_builder_contract.py::test_the_command_passes_every_option_to_build_unchanged[toy_lengths]",
    "tests/pipelines/test_publish_cards.py::test_metric_card_becomes_a_valid_space_card[toy_length_gap]",
    "tests/pipelines/test_score.py::test_every_metric_module_has_a_score_path",
}
# The tokenizer of section 6: a WordPiece vocabulary (the special tokens first).
VOCABULARY = [
    "[PAD]",
    "[UNK]",
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "he",
    "she",
    "king",
    "queen",
    "actor",
    "act",
    "waiter",
    "wait",
    "host",
    "widow",
    "##ress",
    "##ess",
    "##er",
]


def fenced_blocks(text: str) -> list[tuple[str, list[str], str]]:
    """Every fenced block of a Markdown text as (language, the other words of its info string,
    body). A block closes at a line of at least as many backticks as opened it, so a block
    opened with four holds blocks of three."""
    blocks, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        opening = OPENING.match(lines[i])
        i += 1
        if not opening:
            continue
        fence, words = opening.group(1), opening.group(2).split()
        body = []
        while i < len(lines) and not (
            lines[i].strip().startswith(fence) and set(lines[i].strip()) == {"`"}
        ):
            body.append(lines[i])
            i += 1
        if i == len(lines):
            raise ValueError(
                f"CONTRIBUTING.md: the block opened by {fence}{opening.group(2)} is never closed"
            )
        i += 1
        blocks.append((words[0] if words else "", words[1:], "".join(line + "\n" for line in body)))
    return blocks


def walkthrough(text: str) -> tuple[dict[str, str], list[str]]:
    """The files (``path=`` blocks: {path: text}) and the commands (``sh run`` blocks) of the text."""
    files, commands = {}, []
    for language, words, body in fenced_blocks(text):
        paths = [word.removeprefix("path=") for word in words if word.startswith("path=")]
        if paths:
            path = paths[0]
            assert not Path(path).is_absolute() and ".." not in Path(path).parts, path
            assert path not in files, f"CONTRIBUTING.md writes {path} twice"
            files[path] = body
        elif language == "sh" and "run" in words:
            commands.append(body)
    return files, commands


def _section(text: str, heading: str) -> str:
    return text.split(heading, 1)[1].split("\n## ", 1)[0]


def test_the_walkthrough_writes_the_whole_toy_system_and_edits_no_file_of_the_project() -> None:
    files, commands = walkthrough(CONTRIBUTING.read_text(encoding="utf-8"))
    assert set(files) == TOY_FILES
    # A reader who followed it has the toy's files in the checkout, as written here: that keeps
    # the suite green. Any other text at one of its paths is a file of the project it would edit.
    edited = [
        path
        for path, body in files.items()
        if (REPO_ROOT / path).exists() and (REPO_ROOT / path).read_text(encoding="utf-8") != body
    ]
    assert not edited, f"the walk-through must edit no file of the project: {edited}"
    # Linked with -f, so that the commands run again in a checkout that followed them.
    assert (
        len(commands) == 1
        and "ln -sf ../_common/bias_hub_common.py metrics/toy_length_gap/bias_hub_common.py"
        in commands[0]
    )
    assert "````markdown path=metrics/toy_length_gap/README.md" in CONTRIBUTING.read_text(
        encoding="utf-8"
    )
    assert (
        files["metrics/toy_length_gap/README.md"].count("```") == 6
    )  # the card's own three blocks, whole


def test_contributing_names_the_card_sections_the_checks_use() -> None:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    template = (REPO_ROOT / "builders" / "shared" / "dataset_card.md").read_text(encoding="utf-8")
    headings = [line for line in template.splitlines() if re.match(r"^#{2,3} ", line)]
    assert len(headings) == 11
    dataset_card = _section(text, "### The dataset card")
    assert all(f"`{heading}`" in dataset_card for heading in headings), headings
    metric_modules = _section(text, "## Metric modules")
    assert len(SECTIONS) == 7 and all(f"`## {section}`" in metric_modules for section in SECTIONS)


def test_contributing_says_what_the_cli_treats_as_a_users_error() -> None:
    errors = " ".join(
        _section(CONTRIBUTING.read_text(encoding="utf-8"), "### Errors the user can fix").split()
    )
    names = [error.__name__ for error in cli.USER_ERRORS]
    assert names and all(f"`{name}`" in errors for name in names), names
    assert (
        "`bias-hub: error: <message>`" in errors
        and "exits with status 2" in errors
        and "130" in errors
    )


def test_contributing_names_the_part_shape_and_the_module_folder() -> None:
    text = CONTRIBUTING.read_text(encoding="utf-8")
    for needle in (
        "`register(subparsers)`",
        "bias_hub_common.py -> ../_common/bias_hub_common.py",
        "`requirements.txt`",
        "`IntervalSettings`",
        "`add_interval_flags",
        "`with_interval",
        "stats.correlation",
        "`holm(",
        "`PAPER_LAYOUTS",
        "render(results: dict, folder: Path)",
        "preset_command=",
    ):
        assert needle in text, needle


def _tiny_model(folder: Path) -> Path:
    """A model folder whose tokenizer is section 6's WordPiece vocabulary (the toy loads only
    the tokenizer; the config names a 1-layer BERT of that vocabulary)."""
    folder.mkdir()
    (folder / "vocab.txt").write_text("\n".join(VOCABULARY) + "\n", encoding="utf-8")
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"tokenizer_class": "BertTokenizer", "do_lower_case": True}), encoding="utf-8"
    )
    config = {
        "model_type": "bert",
        "vocab_size": len(VOCABULARY),
        "hidden_size": 8,
        "num_hidden_layers": 1,
        "num_attention_heads": 1,
        "intermediate_size": 16,
    }
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def _copy_repository(target: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True
    ).stdout
    for name in listed.decode().split("\0"):
        source = REPO_ROOT / name
        if not name or not (source.exists() or source.is_symlink()):
            continue  # deleted in the working tree, not yet committed
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), destination)
        else:
            shutil.copy2(source, destination)


def _bias_hub(folder: Path) -> Path:
    """A ``bias-hub`` on PATH that runs the copy's CLI with this interpreter."""
    folder.mkdir()
    script = folder / "bias-hub"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m bias_hub "$@"\n', encoding="utf-8")
    script.chmod(0o755)
    return folder


E2E = """
import json, sys
from bias_hub.pipelines.cli import main
for argv in json.loads(sys.argv[1]):
    if main(argv):
        sys.exit("bias-hub " + " ".join(argv) + ": failed")
"""


def _run(argv: list[str], cwd: Path, env: dict) -> str:
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, (
        f"{' '.join(argv)} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    return done.stdout


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_a_toy_sixth_system_added_by_contributing_passes_the_suite_and_runs(
    tmp_path: Path,
) -> None:
    copy = tmp_path / "repo"
    _copy_repository(copy)
    files, commands = walkthrough((copy / "CONTRIBUTING.md").read_text(encoding="utf-8"))
    for path, body in files.items():
        (copy / path).parent.mkdir(parents=True, exist_ok=True)
        (copy / path).write_text(body, encoding="utf-8")
    # The copy's own code, never the checkout's editable install.
    env = {
        **os.environ,
        "PATH": f"{_bias_hub(tmp_path / 'bin')}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": pythonpath_for(copy),
        "OMP_NUM_THREADS": "1",
    }
    # Twice: where the checkout followed the guide already, the copy holds the link and the card.
    for command in commands * 2:
        _run(["bash", "-euo", "pipefail", "-c", command], copy, env)
    assert (
        os.readlink(copy / "metrics/toy_length_gap/bias_hub_common.py")
        == "../_common/bias_hub_common.py"
    )

    # The suite of `make test`, all of it, in the copy that followed the guide (the slow tests
    # end to end are the other systems' and this one), beside the toy's end-to-end commands (two
    # processes, two cores).
    suite = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-m", "not slow"],
        cwd=copy,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        model, out = _tiny_model(tmp_path / "model"), tmp_path / "runs"
        # Section 5's commands with the tiny model, through the CLI's main in one process (the
        # imports once instead of four times).
        steps = [
            ["toy_lengths", "--model", str(model), "--out", str(out / "run")],
            ["report", str(out / "run")],
            ["reproduce", "toy_lengths", "--models", str(model), "--out", str(out / "study")],
            ["demo", "--only", "toy_lengths", "--out", str(out / "demo")],
        ]
        _run([sys.executable, "-c", E2E, json.dumps(steps)], copy, env)
        python_files = [path for path in files if path.endswith(".py")]
        lint = subprocess.run(
            [sys.executable, "-m", "ruff", "check", "--no-cache", *python_files],
            cwd=copy,
            env=env,
            capture_output=True,
            text=True,
        )
        output, _ = suite.communicate(timeout=3000)
    finally:
        suite.kill()

    assert suite.returncode == 0, output[-5000:]
    passed = {line.split()[1] for line in output.splitlines() if line.startswith("PASSED ")}
    assert TOY_CHECKS <= passed, sorted(TOY_CHECKS - passed)
    assert lint.returncode == 0, lint.stdout + lint.stderr

    # Section 6, by hand: gaps 0, 0, +1, +1, +1, -1 over six pairs.
    results = json.loads((out / "run" / "results.json").read_text(encoding="utf-8"))
    assert (results["part"], results["step"]) == ("toy_lengths", "run")
    gaps = {row["pair_id"]: (row["male"], row["female"]) for row in results["rows"]}
    assert gaps == {
        "pronoun": (1, 1),
        "monarch": (1, 1),
        "actor": (1, 2),
        "waiter": (1, 2),
        "host": (1, 2),
        "widow": (2, 1),
    }
    scores = results["scores"]
    assert scores["mean_gap"] == pytest.approx(1 / 3) and scores["n_pairs"] == 6
    assert scores["share_female_longer"] == 0.5 and scores["share_male_longer"] == pytest.approx(
        1 / 6
    )
    interval = scores["confidence_intervals"]["mean_gap"]
    assert (interval["confidence_level"], interval["unit"], interval["n_units"]) == (
        0.95,
        "pairs",
        6,
    )
    assert -1 <= interval["low"] <= 1 / 3 <= interval["high"] <= 1
    assert (
        results["intervals"]
        == {"confidence_level": 0.95, "n_resamples": 2000, "bootstrap_unit": "items", "seed": 0}
        and results["preset"] is None
    )
    report = (out / "run" / "report.md").read_text(encoding="utf-8")
    assert (
        json.loads((out / "run" / "manifest.json").read_text(encoding="utf-8"))["rerendered"]
        is True
    )
    assert (
        "**0.333 [" in report
        and "| actor | 1 | 2 | 1 |" in report
        and "| widow | 2 | 1 | -1 |" in report
    )

    study = json.loads((out / "study" / "lengths" / "results.json").read_text(encoding="utf-8"))
    assert study["scores"] == scores and study["preset"] == {"name": "paper", "departures": []}
    assert "| mean gap | 0.333 [" in (out / "study" / "report.md").read_text(encoding="utf-8")
    demo = json.loads((out / "demo" / "demo.json").read_text(encoding="utf-8"))
    assert demo["parts"]["toy_lengths"]["status"] == "ok", demo["parts"]["toy_lengths"]
