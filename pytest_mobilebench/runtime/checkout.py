"""Host-side git work of the container runtime: a shallow checkout or a plain export of one commit of a
repository's bare mirror (:class:`~pytest_mobilebench.runtime.repos.RepoCache`). Failures are
``InfraError("clone_failed")``."""

from __future__ import annotations

import io
import subprocess
import tarfile
from collections.abc import Sequence
from pathlib import Path

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.git import GitError, run_git
from pytest_mobilebench.runtime.images import BASELINE_REF
from pytest_mobilebench.states import InfraKind

__all__ = ["export_tree", "shallow_checkout"]


def _git(args: Sequence[str], cwd: Path | None = None) -> str:
    try:
        return run_git(args, cwd=cwd).strip()
    except GitError as exc:
        raise InfraError(InfraKind.CLONE_FAILED, str(exc)) from exc


def shallow_checkout(mirror: Path, commit: str, dest: Path) -> str:
    """Check out ``commit`` of the bare ``mirror`` into the new folder ``dest`` with a depth-1 ``.git``.

    The ``.git`` is self-contained (no alternates), so ``dest`` can be copied into an image; the commit is
    tagged ``mobilebench-base`` like :meth:`RepoCache.checkout` does. Returns the full commit id.

    Raises:
        InfraError("clone_failed"): the commit is not in the mirror or git fails.
    """
    sha = _git(["rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=mirror)
    dest.mkdir(parents=True, exist_ok=True)
    _git(["-c", "init.defaultBranch=main", "init", "-q", str(dest)])
    _git(
        [
            "-c",
            "uploadpack.allowAnySHA1InWant=true",
            "fetch",
            "-q",
            "--depth",
            "1",
            "--no-tags",
            mirror.resolve().as_uri(),
            sha,
        ],
        cwd=dest,
    )
    _git(["-c", "advice.detachedHead=false", "checkout", "-q", "--force", sha], cwd=dest)
    _git(["tag", "-f", BASELINE_REF], cwd=dest)
    return sha


def export_tree(mirror: Path, commit: str, dest: Path) -> str:
    """Write the files of ``commit`` (no ``.git``) into the new folder ``dest`` with ``git archive``.

    Cheaper than :func:`shallow_checkout` (one git process); used to infer the recipe when the instance
    image may already exist. Returns the full commit id.

    Raises:
        InfraError("clone_failed"): the commit is not in the mirror or git fails.
    """
    sha = _git(["rev-parse", "--verify", f"{commit}^{{commit}}"], cwd=mirror)
    dest.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["git", "archive", "--format=tar", sha], cwd=mirror, capture_output=True, check=False)
    if proc.returncode != 0:
        raise InfraError(
            InfraKind.CLONE_FAILED, f"git archive {sha} failed: {proc.stderr.decode(errors='replace').strip()}"
        )
    with tarfile.open(fileobj=io.BytesIO(proc.stdout), mode="r:") as tar:
        tar.extractall(dest, filter="tar")
    return sha
