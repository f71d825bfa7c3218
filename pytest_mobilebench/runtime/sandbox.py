"""Build sandboxes: a fresh, confined workspace of a prepared tree, for suites whose candidate is files to build
rather than a patch to a repository (app generation's ``tsc`` / ``vite build``).

A runtime that offers sandboxes implements :class:`SandboxRuntime` (``sandbox(spec, instance_id)``); a suite
gets the runtime from the ``mb_runtime`` fixture (:class:`~pytest_mobilebench.runtime.provider.RuntimeSource`)
and checks ``isinstance(runtime, SandboxRuntime)``, so a provider registered from a ``conftest.py`` serves
these suites the way it serves issue resolution (``prepare``). The Docker runtime's sandboxes
(:class:`~pytest_mobilebench.runtime.docker_sandbox.DockerSandboxes`):

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
instance level). Nothing here names a framework or a suite, nor a backend: the Docker runtime's builder is
:mod:`pytest_mobilebench.runtime.docker_sandbox`.
"""

from __future__ import annotations

import dataclasses
import io
import tarfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, final, runtime_checkable

from pytest_mobilebench.runtime.base import RunResult
from pytest_mobilebench.runtime.recipe import EnvRecipeLike

__all__ = [
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
