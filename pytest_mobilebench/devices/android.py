"""One Android device, every call bound to its serial, through adbutils and an adb server.

The verifier discipline of SPEC section 2 ("Verifier discipline"): check the device is online, its API
level and ABI against the execution plan, wait for boot completion (``sys.boot_completed``,
``dev.bootcomplete``, boot animation stopped) plus a settle interval, wake and unlock, uninstall stale
packages, ``pm install -r -t`` the fresh APKs (never launched), clear app and test data, run only
``am instrument -w -r -e class pkg.Class#method,... <runner>`` (the method and its canaries) under a wall-clock AND a
no-output deadline (both packages force-stopped on either), and dump logcat (main and crash buffers).

Every failure of the device or of adb raises :class:`DeviceError` with an infrastructure ``kind``
(``device_offline``, ``boot_timeout``, ``device_mismatch``, ``install_failed``, ``adb_error``); the
instrumentation outcome itself is returned, never judged here.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import time
from collections.abc import Callable, Sequence
from typing import Any, Final

import adbutils

__all__ = ["AndroidDevice", "DeviceError", "InstrumentRun", "Requirements", "install_failure_code"]


class DeviceError(RuntimeError):
    """An infrastructure failure of a device: ``kind`` names it, ``log`` keeps what the device said."""

    def __init__(self, kind: str, message: str, *, log: str = "") -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.message = message
        self.log = log


@dataclasses.dataclass(frozen=True)
class Requirements:
    """What the execution plan needs of a device: API level range and accepted ABIs (empty: any)."""

    min_api: int | None = None
    max_api: int | None = None
    abis: tuple[str, ...] = ()


@dataclasses.dataclass(frozen=True)
class InstrumentRun:
    """One ``am instrument`` invocation.

    Attributes:
        command: the exact shell command sent.
        output: everything it printed (stdout and stderr, in order).
        exit_code: the shell exit status (None when it was cut off).
        timed_out: None, ``"wall"`` (wall-clock limit), ``"no_output"`` (nothing printed for too long) or
            ``"output_limit"`` (more than :data:`MAX_OUTPUT_BYTES` printed: the harness stops reading).
        duration_s: seconds.
    """

    command: str
    output: str
    exit_code: int | None
    timed_out: str | None
    duration_s: float

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins (the output is stored in its own file)."""
        return {k: v for k, v in dataclasses.asdict(self).items() if k != "output"}


_INSTALL_FAILURE_RE: Final = re.compile(r"Failure \[([A-Z_]+)")
#: bytes of ``am instrument`` output kept at most (code under test could print without end)
MAX_OUTPUT_BYTES: Final = 64 << 20


def install_failure_code(output: str) -> str | None:
    """The ``INSTALL_FAILED_*`` / ``INSTALL_PARSE_FAILED_*`` code of a ``pm install`` output, or None."""
    match = _INSTALL_FAILURE_RE.search(output)
    return match.group(1) if match else None


class AndroidDevice:
    """One serial on one adb server.

    Args:
        client: the adb server's client (``adbutils.AdbClient(host, port)``).
        serial: the device serial; every call goes to it and only it.
        log: called with one line per command sent (for the evidence folder), or None.
    """

    def __init__(self, client: adbutils.AdbClient, serial: str, *, log: Callable[[str], None] | None = None) -> None:
        self.client = client
        self.serial = serial
        #: called with one line per command sent; the suite points it at the item's evidence
        self.log: Callable[[str], None] = log or (lambda line: None)
        self._dev = client.device(serial)

    # ------------------------------------------------------------------ plain calls

    def state(self) -> str:
        """The server's state for this serial: ``device``, ``offline``, ``unauthorized`` ... or ``absent``."""
        try:
            return str(self._dev.get_state())
        except (adbutils.AdbError, adbutils.AdbTimeout, OSError) as exc:
            return "offline" if "offline" in str(exc) else "absent"

    def shell(self, command: str, *, timeout_s: float = 60) -> tuple[int, str]:
        """Run one shell command (shell v2: exit status and output). Returns ``(exit status, output)``.

        Raises:
            DeviceError: ``adb_error`` when adb fails or times out.
        """
        self.log(f"$ adb -s {self.serial} shell {command}")
        try:
            result = self._dev.shell2(command, timeout=timeout_s, v2=True)
        except (adbutils.AdbError, adbutils.AdbTimeout, OSError) as exc:
            raise DeviceError("adb_error", f"`{command}` on {self.serial}: {exc}") from exc
        return int(result.returncode), str(result.output)

    def ensure_online(self) -> None:
        """Raises DeviceError ``device_offline`` unless the server lists the serial as ``device``."""
        state = self.state()
        if state != "device":
            raise DeviceError("device_offline", f"{self.serial} is {state}")

    def getprop(self, name: str) -> str:
        """One system property (empty when unset)."""
        return self.shell(f"getprop {shlex.quote(name)}")[1].strip()

    # ------------------------------------------------------------------ preparation

    def wait_boot(
        self,
        *,
        timeout_s: float,
        settle_s: float = 2.0,
        poll_s: float = 0.5,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ) -> float:
        """Wait for ``sys.boot_completed=1``, ``dev.bootcomplete=1`` and ``init.svc.bootanim=stopped``, then
        ``settle_s`` more. Returns the seconds waited.

        Raises:
            DeviceError: ``boot_timeout`` after ``timeout_s``; ``device_offline`` when the device is not online.
        """
        start = clock()
        self.ensure_online()
        while True:
            props = (
                self.getprop("sys.boot_completed"),
                self.getprop("dev.bootcomplete"),
                self.getprop("init.svc.bootanim"),
            )
            if props[0] == "1" and props[1] == "1" and props[2] in ("stopped", ""):
                break
            if clock() - start > timeout_s:
                raise DeviceError("boot_timeout", f"{self.serial} not booted after {timeout_s:.0f}s (props {props})")
            sleep(poll_s)
        sleep(settle_s)
        return clock() - start

    def check(self, req: Requirements) -> dict[str, Any]:
        """Check API level and ABI against ``req``. Returns ``{"api_level", "abi"}``.

        Raises:
            DeviceError: ``device_mismatch`` naming what differs.
        """
        api_text, abi = self.getprop("ro.build.version.sdk"), self.getprop("ro.product.cpu.abi")
        api = int(api_text) if api_text.isdigit() else -1
        problems = []
        if req.min_api is not None and api < req.min_api:
            problems.append(f"API level {api} < {req.min_api}")
        if req.max_api is not None and api > req.max_api:
            problems.append(f"API level {api} > {req.max_api}")
        if req.abis and abi not in req.abis:
            problems.append(f"ABI {abi!r} not in {list(req.abis)}")
        if problems:
            raise DeviceError("device_mismatch", f"{self.serial}: " + "; ".join(problems))
        return {"api_level": api, "abi": abi}

    def wake_and_unlock(self) -> None:
        """Wake the screen, dismiss the keyguard, press MENU (unlocks a swipe lock)."""
        self.shell("input keyevent KEYCODE_WAKEUP")
        self.shell("wm dismiss-keyguard")
        self.shell("input keyevent 82")

    def uninstall(self, packages: Sequence[str]) -> None:
        """Uninstall each package if present (stale installs of earlier runs)."""
        for package in packages:
            self.shell(f"pm uninstall {shlex.quote(package)}")

    def install(self, data: bytes, name: str, *, timeout_s: float = 300) -> str:
        """Push an APK to ``/data/local/tmp/<name>`` and ``pm install -r -t`` it (no launch). Returns the output.

        Raises:
            DeviceError: ``install_failed`` (the message carries the ``INSTALL_FAILED_*`` code).
        """
        remote = f"/data/local/tmp/{name}"
        self.log(f"$ adb -s {self.serial} push <{len(data)} bytes> {remote}")
        try:
            self._dev.sync.push(data, remote)
        except (adbutils.AdbError, adbutils.AdbTimeout, OSError) as exc:
            raise DeviceError("adb_error", f"push {name} to {self.serial}: {exc}") from exc
        code, out = self.shell(f"pm install -r -t {shlex.quote(remote)}", timeout_s=timeout_s)
        failure = install_failure_code(out)
        if code != 0 or failure or "Success" not in out:
            raise DeviceError("install_failed", f"{name}: {failure or 'exit ' + str(code)}", log=out)
        return out

    def clear(self, packages: Sequence[str]) -> None:
        """``pm clear`` each package (app and test data)."""
        for package in packages:
            self.shell(f"pm clear {shlex.quote(package)}")

    def force_stop(self, packages: Sequence[str]) -> None:
        """``am force-stop`` each package."""
        for package in packages:
            self.shell(f"am force-stop {shlex.quote(package)}")

    def mark(self, message: str) -> None:
        """Write ``message`` to the device log (``log -t mobilebench``), e.g. lease begin / end."""
        self.shell(f"log -t mobilebench {shlex.quote(message)}")

    def logcat(self) -> str:
        """The main and crash buffers (``logcat -d -b main -b crash``)."""
        return self.shell("logcat -d -b main -b crash", timeout_s=120)[1]

    def clear_logcat(self) -> None:
        """``logcat -c``."""
        self.shell("logcat -c")

    # ------------------------------------------------------------------ instrumentation

    def instrument(
        self,
        tests: str | Sequence[str],
        component: str,
        *,
        wall_s: float,
        no_output_s: float,
        stop_packages: Sequence[str],
    ) -> InstrumentRun:
        """Run the selected methods in ONE call: ``am instrument -w -r -e class <a>,<b>,... <component>``.

        Args:
            tests: ``pkg.Class#method``, or several (the target and its canaries), in one selection.
            component: ``test.package/runner.Class``.
            wall_s: wall-clock limit, seconds.
            no_output_s: limit on seconds without any output.
            stop_packages: force-stopped when a limit (or :data:`MAX_OUTPUT_BYTES`) is hit.

        Raises:
            DeviceError: ``adb_error`` when the stream cannot be opened.
        """
        selection = tests if isinstance(tests, str) else ",".join(tests)
        command = f"am instrument -w -r -e class {shlex.quote(selection)} {shlex.quote(component)}"
        self.log(f"$ adb -s {self.serial} shell {command}")
        start = time.monotonic()
        try:
            conn = self._dev.open_transport()
            conn.send_command(f"shell,v2:{command}")
            conn.check_okay()
        except (adbutils.AdbError, adbutils.AdbTimeout, OSError) as exc:
            raise DeviceError("adb_error", f"instrument on {self.serial}: {exc}") from exc
        output, code, timed_out = _read_shell_v2(conn, start=start, wall_s=wall_s, no_output_s=no_output_s)
        conn.close()
        if timed_out:
            self.force_stop(stop_packages)
        return InstrumentRun(command, output, code, timed_out, round(time.monotonic() - start, 3))


def _read_shell_v2(conn: Any, *, start: float, wall_s: float, no_output_s: float) -> tuple[str, int | None, str | None]:
    """Read shell v2 packets until the exit packet or a deadline. Returns ``(output, exit, timed_out)``."""
    chunks: list[bytes] = []
    buf = b""
    size = 0
    last = time.monotonic()
    while True:
        if size > MAX_OUTPUT_BYTES:
            return b"".join(chunks).decode("utf-8", "replace"), None, "output_limit"
        now = time.monotonic()
        if now - start > wall_s:
            return b"".join(chunks).decode("utf-8", "replace"), None, "wall"
        if now - last > no_output_s:
            return b"".join(chunks).decode("utf-8", "replace"), None, "no_output"
        conn.conn.settimeout(max(0.05, min(1.0, wall_s - (now - start), no_output_s - (now - last))))
        try:
            data = conn.conn.recv(65536)
        except TimeoutError:
            continue
        if not data:
            return b"".join(chunks).decode("utf-8", "replace"), None, None
        buf += data
        while len(buf) >= 5:
            kind, length = buf[0], int.from_bytes(buf[1:5], "little")
            if len(buf) < 5 + length:
                break
            payload, buf = buf[5 : 5 + length], buf[5 + length :]
            if kind == 3:
                return b"".join(chunks).decode("utf-8", "replace"), payload[0] if payload else None, None
            if payload:
                chunks.append(payload)
                size += len(payload)
                last = time.monotonic()
