"""The build axis in a sandbox of the run's runtime: nothing of the candidate's runs on the host (issue 18, item 1).

The runtime comes from the ``mb_runtime`` fixture (the provider ``--mb-runtime`` names, or a ``conftest.py``'s):
a :class:`~pytest_mobilebench.runtime.sandbox.SandboxRuntime` opens sandboxes of a
:class:`~pytest_mobilebench.runtime.sandbox.SandboxSpec`. This module only says what the sandbox is made of and what
runs in it (:mod:`pytest_mobilebench.runtime.sandbox` says how the Docker runtime confines it):

1. the tree: the pinned scaffold (``package.json``, ``package-lock.json``, ``tsconfig.json``, ``vite.config.ts``,
   ``index.html``); its environment is the Node recipe inferred from it by
   :func:`~pytest_mobilebench.frameworks.react_native.recipe.infer_node_recipe`, its install ``npm ci`` of the
   pinned lockfile (in the image build, only the lockfile's own lifecycle scripts; ``node_modules`` stays
   root's, read-only); the limits are :data:`LIMITS`;
2. per item a fresh sandbox; the candidate's build inputs (:func:`build_inputs`: ``src/**``, ``public/**``,
   ``index.html``; names checked, links refused, sizes bounded) are copied in, owned by uid 10001;
3. ``tsc --noEmit`` and ``vite build`` run offline; ``dist/`` comes back through the one-way channel
   (no link, no absolute name, no ``..``, each file and the total bounded); refused names are kept.

:class:`ContainedBuilder` takes the sandbox runtime (one per process and trust level).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Final, final

from pytest_mobilebench.runtime.channel import ChannelError, safe_relpath
from pytest_mobilebench.runtime.sandbox import SandboxLimits, SandboxRuntime, SandboxSpec, inputs_tar

__all__ = [
    "LIMITS",
    "MAX_INPUT_BYTES",
    "MAX_INPUT_FILES",
    "ContainedBuild",
    "ContainedBuilder",
    "build_inputs",
    "inputs_tar",
]

#: limits of one build sandbox (docker units; ``disk`` bounds the writable layer)
LIMITS: Final[SandboxLimits] = SandboxLimits(mem="2g", cpus=2.0, pids=512, disk="1g")
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
                raise ValueError(
                    f"the project's build inputs exceed {MAX_INPUT_FILES} files or {MAX_INPUT_BYTES} bytes"
                )
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


@final
@dataclasses.dataclass(frozen=True)
class ContainedBuild:
    """What one contained build produced.

    Attributes:
        tsc_exit, vite_exit: exit codes (-1 when killed at the time limit).
        tsc_out, vite_out: the commands' output (bounded by the runtime).
        dist: ``{name relative to dist/: bytes}`` copied out through the channel.
        rejected: names the channel refused (``"name: why"``), on the way in and out.
        seconds: wall time of put + tsc + vite + copy-out; ``image_seconds``: ensuring the images and
            opening the sandbox.
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
    """Builds candidates in sandboxes of the scaffold (see the module docstring); one per process and runtime.

    The suite keeps it as a ``ctx.resource``; the runtime's provider swept what dead runs left when it started.

    Args:
        runtime: the ``mb_runtime`` fixture's runtime, one that opens sandboxes.
        scaffold_dir: the pinned scaffold (``package.json``, ``package-lock.json``, configs).
    """

    def __init__(self, runtime: SandboxRuntime, *, scaffold_dir: Path) -> None:
        self.runtime = runtime
        self.scaffold_dir = scaffold_dir
        self._spec: SandboxSpec | None = None

    def spec(self) -> SandboxSpec:
        """The scaffold's sandbox: its files, the Node recipe inferred from them (install ``npm ci``),
        :data:`LIMITS`."""
        if self._spec is None:
            from pytest_mobilebench.frameworks.react_native.recipe import infer_node_recipe

            files = {name: (self.scaffold_dir / name).read_bytes() for name in _SCAFFOLD_FILES}
            with tempfile.TemporaryDirectory(prefix="mb-scaffold-") as tmp:
                for name, data in files.items():
                    (Path(tmp) / name).write_bytes(data)
                recipe = infer_node_recipe(Path(tmp), overrides={"install_command": _INSTALL})
            self._spec = SandboxSpec(name="app-scaffold", repo=_REPO, tree=files, recipe=recipe, limits=LIMITS)
        return self._spec

    def warm(self, log_dir: Path | None = None) -> None:
        """Make the scaffold's images now (a sandbox opened and closed).

        Raises:
            InfraError: as :meth:`build`.
        """
        self.runtime.sandbox(self.spec(), "warm-up", log_dir=log_dir).close()

    def build(
        self, files: Mapping[str, bytes], *, instance_id: str, timeout_s: float, log_dir: Path | None = None
    ) -> ContainedBuild:
        """Copy ``files`` (from :func:`build_inputs`) into a fresh sandbox, run tsc and vite, copy ``dist/`` out.

        Raises:
            InfraError: the images could not be made (``scaffold_install_failed``: the pinned ``npm ci``
                failed, log attached), the backend failed, ``oom_killed``, ``disk_full``, ``container_died``
                (never a verdict on the candidate).
        """
        started = time.monotonic()
        sandbox = self.runtime.sandbox(self.spec(), instance_id, log_dir=log_dir)
        image_seconds = time.monotonic() - started
        started = time.monotonic()
        try:
            sandbox.put_files(files)
            tsc = sandbox.run(TSC_COMMAND, timeout_s=timeout_s)
            vite = sandbox.run(VITE_COMMAND, timeout_s=timeout_s)
            found = sandbox.read_files(["dist/**"])
            rejected = sandbox.rejected
        finally:
            sandbox.close()
        dist = {name[len("dist/") :]: data for name, data in found.items() if name.startswith("dist/")}
        return ContainedBuild(
            tsc_exit=-1 if tsc.exit_code is None else tsc.exit_code,
            tsc_out=tsc.output,
            vite_exit=-1 if vite.exit_code is None else vite.exit_code,
            vite_out=vite.output,
            dist=dist,
            rejected=rejected,
            seconds=round(time.monotonic() - started, 3),
            image_seconds=round(image_seconds, 3),
        )
