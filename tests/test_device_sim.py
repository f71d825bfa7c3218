"""The device-repair suite end to end against simulated devices, through adbutils and Debian's real adb server.

Each test module process shares one private adb server (``adb -P <free port>``, killed at module end) and one
booted healthy simulated device (``tests/adbsim``, reached with ``adb connect``; its log is emptied for each test);
a test that scripts a device fault gets a device of its own, since fault counters are per device. The bundled self-made
records are built with the host JDK and their ONE target method runs on a real JVM behind the simulated device, so
S_bug's assertion failure and S_fix's pass come from real code. Scripted behaviours stand for the device faults.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from adbsim import AdbServer, Script, SimDevice, adb_available

from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.patch import split_patch
from pytest_mobilebench.predictions import Prediction, PredictionKind
from pytest_mobilebench.records import LoadedRecord
from pytest_mobilebench.suites.device_repair import SUITE
from pytest_mobilebench.suites.device_repair.fixtures import make_pool
from pytest_mobilebench.suites.device_repair.grading import RecordMismatch
from pytest_mobilebench.suites.device_repair.records import Timeouts
from pytest_mobilebench.suites.device_repair.summary import summarize

pytestmark = pytest.mark.skipif(not adb_available(), reason="needs Debian's adb and a JDK (javac)")

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases" / "device_repair"
CALC = "src/main/java/com/example/calc/Calculator.java"


def load(name: str, **plan_update: Any) -> LoadedRecord:
    """A bundled record; ``plan_update`` overrides plan fields (short deadlines for the scripted faults)."""
    path = CASES / f"mobilebench__{name}.yaml"
    (loaded,) = SUITE.load(path, read_yaml(path))
    if plan_update:
        record = loaded.record.model_copy(
            update={"plan": loaded.record.plan.model_copy(update=plan_update), "regression": ()}
        )
        loaded = dataclasses.replace(loaded, record=record)
    return loaded


FAST = {"timeouts": Timeouts(build_s=120, install_s=30, test_s=30, no_output_s=2, boot_s=2), "settle_s": 0.0}
#: for tests where only the scripted fault may end a run early: a real JVM start on a loaded machine can stay
#: silent for more than FAST's 2 s, which would read as a hang
PATIENT = {"timeouts": Timeouts(build_s=120, install_s=30, test_s=60, no_output_s=20, boot_s=2), "settle_s": 0.0}
#: for a candidate that hangs: its silence must end the run, while the reference run that decides the blame (a
#: real JVM on the same loaded machine) must not be cut short by FAST's 2 s
HANG = {"timeouts": Timeouts(build_s=120, install_s=30, test_s=60, no_output_s=10, boot_s=2), "settle_s": 0.0}


class Ctx:
    """What the plugin hands ``evaluate`` (run id, evidence folder, options, fixtures, resources).

    Resources are made once per test module and closed at its end, as the plugin does per session."""

    def __init__(self, evidence: Path, pool: Any, resources: dict[str, Any], **options: Any) -> None:
        self.run_id = "t"
        self.evidence_dir = evidence
        self.options = {"mb_device_retries": 2, **options}
        self._pool = pool
        self._resources = resources
        self.lines: list[str] = []

    def progress(self, message: str) -> None:
        self.lines.append(message)

    def fixture(self, name: str) -> Any:
        assert name == "mb_device_pool"
        return self._pool

    def resource(self, key: str, factory: Any, close: Any = None) -> Any:
        if key not in self._resources:
            self._resources[key] = (factory(), close)
        return self._resources[key][0]


@pytest.fixture(scope="module")
def resources() -> Iterator[dict[str, Any]]:
    made: dict[str, Any] = {}
    yield made
    for obj, close in reversed(list(made.values())):
        if close is not None:
            close(obj)


@pytest.fixture(scope="module")
def adb() -> Iterator[AdbServer]:
    server = AdbServer()
    yield server
    server.close()


@pytest.fixture(scope="module")
def devices_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The module's simulated devices (they share one compiled instrumentation runner)."""
    return tmp_path_factory.mktemp("devices")


def pool_of(adb: AdbServer, device: SimDevice, locks: Path, log_dir: Path) -> Any:
    pool, _ = make_pool(
        {"mb_devices": device.serial, "mb_adb_server": f"127.0.0.1:{adb.port}", "mb_device_lock_dir": str(locks)},
        log_dir=log_dir,
    )
    return pool


@pytest.fixture(scope="module")
def healthy(adb: AdbServer, devices_dir: Path) -> Iterator[tuple[SimDevice, Any]]:
    """One booted device without scripted faults, shared by the module's tests (``device_factory()``)."""
    device = SimDevice(devices_dir / "healthy")
    adb.connect(device)
    yield device, pool_of(adb, device, devices_dir / "locks", devices_dir)
    adb.adb("disconnect", device.serial)
    device.close()


@pytest.fixture
def device_factory(adb: AdbServer, healthy: tuple[SimDevice, Any], devices_dir: Path) -> Iterator[Any]:
    """``make()``: the shared healthy device, its log emptied (a test sees only its own events);
    ``make(script)``: a device of its own with scripted faults (their counters are per device)."""
    made: list[SimDevice] = []

    def make(script: Script | None = None) -> tuple[SimDevice, Any]:
        if script is None:
            device, pool = healthy
            device.log_path.write_text("", encoding="utf-8")
            return device, pool
        device = SimDevice(devices_dir / f"scripted{len(list(devices_dir.glob('scripted*')))}", script)
        made.append(device)
        adb.connect(device, wait_state=None if device.script.offline else "device")
        return device, pool_of(adb, device, devices_dir / "locks", devices_dir)

    yield make
    for device in made:
        adb.adb("disconnect", device.serial)
        device.close()


def device_log(device: SimDevice) -> list[dict[str, Any]]:
    return [json.loads(line) for line in device.log_path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture
def evaluate(resources: dict[str, Any]) -> Any:
    """``evaluate(loaded, prediction, pool, evidence)``: the suite's evaluate in a module-wide context."""

    def run(
        loaded: LoadedRecord, prediction: dict | Prediction | None, pool: Any, evidence: Path, **options: Any
    ) -> dict[str, Any]:
        evidence.mkdir(parents=True, exist_ok=True)
        if isinstance(prediction, dict):  # a file entry
            prediction = Prediction.from_entry({"instance_id": loaded.instance_id, **prediction})
        return SUITE.evaluate(loaded, prediction, Ctx(evidence, pool, resources, **options))

    return run


def candidate_patch(tmp_path: Path, name: str, edits: dict[str, Any]) -> str:
    """A candidate's patch: the record's repository at base, ``edits`` ({path: text -> text}) applied, ``git diff``."""
    loaded = load(name)
    work = tmp_path / f"cand-{name}-{len(list(tmp_path.glob('cand-*')))}"
    subprocess.run(["git", "clone", "-q", loaded.record.repo_url, str(work)], check=True)
    subprocess.run(["git", "checkout", "-q", loaded.record.base_commit], cwd=work, check=True)
    for rel, edit in edits.items():
        path = work / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(edit(path.read_text(encoding="utf-8") if path.exists() else ""), encoding="utf-8")
    subprocess.run(["git", "add", "-A"], cwd=work, check=True)
    return subprocess.run(["git", "diff", "--cached"], cwd=work, check=True, capture_output=True, text=True).stdout


def real_fix(text: str) -> str:
    return text.replace("value * percent / 10;", "value * percent / 100;")


@pytest.fixture(scope="module")
def fixed_calc(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The candidate patch that really fixes ``calc`` (made once per module)."""
    return candidate_patch(tmp_path_factory.mktemp("fixed"), "calc", {CALC: real_fix})


GOLD = Prediction("calc", "gold", PredictionKind.GOLD)  # the kind decides; the id is not read


def reference_fix(tmp_path: Path, name: str) -> str:
    """The record's own fix p_f as a candidate would submit it (``git diff base fix_commit`` minus tests):
    a predictions file cannot ask for the gold fix."""
    record = load(name).record
    work = tmp_path / f"ref-{name}"
    subprocess.run(["git", "clone", "-q", record.repo_url, str(work)], check=True)
    diff = subprocess.run(
        ["git", "diff", record.base_commit, record.fix_commit], cwd=work, check=True, capture_output=True, text=True
    ).stdout
    return split_patch(diff, record.is_test_path)[0]


# ------------------------------------------------------------------------------------------------ gold


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("calc", "expected:<30> but was:<300>"),  # the fast lane's device run
        pytest.param("textutils", 'Expected: is "hello-world"', marks=pytest.mark.e2e),
    ],
)
def test_gold_is_accepted_from_real_runs(
    device_factory: Any, tmp_path: Path, evaluate: Any, name: str, message: str
) -> None:
    device, pool = device_factory()
    result = evaluate(load(name), GOLD, pool, tmp_path / "ev")
    assert (result["reason"], result["passed"], result["accepted"]) == ("resolved", True, True), result["detail"]
    states = result["states"]
    assert states["S_bug"]["target"] == "assertion_failure" and message in states["S_bug"]["target_detail"]
    assert states["S_fix"]["target"] == "passed"
    assert all(v == "passed" for v in states["S_fix"]["regression"].values()) and states["S_fix"]["regression"]
    commands = [e["cmd"] for e in device_log(device) if "cmd" in e]
    instruments = [c for c in commands if c.startswith("am instrument")]
    assert instruments and all(c.startswith("am instrument -w -r -e class ") and "#" in c for c in instruments)
    assert any(c == "pm install -r -t /data/local/tmp/mb-app.apk" for c in commands)
    # the verdict is re-derived from the evidence folder alone, by the same function
    again = SUITE.regrade(load(name), tmp_path / "ev")
    assert {k: again[k] for k in ("reason", "passed", "q_outcome", "states")} == {
        k: result[k] for k in ("reason", "passed", "q_outcome", "states")
    }


@pytest.mark.e2e
def test_regrade_refuses_evidence_of_other_record_bytes(device_factory: Any, tmp_path: Path, evaluate: Any) -> None:
    _, pool = device_factory()
    evaluate(load("textutils"), GOLD, pool, tmp_path / "ev")
    loaded = load("textutils")
    changed = dataclasses.replace(loaded, record=loaded.record.model_copy(update={"issue": "edited"}))
    with pytest.raises(RecordMismatch):
        SUITE.regrade(changed, tmp_path / "ev")


def test_empty_and_missing_predictions_are_not_resolved(tmp_path: Path, evaluate: Any) -> None:
    empty = evaluate(load("calc"), {"model_patch": "", "model_name_or_path": "m"}, None, tmp_path / "e1")
    assert (empty["reason"], empty["passed"], empty["retryable"]) == ("empty_patch", False, False)
    missing = evaluate(load("calc"), None, None, tmp_path / "e2")
    assert (missing["reason"], missing["passed"], missing["retryable"]) == ("missing_prediction", False, False)
    assert summarize([empty, missing])["headline"]["denominator"] == 2


# ------------------------------------------------------------------------------------------------ infrastructure


@pytest.mark.parametrize(
    ("script", "kind"),
    [
        (Script(instrument="crash"), "app_crash"),
        (Script(instrument="hang"), "instrumentation_timeout"),
        (Script(install_failure="INSTALL_FAILED_INSUFFICIENT_STORAGE"), "install_failed"),
        (Script(boot_delay_s=3600), "boot_timeout"),
        (Script(offline=True), "device_offline"),
        (Script(api_level=21), "device_mismatch"),
    ],
    ids=["crash", "hang", "install", "slow-boot", "offline", "api-level"],
)
@pytest.mark.e2e
def test_scripted_infrastructure_is_retried_on_the_same_candidate(
    device_factory: Any, tmp_path: Path, evaluate: Any, fixed_calc: str, script: Script, kind: str
) -> None:
    _, pool = device_factory(script)
    patch = fixed_calc
    result = evaluate(load("calc", **FAST), {"model_patch": patch, "model_name_or_path": "m"}, pool, tmp_path / "ev")
    assert (result["reason"], result["retryable"], result["infra_kind"]) == ("infra_error", True, kind), result[
        "detail"
    ]
    candidate = [a for a in result["attempt_log"] if a["state"] == "candidate"]
    assert len(candidate) == 3 and len({a["patches_sha256"] for a in candidate}) == 1
    assert all(a["infra_kind"] == kind for a in candidate)
    folders = [a["folder"] for a in result["attempt_log"]]
    assert len(folders) == len(set(folders))  # every attempt has its own folder
    retry = json.loads((tmp_path / "ev" / "states" / "candidate" / "attempt-2" / "facts.json").read_text())
    assert retry["build_reused_from"] == "attempt-1"  # a device fault re-runs the same artefacts
    summary = summarize(
        [result, {**result, "instance_id": "other", "reason": "resolved", "passed": True, "retryable": False}]
    )
    assert (summary["headline"]["numerator"], summary["headline"]["denominator"]) == (1, 1)
    assert summary["infra_by_kind"] == {kind: 1}


@pytest.mark.e2e
def test_a_transient_crash_is_retried_and_the_retry_counts(
    device_factory: Any, tmp_path: Path, evaluate: Any, fixed_calc: str
) -> None:
    _, pool = device_factory(Script(instrument="crash", scripted_times=1))
    patch = fixed_calc
    result = evaluate(load("calc", **PATIENT), {"model_patch": patch, "model_name_or_path": "m"}, pool, tmp_path / "ev")
    assert (result["reason"], result["passed"]) == ("resolved", True), result["detail"]
    assert [a["infra_kind"] for a in result["attempt_log"]] == ["app_crash", None]
    # the flake policy: the target passed only on the retry: passed_flaky, each test's attempts kept,
    # counted by the lenient rate only
    assert result["passed_flaky"] is True and "passed_flaky" in result["flags"]
    attempts = result["test_attempts"]
    assert list(attempts.values())[0] == ["process_crash", "passed"]
    headline = summarize([result])["headline"]
    assert (headline["numerator"], headline["lenient"]["numerator"], headline["denominator"]) == (0, 1, 1)


# ------------------------------------------------------------------------------------------------ candidates


@pytest.mark.e2e
def test_a_real_fix_resolves_and_a_wrong_file_is_wrong_localization(
    device_factory: Any, tmp_path: Path, evaluate: Any, fixed_calc: str
) -> None:
    _, pool = device_factory()
    good = evaluate(
        load("calc"),
        {"model_patch": fixed_calc, "model_name_or_path": "m", "ranked_files": [CALC]},
        pool,
        tmp_path / "e1",
    )
    assert (good["reason"], good["fail_to_pass"], good["regression_safe"]) == ("resolved", True, True)
    assert good["localization"]["hit@1"] == 1.0
    assert good["passed_flaky"] is False and list(good["test_attempts"].values())[0] == ["passed"]
    wrong = evaluate(
        load("calc"),
        {
            "model_patch": candidate_patch(tmp_path, "calc", {"README.md": lambda t: t + "fixed\n"}),
            "model_name_or_path": "m",
        },
        pool,
        tmp_path / "e2",
    )
    assert (wrong["reason"], wrong["cause"], wrong["q_outcome"]) == (
        "unresolved",
        "no_production_edit",
        "assertion_failure",
    )


PROBE = (
    "package com.example.calc;\n\nfinal class Probe {\n    // a fix that holds only under the grader\n"
    '    static boolean underTest() {\n        return System.getenv("CI") != null;\n    }\n}\n'
)


def test_static_integrity_finding_strict_and_report(device_factory: Any, tmp_path: Path, evaluate: Any) -> None:
    """A real fix plus a production class reading a runner marker: under --mb-integrity=strict a
    policy_violation of kind integrity; the same evidence re-graded in report mode resolves with the finding."""
    _, pool = device_factory()
    patch = candidate_patch(
        tmp_path, "calc", {CALC: real_fix, "src/main/java/com/example/calc/Probe.java": lambda _t: PROBE}
    )
    result = evaluate(
        load("calc"), {"model_patch": patch, "model_name_or_path": "m"}, pool, tmp_path / "ev", mb_integrity="strict"
    )
    finding = {
        "file": "src/main/java/com/example/calc/Probe.java",
        "line": 6,
        "kind": "runner_marker",
        "what": "environment CI",
        "snippet": 'return System.getenv("CI") != null;',
    }
    assert (result["reason"], result["policy_kind"], result["integrity_findings"]) == (
        "policy_violation",
        "integrity",
        [finding],
    )
    assert result["properties"]["integrity_count"] == 1 and result["fail_to_pass"] is True
    grading = tmp_path / "ev" / "grading.json"
    grading.write_text(json.dumps({**json.loads(grading.read_text()), "integrity": "report"}))
    again = SUITE.regrade(load("calc"), tmp_path / "ev")
    assert (again["reason"], again["integrity_findings"]) == ("resolved", [finding])


@pytest.mark.e2e
def test_candidate_that_crashes_the_app_stays_in_the_denominator(
    device_factory: Any, tmp_path: Path, evaluate: Any
) -> None:
    """A candidate cannot turn its failure into 'infrastructure' by killing the process: the reference state
    passes on the same device, so the persisting crash is attributed to the candidate."""
    _, pool = device_factory()
    crash = candidate_patch(
        tmp_path,
        "calc",
        {CALC: lambda t: t.replace("return value * percent / 10;", "System.exit(3);\n        return 0;")},
    )
    result = evaluate(load("calc", **PATIENT), {"model_patch": crash, "model_name_or_path": "m"}, pool, tmp_path / "ev")
    assert (result["reason"], result["retryable"], result["cause"]) == ("app_crash", False, "app_crash"), result[
        "detail"
    ]
    states = [a["state"] for a in result["attempt_log"]]
    assert states == ["candidate"] * 3 + ["reference"]


@pytest.mark.e2e
def test_candidate_that_hangs_is_a_timeout_not_infrastructure(
    device_factory: Any, tmp_path: Path, evaluate: Any
) -> None:
    _, pool = device_factory()
    hang = candidate_patch(
        tmp_path,
        "calc",
        {
            CALC: lambda t: t.replace(
                "return value * percent / 10;", "while (value >= 0) { value += 0; }\n        return 0;"
            )
        },
    )
    result = evaluate(load("calc", **HANG), {"model_patch": hang, "model_name_or_path": "m"}, pool, tmp_path / "ev")
    assert (result["reason"], result["retryable"], result["cause"]) == ("timeout", False, "timeout"), result["detail"]


@pytest.mark.e2e
def test_candidate_shadowing_junit_assertions_is_caught(device_factory: Any, tmp_path: Path, evaluate: Any) -> None:
    """A no-op org.junit.Assert shipped in the app would make q pass; the app artefact is inspected. On a device whose
    app classes come first on the class path (as on Android; the default simulated device loads JUnit before them)."""
    _, pool = device_factory(Script(status_channel="stdout"))
    fake = (
        "package org.junit;\n\npublic class Assert {\n    public static void assertEquals(long a, long b) {}\n"
        "    public static void assertEquals(Object a, Object b) {}\n    public static void fail(String m) {}\n}\n"
    )
    patch = candidate_patch(tmp_path, "calc", {"src/main/java/org/junit/Assert.java": lambda _t: fake})
    result = evaluate(load("calc"), {"model_patch": patch, "model_name_or_path": "m"}, pool, tmp_path / "ev")
    # the shadowing really worked on the device: the failing canary passed too ...
    assert result["q_outcome"] == "runner_compromised" and "must fail on its assertion" in result["detail"]
    assert (result["reason"], result["passed"]) == ("policy_violation", False)  # ... and is not rewarded
    assert "shadows_test_stack" in result["flags"]


@pytest.mark.e2e
def test_candidate_editing_the_test_is_restored_and_flagged(device_factory: Any, tmp_path: Path, evaluate: Any) -> None:
    _, pool = device_factory()
    test_file = "src/test/java/com/example/calc/CalculatorTest.java"
    patch = candidate_patch(
        tmp_path, "calc", {test_file: lambda t: t.replace("assertEquals(5,", "assertEquals(5 + 0,")}
    )
    result = evaluate(load("calc"), {"model_patch": patch, "model_name_or_path": "m"}, pool, tmp_path / "ev")
    assert "edits_tests" in result["flags"]
    assert (result["reason"], result["cause"]) == ("unresolved", "no_production_edit")


@pytest.mark.e2e
def test_a_missing_target_method_from_real_junit_is_not_run(device_factory: Any, tmp_path: Path, evaluate: Any) -> None:
    _, pool = device_factory()
    loaded = load("calc")
    wrong = dataclasses.replace(
        loaded, record=loaded.record.model_copy(update={"target": "com.example.calc.CalculatorTest#nope"})
    )
    result = evaluate(wrong, GOLD, pool, tmp_path / "ev")
    assert result["reason"] == "record_rejected"
    assert result["states"]["S_bug"]["target"] == "not_run"
    output = (tmp_path / "ev" / "states" / "S_bug" / "attempt-1" / "instrument.0.txt").read_text()
    assert "test=nope" not in output and "test=canary_fail_" in output  # the canaries ran, q does not exist


# ------------------------------------------------------------------------------------------------ pool under xdist


@pytest.mark.e2e
def test_xdist_workers_never_share_a_device(adb: AdbServer, tmp_path: Path) -> None:
    """``-n 2``, two simulated devices, four device items over two repositories: from the devices' own logs,
    every lease on a device ends before the next begins, and one item never holds two devices."""
    devices = [SimDevice(tmp_path / f"d{i}") for i in range(2)]
    try:
        for device in devices:
            adb.connect(device)
        predictions = tmp_path / "preds.jsonl"
        readme = {
            name: candidate_patch(tmp_path, name, {"README.md": lambda t: t + "x\n"}) for name in ("calc", "textutils")
        }
        rows = [
            {"instance_id": f"mobilebench__{name}-1", "model_name_or_path": model, "model_patch": patch}
            for name in ("calc", "textutils")
            for model, patch in (("fixer", reference_fix(tmp_path, name)), ("readme", readme[name]))
        ]
        predictions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        cmd = [
            sys.executable,
            "-m",
            "pytest",
            str(CASES),
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            f"--predictions={predictions}",
            f"--mb-devices={','.join(d.serial for d in devices)}",
            f"--mb-adb-server=127.0.0.1:{adb.port}",
            f"--mb-device-lock-dir={tmp_path / 'locks'}",
            f"--mb-reports-dir={tmp_path / 'reports'}",
            f"--mb-summary={tmp_path / 'summary.json'}",
            "-q",
        ]
        done = subprocess.run(cmd, check=False, cwd=ROOT, capture_output=True, text=True, timeout=900)
        assert (tmp_path / "summary.json").is_file(), done.stdout[-3000:] + done.stderr[-3000:]
        owners: dict[str, set[str]] = {}
        for device in devices:
            held: str | None = None
            for event in device_log(device):
                mark = event.get("mark", "")
                if mark.startswith("lease-begin "):
                    assert held is None, f"{device.serial}: {mark} while {held} holds it"
                    held = mark.split(" ", 1)[1]
                    owners.setdefault(held, set()).add(device.serial)
                elif mark.startswith("lease-end "):
                    assert held == mark.split(" ", 1)[1]
                    held = None
                elif "instrument" in event:
                    assert held is not None, "an instrumentation ran outside any lease"
        assert len(owners) == 4 and all(len(serials) == 1 for serials in owners.values()), owners
        summary = json.loads((tmp_path / "summary.json").read_text())
        live = summary["suite_tables"]["device_repair"]
        assert (live["headline"]["numerator"], live["headline"]["denominator"]) == (2, 4), summary
        # the plugin's --mb-regrade re-grades the run from its evidence through the suite's regrade
        (run_dir,) = [p for p in (tmp_path / "reports").iterdir() if p.is_dir() and p.name[:2] == "20"]
        regrade = [
            sys.executable,
            "-m",
            "pytest",
            str(CASES),
            "-p",
            "no:cacheprovider",
            f"--predictions={predictions}",
            f"--mb-regrade={run_dir}",
            f"--mb-reports-dir={tmp_path / 'reports'}",
            f"--mb-summary={tmp_path / 'regraded.json'}",
            "-q",
        ]
        redone = subprocess.run(regrade, check=False, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert (tmp_path / "regraded.json").is_file(), redone.stdout[-3000:] + redone.stderr[-2000:]
        again = json.loads((tmp_path / "regraded.json").read_text())
        assert again["regrade_problems"] == []
        assert again["suite_tables"]["device_repair"]["headline"] == live["headline"]
        assert (
            again["suite_tables"]["device_repair"]["failure_causes"]
            == live["failure_causes"]
            == {"no_production_edit": 2}
        )
    finally:
        for device in devices:
            adb.adb("disconnect", device.serial)
            device.close()


def test_a_candidate_that_does_not_apply_is_its_own_fault(
    device_factory: Any, tmp_path: Path, evaluate: Any, fixed_calc: str
) -> None:
    _, pool = device_factory()
    stale = fixed_calc.replace("value * percent / 10;", "value * percent / 7;")
    result = evaluate(load("calc"), {"model_patch": stale, "model_name_or_path": "m"}, pool, tmp_path / "e1")
    assert (result["reason"], result["retryable"], result["patch_valid"]) == ("patch_apply_failed", False, False)
    garbage = evaluate(load("calc"), {"model_patch": "not a diff\n", "model_name_or_path": "m"}, pool, tmp_path / "e2")
    assert (garbage["reason"], garbage["retryable"]) == ("patch_apply_failed", False)


@pytest.mark.e2e
def test_candidate_shipping_its_own_test_class_is_caught(device_factory: Any, tmp_path: Path, evaluate: Any) -> None:
    """A production file named like the test class, with a passing target method, is loaded instead of the
    record's test (the app's classes win): the build is inspected for classes both artefacts ship."""
    _, pool = device_factory()
    fake = (
        "package com.example.calc;\n\npublic class CalculatorTest {\n"
        "    @org.junit.Test public void percentOfHundred() {}\n}\n"
    )
    patch = candidate_patch(tmp_path, "calc", {"src/main/java/com/example/calc/CalculatorTest.java": lambda _t: fake})
    loaded = load("calc")
    # the app build compiles src/main against JUnit too, so the fake compiles (a plan that allows it)
    plan = loaded.record.plan.model_copy(
        update={
            "build_app": loaded.record.plan.build_app.replace(
                "javac -proc:none -d build/app", "javac -proc:none -cp /usr/share/java/junit4.jar -d build/app"
            )
        }
    )
    loaded = dataclasses.replace(loaded, record=loaded.record.model_copy(update={"plan": plan}))
    result = evaluate(loaded, {"model_patch": patch, "model_name_or_path": "m"}, pool, tmp_path / "ev")
    assert result["q_outcome"] == "runner_compromised"  # the fake test class really ran (it has no canaries)
    assert (result["reason"], result["passed"]) == ("policy_violation", False)
    assert "shadows_test_stack" in result["flags"]
