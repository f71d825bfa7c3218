"""Agent sandboxes: the container an agent works in, from the instance's own image at its base commit.

A sandbox is started from the same instance image the grading path builds
(:meth:`~pytest_mobilebench.runtime.docker.DockerRuntime.ensure_instance_image`: base -> environment ->
instance layers, dependencies installed, the base tree tagged ``mobilebench-base``), so the agent sees the
repository exactly as a grader's workspace does before any patch: no test patch, the hidden tests' files as
at the base commit (absent when the fix adds them), and the base commit's history only (a depth-1 fetch).

Confinement is the grading container's (every capability dropped, no new privileges, memory / CPU /
process / writable-layer limits, the image's unprivileged test user for every command) plus, for good:

* ``network_mode="none"`` for the built-in agent (its loop runs in the harness process; commands have a
  loopback interface only);
* with a model route (a user's agent program, ``--mb-agent-command``), the sandbox joins the network
  namespace of a *relay* container that itself has no network: the only address it can reach is the
  relay's ``127.0.0.1:`` :data:`RELAY_PORT`, which pipes bytes to a Unix socket bind-mounted from this host,
  where the harness's :class:`~pytest_mobilebench.runtime.egress.ModelForwarder` answers only requests under
  the model endpoint's path (the API key is added there and never enters the sandbox).

The candidate is *taken* (:meth:`AgentSandbox.take_patch`): what the agent left running is stopped, then
root runs ``git add -A`` and ``git diff --cached --binary`` of the work tree against the base commit with a
git directory the harness copied aside before the agent's first command (root-owned, 0700: the agent's
edits to ``/testbed/.git`` (config, hooks, tags) do not reach it). Nothing the agent prints is read as its
patch. Untracked, binary and mode changes are included; the patch's size is bounded (:data:`MAX_PATCH_BYTES`).

The sandbox is removed by :meth:`AgentSandbox.close` (a ``finally`` of the caller: also on Ctrl-C); a
process killed outright leaves it to :mod:`~pytest_mobilebench.runtime.reaper` (same owner label).
This module imports nothing from ``frameworks/``, ``suites/`` or ``agents/``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import secrets
import shlex
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Protocol, final, runtime_checkable

from pytest_mobilebench.runtime.base import Capability, InfraError, RunResult, Workspace, WorkspaceSpec
from pytest_mobilebench.runtime.daemon import docker_errors, host_url
from pytest_mobilebench.runtime.git import BASE_REF
from pytest_mobilebench.runtime.images import LABEL_INSTANCE, LABEL_RUN, TESTBED, BuiltImage
from pytest_mobilebench.runtime.owners import LABEL_OWNER
from pytest_mobilebench.runtime.reaper import ensure_reaper
from pytest_mobilebench.states import InfraKind

if TYPE_CHECKING:
    from pytest_mobilebench.runtime.egress import ModelForwarder

__all__ = [
    "LABEL_ROLE",
    "MAX_PATCH_BYTES",
    "RELAY_PORT",
    "AgentSandbox",
    "AgentSandboxRuntime",
    "TakenPatch",
    "WorkspaceAgentSandbox",
    "open_sandbox",
]

#: label of sandbox containers: ``agent`` (the work tree) or ``relay`` (its only network peer)
LABEL_ROLE: Final[str] = "mobilebench.role"
#: the largest patch taken (bytes of ``git diff``); beyond it the patch is refused as too large
MAX_PATCH_BYTES: Final[int] = 32 << 20
#: the relay's port on the sandbox's loopback (``--mb-agent-command`` mode)
RELAY_PORT: Final[int] = 18080
#: where the forwarder's socket folder is mounted in the relay container
_RELAY_MOUNT: Final[str] = "/run/mobilebench-egress"
#: seconds the harness allows a command beyond its own limit before it kills the whole sandbox
_BACKSTOP_S: Final[float] = 20.0
#: the sandbox's own limits a command can exhaust: its outcome, noted for the agent (never infrastructure)
_EXHAUSTED: Final[dict[str, str]] = {
    InfraKind.OOM_KILLED.value: "the sandbox's memory limit was reached (the OOM killer struck)",
    InfraKind.DISK_FULL.value: "the sandbox's disk limit was reached",
    InfraKind.PIDS_LIMIT.value: "the sandbox's process limit refused forks",
}
#: seconds for the patch to be taken (``git add -A`` of a large tree)
_TAKE_TIMEOUT_S: Final[int] = 600
#: the command's exit statuses of ``timeout`` (124: the limit; 137: killed after the grace period)
_TIMEOUT_CODES: Final = (124, 137)
#: root's execs (taking the patch) read every file the agent left, whatever its mode; the agent holds no capability
_READ_ALL: Final = ("DAC_READ_SEARCH",)
#: exit status of take_patch's script when git failed (never git's own)
_GIT_FAILED: Final[int] = 86

#: a byte pipe 127.0.0.1:PORT <-> the forwarder's Unix socket, run by root in the relay container
_RELAY_SCRIPT: Final[str] = """
import socket, sys, threading
PORT, PATH = int(sys.argv[1]), sys.argv[2]
def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", PORT))
srv.listen(64)
print("relay ready", flush=True)
while True:
    conn, _ = srv.accept()
    up = socket.socket(socket.AF_UNIX)
    try:
        up.connect(PATH)
    except OSError:
        conn.close()
        continue
    threading.Thread(target=pipe, args=(conn, up), daemon=True).start()
    threading.Thread(target=pipe, args=(up, conn), daemon=True).start()
"""


@final
@dataclasses.dataclass(frozen=True)
class TakenPatch:
    """The agent's candidate as the harness took it.

    Attributes:
        patch: ``git diff --cached --binary`` of the work tree against ``base_commit`` (UTF-8, undecodable
            bytes replaced); ``""`` when nothing changed or the patch was too large.
        base_commit: the commit id the diff is against (the image's ``mobilebench-base``).
        size_bytes: bytes of the diff as git wrote it (at most ``max_bytes + 1`` are read).
        too_large: the diff had more than ``max_bytes`` bytes (``patch`` is then ``""``).
        max_bytes: the bound the patch was taken under (bytes).
        error: git's message when it could not take the patch of the tree the agent left (a full disk the
            agent filled, say): the candidate's outcome (``patch`` is ``""``), never infrastructure.
    """

    patch: str
    base_commit: str
    size_bytes: int
    too_large: bool = False
    error: str | None = None
    max_bytes: int = MAX_PATCH_BYTES


@runtime_checkable
class AgentSandboxRuntime(Protocol):
    """A runtime that can host agents (the Docker runtime; a provider's runtime may implement it too)."""

    def agent_sandbox(
        self, spec: WorkspaceSpec, *, log_dir: Path | None = None, forwarder: ModelForwarder | None = None
    ) -> AgentSandbox:
        """A started sandbox of ``spec`` (offline; routed to ``forwarder`` only, when given).

        Raises:
            InfraError: the image cannot be built, the daemon fails.
        """


@runtime_checkable
class AgentSandbox(Protocol):
    """One agent's sandbox: ``run`` a command, ``put_file`` / ``put_tree``, ``take_patch``, ``close`` (a context
    manager too). :class:`WorkspaceAgentSandbox` implements it over any
    :class:`~pytest_mobilebench.runtime.base.Workspace` that declares
    :attr:`~pytest_mobilebench.runtime.base.Capability.ROOT_EXEC`; the Docker runtime's is the first.

    Attributes:
        workdir: the work tree's path in the sandbox (``/testbed`` by default).
        base_commit: the base tree's commit id, read before the agent's first command.
        model_url: with a model route, the base URL the agent's program uses (``http://127.0.0.1:PORT/...``).
        instance_id: the benchmark instance.
    """

    workdir: str = TESTBED
    base_commit: str
    model_url: str | None
    instance_id: str

    def __enter__(self) -> AgentSandbox: ...

    def __exit__(self, *exc: object) -> None: ...

    def run(self, command: str, timeout_s: float) -> RunResult:
        """Run ``command`` in the work tree as the test user under ``timeout_s``; the agent's own exhaustion of the
        sandbox is the command's outcome (the output says so), never infrastructure.

        Raises:
            InfraError: the backend failed.
        """

    def put_file(self, name: str, data: bytes) -> str:
        """Write a harness input readable by the agent; returns its path in the sandbox."""

    def put_tree(self, archive: bytes) -> None:
        """Extract a tar archive (absolute names without the leading ``/``) at the sandbox's root."""

    def take_patch(self, max_bytes: int = MAX_PATCH_BYTES) -> TakenPatch:
        """The work tree's change against :attr:`base_commit`, taken by the harness (never what the agent says)."""

    def close(self) -> None:
        """Remove the sandbox (safe twice)."""


@final
class WorkspaceAgentSandbox:
    """:class:`AgentSandbox` over any workspace declaring
    :attr:`~pytest_mobilebench.runtime.base.Capability.ROOT_EXEC` (the patch is taken by root with a git directory
    the harness copied aside before the agent's first command: the agent's edits to ``.git`` never reach it).

    Args:
        workspace: the sandbox's workspace (a fresh one at the base commit; closed by :meth:`close`).
        instance_id: the benchmark instance (for messages).
        model_url: see :class:`AgentSandbox`.
        on_close: called once after the workspace is closed (the Docker sandbox's relay is removed there).

    Raises:
        MissingCapability: the workspace cannot run the harness's own commands as root.
        InfraError: the base tree cannot be recorded.
    """

    def __init__(
        self,
        workspace: Workspace,
        *,
        instance_id: str,
        model_url: str | None = None,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        workspace.require(Capability.ROOT_EXEC, "an agent's sandbox (its patch is taken by root)")
        self._ws = workspace
        self._on_close = on_close
        self.model_url = model_url
        self.workdir = str(workspace.root)
        self.instance_id = instance_id
        self._git_dir = f"/var/tmp/mb-agent-git-{secrets.token_hex(12)}"
        tree = shlex.quote(self.workdir)
        code, out, err = workspace.root_exec(
            [
                "/bin/bash",
                "-c",
                (
                    f"set -e; base=$(git -C {tree} rev-parse --verify {BASE_REF}^{{commit}}); "
                    f"cp -r --preserve=mode,timestamps {tree}/.git {self._git_dir}; chmod 700 {self._git_dir}; "
                    'echo "$base"'
                ),
            ]
        )
        if code != 0:
            raise InfraError(
                InfraKind.WORKSPACE_ERROR,
                f"{self.instance_id}: cannot record the sandbox's base tree: {err.decode(errors='replace')[-2000:]}",
            )
        self.base_commit = out.decode().strip()

    def __enter__(self) -> WorkspaceAgentSandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, command: str, timeout_s: float) -> RunResult:
        """Run ``command`` with ``bash -c`` in the work tree as the test user, under ``timeout_s``.

        The command is wrapped in ``timeout -k 5`` (its process group ends at the limit, the sandbox
        lives on); should it outlive the limit by :data:`_BACKSTOP_S`, the workspace's own limit ends it (the
        Docker workspace kills the whole sandbox, restarted offline with its files for the next command).
        Nothing a command starts outlives it: leftover processes (a server sent to the background, a fork bomb)
        are stopped (:meth:`~pytest_mobilebench.runtime.base.Workspace.stop_leftovers`). The agent's own
        exhaustion of the sandbox (memory, disk, processes) is its command's outcome, never infrastructure: the
        result says so.

        Raises:
            InfraError: the daemon or the container failed (``daemon_unreachable``, ``container_died``, ...).
        """
        limit = max(1, int(timeout_s + 0.999))
        wrapped = f"timeout -k 5 {limit} /bin/bash -c {shlex.quote(command)}"
        try:
            run = self._ws.run(wrapped, timeout_s=limit + _BACKSTOP_S, network=False)
            self._ws.stop_leftovers()
        except InfraError as exc:
            note = _EXHAUSTED.get(exc.kind)
            if note is None:
                raise
            self._ws.stop_leftovers()  # what exhausted the sandbox (a fork bomb's processes) ends with its command
            return RunResult(command=command, exit_code=None, output=f"{exc.log}\n[harness: {note}]", duration_s=0.0)
        timed_out = run.timed_out or run.exit_code in _TIMEOUT_CODES
        return dataclasses.replace(
            run, command=command, timed_out=timed_out, exit_code=None if run.timed_out else run.exit_code
        )

    def put_file(self, name: str, data: bytes) -> str:
        """Write a harness input (the prompt, the problem statement) readable by the agent; returns its path."""
        return self._ws.put_input(name, data)

    def put_tree(self, archive: bytes) -> None:
        """Extract a tar archive (absolute member names without the leading ``/``) at the sandbox's root
        (the agent's program and its files: ``--mb-agent-dir``): the workspace's
        :meth:`~pytest_mobilebench.runtime.base.Workspace.put_tree`.

        Raises:
            InfraError: the backend refused it.
        """
        self._ws.forget_reads()  # files change: nothing read before is served again
        self._ws.put_tree(archive)

    def take_patch(self, max_bytes: int = MAX_PATCH_BYTES) -> TakenPatch:
        """The work tree's change against the base commit, taken by root with the harness's own git directory.

        Raises:
            InfraError: only the backend's failures (``daemon_unreachable``, ``container_died``, ...); git's
                own failure is :attr:`TakenPatch.error`.
        """
        tree = shlex.quote(self.workdir)
        git = (
            f"git --git-dir={self._git_dir} --work-tree={tree} -c core.fsmonitor=false "
            "-c core.hooksPath=/dev/null -c core.untrackedCache=false"
        )
        script = (
            f"cd {tree} && timeout {_TAKE_TIMEOUT_S} {git} add -A >/dev/null 2>{self._git_dir}/mobilebench-take.err "
            f"|| {{ cat {self._git_dir}/mobilebench-take.err >&2; exit {_GIT_FAILED}; }}; set -o pipefail; "
            f"{git} diff --cached --binary --no-color --no-ext-diff --no-textconv {self.base_commit} "
            f"| head -c {int(max_bytes) + 1}"
        )
        code, out, err = self._ws.root_exec(["/bin/bash", "-c", script])
        if len(out) > max_bytes:
            return TakenPatch("", self.base_commit, len(out), too_large=True, max_bytes=max_bytes)
        if code != 0:
            return TakenPatch(
                "",
                self.base_commit,
                len(out),
                error=f"git exited {code} taking the patch: {err.decode(errors='replace')[-2000:]}",
                max_bytes=max_bytes,
            )
        return TakenPatch(out.decode("utf-8", errors="replace"), self.base_commit, len(out), max_bytes=max_bytes)

    def close(self) -> None:
        """Remove the sandbox, then what ``on_close`` removes (safe twice, and after the backend went away)."""
        self._ws.close()
        on_close, self._on_close = self._on_close, None
        if on_close is not None:
            on_close()


class InstanceHost(Protocol):
    """What :func:`open_sandbox` needs of a Docker runtime (:class:`~pytest_mobilebench.runtime.docker.DockerRuntime`
    implements it and passes itself: this module sits below the provider): its client, run id and owner label,
    the instance image of a spec, and a labelled container started from a built image."""

    run_id: str

    @property
    def client(self) -> Any: ...  # a docker.DockerClient

    @property
    def owner(self) -> str: ...

    def ensure_instance_image(self, spec: WorkspaceSpec, *, log_dir: Path | None = None) -> BuiltImage: ...

    def start(
        self,
        image: BuiltImage,
        instance_id: str,
        *,
        network_mode: str | None = None,
        labels: Mapping[str, str] | None = None,
        cap_add: tuple[str, ...] = (),
    ) -> Workspace: ...


def open_sandbox(
    runtime: InstanceHost, spec: WorkspaceSpec, *, log_dir: Path | None = None, forwarder: ModelForwarder | None = None
) -> AgentSandbox:
    """Build (or reuse) ``spec``'s instance image and start its sandbox (see the module docstring).

    Raises:
        InfraError: the image cannot be built; ``docker_error`` when a model route is asked of a daemon
            that is not on this host (the forwarder's socket is bind-mounted).
    """
    client = runtime.client
    with docker_errors(client, spec.instance_id, "preparing the instance image"):
        image = runtime.ensure_instance_image(spec, log_dir=log_dir)
    role = {LABEL_ROLE: "agent"}
    if forwarder is None:
        return WorkspaceAgentSandbox(
            runtime.start(image, spec.instance_id, network_mode="none", labels=role, cap_add=_READ_ALL),
            instance_id=spec.instance_id,
        )
    relay = _start_relay(runtime, image.image_id, spec.instance_id, forwarder)
    try:
        ws = runtime.start(
            image, spec.instance_id, network_mode=f"container:{relay.id}", labels=role, cap_add=_READ_ALL
        )
    except BaseException:
        with contextlib.suppress(Exception):
            relay.remove(force=True, v=True)
        raise
    try:
        return WorkspaceAgentSandbox(
            ws,
            instance_id=spec.instance_id,
            model_url=f"http://127.0.0.1:{RELAY_PORT}{forwarder.path_prefix}",
            on_close=functools.partial(_remove_relay, relay),
        )
    except BaseException:
        ws.close()
        with contextlib.suppress(Exception):
            relay.remove(force=True, v=True)
        raise


def _remove_relay(relay: Any) -> None:
    """Remove the relay container (a daemon error leaves it to the sweep: same owner label)."""
    import docker.errors
    import requests

    with contextlib.suppress(docker.errors.DockerException, requests.RequestException, OSError):
        relay.remove(force=True, v=True)


def _start_relay(runtime: InstanceHost, image_id: str, instance_id: str, forwarder: ModelForwarder) -> Any:
    """The relay container (no network of its own; the sandbox joins its namespace), once it listens.

    Raises:
        InfraError("docker_error"): a remote daemon, or the relay did not come up within 60 s.
    """
    client = runtime.client
    if not host_url(client).startswith(("unix:", "http+unix:")):
        raise InfraError(
            InfraKind.DOCKER_ERROR,
            f"{instance_id}: a model route for the agent's program needs the "
            f"Docker daemon on this host (its socket is mounted), not {host_url(client)}",
        )
    sock = forwarder.socket_path
    ensure_reaper(host_url(client), runtime.owner)
    with docker_errors(client, instance_id, "starting the sandbox's relay"):
        relay = client.containers.run(
            image_id,
            ["python3", "-c", _RELAY_SCRIPT, str(RELAY_PORT), f"{_RELAY_MOUNT}/{sock.name}"],
            detach=True,
            init=True,
            user="0:0",
            network_mode="none",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            mem_limit="256m",
            pids_limit=256,
            working_dir="/",
            volumes={str(sock.parent): {"bind": _RELAY_MOUNT, "mode": "rw"}},
            labels={
                LABEL_RUN: runtime.run_id,
                LABEL_INSTANCE: instance_id,
                LABEL_OWNER: runtime.owner,
                LABEL_ROLE: "relay",
            },
        )
    deadline = time.monotonic() + 60
    while b"relay ready" not in relay.logs():
        relay.reload()
        if relay.status not in ("created", "running") or time.monotonic() > deadline:
            logs = relay.logs().decode(errors="replace")[-2000:]
            with contextlib.suppress(Exception):
                relay.remove(force=True, v=True)
            raise InfraError(InfraKind.DOCKER_ERROR, f"{instance_id}: the sandbox's relay did not start: {logs}")
        time.sleep(0.1)
    return relay
