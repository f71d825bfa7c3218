"""Ctrl-C during ``mine``: it ends as a pytest run does. The validation run is interrupted in turn and writes its
summary, ``mine`` prints the table of what finished and the interrupted line (no raw ``KeyboardInterrupt``
traceback), exits 2, writes no manifest from half a validation, and a re-run resumes from the result cache.

A terminal's Ctrl-C sends SIGINT to its foreground process group: the test starts ``mine`` in a session of its
own with SIGINT at its default (:func:`interrupts.interruptible`) and signals that group. Before the fix the
validation run was killed 0.25 s after the signal (``subprocess.run``), before it wrote its summary, and
``mine`` ended on a traceback. The validation uses the local runtime on the bundled repository (needs npm).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from interrupts import interruptible

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = ROOT / "fixtures" / "repos" / "mobilebench+counter.bundle"
FIRST, SECOND = "mobilebench__counter-73ff7f2", "mobilebench__counter-342201a"

pytestmark = pytest.mark.e2e


def _first_result(out: Path, proc: subprocess.Popen[str], timeout_s: float) -> None:
    """Wait until the validation run has finished one item (its ``results.jsonl`` has a row)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if any(p.read_text().strip() for p in out.glob("reports/mine-*/results.jsonl")):
            return
        if proc.poll() is not None:
            pytest.fail(f"mine ended before a result: {proc.communicate()}")
        time.sleep(0.5)
    pytest.fail("no validation result in time")


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed")
def test_ctrl_c_during_validation_ends_like_pytest_and_a_rerun_resumes(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {**os.environ, "PYTEST_MOBILEBENCH_CACHE": str(tmp_path / "mbcache")}
    command = [
        sys.executable,
        "-m",
        "pytest_mobilebench",
        "mine",
        str(BUNDLE),
        "--out",
        str(out),
        "--runtime",
        "local",
        "--validate-runs",
        "1",
        "--no-audit",
    ]
    proc = interruptible(
        command,
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        _first_result(out, proc, 600)
        os.killpg(proc.pid, signal.SIGINT)  # as a terminal's Ctrl-C: the foreground group
        stdout, stderr = proc.communicate(timeout=400)
    finally:
        if proc.poll() is None:  # the test failed: Ctrl-C again (mine passes it on), then kill
            os.killpg(proc.pid, signal.SIGINT)
            try:
                proc.wait(timeout=300)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    assert proc.returncode == 2, stdout + stderr
    assert "Traceback" not in stdout + stderr and "KeyboardInterrupt" not in stderr
    (run,) = list((out / "reports").glob("mine-*"))
    inner = json.loads((run / "summary.json").read_text())  # the validation run wrote its summary
    assert inner["interrupted"] is True and list(inner["instances"]) == [FIRST], inner["instances"]
    assert f"{FIRST}  valid" in stdout and f"{SECOND}  not_run" in stdout, stdout
    assert (
        "interrupted (Ctrl-C) during the validation run (exit 2): no manifest written; re-run the same command"
        in stdout
    )
    report = json.loads((out / "report.json").read_text())
    assert report["interrupted"] == "validation" and report["instances"][SECOND]["status"] == "not_run"
    assert not (out / "mobilebench__counter.yaml").exists()  # no manifest from half a validation
    again = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900, check=False)
    assert again.returncode == 0, again.stdout + again.stderr
    report = json.loads((out / "report.json").read_text())
    assert "interrupted" not in report and report["validation"]["valid"] == 2
    assert report["validation"]["cached"] == 1  # the instance that finished comes from the cache: resumed
    assert (out / "mobilebench__counter.yaml").is_file()


SLEEPER = """import os, pathlib, time

def test_sleeps():
    pathlib.Path(os.environ["MB_PID_FILE"]).write_text(str(os.getpid()))
    time.sleep(120)
"""

DRIVER = """import sys
from pathlib import Path
from pytest_mobilebench.mining.validate import ValidationInterrupted, run_pytest

manifest, out = Path(sys.argv[1]), Path(sys.argv[2])
try:
    status, summary = run_pytest(manifest, out / "reports", "r1", [], out / "log.txt")
except ValidationInterrupted as stop:
    print(f"interrupted {stop.status}", flush=True)
"""


def _inner_started(pid_file: Path, proc: subprocess.Popen[str]) -> int:
    deadline = time.monotonic() + 120
    while not (pid_file.is_file() and pid_file.read_text()):
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.2)
    return int(pid_file.read_text())


def _gone(pid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        stat = Path(f"/proc/{pid}/stat")
        if stat.is_file() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z":
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_the_validation_run_gets_the_signal_that_ends_mine(tmp_path: Path, sig: signal.Signals) -> None:
    """The validation run is a session of its own: Ctrl-C reaches it once, from ``mine``, and it ends as pytest
    does (exit 2); a SIGTERM that ends ``mine`` (a CI timeout) ends it too, never leaving it running."""
    (tmp_path / "test_sleeper.py").write_text(SLEEPER)
    pid_file = tmp_path / "inner.pid"
    env = {**os.environ, "MB_PID_FILE": str(pid_file), "PYTEST_MOBILEBENCH_CACHE": str(tmp_path / "mbcache")}
    proc = interruptible(
        [sys.executable, "-c", DRIVER, str(tmp_path / "test_sleeper.py"), str(tmp_path / "out")],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    inner = None
    try:
        inner = _inner_started(pid_file, proc)
        os.kill(proc.pid, sig)  # to the driver alone: the inner run is in a session of its own
        stdout, stderr = proc.communicate(timeout=120)
        assert _gone(inner, 30), "the validation run outlived mine"
    finally:
        for pid in (proc.pid, inner):
            if pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)
    if sig == signal.SIGINT:
        assert stdout.strip() == "interrupted 2", stdout + stderr  # pytest's own "interrupted"
        assert "KeyboardInterrupt" in (tmp_path / "out" / "log.txt").read_text()  # it ended as pytest does
    else:
        assert proc.returncode == -signal.SIGTERM
