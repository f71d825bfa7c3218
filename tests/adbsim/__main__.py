"""Run a command against simulated devices: ``python -m adbsim --devices 2 -- pytest cases/device_repair ...``.

Starts a private adb server and N simulated devices (``adb connect``-ed), runs the command with
``MOBILEBENCH_DEVICES`` and ``MOBILEBENCH_ADB_SERVER`` set to them, then kills the server and the devices.
Exits with the command's status. Used by ``tox -e device``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from adbsim import AdbServer, SimDevice


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m adbsim", description=__doc__.splitlines()[0])
    parser.add_argument("--devices", type=int, default=2, help="how many simulated devices (default 2)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("give the command after --")
    work = Path(tempfile.mkdtemp(prefix="adbsim-"))
    devices = [SimDevice(work / f"device{i}", name=f"sim{i}") for i in range(args.devices)]
    server = AdbServer()
    try:
        for device in devices:
            server.connect(device)
        env = {**os.environ, "MOBILEBENCH_DEVICES": ",".join(d.serial for d in devices),
               "MOBILEBENCH_ADB_SERVER": f"127.0.0.1:{server.port}"}
        print(f"adbsim: {len(devices)} simulated device(s) {env['MOBILEBENCH_DEVICES']} on adb server port {server.port}; "
              f"device logs in {work}", flush=True)
        return subprocess.run(command, env=env, check=False).returncode
    finally:
        server.close()
        for device in devices:
            device.close()


if __name__ == "__main__":
    sys.exit(main())
