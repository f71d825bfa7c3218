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
An exit by the kernel's OOM killer (exit 137 with the container's ``State.OOMKilled``) sets ``oom_killed``.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import io
import json
import os
import shlex
import socket
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
from pytest_mobilebench.runtime.images import (
    BASELINE_REF,
    CACHE_LEVELS,
    LABEL_RUN,
    TESTBED,
    BuiltImage,
    EnvRecipeLike,
    ImageBuilder,
)
from pytest_mobilebench.runtime.patching import (
    CHECKPOINT,
    DIFF,
    RESET,
    apply_with_fallbacks,
    restore_command,
    strategies_for,
)
from pytest_mobilebench.runtime.repos import RepoCache

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
    "default_recipe",
    "export_tree",
    "owner_label",
    "shallow_checkout",
]

LABEL_INSTANCE: Final[str] = "mobilebench.instance"
LABEL_OWNER: Final[str] = "mobilebench.owner"
#: the host bundle injected into images by default (when the file exists)
DEFAULT_CA_BUNDLE: Final[Path] = Path("/etc/ssl/certs/ca-certificates.crt")

#: output kept per command: the first and the last bytes (a runaway printer cannot exhaust memory)
_HEAD_BYTES: Final[int] = 1 << 20
_TAIL_BYTES: Final[int] = 15 << 20
#: seconds for housekeeping commands (checkpoint, reset, diff, listing files)
_HOUSEKEEPING_TIMEOUT_S: Final[float] = 600.0
#: exit status meaning "the checkpoint before a patch failed" (never a git / patch status)
_CHECKPOINT_FAILED: Final[int] = 97

RecipeFactory = Callable[[Path, WorkspaceSpec], EnvRecipeLike]
NodePackages = Callable[[EnvRecipeLike], Mapping[str, str]]

#: lists files matching glob patterns (argv) under the working directory and writes them as a tar stream
_READ_FILES_SCRIPT: Final[str] = """
import glob, os, sys, tarfile
seen = set()
with tarfile.open(fileobj=sys.stdout.buffer, mode="w|") as tar:
    for pattern in sys.argv[1:]:
        for match in sorted(glob.glob(pattern, recursive=True)):
            name = os.path.normpath(match)
            if name not in seen and os.path.isfile(match):
                seen.add(name)
                tar.add(match, arcname=name, recursive=False)
"""


def _is_disk_full(text: str) -> bool:
    lowered = text.lower()
    return "no space left on device" in lowered or "enospc" in lowered


def connect(client: docker.DockerClient | None = None, *, timeout_s: float = 60) -> docker.DockerClient:
    """A docker client that answered ``ping``.

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
        client = client or docker.from_env(timeout=int(timeout_s))
        client.ping()
    except Exception as exc:  # DockerException, requests ConnectionError, socket errors: all mean "no daemon"
        raise InfraError(
            "daemon_unreachable",
            f"the Docker daemon does not answer ({exc}); start it (`dockerd &` or `systemctl start docker`) "
            "or set DOCKER_HOST",
        ) from exc
    return client


def _process_start_ticks(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # field 22 (starttime) counted after the parenthesised command name, which may contain spaces
    return stat.rsplit(")", 1)[1].split()[19]


def owner_label(pid: int | None = None) -> str:
    """``"<hostname>:<pid>:<process start time in clock ticks>"`` identifying a live process uniquely."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_process_start_ticks(pid)}"


def _owner_alive(label: str) -> bool | None:
    """True/False for an owner on this host; None when the owner is on another host (unknown)."""
    host, _, rest = label.partition(":")
    pid_text, _, ticks = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return None
    return bool(ticks) and _process_start_ticks(int(pid_text)) == ticks


def _git(args: Sequence[str], cwd: Path | None = None) -> str:
    proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, errors="replace", check=False)
    if proc.returncode != 0:
        raise InfraError("clone_failed", f"git {' '.join(args)} failed: {proc.stderr.strip()}")
    return proc.stdout.strip()


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


def default_recipe(repo_dir: Path, spec: WorkspaceSpec) -> EnvRecipeLike:
    """Infer the environment recipe with :func:`pytest_mobilebench.runtime.recipes.infer_recipe`.

    ``spec.environment["framework"]`` names the framework. The overrides are the environment record's
    other scalar values (``node``, ``jdk``, ``gradle``, ``flutter``, ``install_command`` ...), updated by
    its ``overrides`` mapping when it has one.

    Raises:
        InfraError("image_build_failed"): no framework given, or the recipe cannot be inferred
            (the message carries the recipe's own explanation: file and missing value).
    """
    from pytest_mobilebench.runtime import recipes

    env = dict(spec.environment)
    framework = env.get("framework")
    if not framework:
        raise InfraError("image_build_failed", f"{spec.instance_id}: the environment record names no 'framework'")
    overrides: dict[str, Any] = {
        key: value
        for key, value in env.items()
        if key not in {"framework", "overrides"} and isinstance(value, (str, int, float))
    }
    nested = env.get("overrides")
    if isinstance(nested, Mapping):
        overrides.update(nested)
    try:
        return recipes.infer_recipe(repo_dir, str(framework), overrides=overrides)
    except recipes.RecipeError as exc:
        raise InfraError("image_build_failed", f"{spec.instance_id}: no environment recipe: {exc}") from exc


def default_node_packages(recipe: EnvRecipeLike) -> Mapping[str, str]:
    """npm tarballs the host packs into the env build context: ``recipes.node_context_packages`` for a
    react-native recipe, nothing for the others."""
    from pytest_mobilebench.runtime import recipes

    if getattr(recipe, "framework", None) != "react-native":
        return {}
    return dict(recipes.node_context_packages(recipe))  # type: ignore[arg-type]


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


@final
class DockerWorkspace:
    """One running container with the repository at ``/testbed`` (tag ``mobilebench-base`` = base tree).

    Created by :meth:`DockerRuntime.prepare`; implements
    :class:`~pytest_mobilebench.runtime.base.Workspace`.

    Attributes:
        container_id: the container's id.
        image: the instance image it runs.
        instance_id: the benchmark instance.
    """

    root: Final[str] = TESTBED

    def __init__(self, client: docker.DockerClient, container: Container, image: BuiltImage, instance_id: str) -> None:
        self._client = client
        self._container = container
        self.container_id: str = str(container.id)
        self.image = image
        self.instance_id = instance_id
        self._closed = False
        self._killed = False
        self._lock = threading.Lock()

    # ------------------------------------------------------------------------------------ execution

    def _create_exec(self, argv: list[str]) -> str:
        """Create an exec; a container that stopped (its init killed by the OOM killer, say) is started
        again first, offline, with its file system as it was."""
        import docker.errors

        api = self._client.api
        try:
            return str(api.exec_create(self.container_id, argv, workdir=TESTBED, stdout=True, stderr=True)["Id"])
        except docker.errors.APIError as exc:
            if exc.status_code != 409:  # 409: "container ... is not running"
                raise
        self._container.start()
        return str(api.exec_create(self.container_id, argv, workdir=TESTBED, stdout=True, stderr=True)["Id"])

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

    def _oom_killed(self, since: float) -> bool:
        """Whether the kernel's OOM killer struck in this container since the wall-clock time ``since``.

        ``State.OOMKilled`` is only set when the container's main process dies (cgroup v1, Docker 20.10),
        so the daemon's ``oom`` events of the container since ``since`` are asked too.
        """
        self._container.reload()
        if self._container.attrs.get("State", {}).get("OOMKilled"):
            return True
        now = time.time() + 0.001
        events = self._client.api.events(
            since=f"{int(since)}.{int((since % 1) * 1e9):09d}",
            until=f"{int(now)}.{int((now % 1) * 1e9):09d}",
            filters={"container": self.container_id, "event": "oom"},
            decode=True,
        )
        try:
            return any(event.get("status") == "oom" or event.get("Action") == "oom" for event in events)
        finally:
            events.close()

    def _ensure_running(self) -> None:
        """After a timeout kill the container is stopped; start it again (still offline) to read files."""
        if self._closed:
            raise InfraError("workspace_error", f"{self.instance_id}: the workspace is closed")
        if self._killed:
            self._container.reload()
            if self._container.status != "running":
                self._container.start()
            self._killed = False

    def run(self, command: str, *, timeout_s: float, network: bool = False) -> RunResult:
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.run`.

        ``bash -c command`` runs in ``/testbed``. On timeout the container is killed (every process
        in it), ``exit_code`` is None and ``timed_out`` True; the workspace can still be read
        (:meth:`read_files`, :meth:`diff` restart the stopped container, offline) and closed.

        Raises:
            InfraError: ``daemon_unreachable`` (the daemon went away), ``disk_full``.
        """
        import docker.errors
        import requests
        import urllib3.exceptions

        with self._lock:
            self._ensure_running()
            started = time.monotonic()
            wall_start = time.time()
            output = _BoundedOutput()
            failure: list[BaseException] = []
            exec_id = ""

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
                reader.join(timeout_s)
                timed_out = reader.is_alive()
                code: int | None
                if timed_out:
                    with contextlib.suppress(docker.errors.APIError):
                        self._container.kill()
                    self._killed = True
                    reader.join(30)
                    code = None
                else:
                    code = self._exit_code(exec_id)
            except (docker.errors.APIError, requests.RequestException) as exc:
                text = str(exc)
                if _is_disk_full(text):
                    raise InfraError("disk_full", f"{self.instance_id}: {text}") from exc
                raise InfraError("daemon_unreachable", f"{self.instance_id}: running {command!r} failed: {text}") from exc
            finally:
                if network:  # also after a kill: a restarted container must come back offline
                    with contextlib.suppress(docker.errors.APIError, requests.RequestException):
                        self._network(False)
            oom = code in (137, None) and not timed_out and self._oom_killed(wall_start)
            if failure and not timed_out and code is None:
                raise InfraError("daemon_unreachable", f"{self.instance_id}: output stream failed: {failure[0]}")
            return RunResult(
                command=command,
                exit_code=code,
                output=output.text(),
                duration_s=round(time.monotonic() - started, 3),
                timed_out=timed_out,
                oom_killed=oom,
            )

    def _sh(self, command: str) -> tuple[int, str]:
        """``(exit code, output)`` of a housekeeping command (124 when it timed out)."""
        result = self.run(command, timeout_s=_HOUSEKEEPING_TIMEOUT_S)
        return (result.exit_code if result.exit_code is not None else 124), result.output

    def _stdout(self, argv: list[str]) -> tuple[int, bytes, bytes]:
        """``(exit code, stdout, stderr)`` of a short command, kept apart (binary-safe)."""
        with self._lock:
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
        ``/tmp/mobilebench-<name>.diff`` and :func:`~pytest_mobilebench.runtime.patching.apply_with_fallbacks`
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
        self._container.put_archive("/tmp", archive.getvalue())
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
            execute, shlex.quote(f"/tmp/{file_name}"), lambda: self._sh(RESET) and None, strategies=strategies_for(patch)
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
        """See :meth:`pytest_mobilebench.runtime.base.Workspace.read_files`.

        Globs are expanded by Python's ``glob.glob(recursive=True)`` inside the container (the same
        semantics as the local runtime) and the matches come back as one tar stream.

        Raises:
            InfraError("workspace_error"): the listing failed.
        """
        if not patterns:
            return {}
        for _attempt in range(3):
            code, out, err = self._stdout(["python3", "-c", _READ_FILES_SCRIPT, *patterns])
            if code != 0:
                raise InfraError(
                    "workspace_error",
                    f"{self.instance_id}: reading {list(patterns)} failed: {err.decode(errors='replace')}",
                )
            if out:  # a tar stream, even of no file, is never empty: an empty one was lost on the way
                break
        else:
            raise InfraError("workspace_error", f"{self.instance_id}: reading {list(patterns)} returned no tar stream")
        found: dict[str, bytes] = {}
        with tarfile.open(fileobj=io.BytesIO(out), mode="r|") as tar:
            for member in tar:
                handle = tar.extractfile(member)
                if member.isfile() and handle is not None:
                    found[member.name] = handle.read()
        return found

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
        """Remove the container (killing what still runs). Safe after a timeout and safe to call twice."""
        import docker.errors

        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(docker.errors.NotFound):
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
        base_image: the Debian image under the base layer.
        repos: where repositories come from (default: ``RepoCache(run_id=run_id)``).
        recipe_factory: ``(host checkout, spec) -> recipe``; default :func:`default_recipe`.
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
        self.base_image = base_image
        self.repos = repos or RepoCache(run_id=run_id)
        self.recipe_factory: RecipeFactory = recipe_factory or default_recipe
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
        mirror = self.repos.ensure(spec.repo, [spec.base_commit])
        with tempfile.TemporaryDirectory(prefix="mobilebench-checkout-") as tmp:
            tree = Path(tmp) / "tree"
            sha = export_tree(mirror, spec.base_commit, tree)
            recipe = self.recipe_factory(tree, spec)
            env = builder.ensure_env(
                recipe, spec.repo, node_packages=self.node_packages(recipe), base=base, log_dir=log_dir
            )

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
        image = self.ensure_instance_image(spec, log_dir=log_dir)
        return self.start(image, spec.instance_id)

    def start(self, image: BuiltImage, instance_id: str) -> DockerWorkspace:
        """Create and start a labelled, offline container from an already built ``image``.

        Raises:
            InfraError: ``daemon_unreachable``, ``disk_full``.
        """
        import docker.errors
        import requests

        client = self.client
        options: dict[str, Any] = {
            "command": ["sleep", "infinity"],
            "detach": True,
            "init": True,
            "working_dir": TESTBED,
            "labels": {LABEL_RUN: self.run_id, LABEL_INSTANCE: instance_id, LABEL_OWNER: self._owner},
        }
        if self.mem_limit:
            options["mem_limit"] = self.mem_limit
            options["memswap_limit"] = self.mem_limit
        if self.nano_cpus:
            options["nano_cpus"] = self.nano_cpus
        if self.pids_limit:
            options["pids_limit"] = self.pids_limit
        container = None
        try:
            container = client.containers.create(image.image_id, **options)
            # offline while tests run: leave the default bridge before the first process starts
            client.networks.get("bridge").disconnect(container.id, force=True)
            container.start()
        except (docker.errors.APIError, requests.RequestException) as exc:
            if container is not None:
                with contextlib.suppress(docker.errors.APIError, requests.RequestException):
                    container.remove(force=True)
            text = str(exc)
            kind = "disk_full" if _is_disk_full(text) else "daemon_unreachable"
            raise InfraError(kind, f"{instance_id}: cannot start a container from {image.tag}: {text}") from exc
        return DockerWorkspace(client, container, image, instance_id)

    # -------------------------------------------------------------------------------------- hygiene

    def sweep(self, run_id: str | None = None) -> list[str]:
        """Remove leftover containers: those of ``run_id`` (when given) and those whose owner process died.

        Call at session start. A container's owner is the ``mobilebench.owner`` label
        (``host:pid:start time``); containers of live processes (other xdist workers, other sessions)
        and of other hosts are kept.

        Returns:
            The removed container ids.
        """
        import docker.errors

        removed: list[str] = []
        # low-level listing (no per-container re-read that a concurrent removal could break)
        for entry in self.client.api.containers(all=True, filters={"label": LABEL_RUN}):
            labels = entry.get("Labels") or {}
            owner = labels.get(LABEL_OWNER, "")
            if owner == self._owner:
                continue
            dead = (run_id is not None and labels.get(LABEL_RUN) == run_id) or _owner_alive(owner) is False
            if dead:
                with contextlib.suppress(docker.errors.NotFound):
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
