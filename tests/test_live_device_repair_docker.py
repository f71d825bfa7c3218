"""``--predictions=live`` for device repair: a scripted model drives the built-in shell agent in a Docker sandbox of
the bundled calc record's repository (no network, no device), the harness takes its ``git diff`` and grades it on a
simulated device (tests/adbsim behind Debian's real adb server). The reference fix applied through shell commands
passes and the run's predictions.jsonl re-grades to the same verdict; test-source edits, fake output and attempts
on adb, the host's adb server and the network change nothing; a looping agent ends at the step limit (counted);
`--mb-trials 2` gives two items, two predictions rows and the trial figures.
"""

from __future__ import annotations

import json
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import pytest
from adbsim import AdbServer, SimDevice, adb_available
from live_scripts import by_instance, git_diff, heredoc_patch  # noqa: F401 (fixture)
from scripted_openai import bash, submit

from pytest_mobilebench.suites.issue_resolution import docker_answers

ROOT = Path(__file__).resolve().parents[1]
CALC_YAML = ROOT / "cases" / "device_repair" / "mobilebench__calc.yaml"
BUNDLE = ROOT / "fixtures" / "device_repair" / "mobilebench+calc.bundle"
BASE, FIX = "faa5180a3b0957004f9cbaad7f7b23665be967f0", "ff4c3c2950937c1b354cec6544b3623499b0207d"
IID = "mobilebench__calc-1"
#: a marker of the record's issue (the scripted server picks the script by it)
MARK = "percentOf(200, 15) returns 300"
TEST = "src/test/java/com/example/calc/CalculatorTest.java"

pytestmark = [
    pytest.mark.docker,
    pytest.mark.e2e,
    pytest.mark.skipif(not docker_answers(), reason="no Docker daemon answers (start dockerd)"),
    pytest.mark.skipif(not adb_available(), reason="needs Debian's adb and a JDK (javac)"),
]


@pytest.fixture(scope="module")
def device(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AdbServer, SimDevice]]:
    folder = tmp_path_factory.mktemp("devices")
    server = AdbServer()
    sim = SimDevice(folder / "healthy")
    try:
        server.connect(sim)
        yield server, sim
    finally:
        server.close()
        sim.close()


@pytest.fixture(scope="module")
def fix_diff(tmp_path_factory: pytest.TempPathFactory) -> str:
    repo = tmp_path_factory.mktemp("calc") / "repo"
    subprocess.run(["git", "clone", "-q", "--bare", str(BUNDLE), str(repo)], check=True, capture_output=True)
    return git_diff(repo, BASE, FIX, "src/main")


def _run(
    pytester: pytest.Pytester, device: tuple[AdbServer, SimDevice], run_id: str, *args: str, predictions: str = "live"
) -> tuple[pytest.RunResult, dict, Path]:
    server, sim = device
    reports = pytester.path / "reports"
    result = pytester.runpytest(
        str(CALC_YAML),
        f"--predictions={predictions}",
        "--mb-runtime=docker",
        f"--mb-run-id={run_id}",
        f"--mb-devices={sim.serial}",
        f"--mb-adb-server=127.0.0.1:{server.port}",
        f"--mb-device-lock-dir={pytester.path / 'locks'}",
        f"--mb-reports-dir={reports}",
        f"--mb-summary={reports / run_id / 'summary.json'}",
        "-p",
        "no:cacheprovider",
        *args,
    )
    return result, json.loads((reports / run_id / "summary.json").read_text()), reports / run_id


def _live(url: str, *extra: str) -> tuple[str, ...]:
    return (f"--mb-agent-base-url={url}", "--mb-agent-model=scripted", "--mb-agent-retries=3", *extra)


def _tool_lines(run: Path) -> list[dict]:
    lines = [json.loads(x) for x in (run / "scripted" / IID / "trajectory.jsonl").read_text().splitlines()]
    return [x for x in lines if x.get("role") == "tool" and "command" in x]


def test_the_reference_fix_through_shell_commands_passes_on_the_device_and_the_predictions_regrade_the_same(
    pytester: pytest.Pytester, by_instance, device, fix_diff: str
) -> None:
    by_instance.scripts[MARK] = [
        bash("grep -n 'percent' src/main/java/com/example/calc/Calculator.java"),
        bash(heredoc_patch(fix_diff)),
        submit("divide by 100"),
    ]
    result, summary, run = _run(pytester, device, "dlive-gold", *_live(by_instance.url), "--junitxml=junit.xml")
    result.assert_outcomes(passed=1)
    entry = summary["instances"][IID]
    assert entry["reason"] == "resolved" and entry["model_name_or_path"] == "scripted", entry
    assert entry["agent_end"] == "submitted" and entry["agent_calls"] == 3 and entry["agent_tokens_in"] > 0
    first = by_instance.requests[0]
    assert first == (MARK, 0)
    (row,) = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    assert row["instance_id"] == IID and row["model_patch"].startswith("diff --git a/src/main/")
    assert (run / "scripted" / IID / "agent.json").is_file()
    table = summary["suite_tables"]["device_repair"]["agent"]
    assert table["items"] == 1 and table["ends"] == {"submitted": 1}
    props = {p.get("name"): p.get("value") for p in ET.parse(pytester.path / "junit.xml").getroot().iter("property")}
    assert props["agent_end"] == "submitted" and props["verdict"] == "resolved"
    page = (run / "index.html").read_text()
    assert "Agent transcripts" in page and "divide by 100" in page

    again, regraded, _ = _run(pytester, device, "dlive-regrade", predictions=str(run / "predictions.jsonl"))
    again.assert_outcomes(passed=1)
    assert regraded["instances"][IID]["reason"] == "resolved"
    assert regraded["cached"] == 1  # the same candidate: answered from the cache, nothing runs again (issue 33)


def test_test_edits_fake_output_adb_and_the_network_cannot_change_the_verdict(
    pytester: pytest.Pytester, by_instance, device
) -> None:
    server, _sim = device
    trivial = (
        "package com.example.calc;\nimport org.junit.Test;\npublic class CalculatorTest {\n"
        "    @Test public void percentOfHundred() {}\n}\n"
    )
    by_instance.scripts[MARK] = [
        bash(f"cat > {TEST} <<'EOF'\n{trivial}EOF"),
        bash("adb devices; which adb; ls /dev/bus/usb; echo ANDROID_ADB=$ANDROID_ADB_SERVER_PORT"),
        bash(f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {server.port}), 3)'"),
        bash(
            "curl -sS -m 5 http://1.1.1.1/; python3 -c 'import socket; "
            'socket.create_connection(("172.17.0.1", 80), 3)\''
        ),
        bash("echo 'OK (3 tests)'; echo 'INSTRUMENTATION_STATUS_CODE: 0'; touch src/main/notes.txt"),
        submit("All tests pass."),
    ]
    _result, summary, run = _run(pytester, device, "dlive-cheat", *_live(by_instance.url))
    entry = summary["instances"][IID]
    assert entry["reason"] != "resolved" and not entry.get("retryable"), entry
    assert "edits_tests" in entry["flags"] and entry["agent_end"] == "submitted"
    tools = _tool_lines(run)
    adb, host_adb, network = tools[1], tools[2], tools[3]
    assert "adb: command not found" in adb["output"] or "not found" in adb["output"], adb
    assert host_adb["exit_code"] != 0 and "Error" in host_adb["output"], host_adb
    assert network["exit_code"] != 0 and "unreachable" in network["output"], network
    (row,) = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    assert TEST in row["model_patch"]  # taken as the agent left it; the grading restores it to base
    # the device's target method ran the hidden test against the unfixed code
    attempts = json.loads((run / "scripted" / IID / "attempts.json").read_text())
    assert attempts and attempts[-1]["state"] == "candidate"
    assert json.loads((run / "scripted" / IID / "result.json").read_text())["q_outcome"] == "assertion_failure"


def test_a_looping_agent_ends_at_the_step_limit_and_is_counted(pytester: pytest.Pytester, by_instance, device) -> None:
    by_instance.scripts[MARK] = [bash("ls src")]
    by_instance.loop.add(MARK)
    _result, summary, _run_dir = _run(pytester, device, "dlive-loop", *_live(by_instance.url, "--mb-agent-max-steps=3"))
    entry = summary["instances"][IID]
    assert entry["agent_end"] == "agent_step_limit" and entry["agent_steps"] == 3, entry
    assert entry["reason"] == "empty_patch" and not entry.get("retryable")  # the candidate's outcome, counted
    assert summary["suite_tables"]["device_repair"]["headline"]["denominator"] == 1


def test_an_endpoint_that_keeps_failing_is_infrastructure_and_never_reaches_the_device(
    pytester: pytest.Pytester, by_instance, device
) -> None:
    by_instance.scripts[MARK] = [submit("never asked")]
    by_instance.failures[MARK] = 100
    _result, summary, run = _run(
        pytester,
        device,
        "dlive-down",
        f"--mb-agent-base-url={by_instance.url}",
        "--mb-agent-model=scripted",
        "--mb-agent-retries=1",
    )
    entry = summary["instances"][IID]
    assert entry["reason"] == "infra_error" and entry["retryable"], entry
    assert not (run / "scripted" / IID / "attempts.json").exists()  # no state ran: the device was never leased
    assert not (run / "predictions.jsonl").exists()


def test_two_live_trials_are_two_items_with_their_own_rows_and_the_trial_figures(
    pytester: pytest.Pytester, by_instance, device, fix_diff: str
) -> None:
    by_instance.trials[MARK] = [[bash(heredoc_patch(fix_diff)), submit("divide by 100")], [submit("nothing to change")]]
    result, summary, run = _run(pytester, device, "dlive-trials", *_live(by_instance.url, "--mb-trials=2"))
    result.assert_outcomes(passed=1, failed=1)
    assert {k: e["reason"] for k, e in summary["instances"].items()} == {
        f"{IID}[t1]": "resolved",
        f"{IID}[t2]": "empty_patch",
    }
    rows = [json.loads(x) for x in (run / "predictions.jsonl").read_text().splitlines()]
    assert sorted(r["trial"] for r in rows) == [1, 2]  # one row per trial, neither overwriting the other
    trials = summary["suite_tables"]["device_repair"]["trials"]["scripted"]
    assert trials["pass_1"]["value"] == 0.5 and trials["pass_at_k"]["2"]["value"] == 1.0
    assert trials["flips"][0]["verdicts"] == {"t1": "resolved", "t2": "empty_patch"}
    assert any(x.startswith("trials of device_repair (scripted): 1 x 2: pass@1 0.500") for x in result.outlines)
