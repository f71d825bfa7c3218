"""An instance installed from another commit's install inputs (SWE-bench's ``environment_setup_commit``).

The repository stays at ``base_commit``; only the install inputs
(:func:`~pytest_mobilebench.runtime.deplayer.manifest_files`: manifests, lockfiles, rc files, the files the
lifecycle scripts read) come from the setup commit. With the shared dependency layer that is simply the layer
built from the setup commit's tree (the checkout of the base is copied over it; ``node_modules`` stays). When the
instance runs its own install instead (the layer needed more than the manifests), :class:`SetupInputs` says
what to write over the base checkout before that install and how to put the base's files back after it, before
the baseline is recorded: the workspace the candidate sees is the base, byte for byte, with the setup commit's
dependencies installed. The candidate's patch is applied after all of this, and no install follows it.

Pure functions over two trees; the Docker runtime (:meth:`~pytest_mobilebench.runtime.docker.DockerRuntime.
ensure_instance_image`) does the I/O.
"""

from __future__ import annotations

import dataclasses
import hashlib
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import final

__all__ = ["SetupInputs"]


@final
@dataclasses.dataclass(frozen=True)
class SetupInputs:
    """The install inputs of the base and of the setup commit (``{posix path: bytes}`` each, as
    :func:`~pytest_mobilebench.runtime.deplayer.manifest_files` reads them)."""

    base: Mapping[str, bytes]
    setup: Mapping[str, bytes]

    @property
    def changed(self) -> list[str]:
        """Sorted paths whose bytes differ between the two (present in one only, or different)."""
        return sorted(p for p in {*self.base, *self.setup} if self.base.get(p) != self.setup.get(p))

    @property
    def key(self) -> str:
        """sha256 hex of the setup commit's inputs (sorted ``path NUL sha256(bytes)``): what the instance image's
        tag adds for them."""
        digest = hashlib.sha256(b"setup-inputs")
        for path, data in sorted(self.setup.items()):
            digest.update(f"\n{path}\0{hashlib.sha256(data).hexdigest()}".encode())
        return digest.hexdigest()

    def overlay(self, checkout: Path) -> None:
        """Write the setup commit's version of every changed path into ``checkout`` (the base's tree), removing
        the paths the setup commit does not have."""
        for path in self.changed:
            target = checkout / path
            if path in self.setup:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(self.setup[path])
            else:
                target.unlink(missing_ok=True)

    def restore_command(self) -> str:
        """A shell command run in the checkout after the install: the base's version of every changed path back
        from git (``HEAD`` is the base), the paths only the setup commit has removed. ``true`` when none changed.
        Example: ``git -c safe.directory='*' checkout -q HEAD -- package.json yarn.lock && rm -f -- new.lock``."""
        restored = [p for p in self.changed if p in self.base]
        added = [p for p in self.changed if p not in self.base]
        steps = []
        if restored:
            # as root, in a checkout the test user may already own: git's ownership check is lifted for this call
            quoted = " ".join(shlex.quote(p) for p in restored)
            steps.append(f"git -c safe.directory='*' checkout -q HEAD -- {quoted}")
        if added:
            steps.append("rm -f -- " + " ".join(shlex.quote(p) for p in added))
        return " && ".join(steps) or "true"

    def install_command(self, install: str) -> str:
        """``install`` followed by :meth:`restore_command` (the instance's own install at the setup's inputs)."""
        return f"{install.strip() or 'true'}\n{self.restore_command()}"
