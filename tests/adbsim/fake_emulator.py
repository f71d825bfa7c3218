"""A stand-in for the Android ``emulator`` executable, for the emulator fixture's tests.

Run as ``python -m adbsim.fake_emulator -avd NAME -no-window -no-snapshot -no-boot-anim -port P``: it appends
its argv to ``$MB_FAKE_EMULATOR_LOG`` (JSON lines), serves a simulated device on port P+1, registers it with the
adb server of ``$ANDROID_ADB_SERVER_PORT`` (``host:emulator:P+1``, so it shows as ``emulator-P``), boots after
``$MB_FAKE_EMULATOR_BOOT_S`` seconds, and a console on port P that understands ``kill`` (what ``adb emu kill`` sends).
SIGTERM also ends it. ``$MB_FAKE_EMULATOR_FAIL=1`` makes it exit at once with status 1 (an emulator that cannot start).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import tempfile
import threading
from pathlib import Path

from adbsim.device import Script, SimDevice


def _console(port: int, done: threading.Event, log: Path) -> None:
    server = socket.create_server(("127.0.0.1", port))
    while not done.is_set():
        conn, _ = server.accept()
        with conn:
            conn.sendall(b"Android Console: type 'help' for a list of commands\r\nOK\r\n")
            data = b""
            while b"\n" not in data:
                chunk = conn.recv(1024)
                if not chunk:
                    break
                data += chunk
            for line in data.decode(errors="replace").splitlines():
                with log.open("a") as fh:
                    fh.write(json.dumps({"console": line.strip()}) + "\n")
                if line.strip() == "kill":
                    conn.sendall(b"OK: killing emulator, bye bye\r\n")
                    done.set()
                else:
                    conn.sendall(b"OK\r\n")


def _register(adb_port: int) -> None:
    """Tell the adb server of ``$ANDROID_ADB_SERVER_PORT`` about this emulator, as the real one does."""
    server = int(os.environ.get("ANDROID_ADB_SERVER_PORT", "5037"))
    service = f"host:emulator:{adb_port}".encode()
    with socket.create_connection(("127.0.0.1", server), timeout=10) as conn:
        conn.sendall(b"%04x" % len(service) + service)


def main() -> int:
    log = Path(os.environ["MB_FAKE_EMULATOR_LOG"])
    with log.open("a") as fh:
        fh.write(json.dumps({"argv": sys.argv[1:]}) + "\n")
    if os.environ.get("MB_FAKE_EMULATOR_FAIL") == "1":
        return 1
    port = int(sys.argv[sys.argv.index("-port") + 1])
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    device = SimDevice(
        Path(tempfile.mkdtemp()) / "emu",
        Script(boot_delay_s=float(os.environ.get("MB_FAKE_EMULATOR_BOOT_S", "1"))),
        port=port + 1,
    )
    threading.Thread(target=_console, args=(port, done, log), daemon=True).start()
    _register(port + 1)
    done.wait()
    device.close()
    with log.open("a") as fh:
        fh.write(json.dumps({"exit": "console kill or SIGTERM"}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
