"""Run a command against simulated devices: ``python -m adbsim --devices 2 -- pytest cases/device_repair ...``.

Starts a private adb server and N simulated devices (``adb connect``-ed), runs the command with
``MOBILEBENCH_DEVICES`` and ``MOBILEBENCH_ADB_SERVER`` set to them, then kills the server and the devices
and removes their folder, the server's log included (``--keep-logs`` keeps it and prints where). Exits with the
command's status. Used by ``tox -e device``.

Signals: the command runs in its own process group, and SIGINT / SIGTERM / SIGHUP received by this wrapper
are forwarded to that group (as a terminal's Ctrl-C reaches every process of the foreground group, xdist
workers included) instead of killing it, so an interrupted pytest still writes its summary; the devices
and the server are stopped only after the command has exited. A command still running
``--grace`` seconds after a SIGTERM / SIGHUP is killed.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import FrameType

from adbsim import AdbServer, SimDevice

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


def run_forwarding(command: list[str], env: dict[str, str], *, grace_s: float) -> int:
    """Run ``command`` in its own process group, forwarding :data:`FORWARDED` signals to it; its exit status
    (``128 + n`` when killed by signal n)."""
    group = {"process_group": 0} if sys.version_info >= (3, 11) else {"start_new_session": True}
    child = subprocess.Popen(command, env=env, **group)  # type: ignore[call-overload]
    kill_at: list[float] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signum)
        if signum != signal.SIGINT and not kill_at:
            kill_at.append(time.monotonic() + grace_s)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    try:
        while True:
            try:
                code = child.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                if kill_at and time.monotonic() > kill_at[0]:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(child.pid, signal.SIGKILL)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        with contextlib.suppress(ProcessLookupError):  # what the command left in its group
            os.killpg(child.pid, signal.SIGKILL)
    return 128 - code if code < 0 else code


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m adbsim", description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2, help="how many simulated devices (default 2)")
    parser.add_argument("--keep-logs", action="store_true", help="keep the devices' folder (device.log) and print it")
    parser.add_argument("--grace", type=float, default=60.0, help="seconds between a forwarded SIGTERM and SIGKILL")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    work = Path(tempfile.mkdtemp(prefix="adbsim-"))
    devices: list[SimDevice] = []
    server: AdbServer | None = None
    try:
        devices = [SimDevice(work / f"device{i}", name=f"sim{i}") for i in range(args.devices)]
        server = AdbServer(log_dir=work)
        for device in devices:
            server.connect(device)
        env = {
            **os.environ,
            "MOBILEBENCH_DEVICES": ",".join(d.serial for d in devices),
            "MOBILEBENCH_ADB_SERVER": f"127.0.0.1:{server.port}",
        }
        logs = f"; device logs in {work}" if args.keep_logs else ""
        print(
            f"adbsim: {len(devices)} simulated device(s) {env['MOBILEBENCH_DEVICES']} on adb server port {server.port}"
            f"{logs}",
            flush=True,
        )
        return run_forwarding(command, env, grace_s=args.grace)
    finally:
        if server is not None:
            server.close()
        for device in devices:
            device.close()
        if not args.keep_logs:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
