"""Where a device run's work trees live, so a run killed mid-item leaves nothing the next run does not remove.

Layout: ``<temp folder>/mobilebench-device-work/<run id>-<pid>/`` per process (xdist workers each have
their own), holding an ``owner`` file (:func:`pytest_mobilebench.runtime.owners.owner_label`: host, pid and
process start time, so a reused pid is not mistaken for the owner) and the item work trees
(``mb-<instance>-XXXX/``). The folder (and the parent, once empty) is removed at session end; a SIGKILL-ed process
cannot do that, so :func:`claim` first sweeps every sibling folder whose owner is dead on this host. A folder without an
``owner`` file is swept once it is older than :data:`UNOWNED_GRACE_S` (its creator died between ``mkdir``
and writing the file). Folders of live processes and of other hosts are left alone.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Final

from pytest_mobilebench.runtime.owners import owner_alive, owner_label

__all__ = ["UNOWNED_GRACE_S", "claim", "default_parent", "release", "sweep"]

UNOWNED_GRACE_S: Final[float] = 600.0
_OWNER: Final[str] = "owner"


def default_parent() -> Path:
    """``<temp folder>/mobilebench-device-work`` (``TMPDIR`` is honoured)."""
    return Path(tempfile.gettempdir()) / "mobilebench-device-work"


def _dead(folder: Path, now: float) -> bool:
    try:
        label = (folder / _OWNER).read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        try:
            return now - folder.stat().st_mtime > UNOWNED_GRACE_S
        except FileNotFoundError:
            return False
    return owner_alive(label) is False


def sweep(parent: Path) -> list[Path]:
    """Remove the run folders under ``parent`` whose owner process is dead; returns them."""
    if not parent.is_dir():
        return []
    now = time.time()
    removed = [folder for folder in sorted(parent.iterdir()) if folder.is_dir() and _dead(folder, now)]
    for folder in removed:
        shutil.rmtree(folder, ignore_errors=True)
    return removed


def claim(run_id: str, parent: Path | None = None) -> Path:
    """Sweep ``parent`` (default :func:`default_parent`), then create and own this process's run folder."""
    parent = parent or default_parent()
    sweep(parent)
    folder = parent / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', run_id)[:80]}-{os.getpid()}"
    for _ in range(3):  # another process's release may remove the empty parent in between
        with contextlib.suppress(FileNotFoundError):
            folder.mkdir(parents=True, exist_ok=True)
            (folder / _OWNER).write_text(owner_label() + "\n", encoding="utf-8")
            return folder
    raise FileNotFoundError(f"could not create the run folder {folder}")


def release(folder: Path) -> None:
    """Remove this process's run folder (session end), and the parent when no other run uses it."""
    shutil.rmtree(folder, ignore_errors=True)
    with contextlib.suppress(OSError):  # not empty: another run's folder
        folder.parent.rmdir()
