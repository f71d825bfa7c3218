"""A container's resource limits, decided on the command's final state too (issue 35, item 3).

While a command runs, the writable layer's size is polled every :data:`DISK_POLL_S` seconds where the daemon
has no quota (:meth:`LimitWatch.wait`); a poll alone makes the verdict a race (a candidate writing past the
limit in the last seconds was ``resolved`` on one run and ``disk_full`` on the next). So when the command
ends (or its deadline passes, before the container is killed) :meth:`LimitWatch.ended` measures once more:

* disk: the writable layer (``SizeRw``) against the limit;
* memory: the kernel's count of OOM kills in the container's memory cgroup (``oom_kill`` of
  ``memory.oom_control``, cgroup v1, or ``memory.events``, cgroup v2);
* processes: the kernel's count of forks the pids cgroup refused at the limit (``max`` of ``pids.events``).

The counters are cumulative per cgroup, which a container's (re)start makes afresh: the watch keeps the values
of its last look and reports what grew since (:meth:`LimitWatch.restarted` sets them back to 0). They are read
on the daemon's host when the container's cgroup folder is there (a local daemon: nothing in the container
is asked), else by root's ``/bin/grep`` in the container; in a root image a candidate could replace that
program, but a forged count only adds an exhaustion the reference fix is then run against
(``suites/issue_resolution/attribution.py``) and cannot hide the daemon's ``oom`` events.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    import docker

__all__ = ["COUNTER_FILES", "DISK_POLL_S", "Counters", "Ended", "LimitWatch", "counters_of", "grep_files"]

#: seconds between two looks at the writable layer's size when the daemon has no quota
DISK_POLL_S: Final[float] = 3.0
#: the counter files, as the container sees them (cgroup v1 paths first, then v2)
COUNTER_FILES: Final[tuple[str, ...]] = (
    "/sys/fs/cgroup/memory/memory.oom_control",
    "/sys/fs/cgroup/memory.events",
    "/sys/fs/cgroup/pids/pids.events",
    "/sys/fs/cgroup/pids.events",
)
#: where the daemon's host keeps a container's cgroup folders (cgroupfs and systemd drivers, v1 then v2)
_HOST_PARENTS: Final[tuple[str, ...]] = (
    "/sys/fs/cgroup/{ctl}/docker/{id}",
    "/sys/fs/cgroup/{ctl}/system.slice/docker-{id}.scope",
    "/sys/fs/cgroup/docker/{id}",
    "/sys/fs/cgroup/system.slice/docker-{id}.scope",
)


@dataclasses.dataclass(frozen=True)
class Counters:
    """Kernel counters of one container's cgroups: OOM kills, forks refused at the process limit."""

    oom_kills: int = 0
    pids_refused: int = 0


@dataclasses.dataclass(frozen=True)
class Ended:
    """What the final look found: the layer's bytes (None: no disk limit to check), and how many OOM kills
    and refused forks happened since the previous look (0 when the counters could not be read)."""

    layer_bytes: int | None
    oom_kills: int
    pids_refused: int


def counters_of(files: Mapping[str, str]) -> Counters | None:
    """The counters in ``{file path: its text}`` (the files of :data:`COUNTER_FILES`, by name), or None when
    neither a memory nor a pids counter file is among them. Lines are ``key value``
    (``Documentation/admin-guide/cgroup-v1/memory.rst``, ``cgroup-v2.rst``)."""
    oom = pids = None
    for path, text in files.items():
        values = {k: v for k, _, v in (line.strip().partition(" ") for line in text.splitlines())}
        name = path.rsplit("/", 1)[-1]
        if name in ("memory.oom_control", "memory.events") and values.get("oom_kill", "").isdigit():
            oom = int(values["oom_kill"])
        elif name == "pids.events" and values.get("max", "").isdigit():
            pids = int(values["max"])
    return None if oom is None and pids is None else Counters(oom or 0, pids or 0)


def grep_files(out: bytes) -> dict[str, str]:
    """``grep -H "" files...`` output (``path:line`` per line) as ``{path: text}``."""
    files: dict[str, str] = {}
    for line in out.decode("utf-8", "replace").splitlines():
        path, sep, rest = line.partition(":")
        if sep:
            files[path] = files.get(path, "") + rest + "\n"
    return files


def host_counters(container_id: str, root: Path = Path("/")) -> Counters | None:
    """The container's counters read on this host (its cgroup folders under ``root``), or None when this host
    has none of them (a remote daemon)."""
    files: dict[str, str] = {}
    for parent in _HOST_PARENTS:
        for ctl, name in (("memory", "memory.oom_control"), ("memory", "memory.events"), ("pids", "pids.events")):
            path = root / parent.format(ctl=ctl, id=container_id).lstrip("/") / name
            try:
                files.setdefault(f"{ctl}/{name}", path.read_text(encoding="utf-8"))
            except OSError:
                continue
    return counters_of(files)


class LimitWatch:
    """The disk poll during a command and the final look at its end, for one container.

    Args:
        client: the daemon's client.
        container_id: the container's full id.
        disk_limit: bytes of writable layer allowed where the daemon has no quota; None: not checked.
        read_inside: runs :data:`COUNTER_FILES` through root's ``/bin/grep -sH`` in the container and returns
            its stdout (only asked when the host has no cgroup folder of the container); may raise.
    """

    def __init__(
        self, client: docker.DockerClient, container_id: str, disk_limit: int | None, read_inside: Callable[[], bytes]
    ) -> None:
        self._client = client
        self._id = container_id
        self.disk_limit = disk_limit
        self._read_inside = read_inside
        self._seen = Counters()

    def layer_bytes(self) -> int:
        """Size of the container's writable layer (``SizeRw``), in bytes."""
        entries = self._client.api.containers(all=True, size=True, filters={"id": self._id})
        return int((entries[0] if entries else {}).get("SizeRw") or 0)

    def wait(self, reader: threading.Thread, timeout_s: float) -> tuple[bool, bool]:
        """Join ``reader`` (the command's output) within ``timeout_s``; ``(timed out, layer over the limit)``."""
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return True, False
            reader.join(min(remaining, DISK_POLL_S) if self.disk_limit else remaining)
            if not reader.is_alive():
                return False, False
            if self.disk_limit and self.layer_bytes() > self.disk_limit:
                return False, True

    def restarted(self) -> None:
        """The container was started again: its cgroups, and so their counters, are new."""
        self._seen = Counters()

    def counters(self) -> Counters | None:
        """The counters now (the host's cgroup files, else the container's), or None when unreadable."""
        found = host_counters(self._id)
        if found is not None:
            return found
        try:
            return counters_of(grep_files(self._read_inside()))
        except Exception:  # noqa: BLE001 - an exec refused (the process limit itself) reads nothing
            return None

    def ended(self) -> Ended:
        """The final look (call while the container still runs: before a kill): see the module docstring."""
        now = self.counters()
        seen, self._seen = self._seen, (now or self._seen)
        grown = (
            Counters()
            if now is None
            else Counters(max(0, now.oom_kills - seen.oom_kills), max(0, now.pids_refused - seen.pids_refused))
        )
        return Ended(self.layer_bytes() if self.disk_limit else None, grown.oom_kills, grown.pids_refused)
