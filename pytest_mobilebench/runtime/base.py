"""The runtime interface: where a repository is checked out, patched and its tests run.

Two implementations plug in here: :mod:`pytest_mobilebench.runtime.local` (a temporary git work tree on
the host) and :mod:`pytest_mobilebench.runtime.docker` (one container per instance). Suites only talk to
:class:`Runtime` and :class:`Workspace`; they never call git, subprocess or docker themselves.
"""

from __future__ import annotations

import abc
import dataclasses
import enum
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pytest_mobilebench.states import InfraKind

__all__ = [
    "ApplyResult",
    "Capability",
    "EnvironmentUnavailable",
    "InfraError",
    "MissingCapability",
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
        environment_setup_commit: the commit whose install inputs (manifests, lockfiles, the files the
            install reads) the dependencies are installed from, the checkout staying at ``base_commit``
            (SWE-bench's field); None: the base's own.
    """

    instance_id: str
    repo: str
    base_commit: str
    repo_url: str
    environment: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    run_id: str = "adhoc"
    environment_setup_commit: str | None = None


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


@enum.unique
class Capability(str, enum.Enum):
    """What a workspace can do that a verdict rests on (issue 32, item 1): a suite grading an untrusted candidate
    on a workspace without the one it needs refuses the candidate (:class:`MissingCapability`,
    ``provider_lacks_capability``: the provider's, never the candidate's), or, for trusted code, runs without it
    and records the run as unharnessed. Plain string values, so they cross xdist and JSON.
    """

    #: :meth:`Workspace.run_with_channel`: a result channel the test user cannot open by name (jest's harness)
    RESULT_CHANNEL = "result_channel"
    #: :meth:`Workspace.write_root_files`: files the test user can neither change nor replace (canaries, known answers)
    ROOT_FILES = "root_files"
    #: :meth:`Workspace.applies_at_base`: whether a test patch applies to the base tree (a conflict is the candidate's)
    BASE_CHECK = "base_check"
    #: :meth:`Workspace.root_exec`: a harness command as root after the candidate's processes stopped (an agent's
    #: patch taken with the harness's own git directory)
    ROOT_EXEC = "root_exec"
    #: ``run(network=False)`` is enforced: the command has no route off the machine
    NETWORK_OFF = "network_off"


class MissingCapability(InfraError):
    """A workspace was asked for a member its provider does not declare (:class:`Capability`).

    An ``InfraError`` of kind ``provider_lacks_capability``: the run is the provider's failure, never the candidate's.

    Attributes:
        capability: the capability's value (``"result_channel"``).
    """

    def __init__(self, capability: Capability, message: str) -> None:
        super().__init__(InfraKind.PROVIDER_LACKS_CAPABILITY, f"{message} (capability {capability.value!r})")
        self.capability = capability.value


class Workspace(abc.ABC):
    """One checked-out repository at its base commit, owned by one pytest item: the one base every runtime's
    workspace subclasses (the shape of inspect_ai's ``SandboxEnvironment``), declaring every member a suite calls.

    * Abstract members: every provider implements them (:mod:`pytest_mobilebench.runtime.conformance` checks them).
    * Members that only save time have safe defaults here (:meth:`stage_patches`, :meth:`list_ahead`,
      :meth:`forget_reads`, :meth:`list_files`, :meth:`stop_leftovers`, :meth:`close_later`,
      :attr:`pristine_image_id`, :attr:`rejected`).
    * Members a verdict rests on are :class:`Capability` members: a subclass implements them and lists them in
      :attr:`capabilities`; here they raise :class:`MissingCapability`. Suites read :attr:`capabilities`, never
      the members' presence.

    ``root`` is the repository folder as the test process sees it (a host path for the local runtime,
    ``/testbed`` in a container); parsers use it to make file paths in test ids repository-relative.
    ``results_root`` is an absolute folder outside the repository, random per workspace, where the
    harness's own result files go (:func:`pytest_mobilebench.trust.relocate_results`).
    """

    root: Any
    results_root: str
    #: what this workspace can do that a verdict rests on
    capabilities: frozenset[Capability] = frozenset()
    #: names refused by the last :meth:`read_files` (``runtime.channel.Rejected``: ``name``, ``why``), for the evidence
    rejected: Sequence[Any] = ()

    def has(self, capability: Capability) -> bool:
        """Whether :attr:`capabilities` holds ``capability``."""
        return capability in self.capabilities

    def require(self, capability: Capability, what: str) -> None:
        """Refuse ``what`` when :attr:`capabilities` lacks ``capability``.

        Raises:
            MissingCapability: naming ``what``, the workspace's class and the capability.
        """
        if capability not in self.capabilities:
            raise MissingCapability(capability, f"{what}: the {type(self).__name__} workspace cannot")

    # ------------------------------------------------------------------------- required of every provider

    @abc.abstractmethod
    def apply_patch(self, patch: str, *, name: str) -> ApplyResult:
        """Apply a unified diff: ``git apply``, then ``git apply --3way``, then ``patch --fuzz``.

        The tree is reset to its state before the call between attempts. ``name`` labels the
        evidence ("model_patch", "test_patch").
        """

    @abc.abstractmethod
    def restore_paths(self, paths: Sequence[str]) -> None:
        """Restore the given repository-relative paths to the base commit (deleting files absent there).
        Any number of paths: they travel in a file (:meth:`put_input`), never on one command line."""

    @abc.abstractmethod
    def put_input(self, name: str, data: bytes) -> str:
        """Write a harness input (a file list, a script) outside the repository and return its absolute
        path as commands see it; ``name`` is a plain file name. File lists reach commands this way
        (``--stdin``, ``xargs -0 -a``), never on a command line that can overflow (``E2BIG``)."""

    @abc.abstractmethod
    def run(self, command: str, *, timeout_s: float, network: bool = False) -> RunResult:
        """Run a shell command at the repository root under a wall-clock limit.

        On timeout the whole process group (or container) is killed and ``timed_out`` is set.
        ``network=False`` asks for networking to be off; enforced where :attr:`capabilities` holds
        :attr:`Capability.NETWORK_OFF`.
        """

    @abc.abstractmethod
    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        """Return ``{relative path: bytes}`` for regular files matching any glob (``**`` allowed) under the
        root; an absolute pattern names files outside it (key: the path without its leading ``/``).
        Links and names leaving their folder are never read."""

    @abc.abstractmethod
    def clear_files(self, patterns: Sequence[str]) -> list[str]:
        """Delete the files matching ``patterns`` and empty ``results_root`` (before a test run); return
        the deleted names as :meth:`read_files` keys them."""

    @abc.abstractmethod
    def diff(self) -> str:
        """The work tree's diff against the base commit, as ``git diff`` prints it (for evidence)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Remove the workspace (work tree or container). Safe to call twice."""

    # -------------------------------------------------------------- time savers: safe defaults

    @property
    def pristine_image_id(self) -> str | None:
        """An id of the files the workspace holds while they are an image's, byte for byte (nothing run or
        copied in yet), so base reads may be shared between candidates; None (the default): nothing is shared."""
        return None

    def stage_patches(self, patches: Mapping[str, str]) -> None:
        """Copy the inputs of the later :meth:`apply_patch` calls ``{name: patch}`` in at once (default: nothing;
        each apply copies its own)."""

    def list_ahead(self, patterns: Sequence[str]) -> None:
        """Name files a read at this moment will want, so one listing serves both (default: nothing)."""

    def forget_reads(self) -> None:
        """Make the next read list and copy afresh (default: nothing is kept between reads)."""

    def list_files(self, patterns: Sequence[str]) -> list[str]:
        """The keys :meth:`read_files` would give for ``patterns`` (default: read them and keep the names)."""
        return list(self.read_files(patterns))

    def stop_leftovers(self) -> None:
        """Stop every process a command left behind (default: nothing; right for a runtime whose :meth:`run`
        leaves nothing running, as the local one kills the command's whole process group)."""

    def close_later(self) -> None:
        """Close the workspace, its removal in the background where the runtime can (default: :meth:`close`)."""
        self.close()

    # ----------------------------------------------------- capabilities: declared in ``capabilities``

    def run_with_channel(
        self, command: str, *, files: Mapping[str, bytes], key: bytes, timeout_s: float
    ) -> tuple[RunResult, bytes, bytes | None]:
        """:attr:`Capability.RESULT_CHANNEL`: run ``command`` as the test user, offline, with ``files`` (absolute
        path -> bytes) written root-owned first, the channel open for appending as fd 3, ``key`` readable as fd 4
        and a status file as fd 5; then stop what it left and copy the channel out.

        Returns:
            ``(run, channel bytes, status bytes)``; ``b""`` when the channel is missing, None when the status is.

        Raises:
            MissingCapability: the workspace declares no result channel.
        """
        raise MissingCapability(Capability.RESULT_CHANNEL, f"{type(self).__name__} has no result channel")

    def write_root_files(self, files: Mapping[str, bytes], *, private: str) -> None:
        """:attr:`Capability.ROOT_FILES`: write ``files`` (absolute paths) root-owned; ``private`` becomes a 0700
        folder and its files 0600 (``""``: none); other new folders 0755.

        Raises:
            MissingCapability: the workspace cannot write files the test user cannot change.
        """
        raise MissingCapability(Capability.ROOT_FILES, f"{type(self).__name__} cannot write root-owned files")

    def applies_at_base(self, patch: str) -> tuple[bool, str]:
        """:attr:`Capability.BASE_CHECK`: ``(whether patch applies to the base tree, git's output)``, the work tree
        untouched.

        Raises:
            MissingCapability: the workspace cannot check a patch against its base tree.
        """
        raise MissingCapability(Capability.BASE_CHECK, f"{type(self).__name__} cannot check a patch at base")

    def root_exec(self, argv: list[str]) -> tuple[int, bytes, bytes]:
        """:attr:`Capability.ROOT_EXEC`: ``(exit code, stdout, stderr)`` of a harness command run as root after
        what the candidate left running was stopped; its output is held in memory (the command bounds it).

        Raises:
            MissingCapability: the workspace cannot run the harness's own commands apart from the candidate.
        """
        raise MissingCapability(Capability.ROOT_EXEC, f"{type(self).__name__} cannot run a command as root")

    def put_tree(self, archive: bytes) -> None:
        """Extract a tar archive (absolute member names without the leading ``/``) at the workspace's root
        folder ``/`` (the agent's program and its files). Default: its regular files through
        :meth:`write_root_files` (needs :attr:`Capability.ROOT_FILES`; modes become 0644).

        Raises:
            MissingCapability: without root-owned files.
        """
        import io
        import tarfile  # here: start-up imports no tarfile (tests/test_startup_lazy.py)

        self.require(Capability.ROOT_FILES, "copying a tree in")
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            files = {
                "/" + m.name.lstrip("/"): tar.extractfile(m).read()  # type: ignore[union-attr]
                for m in tar.getmembers()
                if m.isfile()
            }
        self.write_root_files(files, private="")


@runtime_checkable
class Runtime(Protocol):
    """Factory of workspaces. ``name`` is ``"local"`` or ``"docker"``."""

    name: str

    def prepare(self, spec: WorkspaceSpec, *, log_dir: Path | None = None) -> Workspace:
        """Check out ``spec.repo`` at ``spec.base_commit`` and return a ready workspace.

        Raises:
            InfraError: the repository cannot be fetched, the image cannot be built, the daemon is down.
        """
