"""Harness caches that heal (issue 35, item 5): a downloaded file in the cache folder is checked before use.

Each cached download (an ``npm pack`` tarball such as the Node runtime, the Debian root file system tarball)
gets a record beside it when it is made, ``<file>.record.json`` = ``{"size": bytes, "sha256": hex}``. Before
use, :func:`healed` compares the file with its record; a file that is missing its record, or whose size or
digest differ (truncated by a killed copy, a full disk, a hand edit), is removed, a progress line names it and
why, and it is made again ONCE; a second failure is the maker's own ``InfraError`` with the damaged file named.
Entries are checked under a file lock (``<file>.lock``): an xdist worker never takes another's half-written
file for a damaged one. A file verified in this process is not hashed again while its size and mtime stay.

Repository mirrors heal in :mod:`pytest_mobilebench.runtime.repos` (``git fsck --connectivity-only``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Final

from filelock import FileLock

from pytest_mobilebench.runtime.base import InfraError

__all__ = ["RECORD_SUFFIX", "damage", "healed", "record"]

#: the record of a cached file: ``<file><RECORD_SUFFIX>``
RECORD_SUFFIX: Final[str] = ".record.json"
#: files verified in this process: path -> (size, mtime in ns) when they were
_VERIFIED: dict[str, tuple[int, int]] = {}


def _record_path(path: Path) -> Path:
    return path.with_name(path.name + RECORD_SUFFIX)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def record(path: Path) -> None:
    """Write ``path``'s record (size and SHA-256), atomically."""
    stat = path.stat()
    tmp = _record_path(path).with_name(f"{_record_path(path).name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({"size": stat.st_size, "sha256": _sha256(path)}), encoding="utf-8")
    os.replace(tmp, _record_path(path))
    _VERIFIED[str(path)] = (stat.st_size, stat.st_mtime_ns)


def damage(path: Path) -> str | None:
    """Why the cached ``path`` cannot be used (no record, another size, another digest), or None when it
    matches its record."""
    try:
        stat = path.stat()
        wanted = json.loads(_record_path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return "it has no size and digest record"
    if _VERIFIED.get(str(path)) == (stat.st_size, stat.st_mtime_ns):
        return None
    if not isinstance(wanted, dict) or wanted.get("size") != stat.st_size:
        return f"{stat.st_size} bytes where {wanted.get('size') if isinstance(wanted, dict) else '?'} were recorded"
    if wanted.get("sha256") != _sha256(path):
        return "its SHA-256 differs from the recorded one"
    _VERIFIED[str(path)] = (stat.st_size, stat.st_mtime_ns)
    return None


def healed(path: Path, make: Callable[[], Path], progress: Callable[[str], None], what: str) -> Path:
    """``path`` when it exists and matches its record; else ``make()`` (which writes ``path`` and returns it),
    recorded. A damaged entry is removed first and named in a progress line.

    Raises:
        InfraError: ``make``'s own, its message then also naming the damaged file it replaced.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock"):
        why = damage(path) if path.exists() else None
        if path.exists() and why is None:
            return path
        if why is not None:
            progress(f"{what}: the cached file {path} is damaged ({why}); removed, fetching it again")
            _VERIFIED.pop(str(path), None)
            path.unlink(missing_ok=True)
            _record_path(path).unlink(missing_ok=True)
        try:
            made = make()
        except InfraError as exc:
            if why is None:
                raise
            raise InfraError(
                exc.kind, f"{exc.message} (after removing the damaged cached file {path}: {why})", log=exc.log
            ) from exc
        record(made)
        return made
