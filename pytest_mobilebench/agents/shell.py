"""The agent's one tool, a shell in its sandbox: the interface a runtime implements, and output bounding.

A :class:`Shell` runs one command line in the agent's sandbox (the instance's container, never the host) and
returns a :class:`ShellResult`. Output is bounded the way mini-SWE-agent bounds it: past ``limit`` characters the
head and the tail are kept (half each) and the middle is replaced by a note saying how many characters were
elided, so the model sees the start (the command's first errors) and the end (its exit summary). A shell reading
a stream feeds it to :class:`OutputBound`, which keeps only head and tail while counting, so a command printing
gigabytes never sits in the harness's memory.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol, runtime_checkable

__all__ = ["MIN_OUTPUT_CHARS", "OutputBound", "Shell", "ShellResult", "bound_output", "elision_note"]


@dataclasses.dataclass(frozen=True)
class ShellResult:
    """One command's result.

    Attributes:
        exit_code: the command's exit status, or None when it did not exit by itself (timed out, killed).
        output: stdout and stderr interleaved, decoded as UTF-8 (undecodable bytes replaced), already bounded.
        timed_out: True when the shell killed the command at its timeout.
        seconds: wall-clock seconds the command took.
    """

    exit_code: int | None
    output: str
    timed_out: bool
    seconds: float


@runtime_checkable
class Shell(Protocol):
    """Runs a command line (``bash -c``-style) in the agent's sandbox, its work tree as the working folder."""

    def run(self, command: str, timeout_s: float) -> ShellResult:
        """Run ``command``, killing it after ``timeout_s`` seconds (then ``timed_out`` and ``exit_code`` None)."""
        ...


#: the smallest output bound: room for the elision note and some text on each side
MIN_OUTPUT_CHARS = 400


def elision_note(elided: int, total: int, unit: str = "characters") -> str:
    """The line standing for the elided middle of an output of ``total`` ``unit``."""
    return (
        f"\n[... {elided} of {total} {unit} elided: the output was too long; "
        "narrow the command (head, tail, grep, sed -n) to see the middle ...]\n"
    )


def _check(limit: int) -> None:
    if limit < MIN_OUTPUT_CHARS:
        raise ValueError(f"output limit must be at least {MIN_OUTPUT_CHARS} characters, got {limit}")


def _keep(total: int, limit: int, unit: str) -> int:
    """Characters kept on each side: the longest note for ``total`` (both counts at most ``total``) fits."""
    return (limit - len(elision_note(total, total, unit))) // 2


def bound_output(text: str, limit: int) -> str:
    """``text`` when it has at most ``limit`` characters, else its head and tail (equal parts) with
    :func:`elision_note` between them, ``limit`` characters in all (so bounding twice changes nothing).

    Raises:
        ValueError: ``limit`` below :data:`MIN_OUTPUT_CHARS`.
    """
    _check(limit)
    if len(text) <= limit:
        return text
    keep = _keep(len(text), limit, "characters")
    return text[:keep] + elision_note(len(text) - 2 * keep, len(text)) + text[len(text) - keep :]


class OutputBound:
    """Keeps the head and the tail of a byte stream of unknown length (``limit`` bytes each), counting what it
    drops, so a command printing gigabytes never sits in memory; :meth:`text` gives at most ``limit``
    characters: the whole through :func:`bound_output` when nothing was dropped, else head, a note counting
    the elided bytes, and tail (a multi-byte character cut at a seam becomes a replacement character).

    Raises:
        ValueError: ``limit`` below :data:`MIN_OUTPUT_CHARS`.
    """

    def __init__(self, limit: int) -> None:
        _check(limit)
        self._limit = limit
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        """Add the next bytes of the stream."""
        self.total += len(chunk)
        room = self._limit - len(self._head)
        if room > 0:
            self._head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self._tail += chunk
            if len(self._tail) > 2 * self._limit:  # trim rarely: amortised O(1) per byte
                del self._tail[: len(self._tail) - self._limit]

    def text(self) -> str:
        """The bounded output, decoded."""
        kept = len(self._head) + len(self._tail)
        if kept == self.total:
            return bound_output((bytes(self._head) + bytes(self._tail)).decode("utf-8", "replace"), self._limit)
        keep = _keep(self.total, self._limit, "bytes")
        tail = bytes(self._tail[-keep:])
        head = bytes(self._head[:keep])
        note = elision_note(self.total - len(head) - len(tail), self.total, "bytes")
        return (head.decode("utf-8", "replace") + note + tail.decode("utf-8", "replace"))[: self._limit]
