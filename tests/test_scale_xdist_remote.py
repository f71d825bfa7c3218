"""Issue 13, item 2: an xdist worker that is not on the controller's machine (``--tx socket=``).

The worker is execnet's socket server (``execnet/script/socketserver.py``) in its own network namespace
reached over a veth pair, working in its own folder (``//chdir=``, with ``--rsyncdir`` copies of
``cases`` and ``fixtures``), so its ``--mb-reports-dir`` is not the controller's. Checked: collection,
predictions and the summary work; the evidence and the result-cache entries arrive in the controller's
reports folder; a second run with a fresh worker folder is answered from the controller's cache.
The worker reaches the controller's Docker daemon through its unix socket (a file, shared here).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import execnet
import pytest
from netns_daemons import netns_available, netns_link

from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]
SERVER = Path(execnet.__file__).parent / "script" / "socketserver.py"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
    pytest.mark.skipif(netns_available() is not None, reason=str(netns_available())),
]


def _serve(netns: str, address: str, folder: Path) -> subprocess.Popen[bytes]:
    # run_path, not `python socketserver.py`: the script's folder first on sys.path would shadow the
    # standard library's socketserver module inside the worker (http.server then fails to import)
    code = (
        f"import runpy, sys; sys.argv = ['s', '{address}:8888']; runpy.run_path({str(SERVER)!r}, run_name='__main__')"
    )
    command = ["nsenter", f"--net=/run/netns/{netns}", sys.executable, "-c", code]
    return subprocess.Popen(
        command, cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )


def _wait_listening(address: str, port: int, server: subprocess.Popen[bytes], within_s: float = 60.0) -> None:
    """Return once ``address:port`` accepts a connection (the server's start on a loaded machine can take
    seconds); the server reads the probe's empty line, fails to run it and accepts the next connection."""
    deadline = time.monotonic() + within_s
    while True:
        try:
            socket.create_connection((address, port), timeout=1).close()
            return
        except OSError:
            assert server.poll() is None, f"the socket server ended ({server.returncode})"
            assert time.monotonic() < deadline, f"nothing listens on {address}:{port} after {within_s:.0f} s"
            time.sleep(0.2)


@pytest.fixture
def remote(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """(``--tx`` spec, worker folder); one fresh socket server per call of ``start``."""
    with netns_link(3) as (netns, address):
        servers: list[subprocess.Popen[bytes]] = []
        folder = tmp_path / "worker"

        def start() -> str:
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir()
            servers.append(_serve(netns, address, folder))
            _wait_listening(address, 8888, servers[-1])
            return f"socket={address}:8888//chdir={folder}"

        try:
            yield start, folder
        finally:
            for server in servers:
                if server.poll() is None:
                    os.killpg(server.pid, signal.SIGKILL)
                    server.wait(timeout=30)


def _controller_run(spec: str, controller: Path) -> tuple[subprocess.CompletedProcess[str], dict]:
    command = [
        sys.executable, "-m", "pytest", str(ROOT / "cases" / "examples"), "--predictions=gold", "--mb-runtime=docker",
        "-d", "--tx", spec, "--rsyncdir", str(ROOT / "cases"), "--rsyncdir", str(ROOT / "fixtures"),
        "-p", "no:cacheprovider", "--mb-reports-dir=reports", f"--mb-summary={controller / 'summary.json'}",
        "--mb-run-id=remote-run", "-q",
    ]  # fmt: skip
    proc = subprocess.run(command, cwd=controller, capture_output=True, text=True, check=False, timeout=900)
    summary = controller / "summary.json"
    assert summary.is_file(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return proc, json.loads(summary.read_text())


@pytest.mark.e2e
def test_a_socket_worker_in_another_namespace_sends_results_evidence_and_cache_home(remote, tmp_path: Path) -> None:
    start, worker_folder = remote
    controller = tmp_path / "controller"
    controller.mkdir()
    proc, summary = _controller_run(start(), controller)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert summary["resolution_rate"] == 1.0 and summary["total"] == 2
    for entry in summary["instances"].values():
        evidence = Path(entry["evidence_dir"])
        assert evidence.is_relative_to(controller / "reports"), evidence
        assert (evidence / "test_output.log").is_file() and (evidence / "result.json").is_file()
    assert len(list((controller / "reports" / "cache").glob("*/*.json"))) == 2
    # the worker's own copy was written in its folder, not the controller's
    assert len(list((worker_folder / "reports" / "cache").glob("*/*.json"))) == 2

    proc, again = _controller_run(start(), controller)  # a fresh worker folder: only the controller has a cache
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert all(entry["cached"] for entry in again["instances"].values())
