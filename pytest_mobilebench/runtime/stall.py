"""Did the Docker daemon answer while a command ran? A health probe on a connection of its own (issue 24).

A test command's output and exit status reach the harness through the daemon. A daemon that stops
answering (``SIGSTOP``, a swap storm, a hung storage driver) stops the output stream and the exec's end
with it, while the container's processes run on under their shim: measured on the harness's wall clock,
the candidate's command then "takes" the daemon's hang, and a 25 s test under a 45 s limit reads as the
candidate's ``timeout``. :class:`HealthProbe` pings the daemon every ``interval_s`` on its own pooled
connection (never the exec's stream) with an ``answer_s`` answer limit while the command runs; a
deadline that passes after the daemon left the probe unanswered is not the candidate's: the caller
raises :data:`~pytest_mobilebench.states.InfraKind.DAEMON_STALLED` (retried, never cached).

What the candidate cannot do from inside its container is make the harness's probe unanswered on
another connection for ``answer_s`` seconds without also starving the daemon for everyone; a run so
heavy is the machine's fault as far as this harness can tell, and is retried.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Final

__all__ = ["ANSWER_S", "INTERVAL_S", "HealthProbe"]

#: seconds between two pings of the probe
INTERVAL_S: Final[float] = 2.0
#: seconds a ping may take before the daemon counts as not answering
ANSWER_S: Final[float] = 5.0


class HealthProbe:
    """A thread pinging ``client``'s daemon while a command runs (a context manager).

    Attributes (read after the ``with`` block, or while it runs):
        stalled_s: the longest stretch, in seconds, during which the daemon answered no ping
            (0.0 when every ping was answered within ``answer_s``); an unanswered stretch still open
            when the probe stops counts up to that moment.
        pings: how many pings were answered.
    """

    def __init__(self, client: Any, *, interval_s: float = INTERVAL_S, answer_s: float = ANSWER_S) -> None:
        self._api = getattr(client, "api", client)
        self._interval = interval_s
        self._answer = answer_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="mb-daemon-probe", daemon=True)
        self._last_answer = time.monotonic()
        self.stalled_s = 0.0
        self.pings = 0

    def __enter__(self) -> HealthProbe:
        self._last_answer = time.monotonic()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._note_gap(time.monotonic())
        # a ping blocked in a stopped daemon ends within answer_s; never wait for it longer
        self._thread.join(self._answer + 1)

    @property
    def stalled(self) -> bool:
        """True when the daemon left the probe unanswered for at least ``answer_s`` seconds."""
        return self.stalled_s >= self._answer

    def _note_gap(self, now: float) -> None:
        gap = now - self._last_answer
        if gap > self._answer:
            self.stalled_s = max(self.stalled_s, gap)

    def _ping(self) -> bool:
        try:
            response = self._api.get(self._api._url("/_ping"), timeout=self._answer)
        except Exception:  # noqa: BLE001 - a refused, reset or timed-out ping: the daemon did not answer
            return False
        return response.status_code == 200

    def _loop(self) -> None:
        while not self._stop.is_set():
            answered = self._ping()
            now = time.monotonic()
            self._note_gap(now)
            if answered:
                self._last_answer = now
                self.pings += 1
            self._stop.wait(self._interval)
