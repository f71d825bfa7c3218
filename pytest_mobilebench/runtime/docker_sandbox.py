"""The Docker runtime's build sandboxes (:mod:`pytest_mobilebench.runtime.sandbox` says what they are and how
they are made): images memoised per tree content, each sandbox a confined container of the instance image.

Built on the daemon, the image builder and the dependency layer; the runtime it starts containers with is passed
in (:class:`SandboxHost`, which :class:`~pytest_mobilebench.runtime.docker.DockerRuntime` implements), never
imported: the provider sits above this module.
"""

from __future__ import annotations

import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, final

from pytest_mobilebench.runtime.base import InfraError, RunResult
from pytest_mobilebench.runtime.daemon import docker_errors
from pytest_mobilebench.runtime.deadlines import Deadlines
from pytest_mobilebench.runtime.deplayer import ensure_deps
from pytest_mobilebench.runtime.docker_workspace import DockerWorkspace
from pytest_mobilebench.runtime.git import run_git
from pytest_mobilebench.runtime.images import BuiltImage, ImageBuilder
from pytest_mobilebench.runtime.naming import content_hash
from pytest_mobilebench.runtime.recipe import TEST_USER
from pytest_mobilebench.runtime.sandbox import SandboxLimits, SandboxSpec, inputs_tar
from pytest_mobilebench.states import InfraKind

__all__ = ["DockerSandbox", "DockerSandboxes", "SandboxHost"]


class SandboxHost(Protocol):
    """What :class:`DockerSandboxes` needs of the runtime it builds on: its client, image builder and deadlines,
    a container started from a built image, and a sibling runtime whose containers carry other limits."""

    deadlines: Deadlines

    @property
    def client(self) -> Any: ...  # a docker.DockerClient

    @property
    def builder(self) -> ImageBuilder: ...

    def start(self, image: BuiltImage, instance_id: str) -> DockerWorkspace: ...

    def with_limits(self, limits: SandboxLimits) -> SandboxHost: ...


@final
class DockerSandbox:
    """A :class:`~pytest_mobilebench.runtime.sandbox.Sandbox` on one confined container (a
    :class:`~.docker_workspace.DockerWorkspace`)."""

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

    def __init__(self, runtime: SandboxHost) -> None:
        self.runtime = runtime
        self._images: dict[str, Any] = {}
        self._limited: dict[SandboxLimits, SandboxHost] = {}

    def open(self, spec: SandboxSpec, instance_id: str, *, log_dir: Path | None = None) -> DockerSandbox:
        """A fresh container of ``spec``'s image (built when missing)."""
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
        key = content_hash(*(name.encode() + b"\0" + data for name, data in sorted(spec.tree.items())))
        image = self._images.get(key)
        if image is None or not self._still_there(image):
            image = self._images[key] = self._build(spec, key, log_dir)
        return image

    def _build(self, spec: SandboxSpec, key: str, log_dir: Path | None) -> Any:
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

    def _with_limits(self, limits: SandboxLimits) -> SandboxHost:
        if limits not in self._limited:
            self._limited[limits] = self.runtime.with_limits(limits)
        return self._limited[limits]
