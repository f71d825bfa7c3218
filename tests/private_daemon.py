"""Test helper: a second Docker daemon of the test's own, to stop (``SIGSTOP``) and kill.

``private_daemon()`` starts ``dockerd`` in a network namespace of its own (``unshare --net``) with its own
``--data-root``, ``--exec-root``, ``--pidfile``, an empty ``--config-file``, a unix socket only, ``--bridge=none`` and
no iptables rules (its managed containerd is its own too), waits for its ping, and on exit (also after a failure)
resumes it if stopped, stops it (SIGTERM, SIGKILL after 30 s), unmounts what it left and removes its folder. The main
daemon is never touched. ``ship(image, daemon)`` copies an image of the main daemon into it (save -> load).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["PrivateDaemon", "private_daemon", "private_daemon_unavailable", "ship"]


@dataclasses.dataclass
class PrivateDaemon:
    """``url``: the daemon's unix URL; ``process``: dockerd (its own session); ``log``: its output."""

    url: str
    process: subprocess.Popen[bytes]
    log: Path

    def stop(self) -> None:
        """SIGSTOP: the daemon answers nothing; its containers' processes run on under their shims."""
        os.kill(self.process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        os.kill(self.process.pid, signal.SIGCONT)


def private_daemon_unavailable() -> str | None:
    """None when a second dockerd can be started here, else the reason."""
    if os.geteuid() != 0:
        return "a second dockerd needs root"
    if shutil.which("dockerd") is None or shutil.which("unshare") is None:
        return "dockerd or unshare is not installed"
    return None


def _wait_ping(daemon: PrivateDaemon, timeout_s: float = 90) -> None:
    import docker

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if daemon.process.poll() is not None:
            raise RuntimeError(
                f"dockerd exited ({daemon.process.returncode}): {daemon.log.read_text(errors='replace')[-2000:]}"
            )
        with contextlib.suppress(Exception):
            client = docker.DockerClient(base_url=daemon.url, timeout=5)
            client.ping()
            client.close()
            return
        time.sleep(0.5)
    raise RuntimeError(f"dockerd at {daemon.url} did not answer in {timeout_s} s")


@contextlib.contextmanager
def private_daemon() -> Iterator[PrivateDaemon]:
    """Start a private daemon; stop it and remove everything on exit (see the module docstring)."""
    root = Path(tempfile.mkdtemp(prefix="mbd-", dir="/var/tmp"))
    (root / "daemon.json").write_text("{}", encoding="utf-8")
    log = root / "dockerd.log"
    command = [
        # a network namespace of its own: dockerd with --bridge=none deletes the host's docker0 at start
        # (the main daemon's bridge) unless it runs where no docker0 exists
        "unshare", "--net", "dockerd", "--config-file", str(root / "daemon.json"), "--data-root", str(root / "data"),
        "--exec-root", str(root / "x"), "--pidfile", str(root / "docker.pid"), "-H", f"unix://{root}/d.sock",
        "--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-masq=false",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    daemon = PrivateDaemon(f"unix://{root}/d.sock", process, log)
    try:
        _wait_ping(daemon)
        yield daemon
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGCONT)
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        _unmount_under(root)
        shutil.rmtree(root, ignore_errors=True)


def _unmount_under(root: Path) -> None:
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines() if len(line.split()) > 1]
    for point in sorted((m for m in mounts if m.startswith(str(root))), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], capture_output=True, check=False)


def ship(image: str, daemon: PrivateDaemon) -> None:
    """Copy ``image`` from the main daemon into ``daemon`` (``docker save | docker load``, streamed)."""
    import docker

    main, other = docker.from_env(timeout=300), docker.DockerClient(base_url=daemon.url, timeout=300)
    try:
        for line in other.api.load_image(main.api.get_image(image, chunk_size=1 << 20)):
            if isinstance(line, dict) and line.get("error"):
                raise RuntimeError(line["error"])
    finally:
        main.close()
        other.close()
