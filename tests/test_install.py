"""What a user installs: the light base, the extras, and one data root whatever the install.

- The extras are read from the installed metadata, which holds pyproject.toml's; each module an
  extra brings has its distribution's name, and the base install holds none of the extras'
  distributions (no torch, transformers, fugashi, API clients).
- A command that needs a missing extra stops in one line naming it.
- Help texts and errors name the folders this install reads, never "the repository" or a
  Makefile a wheel's user does not have; the demo parts read and build under the data root.

The wheel itself, installed into fresh environments, is tested in ``tests/test_wheel.py``.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
import tomllib
from jbbq_fixtures import write_fixture_dataset

from bias_hub.builders.shared.extras import MissingExtra, extra_for, extras, missing_extra
from bias_hub.pipelines import cli
from bias_hub.pipelines.common import locations

REPO_ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _name(requirement: str) -> str:
    """The distribution a requirement names, normalised (``unidic-lite>=1.0`` -> ``unidic-lite``)."""
    name = re.match(r"[A-Za-z0-9._-]+", requirement).group(0)
    return re.sub(r"[-_.]+", "-", name).lower()


def _module_names(distribution: str) -> set[str]:
    """The dotted names of the modules and packages a distribution installs, normalised."""
    names = set()
    for file in metadata.files(distribution) or []:
        if file.suffix in (".py", ".so"):
            parts = [*file.parent.parts, file.name.split(".")[0]]
            if parts[-1] == "__init__":
                parts.pop()
            names.add(_name(".".join(parts)))
    return names


# --- the extras -------------------------------------------------------------------------------


def _user_extras() -> dict[str, set[str]]:
    """pyproject.toml's extras a user installs (not `dev`, not `all`, which names the others):
    each with the normalised names of the distributions it requires."""
    return {
        extra: {_name(r) for r in reqs}
        for extra, reqs in PYPROJECT["optional-dependencies"].items()
        if extra not in ("dev", "all")
    }


def test_the_installed_metadata_holds_pyprojects_extras() -> None:
    """extras() reads the installed metadata: make's stamp reinstalls when pyproject.toml
    changes, so the two agree, extra by extra."""
    read = extras()
    for extra, names in _user_extras().items():
        assert all(name in read for name in names), (extra, sorted(names - set(read)))
    # A distribution of two extras is named with the first of them, in pyproject.toml's order,
    # never with `dev` (tenacity: api and google; gensim: dev and corpus).
    assert (read["tenacity"], read["gensim"], read["google-cloud-language"]) == (
        "api",
        "corpus",
        "google",
    )
    assert "pytest" not in read and "bias-hub" not in read
    assert PYPROJECT["optional-dependencies"]["all"] == ["bias-hub[models,ja,api]"]


def test_every_module_an_extra_brings_is_imported_under_its_distributions_name() -> None:
    """missing_extra knows a module by name only (the distribution is not installed then): each
    extra's distribution must hold a package or module whose dotted name is its own, normalised.
    Not `inspect`: no bias-hub command imports Inspect (Inspect imports bias-hub's tasks, in its
    own venv here: bench/.venv-inspect), so none can miss it."""
    for extra, names in _user_extras().items():
        if extra == "inspect":
            continue
        for name in names:
            modules = _module_names(name)
            assert name in modules, f"[{extra}] {name}: no module of that name"


def test_extra_for_names_the_distribution_and_its_extra() -> None:
    assert extra_for("torch.nn") == ("torch", "models")
    assert extra_for("vaderSentiment.vaderSentiment") == ("vadersentiment", "models")
    assert extra_for("unidic_lite") == ("unidic-lite", "ja")
    assert extra_for("google.cloud.language_v1") == ("google-cloud-language", "google")
    assert extra_for("nltk.tokenize") == ("nltk", "corpus")
    # Not an extra's: a tool of the contributors, a package nobody declared, one whose name only
    # starts like an extra's, bias_hub itself, no name.
    others = ("pytest", "rhoknp", "torchvision", "bias_hub.pipelines", "", None)
    assert [extra_for(m) for m in others] == [None] * len(others)


def test_the_base_install_needs_no_extra() -> None:
    base = {_name(r) for r in PYPROJECT["dependencies"]}
    for extra, names in _user_extras().items():
        assert not names & base, (
            f"[{extra}] {sorted(names & base)} would come with the base install"
        )


def test_a_missing_module_is_named_with_its_extra() -> None:
    found = missing_extra(ModuleNotFoundError("No module named 'torch'", name="torch.nn"))
    assert isinstance(found, MissingExtra)
    assert str(found) == (
        "this needs torch, which comes with the extra 'models': pip install 'bias-hub[models]'"
    )
    # transformers re-raises an ImportError of its own while handling fugashi's absence.
    wrapped = ModuleNotFoundError("You need to install fugashi to use MecabTokenizer.")
    wrapped.__context__ = ModuleNotFoundError("No module named 'fugashi'", name="fugashi")
    assert missing_extra(wrapped).extra == "ja"
    google = missing_extra(ModuleNotFoundError(name="google.cloud.language_v1"))
    assert google.extra == "google"


def test_other_errors_are_not_taken_for_a_missing_extra() -> None:
    assert missing_extra(ModuleNotFoundError("No module named 'rhoknp'", name="rhoknp")) is None
    # Raised while an import had failed, but not because of it.
    err = ValueError("--dtype: expected one of auto, float32")
    err.__context__ = ModuleNotFoundError(name="torch")
    assert missing_extra(err) is None


# The command line in an interpreter where torch and transformers are not installed: every finder
# behaves as if they were absent (find_spec gives None, import raises ModuleNotFoundError).
WITHOUT_MODELS = """
import sys

class Without:
    def __init__(self, finder):
        self.finder = finder

    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in ("torch", "transformers"):
            return None
        return self.finder.find_spec(name, path, target)

    def __getattr__(self, name):  # find_distributions, invalidate_caches, ...
        return getattr(self.finder, name)

sys.meta_path[:] = [Without(finder) for finder in sys.meta_path]
from bias_hub.pipelines.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.slow  # a fresh interpreter without the model libraries
def test_a_command_without_its_extra_stops_in_one_line(tmp_path: Path) -> None:
    dataset = write_fixture_dataset(tmp_path / "jbbq")
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_MODELS, "jbbq", "tiny-model"]
        + ["--dataset", str(dataset), "--out", str(tmp_path / "m")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == (
        "bias-hub: error: this needs torch, which comes with the extra 'models': "
        "pip install 'bias-hub[models]'"
    )
    assert not (tmp_path / "m").exists()


def test_metric_path_refuses_anything_but_a_module_name_and_lists_the_modules() -> None:
    import bias_hub

    assert bias_hub.metric_path("weat") == REPO_ROOT / "metrics" / "weat"
    # None and 3 used to fail in the path arithmetic, before the check that names the modules.
    for name in (None, 3, "", "weat/../rnsb", "no_such_metric"):
        with pytest.raises(
            ValueError, match=r"no metric module named .*; expected one of bbq_bias, "
        ):
            bias_hub.metric_path(name)


# --- one data root; help and errors for the install at hand -------------------------------------


@pytest.fixture
def installed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """This code as a wheel would run it: from site-packages, with a data root of its own."""
    monkeypatch.setattr(locations, "repo_root", lambda: tmp_path / "site-packages" / "bias_hub")
    monkeypatch.setenv(locations.DATA_ENV, str(tmp_path / "data"))
    return tmp_path / "data" / "datasets"


def _leaf_parsers(
    parser: argparse.ArgumentParser, path: str = ""
) -> dict[str, argparse.ArgumentParser]:
    nested = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not nested:
        return {path.strip(): parser}
    leaves = {}
    for action in nested:
        for name, child in action.choices.items():
            leaves |= _leaf_parsers(child, f"{path} {name}")
    return leaves


def test_every_datasets_root_help_names_the_data_root_of_an_install(
    installed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "1000")  # argparse would break the long paths mid-word
    with_root = {
        name: parser.format_help()
        for name, parser in _leaf_parsers(cli.build_parser()).items()
        if "--datasets-root" in parser._option_string_actions
    }
    assert {
        "score",
        "export lm-eval",
        "jbbq evaluate",
        "jbbq tiny-model",
        "publish",
        "reproduce",
        "nli init-model",
        "embeddings correlate",
        "speciesism-tiny-models",
    } <= set(with_root)
    for name, text in with_root.items():
        flat = " ".join(text.split())
        assert f"(default: {installed}; set $BIAS_HUB_DATA to move it)" in flat or (
            f"(default: {installed}, from $BIAS_HUB_DATA)" in flat
        ), name
        assert "repository" not in flat, name
        if "--metrics-root" in text:
            metrics = locations.repo_root() / "metrics"
            assert f"parent folder of the metric modules (default: {metrics})" in flat, name


def test_a_checkout_names_its_own_folders(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(locations.DATA_ENV, raising=False)
    monkeypatch.setenv("COLUMNS", "1000")
    text = " ".join(_leaf_parsers(cli.build_parser())["score"].format_help().split())
    assert f"(default: {REPO_ROOT / 'datasets'}, the checkout's)" in text


def test_dataset_path_is_the_folder_under_the_data_root(installed: Path) -> None:
    import bias_hub

    with pytest.raises(FileNotFoundError, match=r"build it with `bias-hub build winobias`"):
        bias_hub.dataset_path("winobias")
    (installed / "winobias").mkdir(parents=True)
    (installed / "winobias" / "README.md").write_text("a card\n", encoding="utf-8")
    assert bias_hub.dataset_path("winobias") == installed / "winobias"


def test_a_missing_dataset_names_the_build_command_and_no_makefile(installed: Path) -> None:
    with pytest.raises(FileNotFoundError) as raised:
        locations.dataset_folder("jbbq")
    message = str(raised.value)
    assert f"{installed / 'jbbq'} is not a built dataset folder" in message
    assert "`bias-hub build jbbq`" in message and "make" not in message


def test_the_dry_run_of_a_reproduction_lists_an_unbuilt_dataset_as_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It used to stop at the first dataset not built, with the error meant for a run.
    code = cli.main(["reproduce", "rnsb_winobias", "--dry-run", "--datasets-root", str(tmp_path)])
    out = capsys.readouterr()
    assert code == 0, out.err
    missing = (
        f"[MISSING] dataset winobias (config all): no dataset folder at {tmp_path / 'winobias'}"
    )
    assert missing in out.out


def test_a_demo_builds_what_it_reads_under_the_data_root(installed: Path) -> None:
    folder = locations.ensure_built("speciesism_templates")
    assert folder == installed / "speciesism_templates" and (folder / "README.md").is_file()
    card = (folder / "README.md").stat().st_mtime_ns
    assert locations.ensure_built("speciesism_templates") == folder
    assert (folder / "README.md").stat().st_mtime_ns == card  # there already: used as it is


def test_only_locations_decides_where_datasets_live() -> None:
    """No part puts datasets under the checkout (or its run folder) by itself."""
    for path in sorted([*REPO_ROOT.glob("builders/**/*.py"), *REPO_ROOT.glob("pipelines/**/*.py")]):
        if path.name == "locations.py":
            continue
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(REPO_ROOT)
        # repo_root() / "datasets", out_dir / "datasets", ...: a root of their own
        assert not re.search(r"""/\s*["']datasets["']""", text), where


def _only_part(monkeypatch: pytest.MonkeyPatch, run_demo) -> None:
    """The demo's parts replaced by one, ``run_demo``."""
    import types

    from bias_hub.pipelines import demo as demo_driver

    part = types.ModuleType("bias_hub.pipelines.stats_part.demo")
    part.ORDER, part.run_demo = 0, run_demo
    monkeypatch.setattr(demo_driver, "demo_parts", lambda: [part])


def test_a_full_demo_builds_what_the_data_root_lacks_before_its_parts(
    installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An install has no `make datasets`: `bias-hub demo` builds the datasets first, so that
    its first part (the dataset statistics) sees them, and times that as a stage."""

    from bias_hub.pipelines import demo as demo_driver
    from bias_hub.pipelines.discovery import builder_commands

    commands = builder_commands()
    # Two builders: one that `bias-hub build all` builds, one that needs the user's data.
    monkeypatch.setattr(
        demo_driver,
        "builder_commands",
        lambda: {name: commands[name] for name in ("speciesism_templates", "winobias")},
    )
    seen: list[list[str]] = []

    def run_demo(out_dir: Path) -> dict:
        seen.append(sorted(p.name for p in installed.iterdir()))
        out_dir.mkdir(parents=True, exist_ok=True)
        return {"title": "Statistics", "summary": ""}

    _only_part(monkeypatch, run_demo)
    out = tmp_path / "demo"
    assert cli.main(["demo", "--out", str(out)]) == 0
    assert seen == [["speciesism_templates"]]
    manifest = json.loads((out / "demo.json").read_text(encoding="utf-8"))
    assert [stage["stage"] for stage in manifest["prior_stages"]] == ["datasets"]
    # built in a forked process while the libraries loaded, where processes fork
    assert manifest["prior_stages"][0]["during_startup"] is demo_driver.can_fork()
    assert "speciesism_templates" in (out / "logs" / "datasets.log").read_text(encoding="utf-8")
    # Built once: the next run builds nothing and keeps no log of builds it did not make.
    assert cli.main(["demo", "--out", str(out)]) == 0
    assert seen[-1] == ["speciesism_templates"]
    assert not (out / "logs" / "datasets.log").exists()


def test_build_datasets_all_rebuilds_what_is_there_and_a_failed_build_stops_the_demo(
    installed: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`make demo` passes --build-datasets all: a folder an older version built is built again
    (in a forked process while the libraries load); a build that fails stops the demo before
    any part, naming the error and the log."""
    import types

    from bias_hub.pipelines import demo as demo_driver
    from bias_hub.pipelines.discovery import builder_commands

    commands = {"speciesism_templates": builder_commands()["speciesism_templates"]}
    monkeypatch.setattr(demo_driver, "builder_commands", lambda: commands)
    ran: list[str] = []

    def run_demo(out_dir: Path) -> dict:
        ran.append("stats")
        out_dir.mkdir(parents=True, exist_ok=True)
        return {"title": "Statistics", "summary": ""}

    _only_part(monkeypatch, run_demo)
    out = tmp_path / "demo"
    assert cli.main(["demo", "--out", str(out)]) == 0  # built: it was missing
    card = installed / "speciesism_templates" / "README.md"
    card.write_text("left by an older version\n", encoding="utf-8")
    assert cli.main(["demo", "--out", str(out)]) == 0  # missing only: kept as it is
    assert card.read_text(encoding="utf-8") == "left by an older version\n"
    assert cli.main(["demo", "--out", str(out), "--build-datasets", "all"]) == 0
    assert "speciesism_templates" in card.read_text(encoding="utf-8")  # built again
    assert "built speciesism_templates" in (out / "logs" / "datasets.log").read_text("utf-8")

    broken = types.ModuleType("bias_hub.builders.broken.command")

    def build(out_root: Path) -> Path:
        raise FileNotFoundError("templates.tsv: no such file")

    commands["broken"] = broken
    broken.__package__ = "bias_hub.builders.broken"
    monkeypatch.setitem(sys.modules, "bias_hub.builders.broken", types.SimpleNamespace(build=build))
    ran.clear()
    assert cli.main(["demo", "--out", str(out), "--build-datasets", "all"]) == 2
    assert ran == []  # no part ran on data that failed to build
    assert "templates.tsv: no such file" in (out / "logs" / "datasets.log").read_text("utf-8")


def test_a_committed_card_without_its_data_is_no_built_folder(installed: Path) -> None:
    # A clone holds the datasets' committed cards but not their data files: a demo read the card
    # as a built folder and failed on the first missing parquet file.
    folder = installed / "speciesism_templates"
    folder.mkdir(parents=True)
    (folder / "README.md").write_text(
        "---\nconfigs:\n- config_name: all\n  data_files:\n  - split: test\n"
        "    path: all/test-00000-of-00001.parquet\n---\n",
        encoding="utf-8",
    )
    with pytest.raises(FileNotFoundError) as error:
        locations.dataset_folder("speciesism_templates")
    assert "has a card but not its data (all/test-00000-of-00001.parquet missing)" in str(
        error.value
    )
    assert "bias-hub build speciesism_templates" in str(error.value)
    assert locations.missing_data_files(folder) == ["all/test-00000-of-00001.parquet"]
    assert locations.ensure_built("speciesism_templates") == folder  # built now
    assert locations.missing_data_files(folder) == []
    assert locations.dataset_folder("speciesism_templates") == folder
