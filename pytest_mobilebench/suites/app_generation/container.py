"""The build axis in the container runtime: nothing of the candidate's runs on the host (issue 18, item 1).

The suite's only door to :mod:`pytest_mobilebench.runtime`; it reuses issue resolution's machinery:

1. images (once per scaffold hash, shared by every item and worker; content-hashed tags, file locks):
   the harness's Debian base layer (:meth:`~pytest_mobilebench.runtime.images.ImageBuilder.ensure_base`),
   the Node environment inferred from the scaffold's ``package.json`` / lockfile by
   :func:`~pytest_mobilebench.frameworks.react_native.recipe.infer_node_recipe`, the dependency layer
   (:func:`~pytest_mobilebench.runtime.deplayer.ensure_deps`: ``npm ci`` of the pinned lockfile runs in a
   container on that image with the network on, so only the lockfile's own lifecycle scripts run, never
   on the host), then an instance layer holding the scaffold (``tsconfig.json``, ``vite.config.ts``,
   ``index.html``) at ``/testbed``, handed to the unprivileged user ``10001`` (``node_modules`` stays
   root's, read-only);
2. per item a fresh container of that image (:meth:`~pytest_mobilebench.runtime.docker.DockerRuntime.start`:
   no network interface but loopback, every capability dropped, ``no-new-privileges``, commands as uid
   10001, memory / CPU / pid limits of :data:`LIMITS`, writable layer bounded by ``disk``, each command
   killed after its time limit);
3. the candidate's build inputs (:func:`build_inputs`: ``src/**``, ``public/**``, ``index.html``; names
   checked, links refused, sizes bounded) are copied in through the Docker API (``put_archive``), owned by
   uid 10001;
4. ``tsc --noEmit`` and ``vite build`` run offline; ``dist/`` comes back through the workspace's one-way
   channel (``get_archive`` per file, names checked by :mod:`pytest_mobilebench.runtime.channel`: no
   link, no absolute name, no ``..``, each file and the total bounded); refused names are kept.

:class:`ContainedBuilder` takes a connected docker client (the suite's ``mb_docker_client`` fixture).
"""

from __future__ import annotations

import dataclasses
import io
import os
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Final, final

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.channel import ChannelError, safe_relpath
from pytest_mobilebench.runtime.recipe import TEST_USER
from pytest_mobilebench.states import InfraKind

__all__ = ["LIMITS", "MAX_INPUT_BYTES", "MAX_INPUT_FILES", "ContainedBuild", "ContainedBuilder", "build_inputs",
           "inputs_tar"]

#: limits of one build container (docker units; ``disk`` bounds the writable layer)
LIMITS: Final[Mapping[str, Any]] = {"mem": "2g", "cpus": 2.0, "pids": 512, "disk": "1g"}
#: what a candidate may hand to the build: bytes in total and files
MAX_INPUT_BYTES: Final[int] = 64 << 20
MAX_INPUT_FILES: Final[int] = 5000
_SKIP_DIRS: Final = frozenset({"node_modules", ".git"})
_REPO: Final = "mobilebench/app-scaffold"
_SCAFFOLD_FILES: Final = ("package.json", "package-lock.json", "tsconfig.json", "vite.config.ts", "index.html")
_INSTALL: Final = "npm ci --no-audit --no-fund"
_ENV: Final = "NO_COLOR=1 FORCE_COLOR=0 "
TSC_COMMAND: Final = _ENV + "node_modules/.bin/tsc --noEmit -p tsconfig.json --pretty false"
VITE_COMMAND: Final = _ENV + "node_modules/.bin/vite build"


def build_inputs(project: Path) -> tuple[dict[str, bytes], list[str]]:
    """The files of ``project`` that reach the build, ``{posix relative name: bytes}``, and refusals.

    ``src/**`` and ``public/**`` (folders named ``node_modules`` / ``.git`` skipped; ``src/dist/`` is
    kept: it is compiled) and ``index.html``. A symbolic link, a non-regular file or an unsafe name is
    refused (listed in words, never followed). The result cache keys on the same files.

    Raises:
        ValueError: more than :data:`MAX_INPUT_FILES` files or :data:`MAX_INPUT_BYTES` bytes.
    """
    files: dict[str, bytes] = {}
    refused: list[str] = []
    total = 0
    roots = [project / name for name in ("src", "public", "index.html")]
    for root in roots:
        for path in _walk(root, refused):
            rel = path.relative_to(project).as_posix()
            try:
                name = safe_relpath(rel)
            except ChannelError as exc:
                refused.append(str(exc))
                continue
            size = path.stat().st_size  # before reading: a sparse file of any size costs the candidate nothing
            total += size
            if total > MAX_INPUT_BYTES or len(files) >= MAX_INPUT_FILES:
                raise ValueError(f"the project's build inputs exceed {MAX_INPUT_FILES} files or {MAX_INPUT_BYTES} bytes")
            with path.open("rb") as handle:
                data = handle.read(size + 1)  # a file that grows after the check is cut at its checked size
            files[name] = data[:size]
    return files, refused


def _walk(root: Path, refused: list[str]) -> list[Path]:
    """Regular files under ``root`` (or ``root`` itself), sorted, without following any link."""
    if root.is_symlink():
        refused.append(f"{root.name}: a symbolic link, not followed")
        return []
    if root.is_file():
        return [root]
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        folder = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            if (folder / d).is_symlink():
                refused.append(f"{(folder / d).relative_to(root.parent).as_posix()}: a symbolic link, not followed")
            elif d not in _SKIP_DIRS:
                keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            path = folder / f
            if path.is_symlink() or not path.is_file():
                refused.append(f"{path.relative_to(root.parent).as_posix()}: not a regular file, not copied")
            else:
                out.append(path)
    return out


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
@dataclasses.dataclass(frozen=True)
class ContainedBuild:
    """What one contained build produced.

    Attributes:
        tsc_exit, vite_exit: exit codes (-1 when killed at the time limit).
        tsc_out, vite_out: the commands' output (bounded by the runtime).
        dist: ``{name relative to dist/: bytes}`` copied out through the channel.
        rejected: names the channel refused (``"name: why"``), on the way in and out.
        seconds: wall time of put + tsc + vite + copy-out; ``image_seconds``: ensuring the images.
    """

    tsc_exit: int
    tsc_out: str
    vite_exit: int
    vite_out: str
    dist: dict[str, bytes]
    rejected: tuple[str, ...]
    seconds: float
    image_seconds: float


@final
class ContainedBuilder:
    """Builds candidates in containers of the scaffold image (see the module docstring); one per process.

    Made once per process (the suite keeps it as a ``ctx.resource``); containers left by dead runs are
    swept when it is made. Its images are kept after the run (nothing of the candidate's is in them).

    Args:
        client: a connected ``docker.DockerClient``.
        run_id: labels containers and images.
        scaffold_dir: the pinned scaffold (``package.json``, ``package-lock.json``, configs).
        progress: receives progress lines of image builds.
    """

    def __init__(self, client: Any, *, run_id: str, scaffold_dir: Path,
                 progress: Callable[[str], None] | None = None) -> None:
        from pytest_mobilebench.runtime.docker import DockerRuntime

        self.scaffold_dir = scaffold_dir
        self.runtime = DockerRuntime(client=client, run_id=run_id, mem_limit=str(LIMITS["mem"]),
                                     cpus=float(LIMITS["cpus"]), pids_limit=int(LIMITS["pids"]),
                                     disk_limit=str(LIMITS["disk"]), progress=progress)
        self.runtime.sweep()  # build containers left by dead runs (a worker killed mid-build)
        self._image: Any = None

    def image(self, log_dir: Path | None = None) -> Any:
        """The scaffold's instance image (``BuiltImage``), built once per scaffold hash.

        Raises:
            InfraError: ``daemon_unreachable``, ``image_build_failed``, ``scaffold_install_failed`` (the
                pinned ``npm ci`` failed: log attached), ``disk_full``, ``build_hung``.
        """
        if self._image is not None and self._still_there(self._image):
            return self._image
        from pytest_mobilebench.runtime.deplayer import ensure_deps
        from pytest_mobilebench.runtime.git import run_git
        from pytest_mobilebench.runtime.images import content_hash
        from pytest_mobilebench.frameworks.react_native.recipe import NODE_TEST_USER, infer_node_recipe

        builder = self.runtime.builder
        with tempfile.TemporaryDirectory(prefix="mb-scaffold-") as tmp:
            tree = Path(tmp) / "scaffold"
            tree.mkdir()
            for name in _SCAFFOLD_FILES:
                (tree / name).write_bytes((self.scaffold_dir / name).read_bytes())
            key = content_hash(*((self.scaffold_dir / name).read_bytes() for name in _SCAFFOLD_FILES))
            recipe = infer_node_recipe(tree, overrides={"install_command": _INSTALL})
            base = builder.ensure_base(log_dir=log_dir)
            env = builder.ensure_env(recipe, _REPO, node_packages=recipe.context_packages, base=base, log_dir=log_dir)
            deps = ensure_deps(builder, env, tree, _INSTALL, repo=_REPO, log_dir=log_dir)
            if deps is None:
                raise InfraError(InfraKind.SCAFFOLD_INSTALL_FAILED, f"npm ci of the pinned scaffold lockfile failed on {env.tag} "
                                 f"(log under {log_dir or builder.log_dir})")
            ident = ["-c", "user.name=mobilebench", "-c", "user.email=mobilebench@localhost"]
            run_git(["init", "-q", "-b", "main"], cwd=tree)
            run_git(["add", "-A"], cwd=tree)
            run_git([*ident, "commit", "-q", "--no-verify", "-m", "scaffold"], cwd=tree)
            self._image = builder.ensure_instance("app-scaffold", env, repo=_REPO, base_commit=key[:40],
                                                  install_command=_INSTALL, checkout_dir=tree, log_dir=log_dir,
                                                  test_user=NODE_TEST_USER, deps=deps)
        return self._image

    def _still_there(self, image: Any) -> bool:
        """Whether the memoised image still exists under its tag (a cleanup elsewhere may have removed it)."""
        import docker.errors

        try:
            return bool(self.runtime.client.images.get(image.tag).id == image.image_id)
        except docker.errors.ImageNotFound:
            return False

    def build(self, files: Mapping[str, bytes], *, instance_id: str, timeout_s: float,
              log_dir: Path | None = None) -> ContainedBuild:
        """Copy ``files`` (from :func:`build_inputs`) into a fresh container, run tsc and vite, copy ``dist/`` out.

        Raises:
            InfraError: the image could not be made, the daemon failed, ``oom_killed``, ``disk_full``,
                ``container_died`` (never a verdict on the candidate).
        """
        started = time.monotonic()
        image = self.image(log_dir)
        image_seconds = time.monotonic() - started
        started = time.monotonic()
        workspace = self.runtime.start(image, instance_id)
        try:
            uid, gid = (int(part) for part in TEST_USER.split(":"))
            ok = self.runtime.client.api.put_archive(workspace.container_id, workspace.root,
                                                     inputs_tar(files, uid=uid, gid=gid))
            if not ok:
                raise InfraError(InfraKind.DOCKER_ERROR, f"{instance_id}: the daemon refused the build inputs")
            tsc = workspace.run(TSC_COMMAND, timeout_s=timeout_s)
            vite = workspace.run(VITE_COMMAND, timeout_s=timeout_s)
            found = workspace.read_files(["dist/**"])
            rejected = tuple(f"{r.name}: {r.why}" for r in workspace.rejected)
        finally:
            workspace.close()
        dist = {name[len("dist/"):]: data for name, data in found.items() if name.startswith("dist/")}
        return ContainedBuild(
            tsc_exit=-1 if tsc.exit_code is None else tsc.exit_code, tsc_out=tsc.output,
            vite_exit=-1 if vite.exit_code is None else vite.exit_code, vite_out=vite.output,
            dist=dist, rejected=rejected, seconds=round(time.monotonic() - started, 3),
            image_seconds=round(image_seconds, 3))
