"""The device baseline's pure parts, and the pool's quarantine (no device needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mobilebench.devices.android import DeviceError
from pytest_mobilebench.devices.baseline import (
    Baseline,
    diff,
    parse_md5,
    parse_packages,
    parse_ps,
    parse_settings,
    uids_of,
)
from pytest_mobilebench.devices.pool import DevicePool
from pytest_mobilebench.suites.device_repair.summary import quarantined_devices


def test_parsers_read_what_the_device_prints() -> None:
    assert parse_packages("package:a.b\npackage:c\n\n") == frozenset({"a.b", "c"})
    assert uids_of("package:a.b uid:10123\npackage:c uid:1000\n") == {"a.b": 10123, "c": 1000}
    assert parse_ps("USER PID NAME\nroot 1 init\nu0_a123 4242 java\n") == [
        ("root", 1, "init"),
        ("u0_a123", 4242, "java"),
    ]
    assert parse_settings("adb_enabled=1\nx=a=b\n") == {"adb_enabled": "1", "x": "a=b"}
    assert parse_md5(f"{'0' * 32}  /sdcard/a b.txt\nnoise\n") == {"/sdcard/a b.txt": "0" * 32}


def test_diff_names_every_kind_of_damage() -> None:
    base = Baseline(frozenset({"p"}), {"/sdcard/keep": "1" * 32, "/sdcard/gone": "2" * 32}, {"global": {"a": "1"}})
    now = Baseline(
        frozenset({"p", "evil"}), {"/sdcard/keep": "3" * 32, "/sdcard/new": "4" * 32}, {"global": {"a": "0", "b": "1"}}
    )
    assert diff(base, base) == []
    assert diff(base, now) == [
        "package evil installed",
        "shared storage: /sdcard/new added",
        "shared storage: /sdcard/gone deleted",
        "shared storage: /sdcard/keep changed",
        "setting global a changed to '0' (was '1')",
        "setting global b changed to '1' (was None)",
    ]


def test_a_quarantined_device_is_skipped_for_its_run_only(tmp_path: Path) -> None:
    connected: list[str] = []

    class Dev:
        def __init__(self, serial: str) -> None:
            self.serial = serial
            connected.append(serial)

        def mark(self, message: str) -> None:
            pass

    pool = DevicePool(["s1"], Dev, tmp_path)  # type: ignore[arg-type]
    pool.quarantine("s1", {"owner": "run1/item/model", "remaining": ["x"]})
    with pytest.raises(DeviceError) as caught:
        with pool.lease("run1/next/model", timeout_s=60):
            pass
    assert caught.value.kind == "device_quarantined" and "run1/item/model" in str(caught.value)
    with pool.lease("run2/next/model", timeout_s=1) as device:  # another run: the device is leased again
        assert device.serial == "s1"


def test_the_summary_lists_quarantined_devices_and_who_is_charged() -> None:
    rows = [
        {
            "instance_id": "i",
            "policy_kind": "device_damage",
            "quarantine": {"serial": "s", "state": "candidate", "remaining": ["r"]},
        },
        {"instance_id": "j", "quarantine": {"serial": "t", "state": "reference", "unhealthy": ["health: x"]}},
        {"instance_id": "k"},
    ]
    assert [(q["serial"], q["charged_to"], q["remaining"]) for q in quarantined_devices(rows)] == [
        ("s", "candidate", ["r"]),
        ("t", "infrastructure", ["health: x"]),
    ]
