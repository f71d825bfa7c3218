"""One candidate must never decide another's verdict (issue 31 item 4), end to end on simulated devices.

Each attacker below leaves something on the device and then crashes its own process: a process that outlives
``am force-stop`` and kills every later instrumented process of that device, a setting that makes every later
install fail, a file that fills shared storage. The harness restores the lease's baseline after every attempt,
so the retries and the reference run see a clean device (the crash is the attacker's: ``app_crash``, in the
denominator) and the next item's honest fix on the same device resolves. A device that cannot be restored is
quarantined and the damage charged to the attacker (``policy_violation`` ``device_damage``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from adbsim import AdbServer, Script, SimDevice, adb_available
from test_device_sim import (  # noqa: F401 (fixtures)
    CALC,
    PATIENT,
    adb,
    candidate_patch,
    evaluate,
    fixed_calc,
    load,
    pool_of,
    resources,
)

from pytest_mobilebench.report.terminal import headline_lines
from pytest_mobilebench.suites.device_repair.summary import summarize

pytestmark = pytest.mark.skipif(not adb_available(), reason="needs Debian's adb and a JDK (javac)")

BUG = "return value * percent / 10;"
#: the candidate's own process dies (an uncaught exception in a thread: Android kills the process)
CRASH = """Thread t = new Thread(() -> { throw new IllegalStateException("gone"); });
        t.start();
        try { t.join(); } catch (InterruptedException e) { Thread.currentThread().interrupt(); }
        return 0;"""

#: started detached from the app's process; kills every later instrumented process of this device for 120 s
SWEEPER = """package com.example.calc;

public final class Sweeper {
    public static void main(String[] args) throws Exception {
        long end = System.currentTimeMillis() + 120_000;
        long self = ProcessHandle.current().pid();
        while (System.currentTimeMillis() < end) {
            ProcessHandle.allProcesses().filter(h -> h.pid() != self).forEach(h -> {
                String line = String.join(" ", h.info().arguments().orElse(new String[0]));
                boolean ours = line.contains("MbBoot") || line.contains("MbInstrumentationRunner");
                if (ours && line.contains(args[0])) h.destroyForcibly();
            });
            Thread.sleep(50);
        }
    }
}
"""
SPAWN = """try {
            String jar = Calculator.class.getProtectionDomain().getCodeSource().getLocation().getPath();
            new ProcessBuilder(System.getProperty("java.home") + "/bin/java", "-cp", jar,
                "com.example.calc.Sweeper", "-Dmb.sim.sdcard=" + System.getProperty("mb.sim.sdcard"))
                .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        } catch (java.io.IOException e) { throw new IllegalStateException(e); }
        """
SETTING = """try {
            java.nio.file.Files.writeString(java.nio.file.Path.of(System.getProperty("mb.sim.settings"), "global"),
                "verifier_verify_adb_installs=1\\n", java.nio.file.StandardOpenOption.CREATE,
                    java.nio.file.StandardOpenOption.APPEND);
        } catch (java.io.IOException e) { throw new IllegalStateException(e); }
        """
FILL = """try {
            java.nio.file.Files.write(java.nio.file.Path.of(System.getProperty("mb.sim.sdcard"), "cache.bin"),
                new byte[2 << 20]);
        } catch (java.io.IOException e) { throw new IllegalStateException(e); }
        """
OVERWRITE = """try {
            java.nio.file.Files.writeString(java.nio.file.Path.of(System.getProperty("mb.sim.sdcard"), "Download",
                "keep.txt"), "gone");
        } catch (java.io.IOException e) { throw new IllegalStateException(e); }
        """


def attacker(tmp_path: Path, damage: str, *, sweeper: bool = False) -> str:
    edits = {CALC: lambda text: text.replace(BUG, damage + CRASH)}
    if sweeper:
        edits["src/main/java/com/example/calc/Sweeper.java"] = lambda _: SWEEPER
    return candidate_patch(tmp_path, "calc", edits)


@pytest.fixture
def device(adb: AdbServer, tmp_path: Path) -> Iterator[tuple[SimDevice, Any]]:  # noqa: F811
    """A device of the test's own (1 MiB of shared storage, one baseline file) and a pool with its own locks."""
    made = SimDevice(tmp_path / "device", Script(storage_quota=1 << 20))
    (made.state.sdcard / "Download").mkdir()
    (made.state.sdcard / "Download" / "keep.txt").write_text("the user's file")
    made.state.write_settings("global", {"adb_enabled": "1"})
    adb.connect(made)
    try:
        yield made, pool_of(adb, made, tmp_path / "locks", tmp_path)
    finally:
        adb.adb("disconnect", made.serial)
        made.close()


def _attack_then_honest(
    tmp_path: Path, device: tuple[SimDevice, Any], evaluate: Any, patch: str, honest: str
) -> tuple[dict, dict]:  # noqa: F811
    _, pool = device
    bad = evaluate(
        load("calc", **PATIENT), {"model_patch": patch, "model_name_or_path": "attacker"}, pool, tmp_path / "ev-a"
    )
    good = evaluate(
        load("calc", **PATIENT), {"model_patch": honest, "model_name_or_path": "honest"}, pool, tmp_path / "ev-b"
    )
    return bad, good


@pytest.mark.parametrize(
    ("damage", "sweeper", "found"),
    # one damage in the fast lane; the others (two real builds and JVM runs each, 25-55 s) are end-to-end
    [
        pytest.param(SPAWN, True, "outlived force-stop", id="process-outliving-force-stop", marks=pytest.mark.e2e),
        pytest.param(SETTING, False, "setting global verifier_verify_adb_installs", id="setting"),
        pytest.param(
            FILL,
            False,
            "shared storage: /sdcard/cache.bin added",
            id="file-filling-shared-storage",
            marks=pytest.mark.e2e,
        ),
    ],
)
def test_damage_is_the_attackers_and_the_next_honest_fix_resolves(
    tmp_path: Path,
    device: Any,
    evaluate: Any,  # noqa: F811
    fixed_calc: str,
    damage: str,
    sweeper: bool,
    found: str,
) -> None:  # noqa: F811
    bad, good = _attack_then_honest(tmp_path, device, evaluate, attacker(tmp_path, damage, sweeper=sweeper), fixed_calc)
    assert (bad["reason"], bad["retryable"]) == ("app_crash", False), bad["detail"]  # charged, in the denominator
    assert bad["attempt_log"][-1]["state"] == "reference" and bad["attempt_log"][-1]["infra_kind"] is None
    assert "left_device_damage" in bad["flags"] and any(found in d for d in bad["device_damage"]), bad.get(
        "device_damage"
    )
    assert (good["reason"], good["passed"]) == ("resolved", True), good["detail"]
    assert "left_device_damage" not in good["flags"] and not good.get("quarantine")  # an honest fix leaves nothing
    assert summarize([bad, good])["headline"]["denominator"] == 2
    sim, _ = device
    assert not sim.state.processes()  # nothing of the attacker runs on after the item


def test_a_device_that_cannot_be_restored_is_quarantined_and_charged_to_its_attacker(
    tmp_path: Path,
    device: Any,
    evaluate: Any,  # noqa: F811
    fixed_calc: str,
) -> None:  # noqa: F811
    bad, good = _attack_then_honest(tmp_path, device, evaluate, attacker(tmp_path, OVERWRITE), fixed_calc)
    assert (bad["reason"], bad["policy_kind"], bad["retryable"]) == ("policy_violation", "device_damage", False), bad[
        "detail"
    ]
    assert "/sdcard/Download/keep.txt changed" in bad["detail"]
    assert [a["state"] for a in bad["attempt_log"]] == ["candidate"]  # nothing more ran on that device
    assert (good["reason"], good["infra_kind"]) == ("infra_error", "device_quarantined")  # never the honest one's fault
    summary = summarize([bad, good])
    (listed,) = summary["quarantined_devices"]
    assert (listed["serial"], listed["charged_to"]) == (device[0].serial, "candidate")
    lines = headline_lines({"run_id": "t", "models": [], "suite_tables": {"device_repair": summary}})
    assert any(line.startswith(f"quarantined device {device[0].serial}: left by") for line in lines)
