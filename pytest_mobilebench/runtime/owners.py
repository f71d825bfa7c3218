"""Who owns a container: a label naming a live process, so a run sweeps only what dead runs left.

``mobilebench.owner`` = ``"<hostname>:<pid>:<process start time in clock ticks>"``: the start time tells
a live owner from a reused pid. Used by the Docker runtime's sweep and by the dependency-layer builds.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Final

__all__ = ["LABEL_OWNER", "owner_alive", "owner_label"]

LABEL_OWNER: Final[str] = "mobilebench.owner"


def _process_start_ticks(pid: int) -> str:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    # field 22 (starttime) counted after the parenthesised command name, which may contain spaces
    return stat.rsplit(")", 1)[1].split()[19]


def owner_label(pid: int | None = None) -> str:
    """``"<hostname>:<pid>:<process start time in clock ticks>"`` identifying a live process uniquely."""
    pid = os.getpid() if pid is None else pid
    return f"{socket.gethostname()}:{pid}:{_process_start_ticks(pid)}"


def owner_alive(label: str) -> bool | None:
    """True/False for an owner on this host; None when the owner is on another host (unknown)."""
    host, _, rest = label.partition(":")
    pid_text, _, ticks = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return None
    return bool(ticks) and _process_start_ticks(int(pid_text)) == ticks
