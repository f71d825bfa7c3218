"""Instance layers kept while any run that uses them is going on (issue 23, item 3).

A run's clean-up removes the images it built above ``--mb-cache-level`` (SWE-bench semantics). Two runs
grading the same instances at once (a lab's models in separate runs) share instance and dependency
layers by content key, so the first run to end would remove a layer the other is about to start its
next candidate from, and that run would build it again. Leases prevent that:

- a process takes a lease on each layer it builds on or starts a container from, then looks the layer up
  again (a clean-up may have removed it just before; it is then built again) (:meth:`Leases.take`): the file
  ``<cache>/image-leases/<host key>/<image id hex>/<run id>@<pid>`` holding its owner label
  (:func:`~pytest_mobilebench.runtime.owners.owner_label`);
- a clean-up spares a layer another run holds a live lease on (:meth:`Leases.held_elsewhere`: the
  owner process is alive, or on another host and the lease younger than :data:`STALE_S`) and marks it
  *owed* (the file ``owed`` in that folder): its removal is deferred, not dropped;
- every clean-up then releases its own run's leases (:meth:`Leases.settle`) and returns the owed layers
  no live run holds any more, which the caller removes (the last run out removes what the first one
  wanted removed); a folder whose layer is gone is deleted.

Leases are bookkeeping on this machine's cache folder: runs on other machines against the same daemon
do not see each other's leases (their layers are then removed at the first clean-up, as without leases).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from pathlib import Path
from typing import Final, final

from pytest_mobilebench.runtime.owners import owner_alive, owner_label

__all__ = ["STALE_S", "Leases"]

#: a lease of a process on another host (its liveness unknown) older than this is ignored, in seconds
STALE_S: Final[float] = 24 * 3600.0
_OWED: Final[str] = "owed"


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)


@final
class Leases:
    """The leases of one daemon's layers (``root`` = ``<cache>/image-leases/<host key>``).

    Args:
        root: the daemon's lease folder.
        run_id: this run's id (its leases never hold back its own clean-up).
        owner: this process's owner label (default :func:`owner_label`).
    """

    def __init__(self, root: Path, run_id: str, owner: str | None = None) -> None:
        self.root = root
        self.run_id = run_id
        self.owner = owner or owner_label()
        self._taken: set[str] = set()

    def _folder(self, image_id: str) -> Path:
        return self.root / _safe(image_id.removeprefix("sha256:"))

    def take(self, image_id: str) -> None:
        """Hold ``image_id`` for this run (once per process and layer; an OSError is ignored: a lease
        only spares work, it never decides a verdict)."""
        if image_id in self._taken:
            return
        with contextlib.suppress(OSError):
            folder = self._folder(image_id)
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"{_safe(self.run_id)}@{os.getpid()}").write_text(self.owner, encoding="utf-8")
            self._taken.add(image_id)

    def _live_holders(self, folder: Path) -> list[str]:
        """Runs other than this one holding a live lease in ``folder`` (leases of dead processes are deleted)."""
        holders: list[str] = []
        for lease in sorted(folder.glob("*@*")) if folder.is_dir() else []:
            run = lease.name.rpartition("@")[0]
            if run == _safe(self.run_id):
                continue
            with contextlib.suppress(OSError):
                alive = owner_alive(lease.read_text(encoding="utf-8").strip())
                if alive or (alive is None and time.time() - lease.stat().st_mtime < STALE_S):
                    holders.append(run)
                else:
                    lease.unlink()
        return holders

    def held_elsewhere(self, image_id: str) -> bool:
        """Whether another live run holds ``image_id``; if so the layer is marked owed (its removal deferred
        to the last run out)."""
        folder = self._folder(image_id)
        if not self._live_holders(folder):
            return False
        with contextlib.suppress(OSError):
            (folder / _OWED).touch()
        return True

    def settle(self) -> list[str]:
        """Release this run's leases; return the owed layers (``sha256:...``) no live run holds any more."""
        due: list[str] = []
        for folder in sorted(self.root.iterdir()) if self.root.is_dir() else []:
            for lease in folder.glob(f"{_safe(self.run_id)}@*"):
                with contextlib.suppress(OSError):
                    lease.unlink()
            held = self._live_holders(folder)
            if (folder / _OWED).is_file() and not held:
                due.append(f"sha256:{folder.name}")
            elif not held:
                with contextlib.suppress(OSError):
                    folder.rmdir()  # nobody holds it and nothing is owed: no bookkeeping left
        self._taken.clear()
        return due

    def forget(self, image_id: str) -> None:
        """Drop the folder of a layer that is gone."""
        shutil.rmtree(self._folder(image_id), ignore_errors=True)
