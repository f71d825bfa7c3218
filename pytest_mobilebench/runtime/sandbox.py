"""Build sandboxes: a fresh, confined workspace of a prepared tree, for suites whose candidate is files to build
rather than a patch to a repository (app generation's ``tsc`` / ``vite build``).

A runtime that offers sandboxes implements :class:`SandboxRuntime` (``sandbox(spec, instance_id)``); a suite
gets the runtime from the ``mb_runtime`` fixture (:class:`~pytest_mobilebench.runtime.provider.RuntimeSource`)
and checks ``isinstance(runtime, SandboxRuntime)``, so a provider registered from a ``conftest.py`` serves
these suites the way it serves issue resolution (``prepare``). The Docker runtime's sandboxes
(:class:`DockerSandboxes`):

1. images once per tree content (shared by every item and worker; content-hashed tags, file locks): the
   harness's Debian base layer, the environment of ``spec.recipe`` (framework knowledge, resolved by the
   suite), the dependency layer (``recipe.install_command`` in a container on that image with the network
   on: only the tree's own pinned install runs, never on the host), then an instance layer holding the
   tree at ``/testbed`` handed to the unprivileged user ``10001`` (``recipe.test_user``);
2. per sandbox a fresh container of that image with ``spec.limits`` (no network but loopback, every
   capability dropped, ``no-new-privileges``, commands as uid 10001, each command killed at its time limit);
3. :meth:`Sandbox.put_files` copies files in through the Docker API (``put_archive``), owned by uid 10001;
   :meth:`Sandbox.read_files` copies results out through the one-way channel (names checked by
   :mod:`pytest_mobilebench.runtime.channel`; refused names in :attr:`Sandbox.rejected`).

The images follow ``--mb-cache-level`` like every image of the run (the dependency layer goes with the
instance level). Nothing here names a framework or a suite.
"""

from __future__ import annotations

import dataclasses
import io
import tarfile
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, final, runtime_checkable

from pytest_mobilebench.runtime.base import InfraError, RunResult
from pytest_mobilebench.runtime.recipe import TEST_USER, EnvRecipeLike
from pytest_mobilebench.states import InfraKind

if TYPE_CHECKING:
    from pytest_mobilebench.runtime.docker import DockerRuntime
    from pytest_mobilebench.runtime.docker_workspace import DockerWorkspace

__all__ = [
    "DockerSandbox",
    "DockerSandboxes",
    "Sandbox",
    "SandboxLimits",
    "SandboxRuntime",
    "SandboxSpec",
    "inputs_tar",
]


@final
@dataclasses.dataclass(frozen=True)
class SandboxLimits:
    """Limits of one sandbox (docker units): ``mem`` (``"2g"``, no swap on top), ``cpus`` (CPUs), ``pids``
    (processes) and ``disk`` (the writable layer, ``"1g"``)."""

    mem: str = "2g"
    cpus: float = 2.0
    pids: int = 512
    disk: str = "1g"


@final
@dataclasses.dataclass(frozen=True)
class SandboxSpec:
    """What a sandbox is made of.

    Attributes:
        name: names the image (``app-scaffold``) and labels its containers.
        repo: the image repository label (``mobilebench/app-scaffold``).
        tree: ``{posix relative name: bytes}`` of the prepared tree at the sandbox root (its content keys the images).
        recipe: the environment (:class:`~pytest_mobilebench.runtime.recipe.EnvRecipeLike`); its
            ``install_command`` runs once per tree, with the network on, into the dependency layer.
        limits: the limits of each sandbox.
    """

    name: str
    repo: str
    tree: Mapping[str, bytes]
    recipe: EnvRecipeLike
    limits: SandboxLimits = SandboxLimits()


@runtime_checkable
class Sandbox(Protocol):
    """One fresh sandbox, owned by one item; commands run offline at ``root`` as the unprivileged user."""

    root: str

    def put_files(self, files: Mapping[str, bytes]) -> None:
        """Copy ``files`` (``{relative name: bytes}``, names already checked) under ``root``, owned by the user.

        Raises:
            InfraError: the backend refused them.
        """

    def run(self, command: str, *, timeout_s: float) -> RunResult:
        """Run a shell command at ``root`` offline under a wall-clock limit (killed at it: ``exit_code`` None)."""

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        """``{relative name: bytes}`` of regular files matching the globs, through the one-way channel."""

    def stop_leftovers(self) -> None:
        """Stop every process a command left behind (an agent's shell calls it after each command; a sandbox
        whose ``run`` leaves nothing running does nothing)."""

    @property
    def rejected(self) -> tuple[str, ...]:
        """Names the channel refused so far, as ``"name: why"``."""

    def close(self) -> None:
        """Remove the sandbox. Safe to call twice."""


@runtime_checkable
class SandboxRuntime(Protocol):
    """A runtime that can also open build sandboxes."""

    name: str

    def sandbox(self, spec: SandboxSpec, instance_id: str, *, log_dir: Path | None = None) -> Sandbox:
        """A fresh sandbox of ``spec`` for ``instance_id``.

        Raises:
            InfraError: the images cannot be made (``scaffold_install_failed`` when the tree's own install
                fails, log path in the message), the backend failed (never the candidate's doing).
        """


def inputs_tar(files: Mapping[str, bytes], *, uid: int, gid: int) -> bytes:
    """An uncompressed tar of ``files`` (folders included), every member owned by ``uid:gid``, fixed times."""
    buffer = io.BytesIO()
    folders = sorted({"/".join(name.split("/")[:i]) for name in files for i in range(1, name.count("/") + 1)})
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for folder in folders:
            info = tarfile.TarInfo(folder)
            info.type, info.mode, info.uid, info.gid = tarfile.DIRTYPE, 0o755, uid, gid
            tar.addfile(info)
        for name, data in sorted(files.items()):
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.uid, info.gid = len(data), 0o644, uid, gid
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


@final
class DockerSandbox:
    """A :class:`Sandbox` on one confined container (a :class:`~.docker_workspace.DockerWorkspace`)."""

    def __init__(self, workspace: DockerWorkspace, client: Any) -> None:
        self.workspace = workspace
        self.client = client
        self.root = str(workspace.root)

    def put_files(self, files: Mapping[str, bytes]) -> None:
        uid, gid = (int(part) for part in TEST_USER.split(":"))
        self.workspace.forget_reads()  # files change: nothing read before is served again
        if not self.client.api.put_archive(self.workspace.container_id, self.root, inputs_tar(files, uid=uid, gid=gid)):
            raise InfraError(InfraKind.DOCKER_ERROR, f"{self.workspace.instance_id}: the daemon refused the files")

    def run(self, command: str, *, timeout_s: float) -> RunResult:
        return self.workspace.run(command, timeout_s=timeout_s)

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        return self.workspace.read_files(patterns)

    def stop_leftovers(self) -> None:
        """Stop every process a command left behind (an agent's shell calls it after each command)."""
        self.workspace.stop_leftovers()

    @property
    def rejected(self) -> tuple[str, ...]:
        return tuple(f"{r.name}: {r.why}" for r in self.workspace.rejected)

    def close(self) -> None:
        self.workspace.close()


@final
class DockerSandboxes:
    """The Docker runtime's sandboxes (see the module docstring): images memoised per tree content, containers
    started by a sibling runtime carrying the spec's limits (same client, run id, owner label, deadlines)."""

    def __init__(self, runtime: DockerRuntime) -> None:
        self.runtime = runtime
        self._images: dict[str, Any] = {}
        self._limited: dict[SandboxLimits, DockerRuntime] = {}

    def open(self, spec: SandboxSpec, instance_id: str, *, log_dir: Path | None = None) -> DockerSandbox:
        """A fresh container of ``spec``'s image (built when missing)."""
        from pytest_mobilebench.runtime.daemon import docker_errors

        with docker_errors(self.runtime.client, instance_id, f"preparing the {spec.name} image"):
            image = self.image(spec, log_dir)
        workspace = self._with_limits(spec.limits).start(image, instance_id)
        return DockerSandbox(workspace, self.runtime.client)

    def image(self, spec: SandboxSpec, log_dir: Path | None = None) -> Any:
        """The instance image (``BuiltImage``) of ``spec``, built once per tree content and still present.

        Raises:
            InfraError: ``daemon_unreachable``, ``image_build_failed``, ``scaffold_install_failed`` (the tree's
                own install failed: log attached), ``disk_full``, ``build_hung``.
        """
        from pytest_mobilebench.runtime.naming import content_hash

        key = content_hash(*(name.encode() + b"\0" + data for name, data in sorted(spec.tree.items())))
        image = self._images.get(key)
        if image is None or not self._still_there(image):
            image = self._images[key] = self._build(spec, key, log_dir)
        return image

    def _build(self, spec: SandboxSpec, key: str, log_dir: Path | None) -> Any:
        from pytest_mobilebench.runtime.deplayer import ensure_deps
        from pytest_mobilebench.runtime.git import run_git

        runtime, recipe = self.runtime, spec.recipe
        builder = runtime.builder
        with tempfile.TemporaryDirectory(prefix="mb-sandbox-") as tmp:
            tree = Path(tmp) / "tree"
            for name, data in spec.tree.items():
                (tree / name).parent.mkdir(parents=True, exist_ok=True)
                (tree / name).write_bytes(data)
            base = builder.ensure_base(log_dir=log_dir)
            env = builder.ensure_env(
                recipe, spec.repo, node_packages=recipe.context_packages, base=base, log_dir=log_dir
            )
            deps = ensure_deps(
                builder,
                env,
                tree,
                recipe.install_command,
                repo=spec.repo,
                log_dir=log_dir,
                deadline_s=runtime.deadlines.install_s,
                silence_s=runtime.deadlines.install_silence_s,
            )
            if deps is None:
                raise InfraError(
                    InfraKind.SCAFFOLD_INSTALL_FAILED,
                    f"{recipe.install_command!r} of the {spec.name} tree "
                    f"failed on {env.tag} (log under {log_dir or builder.log_dir})",
                )
            ident = ["-c", "user.name=mobilebench", "-c", "user.email=mobilebench@localhost"]
            run_git(["init", "-q", "-b", "main"], cwd=tree)
            run_git(["add", "-A"], cwd=tree)
            run_git([*ident, "commit", "-q", "--no-verify", "-m", spec.name], cwd=tree)
            return builder.ensure_instance(
                spec.name,
                env,
                repo=spec.repo,
                base_commit=key[:40],
                install_command=recipe.install_command,
                checkout_dir=tree,
                log_dir=log_dir,
                test_user=recipe.test_user,
                deps=deps,
            )

    def _still_there(self, image: Any) -> bool:
        """Whether the memoised image still exists under its tag (a cleanup elsewhere may have removed it)."""
        import docker.errors

        try:
            return bool(self.runtime.client.images.get(image.tag).id == image.image_id)
        except docker.errors.ImageNotFound:
            return False

    def _with_limits(self, limits: SandboxLimits) -> DockerRuntime:
        from pytest_mobilebench.runtime.docker import DockerRuntime

        if limits not in self._limited:
            parent = self.runtime
            self._limited[limits] = DockerRuntime(
                client=parent.client,
                run_id=parent.run_id,
                cache_level=parent.cache_level,
                ca_bundle=parent.ca_bundle,
                mem_limit=limits.mem,
                cpus=limits.cpus,
                pids_limit=limits.pids,
                disk_limit=limits.disk,
                base_image=parent.base_image,
                progress=parent.progress,
                deadlines=parent.deadlines,
            )
        return self._limited[limits]
