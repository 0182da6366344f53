"""Uploading planned repos through ``huggingface_hub``, idempotently.

Everything that can be checked is checked before the first byte goes out: the
token, that the namespace exists and the token may write to it, that no repo
meant to be private already exists as a public one, and which files each
existing repo holds that the plan lacks (a card edited on the Hub keeps its
name and is replaced; a file added there by hand, or one the plan no longer
has, is such a file). Those are listed before the first upload and kept, unless
``prune``: then exactly those are deleted. Each repo's planned files are laid
out in a temporary folder exactly as the repo should hold them and handed to
``HfApi.upload_folder``, which skips files whose content the Hub already has and
makes no commit when nothing changed.
"""

from __future__ import annotations

import glob
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.secrets import register
from bias_hub.pipelines.publish.plan import RepoPlan

__all__ = [
    "PushResult",
    "check_namespace",
    "hub_api",
    "preflight",
    "push_plan",
    "push_plans",
    "remote_files_not_planned",
    "resolve_token",
    "stage_plan",
]

# The Hub's own file, which upload_folder never deletes and no plan lists.
GITATTRIBUTES = ".gitattributes"


@dataclass
class PushResult:
    repo_id: str
    repo_type: str
    files: int
    commit: str | None  # the repo's head after the push
    changed: bool  # whether the push made a commit

    def describe(self) -> str:
        head = f" (commit {self.commit[:8]})" if self.commit else ""
        if not self.changed:
            return f"{self.repo_type} {self.repo_id}: up to date, {self.files} files{head}"
        return f"{self.repo_type} {self.repo_id}: {self.files} files in sync{head}"


def resolve_token(token: str | None = None) -> str:
    """The token from the argument, ``HF_TOKEN`` or the stored login; an error if there is none."""
    from huggingface_hub import get_token

    token = token or get_token()
    if not token:
        raise ValueError(
            "--push needs a Hugging Face token with write access: set HF_TOKEN or run `hf auth login`"
        )
    # A stored login is in no variable the command line registered: a Hub error echoing it
    # must still print ***.
    register(token)
    return token


def hub_api(action: str) -> Any:
    """``HfApi`` with the user's token; refused, naming ``action``, while HF_HUB_OFFLINE is set."""
    from huggingface_hub import HfApi

    if os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        raise ValueError(
            f"--push needs the network, but HF_HUB_OFFLINE is set: unset it to {action}"
        )
    return HfApi(token=resolve_token())


def _status(err: Exception) -> int | None:
    response = getattr(err, "response", None)
    return getattr(response, "status_code", None)


def check_namespace(api: Any, namespace: str) -> None:
    """The namespace must exist and be the token's user or one of its organisations."""
    from huggingface_hub.errors import HfHubHTTPError

    try:
        me = api.whoami()
    except HfHubHTTPError as err:
        if _status(err) in (401, 403):
            raise ValueError(f"the Hub rejected the token ({err}); set a valid HF_TOKEN") from err
        raise
    writable = [me.get("name")] + [org.get("name") for org in me.get("orgs") or []]
    if namespace in writable:
        return
    for lookup in (api.get_organization_overview, api.get_user_overview):
        try:
            lookup(namespace)
            break
        except HfHubHTTPError as err:
            if _status(err) != 404:
                raise
    else:
        raise ValueError(f"--namespace {namespace!r}: no such user or organisation on the Hub")
    raise ValueError(
        f"--namespace {namespace!r}: the token belongs to {me.get('name')!r}, who cannot write there "
        f"(writable namespaces: {', '.join(n for n in writable if n)})"
    )


def preflight(api: Any, plans: list[RepoPlan]) -> None:
    """Refuse to upload private data into a repo that already exists publicly."""
    for plan in plans:
        if not plan.private or not api.repo_exists(plan.repo_id, repo_type=plan.repo_type):
            continue
        info = api.repo_info(plan.repo_id, repo_type=plan.repo_type)
        if not getattr(info, "private", False):
            raise ValueError(
                f"{plan.repo_type} {plan.repo_id} already exists and is PUBLIC; --private refuses to "
                "upload into it. Make it private on the Hub first, or delete it."
            )


def remote_files_not_planned(api: Any, plans: list[RepoPlan]) -> dict[str, list[str]]:
    """``{repo id: [path, ...]}``: the files each existing repo holds that its plan lacks
    (``.gitattributes`` aside), which only ``--prune`` deletes."""
    extra = {}
    for plan in plans:
        if not api.repo_exists(plan.repo_id, repo_type=plan.repo_type):
            continue
        planned = {f.path_in_repo for f in plan.files} | {GITATTRIBUTES}
        remote = api.list_repo_files(plan.repo_id, repo_type=plan.repo_type)
        paths = sorted(path for path in remote if path not in planned)
        if paths:
            extra[plan.repo_id] = paths
    return extra


def stage_plan(plan: RepoPlan, folder: Path) -> Path:
    """Lay the plan's files out under ``folder`` as the repo will hold them (hard links where
    the file system allows, else copies; generated files written); return ``folder``."""
    for planned in plan.files:
        target = folder / planned.path_in_repo
        target.parent.mkdir(parents=True, exist_ok=True)
        if planned.content is not None:
            target.write_bytes(planned.content)
            continue
        try:
            os.link(planned.source, target)
        except OSError:
            shutil.copyfile(planned.source, target)
    return folder


def push_plan(api: Any, plan: RepoPlan, delete: list[str] | None = None) -> PushResult:
    """Bring the repo in line with the plan; of the files it holds that the plan lacks, delete
    ``delete`` (exactly these, listed beforehand) and keep the others."""
    api.create_repo(
        plan.repo_id,
        repo_type=plan.repo_type,
        private=plan.private,
        exist_ok=True,
        **({"space_sdk": plan.space_sdk} if plan.space_sdk else {}),
    )
    if plan.gated:
        # Gate before any data is there: should the repo ever be made public,
        # access still goes through a request the owner approves.
        api.update_repo_settings(plan.repo_id, repo_type=plan.repo_type, gated="manual")
    before = getattr(api.repo_info(plan.repo_id, repo_type=plan.repo_type), "sha", None)
    with tempfile.TemporaryDirectory(prefix="bias-hub-publish-") as staging:
        info = api.upload_folder(
            repo_id=plan.repo_id,
            repo_type=plan.repo_type,
            folder_path=str(stage_plan(plan, Path(staging))),
            commit_message=f"bias-hub publish: {plan.name}",
            # Patterns matching these paths only ([, * and ? in a name matched as themselves).
            delete_patterns=[glob.escape(path) for path in delete] if delete else None,
        )
    after = getattr(info, "oid", None)
    return PushResult(plan.repo_id, plan.repo_type, len(plan.files), after, changed=after != before)


def _network_errors() -> tuple[type[BaseException], ...]:
    """The exceptions of the Hub client's HTTP layer (huggingface_hub has used httpx and httpx2)."""
    import importlib

    from huggingface_hub.errors import HfHubHTTPError

    errors: list[type[BaseException]] = [HfHubHTTPError, ConnectionError, TimeoutError]
    for module, name in (
        ("httpx2", "HTTPError"),
        ("httpx", "HTTPError"),
        ("requests", "RequestException"),
    ):
        try:
            errors.append(getattr(importlib.import_module(module), name))
        except (ImportError, AttributeError):
            continue
    return tuple(errors)


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text[:300]}" if text else type(err).__name__


def push_plans(
    api: Any,
    plans: list[RepoPlan],
    namespace: str,
    *,
    prune: bool = False,
    echo: Callable[[str], None] = print,
) -> list[PushResult]:
    """Check the namespace and every repo first and list the remote files the plans lack, then
    bring each repo in line with its plan; those files are deleted only with ``prune``.

    A network or Hub failure is one ``RuntimeError`` line saying where the push stopped.
    """
    from huggingface_hub import constants

    network = _network_errors()
    endpoint = getattr(api, "endpoint", None) or constants.ENDPOINT
    try:
        check_namespace(api, namespace)
        preflight(api, plans)
        extra = remote_files_not_planned(api, plans)
    except network as err:
        raise UserError(
            f"--push: the Hub at {endpoint} could not be reached while checking the token and the repos "
            f"({_one_line(err)}); nothing was uploaded. Check the network (or HF_ENDPOINT) and run it again"
        ) from None
    for repo_id, paths in extra.items():
        what = (
            "deleted by this push (--prune)"
            if prune
            else "kept: not in the plan (--prune deletes them)"
        )
        echo(f"{repo_id}: {len(paths)} files on the Hub {what}: {', '.join(paths)}")
    results = []
    for plan in plans:
        try:
            result = push_plan(api, plan, extra.get(plan.repo_id) if prune else None)
        except network as err:
            done = ", ".join(r.repo_id for r in results) or "none"
            raise UserError(
                f"--push: {plan.repo_type} {plan.repo_id} failed ({_one_line(err)}); repos already pushed: "
                f"{done}. Running the command again uploads only what is missing"
            ) from None
        echo(result.describe())
        results.append(result)
    return results
