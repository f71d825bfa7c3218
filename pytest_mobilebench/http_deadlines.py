"""Deadlines on one endpoint attempt, each a bound on the whole operation rather than on one socket call.

A socket timeout restarts with every byte, so an endpoint that sends its headers and then one byte every 3 s never
times out under a per-read timeout. Here each socket operation of an attempt (connect, TLS handshake, write,
read) is given only the time left to the nearest deadline (:class:`AttemptClock`), through an httpcore network
backend wrapping the standard one (:class:`DeadlineBackend`): the attempt ends at its deadline whatever the peer
does. The deadlines (seconds, all from the attempt's start unless said):

- ``connect``: the TCP connection (and the TLS handshake) made;
- ``first_byte``: the first byte of the reply, counted from the first read (the request sent);
- ``reply``: the whole reply read, to its last byte;
- ``cap``: the caller's own limit, an absolute monotonic time (the agent's wall-time budget); a cut there is the
  caller's outcome, the three others are the endpoint's (infrastructure).

DNS resolution runs before the connect deadline applies (the standard library's resolver takes no timeout).
"""

from __future__ import annotations

import dataclasses
import enum
import math
import ssl
import time
from collections.abc import Callable, Iterable
from typing import Any

import httpcore

__all__ = ["AttemptClock", "Cut", "DeadlineBackend", "Deadlines"]


@enum.unique
class Cut(str, enum.Enum):
    """Which deadline ended an attempt."""

    CONNECT = "connect"
    FIRST_BYTE = "first_byte"
    REPLY = "reply"
    CAP = "cap"


@dataclasses.dataclass(frozen=True)
class Deadlines:
    """Seconds per attempt: ``connect_s`` (connection made), ``first_byte_s`` (None: only the reply deadline
    bounds the wait for the first byte), ``reply_s`` (the whole attempt, from its start to the reply's last byte).

    Raises:
        ValueError: a value that is not a positive finite number.
    """

    connect_s: float = 10.0
    first_byte_s: float | None = None
    reply_s: float = 120.0

    def __post_init__(self) -> None:
        for name in ("connect_s", "first_byte_s", "reply_s"):
            value = getattr(self, name)
            if value is not None and not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number of seconds, got {value!r}")

    def seconds(self, cut: Cut) -> float | None:
        """The configured seconds of ``cut`` (None for the caller's cap)."""
        return {Cut.CONNECT: self.connect_s, Cut.FIRST_BYTE: self.first_byte_s, Cut.REPLY: self.reply_s}.get(cut)


class AttemptClock:
    """The deadlines of one attempt: ``timeout(phase)`` gives a socket operation the seconds left to the nearest
    one and remembers which it is; ``cut`` names the deadline that ended the attempt (None while none did).

    Args:
        deadlines: the endpoint's deadlines.
        cap_at: the caller's absolute deadline (``clock()`` time) or None.
        clock: monotonic seconds.
    """

    def __init__(
        self, deadlines: Deadlines, cap_at: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.deadlines, self.cap_at, self.clock = deadlines, cap_at, clock
        self.start = clock()
        self.first_read_at: float | None = None
        self.first_byte = False
        self.bytes_read = 0
        self.cut: Cut | None = None
        self._binding: Cut | None = None

    def _bounds(self, phase: str) -> list[tuple[Cut, float]]:
        d = self.deadlines
        bounds = [(Cut.REPLY, self.start + d.reply_s)]
        if phase == "connect":
            bounds.insert(0, (Cut.CONNECT, self.start + d.connect_s))
        elif phase == "read" and not self.first_byte and d.first_byte_s is not None:
            if self.first_read_at is None:
                self.first_read_at = self.clock()
            bounds.insert(0, (Cut.FIRST_BYTE, self.first_read_at + d.first_byte_s))
        if self.cap_at is not None:
            bounds.append((Cut.CAP, self.cap_at))  # last: the endpoint's deadline wins a tie
        return bounds

    def timeout(self, phase: str) -> float:
        """Seconds the next ``phase`` operation (``connect``, ``write``, ``read``) may take.

        Raises:
            httpcore.TimeoutException: a deadline has already passed (``cut`` names it).
        """
        cut, at = min(self._bounds(phase), key=lambda bound: bound[1])
        left = at - self.clock()
        self._binding = cut
        if left <= 0:
            self.cut = cut
            raise {"connect": httpcore.ConnectTimeout, "write": httpcore.WriteTimeout}.get(phase, httpcore.ReadTimeout)(
                f"the {cut.value} deadline passed"
            )
        return left

    def timed_out(self) -> None:
        """The operation given the last timeout ran out of it: the deadline that bound it ended the attempt."""
        self.cut = self._binding

    def got(self, data: bytes) -> None:
        """``data`` was read (an empty read is the peer closing)."""
        if data:
            self.first_byte = True
            self.bytes_read += len(data)


def _bounded(clock: AttemptClock, phase: str, call: Callable[[float], Any]) -> Any:
    """``call(seconds left)``; a timeout it raises names the deadline that bound it in ``clock.cut``."""
    try:
        return call(clock.timeout(phase))
    except httpcore.TimeoutException:
        if clock.cut is None:
            clock.timed_out()
        raise


class _Stream(httpcore.NetworkStream):
    def __init__(self, inner: httpcore.NetworkStream, clock: AttemptClock) -> None:
        self._inner, self._clock = inner, clock

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data: bytes = _bounded(self._clock, "read", lambda left: self._inner.read(max_bytes, left))
        self._clock.got(data)
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        _bounded(self._clock, "write", lambda left: self._inner.write(buffer, left))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore.NetworkStream:
        inner = _bounded(self._clock, "connect", lambda left: self._inner.start_tls(ssl_context, server_hostname, left))
        return _Stream(inner, self._clock)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.NetworkBackend):
    """httpcore's standard synchronous backend with every operation under ``clock`` (set per attempt)."""

    def __init__(self) -> None:
        self._inner = httpcore.SyncBackend()
        self.clock: AttemptClock | None = None

    def _attempt(self) -> AttemptClock:
        if self.clock is None:
            raise RuntimeError("DeadlineBackend used outside an attempt")
        return self.clock

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore.NetworkStream:
        clock = self._attempt()
        inner = _bounded(
            clock,
            "connect",
            lambda left: self._inner.connect_tcp(
                host, port, left, local_address=local_address, socket_options=socket_options
            ),
        )
        return _Stream(inner, clock)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore.NetworkStream:
        clock = self._attempt()
        inner = _bounded(
            clock, "connect", lambda left: self._inner.connect_unix_socket(path, left, socket_options=socket_options)
        )
        return _Stream(inner, clock)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)
