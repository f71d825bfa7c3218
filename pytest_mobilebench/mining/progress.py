"""The scan's progress line on the terminal: commits scanned of the history, candidates, rate.

On a terminal the line is rewritten in place (``\\r``) at most every :data:`Progress.every` seconds; to a
file or pipe a full line is written at most every :data:`Progress.every_pipe` seconds. The last call
(:meth:`Progress.done`) always writes the totals. Shape::

    mine: scanned 120/338 commits, 14 candidates, 9.8 commits/s
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TextIO, final

__all__ = ["Progress"]


@final
class Progress:
    """Throttled progress of a scan written to ``stream``; ``clock`` gives seconds (monotonic)."""

    every: float = 1.0
    every_pipe: float = 15.0

    def __init__(self, stream: TextIO, clock: Callable[[], float] | None = None) -> None:
        self.stream = stream
        self.clock = clock or time.monotonic
        self.started = self.clock()
        self.last = self.started
        self.tty = bool(getattr(stream, "isatty", lambda: False)())

    def _line(self, scanned: int, total: int | None, candidates: int) -> str:
        elapsed = max(self.clock() - self.started, 1e-9)
        of = f"/{total}" if total is not None else ""
        return f"mine: scanned {scanned}{of} commits, {candidates} candidates, {scanned / elapsed:.1f} commits/s"

    def update(self, scanned: int, total: int, candidates: int) -> None:
        """After each commit: write the line when the interval has passed."""
        now = self.clock()
        if now - self.last < (self.every if self.tty else self.every_pipe):
            return
        self.last = now
        line = self._line(scanned, total, candidates)
        self.stream.write(f"\r{line}" if self.tty else line + "\n")
        self.stream.flush()

    def done(self, scanned: int, candidates: int) -> None:
        """The totals, on a line of their own, with the elapsed seconds."""
        line = self._line(scanned, None, candidates) + f" ({self.clock() - self.started:.1f} s)"
        self.stream.write(("\r" if self.tty else "") + line + "\n")
        self.stream.flush()
