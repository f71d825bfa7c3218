"""A reaper for one process's containers, as testcontainers' Ryuk does it (issue 25, item 3).

A run killed with ``SIGKILL`` (its whole process group) runs no cleanup: its instance container would run
on until the next run's sweep. :func:`ensure_reaper` starts, once per process and daemon, a small detached
host process (``python -m pytest_mobilebench.runtime.reaper URL OWNER``, its own session, so a signal to the
run's process group does not reach it) whose stdin is a pipe only this process holds open. When the
process ends, however it ends, the kernel closes the pipe; the reaper reads end-of-file and removes every
container labelled ``mobilebench.owner=OWNER`` (:func:`pytest_mobilebench.runtime.owners.owner_label`),
then exits. After a normal end the harness has removed them already and the reaper finds nothing.

Nothing of the candidate's runs in the reaper: it only lists and removes containers through the daemon's
API. A ``tcp://`` host with TLS is reached with the environment's ``DOCKER_CERT_PATH`` settings.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from typing import Final

from pytest_mobilebench.runtime.owners import LABEL_OWNER

__all__ = ["ensure_reaper", "reap"]

#: (pid, daemon URL) -> the write end of the reaper's pipe, held open for the life of this process
_PIPES: dict[tuple[int, str], int] = {}
_LOCK: Final = threading.Lock()


def ensure_reaper(url: str, owner: str) -> None:
    """Start this process's reaper for ``url`` unless it runs already (cheap to call before every
    container start). A reaper that cannot be started is not an error: the next run's sweep remains."""
    key = (os.getpid(), url)
    with _LOCK:
        if key in _PIPES:
            return
        read_end, write_end = os.pipe()  # not inheritable: no other child of this process holds it
        try:
            subprocess.Popen(
                [sys.executable, "-m", "pytest_mobilebench.runtime.reaper", url, owner],
                stdin=read_end,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        except OSError:
            os.close(write_end)
            return
        finally:
            os.close(read_end)
        _PIPES[key] = write_end


def reap(url: str, owner: str) -> list[str]:
    """Remove every container of ``url`` labelled ``mobilebench.owner=owner``; the removed ids."""
    import docker

    client = docker.DockerClient(base_url=url, timeout=60)
    removed = []
    try:
        for entry in client.api.containers(all=True, filters={"label": f"{LABEL_OWNER}={owner}"}):
            try:
                client.api.remove_container(entry["Id"], force=True, v=True)
                removed.append(str(entry["Id"]))
            except Exception:  # noqa: BLE001 - gone already; the others are still removed
                continue
    finally:
        client.close()
    return removed


def main(argv: list[str]) -> int:
    """``URL OWNER``: wait for end-of-file on stdin, then :func:`reap`."""
    url, owner = argv
    while os.read(0, 4096):
        pass
    try:
        reap(url, owner)
    except Exception:  # noqa: BLE001 - a daemon gone too: the next run's sweep remains
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
