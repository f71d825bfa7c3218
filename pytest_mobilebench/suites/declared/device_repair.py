"""What the on-device repair suite shows the user at start-up: options, markers, report columns, fixtures
(:class:`pytest_mobilebench.suites.base.SuiteSurface`); the implementation is
:mod:`pytest_mobilebench.suites.device_repair`."""

from __future__ import annotations

from typing import Final

from pytest_mobilebench.suites.base import Column, Headline, Option, SuiteSurface

__all__ = ["COLUMNS", "HEADLINE", "MARKERS", "OPTIONS", "SURFACE"]

OPTIONS: Final[tuple[Option, ...]] = (
    Option(
        ("--mb-devices",),
        "mb_devices",
        "device serials for the pool, comma-separated (never shut down)",
        env="MOBILEBENCH_DEVICES",
    ),
    Option(
        ("--mb-avd",),
        "mb_avd",
        "start emulators: NAME or NAMExN (comma-separated), stopped at session end",
        env="MOBILEBENCH_AVD",
    ),
    Option(
        ("--mb-adb-server",),
        "mb_adb_server",
        "adb server HOST:PORT (default ADB_SERVER_SOCKET, else 127.0.0.1:5037)",
        env="MOBILEBENCH_ADB_SERVER",
    ),
    Option(
        ("--mb-emulator",),
        "mb_emulator",
        "the emulator executable (default: emulator on PATH)",
        env="MOBILEBENCH_EMULATOR",
    ),
    Option(
        ("--mb-emulator-port-base",),
        "mb_emulator_port_base",
        "first emulator console port (even)",
        default=5554,
        type=int,
    ),
    Option(
        ("--mb-boot-timeout",),
        "mb_boot_timeout",
        "seconds to wait for a started emulator to boot",
        default=600.0,
        type=float,
    ),
    Option(("--mb-device-lock-dir",), "mb_device_lock_dir", "folder of the device and repository lock files"),
    Option(
        ("--mb-device-retries",),
        "mb_device_retries",
        "infrastructure retries of a state (0-2, same candidate)",
        default=2,
        type=int,
        choices=(0, 1, 2),
    ),
    Option(
        ("--mb-lease-timeout",),
        "mb_lease_timeout",
        "seconds to wait for a repository lock and a free device",
        default=1800.0,
        type=float,
    ),
)

COLUMNS: Final[tuple[Column, ...]] = (
    Column("verdict", "verdict"),
    Column("q", "q_outcome"),
    Column("F2P", "fail_to_pass"),
    Column("Q safe", "regression_safe"),
    Column("cause", "cause"),
    Column("infra", "infra_kind"),
    Column("policy", "policy_kind"),
    Column("attempts", "attempts"),
    Column("device", "device"),
)

MARKERS: Final[dict[str, str]] = {
    "device_repair": "on-device repair records (AppEval protocol)",
    "issue": "record constructed from a real issue",
    "mutation": "record constructed by a controlled mutation",
    "easy": "difficulty easy",
    "medium": "difficulty medium",
    "hard": "difficulty hard",
}

#: the headline: Pass@1 = resolved / eligible records (infrastructure left out), Wilson 95% interval
HEADLINE: Final = Headline("Pass@1", kind="rate", over_items=True)

SURFACE: Final = SuiteSurface(
    name="device_repair",
    module="pytest_mobilebench.suites.device_repair",
    plots="pytest_mobilebench.suites.device_repair.plots",
    options=OPTIONS,
    markers=MARKERS,
    columns=COLUMNS,
    fixtures=("mb_device_pool", "mb_runtime", "mb_agent"),
    fixture_module="pytest_mobilebench.suites.device_repair.fixtures",
    headline=HEADLINE,
)
