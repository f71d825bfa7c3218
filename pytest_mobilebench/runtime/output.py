"""Bounded command output: a runaway printer cannot exhaust the harness's memory."""

from __future__ import annotations

import collections
from typing import Final

__all__ = ["HEAD_BYTES", "TAIL_BYTES", "BoundedOutput"]

#: output kept per command: the first and the last bytes (a runaway printer cannot exhaust memory)
HEAD_BYTES: Final[int] = 1 << 20
TAIL_BYTES: Final[int] = 15 << 20


class BoundedOutput:
    """Keeps the first :data:`HEAD_BYTES` and the last :data:`TAIL_BYTES` of a byte stream."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail: collections.deque[bytes] = collections.deque()
        self.tail_size = 0
        self.dropped = 0

    def add(self, chunk: bytes) -> None:
        room = HEAD_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail.append(chunk)
        self.tail_size += len(chunk)
        while self.tail_size - len(self.tail[0]) >= TAIL_BYTES:
            self.tail_size -= len(self.tail[0])
            self.dropped += len(self.tail.popleft())

    def text(self) -> str:
        middle = f"\n[... {self.dropped} bytes of output dropped ...]\n".encode() if self.dropped else b""
        return (bytes(self.head) + middle + b"".join(self.tail)).decode("utf-8", errors="replace")
