"""A device's verified baseline: what a lease starts from and what every candidate leaves it as.

At lease start the harness records a :class:`Baseline` (installed packages, shared storage ``/sdcard`` as
path -> md5, and the ``global`` / ``system`` / ``secure`` settings). After every state attempt (so before a
retry, before the reference run and before the device goes back to the pool) :func:`restore` brings the
device back to it and verifies the result:

1. every process running under the uid of the attempt's packages is killed (``am force-stop`` does not reach
   a process the app forked and detached; ``kill -9`` from the shell needs a rooted / userdebug build on real
   hardware, and a process that survives it stays listed as damage);
2. packages not in the baseline are uninstalled;
3. files added to shared storage are removed; a baseline file changed or deleted cannot be put back (its
   bytes were never copied) and stays as damage;
4. settings changed or deleted are put back, settings added are deleted;
5. a health probe: the device is online, ``sys.boot_completed`` is ``1`` and the shell answers.

:class:`Restore` says what was found (``damage``: the attempt left it), what of it is still there after the
repair (``remaining``: the device is quarantined for the run, the damage charged to the attempt) and what the
health probe found (``unhealthy``: quarantined too, charged to nobody: a device can fail on its own). The
baseline is taken by the first attempt that reaches the booted device (:class:`Guard`), and an attempt is
restored only when its packages were installed (before that, nothing of it ran on the device). Parsing is pure (the
``parse_*`` functions); the device calls are the edge.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_mobilebench.devices.android import AndroidDevice, DeviceError

__all__ = [
    "Baseline",
    "Guard",
    "Restore",
    "diff",
    "parse_md5",
    "parse_packages",
    "parse_ps",
    "parse_settings",
    "restore",
    "take_baseline",
    "uids_of",
]

NAMESPACES: Final = ("global", "system", "secure")
STORAGE: Final = "/sdcard/"
_UID_RE: Final = re.compile(r"^package:(\S+)\s+uid:(\d+)", re.M)


@dataclasses.dataclass(frozen=True)
class Baseline:
    """Packages, shared storage (path -> md5) and settings (namespace -> key -> value) of a device."""

    packages: frozenset[str]
    storage: Mapping[str, str]
    settings: Mapping[str, Mapping[str, str]]

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins."""
        return {
            "packages": sorted(self.packages),
            "storage": dict(self.storage),
            "settings": {ns: dict(v) for ns, v in self.settings.items()},
        }


@dataclasses.dataclass(frozen=True)
class Restore:
    """One restore: ``damage`` found (one line each), ``remaining``: damage still there after the repair (what
    the attempt left: charged to it), ``unhealthy``: the health probe's or adb's problems (nobody's to charge)."""

    damage: tuple[str, ...]
    remaining: tuple[str, ...]
    unhealthy: tuple[str, ...] = ()

    @property
    def clean(self) -> bool:
        """Nothing is left: the device may run the next state or go back to the pool."""
        return not self.remaining and not self.unhealthy

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins."""
        return {
            "damage": list(self.damage),
            "remaining": list(self.remaining),
            "unhealthy": list(self.unhealthy),
            "clean": self.clean,
        }


@dataclasses.dataclass
class Guard:
    """A lease's baseline, taken by the first attempt that reaches the booted device (:meth:`ensure`)."""

    baseline: Baseline | None = None

    def ensure(self, device: AndroidDevice) -> Baseline:
        """The baseline, taken now if no attempt took it yet.

        Raises:
            DeviceError: ``adb_error`` when a query fails.
        """
        if self.baseline is None:
            self.baseline = take_baseline(device)
        return self.baseline


def parse_packages(text: str) -> frozenset[str]:
    """``pm list packages`` -> package names."""
    return frozenset(
        line[8:].split()[0] for line in text.splitlines() if line.startswith("package:") and line[8:].strip()
    )


def uids_of(text: str) -> dict[str, int]:
    """``pm list packages -U`` -> ``{package: uid}``."""
    return {m.group(1): int(m.group(2)) for m in _UID_RE.finditer(text)}


def user_name(uid: int) -> str:
    """Android's user name of an app uid of user 0: ``10123`` -> ``u0_a123``."""
    return f"u0_a{uid - 10000}" if uid >= 10000 else str(uid)


def parse_ps(text: str) -> list[tuple[str, int, str]]:
    """``ps -A -o USER,PID,NAME`` -> ``[(user, pid, name)]`` (the header skipped)."""
    rows = []
    for line in text.splitlines():
        parts = line.split(None, 2)
        if len(parts) >= 2 and parts[1].isdigit():
            rows.append((parts[0], int(parts[1]), parts[2] if len(parts) > 2 else ""))
    return rows


def parse_settings(text: str) -> dict[str, str]:
    """``settings list NS`` -> ``{key: value}``."""
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def parse_md5(text: str) -> dict[str, str]:
    """``md5sum`` lines (``<hex>  <path>``) -> ``{path: hex}``."""
    out = {}
    for line in text.splitlines():
        digest, _, path = line.partition("  ")
        if len(digest) == 32 and path:
            out[path] = digest
    return out


def take_baseline(device: AndroidDevice) -> Baseline:
    """The device's baseline now.

    Raises:
        DeviceError: ``adb_error`` when a query fails.
    """
    packages = parse_packages(device.shell("pm list packages")[1])
    storage = parse_md5(device.shell(f"find {STORAGE} -type f -exec md5sum {{}} +", timeout_s=120)[1])
    settings = {ns: parse_settings(device.shell(f"settings list {ns}")[1]) for ns in NAMESPACES}
    return Baseline(packages, storage, settings)


def diff(base: Baseline, now: Baseline) -> list[str]:
    """What differs from the baseline, one line each (pure)."""
    out = [f"package {p} installed" for p in sorted(now.packages - base.packages)]
    out += [f"package {p} removed" for p in sorted(base.packages - now.packages)]
    out += [f"shared storage: {p} added" for p in sorted(set(now.storage) - set(base.storage))]
    out += [f"shared storage: {p} deleted" for p in sorted(set(base.storage) - set(now.storage))]
    out += [
        f"shared storage: {p} changed"
        for p in sorted(set(base.storage) & set(now.storage))
        if base.storage[p] != now.storage[p]
    ]
    for ns in NAMESPACES:
        old, new = base.settings.get(ns, {}), now.settings.get(ns, {})
        out += [
            f"setting {ns} {k} changed to {new.get(k)!r} (was {old.get(k)!r})"
            for k in sorted(set(old) | set(new))
            if old.get(k) != new.get(k)
        ]
    return out


def _processes(device: AndroidDevice, users: set[str]) -> list[tuple[str, int, str]]:
    return [row for row in parse_ps(device.shell("ps -A -o USER,PID,NAME")[1]) if row[0] in users]


def _repair(device: AndroidDevice, base: Baseline, now: Baseline) -> None:
    for package in sorted(now.packages - base.packages):
        device.shell(f"pm uninstall {shlex.quote(package)}")
    for path in sorted(set(now.storage) - set(base.storage)):
        device.shell(f"rm -f {shlex.quote(path)}")
    for ns in NAMESPACES:
        old, new = base.settings.get(ns, {}), now.settings.get(ns, {})
        for key in sorted(set(old) | set(new)):
            if key not in old:
                device.shell(f"settings delete {ns} {shlex.quote(key)}")
            elif old[key] != new.get(key):
                device.shell(f"settings put {ns} {shlex.quote(key)} {shlex.quote(old[key])}")


def _health(device: AndroidDevice) -> list[str]:
    """The health probe: online, booted, a shell that answers. Returns its problems."""
    try:
        device.ensure_online()
        if device.getprop("sys.boot_completed") != "1":
            return ["health: sys.boot_completed is not 1"]
        code, out = device.shell("echo mb-health")
    except DeviceError as exc:
        return [f"health: {exc}"]
    return (
        []
        if code == 0 and out.strip() == "mb-health"
        else [f"health: the shell answered {out.strip()[:80]!r} (exit {code})"]
    )


def restore(device: AndroidDevice, base: Baseline, packages: Sequence[str], uids: Mapping[str, int]) -> Restore:
    """Bring ``device`` back to ``base`` after a state attempt of ``packages`` (``uids``: their uids while they
    were installed) and verify it (see the module docstring). Never raises: an unreachable device is a
    ``remaining`` line (the device cannot be shown clean)."""
    users = {user_name(u) for u in uids.values()}
    damage: list[str] = []
    try:
        device.force_stop(packages)
        left = _processes(device, users)
        damage += [f"process {name} (pid {pid}, {user}) outlived force-stop" for user, pid, name in left]
        for _, pid, _ in left:
            device.shell(f"kill -9 {pid}")
        device.uninstall(packages)
        now = take_baseline(device)
        damage += diff(base, now)
        _repair(device, base, now)
        remaining = [f"process {n} (pid {p}, {u}) still running after kill -9" for u, p, n in _processes(device, users)]
        remaining += diff(base, take_baseline(device))
    except DeviceError as exc:
        return Restore(tuple(damage), (), (f"restore: {exc}",))
    return Restore(tuple(damage), tuple(remaining), tuple(_health(device)))
