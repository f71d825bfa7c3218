"""Emulators the harness starts itself (``--mb-avd NAME[xN]``) and stops at session end.

Each instance runs ``emulator -avd NAME -no-window -no-snapshot -no-boot-anim -port P`` (P even, from
``port_base``; the adb server finds it as ``emulator-P`` on port P+1). Boot is waited for through
:meth:`~pytest_mobilebench.devices.android.AndroidDevice.wait_boot`. Teardown sends ``adb -s
emulator-P emu kill``, waits, then terminates and finally kills the process the harness started. Only
processes started here are ever stopped: a device the harness did not start is never shut down.
"""

from __future__ import annotations

import dataclasses
import os
import re
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Final

from pytest_mobilebench.devices.android import AndroidDevice, DeviceError

__all__ = ["Emulator", "EmulatorSet", "emulator_command", "parse_avd_spec"]

_AVD_RE: Final = re.compile(r"^([A-Za-z0-9._-]+?)(?:x([1-9][0-9]*))?$")


def parse_avd_spec(text: str) -> list[str]:
    """``"Pixel_API_30x2"`` -> ``["Pixel_API_30", "Pixel_API_30"]``; comma-separated specs are joined. A
    trailing ``x<digits>`` is always read as the count (an AVD whose name ends so must be given as ``NAMEx1``).

    Raises:
        ValueError: a spec is not ``NAME`` or ``NAMExN`` (N >= 1).
    """
    names: list[str] = []
    for part in text.split(","):
        part = part.strip()
        match = _AVD_RE.match(part)
        if not match:
            raise ValueError(f"--mb-avd: {part!r} is not NAME or NAMExN")
        names += [match.group(1)] * int(match.group(2) or 1)
    return names


def emulator_command(binary: str, avd: str, port: int) -> list[str]:
    """The exact emulator command line for one instance."""
    return [binary, "-avd", avd, "-no-window", "-no-snapshot", "-no-boot-anim", "-port", str(port)]


@dataclasses.dataclass
class Emulator:
    """One started emulator: its process, console port and serial."""

    avd: str
    port: int
    process: subprocess.Popen[bytes]

    @property
    def serial(self) -> str:
        return f"emulator-{self.port}"


class EmulatorSet:
    """Start, boot-wait and stop the emulators of one session.

    Args:
        avds: one AVD name per instance.
        connect: ``serial -> AndroidDevice``.
        adb: runs the adb client with the given arguments (``emu kill``) against the session's server.
        adb_port: the session's adb server port, given to each emulator as ``ANDROID_ADB_SERVER_PORT`` so it
            registers with that server (``host:emulator:<port>``).
        binary: the ``emulator`` executable.
        port_base: first console port (even); instance i gets ``port_base + 2 i``.
        log_dir: each emulator's output goes to ``emulator-P.log`` there.
    """

    def __init__(
        self,
        avds: Sequence[str],
        *,
        connect: Callable[[str], AndroidDevice],
        adb: Callable[..., object],
        binary: str = "emulator",
        port_base: int = 5554,
        log_dir: Path,
        adb_port: int = 5037,
    ) -> None:
        if port_base % 2:
            raise ValueError(f"emulator port base must be even, got {port_base}")
        self.avds = list(avds)
        self.connect = connect
        self.adb = adb
        self.binary = binary
        self.port_base = port_base
        self.log_dir = log_dir
        self.adb_port = adb_port
        self.running: list[Emulator] = []

    def start(self, *, boot_timeout_s: float, settle_s: float = 2.0) -> list[str]:
        """Start every instance and wait until each has booted. Returns the serials.

        Raises:
            DeviceError: ``emulator_start_failed`` (the process exited) or ``boot_timeout``; the
                instances already started are stopped first.
        """
        self.log_dir.mkdir(parents=True, exist_ok=True)
        try:
            for i, avd in enumerate(self.avds):
                port = self.port_base + 2 * i
                with (self.log_dir / f"emulator-{port}.log").open("ab") as log:
                    proc = subprocess.Popen(
                        emulator_command(self.binary, avd, port),
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                        start_new_session=True,
                        env={**os.environ, "ANDROID_ADB_SERVER_PORT": str(self.adb_port)},
                    )
                self.running.append(Emulator(avd, port, proc))
            for emu in self.running:
                self._wait(emu, boot_timeout_s, settle_s)
        except BaseException:
            self.stop()
            raise
        return [e.serial for e in self.running]

    def _wait(self, emu: Emulator, timeout_s: float, settle_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        device = self.connect(emu.serial)
        while device.state() != "device":
            if emu.process.poll() is not None:
                raise DeviceError("emulator_start_failed", f"{emu.serial} exited with {emu.process.returncode}")
            if time.monotonic() > deadline:
                raise DeviceError("boot_timeout", f"{emu.serial} never came online in {timeout_s:.0f}s")
            time.sleep(0.5)
        device.wait_boot(timeout_s=max(1.0, deadline - time.monotonic()), settle_s=settle_s)

    def stop(self, *, grace_s: float = 20.0) -> None:
        """Stop every emulator started here: ``emu kill``, then SIGTERM, then SIGKILL."""
        for emu in self.running:
            if emu.process.poll() is None:
                try:
                    self.adb("-s", emu.serial, "emu", "kill")
                except (OSError, subprocess.SubprocessError):
                    pass
            for signal_step in (None, emu.process.terminate, emu.process.kill):
                if signal_step is not None and emu.process.poll() is None:
                    signal_step()
                try:
                    emu.process.wait(timeout=grace_s / 2 if signal_step is None else 5)
                    break
                except subprocess.TimeoutExpired:
                    continue
        self.running.clear()
