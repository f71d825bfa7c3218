"""Ctrl-C during an app-generation run: pytest's KeyboardInterrupt summary, what finished kept, nothing left behind.

A terminal's Ctrl-C sends SIGINT to its whole foreground process group, so the test starts pytest in a
session of its own and signals the group, as a terminal would. Before the fix the signal also reached
Playwright's driver, which died mid-call: the run ended with a stray ``Future exception was never
retrieved ... Connection closed while reading from the driver`` traceback after pytest's summary.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from interrupts import interruptible

ROOT = Path(__file__).resolve().parents[1]


def _descendants(root: int) -> dict[tuple[int, str], str]:
    """``{(pid, start time): command line}`` of every process below ``root`` (from ``/proc``)."""
    parent: dict[int, int] = {}
    facts: dict[int, tuple[str, str]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        parent[int(entry.name)] = int(fields[1])
        facts[int(entry.name)] = (fields[19], cmd)
    found: dict[tuple[int, str], str] = {}
    for pid in facts:
        up = pid
        while up in parent and up not in (0, 1, root):
            up = parent[up]
        if up == root and pid != root:
            found[(pid, facts[pid][0])] = facts[pid][1]
    return found


def _alive(pid: int, started: str) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[19] == started and fields[0] != "Z"


def _run_containers(run_id: str) -> list[str]:
    docker = pytest.importorskip("docker")
    client = docker.from_env()
    try:
        return [c.name for c in client.containers.list(all=True, filters={"label": f"mobilebench.run_id={run_id}"})]
    finally:
        client.close()


def test_ctrl_c_during_a_host_build_kills_the_build_tools(tmp_path: Path) -> None:
    """A trusted host build (its own session, so no SIGINT reaches it) is killed when Ctrl-C reaches pytest."""
    from pytest_mobilebench.suites.app_generation import build

    marker = f"mb-linger-{uuid.uuid4().hex[:8]}"
    script = f"sh -c 'sleep 300; : {marker}' & wait"  # the inner shell carries the marker
    previous = signal.signal(signal.SIGALRM, signal.default_int_handler)  # raises KeyboardInterrupt
    signal.setitimer(signal.ITIMER_REAL, 1.0)
    try:
        with pytest.raises(KeyboardInterrupt):
            build._run(["sh", "-c", script], tmp_path, tmp_path / "log.txt", timeout_s=60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    time.sleep(0.5)
    mine = [pid for pid in (p.name for p in Path("/proc").iterdir() if p.name.isdigit()) if marker in _cmdline(pid)]
    assert mine == []


def _cmdline(pid: str) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.mark.chromium
@pytest.mark.docker
@pytest.mark.e2e
@pytest.mark.parametrize("workers", [[], ["-n", "2"]], ids=["serial", "xdist"])
def test_ctrl_c_mid_run_prints_the_summary_keeps_results_and_leaves_nothing(tmp_path: Path, workers: list[str]) -> None:
    """Serially: interrupted while the second item navigates, the first one's result kept. Under ``-n 2`` (the
    workers get the SIGINT too): interrupted while both navigate, whatever finished kept."""
    if not Path("/usr/bin/chromium").exists():
        pytest.skip("needs Debian's chromium")
    run_id = f"sigint-{uuid.uuid4().hex[:8]}"
    reports = tmp_path / "reports"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MOBILEBENCH_KEEP_TEST_IMAGES": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "cases/app_generation",
        "--predictions=fixtures/apps/predictions.jsonl",
        "-k",
        "fixture-c1-blank or fixture-good",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:randomly",
        f"--mb-reports-dir={reports}",
        f"--mb-run-id={run_id}",
        "--mb-rerun",
        *workers,
    ]
    proc = interruptible(
        cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True
    )
    seen: dict[tuple[int, str], str] = {}
    log = reports / run_id / "progress.log"
    deadline = time.monotonic() + 900
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            seen.update(_descendants(proc.pid))
            finished = bool(workers) or (log.is_file() and "] finished " in log.read_text())
            if finished and len(list(reports.glob(f"{run_id}/*/tabs_demo/nav"))) == 2:
                break  # (serially: the first item finished and) the second one is navigating in Chromium
            time.sleep(0.3)
        assert proc.poll() is None, "the run ended before it could be interrupted"
        time.sleep(1.0)
        seen.update(_descendants(proc.pid))
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C at a terminal does
        out, _ = proc.communicate(timeout=180)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == pytest.ExitCode.INTERRUPTED, out
    assert "!!! KeyboardInterrupt !!!" in out and "the run was interrupted" in out, out
    assert f"run {run_id}: models fixture-c1-blank, fixture-good" in out  # the selected models, finished or not
    for stray in ("Traceback", "Future exception was never retrieved", "Connection closed", "Exception ignored"):
        assert stray not in out, out
    summary = json.loads((reports / run_id / "summary.json").read_text())
    jsonl = reports / run_id / "results.jsonl"  # written at the first finished item
    results = jsonl.read_text().splitlines() if jsonl.is_file() else []
    assert summary["interrupted"] is True and len(results) == summary["total"] < 2
    assert (summary["selected"], summary["not_run"]) == (2, 2 - summary["total"])
    assert workers or summary["total"] == 1
    for line in results:
        assert (reports / run_id / json.loads(line)["model_name_or_path"] / "tabs_demo" / "result.json").is_file()
    left = {key: cmd for key, cmd in seen.items() if _alive(*key)}
    settle = time.monotonic() + 30  # the container reaper exits once it found nothing of the run left
    while left and time.monotonic() < settle:
        time.sleep(0.5)
        left = {key: cmd for key, cmd in left.items() if _alive(*key)}
    assert not left, left  # no Chromium, Playwright driver, vite or reaper outlives the run
    assert any("chrom" in c for c in seen.values())
    assert _run_containers(run_id) == []
