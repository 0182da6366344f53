"""Prerequisites checked first and all at once: a command names every extra, dataset, model folder
and key it lacks in one message before it writes or loads anything; `bias-hub demo` on an install
without an extra skips the parts that need it, naming them and the extra, runs the others, and
leaves no traceback in any log.

A base install is simulated: the checks are told that the distributions of the missing extras
are not installed (``extras.installed``, which reads the installed metadata for them)."""

from __future__ import annotations

import json
import types
from pathlib import Path

import pytest

from bias_hub.builders.shared import extras
from bias_hub.pipelines import cli
from bias_hub.pipelines import demo as demo_driver

MODELS = {"torch", "transformers", "accelerate", "wordfreq", "vadersentiment"}
API = {"openai", "deepl", "tenacity"}


@pytest.fixture
def without(monkeypatch: pytest.MonkeyPatch):
    """``without(distributions)``: those are not installed, as far as the checks can tell.
    (Installed for real, a library may still import them and print that it found them
    wanting: the tests read the command's last line.)"""
    real = extras.installed

    def install_lacks(distributions: set[str]) -> None:
        monkeypatch.setattr(
            extras, "installed", lambda name: name not in distributions and real(name)
        )

    return install_lacks


def test_tiny_model_names_the_extra_and_the_dataset_at_once(without, tmp_path: Path, capsys):
    without(MODELS)
    code = cli.main(
        ["jbbq", "tiny-model", "--out", str(tmp_path / "m"), "--datasets-root", str(tmp_path)]
    )
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and err.startswith("bias-hub: error: "), err
    assert (
        "jbbq tiny-model needs 2 things first (nothing was done): (1) this needs the extra 'models' (not installed: torch,"
        in err
    )
    assert "pip install 'bias-hub[models]'" in err and "(2) --dataset jbbq:" in err
    assert "`bias-hub build jbbq`" in err and not (tmp_path / "m").exists()


def test_jbbq_evaluate_names_extra_dataset_and_model_folder_at_once(without, tmp_path, capsys):
    without(MODELS)
    missing_model = tmp_path / "no-such-model"
    code = cli.main(
        [
            "jbbq",
            "evaluate",
            "--model",
            str(missing_model),
            "--datasets-root",
            str(tmp_path),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and err.startswith("bias-hub: error: "), err
    assert "jbbq evaluate needs 3 things first" in err
    assert (
        "this needs the extra 'models' (not installed: torch, transformers, accelerate, wordfreq, vadersentiment)"
        in err
    )
    assert "--dataset jbbq:" in err and f"--model {missing_model}: no such model folder" in err
    assert not (tmp_path / "out").exists()


def test_an_api_run_names_its_extra_and_its_key_at_once(without, tmp_path, capsys, monkeypatch):
    without(API)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = cli.main(
        [
            "jbbq",
            "evaluate",
            "--backend",
            "openai",
            "--model",
            "gpt-x",
            "--datasets-root",
            str(tmp_path),
            "--out",
            str(tmp_path / "out"),
        ]
    )
    err = capsys.readouterr().err.strip()
    assert code == 2 and "needs 3 things first" in err, err
    assert "this needs the extra 'api' (not installed: openai, deepl, tenacity)" in err
    assert "--api-key-env: environment variable OPENAI_API_KEY is not set" in err
    assert "'models'" not in err  # an API run loads no model


def _parts(monkeypatch: pytest.MonkeyPatch, ran: list[str]) -> None:
    """The demo's parts replaced by three: one that needs no extra, one that needs `models`,
    one that needs `models` and `ja`."""

    def part(name: str, order: int, extras: tuple[str, ...]) -> types.ModuleType:
        module = types.ModuleType(f"bias_hub.pipelines.{name}.demo")
        module.ORDER, module.EXTRAS = order, extras

        def run_demo(out_dir: Path) -> dict:
            ran.append(name)
            out_dir.mkdir(parents=True, exist_ok=True)
            (out_dir / "report.md").write_text(f"# {name}\n", encoding="utf-8")
            return {"title": name, "summary": "ran", "report": "report.md"}

        module.run_demo = run_demo
        return module

    parts = [
        part("counts", 0, ()),
        part("tiny", 1, ("models",)),
        part("words", 2, ("models", "ja")),
    ]
    monkeypatch.setattr(demo_driver, "demo_parts", lambda: parts)


def test_demo_without_an_extra_runs_the_parts_that_need_none_and_names_the_others(
    without, monkeypatch, tmp_path: Path, capsys
) -> None:
    without(MODELS)
    ran: list[str] = []
    _parts(monkeypatch, ran)
    out = tmp_path / "demo"
    code = cli.main(["demo", "--out", str(out), "--only", "counts", "tiny", "words", "--jobs", "1"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert ran == ["counts"]
    assert (
        "demo: tiny (models), words (models): this needs the extra 'models' (not installed: torch, transformers,"
        in err
    )
    assert "pip install 'bias-hub[models]'; running the others" in err
    manifest = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    assert manifest["run"]["parts"] == ["counts"]
    assert manifest["run"]["skipped"] == {"tiny": ["models"], "words": ["models"]}
    logs = "".join(path.read_text(encoding="utf-8") for path in (out / "logs").glob("*.log"))
    assert "Traceback" not in logs and "ModuleNotFoundError" not in logs


def test_demo_whose_parts_all_lack_an_extra_says_so_before_writing(
    without, monkeypatch, tmp_path: Path, capsys
) -> None:
    without(MODELS)
    ran: list[str] = []
    _parts(monkeypatch, ran)
    out = tmp_path / "demo"
    code = cli.main(["demo", "--out", str(out), "--only", "tiny", "words"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and not ran, err
    assert "no part chosen can run here (nothing was written)" in err
    assert not out.exists()


def test_a_part_failing_for_a_missing_module_leaves_no_traceback(
    monkeypatch, tmp_path: Path, capsys
) -> None:
    module = types.ModuleType("bias_hub.pipelines.undeclared.demo")
    module.ORDER = 0

    def run_demo(out_dir: Path) -> dict:
        raise ModuleNotFoundError("No module named 'fugashi'", name="fugashi")

    module.run_demo = run_demo
    monkeypatch.setattr(demo_driver, "demo_parts", lambda: [module])
    out = tmp_path / "demo"
    assert cli.main(["demo", "--out", str(out), "--only", "undeclared", "--jobs", "1"]) == 2
    err = capsys.readouterr().err
    assert "comes with the extra 'ja'" in err
    log = (out / "logs" / "undeclared.log").read_text(encoding="utf-8")
    assert "Traceback" not in log and "comes with the extra 'ja'" in log
