"""Simulated Android devices for the device-repair tests, reached through Debian's real adb server.

:class:`AdbServer` starts ``adb -P PORT start-server`` on a free port (never the default 5037) and kills
it on :meth:`AdbServer.close`; :meth:`AdbServer.connect` runs ``adb -P PORT connect 127.0.0.1:N`` for a
:class:`~.device.SimDevice`. The harness under test then talks to the devices only through adbutils
and that server.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from pathlib import Path

from .device import Script, SimDevice

__all__ = ["AdbServer", "Script", "SimDevice", "adb_available"]


def adb_available() -> bool:
    """Whether the ``adb`` client is installed, and ``javac`` for the runner."""
    return shutil.which("adb") is not None and shutil.which("javac") is not None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class AdbServer:
    """A real adb server on a private port."""

    def __init__(self, log_dir: Path | None = None) -> None:
        """``log_dir``: where the server writes its ``adb.<uid>.log`` (adb uses ``TMPDIR``; default: the temp
        folder)."""
        self.port = _free_port()
        env = {**os.environ, "TMPDIR": str(log_dir)} if log_dir is not None else None
        subprocess.run(
            ["adb", "-P", str(self.port), "start-server"], check=True, capture_output=True, timeout=60, env=env
        )

    def adb(self, *args: str, timeout: float = 30) -> str:
        """Run the adb client against this server; returns stdout + stderr."""
        done = subprocess.run(
            ["adb", "-P", str(self.port), *args], check=False, capture_output=True, text=True, timeout=timeout
        )
        return done.stdout + done.stderr

    def connect(self, device: SimDevice, *, wait_state: str | None = "device", timeout: float = 20) -> str:
        """``adb connect`` the device; wait until the server lists it in ``wait_state`` (None: no wait)."""
        out = self.adb("connect", device.serial)
        deadline = time.monotonic() + timeout
        while wait_state and time.monotonic() < deadline:
            if f"{device.serial}\t{wait_state}" in self.adb("devices"):
                return out
            time.sleep(0.1)
        if wait_state:
            raise TimeoutError(f"{device.serial} not {wait_state} after {timeout}s: {self.adb('devices')}")
        return out

    def close(self) -> None:
        """Kill the server."""
        subprocess.run(["adb", "-P", str(self.port), "kill-server"], check=False, capture_output=True, timeout=30)
