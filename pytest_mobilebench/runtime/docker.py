"""The container runtime: one Docker container per workspace, from a layered instance image.

Flow of :meth:`DockerRuntime.prepare` (MobileDev-Bench SPEC section 1 "Environment images"; the same
base -> environment -> instance layering as SWE-bench's harness):

1. connect to the daemon (``InfraError("daemon_unreachable")`` when it does not answer);
2. make sure the Debian image exists (:func:`~pytest_mobilebench.runtime.baseimage.ensure_base_image`),
   then the base layer (:class:`~pytest_mobilebench.runtime.images.ImageBuilder`);
3. fetch the repository's bare mirror once per run (:class:`~pytest_mobilebench.runtime.repos.RepoCache`)
   and make a shallow (depth 1) checkout of the base commit on the host; infer its environment recipe;
4. ensure the environment and instance images (content-hash tags; reused when unchanged; per-tag file
   lock); dependencies are installed while building the instance image, where the network is on;
5. start a fresh container from the instance image, labelled ``mobilebench.run_id``,
   ``mobilebench.instance`` and ``mobilebench.owner`` (host:pid:process start time, for :meth:`sweep`).

Networking while tests run: the container is created on the default bridge and disconnected from it
before it starts, so it has only a loopback interface (the same isolation as ``network_mode="none"``).
Unlike ``none`` mode this lets a single command ask for the network (``run(..., network=True)``): the
bridge is connected for that command only and disconnected again afterwards.

Timeouts are enforced from the host: the command's output is read in a thread; when the wall-clock limit
passes, the whole container is killed (every process in it dies) and the result has ``timed_out``.
Infrastructure is named, never the candidate's fault (issue 7): an OOM event of any process in the
container (whatever the exit status) raises ``InfraError("oom_killed")``, a container stopped or restarted
from outside ``container_died``, a daemon that stops answering ``daemon_unreachable``, ENOSPC or a
writable layer past its limit ``disk_full``. Results come back only through the daemon (``get_archive``),
names checked by :mod:`pytest_mobilebench.runtime.channel`; containers run with every capability dropped,
``no-new-privileges`` and as the unprivileged user of the image when its recipe declares one
(``recipe.test_user``: the inferred Node, Gradle and Flutter images).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import datetime
import io
import json
import posixpath
import re
import secrets
import shlex
import subprocess
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, final

from pytest_mobilebench.runtime.base import (
    ApplyResult,
    InfraError,
    RunResult,
    WorkspaceSpec,
)
from pytest_mobilebench.runtime.baseimage import DEFAULT_BASE_IMAGE, cache_root
from pytest_mobilebench.runtime.channel import (
    MAX_FILE_BYTES,
    MAX_FILES,
    MAX_TOTAL_BYTES,
    ChannelError,
    Rejected,
    glob_regex,
    glob_root,
    read_tar_files,
    safe_relpath,
)
from pytest_mobilebench.runtime.deplayer import ensure_deps
from pytest_mobilebench.runtime.git import GitError, run_git
from pytest_mobilebench.runtime.images import (
    BASELINE_REF,
    CACHE_LEVELS,
    LABEL_RUN,
    LABEL_USER,
    TESTBED,
    BuiltImage,
    ImageBuilder,
)
from pytest_mobilebench.runtime.recipe import EnvRecipeLike, NodePackages, RecipeFactory
from pytest_mobilebench.runtime.owners import LABEL_OWNER, owner_alive, owner_label
from pytest_mobilebench.runtime.patching import (
    CHECKPOINT,
    DIFF,
    RESET,
    apply_with_fallbacks,
    restore_command,
    strategies_for,
)
from pytest_mobilebench.runtime.repos import RepoCache
from pytest_mobilebench.states import InfraKind
from pytest_mobilebench.trust import SCRUBBED_NAMES

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container

__all__ = [
    "DEFAULT_CA_BUNDLE",
    "LABEL_INSTANCE",
    "LABEL_OWNER",
    "DockerRuntime",
    "DockerWorkspace",
    "connect",
    "default_node_packages",
    "no_recipe",
    "export_tree",
    "owner_label",
    "shallow_checkout",
    "sweep_dead_runs",
]

LABEL_INSTANCE: Final[str] = "mobilebench.instance"
#: the host bundle injected into images by default (when the file exists)
DEFAULT_CA_BUNDLE: Final[Path] = Path("/etc/ssl/certs/ca-certificates.crt")

#: output kept per command: the first and the last bytes (a runaway printer cannot exhaust memory)
_HEAD_BYTES: Final[int] = 1 << 20
_TAIL_BYTES: Final[int] = 15 << 20
#: seconds for housekeeping commands (checkpoint, reset, diff, listing files)
_HOUSEKEEPING_TIMEOUT_S: Final[float] = 600.0
#: exit status meaning "the checkpoint before a patch failed" (never a git / patch status)
_CHECKPOINT_FAILED: Final[int] = 97


#: every exec gets these: the runner's start-up variables blanked (trust.SCRUBBED_NAMES), CI mode on
_EXEC_ENV: Final[dict[str, str]] = {**{name: "" for name in sorted(SCRUBBED_NAMES)}, "CI": "true"}
#: seconds between two looks at the writable layer's size when the daemon has no quota
_DISK_POLL_S: Final[float] = 3.0
#: an ownerless stopped container (a build step of a dead builder) this old is swept
_ORPHAN_AGE_S: Final[float] = 600.0
#: where patch files are put (the writable layer; ``put_archive`` does not reach tmpfs mounts)
_INBOX: Final[str] = "/var/tmp"


def _parse_bytes(size: str) -> int:
    """Docker size units (``"512m"``, ``"10g"``) in bytes."""
    from docker.utils import parse_bytes

    return int(parse_bytes(size))


def _is_disk_full(text: str) -> bool:
    lowered = text.lower()
    return "no space left on device" in lowered or "enospc" in lowered


#: seconds a working client waits for one API answer (a busy daemon commits large layers slowly)
API_TIMEOUT_S: Final[float] = 600.0


def connect(client: docker.DockerClient | None = None, *, timeout_s: float = 60) -> docker.DockerClient:
    """A docker client that answered ``ping`` within ``timeout_s``.

    The returned client (when none is given) waits :data:`API_TIMEOUT_S` for each later answer: the
    short ``timeout_s`` only decides whether a daemon is there, it never turns a slow answer of a busy
    daemon into an error.

    Raises:
        InfraError("daemon_unreachable"): the SDK is missing or the daemon does not answer (the message
            says how to start it).
    """
    try:
        import docker
    except ImportError as exc:  # the SDK is the optional extra ``docker``
        raise InfraError(
            "daemon_unreachable", "the docker SDK is not installed: pip install 'pytest-mobilebench[docker]'"
        ) from exc
    try:
        if client is not None:
            client.ping()
            return client
        probe = docker.from_env(timeout=max(1, int(timeout_s)))
        try:
            probe.ping()
        finally:
            probe.close()
        return docker.from_env(timeout=int(max(timeout_s, API_TIMEOUT_S)))
    except Exception as exc:  # DockerException, requests ConnectionError, socket errors: all mean "no daemon"
        raise InfraError(
            "daemon_unreachable",
            f"the Docker daemon does not answer ({exc}); start it (`dockerd &` or `systemctl start docker`) "
            "or set DOCKER_HOST",
        ) from exc


def daemon_clock_offset(client: docker.DockerClient) -> float:
    """Seconds the daemon's clock is ahead of this machine's (``SystemTime`` of ``docker info``; 0.0 when
    it cannot be read). Event windows are asked in the daemon's time: on a ``tcp://`` host with a skewed
    clock, a window in local time would take in the harness's own earlier kill, or block until it came."""
    try:
        asked = time.time()
        text = str(client.api.info().get("SystemTime") or "")
        answered = time.time()
        stamp = re.sub(r"(\.\d{6})\d+", r"\1", text).replace("Z", "+00:00")
        return datetime.datetime.fromisoformat(stamp).timestamp() - (asked + answered) / 2
    except Exception:  # noqa: BLE001 - no reading: assume one clock
        return 0.0


def _sweepable(entry: Mapping[str, Any], *, own: str, run_id: str | None) -> bool:
    """Whether a listed container (``docker ps -a`` entry) belongs to a dead run (see :meth:`DockerRuntime.sweep`)."""
    labels = entry.get("Labels") or {}
    owner = labels.get(LABEL_OWNER, "")
    if owner == own:
        return False
    if run_id is not None and labels.get(LABEL_RUN) == run_id:
        return True
    if not owner:
        return entry.get("State") != "running" and time.time() - float(entry.get("Created") or 0) > _ORPHAN_AGE_S
    return owner_alive(owner) is False


def sweep_dead_runs(timeout_s: float = 3) -> list[str]:
    """Sweep the containers of dead runs when a daemon answers within ``timeout_s`` (else nothing).

    Called once per run by the controller, so leftovers are removed even when every result of the run
    comes from the cache and no runtime is ever made. Returns the removed container ids.
    """
    try:
        client = connect(timeout_s=timeout_s)
    except InfraError:
        return []
    try:
        return DockerRuntime(client=client, ca_bundle=None).sweep()
    except Exception:  # noqa: BLE001 - housekeeping never stops a run
        return []
    finally:
        client.close()


def _git(args: Sequence[str], cwd: Path | None = None) -> str:
    try:
        return run_git(args, cwd=cwd).strip()
    except GitError as exc:
        raise InfraError("clone_failed", str(exc)) from exc


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
        ["-c", "uploadpack.allowAnySHA1InWant=true", "fetch", "-q", "--depth", "1", "--no-tags",
         mirror.resolve().as_uri(), sha],
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
        raise InfraError("clone_failed", f"git archive {sha} failed: {proc.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(proc.stdout), mode="r:") as tar:
        tar.extractall(dest, filter="tar")
    return sha


def no_recipe(repo_dir: Path, spec: WorkspaceSpec) -> EnvRecipeLike:
    """The recipe factory of a runtime given none: the runtime names no framework, so the caller (a suite,
    :func:`pytest_mobilebench.frameworks.workspace_recipe`) must resolve recipes.

    Raises:
        InfraError("image_build_failed"): always, naming the instance.
    """
    raise InfraError("image_build_failed", f"{spec.instance_id}: the runtime was given no recipe factory")


def default_node_packages(recipe: EnvRecipeLike) -> Mapping[str, str]:
    """npm tarballs the host packs into the env build context: the recipe's own ``context_packages``
    (``{context file name: "npmpkg@version"}``; empty for a recipe that needs none)."""
    return dict(recipe.context_packages)


class _BoundedOutput:
    """Keeps the first :data:`_HEAD_BYTES` and the last :data:`_TAIL_BYTES` of a byte stream."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = _HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail_size - len(self.tail[0]) >= _TAIL_BYTES:
            self.tail_size -= len(self.tail[0])
            self.dropped += len(self.tail.popleft())

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes of output dropped ...]\n".encode() if self.dropped else b""
        return (bytes(self.head) + middle + b"".join(self.tail)).decode("utf-8", errors="replace")


@contextlib.contextmanager
def _docker_errors(client: docker.DockerClient, instance_id: str, what: str) -> Iterator[None]:
    """Translate what the docker SDK raises into named :class:`InfraError` kinds (issue 7, item 5).

    ENOSPC in the message -> ``disk_full``; the container gone or not running -> ``container_died``; a
    daemon that no longer answers ``ping`` -> ``daemon_unreachable``; another API error -> ``docker_error``.
    """
    import docker.errors
    import requests
    import urllib3.exceptions

    try:
        yield
    except InfraError:
        raise
    except (docker.errors.DockerException, requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
        text = str(exc)
        if _is_disk_full(text):
            raise InfraError(InfraKind.DISK_FULL, f"{instance_id}: {what}: {text}") from exc
        if not _answers(client):
            raise InfraError(InfraKind.DAEMON_UNREACHABLE, f"{instance_id}: {what}: the daemon stopped answering ({text})") from exc
        if isinstance(exc, docker.errors.NotFound) or "is not running" in text or "is restarting" in text:
            raise InfraError(InfraKind.CONTAINER_DIED, f"{instance_id}: {what}: the container is gone ({text})") from exc
        raise InfraError("docker_error", f"{instance_id}: {what}: {text}") from exc


def _answers(client: docker.DockerClient) -> bool:
    try:
        client.ping()
    except Exception:  # noqa: BLE001 - any failure of ping means "no daemon"
        return False
    return True


@final
class DockerWorkspace:
    """One running container with the repository at ``/testbed`` (tag ``mobilebench-base`` = base tree).

    Created by :meth:`DockerRuntime.start`; implements :class:`~pytest_mobilebench.runtime.base.Workspace`.
    Files come back only through the daemon (``get_archive``), never through a program in the container;
    every name is checked by :mod:`pytest_mobilebench.runtime.channel` and refused names are kept in
    :attr:`rejected` for the evidence.

    Attributes:
        container_id: the container's id.
        image: the instance image it runs.
        instance_id: the benchmark instance.
        results_root: a folder outside the repository, random per workspace, emptied by :meth:`clear_files`.
        rejected: names refused by the last :meth:`read_files` (absolute, ``..``, links, too large).
    """

    root: Final[str] = TESTBED

    def __init__(
        self,
        client: docker.DockerClient,
        container: Container,
        image: BuiltImage,
        instance_id: str,
        *,
        disk_limit_bytes: int | None = None,
        user: str | None = None,
    ) -> None:
        self._client = client
        self._container = container
        #: every command runs as this user (the image's test user; None: root). The container's own
        #: process (``sleep infinity`` under docker-init) stays root's, so a test cannot end the container
        #: and turn its own failure into ``container_died``.
        self._user = user
        self._clock_offset = daemon_clock_offset(client)
        self.container_id: str = str(container.id)
        self.image = image
        self.instance_id = instance_id
        self.results_root = f"{_INBOX}/mb-results-{secrets.token_hex(16)}"
        self.rejected: list[Rejected] = []
        self._disk_limit = disk_limit_bytes
        self._closed = False
        self._killed = False
        self._lock = threading.Lock()
        self._started_at = self._state().get("StartedAt")

    # ------------------------------------------------------------------------------------ execution

    def _state(self) -> dict[str, Any]:
        self._container.reload()
        return dict(self._container.attrs.get("State") or {})

    def _create_exec(self, argv: list[str]) -> str:
        """Create an exec (scrubbed environment); a stopped container is ``container_died``."""
        import docker.errors

        try:
            return str(
                self._client.api.exec_create(
                    self.container_id, argv, workdir=TESTBED, stdout=True, stderr=True, environment=_EXEC_ENV,
                    user=self._user or "",
                )["Id"]
            )
        except docker.errors.APIError as exc:
            if exc.status_code == 409:  # "container ... is not running": stopped from outside
                raise InfraError(InfraKind.CONTAINER_DIED, f"{self.instance_id}: the container stopped: {exc}") from exc
            raise

    def _exec_stream(self, argv: list[str]) -> tuple[str, Iterator[bytes]]:
        exec_id = self._create_exec(argv)
        return exec_id, self._client.api.exec_start(exec_id, stream=True)

    def _exit_code(self, exec_id: str) -> int | None:
        deadline = time.monotonic() + 10
        while True:
            info = self._client.api.exec_inspect(exec_id)
            if not info.get("Running") or time.monotonic() > deadline:
                code = info.get("ExitCode")
                return int(code) if code is not None else None
            time.sleep(0.02)

    def _network(self, on: bool) -> None:
        bridge = self._client.networks.get("bridge")
        if on:
            bridge.connect(self.container_id)
        else:
            bridge.disconnect(self.container_id, force=True)

    def _events_since(self, since: float, actions: tuple[str, ...]) -> bool:
        """Whether the daemon logged any of ``actions`` (``oom``, ``kill``, ``die``, ...) for this container
        since wall-clock ``since`` (the events query ends now, so it returns at once)."""
        since += self._clock_offset
        now = time.time() + self._clock_offset + 0.001
        events = self._client.api.events(
            since=f"{int(since)}.{int((since % 1) * 1e9):09d}",
            until=f"{int(now)}.{int((now % 1) * 1e9):09d}",
            filters={"container": self.container_id, "event": list(actions)},
            decode=True,
        )
        try:
            return any((event.get("Action") or event.get("status")) in actions for event in events)
        finally:
            events.close()

    def _oom_killed(self, since: float) -> bool:
        """Whether the kernel's OOM killer struck any process of this container since wall-clock ``since``.

        ``State.OOMKilled`` is only set when the container's main process dies (cgroup v1, Docker 20.10),
        so the daemon's ``oom`` events of the container since ``since`` are asked too.
        """
        return bool(self._state().get("OOMKilled")) or self._events_since(since, ("oom",))

    def _check_alive(self, since: float) -> None:
        """``container_died`` when the container stopped or was restarted behind the harness's back, or was
        killed / stopped from outside since wall-clock ``since``: a ``docker kill`` ends the exec (exit 137)
        a moment before the container's state says so, so the daemon's events are asked too."""
        state = self._state()
        outside = ("kill", "die", "stop", "restart")
        if not state.get("Running") or state.get("StartedAt") != self._started_at or self._events_since(since, outside):
            state = self._state()
            raise InfraError(
                InfraKind.CONTAINER_DIED,
                f"{self.instance_id}: the container was stopped or killed during the run without a harness "
                f"timeout (status {state.get('Status')}, exit {state.get('ExitCode')}, finished {state.get('FinishedAt')})",
            )

    def _layer_bytes(self) -> int:
        """Size of the container's writable layer (``SizeRw``), in bytes."""
        entries = self._client.api.containers(all=True, size=True, filters={"id": self.container_id})
        return int((entries[0] if entries else {}).get("SizeRw") or 0)

    def _wait(self, reader: threading.Thread, timeout_s: float) -> tuple[bool, bool]:
        """Join ``reader`` within ``timeout_s``; ``(timed out, writable layer over the limit)``."""
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True, False
            reader.join(min(remaining, _DISK_POLL_S) if self._disk_limit else remaining)
            if not reader.is_alive():
                return False, False
            if self._disk_limit and self._layer_bytes() > self._disk_limit:
                return False, True

    def _ensure_running(self) -> None:
        """After the harness's own kill the container is stopped; start it again (still offline) to read files."""
        if self._closed:
            raise InfraError("workspace_error", f"{self.instance_id}: the workspace is closed")
        if self._killed:
            if not self._state().get("Running"):
                self._container.start()
            self._started_at = self._state().get("StartedAt")
            self._killed = False

    def run(self, command: str, *, timeout_s: float, network: bool = False) -> RunResult:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.run`.

        ``bash -c command`` runs in ``/testbed`` as the container's user, with the runner's start-up
        variables blanked (:data:`pytest_mobilebench.trust.SCRUBBED_NAMES`). On timeout the container is
        killed (every process in it), ``exit_code`` is None and ``timed_out`` True; the workspace can
        still be read (:meth:`read_files`, :meth:`diff` restart the stopped container, offline) and closed.

        Raises:
            InfraError: ``oom_killed`` (any process of the container, whatever the exit status),
                ``container_died`` (stopped or restarted from outside), ``daemon_unreachable``,
                ``disk_full`` (ENOSPC, or the writable layer grew past the limit where the daemon has
                no quota: the container is killed).
        """
        with self._lock, _docker_errors(self._client, self.instance_id, f"running {command!r}"):
            return self._run_locked(command, timeout_s=timeout_s, network=network)

    def _run_locked(self, command: str, *, timeout_s: float, network: bool) -> RunResult:
        import docker.errors
        import requests
        import urllib3.exceptions

        self._ensure_running()
        started = time.monotonic()
        wall_start = time.time()
        output = _BoundedOutput()
        failure: list[BaseException] = []

        def pump(stream: Iterator[bytes]) -> None:
            try:
                for chunk in stream:
                    output.add(chunk)
            except (OSError, requests.RequestException, urllib3.exceptions.HTTPError, docker.errors.DockerException) as exc:
                failure.append(exc)  # the stream breaks when the container is killed: expected then

        try:
            if network:
                self._network(True)
            exec_id, stream = self._exec_stream(["/bin/bash", "-c", command])
            reader = threading.Thread(target=pump, args=(stream,), name=f"exec-{exec_id[:12]}", daemon=True)
            reader.start()
            timed_out, over_disk = self._wait(reader, timeout_s)
            code: int | None = None
            if timed_out or over_disk:
                with contextlib.suppress(docker.errors.APIError):
                    self._container.kill()
                self._killed = True
                reader.join(30)
            else:
                code = self._exit_code(exec_id)
                self._check_alive(wall_start)
        finally:
            if network:  # also after a kill: a restarted container must come back offline
                with contextlib.suppress(docker.errors.APIError, requests.RequestException):
                    self._network(False)
        if self._oom_killed(wall_start):
            raise InfraError(InfraKind.OOM_KILLED, f"{self.instance_id}: the OOM killer struck during {command!r}", log=output.text()[-20000:])
        if over_disk:
            raise InfraError(
                InfraKind.DISK_FULL,
                f"{self.instance_id}: {command!r} wrote more than {self._disk_limit} bytes to the container's "
                "writable layer; the container was killed",
                log=output.text()[-20000:],
            )
        if failure and not timed_out and code is None:
            raise InfraError(InfraKind.DAEMON_UNREACHABLE, f"{self.instance_id}: output stream failed: {failure[0]}")
        text = output.text()
        if code not in (0, None) and _is_disk_full(text):  # ENOSPC anywhere: named, retried, never scored
            raise InfraError(InfraKind.DISK_FULL, f"{self.instance_id}: {command!r} ran out of disk space", log=text[-20000:])
        return RunResult(
            command=command,
            exit_code=code,
            output=text,
            duration_s=round(time.monotonic() - started, 3),
            timed_out=timed_out,
            oom_killed=False,
        )

    def _sh(self, command: str) -> tuple[int, str]:
        """``(exit code, output)`` of a housekeeping command (124 when it timed out)."""
        result = self.run(command, timeout_s=_HOUSEKEEPING_TIMEOUT_S)
        return (result.exit_code if result.exit_code is not None else 124), result.output

    def _stdout(self, argv: list[str]) -> tuple[int, bytes, bytes]:
        """``(exit code, stdout, stderr)`` of a short command, kept apart (binary-safe)."""
        with self._lock, _docker_errors(self._client, self.instance_id, f"running {argv[0]}"):
            self._ensure_running()
            exec_id = self._create_exec(argv)
            out, err = self._client.api.exec_start(exec_id, demux=True)
            code = self._exit_code(exec_id)
        return (code if code is not None else 124), out or b"", err or b""


    # ---------------------------------------------------------------------------- workspace protocol

    def apply_patch(self, patch: str, *, name: str) -> ApplyResult:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.apply_patch`.

        The tree is checkpointed (``patching.CHECKPOINT``, in the same exec as the first attempt),
        the patch is copied to
        ``/var/tmp/mobilebench-<name>.diff`` and :func:`~pytest_mobilebench.runtime.patching.apply_with_fallbacks`
        runs its ladder inside the container, resetting (``patching.RESET``) between attempts.

        Raises:
            InfraError("workspace_error"): the checkpoint commit failed.
        """
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name) or "patch"
        file_name = f"mobilebench-{safe}.diff"
        data = (patch if patch.endswith("\n") else patch + "\n").encode("utf-8")
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            info = tarfile.TarInfo(file_name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
        self._ensure_running()
        self._container.put_archive(_INBOX, archive.getvalue())
        checkpointed = False

        def execute(command: str) -> tuple[int, str]:
            # the checkpoint rides on the first attempt's exec (one container exec less per patch)
            nonlocal checkpointed
            if checkpointed:
                return self._sh(command)
            checkpointed = True
            code, out = self._sh(
                f"{{ {CHECKPOINT} ; }} >/tmp/mobilebench-checkpoint.log 2>&1 || "
                f"{{ cat /tmp/mobilebench-checkpoint.log; exit {_CHECKPOINT_FAILED}; }}\n{command}"
            )
            if code == _CHECKPOINT_FAILED:
                raise InfraError("workspace_error", f"{self.instance_id}: cannot checkpoint the tree before {name}: {out}")
            return code, out

        return apply_with_fallbacks(
            execute, shlex.quote(f"{_INBOX}/{file_name}"), lambda: self._sh(RESET) and None, strategies=strategies_for(patch)
        )

    def restore_paths(self, paths: Sequence[str]) -> None:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.restore_paths` (one exec for all paths).

        Raises:
            InfraError("workspace_error"): git could not restore a path.
        """
        if not paths:
            return
        code, out = self._sh(" && ".join(restore_command(path) for path in paths))
        if code != 0:
            raise InfraError("workspace_error", f"{self.instance_id}: cannot restore {list(paths)}: {out}")

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.read_files`; absolute patterns are allowed
        too (their keys are the path without the leading ``/``).

        The one-way channel (issue 7, item 1): processes the candidate left behind are stopped first
        (:meth:`_quiesce`); names are listed with ``/usr/bin/find`` (its answer is
        untrusted: every name is checked, matched against the glob on the host and must stay under the
        glob's folder), then each file is copied out by the daemon (``get_archive``) and only a regular
        file of the expected name and bounded size is kept (:func:`~pytest_mobilebench.runtime.channel.read_tar_files`).
        Refused names go to :attr:`rejected`.

        Raises:
            InfraError: ``daemon_unreachable``, ``container_died``, ``docker_error``.
        """
        self.rejected = []
        self._quiesce()
        found: dict[str, bytes] = {}
        total = 0
        for path, key in self._matches(patterns):
            data = None if key in found else self._fetch(path)
            if data is None:
                continue
            if total + len(data) > MAX_TOTAL_BYTES:
                self.rejected.append(Rejected(path, f"over the total of {MAX_TOTAL_BYTES} bytes per read"))
                continue
            total += len(data)
            found[key] = data
        return found

    def _quiesce(self) -> None:
        """Stop what the candidate left running (a background process waiting to rewrite a report).

        The daemon lists the container's processes (``docker top``: the host's ``ps``, nothing run in
        the container); beyond its init and ``sleep infinity``, the container is killed and started
        again, offline, with its files as they are.
        """
        if self._closed or self._killed:
            return
        with _docker_errors(self._client, self.instance_id, "listing the container's processes"):
            processes = self._client.api.top(self.container_id).get("Processes") or []
            if len(processes) > 2:
                self._container.kill()
                self._killed = True
                self._ensure_running()

    def clear_files(self, patterns: Sequence[str]) -> list[str]:
        """Delete every file matching ``patterns`` and make :attr:`results_root` a fresh empty folder.

        Called before the test run, so a result file planted by the candidate's patch is never read as
        this run's. Returns the deleted keys (as :meth:`read_files` names them).

        Raises:
            InfraError: the deletion failed, or a daemon error.
        """
        matches = self._matches(patterns)
        paths = [path for path, _ in matches]
        for argv in (["/bin/rm", "-rf", "--", self.results_root], *(
            ["/bin/rm", "-f", "--", *paths[i : i + 500]] for i in range(0, len(paths), 500)
        )):
            code, _out, err = self._stdout(argv)
            if code != 0:
                raise InfraError("workspace_error", f"{self.instance_id}: cannot empty result files: {err.decode(errors='replace')}")
        code, _out, err = self._stdout(["/bin/mkdir", "-m", "700", "-p", self.results_root])
        if code != 0:
            raise InfraError("workspace_error", f"{self.instance_id}: cannot make {self.results_root}: {err.decode(errors='replace')}")
        return sorted({key for _, key in matches})

    def _matches(self, patterns: Sequence[str]) -> list[tuple[str, str]]:
        """``(absolute path in the container, key)`` of the listed files that match ``patterns``."""
        out: list[tuple[str, str]] = []
        for pattern in patterns:
            full = pattern if pattern.startswith("/") else f"{TESTBED}/{pattern}"
            folder = glob_root(full)
            regex = glob_regex(full.lstrip("/"))
            for rel in self._list(folder):
                path = posixpath.join(folder, rel)
                if regex.match(path.lstrip("/")):
                    key = path.lstrip("/") if pattern.startswith("/") else posixpath.relpath(path, TESTBED)
                    out.append((path, key))
        return out

    def _list(self, folder: str) -> list[str]:
        """Regular files under ``folder`` (not in ``node_modules`` or ``.git``), relative, each name checked."""
        code, out, _err = self._stdout(
            ["/usr/bin/find", folder, "(", "-name", "node_modules", "-o", "-name", ".git", ")", "-prune",
             "-o", "-type", "f", "-print0"]
        )
        names: list[str] = []
        for raw in out.split(b"\0"):
            name = raw.decode("utf-8", errors="surrogateescape")
            if not name:
                continue
            try:
                if not name.startswith(folder.rstrip("/") + "/"):
                    raise ChannelError(f"listed name {name!r} is not under {folder}")
                names.append(safe_relpath(name[len(folder.rstrip("/")) + 1 :]))
            except ChannelError as exc:
                self.rejected.append(Rejected(name, str(exc)))
            if len(names) >= MAX_FILES:
                self.rejected.append(Rejected(folder, f"more than {MAX_FILES} files: the rest is not read"))
                break
        del code  # find exits 1 for a missing folder: no file, not an error
        return names

    def _fetch(self, path: str) -> bytes | None:
        """One regular file copied out by the daemon, or None (gone, refused: see :attr:`rejected`)."""
        import docker.errors

        with _docker_errors(self._client, self.instance_id, f"copying {path} out"):
            try:
                stream, stat = self._client.api.get_archive(self.container_id, path)
            except docker.errors.NotFound:
                return None
            if int(stat.get("size") or 0) > MAX_FILE_BYTES:
                self.rejected.append(Rejected(path, f"{stat.get('size')} bytes, over {MAX_FILE_BYTES}"))
                return None
            try:
                files, refused = read_tar_files(stream, max_total_bytes=MAX_FILE_BYTES)
            except ChannelError as exc:
                self.rejected.append(Rejected(path, str(exc)))
                return None
        self.rejected += refused
        expected = posixpath.basename(path)
        for name in files:
            if name != expected:
                self.rejected.append(Rejected(name, f"unexpected member in the archive of {path}"))
        return files.get(expected)

    def diff(self) -> str:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.diff` (``patching.DIFF``, stdout only).

        Raises:
            InfraError("workspace_error"): git failed.
        """
        code, out, err = self._stdout(["/bin/bash", "-c", DIFF])
        if code != 0:
            raise InfraError("workspace_error", f"{self.instance_id}: git diff failed: {err.decode(errors='replace')}")
        return out.decode("utf-8", errors="replace")

    def close(self) -> None:
        """Remove the container (killing what still runs). Safe after a timeout, after the daemon went
        away (the container is then left for the next run's sweep) and safe to call twice."""
        import docker.errors
        import requests

        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(docker.errors.DockerException, requests.RequestException, OSError):
            self._container.remove(force=True, v=True)


@final
class DockerRuntime:
    """Workspaces as containers from layered, content-hashed images.

    Args:
        run_id: labels containers and images of this run (``mobilebench.run_id``).
        cache_level: what :meth:`cleanup` keeps (SWE-bench's levels): ``"none"``, ``"base"``, ``"env"``
            (default) or ``"instance"``.
        force_rebuild: rebuild every image once in this run.
        ca_bundle: host CA bundle (PEM) injected into every image; default :data:`DEFAULT_CA_BUNDLE`
            (skipped silently when the host has none); ``None`` for none.
        mem_limit: container memory limit (docker units, ``"4g"``); swap is not added on top.
        cpus: CPU limit in CPUs (converted to ``nano_cpus``); ``nano_cpus`` sets it directly.
        pids_limit: maximum number of processes in the container; None for docker's default.
        disk_limit: bound of a container's writable layer (docker units, ``"10g"``); None for none.
        base_image: the Debian image under the base layer.
        repos: where repositories come from (default: ``RepoCache(run_id=run_id)``).
        recipe_factory: ``(host checkout, spec) -> recipe`` (:data:`~.recipe.RecipeFactory`), resolved by the
            caller (framework knowledge: :func:`pytest_mobilebench.frameworks.workspace_recipe`); default
            :func:`no_recipe`.
        node_packages: ``recipe -> {context file: "npmpkg@version"}``; default :func:`default_node_packages`.
        log_dir: default folder of ``<tag>.build.log`` files (``prepare(log_dir=...)`` overrides it).
        progress: receives progress lines of long builds (throttled).
        client: an already connected docker client (tests); default: from the environment.

    Raises:
        ValueError: unknown ``cache_level``; a ``ca_bundle`` given explicitly that is not a file.
    """

    name = "docker"

    def __init__(
        self,
        *,
        run_id: str = "adhoc",
        cache_level: str = "env",
        force_rebuild: bool = False,
        ca_bundle: Path | str | None = DEFAULT_CA_BUNDLE,
        mem_limit: str | None = "4g",
        cpus: float | None = None,
        nano_cpus: int | None = None,
        pids_limit: int | None = None,
        disk_limit: str | None = "10g",
        base_image: str = DEFAULT_BASE_IMAGE,
        repos: RepoCache | None = None,
        recipe_factory: RecipeFactory | None = None,
        node_packages: NodePackages | None = None,
        log_dir: Path | None = None,
        progress: Callable[[str], None] | None = None,
        client: docker.DockerClient | None = None,
    ) -> None:
        if cache_level not in CACHE_LEVELS:
            raise ValueError(f"cache_level must be one of {CACHE_LEVELS}, got {cache_level!r}")
        self.run_id = run_id
        self.cache_level = cache_level
        self.force_rebuild = force_rebuild
        self.ca_bundle: Path | None = None
        if ca_bundle is not None:
            bundle = Path(ca_bundle)
            if bundle.is_file():
                self.ca_bundle = bundle
            elif bundle != DEFAULT_CA_BUNDLE:
                raise ValueError(f"ca_bundle {bundle} is not a file")
        self.mem_limit = mem_limit
        self.nano_cpus = nano_cpus if nano_cpus is not None else (int(cpus * 1e9) if cpus else None)
        self.pids_limit = pids_limit
        self.disk_limit = disk_limit
        self._quota: bool | None = None  # does the storage driver take a size quota? (asked on first start)
        self.base_image = base_image
        self.repos = repos or RepoCache(run_id=run_id)
        self.recipe_factory: RecipeFactory = recipe_factory or no_recipe
        self.node_packages: NodePackages = node_packages or default_node_packages
        self.log_dir = log_dir
        self.progress = progress
        self._client = client
        self._builder: ImageBuilder | None = None
        self._memo: dict[str, BuiltImage] = {}
        self._owner = owner_label()

    # ------------------------------------------------------------------------------------ plumbing

    @property
    def client(self) -> docker.DockerClient:
        """The connected docker client (connects on first use).

        Raises:
            InfraError("daemon_unreachable"): see :func:`connect`.
        """
        if self._client is None:
            self._client = connect()
        return self._client

    @property
    def builder(self) -> ImageBuilder:
        """The image builder for this runtime's options."""
        if self._builder is None:
            self._builder = ImageBuilder(
                self.client,
                run_id=self.run_id,
                base_image=self.base_image,
                ca_bundle=self.ca_bundle,
                force_rebuild=self.force_rebuild,
                log_dir=self.log_dir,
                lock_dir=cache_root() / "locks",
                progress=self.progress,
            )
        return self._builder

    # ------------------------------------------------------------------------------------- images

    def ensure_instance_image(self, spec: WorkspaceSpec, *, log_dir: Path | None = None) -> BuiltImage:
        """Base, environment and instance images for ``spec``; built when missing or stale.

        Memoised per process on (repo, base commit, environment), so the three configurations of an
        instance's validation check out and infer once.

        Raises:
            InfraError: ``daemon_unreachable``, ``clone_failed``, ``base_image_unavailable``,
                ``image_build_failed`` (log attached), ``disk_full``.
        """
        import docker.errors

        memo_key = json.dumps([spec.repo, spec.base_commit, dict(spec.environment)], sort_keys=True, default=str)
        cached = self._memo.get(memo_key)
        if cached is not None:
            started = time.monotonic()
            try:
                if self.client.images.get(cached.tag).id == cached.image_id:
                    return dataclasses.replace(cached, built=False, seconds=time.monotonic() - started, log_path=None)
            except docker.errors.ImageNotFound:
                pass
        builder = self.builder
        base = builder.ensure_base(log_dir=log_dir)
        mirror = self.repos.ensure(spec.repo, [spec.base_commit], url=spec.repo_url or None)
        with tempfile.TemporaryDirectory(prefix="mobilebench-checkout-") as tmp:
            tree = Path(tmp) / "tree"
            sha = export_tree(mirror, spec.base_commit, tree)
            recipe = self.recipe_factory(tree, spec)
            env = builder.ensure_env(
                recipe, spec.repo, node_packages=self.node_packages(recipe), base=base, log_dir=log_dir
            )

            deps = ensure_deps(builder, env, tree, recipe.install_command, repo=spec.repo, log_dir=log_dir)

            def checkout() -> Path:  # only when the instance image must be built
                shallow_checkout(mirror, sha, Path(tmp) / "testbed")
                return Path(tmp) / "testbed"

            instance = builder.ensure_instance(
                spec.instance_id,
                env,
                repo=spec.repo,
                base_commit=sha,
                install_command=recipe.install_command,
                checkout_dir=checkout,
                log_dir=log_dir,
                test_user=recipe.test_user,
                deps=deps,
            )
        self._memo[memo_key] = instance
        return instance

    # ---------------------------------------------------------------------------------- workspaces

    def prepare(self, spec: WorkspaceSpec, *, log_dir: Path | None = None) -> DockerWorkspace:
        """A fresh, offline container of ``spec``'s instance image, ready at ``/testbed``.

        Raises:
            InfraError: see :meth:`ensure_instance_image`; ``disk_full`` when the container cannot be
                created for lack of space.
        """
        with _docker_errors(self.client, spec.instance_id, "preparing the instance image"):
            image = self.ensure_instance_image(spec, log_dir=log_dir)
        return self.start(image, spec.instance_id)

    def start(self, image: BuiltImage, instance_id: str) -> DockerWorkspace:
        """Create and start a labelled, offline, confined container from an already built ``image``.

        Confinement (issue 7, item 3): the image's :data:`~pytest_mobilebench.runtime.images.LABEL_USER`
        when it has one (else root), every capability dropped, ``no-new-privileges``, the memory / CPU /
        process limits, and the writable layer bounded by ``disk_limit``: a ``storage_opt`` quota where
        the daemon's storage driver has one, else the workspace kills the run when the layer outgrows it.

        Raises:
            InfraError: ``daemon_unreachable``, ``disk_full``, ``docker_error``.
        """
        import docker.errors

        client = self.client
        with _docker_errors(client, instance_id, f"starting a container from {image.tag}"):
            labels = client.api.inspect_image(image.image_id).get("Config", {}).get("Labels") or {}
            options = self._container_options(instance_id)
            container = self._create(image, options)
            try:
                # offline while tests run: leave the default bridge before the first process starts
                # (a daemon without a bridge network, --bridge=none, created it offline already)
                if client.api.networks(names=["bridge"]):
                    client.networks.get("bridge").disconnect(container.id, force=True)
                container.start()
            except BaseException:
                with contextlib.suppress(docker.errors.DockerException):
                    container.remove(force=True)
                raise
        limit = None if self._quota or not self.disk_limit else _parse_bytes(self.disk_limit)
        return DockerWorkspace(client, container, image, instance_id, disk_limit_bytes=limit, user=labels.get(LABEL_USER))

    def _container_options(self, instance_id: str) -> dict[str, Any]:
        """Options of a test container: root's ``sleep infinity`` under docker-init (commands run as the
        image's test user through each exec, :class:`DockerWorkspace`), no capabilities, no new privileges."""
        options: dict[str, Any] = {
            "command": ["sleep", "infinity"],
            "detach": True,
            "init": True,
            "working_dir": TESTBED,
            "labels": {LABEL_RUN: self.run_id, LABEL_INSTANCE: instance_id, LABEL_OWNER: self._owner},
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges"],
        }
        if not self.client.api.networks(names=["bridge"]):
            options["network_mode"] = "none"
        if self.mem_limit:
            options["mem_limit"] = self.mem_limit
            options["memswap_limit"] = self.mem_limit
        if self.nano_cpus:
            options["nano_cpus"] = self.nano_cpus
        if self.pids_limit:
            options["pids_limit"] = self.pids_limit
        return options

    def _create(self, image: BuiltImage, options: dict[str, Any]) -> Container:
        """Create the container, with a ``storage_opt`` size quota when the daemon supports one (asked once)."""
        import docker.errors

        if self.disk_limit and self._quota is not False:
            try:
                container = self.client.containers.create(image.image_id, storage_opt={"size": self.disk_limit}, **options)
                self._quota = True
                return container
            except docker.errors.APIError as exc:
                if "storage-opt" not in str(exc) and "storage_opt" not in str(exc):
                    raise
                self._quota = False  # e.g. overlay2 over ext4: "supported only for overlay over xfs with 'pquota'"
        return self.client.containers.create(image.image_id, **options)

    # -------------------------------------------------------------------------------------- hygiene

    def sweep(self, run_id: str | None = None) -> list[str]:
        """Remove leftover containers whose owning run is dead (and those of ``run_id`` when given).

        A container's owner is the ``mobilebench.owner`` label (``host:pid:start time``); containers of
        live processes (other xdist workers, other sessions) and of other hosts are kept. A container
        with a mobilebench label but no owner (a build step inheriting its parent image's labels, left
        by a builder or daemon that died) is removed once stopped and older than 10 minutes.

        Returns:
            The removed container ids.
        """
        removed: list[str] = []
        # low-level listing (no per-container re-read that a concurrent removal could break)
        for entry in self.client.api.containers(all=True, filters={"label": LABEL_RUN}):
            if _sweepable(entry, own=self._owner, run_id=run_id):
                with contextlib.suppress(Exception):  # gone already, or removal in progress elsewhere
                    self.client.api.remove_container(entry["Id"], force=True, v=True)
                    removed.append(str(entry["Id"]))
        return removed

    def cleanup(self, cache_level: str | None = None, *, clean: bool = False) -> list[str]:
        """Remove this process's containers and the images above ``cache_level`` (SWE-bench semantics).

        Args:
            cache_level: default: the runtime's ``cache_level``.
            clean: also remove such images that existed before this run (default: only those this
                run built, by their ``mobilebench.run_id`` label).

        Returns:
            Removed container ids, then removed image tags.

        Raises:
            ValueError: unknown ``cache_level``.
        """
        import docker.errors

        removed: list[str] = []
        for entry in self.client.api.containers(all=True, filters={"label": f"{LABEL_OWNER}={self._owner}"}):
            with contextlib.suppress(docker.errors.NotFound):
                self.client.api.remove_container(entry["Id"], force=True, v=True)
                removed.append(str(entry["Id"]))
        removed += self.builder.remove_images(
            keep_level=cache_level or self.cache_level, only_run=None if clean else self.run_id
        )
        return removed
