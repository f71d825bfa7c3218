"""The simulated device's private instrumentation channel (the binder of a real device, for ``am instrument``).

:func:`run_instrumented` starts the JVM through ``MbBoot``: a loopback socket the device opened and a one-time
token reach the process on its stdin only (never a property, an env variable or a file), the runner connects
before any class under test loads, and only what arrives on that connection (after the token) is the status
stream; what the process prints goes to logcat (``I System.out: ...``), as on a device. Connections without the
token are closed. Returns whether the runner's final ``INSTRUMENTATION_CODE`` line arrived.
"""

from __future__ import annotations

import secrets
import socket
import subprocess
import threading
from collections.abc import Callable, Sequence

__all__ = ["run_instrumented"]


def _pump_stdout(proc: subprocess.Popen[bytes], logcat: list[str]) -> None:
    assert proc.stdout is not None
    for line in proc.stdout:
        logcat.append("I System.out: " + line.decode("utf-8", "replace").rstrip("\n"))


def _accept(server: socket.socket, token: bytes, proc: subprocess.Popen[bytes]) -> tuple[socket.socket, bytes] | None:
    """The first connection that starts with the token (and the bytes after it), or None when the process ended."""
    server.settimeout(0.2)
    while proc.poll() is None:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        conn.settimeout(10)
        head = b""
        try:
            while b"\n" not in head and len(head) < 256:
                chunk = conn.recv(256)
                if not chunk:
                    break
                head += chunk
        except OSError:
            pass
        first, _, rest = head.partition(b"\n")
        if first == token:
            conn.settimeout(None)
            return conn, rest
        conn.close()
    return None


def run_instrumented(
    argv: Sequence[str],
    env: dict[str, str],
    *,
    logcat: list[str],
    out: Callable[[bytes], None],
    started: Callable[[subprocess.Popen[bytes]], None],
) -> bool:
    """Run ``argv + [handshake on stdin]`` (``argv`` ends with MbBoot's arguments); forward the channel to ``out``."""
    token = secrets.token_hex(16).encode()
    with socket.create_server(("127.0.0.1", 0)) as server:
        proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env
        )
        started(proc)
        assert proc.stdin is not None
        proc.stdin.write(f"{server.getsockname()[1]} {token.decode()}\n".encode())
        proc.stdin.close()
        pump = threading.Thread(target=_pump_stdout, args=(proc, logcat), daemon=True)
        pump.start()
        accepted = _accept(server, token, proc)
    finished = False
    if accepted is not None:
        conn, rest = accepted
        with conn, conn.makefile("rb") as stream:
            lines = [rest] if rest else []
            pending = b""
            for line in [*lines, *stream]:
                line = pending + line
                if not line.endswith(b"\n"):
                    pending = line
                    continue
                pending = b""
                finished = finished or line.startswith(b"INSTRUMENTATION_CODE:")
                out(line)
    proc.wait()
    pump.join(timeout=5)
    return finished
