"""Fixture dataset folders, a fixture metric module and a fake ``HfApi`` for the publish tests.

Not collected by pytest (no ``test_`` prefix); the publish test files import it.
"""

from __future__ import annotations

import hashlib
import textwrap
from pathlib import Path

import httpx2
from huggingface_hub.errors import HfHubHTTPError
from huggingface_hub.hf_api import CommitInfo
from huggingface_hub.utils import filter_repo_objects

from bias_hub.builders.dataset_folder import CardMetadata, write_dataset_folder

NLI_LABELS = ["entailment", "neutral", "contradiction"]

METRIC_SOURCE = '''\
"""Share of predictions equal to 1."""

import datasets
import evaluate
import numpy as np

_DESCRIPTION = "Share of predictions equal to 1."
_KWARGS_DESCRIPTION = """
Args:
    predictions (list of int): 0 or 1.
Returns:
    positive_rate (float): share of ones.
Examples:
    >>> metric = evaluate.load("metrics/positive_rate")
    >>> metric.compute(predictions=[1, 0, 1, 1])
    {'positive_rate': 0.75}
"""
_CITATION = ""


class PositiveRate(evaluate.Metric):
    def _info(self):
        return evaluate.MetricInfo(
            description=_DESCRIPTION,
            citation=_CITATION,
            inputs_description=_KWARGS_DESCRIPTION,
            features=datasets.Features({"predictions": datasets.Value("int32")}),
        )

    def _compute(self, predictions):
        return {"positive_rate": float(np.mean(np.asarray(predictions) == 1))}
'''

METRIC_CARD = textwrap.dedent(
    """\
    ---
    title: Positive Rate
    tags:
    - fairness
    ---

    # Metric Card for Positive Rate

    ## Metric Description
    The share of predictions that are 1.

    ## How to Use
    `metric.compute(predictions=[1, 0])`

    ## Inputs
    - **predictions** (list of int)

    ## Output Values
    - **positive_rate** (float, 0..1)

    ## Examples
    See the module docstring.

    ## Limitations and Bias
    None known.

    ## Citation
    None.
    """
)


def make_nli_folder(root: Path, name: str = "tiny_nli") -> Path:
    """Two configs; 'ps' has 7 test rows, 'as' has 3 train and 4 test rows."""
    # Imported here: whether ruff files `datasets` as first- or third-party
    # depends on a datasets/ folder existing, so no import block holds it.
    import datasets

    features = datasets.Features(
        {"premise": datasets.Value("string"), "label": datasets.ClassLabel(names=NLI_LABELS)}
    )
    rows = [{"premise": f"文{i}", "label": i % 3} for i in range(7)]
    configs = {
        "ps": {"test": datasets.Dataset.from_list(rows, features=features)},
        "as": {
            "train": datasets.Dataset.from_list(rows[:3], features=features),
            "test": datasets.Dataset.from_list(rows[3:], features=features),
        },
    }
    meta = CardMetadata(
        pretty_name="Tiny NLI",
        license="cc-by-4.0",
        language=["ja"],
        task_categories=["text-classification"],
    )
    return write_dataset_folder(root / name, configs, meta, "# Tiny NLI\n", default_config="ps")


def make_secret_folder(root: Path, name: str = "secret_qa") -> Path:
    """A dataset whose card forbids redistribution, as the JBBQ builder marks it."""
    import datasets

    table = {"question": ["a?", "b?"], "answer": [0, 2]}
    meta = CardMetadata(
        pretty_name="Secret QA",
        license="other",
        language=["ja"],
        task_categories=["question-answering"],
        extra={"license_name": "authors-only", "redistributable": False},
    )
    return write_dataset_folder(
        root / name, {"default": {"test": datasets.Dataset.from_dict(table)}}, meta, "# Secret QA\n"
    )


def make_metric_module(root: Path, name: str = "positive_rate") -> Path:
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.py").write_text(METRIC_SOURCE, encoding="utf-8")
    (folder / "README.md").write_text(METRIC_CARD, encoding="utf-8")
    return folder


def _not_found(what: str) -> HfHubHTTPError:
    response = httpx2.Response(
        404, request=httpx2.Request("GET", f"https://huggingface.co/api/{what}")
    )
    return HfHubHTTPError(f"404: {what} not found", response=response)


class FakeHub:
    """The few ``HfApi`` methods publish uses, over an in-memory Hub.

    ``upload_folder`` behaves as huggingface_hub's does (unchanged files skipped, files matching
    ``delete_patterns`` that the folder lacks deleted except ``.gitattributes``, no empty commit);
    ``create_commit`` in ``calls`` marks each commit it makes.
    """

    def __init__(
        self,
        user: str = "alice",
        orgs: tuple[str, ...] = ("bias-hub",),
        others: tuple[str, ...] = (),
    ):
        self.user = user
        self.orgs = list(orgs)
        self.others = set(others)  # namespaces that exist but the token cannot write to
        self.repos: dict[tuple[str, str], dict] = {}
        self.calls: list[tuple[str, str]] = []
        self.upload_arguments: list[dict] = []

    def whoami(self) -> dict:
        return {"name": self.user, "orgs": [{"name": org} for org in self.orgs]}

    def get_organization_overview(self, name: str):
        if name in self.orgs or name in self.others:
            return {"name": name}
        raise _not_found(f"organizations/{name}")

    def get_user_overview(self, name: str):
        if name == self.user:
            return {"name": name}
        raise _not_found(f"users/{name}")

    def repo_exists(self, repo_id: str, *, repo_type: str | None = None) -> bool:
        return (repo_type, repo_id) in self.repos

    def list_repo_files(self, repo_id: str, *, repo_type: str | None = None) -> list[str]:
        return sorted(self.repos[(repo_type, repo_id)]["files"])

    def repo_info(self, repo_id: str, *, repo_type: str | None = None):
        repo = self.repos[(repo_type, repo_id)]

        class Info:
            private = repo["private"]
            sha = self._sha(repo)

        return Info()

    def create_repo(
        self, repo_id: str, *, repo_type=None, private=None, exist_ok=False, space_sdk=None
    ):
        self.calls.append(("create_repo", repo_id))
        key = (repo_type, repo_id)
        if key not in self.repos:
            if repo_type == "space" and space_sdk is None:
                raise ValueError("a Space needs space_sdk")
            self.repos[key] = {
                "private": bool(private),
                "gated": False,
                "sdk": space_sdk,
                "files": {".gitattributes": b"*.parquet filter=lfs diff=lfs merge=lfs -text\n"},
                "commits": 0,
            }
        elif not exist_ok:
            raise ValueError(f"{repo_id} exists")

    def update_repo_settings(self, repo_id: str, *, repo_type=None, gated=None):
        self.calls.append(("update_repo_settings", repo_id))
        self.repos[(repo_type, repo_id)]["gated"] = gated

    def upload_folder(
        self,
        *,
        repo_id: str,
        folder_path: str,
        repo_type=None,
        commit_message: str,
        delete_patterns=None,
    ):
        """What the library's upload_folder does to a repo: the folder's files whose content
        differs are added, the remote files matching ``delete_patterns`` that the folder lacks are
        deleted (never .gitattributes), and nothing changed means no commit."""
        self.calls.append(("upload_folder", repo_id))
        self.upload_arguments.append({"repo_id": repo_id, "delete_patterns": delete_patterns})
        repo = self.repos[(repo_type, repo_id)]
        local = {
            path.relative_to(folder_path).as_posix(): path.read_bytes()
            for path in sorted(Path(folder_path).rglob("*"))
            if path.is_file()
        }
        changed = {
            path: content for path, content in local.items() if repo["files"].get(path) != content
        }
        deleted = (
            [
                path
                for path in filter_repo_objects(list(repo["files"]), allow_patterns=delete_patterns)
                if path not in local and path != ".gitattributes"
            ]
            if delete_patterns is not None
            else []
        )
        if changed or deleted:
            self.calls.append(("create_commit", repo_id))
            repo["files"].update(changed)
            for path in deleted:
                del repo["files"][path]
            repo["commits"] += 1
        return CommitInfo(
            commit_url=f"https://huggingface.co/{repo_type}s/{repo_id}/commit/{self._sha(repo)}",
            commit_message=commit_message,
            commit_description="",
            oid=self._sha(repo),
        )

    @staticmethod
    def _sha(repo: dict) -> str:
        return hashlib.sha1(str(repo["commits"]).encode()).hexdigest()

    def uploads(self) -> list[str]:
        return [repo for call, repo in self.calls if call in ("create_repo", "create_commit")]
