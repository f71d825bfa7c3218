"""Test helper: private Docker daemons, each in its own network namespace reached over a veth pair.

``netns_daemons(count)`` is a context manager yielding :class:`NsDaemon` s; it creates, for daemon ``i``,
the namespace ``mbscale<pid>x<i>``, a veth pair with ``10.213.<n>.<4i+1>/30`` on the host side and
``10.213.<n>.<4i+2>/30`` inside (a private /30 existing only on this machine; ``<n>`` is a subnet this process
claimed, so parallel workers never share one), and ``dockerd`` listening on
``tcp://10.213.<n>.<4i+2>:2375`` and a unix socket, with its own ``--data-root``, ``--exec-root``,
``--pidfile``, ``--config-file`` (empty), ``--cgroup-parent`` and a bridge inside its namespace (started
with ``nsenter --net``, which keeps the host's cgroup mounts that ``ip netns exec`` would hide). The
daemons have no route out: every image they need is shipped to them. On exit (also after a failure)
every daemon it started is stopped (SIGTERM, then SIGKILL after 30 s), and the namespaces, veths and
folders are removed. The main daemon (/var/run/docker.sock) is never touched.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

__all__ = ["NsDaemon", "netns_available", "netns_daemons", "netns_link"]


@dataclasses.dataclass
class NsDaemon:
    """One private daemon: ``url`` (tcp, over the veth), ``socket`` (unix URL), its namespace and process."""

    url: str
    socket: str
    netns: str
    process: subprocess.Popen[bytes]
    log: Path


def netns_available() -> str | None:
    """None when namespaces, veths and dockerd can be used here, else the reason."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None or shutil.which("dockerd") is None:
        return "iproute2 (ip) or dockerd is not installed"
    probe = f"mbprobe{os.getpid()}"
    proc = subprocess.run(["ip", "netns", "add", probe], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return f"`ip netns add` is not permitted here: {proc.stderr.strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True, check=False)
    return None


@contextlib.contextmanager
def _claim_subnet() -> Iterator[str]:
    """Claim a ``10.213.<n>.0/24`` no other process of this machine holds, for as long as the block runs; yields
    its ``10.213.<n>`` prefix. Two xdist workers (or two runs) starting namespaces at once must not put the same
    /30 on two veths (the host would route both to one of them). The claim is an abstract unix socket named after
    the block: the kernel releases it when the socket closes or the process dies, and nothing is left on disk. A
    block the host already routes (a killed run's veth) is skipped, so a leftover never captures our traffic."""
    for octet in range(7, 250):
        if _routed(f"10.213.{octet}.0/24"):
            continue
        claim = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            claim.bind(f"\0mobilebench-test-net-10.213.{octet}")
        except OSError:
            claim.close()
            continue
        try:
            yield f"10.213.{octet}"
        finally:
            claim.close()
        return
    raise RuntimeError("every 10.213.<n>.0/24 test subnet is claimed by another process or routed already")


def _routed(block: str) -> bool:
    """True when the host has a route inside ``block`` (``ip route show root``: routes the block contains)."""
    proc = subprocess.run(["ip", "-o", "route", "show", "root", block], capture_output=True, text=True, check=False)
    return proc.returncode != 0 or bool(proc.stdout.strip())


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, capture_output=True, text=True)


def _veth(netns: str, host_if: str, ns_if: str, host_ip: str, ns_ip: str) -> None:
    """Create namespace ``netns`` and a veth pair: ``host_ip/30`` on ``host_if`` here, ``ns_ip/30`` on ``ns_if``
    inside (with its loopback up)."""
    _ip("netns", "add", netns)
    _ip("link", "add", host_if, "type", "veth", "peer", "name", ns_if)
    _ip("link", "set", ns_if, "netns", netns)
    _ip("addr", "add", f"{host_ip}/30", "dev", host_if)
    _ip("link", "set", host_if, "up")
    for args in (
        ("addr", "add", f"{ns_ip}/30", "dev", ns_if),
        ("link", "set", ns_if, "up"),
        ("link", "set", "lo", "up"),
    ):
        _ip("netns", "exec", netns, "ip", *args)


def _wait_ping(url: str, process: subprocess.Popen[bytes], log: Path, timeout_s: float = 90) -> None:
    """Wait until the daemon answers ``/_ping`` at ``url``; the API client ignores proxy variables (the veth
    address is only reachable directly). On a timeout the error says what the host saw: the route to the address,
    a bare TCP connect's result, the namespace's listening sockets, and the end of the daemon's log."""
    import docker

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"dockerd exited ({process.returncode}): {log.read_text(errors='replace')[-2000:]}")
        with contextlib.suppress(Exception):
            client = docker.DockerClient(base_url=url, timeout=5)
            client.api.trust_env = False
            client.ping()
            client.close()
            return
        time.sleep(0.5)
    raise RuntimeError(
        f"dockerd at {url} did not answer in {timeout_s} s: {_diagnose(url)}\n{log.read_text(errors='replace')[-1500:]}"
    )


def _diagnose(url: str) -> str:
    host, _, port = url.removeprefix("tcp://").partition(":")
    route = subprocess.run(["ip", "route", "get", host], capture_output=True, text=True, check=False)
    try:
        with socket.create_connection((host, int(port)), timeout=5):
            connect = "a bare TCP connect succeeds (so the API client, not the network, failed)"
    except OSError as exc:
        connect = f"a bare TCP connect fails: {exc!r}"
    netns = next((n for n in Path("/run/netns").glob("mbscale*")), None) if Path("/run/netns").is_dir() else None
    listening = ""
    if netns is not None:
        ss = subprocess.run(["nsenter", f"--net={netns}", "ss", "-ltn"], capture_output=True, text=True, check=False)
        listening = f"; listening in {netns.name}: {ss.stdout.strip() or ss.stderr.strip()}"
    return f"route: {route.stdout.strip() or route.stderr.strip()}; {connect}{listening}"


def _start(index: int, root: Path, prefix: str) -> NsDaemon:
    netns = f"mbscale{os.getpid()}x{index}"
    host_if, ns_if = f"mbs{os.getpid() % 100000}h{index}", f"mbs{os.getpid() % 100000}n{index}"
    host_ip, ns_ip = f"{prefix}.{4 * index + 1}", f"{prefix}.{4 * index + 2}"
    _veth(netns, host_if, ns_if, host_ip, ns_ip)
    home = root / f"d{index}"
    home.mkdir(parents=True)
    (home / "daemon.json").write_text("{}", encoding="utf-8")
    log = home / "dockerd.log"
    command = [
        # nsenter enters the network namespace only: `ip netns exec` would also remount /sys, hiding cgroups
        "nsenter", f"--net=/run/netns/{netns}", "dockerd",
        "--config-file", str(home / "daemon.json"),
        "--data-root", str(home / "data"),
        "--exec-root", str(home / "exec"),
        "--pidfile", str(home / "docker.pid"),
        "-H", f"tcp://{ns_ip}:2375",
        "-H", f"unix://{home}/docker.sock",
        "--iptables=false", "--ip6tables=false", "--ip-masq=false",
        "--bip", "172.31.254.1/24",
        "--cgroup-parent", f"/{netns}",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    return NsDaemon(f"tcp://{ns_ip}:2375", f"unix://{home}/docker.sock", netns, process, log)


def _stop(daemon: NsDaemon) -> None:
    if daemon.process.poll() is None:
        os.killpg(daemon.process.pid, signal.SIGTERM)
        try:
            daemon.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(daemon.process.pid, signal.SIGKILL)
            daemon.process.wait(timeout=30)


@contextlib.contextmanager
def netns_daemons(count: int) -> Iterator[list[NsDaemon]]:
    """Start ``count`` namespaced daemons; stop and remove everything on exit (see the module docstring)."""
    root = Path(tempfile.mkdtemp(prefix="mbscale-", dir="/var/tmp"))
    started: list[NsDaemon] = []
    with contextlib.ExitStack() as stack:
        prefix = stack.enter_context(_claim_subnet())
        stack.callback(_remove, root, started, count)
        for index in range(count):
            started.append(_start(index, root, prefix))
            _wait_ping(started[-1].url, started[-1].process, started[-1].log)
        yield started


def _remove(root: Path, started: list[NsDaemon], count: int) -> None:
    """Stop the daemons, delete the namespaces and host veths, unmount and delete ``root`` (also after a failure)."""
    for daemon in started:
        _stop(daemon)
    for index in range(count):
        netns = f"mbscale{os.getpid()}x{index}"
        subprocess.run(["ip", "netns", "del", netns], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", f"mbs{os.getpid() % 100000}h{index}"], capture_output=True, check=False)
    _unmount_under(root)
    shutil.rmtree(root, ignore_errors=True)


def _unmount_under(root: Path) -> None:
    """Lazily unmount what a killed daemon left mounted below ``root`` (deepest first)."""
    mounts = [line.split()[1] for line in Path("/proc/self/mounts").read_text().splitlines()]
    for target in sorted((m for m in mounts if m.startswith(str(root) + "/")), key=len, reverse=True):
        subprocess.run(["umount", "-l", target], capture_output=True, check=False)


@contextlib.contextmanager
def netns_link(index: int) -> Iterator[tuple[str, str]]:
    """A bare namespace over a veth pair on the /30 ``<prefix>.<4*index>`` of a claimed test subnet; yields
    (namespace, inside address) and removes both on exit. Processes enter it with
    ``nsenter --net=/run/netns/<name>``."""
    netns, host_if, ns_if = (
        f"mbnet{os.getpid()}x{index}",
        f"mbl{os.getpid() % 100000}h{index}",
        f"mbl{os.getpid() % 100000}n{index}",
    )
    with _claim_subnet() as prefix:
        host_ip, ns_ip = f"{prefix}.{4 * index + 1}", f"{prefix}.{4 * index + 2}"
        try:
            _veth(netns, host_if, ns_if, host_ip, ns_ip)
            yield netns, ns_ip
        finally:
            subprocess.run(["ip", "netns", "del", netns], capture_output=True, check=False)
            subprocess.run(["ip", "link", "del", host_if], capture_output=True, check=False)
