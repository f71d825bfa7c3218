"""A pool of devices leased exclusively across processes (xdist workers) with file locks.

Lock order (SPEC section 2 "Verifier discipline"): the REPOSITORY lock first, then one DEVICE lock;
both are files under ``lock_dir`` (``repo-<sha1>.lock``, ``device-<sha1 of serial>.lock``), so two
workers never hold the same device, and one repository's records run one at a time while different
repositories run concurrently on separately locked devices. Locks are ``filelock.FileLock`` (fcntl):
a crashed worker's locks are released by the kernel.

Every lease writes ``lease-begin <owner>`` / ``lease-end <owner>`` to the device log (``log -t
mobilebench``), so what ran on a device can be checked from the device side.

A device a candidate left damaged beyond restore (:mod:`.baseline`) is quarantined for the run
(:meth:`DevicePool.quarantine`): no later lease of that run gets it; when every device is quarantined a lease
fails at once (``device_quarantined``) instead of waiting.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import filelock

from pytest_mobilebench.devices.android import AndroidDevice, DeviceError
from pytest_mobilebench.files import atomic_write_json

__all__ = ["DevicePool", "parse_serials"]


def parse_serials(text: str | None) -> list[str]:
    """``"a, b,,c"`` -> ``["a", "b", "c"]`` (order kept, duplicates dropped).

    Raises:
        ValueError: a serial contains whitespace inside it.
    """
    serials: list[str] = []
    for part in (text or "").split(","):
        serial = part.strip()
        if not serial:
            continue
        if any(ch.isspace() for ch in serial):
            raise ValueError(f"device serial {serial!r} contains whitespace")
        if serial not in serials:
            serials.append(serial)
    return serials


def _lock_name(prefix: str, key: str) -> str:
    return f"{prefix}-{hashlib.sha1(key.encode()).hexdigest()[:16]}.lock"


class DevicePool:
    """Devices by serial on one adb server, leased with file locks.

    Args:
        serials: the pool's device serials.
        connect: ``serial -> AndroidDevice`` (binds the serial to the adb server's client).
        lock_dir: folder shared by every process of the run (created if missing).
        started: serials the harness started itself (emulators); only those may ever be shut down.
    """

    def __init__(
        self,
        serials: Sequence[str],
        connect: Callable[[str], AndroidDevice],
        lock_dir: Path,
        *,
        started: Sequence[str] = (),
    ) -> None:
        if not serials:
            raise ValueError("an empty device pool: give --mb-devices SERIAL,... or --mb-avd NAME")
        self.serials = list(serials)
        self.started = frozenset(started)
        self._connect = connect
        self.lock_dir = lock_dir
        lock_dir.mkdir(parents=True, exist_ok=True)

    @contextlib.contextmanager
    def repository(self, repo: str, *, timeout_s: float) -> Iterator[None]:
        """Hold the repository lock of ``repo``.

        Raises:
            DeviceError: ``lease_timeout`` when it is not free within ``timeout_s``.
        """
        lock = filelock.FileLock(str(self.lock_dir / _lock_name("repo", repo)))
        try:
            lock.acquire(timeout=timeout_s)
        except filelock.Timeout as exc:
            raise DeviceError("lease_timeout", f"repository lock of {repo} busy for {timeout_s:.0f}s") from exc
        try:
            yield
        finally:
            lock.release()

    @contextlib.contextmanager
    def lease(self, owner: str, *, timeout_s: float, poll_s: float = 0.2) -> Iterator[AndroidDevice]:
        """Lease one free device exclusively (call inside :meth:`repository`).

        Args:
            owner: written to the device log with the lease marks (``<run>/<instance>``).
            timeout_s: how long to wait for a free device.

        Raises:
            DeviceError: ``lease_timeout`` when no device frees up in time.
        """
        deadline = time.monotonic() + timeout_s
        offset = os.getpid() % len(self.serials)  # workers start on different devices
        order = self.serials[offset:] + self.serials[:offset]
        run = owner.split("/", 1)[0]
        while True:
            out = self.quarantined(run)
            if len(out) == len(self.serials):
                raise DeviceError(
                    "device_quarantined",
                    "every device of the pool is quarantined for this run: "
                    + "; ".join(f"{s} (left by {i.get('owner')})" for s, i in out.items()),
                )
            for serial in order:
                if serial in out:
                    continue
                lock = filelock.FileLock(str(self.lock_dir / _lock_name("device", serial)))
                try:
                    lock.acquire(timeout=0)
                except filelock.Timeout:
                    continue
                try:
                    yield from self._hold(serial, owner)
                finally:
                    lock.release()
                return
            if time.monotonic() > deadline:
                raise DeviceError("lease_timeout", f"no free device among {self.serials} for {timeout_s:.0f}s")
            time.sleep(poll_s)

    def quarantine(self, serial: str, info: Mapping[str, Any]) -> None:
        """Take ``serial`` out of the pool for the rest of the run: ``quarantine-<sha1>.json`` under ``lock_dir``
        (every worker reads it), ``info`` with its ``owner`` (``<run>/<instance>/<model>``) and what is wrong."""
        atomic_write_json(
            self.lock_dir / _lock_name("quarantine", serial).replace(".lock", ".json"),
            {**info, "serial": serial, "run": str(info.get("owner", "")).split("/", 1)[0]},
        )

    def quarantined(self, run: str) -> dict[str, dict[str, Any]]:
        """``{serial: info}`` of the devices quarantined by run ``run``."""
        out = {}
        for serial in self.serials:
            path = self.lock_dir / _lock_name("quarantine", serial).replace(".lock", ".json")
            with contextlib.suppress(OSError, ValueError):
                info = json.loads(path.read_text(encoding="utf-8"))
                if info.get("run") == run:
                    out[serial] = info
        return out

    def _hold(self, serial: str, owner: str) -> Iterator[AndroidDevice]:
        device = self._connect(serial)
        with contextlib.suppress(DeviceError):
            device.mark(f"lease-begin {owner}")
        try:
            yield device
        finally:
            with contextlib.suppress(DeviceError):
                device.mark(f"lease-end {owner}")
