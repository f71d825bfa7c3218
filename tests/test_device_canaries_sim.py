"""Attacks on the on-device grading from the code under test, end to end on simulated devices.

Each candidate below fixes nothing: its production code attacks the runner from inside the instrumented
process (the JVM behind the simulated device really runs it, with JUnit 4 and the harness's canaries).
The grading must never call it ``resolved`` and never infrastructure. Uses only the suite's public entry
points (``SUITE.evaluate``) so the same file runs against an older tree.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from adbsim import AdbServer, Script, SimDevice, adb_available
from test_device_sim import CALC, PATIENT, candidate_patch, evaluate, load, resources  # noqa: F401 (fixtures)

from pytest_mobilebench.suites.device_repair.fixtures import make_pool
from pytest_mobilebench.suites.device_repair.summary import summarize

pytestmark = pytest.mark.skipif(not adb_available(), reason="needs Debian's adb and a JDK (javac)")

BUG = "return value * percent / 10;"

_BLOCK = r"""
    private static String block(String test, int current, int numtests, int code, String stack) {
        return "INSTRUMENTATION_STATUS: class=com.example.calc.CalculatorTest\n"
            + "INSTRUMENTATION_STATUS: current=" + current
            + "\nINSTRUMENTATION_STATUS: id=AndroidJUnitRunner\nINSTRUMENTATION_STATUS: numtests=" + numtests + "\n"
            + (stack == null ? "" : "INSTRUMENTATION_STATUS: stack=" + stack + "\n")
            + "INSTRUMENTATION_STATUS: stream=" + (code == 0 ? "." : "") + "\nINSTRUMENTATION_STATUS: test=" + test
            + "\nINSTRUMENTATION_STATUS_CODE: " + code + "\n";
    }
"""

#: the issue's attack: a passing end block for q, "OK (1 test)", the final code, then the JVM halts
FORGE_AND_HALT = r"""System.out.print(block("percentOfHundred", 1, 1, 0, null)
            + "INSTRUMENTATION_RESULT: stream=\n\nTime: 0.01\n\nOK (1 test)\n\n\nINSTRUMENTATION_CODE: -1\n");
        System.out.flush();
        Runtime.getRuntime().halt(0);
        return 0;"""

#: the same, with records for the canaries it finds by reflection on its own test class
FAKE_CANARIES = r"""StringBuilder out = new StringBuilder(block("percentOfHundred", 1, 1, 0, null));
        try {
            for (java.lang.reflect.Method m : Class.forName("com.example.calc.CalculatorTest").getDeclaredMethods()) {
                String n = m.getName();
                if (n.startsWith("canary_pass_")) out.append(block(n, 1, 1, 1, null)).append(block(n, 1, 1, 0, null));
                if (n.startsWith("canary_fail_")) out.append(block(n, 1, 1, 1, null)).append(block(n, 1, 1, -2,
                    "java.lang.AssertionError: mobilebench canary " + n.substring(12)
                    + "\n\tat org.junit.Assert.fail(Assert.java:89)"));
            }
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(e);
        }
        System.out.print(out + "INSTRUMENTATION_RESULT: stream=\n\nTime: 0.01\n\nFAILURES!!!\n"
            + "Tests run: 3,  Failures: 1\n\n\nINSTRUMENTATION_CODE: -1\n");
        System.out.flush();
        Runtime.getRuntime().halt(0);
        return 0;"""

#: an exception whose cause carries the runner-missing marker
MARKER_IN_STACK = r"""throw new IllegalStateException("boom", new RuntimeException(
            "android.util.AndroidException: INSTRUMENTATION_FAILED: "
            + "com.example.calc.test/androidx.test.runner.AndroidJUnitRunner"));"""

#: the runner-missing block printed at protocol level from q's code, then the process stops
MARKER_PRINTED = r"""System.out.print("INSTRUMENTATION_STATUS: id=ActivityManagerService\n"
            + "INSTRUMENTATION_STATUS: Error=Unable to find "
            + "instrumentation info for: ComponentInfo{com.example.calc.test/androidx.test.runner.AndroidJUnitRunner}\n"
            + "INSTRUMENTATION_STATUS_CODE: -1\n"
            + "android.util.AndroidException: INSTRUMENTATION_FAILED: "
            + "com.example.calc.test/androidx.test.runner.AndroidJUnitRunner\n");
        System.out.flush();
        Runtime.getRuntime().halt(1);
        return 0;"""

#: a worker thread allocates until the heap limit; Android kills the process on its uncaught OutOfMemoryError
OOM_IN_THREAD = r"""Thread hog = new Thread(() -> {
            java.util.List<long[]> kept = new java.util.ArrayList<>();
            while (true) kept.add(new long[1 << 20]);
        });
        hog.start();
        try { hog.join(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        return value * percent / 100;"""


def attack(tmp_path: Path, body: str) -> str:
    """A candidate patch replacing percentOf's body with ``body`` (and adding the block helper)."""

    def edit(text: str) -> str:
        return text.replace(BUG, body).replace("    /** {@code percent}", _BLOCK + "\n    /** {@code percent}")

    return candidate_patch(tmp_path, "calc", {CALC: edit})


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A device whose instrumentation stream the code under test can write to (as ``Instrumentation.sendStatus`` can
    on a real device): the canaries must catch what reaches the stream. The default simulated device keeps the
    stream out of the process's reach (``tests/test_device_channel_sim.py`` runs these attacks there)."""
    work = tmp_path_factory.mktemp("attacks")
    server = AdbServer()
    device = SimDevice(work / "device", Script(status_channel="stdout"))
    try:
        server.connect(device)
        made, _ = make_pool(
            {
                "mb_devices": device.serial,
                "mb_adb_server": f"127.0.0.1:{server.port}",
                "mb_device_lock_dir": str(work / "locks"),
            },
            log_dir=work,
        )
        yield made
    finally:
        server.adb("disconnect", device.serial)
        device.close()
        server.close()


def run(tmp_path: Path, pool: Any, body: str, evaluate: Any) -> dict[str, Any]:
    result = evaluate(
        load("calc", **PATIENT),
        {"model_patch": attack(tmp_path, body), "model_name_or_path": "m"},
        pool,
        tmp_path / "ev",
    )
    assert result["passed"] is False and result["reason"] != "resolved", result
    assert result["retryable"] is False and result["reason"] != "infra_error", result  # never infrastructure
    assert summarize([result])["headline"]["denominator"] == 1  # counted against the candidate
    return result


@pytest.mark.parametrize(
    "body", [FORGE_AND_HALT, FAKE_CANARIES], ids=["forged-protocol-and-halt", "fake-canary-records"]
)
def test_a_forged_stream_is_runner_compromised(tmp_path: Path, pool: Any, body: str, evaluate: Any) -> None:
    result = run(tmp_path, pool, body, evaluate)
    assert (result["reason"], result.get("policy_kind")) == ("policy_violation", "runner_compromised"), result["detail"]
    attempt = tmp_path / "ev" / "states" / "candidate" / "attempt-1"
    output = (attempt / "instrument.0.txt").read_text()
    assert "OK (1 test)" in output or "Tests run: 3" in output  # the forgery really reached the output ...
    assert [a["state"] for a in result["attempt_log"]] == ["candidate"]  # ... and is not retried as infrastructure
    nonce = json.loads((attempt / "canaries.json").read_text())["nonce"]
    assert f"canary_fail_{nonce}" in (tmp_path / "ev" / "device_commands.log").read_text()  # selected in the same call


@pytest.mark.parametrize(
    "body",
    [
        pytest.param(MARKER_IN_STACK, id="in-a-stack-trace"),
        pytest.param(MARKER_PRINTED, id="printed-then-halt", marks=pytest.mark.e2e),  # a JVM halt: ~20 s
    ],
)
def test_instrumentation_failed_from_the_code_under_test_is_not_infrastructure(
    tmp_path: Path, pool: Any, body: str, evaluate: Any
) -> None:
    result = run(tmp_path, pool, body, evaluate)
    assert (
        "INSTRUMENTATION_FAILED"
        in (tmp_path / "ev" / "states" / "candidate" / "attempt-1" / "instrument.0.txt").read_text()
    )
    assert result["reason"] in ("unresolved", "app_crash") and result["cause"] == "app_crash", result["detail"]


@pytest.mark.e2e  # two real builds, one JVM run out of heap: ~20 s
def test_an_oom_crash_where_the_reference_ran_clean_is_the_candidates(tmp_path: Path, pool: Any, evaluate: Any) -> None:
    result = run(tmp_path, pool, OOM_IN_THREAD, evaluate)
    assert (result["reason"], result["cause"]) == ("app_crash", "app_crash"), result["detail"]
    assert [a["state"] for a in result["attempt_log"]] == ["candidate"] * 3 + ["reference"]
    assert result["attempt_log"][-1]["infra_kind"] is None  # the reference ran clean on the same device
    output = (tmp_path / "ev" / "states" / "candidate" / "attempt-1" / "instrument.0.txt").read_text()
    assert "java.lang.OutOfMemoryError" in output and "shortMsg=Process crashed." in output
