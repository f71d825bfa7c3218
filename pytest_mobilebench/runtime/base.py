"""The runtime interface: where a repository is checked out, patched and its tests run.

Two implementations plug in here: :mod:`pytest_mobilebench.runtime.local` (a temporary git work tree on
the host) and :mod:`pytest_mobilebench.runtime.docker` (one container per instance). Suites only talk to
:class:`Runtime` and :class:`Workspace`; they never call git, subprocess or docker themselves.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pytest_mobilebench.states import InfraKind

__all__ = [
    "ApplyResult",
    "EnvironmentUnavailable",
    "InfraError",
    "NotInRepository",
    "RunResult",
    "Runtime",
    "Workspace",
    "WorkspaceSpec",
]


class InfraError(RuntimeError):
    """The environment failed (daemon down, image build failed, clone failed, disk full, OOM).

    Raised by runtimes; suites turn it into the ``infra_error`` reason and never into a model failure.
    ``kind`` is a member of the closed vocabulary :class:`pytest_mobilebench.states.InfraKind`
    (``InfraKind.CONTAINER_DIED`` ...), stored as its plain string value so it crosses xdist and JSON.

    Raises:
        ValueError: ``kind`` is not an ``InfraKind`` value (the message lists the vocabulary).
    """

    def __init__(self, kind: InfraKind | str, message: str, *, log: str = "") -> None:
        try:
            checked = InfraKind(kind)
        except ValueError:
            raise ValueError(
                f"InfraError kind {kind!r} is not an InfraKind ({', '.join(k.value for k in InfraKind)})"
            ) from None
        super().__init__(f"{checked.value}: {message}")
        self.kind = checked.value
        self.message = message
        self.log = log


class EnvironmentUnavailable(InfraError):
    """A dependency this machine cannot fetch (issue 30, item 3): the registry has no such package or version,
    or the install needs a host outside the registries (a tarball URL, a git dependency, a binary download).
    Neither the candidate's failure nor infrastructure to retry: the suite reports the instance
    ``environment_unavailable`` naming :attr:`subject`. A handler that does not know it sees an ``InfraError``
    of kind ``environment_unavailable`` (never the candidate's).

    Attributes:
        cause: ``package_missing`` | ``host_unreachable`` | ``binary_download``
            (:mod:`pytest_mobilebench.runtime.install_log`).
        subject: the package or host named, e.g. ``left-pad@99.0.0``.
        lines: the install log's lines that show it.
    """

    def __init__(self, cause: str, subject: str, lines: Sequence[str], message: str, *, log: str = "") -> None:
        super().__init__(InfraKind.ENVIRONMENT_UNAVAILABLE, message, log=log)
        self.cause, self.subject, self.lines = cause, subject, tuple(lines)


class NotInRepository(LookupError):
    """The clone source answered, and what the instance names is not in it: a fault of the data, never of the
    infrastructure (a network or daemon failure stays :class:`InfraError`). The suite reports its instance
    ``invalid``, naming the instance and the commit.

    Attributes:
        repo: ``owner/name``.
        url: the clone source asked.
        commits: the commits the source lacks; ``()`` when the source itself does not exist (no repository there).
    """

    def __init__(self, repo: str, url: str, commits: tuple[str, ...] = (), detail: str = "") -> None:
        what = f"commit(s) {', '.join(commits)} not found in" if commits else "no repository at"
        super().__init__(f"{repo}: {what} {url}" + (f" ({detail})" if detail else ""))
        self.repo = repo
        self.url = url
        self.commits = commits


@dataclasses.dataclass(frozen=True)
class WorkspaceSpec:
    """What a runtime needs to prepare one workspace.

    Attributes:
        instance_id: the benchmark instance, used for names and labels.
        repo: ``owner/name``.
        base_commit: full or abbreviated commit id to check out.
        repo_url: where to clone from (already expanded from the URL template).
        environment: the instance's environment record as plain builtins (toolchain versions, recipe
            overrides); the local runtime ignores what it cannot provide.
        run_id: the run's id, used to label containers so they can be swept.
    """

    instance_id: str
    repo: str
    base_commit: str
    repo_url: str
    environment: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    run_id: str = "adhoc"


@dataclasses.dataclass(frozen=True)
class RunResult:
    """Outcome of one command run in a workspace.

    Attributes:
        command: the exact command line that ran (a shell string).
        exit_code: the process's exit status; ``None`` when it was killed for the timeout.
        output: stdout and stderr together, decoded as UTF-8 with replacement.
        duration_s: wall-clock seconds.
        timed_out: True when the wall-clock limit killed it (the whole process group / container).
        oom_killed: kept for older evidence files; the Docker runtime raises ``InfraError("oom_killed")``
            instead (an OOM kill of any process is infrastructure, whatever the exit status).
    """

    command: str
    exit_code: int | None
    output: str
    duration_s: float
    timed_out: bool = False
    oom_killed: bool = False

    def to_dict(self) -> dict[str, Any]:
        """Plain-builtin form for evidence files."""
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class ApplyResult:
    """Outcome of applying one patch.

    Attributes:
        ok: whether the patch is now applied.
        method: the strategy that worked: ``"git apply"``, ``"git apply --3way"`` or ``"patch --fuzz"``;
            ``None`` when all failed.
        log: every attempt's command and output, in order (the real error is kept).
    """

    ok: bool
    method: str | None
    log: str

    def to_dict(self) -> dict[str, Any]:
        """Plain-builtin form for evidence files."""
        return dataclasses.asdict(self)


@runtime_checkable
class Workspace(Protocol):
    """One checked-out repository at its base commit, owned by one pytest item.

    ``root`` is the repository folder as the test process sees it (a host path for the local runtime,
    ``/testbed`` in a container); parsers use it to make file paths in test ids repository-relative.
    ``results_root`` is an absolute folder outside the repository, random per workspace, where the
    harness's own result files go (:func:`pytest_mobilebench.trust.relocate_results`).
    """

    root: Any
    results_root: str

    def apply_patch(self, patch: str, *, name: str) -> ApplyResult:
        """Apply a unified diff: ``git apply``, then ``git apply --3way``, then ``patch --fuzz``.

        The tree is reset to its state before the call between attempts. ``name`` labels the
        evidence ("model_patch", "test_patch").
        """

    def restore_paths(self, paths: Sequence[str]) -> None:
        """Restore the given repository-relative paths to the base commit (deleting files absent there).
        Any number of paths: they travel in a file (:meth:`put_input`), never on one command line."""

    def put_input(self, name: str, data: bytes) -> str:
        """Write a harness input (a file list, a script) outside the repository and return its absolute
        path as commands see it; ``name`` is a plain file name. File lists reach commands this way
        (``--stdin``, ``xargs -0 -a``), never on a command line that can overflow (``E2BIG``)."""

    def run(self, command: str, *, timeout_s: float, network: bool = False) -> RunResult:
        """Run a shell command at the repository root under a wall-clock limit.

        On timeout the whole process group (or container) is killed and ``timed_out`` is set.
        ``network=False`` asks for networking to be off where the runtime can enforce it.
        """

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        """Return ``{relative path: bytes}`` for regular files matching any glob (``**`` allowed) under the
        root; an absolute pattern names files outside it (key: the path without its leading ``/``).
        Links and names leaving their folder are never read."""

    def clear_files(self, patterns: Sequence[str]) -> list[str]:
        """Delete the files matching ``patterns`` and empty ``results_root`` (before a test run); return
        the deleted names as :meth:`read_files` keys them."""

    def diff(self) -> str:
        """The work tree's diff against the base commit, as ``git diff`` prints it (for evidence)."""

    def close(self) -> None:
        """Remove the workspace (work tree or container). Safe to call twice."""


@runtime_checkable
class Runtime(Protocol):
    """Factory of workspaces. ``name`` is ``"local"`` or ``"docker"``."""

    name: str

    def prepare(self, spec: WorkspaceSpec, *, log_dir: Path | None = None) -> Workspace:
        """Check out ``spec.repo`` at ``spec.base_commit`` and return a ready workspace.

        Raises:
            InfraError: the repository cannot be fetched, the image cannot be built, the daemon is down.
        """
