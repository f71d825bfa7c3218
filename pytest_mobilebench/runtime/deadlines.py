"""Deadlines of a build or install step whose output arrives as a stream (issue 13, item 5; issue 25).

A step is killed when it runs longer than its deadline, or prints nothing for its no-output deadline;
either is ``InfraError("build_hung")``, an infrastructure outcome (never the model's failure), and the
caller attaches the log written so far. The deadlines are options (:class:`Deadlines`, defaults below).

A shared step (a layer several instances need, built once under a file lock) that hangs fails every
instance waiting for its lock at once with the same reason (:func:`shared_step`), instead of each waiter
taking the lock in turn and hanging again for the full deadline.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Final, TypeVar

from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import InfraKind

__all__ = ["HUNG", "Deadlines", "close_stream", "shared_step", "watch_output", "within"]

T = TypeVar("T")

#: the kind of a step killed by its deadline
HUNG: Final[str] = "build_hung"


@dataclasses.dataclass(frozen=True)
class Deadlines:
    """Seconds a step may run (total) and stay silent (no output), per kind of step.

    Attributes:
        install_s, install_silence_s: the shared dependency install (``--mb-install-deadline``,
            ``--mb-install-silence``; 3,600 / 900).
        build_s, build_silence_s: an image build (``--mb-image-build-deadline``,
            ``--mb-image-build-silence``; 7,200 / 1,800).
        acquire_s, image_s, create_s, grade_s: the phases of an item as wholes (issue 35, item 1; :func:`within`):
            acquiring a Docker host (``--mb-acquire-deadline``, 300), making its image, pulled, shipped or built
            in layers (``--mb-image-deadline``, 14,400), creating and starting its container
            (``--mb-create-deadline``, 300) and reading the results back (``--mb-grade-deadline``, 1,800). The
            run phase is each command's own limit (a daemon that hangs meanwhile: ``daemon_stalled``).
    """

    install_s: float = 3600.0
    install_silence_s: float = 900.0
    build_s: float = 7200.0
    build_silence_s: float = 1800.0
    acquire_s: float = 300.0
    image_s: float = 14400.0
    create_s: float = 300.0
    grade_s: float = 1800.0

    @classmethod
    def from_options(cls, options: Mapping[str, Any]) -> Deadlines:
        """The deadlines named by the options (a missing or None option keeps the default).

        Raises:
            ValueError: a deadline that is not positive (names the option).
        """
        names = {
            "install_s": "mb_install_deadline",
            "install_silence_s": "mb_install_silence",
            "build_s": "mb_image_build_deadline",
            "build_silence_s": "mb_image_build_silence",
            "acquire_s": "mb_acquire_deadline",
            "image_s": "mb_image_deadline",
            "create_s": "mb_create_deadline",
            "grade_s": "mb_grade_deadline",
        }
        given = {field: float(options[dest]) for field, dest in names.items() if options.get(dest) is not None}
        for field, value in given.items():
            if value <= 0:
                raise ValueError(f"--{names[field].replace('_', '-')}: {value:g} is not a positive number of seconds")
        return cls(**given)


@contextlib.contextmanager
def shared_step(lock_path: Path) -> Iterator[None]:
    """Hold the file lock of a shared step; fail at once when the step hung while this caller waited.

    The holder whose step raises ``build_hung`` leaves ``<lock>.hung`` (kind, message, time); a waiter
    that started waiting before that time raises the same ``InfraError`` as soon as it gets the lock,
    without running the step again. A caller arriving later tries the step afresh.
    """
    from filelock import FileLock

    marker = Path(str(lock_path) + ".hung")
    waiting_since = time.time()
    with FileLock(str(lock_path)):
        failed = _read_marker(marker)
        if failed is not None and float(failed.get("at", 0)) >= waiting_since:
            raise InfraError(
                str(failed.get("kind") or HUNG),
                f"{failed.get('message')} (a shared step another instance was running; not run again)",
            )
        try:
            yield
        except InfraError as exc:
            if exc.kind == HUNG:
                tmp = marker.with_name(f"{marker.name}.{os.getpid()}.tmp")
                tmp.write_text(
                    json.dumps({"kind": exc.kind, "message": exc.message, "at": time.time()}), encoding="utf-8"
                )
                os.replace(tmp, marker)
            raise


def _read_marker(marker: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


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


def within(
    seconds: float, kind: InfraKind, what: str, step: Callable[[], T], *, late: Callable[[T], object] | None = None
) -> T:
    """``step()``'s value when it returns within ``seconds`` (a deadline on the whole operation, however its
    reads trickle), else ``InfraError(kind)`` naming ``what`` and the deadline. ``step`` runs in a thread of its
    own, left to finish in the background after the deadline (a call into a hung daemon cannot be taken back);
    when it finishes after all, ``late(value)`` undoes what it made (a container created late is removed).
    ``step``'s own exception is raised as it is.

    Raises:
        InfraError: ``kind`` after ``seconds``; whatever ``step`` raises.
    """
    done: queue.Queue[tuple[bool, Any]] = queue.Queue(maxsize=1)
    lock, abandoned = threading.Lock(), [False]

    def run() -> None:
        try:
            result: tuple[bool, Any] = (True, step())
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            result = (False, exc)
        with lock:
            if not abandoned[0]:
                done.put(result)
                return
        if result[0] and late is not None:  # the caller gave up on it: undo what it made
            with contextlib.suppress(Exception):
                late(result[1])

    threading.Thread(target=run, daemon=True, name="mobilebench-phase").start()
    try:
        ok, value = done.get(timeout=max(seconds, 0))
    except queue.Empty:
        with lock:
            abandoned[0] = done.empty()
        if abandoned[0]:
            raise InfraError(
                kind, f"{what}: not done within its {seconds:g} s deadline (the harness's side was late)"
            ) from None
        ok, value = done.get_nowait()
    if not ok:
        raise value
    return value


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
