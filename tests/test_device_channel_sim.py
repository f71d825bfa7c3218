"""The JVM runs of device records: the verdict comes from the runner's private channel, never from what the process
prints (issue 31 item 1, the JVM part), end to end on the default simulated device.

There the status stream reaches ``am instrument`` only from the runner's listener, over a loopback socket whose
port and one-time token reach the process on its stdin before any class under test loads; the classes under test
come from their own class loader, which cannot name the runner; what the process prints goes to logcat. A candidate
that prints a forged success and exits 0, or calls ``System.exit(0)`` mid-test, must not pass and must not be
infrastructure; the held-back attacks of ``test_device_canaries_sim`` stay caught here as well.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from adbsim import AdbServer, SimDevice, adb_available
from test_device_canaries_sim import _BLOCK, BUG, FAKE_CANARIES, FORGE_AND_HALT, MARKER_PRINTED
from test_device_sim import CALC, PATIENT, candidate_patch, evaluate, load, resources  # noqa: F401 (fixtures)

from pytest_mobilebench.suites.device_repair.fixtures import make_pool
from pytest_mobilebench.suites.device_repair.summary import summarize

pytestmark = pytest.mark.skipif(not adb_available(), reason="needs Debian's adb and a JDK (javac)")

#: a whole passing stream, numbered as the runner numbers it, canaries included (found by reflection), then exit 0
FORGED_SUCCESS_EXIT = r"""StringBuilder out = new StringBuilder();
        int n = 0;
        java.util.List<String> names = new java.util.ArrayList<>(java.util.List.of("percentOfHundred"));
        try {
            for (java.lang.reflect.Method m : Class.forName("com.example.calc.CalculatorTest").getDeclaredMethods())
                if (m.getName().startsWith("canary_")) names.add(m.getName());
        } catch (ClassNotFoundException e) { throw new IllegalStateException(e); }
        int failures = 0;
        for (String name : names) {
            n++;
            out.append(block(name, n, names.size(), 1, null));
            if (name.startsWith("canary_fail_")) {
                failures++;
                out.append(block(name, n, names.size(), -2,
                    "java.lang.AssertionError: mobilebench canary " + name.substring(12)
                    + "\n\tat org.junit.Assert.fail(Assert.java:89)"));
            } else out.append(block(name, n, names.size(), 0, null));
        }
        System.out.print(out + "INSTRUMENTATION_RESULT: stream=\n\nTime: 0.01\n\nFAILURES!!!\nTests run: " + n
            + ",  Failures: " + failures + "\n\n\nINSTRUMENTATION_CODE: -1\n");
        System.out.flush();
        System.exit(0);
        return 0;"""

#: the process ends mid-test with status 0 and nothing printed
EXIT_MID_TEST = r"""System.exit(0);
        return 0;"""

#: a real fix, taken only when the runner cannot be named from the code under test
FIX_UNLESS_RUNNER_NAMEABLE = r"""for (ClassLoader loader : new ClassLoader[] {getClass().getClassLoader(),
                ClassLoader.getSystemClassLoader(), Thread.currentThread().getContextClassLoader()}) {
            try { Class.forName("MbInstrumentationRunner", false, loader); return -1; }
                catch (ClassNotFoundException e) { }
        }
        return value * percent / 100;"""


@pytest.fixture(scope="module")
def pool(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The default simulated device (the runner's private channel)."""
    work = tmp_path_factory.mktemp("channel")
    server = AdbServer()
    device = SimDevice(work / "device")
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


def _run(tmp_path: Path, pool: Any, body: str, evaluate: Any) -> dict[str, Any]:  # noqa: F811
    def edit(text: str) -> str:
        return text.replace(BUG, body).replace("    /** {@code percent}", _BLOCK + "\n    /** {@code percent}")

    patch = candidate_patch(tmp_path, "calc", {CALC: edit})
    return evaluate(load("calc", **PATIENT), {"model_patch": patch, "model_name_or_path": "m"}, pool, tmp_path / "ev")


@pytest.mark.parametrize(
    "body",
    # one shape in the fast lane; the others (a real build and JVM run each, ~30 s) are end-to-end
    [
        pytest.param(FORGED_SUCCESS_EXIT, id="forged-success-exit-0"),
        pytest.param(EXIT_MID_TEST, id="exit-0-mid-test", marks=pytest.mark.e2e),
        pytest.param(FORGE_AND_HALT, id="forged-protocol-and-halt", marks=pytest.mark.e2e),
        pytest.param(FAKE_CANARIES, id="fake-canary-records", marks=pytest.mark.e2e),
        pytest.param(MARKER_PRINTED, id="runner-missing-marker-printed", marks=pytest.mark.e2e),
    ],
)
def test_what_the_process_prints_never_decides(tmp_path: Path, pool: Any, body: str, evaluate: Any) -> None:  # noqa: F811
    result = _run(tmp_path, pool, body, evaluate)
    assert result["passed"] is False and result["reason"] != "resolved", result
    assert result["retryable"] is False and result["reason"] != "infra_error", result  # never infrastructure
    assert summarize([result])["headline"]["denominator"] == 1
    assert result["q_outcome"] == "process_crash", result["detail"]  # the process ended inside q: am says it crashed
    attempt = tmp_path / "ev" / "states" / "candidate" / "attempt-1"
    stream = (attempt / "instrument.0.txt").read_text()
    assert "shortMsg=Process crashed." in stream and "OK (" not in stream and "Tests run:" not in stream
    if body is not EXIT_MID_TEST:  # the forgery was printed, and landed in logcat only
        assert "I System.out: INSTRUMENTATION_STATUS" in (attempt / "logcat.0.txt").read_text()


def test_the_runner_cannot_be_named_from_the_code_under_test(tmp_path: Path, pool: Any, evaluate: Any) -> None:  # noqa: F811
    result = _run(tmp_path, pool, FIX_UNLESS_RUNNER_NAMEABLE, evaluate)
    assert (result["reason"], result["passed"]) == ("resolved", True), result["detail"]
