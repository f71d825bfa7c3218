"""What a simulated device keeps between runs, as a real one does: shared storage, settings, app uids and processes.

* shared storage ``/sdcard/...`` is the folder ``<device>/sdcard`` (the instrumented JVM gets its path as the
  system property ``mb.sim.sdcard``, as an app gets ``Environment.getExternalStorageDirectory()``);
  ``Script.storage_quota`` bytes at most: above it ``pm install`` fails ``INSTALL_FAILED_INSUFFICIENT_STORAGE``;
* settings are ``<device>/settings/<namespace>`` (``key=value`` lines; the JVM gets the folder as
  ``mb.sim.settings``, as an app with the settings permission writes them); ``global
  verifier_verify_adb_installs=1`` makes ``pm install`` fail ``INSTALL_FAILED_VERIFICATION_FAILURE``;
* every installed package gets a uid (``10000 + n``); the instrumented JVM runs with ``MB_SIM_UID=u0_a<n>`` and
  ``MB_SIM_DEVICE=<this device>`` in its environment, which every process it starts inherits (the simulated uid):
  ``ps`` lists them by scanning ``/proc``; ``am force-stop`` kills only the JVM it started, so a process the app
  started outlives it, as a forked, detached process does on a device; ``kill -9 PID`` kills a listed one.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
from pathlib import Path

__all__ = ["DeviceState"]


class DeviceState:
    """Shared storage, settings, uids and the app processes of one simulated device."""

    def __init__(self, root: Path, device_id: str) -> None:
        self.sdcard = root / "sdcard"
        self.settings_dir = root / "settings"
        self.device_id = device_id
        self.uids: dict[str, int] = {}
        self.sdcard.mkdir(parents=True, exist_ok=True)
        self.settings_dir.mkdir(parents=True, exist_ok=True)

    # ------------------------------------------------------------------ settings

    def settings(self, ns: str) -> dict[str, str]:
        path = self.settings_dir / ns
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)

    def write_settings(self, ns: str, values: dict[str, str]) -> None:
        (self.settings_dir / ns).write_text("".join(f"{k}={v}\n" for k, v in sorted(values.items())), encoding="utf-8")

    # ------------------------------------------------------------------ storage

    def device_path(self, path: str) -> Path | None:
        """``/sdcard/x`` -> the host file (None outside shared storage)."""
        rel = path.removeprefix("/sdcard").lstrip("/")
        host = (self.sdcard / rel).resolve()
        return host if host == self.sdcard.resolve() or self.sdcard.resolve() in host.parents else None

    def md5_lines(self) -> str:
        return "".join(
            f"{hashlib.md5(p.read_bytes()).hexdigest()}  /sdcard/{p.relative_to(self.sdcard).as_posix()}\n"
            for p in sorted(self.sdcard.rglob("*"))
            if p.is_file()
        )

    def used(self) -> int:
        return sum(p.stat().st_size for p in self.sdcard.rglob("*") if p.is_file())

    # ------------------------------------------------------------------ uids and processes

    def uid(self, package: str) -> int:
        return self.uids.setdefault(package, 10000 + 100 + len(self.uids))

    def env(self, package: str) -> dict[str, str]:
        return {**os.environ, "MB_SIM_UID": f"u0_a{self.uid(package) - 10000}", "MB_SIM_DEVICE": self.device_id}

    def processes(self) -> list[tuple[str, int, str]]:
        """``[(user, pid, name)]`` of the live processes started under this device's simulated uids."""
        out = []
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            with contextlib.suppress(OSError):
                env = dict(e.split(b"=", 1) for e in (proc / "environ").read_bytes().split(b"\0") if b"=" in e)
                if env.get(b"MB_SIM_DEVICE", b"").decode() != self.device_id:
                    continue
                if (proc / "stat").read_text().split(") ", 1)[1][:1] == "Z":
                    continue
                name = (proc / "cmdline").read_bytes().split(b"\0")[0].decode(errors="replace").rsplit("/", 1)[-1]
                out.append((env[b"MB_SIM_UID"].decode(), int(proc.name), name))
        return out

    def kill(self, pid: int) -> bool:
        """``kill -9`` a process of this device's uids; False when it is none of them."""
        if pid not in {p for _, p, _ in self.processes()}:
            return False
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        return True

    def kill_all(self) -> None:
        """Kill every process of this device (the device is switched off)."""
        for _, pid, _ in self.processes():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
