"""``bias-hub publish``: the dry-run plan, the refusals, and the push against a fake Hub."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml
from publish_fixtures import FakeHub, make_metric_module, make_nli_folder, make_secret_folder

from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder
from bias_hub.builders.shared.benchmark import EVAL_YAML
from bias_hub.pipelines import cli
from bias_hub.pipelines.common.locations import import_evaluate
from bias_hub.pipelines.publish.command import publish


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One read-only tree: two dataset folders and one metric module."""
    root = tmp_path_factory.mktemp("publish_src")
    make_nli_folder(root / "datasets")
    make_secret_folder(root / "datasets")
    make_metric_module(root / "metrics")
    return root


@pytest.fixture
def tree(built: Path, tmp_path: Path) -> Path:
    """A copy of the built tree that a test may break."""
    shutil.copytree(built, tmp_path / "src")
    return tmp_path / "src"


def _publish(root: Path, **kwargs):
    lines: list[str] = []
    kwargs.setdefault("namespace", "bias-hub")
    plans = publish(
        datasets_root=root / "datasets", metrics_root=root / "metrics", echo=lines.append, **kwargs
    )
    return plans, "\n".join(lines)


def _yaml(data: bytes) -> dict:
    return yaml.safe_load(data.decode().split("---")[1])


def test_dry_run_lists_every_repo_type_visibility_and_file_size(built: Path) -> None:
    plans, out = _publish(built, private=True)
    by_id = {plan.repo_id: plan for plan in plans}
    assert sorted(by_id) == ["bias-hub/positive_rate", "bias-hub/secret_qa", "bias-hub/tiny_nli"]
    nli = by_id["bias-hub/tiny_nli"]
    assert (nli.repo_type, nli.visibility) == ("dataset", "private")
    assert [f.path_in_repo for f in nli.files] == [
        "README.md",
        "ps/test-00000-of-00001.parquet",
        "as/train-00000-of-00001.parquet",
        "as/test-00000-of-00001.parquet",
    ]
    parquet = built / "datasets/tiny_nli/as/train-00000-of-00001.parquet"
    assert nli.files[2].size == parquet.stat().st_size
    assert by_id["bias-hub/secret_qa"].visibility == "private, gated"
    space = by_id["bias-hub/positive_rate"]
    assert (space.repo_type, space.space_sdk) == ("space", "gradio")
    assert [f.path_in_repo for f in space.files] == [
        "positive_rate.py",
        "README.md",
        "app.py",
        "requirements.txt",
    ]
    assert "dataset  bias-hub/tiny_nli  [private]  ok" in out
    assert "space    bias-hub/positive_rate  [private]  ok" in out
    assert "as/train-00000-of-00001.parquet" in out
    assert "dry run: 3 repos, 10 files" in out


def test_non_redistributable_dataset_is_refused_without_private(built: Path) -> None:
    with pytest.raises(ValueError, match="1 of 3 repos cannot be published.*secret_qa.*--private"):
        _publish(built)
    plans, out = _publish(built, only=["tiny_nli", "positive_rate"])
    assert {plan.visibility for plan in plans} == {"public"}


def test_refused_dataset_is_listed_as_refused_in_the_cli_output(built: Path, capsys) -> None:
    code = cli.main(
        [
            "publish",
            "--namespace",
            "bias-hub",
            "--datasets-root",
            str(built / "datasets"),
            "--metrics-root",
            str(built / "metrics"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 2
    assert "dataset  bias-hub/secret_qa  [public]  REFUSED" in captured.out
    assert "nothing was uploaded" in captured.err


def test_private_dataset_card_gets_the_gated_access_fields(built: Path) -> None:
    plans, _ = _publish(built, private=True, only=["secret_qa"])
    card = _yaml(plans[0].files[0].read_bytes())
    assert card["redistributable"] is False
    assert card["extra_gated_prompt"] and "redistributed" in card["extra_gated_prompt"]
    assert "checkbox" in card["extra_gated_fields"].values()
    # The rest of the card is unchanged.
    original = yaml.safe_load((built / "datasets/secret_qa/README.md").read_text().split("---")[1])
    assert {k: card[k] for k in original} == original


def test_metric_space_files(built: Path) -> None:
    plans, _ = _publish(built, only=["positive_rate"], namespace="someone")
    files = {f.path_in_repo: f.read_bytes() for f in plans[0].files}
    card = _yaml(files["README.md"])
    assert card["sdk"] == "gradio" and card["app_file"] == "app.py"
    assert card["title"] == "Positive Rate"
    assert card["tags"] == ["evaluate", "metric", "fairness"]
    assert card["description"] == "The share of predictions that are 1."
    assert files["app.py"].decode().splitlines() == [
        "import evaluate",
        "from evaluate.utils import launch_gradio_widget",
        "",
        'module = evaluate.load("someone/positive_rate")',
        "launch_gradio_widget(module)",
    ]
    compile(files["app.py"], "app.py", "exec")
    requirements = files["requirements.txt"].decode().split()
    # The module imports datasets, evaluate and numpy; gradio 3 needs numpy 1.
    assert requirements[0] == "datasets" and requirements[2] == "numpy<2" and len(requirements) == 3
    assert requirements[1].startswith("evaluate==")
    assert card["sdk_version"].startswith("3."), "launch_gradio_widget needs gradio 3 (gr.inputs)"
    assert (
        files["positive_rate.py"] == (built / "metrics/positive_rate/positive_rate.py").read_bytes()
    )


def test_push_uploads_once_and_then_only_what_changed(tree: Path) -> None:
    hub = FakeHub()
    _publish(tree, private=True, push=True, api=hub)
    nli = hub.repos[("dataset", "bias-hub/tiny_nli")]
    assert nli["private"] is True and nli["commits"] == 1
    local = tree / "datasets/tiny_nli/as/test-00000-of-00001.parquet"
    assert nli["files"]["as/test-00000-of-00001.parquet"] == local.read_bytes()
    assert hub.repos[("dataset", "bias-hub/secret_qa")]["gated"] == "manual"
    assert (
        b"extra_gated_fields" in hub.repos[("dataset", "bias-hub/secret_qa")]["files"]["README.md"]
    )
    space = hub.repos[("space", "bias-hub/positive_rate")]
    assert space["sdk"] == "gradio" and "app.py" in space["files"]
    # New repos: nothing on the Hub to delete.
    assert [a["delete_patterns"] for a in hub.upload_arguments] == [None] * len(
        hub.upload_arguments
    )
    assert {a["repo_id"] for a in hub.upload_arguments} == {
        "bias-hub/tiny_nli",
        "bias-hub/secret_qa",
        "bias-hub/positive_rate",
    }

    hub.calls.clear()
    _publish(tree, private=True, push=True, api=hub)
    assert [call for call, _ in hub.calls if call == "create_commit"] == []

    # Drop a config from the card and its file: one commit on the dataset repo (the card),
    # nothing elsewhere; the config's file stays on the Hub, listed, until --prune.
    card_path = tree / "datasets/tiny_nli/README.md"
    card = yaml.safe_load(card_path.read_text().split("---")[1])
    card["configs"] = [c for c in card["configs"] if c["config_name"] != "ps"]
    card["dataset_info"] = [c for c in card["dataset_info"] if c["config_name"] != "ps"]
    card_path.write_text("---\n" + yaml.safe_dump(card, sort_keys=False) + "---\n\n# Tiny NLI\n")
    shutil.rmtree(tree / "datasets/tiny_nli/ps")
    hub.calls.clear()
    _, printed = _publish(tree, private=True, push=True, api=hub)
    assert [repo for call, repo in hub.calls if call == "create_commit"] == ["bias-hub/tiny_nli"]
    assert "ps/test-00000-of-00001.parquet" in nli["files"]
    assert (
        "bias-hub/tiny_nli: 1 files on the Hub kept: not in the plan (--prune deletes them): "
        "ps/test-00000-of-00001.parquet" in printed
    )
    hub.calls.clear()
    _, printed = _publish(tree, private=True, push=True, prune=True, api=hub)
    assert [repo for call, repo in hub.calls if call == "create_commit"] == ["bias-hub/tiny_nli"]
    assert "1 files on the Hub deleted by this push (--prune)" in printed
    assert sorted(nli["files"]) == [
        ".gitattributes",
        "README.md",
        "as/test-00000-of-00001.parquet",
        "as/train-00000-of-00001.parquet",
    ]
    assert nli["files"]["README.md"] == card_path.read_bytes()


def test_pushed_space_loads_as_an_evaluate_module(built: Path, tmp_path: Path) -> None:
    evaluate = import_evaluate()

    hub = FakeHub()
    _publish(built, only=["positive_rate"], push=True, api=hub)
    # evaluate.load("<org>/<name>") fetches the Space and imports <name>.py from it.
    space = tmp_path / "positive_rate"
    space.mkdir()
    for path, content in hub.repos[("space", "bias-hub/positive_rate")]["files"].items():
        (space / path).write_bytes(content)
    metric = evaluate.load(str(space))
    assert metric.compute(predictions=[1, 0, 1, 1]) == {"positive_rate": 0.75}


def test_push_without_token_fails_before_any_request(built: Path, monkeypatch) -> None:
    import huggingface_hub

    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    with pytest.raises(ValueError, match="--push needs a Hugging Face token"):
        _publish(built, only=["tiny_nli"], push=True)


def test_push_while_offline_is_refused(built: Path, monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ValueError, match="HF_HUB_OFFLINE"):
        _publish(built, only=["tiny_nli"], push=True)


def test_unknown_namespace_fails_before_any_upload(built: Path) -> None:
    hub = FakeHub()
    with pytest.raises(ValueError, match="'nobody': no such user or organisation"):
        _publish(built, namespace="nobody", only=["tiny_nli"], push=True, api=hub)
    assert hub.uploads() == []


def test_namespace_of_someone_else_fails_before_any_upload(built: Path) -> None:
    hub = FakeHub(others=("stranger-org",))
    with pytest.raises(ValueError, match="'alice', who cannot write there"):
        _publish(built, namespace="stranger-org", only=["tiny_nli"], push=True, api=hub)
    assert hub.uploads() == []


def test_private_upload_into_an_existing_public_repo_is_refused(built: Path) -> None:
    hub = FakeHub()
    hub.create_repo("bias-hub/secret_qa", repo_type="dataset", private=False)
    hub.calls.clear()
    with pytest.raises(ValueError, match="already exists and is PUBLIC"):
        _publish(built, private=True, push=True, api=hub)
    assert hub.uploads() == []


def test_invalid_namespace_name_and_unknown_only_are_errors(built: Path) -> None:
    with pytest.raises(ValueError, match="not a valid Hub user or organisation name"):
        _publish(built, namespace="bad name")
    with pytest.raises(
        ValueError, match="--only: nope is neither.*known: positive_rate, secret_qa, tiny_nli"
    ):
        _publish(built, only=["nope"])


def test_config_pointing_at_a_missing_file_blocks_the_push(tree: Path) -> None:
    (tree / "datasets/tiny_nli/as/test-00000-of-00001.parquet").unlink()
    hub = FakeHub()
    with pytest.raises(
        ValueError,
        match="tiny_nli: config 'as', split 'test': data file as/test-00000-of-00001.parquet does not exist",
    ):
        _publish(tree, only=["tiny_nli"], push=True, api=hub)
    assert hub.calls == []


def test_unbuilt_folder_is_skipped_unless_named(tree: Path) -> None:
    for sub in (tree / "datasets/tiny_nli").iterdir():
        if sub.is_dir():
            shutil.rmtree(sub)
    plans, out = _publish(tree, private=True)
    assert "skipped dataset tiny_nli" in out and "bias-hub build tiny_nli" in out
    assert "bias-hub/tiny_nli" not in {plan.repo_id for plan in plans}
    with pytest.raises(
        ValueError, match="was never built .no Parquet files.: run `bias-hub build tiny_nli`"
    ):
        _publish(tree, only=["tiny_nli"], push=True, api=FakeHub())


def test_nothing_to_publish_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="nothing to publish"):
        _publish(tmp_path)


def test_files_no_config_names_are_listed_but_not_uploaded(tree: Path) -> None:
    (tree / "datasets/tiny_nli/notes.txt").write_text("scratch", encoding="utf-8")
    plans, out = _publish(tree, only=["tiny_nli"])
    assert plans[0].ignored == ["notes.txt"]
    assert "notes.txt" not in [f.path_in_repo for f in plans[0].files]
    assert "not uploaded (no config names it): notes.txt" in out


def test_two_default_configs_are_a_problem(tree: Path) -> None:
    card_path = tree / "datasets/tiny_nli/README.md"
    card_path.write_text(
        card_path.read_text().replace("config_name: as\n", "config_name: as\n  default: true\n", 1)
    )
    with pytest.raises(ValueError, match="several default configs"):
        _publish(tree, only=["tiny_nli"])


def test_rejected_token_is_a_clear_error(built: Path) -> None:
    import httpx2
    from huggingface_hub.errors import HfHubHTTPError

    class RejectingHub(FakeHub):
        def whoami(self):
            response = httpx2.Response(
                401, request=httpx2.Request("GET", "https://huggingface.co/api/whoami-v2")
            )
            raise HfHubHTTPError("401 Unauthorized", response=response)

    hub = RejectingHub()
    with pytest.raises(ValueError, match="the Hub rejected the token"):
        _publish(built, only=["tiny_nli"], push=True, api=hub)
    assert hub.uploads() == []


def test_an_unreachable_hub_is_one_line_naming_where_the_push_stopped(tree: Path) -> None:
    import httpx2

    class UnreachableHub(FakeHub):
        def upload_folder(self, **kwargs):
            if kwargs["repo_id"] == "bias-hub/tiny_nli":
                raise httpx2.ConnectError("[Errno -2] Name or service not known")
            return super().upload_folder(**kwargs)

    with pytest.raises(RuntimeError) as caught:
        _publish(tree, private=True, push=True, api=UnreachableHub())
    message = str(caught.value)
    assert "\n" not in message
    # The plans go in folder-name order: secret_qa was pushed before tiny_nli failed.
    assert message.startswith(
        "--push: dataset bias-hub/tiny_nli failed (ConnectError: [Errno -2] Name or"
    )
    assert "repos already pushed: bias-hub/secret_qa." in message

    class NoNetwork(FakeHub):
        def whoami(self):
            raise httpx2.ConnectError("[Errno 101] Network is unreachable")

    hub = NoNetwork()
    with pytest.raises(
        RuntimeError,
        match=r"^--push: the Hub at \S+ could not be reached while checking the "
        r"token and the repos \(ConnectError: \[Errno 101\] Network is unreachable\); nothing "
        r"was uploaded",
    ):
        _publish(tree, private=True, push=True, api=hub)
    assert hub.uploads() == []


def _nli_benchmark(root: Path) -> Path:
    import datasets

    features = datasets.Features({"premise": datasets.Value("string")})
    table = datasets.Dataset.from_list([{"premise": f"文{i}"} for i in range(3)], features=features)
    meta = CardMetadata(
        pretty_name="NLI",
        license="mit",
        language=["ja"],
        task_categories=["text-classification"],
    )
    return write_dataset_folder(root / "nli_gender_bias", {"all": {"test": table}}, meta, "# NLI\n")


def test_publish_pushes_eval_yaml_and_refuses_a_broken_one(tmp_path: Path) -> None:
    folder = _nli_benchmark(tmp_path / "datasets")
    (tmp_path / "metrics").mkdir()
    lines: list[str] = []
    hub = FakeHub()
    publish(
        "bias-hub",
        push=True,
        api=hub,
        echo=lines.append,
        datasets_root=tmp_path / "datasets",
        metrics_root=tmp_path / "metrics",
    )
    pushed = hub.repos[("dataset", "bias-hub/nli_gender_bias")]["files"]
    assert yaml.safe_load(pushed[EVAL_YAML])["tasks"] == [
        {"id": "bias_score", "config": "all", "split": "test"},
        {"id": "fraction_neutral", "config": "all", "split": "test"},
    ]
    assert any(line.strip().startswith("eval.yaml") for line in "\n".join(lines).splitlines())

    spec = yaml.safe_load((folder / EVAL_YAML).read_text(encoding="utf-8"))
    spec["tasks"][1]["split"] = "validation"
    (folder / EVAL_YAML).write_text(yaml.safe_dump(spec), encoding="utf-8")
    hub.calls.clear()
    with pytest.raises(ValueError, match=r"nothing was uploaded.*has no split `validation`"):
        publish(
            "bias-hub",
            push=True,
            api=hub,
            echo=lines.append,
            datasets_root=tmp_path / "datasets",
            metrics_root=tmp_path / "metrics",
        )
    assert not [call for call, _ in hub.calls if call == "create_commit"]
    (folder / EVAL_YAML).unlink()
    with pytest.raises(
        ValueError, match=r"no eval.yaml .*rebuild it with `bias-hub build nli_gender_bias`"
    ):
        publish(
            "bias-hub",
            api=hub,
            echo=lines.append,
            datasets_root=tmp_path / "datasets",
            metrics_root=tmp_path / "metrics",
        )
