"""Who owns a container: a label naming a live process, so a run sweeps only what dead runs left.

``mobilebench.owner`` = ``"<hostname>:<pid>:<process start time in clock ticks>"``: the start time tells
a live owner from a reused pid. Used by the Docker runtime's sweep and by the dependency-layer builds.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import Final

__all__ = ["LABEL_OWNER", "LABEL_TEST_SESSION", "TEST_SESSION_ENV", "owner_alive", "owner_label", "session_labels"]

LABEL_OWNER: Final[str] = "mobilebench.owner"

#: label naming the test session (of this project's own test suite) that built an image or made a volume
LABEL_TEST_SESSION: Final[str] = "mobilebench.test_session"
#: set by the test suite's session (tests/docker_cleanup.py) to its own id; unset in a user's runs
TEST_SESSION_ENV: Final[str] = "MOBILEBENCH_TEST_SESSION"


def session_labels() -> dict[str, str]:
    """``{LABEL_TEST_SESSION: $MOBILEBENCH_TEST_SESSION or ""}`` for every image the harness builds.

    Always set, empty outside a test session: an image built FROM one a test session made inherits its
    labels, and the empty value overrides the inherited id, so the session's cleanup (which removes exactly
    the images whose label equals its id) never takes a user's image built meanwhile.
    """
    return {LABEL_TEST_SESSION: os.environ.get(TEST_SESSION_ENV, "")}


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
