"""Every card's YAML, and every built dataset folder loaded the way the Hub's viewer reads it.

Parametrised over the repository's own ``datasets/*/`` and ``metrics/*/`` folders
plus fixture folders, so the checks run (on the fixtures) even before any
dataset has been built.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from huggingface_hub import DatasetCard, SpaceCard
from publish_fixtures import make_metric_module, make_nli_folder, make_secret_folder

from bias_hub.pipelines.publish.dataset_repo import (
    card_metadata_problems,
    check_dataset_folder,
    discover_dataset_folders,
)
from bias_hub.pipelines.publish.hub_rules import as_list
from bias_hub.pipelines.publish.space_repo import (
    GRADIO_SDK_VERSION,
    check_metric_module,
    discover_metric_modules,
    plan_metric,
    space_card,
)

# `datasets` is imported inside the tests: ruff files it as first- or third-party
# depending on whether a datasets/ folder exists, so no import block holds it.
REPO_ROOT = Path(__file__).resolve().parents[2]
REPO_DATASETS = discover_dataset_folders(REPO_ROOT / "datasets")
REPO_CARDS = [p for p in REPO_DATASETS if (p / "README.md").is_file()]
REPO_BUILT = [p for p in REPO_CARDS if any(p.rglob("*.parquet"))]
REPO_METRICS = discover_metric_modules(REPO_ROOT / "metrics")
FIXTURE_DATASETS = ["fixture:tiny_nli", "fixture:secret_qa"]


@pytest.fixture(scope="module")
def fixture_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("publish_cards")
    make_nli_folder(root / "datasets")
    make_secret_folder(root / "datasets")
    make_metric_module(root / "metrics")
    return root


def _resolve(target: Path | str, root: Path, kind: str) -> Path:
    if isinstance(target, str) and target.startswith("fixture:"):
        return root / kind / target.split(":", 1)[1]
    return Path(target)


def _ids(items: list) -> list[str]:
    return [item if isinstance(item, str) else item.name for item in items]


DATASET_CARDS = FIXTURE_DATASETS + REPO_CARDS
BUILT_DATASETS = FIXTURE_DATASETS + REPO_BUILT
METRIC_MODULES = ["fixture:positive_rate", *REPO_METRICS]


@pytest.mark.parametrize("target", DATASET_CARDS, ids=_ids(DATASET_CARDS))
def test_dataset_card_yaml_is_valid_hub_metadata(target, fixture_root: Path) -> None:
    from datasets.utils.metadata import MetadataConfigs

    folder = _resolve(target, fixture_root, "datasets")
    from datasets import Features

    card = DatasetCard.load(folder / "README.md")
    header = card.data.to_dict()
    assert card_metadata_problems(header) == []
    configs = MetadataConfigs.from_dataset_card_data(card.data)
    infos = as_list(header["dataset_info"])
    assert list(configs) == [entry.get("config_name", "default") for entry in infos], (
        "configs and dataset_info must list the same configs"
    )
    for entry in infos:
        assert Features._from_yaml_list(entry["features"])


@pytest.mark.parametrize("target", BUILT_DATASETS, ids=_ids(BUILT_DATASETS))
def test_built_dataset_loads_as_the_viewer_reads_it(
    target, fixture_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    import datasets

    folder = _resolve(target, fixture_root, "datasets")
    checked = check_dataset_folder(folder)
    assert checked.problems == []
    header = checked.yaml_header
    cache = tmp_path_factory.mktemp("hf_cache")
    for entry in as_list(header["dataset_info"]):
        config = entry.get("config_name", "default")
        features = datasets.Features._from_yaml_list(entry["features"])
        expected = {split["name"]: split["num_examples"] for split in entry["splits"]}
        loaded = datasets.load_dataset(str(folder), config, cache_dir=str(cache))
        assert sorted(loaded) == sorted(expected), f"{config}: splits differ from the card"
        for split, ds in loaded.items():
            assert ds.features == features, f"{config}/{split}: features differ from the card"
            assert ds.num_rows == expected[split]
        # The viewer's first-rows preview streams the Parquet files.
        streamed = datasets.load_dataset(str(folder), config, streaming=True)
        for split in expected:
            first = next(iter(streamed[split]))
            assert set(first) == set(features)


def test_viewer_load_sees_the_fixture_classlabel_names(fixture_root: Path) -> None:
    import datasets

    loaded = datasets.load_dataset(str(fixture_root / "datasets/tiny_nli"), "as")
    assert loaded["train"].features["label"].names == ["entailment", "neutral", "contradiction"]
    assert loaded["test"]["label"] == [0, 1, 2, 0]


@pytest.mark.parametrize("target", METRIC_MODULES, ids=_ids(METRIC_MODULES))
def test_metric_card_becomes_a_valid_space_card(target, fixture_root: Path) -> None:
    folder = _resolve(target, fixture_root, "metrics")
    checked = check_metric_module(folder)
    assert checked.problems == []
    card = SpaceCard(space_card(checked).decode())
    assert card.data.sdk == "gradio"
    assert card.data.app_file == "app.py"
    assert card.data.tags[:2] == ["evaluate", checked.module_type]
    assert card.data.title
    assert card.data.sdk_version == GRADIO_SDK_VERSION


def test_every_real_module_becomes_a_space_on_the_projects_gradio() -> None:
    # Every module folder of the repository, found by the same discovery publish uses (a folder
    # it missed would never become a Space); the eight modules of the five systems among them.
    folders = sorted(
        p
        for p in (REPO_ROOT / "metrics").iterdir()
        if p.is_dir() and not p.name.startswith((".", "_"))
    )
    assert REPO_METRICS == folders
    assert {
        "bbq_bias",
        "gender_attention_gap",
        "nli_gender_bias",
        "perplexity_gap",
        "rnsb",
        "speciesism_bias",
        "weat",
        "winobias_gap",
    } <= {p.name for p in REPO_METRICS}
    for folder in REPO_METRICS:
        checked = check_metric_module(folder)
        assert checked.problems == [], folder.name
        card = SpaceCard(space_card(checked).decode())
        assert (card.data.sdk, card.data.sdk_version, card.data.app_file) == (
            "gradio",
            "3.50.2",
            "app.py",
        ), folder.name
        # The module's own presentation is kept, its card's prose unchanged.
        assert card.data.title == (
            checked.yaml_header.get("title") or folder.name.replace("_", " ").title()
        )
        assert card.text.strip() == checked.card.text.strip()
        assert not (folder / "app.py").exists(), (
            "publish writes the Space's app.py; a copy here goes stale"
        )


def test_a_space_carries_the_shared_helpers_as_a_file_and_their_imports() -> None:
    # Each module imports .bias_hub_common and, where it gives intervals, .bias_hub_intervals
    # (links in the checkout); the Space gets the files' bytes under those names, and their
    # scipy import in requirements.txt.
    shared = REPO_METRICS[0].parent / "_common"
    for folder in REPO_METRICS:
        checked = check_metric_module(folder)
        plan = plan_metric(checked, "bias-hub", private=False)
        planned = {file.path_in_repo: file for file in plan.files}
        for name in ("bias_hub_common.py", "bias_hub_intervals.py"):
            if (folder / name).exists():
                assert planned[name].content == (shared / name).read_bytes(), (folder.name, name)
        assert "bias_hub_common.py" in planned, folder.name
        assert "scipy" in planned["requirements.txt"].content.decode().split(), folder.name
        # The computation, which the module imports beside them.
        scores = f"{folder.name}_scores.py"
        assert planned[scores].content == (folder / scores).read_bytes(), folder.name


def test_a_missing_same_folder_import_is_named(tmp_path: Path) -> None:
    folder = make_metric_module(tmp_path)
    module = folder / f"{folder.name}.py"
    module.write_text(
        "from .helpers import thing\n" + module.read_text(encoding="utf-8"), encoding="utf-8"
    )
    problems = check_metric_module(folder).problems
    assert any(
        "imports .helpers" in problem and "helpers.py is missing" in problem for problem in problems
    ), problems


def test_a_module_cards_sdk_pin_does_not_override_the_projects(tmp_path: Path) -> None:
    folder = make_metric_module(tmp_path)
    readme = folder / "README.md"
    readme.write_text(
        readme.read_text().replace(
            "title: Positive Rate", "title: Positive Rate\nsdk_version: 4.44.0"
        )
    )
    checked = check_metric_module(folder)
    assert checked.yaml_header["sdk_version"] == "4.44.0"
    card = SpaceCard(space_card(checked).decode())
    assert card.data.sdk_version == "3.50.2"  # launch_gradio_widget needs gradio 3 (gr.inputs)
    assert card.data.title == "Positive Rate"


def _rewrite_card(folder: Path, edit) -> None:
    card = DatasetCard.load(folder / "README.md")
    edit(card.data)
    card.save(folder / "README.md")


def test_card_and_parquet_mismatches_are_each_named(tmp_path: Path) -> None:
    folder = make_nli_folder(tmp_path)

    def break_card(header: dict) -> None:
        header["license"] = "other"
        header["language"] = []
        header["task_categories"] = []
        header["size_categories"] = ["1K<n<10K"]
        ps = header["dataset_info"][0]
        ps["features"][1]["dtype"]["class_label"]["names"] = {
            "0": "entailment",
            "1": "neutral",
            "2": "contra",
        }
        ps["splits"][0]["num_examples"] = 8

    _rewrite_card(folder, break_card)
    problems = "\n".join(check_dataset_folder(folder).problems)
    # The values are the Hub's to validate at push (no copy of its vocabularies here); what
    # needs no list is checked: required fields present, a licence 'other' named.
    assert "license 'other' needs `license_name`" in problems
    assert "card YAML: `language` is missing" in problems
    assert "card YAML: `task_categories` is missing" in problems
    # 7 rows in the largest config: the card's bucket is wrong.
    assert "size_categories ['1K<n<10K'] but the largest config has 7 rows (n<1K)" in problems
    assert (
        "ps/test-00000-of-00001.parquet: column 'label' is ClassLabel(names=['entailment', 'neutral', 'contradiction']"
        in problems
    )
    assert (
        "config 'ps', split 'test': the card says 8 examples, the Parquet files hold 7" in problems
    )


def test_labels_beyond_the_card_classes_and_missing_columns_are_found(tmp_path: Path) -> None:
    folder = make_nli_folder(tmp_path)

    def fewer_classes(header: dict) -> None:
        labels = header["dataset_info"][1]["features"][1]["dtype"]["class_label"]
        labels["names"] = {"0": "entailment", "1": "neutral"}
        header["dataset_info"][0]["features"].append({"name": "hypothesis", "dtype": "string"})

    _rewrite_card(folder, fewer_classes)
    problems = "\n".join(check_dataset_folder(folder).problems)
    assert (
        "as/train-00000-of-00001.parquet: column 'label' holds labels 0..2 but the card names 2 classes"
        in problems
    )
    assert (
        "ps/test-00000-of-00001.parquet: columns ['premise', 'label'] differ from the card's dataset_info features ['premise', 'label', 'hypothesis']"
        in problems
    )


def test_metric_module_without_sections_or_with_a_wrong_sdk_is_refused(tmp_path: Path) -> None:
    folder = make_metric_module(tmp_path)
    readme = folder / "README.md"
    readme.write_text(
        readme.read_text()
        .replace("title: Positive Rate", "sdk: streamlit")
        .replace("## Citation", "## Cite")
    )
    problems = "\n".join(check_metric_module(folder).problems)
    assert "`sdk: streamlit` but a module Space needs 'gradio'" in problems
    assert "lacks the section '## Citation'" in problems
