"""Container removals handed to a background thread (issue 23, item 3).

A finished candidate's container costs its removal (0.1-0.15 s of the daemon's time: a SIGKILL of what
runs in it, then the removal of its writable layer). The evaluation does not wait for it: once the
candidate's evidence is written and its verdict judged, nothing reads the container again, and
:meth:`~pytest_mobilebench.runtime.docker_workspace.DockerWorkspace.close_later` hands the removal to this
module's single worker thread, which removes containers one at a time while the next candidate starts.

The removal is the one ``close`` makes (``remove(force=True, v=True)``: a kill, never a graceful stop);
the workspace is closed at once (nothing runs or reads in it again). :func:`drain` waits until every
handed-over removal has ended; the session's end (the ``mb_docker_client`` fixture, before its client
closes), :meth:`~pytest_mobilebench.runtime.docker.DockerRuntime.cleanup` and the interpreter's exit
(``atexit``, also after Ctrl-C) call it, so a run never ends with one of its containers still there. A
process killed outright leaves them to its reaper (:mod:`~pytest_mobilebench.runtime.reaper`), as before.
"""

from __future__ import annotations

import atexit
import collections
import contextlib
import threading
import time
from collections.abc import Callable
from typing import Final, final

__all__ = ["REMOVALS", "WAIT_S", "Removals", "drain", "remove_later"]

#: seconds a run's end (and the interpreter's exit) waits at most for the removals still pending; one
#: removal is bounded by the docker client's own timeout, a daemon that hangs leaves the rest to the reaper
WAIT_S: Final[float] = 120.0


@final
class Removals:
    """A queue of removals run in order by one daemon thread (started on the first, ended when idle).

    A removal is a callable that must not raise; one that does is ignored (the container is left to the
    run-end clean-up, the next run's sweep or the reaper, as a failed synchronous removal is).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._queue: collections.deque[Callable[[], None]] = collections.deque()
        self._running = 0  # removals taken off the queue and not finished yet
        self._worker: threading.Thread | None = None
        self._exit_hook = False

    @property
    def pending(self) -> int:
        """Removals handed over and not finished (queued or running)."""
        with self._cond:
            return len(self._queue) + self._running

    def defer(self, remove: Callable[[], None]) -> None:
        """Run ``remove`` in the background, after the removals handed over before it."""
        with self._cond:
            self._queue.append(remove)
            if not self._exit_hook:
                atexit.register(self.drain, WAIT_S)
                self._exit_hook = True
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._work, name="mb-container-removals", daemon=True)
                self._worker.start()

    def drain(self, timeout_s: float | None = None) -> bool:
        """Wait until every removal handed over has ended, at most ``timeout_s`` seconds (None: no limit).

        Returns:
            True when none is pending any more, False when the time ran out first.
        """
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        with self._cond:
            while self._queue or self._running:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                self._cond.wait(remaining)
        return True

    def _work(self) -> None:
        while True:
            with self._cond:
                if not self._queue:
                    self._worker = None
                    self._cond.notify_all()
                    return
                remove = self._queue.popleft()
                self._running += 1
            try:
                with contextlib.suppress(Exception):  # left to the clean-up, the sweep or the reaper
                    remove()
            finally:
                with self._cond:
                    self._running -= 1
                    self._cond.notify_all()


#: this process's removals (every runtime and client of the process share the one worker)
REMOVALS: Final[Removals] = Removals()


def remove_later(remove: Callable[[], None]) -> None:
    """Hand ``remove`` to this process's background removals (:data:`REMOVALS`)."""
    REMOVALS.defer(remove)


def drain(timeout_s: float | None = WAIT_S) -> bool:
    """Wait for this process's pending removals (:meth:`Removals.drain`), at most ``timeout_s`` seconds
    (default :data:`WAIT_S`; None: no limit); True when none is left."""
    return REMOVALS.drain(timeout_s)
