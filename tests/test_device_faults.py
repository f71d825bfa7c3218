"""Device faults leave a named result and a clean machine (whole pytest runs in subprocesses).

- A configured adb server that does not answer: every item is the infrastructure kind ``adb_unreachable``
  naming ``host:port``, and no adb server appears (adbutils' own client would run ``adb start-server`` on the
  default port 5037; the adb it would run is a recording wrapper around the real one here).
- The simulated-device wrapper (``python -m adbsim``) interrupted with Ctrl-C after the first item: pytest
  writes its summary (``interrupted``), then the devices and the private server are gone.
- A device item killed with SIGKILL mid-run leaves its work tree in its run folder; the next run sweeps it and
  leaves the folders of live processes alone.
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

import pytest
from adbsim import AdbServer, SimDevice, adb_available
from interrupts import interruptible

from pytest_mobilebench.devices.android import DeviceError
from pytest_mobilebench.suites.device_repair import workroot
from pytest_mobilebench.suites.device_repair.fixtures import make_pool, server_client

pytestmark = [pytest.mark.skipif(not adb_available(), reason="needs Debian's adb and a JDK (javac)")]

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
CASES = ROOT / "cases" / "device_repair"
DEFAULT_PORT = 5037


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex(("127.0.0.1", port)) == 0


def adb_servers(port: int) -> set[int]:
    """Pids of adb server processes listening on ``port`` (``adb -L tcp:PORT fork-server server ...``)."""
    pids = set()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"fork-server" in argv and f"tcp:{port}".encode() in argv:
            pids.add(int(proc.name))
    return pids


@pytest.fixture
def recording_adb(tmp_path: Path) -> Iterator[Path]:
    """``ADBUTILS_ADB_PATH``: a wrapper that logs every adbutils call of the adb binary, then runs the real one."""
    log = tmp_path / "adb-calls.log"
    before = adb_servers(DEFAULT_PORT)
    wrapper = tmp_path / "adb-recording"
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which("adb")} "$@"\n', encoding="utf-8")
    wrapper.chmod(0o755)
    yield wrapper
    if log.exists():  # adb ran through the wrapper (the test fails): stop a stray default-port server it started
        for pid in adb_servers(DEFAULT_PORT) - before:
            os.kill(pid, signal.SIGTERM)


def child_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("ANDROID_ADB_SERVER_PORT", "ADB_SERVER_SOCKET", "MOBILEBENCH_DEVICES", "MOBILEBENCH_ADB_SERVER")
    }
    (tmp_path / "tmp").mkdir(exist_ok=True)
    return {**env, "TMPDIR": str(tmp_path / "tmp"), "PYTHONPATH": os.pathsep.join([str(ROOT), str(TESTS)]), **extra}


def pytest_cmd(tmp_path: Path, *args: str, target: Path = CASES) -> list[str]:
    return [
        sys.executable,
        "-m",
        "pytest",
        str(target),
        "-p",
        "no:cacheprovider",
        "--predictions=gold",
        "-q",
        f"--mb-reports-dir={tmp_path / 'reports'}",
        f"--mb-summary={tmp_path / 'summary.json'}",
        f"--mb-device-lock-dir={tmp_path / 'locks'}",
        *args,
    ]


def results(tmp_path: Path) -> list[dict]:
    return [json.loads(p.read_text()) for p in sorted((tmp_path / "reports").rglob("result.json"))]


def dead_server_run(tmp_path: Path, env: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], dict, int]:
    dead = free_port()
    done = subprocess.run(
        pytest_cmd(tmp_path, "--mb-devices=127.0.0.1:9", f"--mb-adb-server=127.0.0.1:{dead}"),
        cwd=ROOT,
        env=env,
        check=False,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert (tmp_path / "summary.json").is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    return done, json.loads((tmp_path / "summary.json").read_text()), dead


# ------------------------------------------------------------------------------------------------ adb server


def test_the_pool_client_never_starts_a_server(recording_adb: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """In process: adbutils' own client on a dead port runs `adb start-server` (what this guards against);
    the pool's client raises instead, and :func:`make_pool` gives a pool whose lease names the server."""
    import adbutils

    monkeypatch.setenv("ADBUTILS_ADB_PATH", str(recording_adb))
    monkeypatch.setenv("ANDROID_ADB_SERVER_PORT", str(free_port()))  # where adbutils' stray server would go
    log = recording_adb.parent / "adb-calls.log"
    dead = free_port()
    with pytest.raises((adbutils.AdbError, OSError)):
        server_client("127.0.0.1", dead).device_list()
    assert not log.exists() and not listening(dead)
    pool, emulators = make_pool(
        {"mb_devices": "127.0.0.1:9", "mb_adb_server": f"127.0.0.1:{dead}", "mb_avd": "Pixel"},
        log_dir=recording_adb.parent,
    )
    assert emulators is None  # no emulator is started for a server that does not answer
    with pytest.raises(DeviceError) as err, pool.repository("a/b", timeout_s=1):  # type: ignore[union-attr]
        pass
    assert err.value.kind == "adb_unreachable" and f"127.0.0.1:{dead}" in str(err.value)
    assert not log.exists()
    # the behaviour the pool's client removes: adbutils as is starts a server (on ANDROID_ADB_SERVER_PORT)
    stray = int(os.environ["ANDROID_ADB_SERVER_PORT"])
    try:
        with pytest.raises((adbutils.AdbError, OSError)):
            adbutils.AdbClient(host="127.0.0.1", port=dead).device_list()
        assert "start-server" in log.read_text()
    finally:
        subprocess.run(["adb", "-P", str(stray), "kill-server"], check=False, capture_output=True, timeout=30)
        log.unlink(missing_ok=True)


@pytest.mark.e2e
def test_a_dead_adb_server_is_a_named_result_per_item_and_starts_nothing(tmp_path: Path, recording_adb: Path) -> None:
    before_default = listening(DEFAULT_PORT), adb_servers(DEFAULT_PORT)
    done, summary, dead = dead_server_run(tmp_path, child_env(tmp_path, ADBUTILS_ADB_PATH=str(recording_adb)))
    table = summary["suite_tables"]["device_repair"]
    assert table["infra_by_kind"] == {"adb_unreachable": 2}, (table, done.stdout[-2000:])
    items = results(tmp_path)
    assert len(items) == 2 and all(
        r["infra_kind"] == "adb_unreachable" and f"127.0.0.1:{dead}" in r["detail"] for r in items
    )
    # no adb server appeared: none through adbutils, none on the default port, none on the dead one
    assert not (tmp_path / "adb-calls.log").exists()
    assert (listening(DEFAULT_PORT), adb_servers(DEFAULT_PORT)) == before_default
    assert not listening(dead) and not adb_servers(dead)
    assert not any((tmp_path / "tmp").iterdir()), list((tmp_path / "tmp").rglob("*"))  # nothing left in the temp folder


# ------------------------------------------------------------------------------------------------ wrapper signals


@pytest.mark.e2e
def test_the_device_wrapper_forwards_ctrl_c_and_the_summary_is_written(tmp_path: Path) -> None:
    cmd = [sys.executable, "-m", "adbsim", "--devices", "2", "--", *pytest_cmd(tmp_path, "-n", "0")]
    out = (tmp_path / "wrapper.out").open("w")
    wrapper = interruptible(
        cmd, cwd=ROOT, env=child_env(tmp_path), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 600
        while not results(tmp_path) and wrapper.poll() is None and time.monotonic() < deadline:
            time.sleep(0.5)
        assert wrapper.poll() is None and len(results(tmp_path)) == 1, (tmp_path / "wrapper.out").read_text()[-3000:]
        os.killpg(wrapper.pid, signal.SIGINT)  # Ctrl-C in a terminal: the wrapper's foreground group
        code = wrapper.wait(timeout=180)
    finally:
        if wrapper.poll() is None:
            os.killpg(wrapper.pid, signal.SIGKILL)
            wrapper.wait()
        out.close()
    text = (tmp_path / "wrapper.out").read_text()
    assert code == 2, text[-3000:]  # pytest's "interrupted"
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["interrupted"] is True, summary
    assert len(results(tmp_path)) == 1  # the finished item's result is there; the interrupted one is not run
    first = text.split("adbsim: ", 1)[1].splitlines()[0]
    serials = first.split(" simulated device(s) ", 1)[1].split(" on adb server port ", 1)[0].split(",")
    port = int(first.rsplit("adb server port ", 1)[1].split(";")[0])
    assert not listening(port) and not adb_servers(port)
    assert not any(listening(int(s.rsplit(":", 1)[1])) for s in serials)
    assert not any((tmp_path / "tmp").iterdir()), list((tmp_path / "tmp").rglob("*"))  # devices' folder, work trees


# ------------------------------------------------------------------------------------------------ killed items


@pytest.mark.e2e
def test_a_killed_items_work_tree_is_swept_by_the_next_run(tmp_path: Path) -> None:
    adb = AdbServer(log_dir=tmp_path)
    device = SimDevice(tmp_path / "device")
    live = None
    try:
        adb.connect(device)
        env = child_env(tmp_path)
        cmd = pytest_cmd(
            tmp_path,
            f"--mb-devices={device.serial}",
            f"--mb-adb-server=127.0.0.1:{adb.port}",
            target=CASES / "mobilebench__calc.yaml",
        )
        child = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        parent = tmp_path / "tmp" / "mobilebench-device-work"
        deadline = time.monotonic() + 600
        while child.poll() is None and time.monotonic() < deadline and not list(parent.glob("*/mb-*/repo/.git")):
            time.sleep(0.05)
        os.killpg(child.pid, signal.SIGKILL)  # mid-item: a state's work tree is checked out
        child.wait()
        (left,) = parent.iterdir()
        assert left.name.endswith(f"-{child.pid}") and list(left.glob("mb-mobilebench__calc-1-*/repo"))
        live = workroot.claim("another-live-run", parent)  # this process is alive: never swept
        dead_server_run(tmp_path, env)  # the next run (its items end early: no adb server) sweeps at start
        assert list(parent.iterdir()) == [live]  # the dead run's folder is gone, the next run removed its own
    finally:
        if live is not None:
            workroot.release(live)
        adb.close()
        device.close()


def test_sweep_keeps_live_and_fresh_unowned_folders(tmp_path: Path) -> None:
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], check=True, capture_output=True, text=True
    )
    gone = tmp_path / f"r-{dead.stdout.strip()}"
    gone.mkdir()
    (gone / "owner").write_text(f"{socket.gethostname()}:{dead.stdout.strip()}:1\n")  # a finished process
    fresh = tmp_path / "being-created"
    fresh.mkdir()
    stale = tmp_path / "unowned"
    stale.mkdir()
    old = time.time() - workroot.UNOWNED_GRACE_S - 5
    os.utime(stale, (old, old))
    other_host = tmp_path / "elsewhere"
    other_host.mkdir()
    (other_host / "owner").write_text("another-host.invalid:1:1\n")
    mine = workroot.claim("run/1", tmp_path)
    assert mine.name == f"run_1-{os.getpid()}"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([fresh.name, other_host.name, mine.name])
    assert workroot.sweep(tmp_path) == []  # a second sweep removes nothing alive
    workroot.release(mine)
    assert not mine.exists()


def test_a_listener_that_is_not_an_adb_server_is_unreachable(tmp_path: Path) -> None:
    """Something else on the configured port (it accepts and never answers): named, not waited on forever."""
    from pytest_mobilebench.suites.device_repair.fixtures import server_problem

    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        started = time.monotonic()
        problem = server_problem(server_client("127.0.0.1", port), timeout_s=1.0)
        assert problem is not None and time.monotonic() - started < 10
        pool, _ = make_pool({"mb_devices": "127.0.0.1:9", "mb_adb_server": f"127.0.0.1:{port}"}, log_dir=tmp_path)
        with pytest.raises(DeviceError, match=f"127.0.0.1:{port}"), pool.lease("x", timeout_s=1):  # type: ignore[union-attr]
            pass
