"""Deadlines of a build or install step whose output arrives as a stream (issue 13, item 5).

A step is killed when it runs longer than its deadline, or prints nothing for its no-output deadline;
either is ``InfraError("build_hung")``, an infrastructure outcome (never the model's failure), and the
caller attaches the log written so far.
"""

from __future__ import annotations

import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind

__all__ = ["close_stream", "watch_output"]


def watch_output(
    chunks: Iterator[str], *, deadline_s: float, silence_s: float, on_expiry: Callable[[], object]
) -> Iterator[str]:
    """Yield ``chunks`` (read in a thread) until they end; enforce a total and a no-output deadline.

    On expiry ``on_expiry()`` is called (kill the step) and ``InfraError("build_hung")`` raised, naming
    which deadline passed.
    """
    pipe: queue.Queue[tuple[str, str | BaseException | None]] = queue.Queue()

    def pump() -> None:
        try:
            for chunk in chunks:
                pipe.put(("data", chunk))
            pipe.put(("end", None))
        except BaseException as exc:  # noqa: BLE001 - handed to the consumer
            pipe.put(("error", exc))

    threading.Thread(target=pump, daemon=True, name="mobilebench-watch").start()
    end = time.monotonic() + deadline_s
    while True:
        wait = min(silence_s, end - time.monotonic())
        try:
            kind, item = pipe.get(timeout=max(wait, 0))
        except queue.Empty:
            on_expiry()
            which = f"no output for {silence_s:g} s" if wait >= silence_s else f"over its {deadline_s:g} s deadline"
            raise InfraError(InfraKind.BUILD_HUNG, f"step killed: {which}") from None
        if kind == "end":
            return
        if kind == "error":
            raise item  # type: ignore[misc]
        yield str(item)


def close_stream(generator: object, depth: int = 6) -> bool:
    """Close the HTTP response a (nested) generator is reading, e.g. the docker SDK's build stream.

    The docker SDK gives no handle on the response of ``APIClient.build``; its generators hold it in a
    local variable, which is looked up through the generators' frames (``gi_frame.f_locals``, up to
    ``depth`` levels). Closing it closes the connection, and the daemon cancels a build whose client
    left. Returns whether a response was found.
    """
    import requests

    frame = getattr(generator, "gi_frame", None)
    if frame is None or depth <= 0:
        return False
    for value in list(frame.f_locals.values()):
        if isinstance(value, requests.Response):
            # shut the socket down: Response.close() would first drain the stream, i.e. wait for the step
            conn = getattr(value.raw, "_connection", None) or getattr(value.raw, "connection", None)
            sock = getattr(conn, "sock", None)
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
            else:
                value.close()
            return True
        if hasattr(value, "gi_frame") and close_stream(value, depth - 1):
            return True
    return False
