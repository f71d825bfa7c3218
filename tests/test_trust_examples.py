"""Candidate tricks against the whole harness, on the bundled examples in Docker (issue 7, "Done when").

Each test writes predictions for ``mobilebench__counter-1`` (``Counter.increment`` adds one too many)
whose patch does NOT fix the bug but tries to reach its own verdict, runs ``pytest cases/examples`` in a
subprocess with its own reports folder and ``--mb-cache-level=none`` (every image the run builds is
removed), and checks the end result: never ``resolved``, the trick's marker never in the test output,
the tool files never in the tree the tests saw. Marked ``docker``: a daemon must answer.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

docker = pytest.importorskip("docker", reason="the docker SDK is not installed")

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[1]
INSTANCE = "mobilebench__counter-1"

#: rewrites jest's --outputFile report to "all passed" when the process exits, and says so
HOOK = textwrap.dedent(
    """\
    process.on('exit', () => {
      const fs = require('fs');
      const arg = process.argv.find((a) => a.startsWith('--outputFile='));
      if (arg) {
        const file = arg.slice('--outputFile='.length);
        const report = JSON.parse(fs.readFileSync(file, 'utf8'));
        report.numFailedTests = 0; report.success = true;
        for (const suite of report.testResults) {
          suite.status = 'passed';
          for (const t of suite.assertionResults) t.status = 'passed';
        }
        fs.writeFileSync(file, JSON.stringify(report));
      }
      console.log('HOOKED-BY-CANDIDATE');
    });
    """
)


#: production code that spawns a detached rewriter of jest's --outputFile report
REWRITER = textwrap.dedent(
    """\
    // the runner's --outputFile, from any process's command line (jest may run this file in a worker)
    let arg;
    for (const pid of require('fs').readdirSync('/proc').filter((p) => /^\\d+$/.test(p))) {
      try {
        const found = require('fs').readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\\0')
          .find((a) => a.startsWith('--outputFile='));
        if (found) { arg = found; break; }
      } catch (e) {}
    }
    if (arg) {
      const loop = `
        const fs = require('fs'); const file = process.argv[1]; const end = Date.now() + 60000;
        const tick = () => {
          try {
            const r = JSON.parse(fs.readFileSync(file, 'utf8'));
            if (r.numFailedTests > 0) {
              r.numFailedTests = 0; r.success = true;
              for (const s of r.testResults) { s.status = 'passed';
                  for (const t of s.assertionResults) t.status = 'passed'; }
              fs.writeFileSync(file, JSON.stringify(r));
            }
          } catch (e) {}
          if (Date.now() < end) setTimeout(tick, 5);
        };
        tick();`;
      require('child_process').spawn(process.execPath, ['-e', loop, arg.slice('--outputFile='.length)],
        { detached: true, stdio: 'ignore' }).unref();
    }
    """
)


def _new_file(path: str, text: str, mode: str = "100644") -> str:
    lines = text.splitlines()
    body = "".join(f"+{line}\n" for line in lines)
    return (
        f"diff --git a/{path} b/{path}\nnew file mode {mode}\n--- /dev/null\n+++ b/{path}\n"
        f"@@ -0,0 +1,{len(lines)} @@\n{body}"
    )


def _fake_report() -> str:
    tests = [
        {
            "ancestorTitles": ["Counter"],
            "title": t,
            "fullName": f"Counter {t}",
            "status": "passed",
            "failureMessages": [],
        }
        for t in ("increments by one", "increments by a step")
    ]
    return json.dumps(
        {
            "numFailedTests": 0,
            "numPassedTests": 2,
            "success": True,
            "testResults": [
                {"name": "/testbed/__tests__/counter.test.js", "status": "passed", "assertionResults": tests}
            ],
        }
    )


TRICKS: dict[str, str] = {
    # a project npm configuration that would load a hook into a runner started through npx / npm
    "npmrc-hook": _new_file(".npmrc", "node-options=--require ./hook.js") + _new_file("hook.js", HOOK),
    # a report planted where the harness used to read it, plus one under an ignored build folder
    "planted-report": _new_file(".mobilebench/jest-results.json", _fake_report())
    + _new_file("build/test-results/jest-results.json", _fake_report())
    + _new_file("notes.md", "planted"),
    # a change to the installed runner itself (ignored and untracked, but present in the image)
    "runner-file": (
        "diff --git a/node_modules/jest/bin/jest.js b/node_modules/jest/bin/jest.js\n"
        "--- a/node_modules/jest/bin/jest.js\n+++ b/node_modules/jest/bin/jest.js\n"
        "@@ -1 +1,2 @@\n #!/usr/bin/env node\n+require('../../../hook.js');\n"
    )
    + _new_file("hook.js", HOOK),
    # production code (allowed) trying to hook the process's exit to rewrite the report and force exit
    # status 0 (jest's sandboxed ``process`` keeps the hook away from the real exit)
    "exit-hook-in-source": (
        "diff --git a/src/counter.js b/src/counter.js\n--- a/src/counter.js\n+++ b/src/counter.js\n"
        "@@ -1,3 +1,4 @@\n+require('./hook.js');\n class Counter {\n   constructor(start = 0) {\n"
        "     this.value = start;\n"
    )
    + _new_file(
        "src/hook.js",
        "const process = require('process');\n"
        + HOOK.replace("console.log('HOOKED-BY-CANDIDATE');", "process.exitCode = 0;"),
    ),
    # production code (allowed) that starts a detached process rewriting the report as soon as jest
    # writes it: the runner's exit status and console summary still tell the truth
    "background-rewriter": (
        "diff --git a/src/counter.js b/src/counter.js\n--- a/src/counter.js\n+++ b/src/counter.js\n"
        "@@ -1,3 +1,4 @@\n+require('./bg.js');\n class Counter {\n   constructor(start = 0) {\n"
        "     this.value = start;\n"
    )
    + _new_file("src/bg.js", REWRITER),
    # the Gradle wrapper is the runner's entry point: a candidate's script there is a tool change
    "gradlew": _new_file("gradlew", "#!/bin/sh\necho HOOKED-BY-CANDIDATE\nexit 0", mode="100755")
    + _new_file("notes.md", "gradlew"),
}


def _docker_or_skip() -> None:
    try:
        docker.from_env(timeout=10).ping()
    except Exception as exc:  # noqa: BLE001
        pytest.skip(f"no Docker daemon answers: {exc}")


def _predictions(path: Path, models: dict[str, str]) -> Path:
    path.write_text(
        "".join(
            json.dumps({"instance_id": INSTANCE, "model_name_or_path": m, "model_patch": p}) + "\n"
            for m, p in models.items()
        )
    )
    return path


def _pytest(reports: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    argv = [
        sys.executable,
        "-m",
        "pytest",
        "cases/examples",
        "-p",
        "no:cacheprovider",
        "-q",
        "-k",
        INSTANCE,
        f"--mb-reports-dir={reports}",
        "--mb-cache-level=none",
        *args,
    ]
    return subprocess.Popen(
        argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env={**os.environ, **(env or {})}
    )


def _results(reports: Path) -> dict[str, dict]:
    found: dict[str, dict] = {}
    for path in reports.glob("*/*/*/result.json"):
        result = json.loads(path.read_text())
        found[result["model_name_or_path"]] = result
    return found


@pytest.mark.e2e
def test_candidate_tricks_never_reach_their_verdict(tmp_path: Path) -> None:
    _docker_or_skip()
    preds = _predictions(tmp_path / "preds.jsonl", TRICKS)
    proc = _pytest(tmp_path / "reports", f"--predictions={preds}")
    out, _ = proc.communicate(timeout=1800)
    results = _results(tmp_path / "reports")
    assert set(results) == set(TRICKS), out[-3000:]
    for model, result in results.items():
        evidence = Path(result["evidence_dir"])
        assert result["reason"] not in ("resolved", "infra_error"), (model, result.get("detail"), out[-3000:])
        log = (evidence / "test_output.log").read_text() if (evidence / "test_output.log").exists() else ""
        assert "HOOKED-BY-CANDIDATE" not in log, model
        seen = (evidence / "candidate_as_run.diff").read_text() if (evidence / "candidate_as_run.diff").exists() else ""
        assert "node_modules/" not in seen and ".npmrc" not in seen, (model, seen)
        results_dir = evidence / "results"
        read = (
            sorted(p.relative_to(results_dir).as_posix() for p in results_dir.rglob("*") if p.is_file())
            if results_dir.exists()
            else []
        )
        assert all(r.startswith("var/tmp/mb-results-") for r in read), (model, read)  # never the planted files
    for model in ("npmrc-hook", "planted-report", "runner-file", "gradlew"):  # tool sections: dropped, never applied
        assert results[model]["reason"] == "policy_violation", (model, results[model].get("detail"))
    # the rewriter races the harness: stopped before the read (unresolved), or caught by the runner's
    # exit status against the forged report (policy_violation); jest's sandbox keeps the exit hook out
    assert results["background-rewriter"]["reason"] in ("unresolved", "policy_violation")
    assert results["exit-hook-in-source"]["reason"] == "unresolved"


@pytest.mark.e2e
def test_docker_kill_mid_test_is_infra_and_never_cached(tmp_path: Path) -> None:
    _docker_or_skip()
    client = docker.from_env()
    # the fix, plus a minute of busy work when the tests import it: time to kill the container from outside
    fix = (
        "diff --git a/src/counter.js b/src/counter.js\n--- a/src/counter.js\n+++ b/src/counter.js\n"
        "@@ -1,3 +1,5 @@\n+const until = Date.now() + 60000;\n+while (Date.now() < until) {}\n"
        " class Counter {\n   constructor(start = 0) {\n     this.value = start;\n"
        "@@ -4,7 +6,7 @@ class Counter {\n   }\n \n   increment(step = 1) {\n-    this.value += step + 1;\n"
        "+    this.value += step;\n     return this.value;\n   }\n }\n"
    )
    slow = ""
    preds = _predictions(tmp_path / "preds.jsonl", {"killed": fix + slow})
    reports = tmp_path / "reports"
    run_id = "kill-" + os.urandom(4).hex()
    proc = _pytest(reports, f"--predictions={preds}", f"--mb-run-id={run_id}")
    stop = threading.Event()

    def kill_when_testing() -> None:
        while not stop.is_set():
            for entry in client.api.containers(filters={"label": f"mobilebench.run_id={run_id}"}):
                try:
                    top = client.api.top(entry["Id"])
                    if any("jest" in " ".join(p) for p in top.get("Processes") or []):
                        time.sleep(2)  # the tests are running (busy for a minute)
                        client.api.kill(entry["Id"])
                        return
                except docker.errors.APIError:
                    continue  # a container between start and stop
            time.sleep(0.5)

    killer = threading.Thread(target=kill_when_testing, daemon=True)
    killer.start()
    out, _ = proc.communicate(timeout=1800)
    stop.set()
    result = _results(reports)["killed"]
    assert result["reason"] == "infra_error" and result["infra_kind"] == "container_died", (
        result.get("detail"),
        out[-2000:],
    )
    assert result["retryable"] is True
    assert not list(reports.glob("cache/**/*.json"))  # never cached: the next run retries it


@pytest.mark.e2e
def test_two_runs_at_once_keep_their_own_files(tmp_path: Path) -> None:
    _docker_or_skip()
    reports = tmp_path / "reports"
    runs = [_pytest(reports, "--predictions=gold", f"--mb-run-id=run-{i}", "--mb-rerun") for i in (1, 2)]
    outs = [p.communicate(timeout=1800)[0] for p in runs]
    for i, out in zip((1, 2), outs):
        summary = json.loads((reports / f"run-{i}" / "summary.json").read_text())
        assert summary["run_id"] == f"run-{i}" and summary["resolved"] == 1, out[-2000:]
        assert (reports / f"run-{i}" / "results.jsonl").read_text().count("\n") == 1
    assert os.readlink(reports / "latest") in ("run-1", "run-2")


@pytest.mark.e2e
def test_auto_without_a_daemon_never_runs_a_candidate_on_the_host(tmp_path: Path) -> None:
    preds = _predictions(tmp_path / "preds.jsonl", {"real": TRICKS["npmrc-hook"]})
    dead = {"DOCKER_HOST": f"unix://{tmp_path}/no-daemon.sock"}
    proc = _pytest(tmp_path / "reports", f"--predictions={preds}", env=dead)
    out, _ = proc.communicate(timeout=600)
    result = _results(tmp_path / "reports")["real"]
    assert result["reason"] == "infra_error" and result["infra_kind"] == "daemon_unreachable", out[-2000:]
    assert "never run unisolated" in result["detail"]
    proc = _pytest(tmp_path / "reports2", f"--predictions={preds}", "--mb-runtime=local", env=dead)
    out, _ = proc.communicate(timeout=600)
    result = _results(tmp_path / "reports2")["real"]
    assert result["infra_kind"] == "untrusted_local_run" and "--mb-trust-candidates" in result["detail"], out[-2000:]
    assert not (Path(result["evidence_dir"]) / "test_output.log").exists()  # nothing ran


@pytest.mark.e2e
@pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")
def test_a_full_reports_disk_says_so_and_keeps_the_previous_summary(tmp_path: Path) -> None:
    disk = tmp_path / "tiny"
    disk.mkdir()
    if subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=400k", "tmpfs", str(disk)], check=False, capture_output=True
    ).returncode:
        pytest.skip("cannot mount a tmpfs here")
    try:
        previous = '{"previous": true}\n'
        (disk / "summary.json").write_text(previous)
        fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
        try:
            while os.write(fd, b"\0" * 4096):
                pass
        except OSError:
            pass  # full
        finally:
            os.close(fd)
        proc = _pytest(disk / "reports", "--predictions=empty", f"--mb-summary={disk / 'summary.json'}")
        out, _ = proc.communicate(timeout=600)
        assert "the reports disk is full" in out and "nothing was run" in out, out[-3000:]
        assert "INTERNALERROR" not in out and "Traceback" not in out, out[-3000:]
        assert (disk / "summary.json").read_text() == previous
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)
