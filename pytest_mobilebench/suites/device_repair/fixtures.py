"""The device pool as a pytest fixture (registered by the plugin; a conftest.py may override it by name).

``mb_device_pool`` (session scope, one per xdist worker) is a
:class:`~pytest_mobilebench.devices.pool.DevicePool` over the serials of ``--mb-devices`` (or
``MOBILEBENCH_DEVICES``) plus the emulators started from ``--mb-avd NAME[xN]``, on the adb server of
``--mb-adb-server`` (default: ``ADB_SERVER_SOCKET``, else ``127.0.0.1:5037``). It is None when neither
option names a device (every item then reports the infrastructure kind ``no_device``). Emulators are
started per worker on distinct ports (``--mb-emulator-port-base`` + 2 x N x worker index) and stopped
at session end; serials given with ``--mb-devices`` are never shut down.

The harness never starts an adb server: adbutils' own client runs ``adb start-server`` on the DEFAULT port
when the configured one does not answer, so :func:`server_client` connects without that fallback, and a
configured server that does not answer ``host:version`` at session start gives an
:class:`UnreachablePool`, whose every lease is the infrastructure kind ``adb_unreachable`` naming
``host:port`` (no emulator is started then either).
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from pytest_mobilebench.devices.android import AndroidDevice, DeviceError
from pytest_mobilebench.devices.emulator import EmulatorSet, parse_avd_spec
from pytest_mobilebench.devices.pool import DevicePool, parse_serials

__all__ = ["UnreachablePool", "adb_server_address", "default_lock_dir", "make_pool", "mb_device_pool", "server_client"]


def adb_server_address(value: str | None) -> tuple[str, int]:
    """``"host:port"``, ``"tcp:host:port"`` or ``"tcp:port"`` (the ``ADB_SERVER_SOCKET`` forms) -> ``(host, port)``.

    Raises:
        ValueError: not one of those forms.
    """
    text = (value or os.environ.get("ADB_SERVER_SOCKET") or "127.0.0.1:5037").strip()
    text = text.removeprefix("tcp:")
    host, _, port = text.rpartition(":")
    if not port.isdigit():
        raise ValueError(f"adb server address {value!r}: expected HOST:PORT, tcp:HOST:PORT or tcp:PORT")
    return host or "127.0.0.1", int(port)


def default_lock_dir() -> Path:
    """Where device and repository locks live when ``--mb-device-lock-dir`` is not given (shared by workers)."""
    return Path(tempfile.gettempdir()) / "mobilebench-device-locks"


@functools.cache
def _client_class() -> type:
    """``adbutils.AdbClient`` whose connections never fall back to ``adb start-server`` (built on first use:
    adbutils is the optional ``devices`` extra)."""
    import adbutils

    class Connection(adbutils.AdbConnection):
        def _safe_connect(self) -> Any:  # adbutils: on failure, `adb start-server` on the default port, then retry
            return self._create_socket()

    class Client(adbutils.AdbClient):
        def make_connection(self, timeout: float | None = None) -> Any:
            conn = Connection(self.host, self.port)
            if timeout:
                conn.conn.settimeout(timeout)
            return conn

    return Client


def server_client(host: str, port: int) -> Any:
    """An ``adbutils.AdbClient`` on ``host:port`` that never starts a server (a dead server is
    ``adbutils.AdbConnectionError`` / ``AdbTimeout``, which the device adapter reports as ``adb_error``)."""
    return _client_class()(host=host, port=port)


def server_problem(client: Any, *, timeout_s: float = 5.0) -> str | None:
    """None when the client's server answers ``host:version`` within ``timeout_s``, else why not."""
    import adbutils

    try:
        with client.make_connection(timeout=timeout_s) as conn:
            conn.send_command("host:version")
            conn.check_okay()
            conn.read_string_block()
    except (adbutils.AdbError, adbutils.AdbTimeout, OSError) as exc:
        return str(exc) or type(exc).__name__
    return None


class UnreachablePool:
    """The pool when the configured adb server does not answer: every item's lease raises
    :class:`~pytest_mobilebench.devices.android.DeviceError` ``adb_unreachable`` naming the server."""

    def __init__(self, serials: list[str], address: str, problem: str) -> None:
        self.serials = serials
        self.started: frozenset[str] = frozenset()
        self.address = address
        self.problem = problem

    def _raise(self) -> NoReturn:
        raise DeviceError(
            "adb_unreachable",
            f"the adb server {self.address} does not answer ({self.problem}); "
            "none was started: start it (`adb -P PORT start-server`) or give --mb-adb-server",
        )

    @contextlib.contextmanager
    def repository(self, repo: str, *, timeout_s: float) -> Iterator[None]:
        self._raise()
        yield

    @contextlib.contextmanager
    def lease(self, owner: str, *, timeout_s: float, poll_s: float = 0.2) -> Iterator[AndroidDevice]:
        self._raise()
        yield


def _option(config: pytest.Config, dest: str, env: str | None = None) -> Any:
    value = config.getoption(dest, default=None)
    if value in (None, "") and env:
        value = os.environ.get(env) or None
    return value


def make_pool(
    options: dict[str, Any], *, worker_index: int = 0, log_dir: Path
) -> tuple[DevicePool | UnreachablePool | None, EmulatorSet | None]:
    """The pool (and the emulators started for it) from plain option values (see the module docstring).

    Raises:
        ValueError: a malformed ``--mb-devices`` / ``--mb-avd`` / ``--mb-adb-server``.
        pytest_mobilebench.devices.android.DeviceError: an emulator did not start or boot.
    """
    host, port = adb_server_address(options.get("mb_adb_server"))
    client = server_client(host, port)

    def connect(serial: str) -> AndroidDevice:
        return AndroidDevice(client, serial)

    serials = parse_serials(options.get("mb_devices"))
    if not serials and not options.get("mb_avd"):
        return None, None
    problem = server_problem(client)
    if problem is not None:
        return UnreachablePool(serials, f"{host}:{port}", problem), None
    emulators = None
    if options.get("mb_avd"):
        avds = parse_avd_spec(str(options["mb_avd"]))
        base = int(options.get("mb_emulator_port_base") or 5554) + 2 * len(avds) * worker_index
        emulators = EmulatorSet(
            avds,
            connect=connect,
            binary=str(options.get("mb_emulator") or "emulator"),
            port_base=base,
            log_dir=log_dir,
            adb_port=port,
            adb=lambda *args: subprocess.run(
                ["adb", "-H", host, "-P", str(port), *args], check=False, capture_output=True, timeout=60
            ),
        )
        serials += emulators.start(boot_timeout_s=float(options.get("mb_boot_timeout") or 600))
    if not serials:
        return None, emulators
    lock_dir = Path(options.get("mb_device_lock_dir") or default_lock_dir())
    started = [e.serial for e in emulators.running] if emulators else []
    return DevicePool(serials, connect, lock_dir, started=started), emulators


@pytest.fixture(scope="session")
def mb_device_pool(request: pytest.FixtureRequest) -> Iterator[DevicePool | UnreachablePool | None]:
    """The run's device pool (see the module docstring)."""
    config = request.config
    options = {
        "mb_devices": _option(config, "mb_devices", "MOBILEBENCH_DEVICES"),
        "mb_avd": _option(config, "mb_avd", "MOBILEBENCH_AVD"),
        "mb_adb_server": _option(config, "mb_adb_server", "MOBILEBENCH_ADB_SERVER"),
        "mb_emulator": _option(config, "mb_emulator", "MOBILEBENCH_EMULATOR"),
        "mb_emulator_port_base": _option(config, "mb_emulator_port_base"),
        "mb_device_lock_dir": _option(config, "mb_device_lock_dir"),
        "mb_boot_timeout": _option(config, "mb_boot_timeout"),
    }
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
    index = int(worker[2:]) if worker[2:].isdigit() else 0
    log_dir = Path(tempfile.gettempdir()) / f"mb-emulators-{os.getpid()}"  # created only when emulators start
    pool, emulators = make_pool(options, worker_index=index, log_dir=log_dir)
    try:
        yield pool
    finally:
        if emulators is not None:
            emulators.stop()
