"""The emulator fixture against a stand-in ``emulator`` executable (``tests/adbsim/fake_emulator.py``) and the
real adb server: exact command lines, boot wait, teardown through ``adb emu kill``, and a device the harness did
not start left running. Also the pool's lease and lock behaviour without a device."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from adbsim import AdbServer, SimDevice, adb_available

from pytest_mobilebench.devices.android import DeviceError
from pytest_mobilebench.devices.emulator import emulator_command, parse_avd_spec
from pytest_mobilebench.devices.pool import DevicePool, parse_serials
from pytest_mobilebench.suites.device_repair.fixtures import (
    adb_server_address,
    make_pool,
)

TESTS = Path(__file__).resolve().parent
PORT_BASE = 5580  # inside the range (5554-5585) the adb server scans for emulators


def test_avd_spec_serials_and_server_address() -> None:
    assert parse_avd_spec("Pixel_30x2,Tab") == ["Pixel_30", "Pixel_30", "Tab"]
    with pytest.raises(ValueError, match="NAME or NAMExN"):
        parse_avd_spec("bad name")
    assert emulator_command("emulator", "Pixel_30", 5554) == [
        "emulator",
        "-avd",
        "Pixel_30",
        "-no-window",
        "-no-snapshot",
        "-no-boot-anim",
        "-port",
        "5554",
    ]
    assert parse_serials(" a, b,,a ") == ["a", "b"]
    assert adb_server_address("tcp:10.0.0.2:5038") == ("10.0.0.2", 5038)
    assert adb_server_address("tcp:5039") == ("127.0.0.1", 5039)
    with pytest.raises(ValueError):
        adb_server_address("nowhere")


def test_lease_is_exclusive_and_times_out(tmp_path: Path) -> None:
    marks: list[str] = []

    class Dev:
        def __init__(self, serial: str) -> None:
            self.serial = serial

        def mark(self, message: str) -> None:
            marks.append(f"{self.serial} {message}")

    pool = DevicePool(["s1"], Dev, tmp_path / "locks")  # type: ignore[arg-type]
    other = DevicePool(["s1"], Dev, tmp_path / "locks")  # type: ignore[arg-type]  # another worker, same lock dir
    with pool.repository("a/b", timeout_s=1), pool.lease("item-1", timeout_s=1) as dev:
        assert dev.serial == "s1"
        with pytest.raises(DeviceError, match="no free device") as err, other.lease("item-2", timeout_s=0.3):
            pass
        assert err.value.kind == "lease_timeout"
        with pytest.raises(DeviceError, match="repository lock"), other.repository("a/b", timeout_s=0.3):
            pass
        with other.repository("c/d", timeout_s=0.3):  # another repository is free
            pass
    with other.lease("item-2", timeout_s=1):
        pass
    assert marks == ["s1 lease-begin item-1", "s1 lease-end item-1", "s1 lease-begin item-2", "s1 lease-end item-2"]
    with pytest.raises(ValueError, match="empty device pool"):
        DevicePool([], Dev, tmp_path)  # type: ignore[arg-type]


@pytest.fixture
def stand_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    binary = tmp_path / "emulator"
    binary.write_text(f'#!/bin/sh\nexec {sys.executable} -m adbsim.fake_emulator "$@"\n', encoding="utf-8")
    binary.chmod(binary.stat().st_mode | stat.S_IXUSR)
    log = tmp_path / "emulator-calls.jsonl"
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")]))
    monkeypatch.setenv("MB_FAKE_EMULATOR_LOG", str(log))
    monkeypatch.setenv("MB_FAKE_EMULATOR_BOOT_S", "1.5")
    return {"binary": str(binary), "log": log}


def events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.skipif(not adb_available(), reason="needs Debian's adb and a JDK (javac)")
@pytest.mark.e2e
def test_emulators_start_boot_and_stop_and_given_devices_stay(stand_in: dict[str, Any], tmp_path: Path) -> None:
    adb = AdbServer()
    given = SimDevice(tmp_path / "given")
    try:
        adb.connect(given)
        options = {
            "mb_devices": given.serial,
            "mb_avd": "Pixel_30",
            "mb_emulator": stand_in["binary"],
            "mb_emulator_port_base": PORT_BASE,
            "mb_adb_server": f"127.0.0.1:{adb.port}",
            "mb_device_lock_dir": str(tmp_path / "locks"),
            "mb_boot_timeout": 60,
        }
        pool, emulators = make_pool(options, log_dir=tmp_path / "emu-logs")
        assert pool is not None and emulators is not None
        serial = f"emulator-{PORT_BASE}"
        assert pool.serials == [given.serial, serial] and pool.started == {serial}
        assert events(stand_in["log"])[0]["argv"] == emulator_command("x", "Pixel_30", PORT_BASE)[1:]
        # booted: the boot wait saw the properties flip after the stand-in's boot delay
        device = pool._connect(serial)
        assert device.getprop("sys.boot_completed") == "1"
        process = emulators.running[0].process
        emulators.stop()
        assert process.poll() is not None
        assert {"console": "kill"} in events(stand_in["log"])  # stopped through `adb emu kill`
        assert given.serial in adb.adb("devices")  # the device the harness did not start is left alone
        assert pool._connect(given.serial).getprop("sys.boot_completed") == "1"
    finally:
        adb.close()
        given.close()


@pytest.mark.skipif(not adb_available(), reason="needs Debian's adb and a JDK (javac)")
def test_an_emulator_that_exits_is_named(
    stand_in: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MB_FAKE_EMULATOR_FAIL", "1")
    adb = AdbServer()
    try:
        with pytest.raises(DeviceError) as err:
            make_pool(
                {
                    "mb_avd": "Broken",
                    "mb_emulator": stand_in["binary"],
                    "mb_emulator_port_base": PORT_BASE + 2,
                    "mb_adb_server": f"127.0.0.1:{adb.port}",
                    "mb_boot_timeout": 30,
                },
                log_dir=tmp_path,
            )
        assert err.value.kind == "emulator_start_failed"
    finally:
        adb.close()
