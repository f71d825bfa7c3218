"""The device-repair contract, records and summary (pure parts, no device)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from pytest_mobilebench.manifest.yamlfile import read_yaml
from pytest_mobilebench.suites.base import check_suite
from pytest_mobilebench.records import ManifestError
from pytest_mobilebench.suites.device_repair import SUITE, localization
from pytest_mobilebench.suites.device_repair.contract import (
    Cause,
    Reason,
    StateOutcome,
    TargetOutcome,
    acceptance,
    candidate_verdict,
    failure_cause,
    state_infra_kind,
)
from pytest_mobilebench.suites.device_repair.execution import shadowing_entries
from pytest_mobilebench.suites.device_repair.flow import classify_paths
from pytest_mobilebench.suites.device_repair.records import record_hash
from pytest_mobilebench.suites.device_repair.summary import summarize

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "cases" / "device_repair"
F = "src/main/java/com/example/calc/Calculator.java"


def outcome(
    target: TargetOutcome | None,
    *,
    built: bool = True,
    applied: bool = True,
    infra: str | None = None,
    regression: dict | None = None,
    detail: str = "",
) -> StateOutcome:
    return StateOutcome("candidate", applied, built, infra, target, detail, regression or {}, "")


def test_suite_implements_the_protocol() -> None:
    check_suite(SUITE, "device_repair")


def test_bundled_records_load() -> None:
    loaded = [r for p in sorted(CASES.glob("*.yaml")) for r in SUITE.load(p, read_yaml(p))]
    assert [r.instance_id for r in loaded] == ["mobilebench__calc-1", "mobilebench__textutils-1"]
    assert {r.group for r in loaded} == {"mobilebench/calc", "mobilebench/textutils"}
    assert set(loaded[0].markers) <= set(SUITE.markers)


def write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


PLAN = """\
suite: device_repair
repo: acme/app
platform: android
construction: issue
plan:
  kind: jvm
  build_app: make app
  build_test: make test
  app_artifact: a.apk
  test_artifact: t.apk
  app_package: com.acme
  test_package: com.acme.test
instances:
"""


def test_one_bad_record_is_an_error_naming_file_line_instance_field(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        PLAN
        + """\
  - instance_id: acme__app-1
    base_commit: abcdef1
    fix_commit: "1234567"
    issue: x
    defect_files: [src/A.java]
    target: com.acme.ATest#works
  - instance_id: acme__app-2
    base_commit: abcdef1
    fix_commit: "1234567"
    issue: x
    defect_files: [src/A.java]
    target: com.acme.ATest
""",
    )
    good, bad = SUITE.load(path, read_yaml(path))
    assert good.instance_id == "acme__app-1"
    assert isinstance(bad, ManifestError)
    assert (bad.instance_id, bad.field, bad.line) == ("acme__app-2", "target", 25)
    assert str(bad).startswith(f"{path}:25: instance 'acme__app-2': field 'target'")


def test_record_needs_fix_commit_or_both_patches(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        PLAN
        + """\
  - instance_id: acme__app-1
    base_commit: abcdef1
    test_patch: "x"
    issue: x
    defect_files: [src/A.java]
    target: com.acme.ATest#works
""",
    )
    (err,) = SUITE.load(path, read_yaml(path))
    assert isinstance(err, ManifestError) and "fix_commit" in str(err)


def test_record_hash_changes_with_any_byte(tmp_path: Path) -> None:
    path = CASES / "mobilebench__calc.yaml"
    (rec,) = SUITE.load(path, read_yaml(path))
    changed = rec.record.model_copy(update={"issue": rec.record.issue + " "})
    assert record_hash(rec.record) == record_hash(SUITE.load(path, read_yaml(path))[0].record)
    assert record_hash(changed) != record_hash(rec.record)


def test_acceptance_contract() -> None:
    bug = outcome(TargetOutcome.ASSERTION_FAILURE)
    fix = outcome(TargetOutcome.PASSED, regression={"a#b": TargetOutcome.PASSED})
    assert acceptance(bug, fix)[0]
    for wrong in (TargetOutcome.EXCEPTION, TargetOutcome.PASSED, TargetOutcome.SKIPPED, TargetOutcome.NOT_RUN):
        assert not acceptance(outcome(wrong), fix)[0]
    assert not acceptance(bug, outcome(TargetOutcome.SKIPPED))[0]
    assert not acceptance(bug, outcome(TargetOutcome.PASSED, regression={"a#b": TargetOutcome.ASSERTION_FAILURE}))[0]


def test_infra_kinds_reference_versus_candidate() -> None:
    unbuilt = outcome(None, built=False)
    assert state_infra_kind(unbuilt, reference=True) == "build_failed"
    assert state_infra_kind(unbuilt, reference=False) is None
    assert state_infra_kind(outcome(TargetOutcome.PROCESS_CRASH), reference=False) == "app_crash"
    assert (
        state_infra_kind(outcome(TargetOutcome.TIMEOUT, detail="no_output deadline hit"), reference=False)
        == "instrumentation_timeout"
    )
    assert state_infra_kind(outcome(None, infra="device_offline"), reference=False) == "device_offline"
    assert state_infra_kind(outcome(TargetOutcome.ASSERTION_FAILURE), reference=True) is None


def test_candidate_verdict_and_attribution() -> None:
    assert candidate_verdict(outcome(TargetOutcome.PASSED), attributed=False) is Reason.RESOLVED
    assert (
        candidate_verdict(
            outcome(TargetOutcome.PASSED, regression={"x#y": TargetOutcome.ASSERTION_FAILURE}), attributed=False
        )
        is Reason.UNRESOLVED
    )
    assert candidate_verdict(outcome(None, applied=False, built=False), attributed=False) is Reason.PATCH_APPLY_FAILED
    # the record's own test patch not applying after the candidate is infrastructure, not the candidate's fault
    assert (
        candidate_verdict(outcome(None, applied=False, built=False, infra="test_patch_apply_failed"), attributed=True)
        is Reason.INFRA_ERROR
    )
    assert candidate_verdict(outcome(None, built=False), attributed=False) is Reason.BUILD_FAILED
    crash = outcome(TargetOutcome.PROCESS_CRASH)
    # a crash is infrastructure unless the reference state passed on the same device
    assert candidate_verdict(crash, attributed=False) is Reason.INFRA_ERROR
    assert candidate_verdict(crash, attributed=True) is Reason.APP_CRASH
    hang = outcome(TargetOutcome.TIMEOUT, detail="no_output deadline hit")
    assert candidate_verdict(hang, attributed=True) is Reason.TIMEOUT
    # a device that is offline stays infrastructure whatever the reference did
    assert candidate_verdict(outcome(None, infra="device_offline"), attributed=True) is Reason.INFRA_ERROR
    assert Reason.INFRA_ERROR.is_infra and not Reason.APP_CRASH.is_infra


@pytest.mark.parametrize(
    ("touched", "production", "state", "cause"),
    [
        (["src/test/T.java"], [], outcome(TargetOutcome.ASSERTION_FAILURE), Cause.NO_PRODUCTION_EDIT),
        (
            ["src/main/Other.java"],
            ["src/main/Other.java"],
            outcome(TargetOutcome.ASSERTION_FAILURE),
            Cause.WRONG_LOCALIZATION,
        ),
        ([F], [F], outcome(TargetOutcome.ASSERTION_FAILURE), Cause.INCOMPLETE_SEMANTIC_FIX),
        ([F], [F], outcome(None, built=False), Cause.BUILD_REGRESSION),
        ([F], [F], outcome(TargetOutcome.NOT_RUN), Cause.TEST_TARGET_MISMATCH),
        ([F], [F], outcome(TargetOutcome.EXCEPTION), Cause.APP_CRASH),
        ([F], [F], outcome(TargetOutcome.PASSED, regression={"a#b": TargetOutcome.EXCEPTION}), Cause.REGRESSION),
        ([F], [F], outcome(TargetOutcome.PASSED), None),
    ],
)
def test_failure_causes(touched: list, production: list, state: StateOutcome, cause: Cause | None) -> None:
    assert failure_cause(touched, production, [F], state) is cause


def test_policy_classes_of_touched_paths() -> None:
    (rec,) = SUITE.load(CASES / "mobilebench__calc.yaml", read_yaml(CASES / "mobilebench__calc.yaml"))
    classes = classify_paths(
        rec.record,
        [
            F,
            "src/test/java/com/example/calc/CalculatorTest.java",
            "build.gradle",
            "build/app/com/example/calc/Calculator.class",
            "gradle/wrapper/gradle-wrapper.properties",
            "README.md",
        ],
    )
    assert classes == {
        "tests": ["src/test/java/com/example/calc/CalculatorTest.java"],
        "build_config": ["build.gradle", "gradle/wrapper/gradle-wrapper.properties"],
        "generated": ["build/app/com/example/calc/Calculator.class"],
        "docs": ["README.md"],
        "production": [F],
    }


def test_shadowing_entries_of_an_archive(tmp_path: Path) -> None:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as jar:
        jar.writestr("com/example/calc/Calculator.class", b"x")
        jar.writestr("org/junit/Assert.class", b"x")
    assert shadowing_entries(buf.getvalue()) == ["org/junit/Assert.class"]
    assert shadowing_entries(b"not a zip") == []
    test = io.BytesIO()
    with zipfile.ZipFile(test, "w") as jar:
        jar.writestr("com/example/calc/Calculator.class", b"x")  # a class both artefacts ship
        jar.writestr("com/example/calc/CalculatorTest.class", b"x")
    assert shadowing_entries(buf.getvalue(), test.getvalue()) == [
        "com/example/calc/Calculator.class",
        "org/junit/Assert.class",
    ]


def test_localization_hit_and_recall() -> None:
    loc = localization(["src/x.java", F, "src/y.java"], [F])
    assert (loc["hit@1"], loc["hit@3"], loc["recall@1"], loc["recall@3"]) == (0.0, 1.0, 0.0, 1.0)
    assert localization(None, [F]) is None and localization("src/x.java", [F]) is None


def row(
    instance: str,
    model: str,
    passed: bool,
    *,
    infra: bool = False,
    repo: str = "a/b",
    construction: str = "issue",
    **extra: object,
) -> dict:
    return {
        "instance_id": instance,
        "model_name_or_path": model,
        "passed": passed,
        "retryable": infra,
        "repo": repo,
        "construction": construction,
        "reason": "infra_error" if infra else ("resolved" if passed else "unresolved"),
        "infra_kind": "device_offline" if infra else None,
        **extra,
    }


def test_summary_pass_at_1_excludes_infra_and_reports_it_apart() -> None:
    rows = [
        row("a-1", "m1", True, fix_lines=2),
        row("a-2", "m1", False, cause="wrong_localization", fix_lines=40),
        row("c-1", "m1", False, infra=True, repo="c/d"),
        row("c-2", "m1", True, repo="c/d", construction="mutation"),
    ]
    s = summarize(rows)
    head = s["headline"]
    assert (head["numerator"], head["denominator"], head["value"]) == (2, 3, pytest.approx(2 / 3))
    assert 0 < head["ci95"][0] < 2 / 3 < head["ci95"][1] < 1
    assert s["infra_by_kind"] == {"device_offline": 1}
    assert s["pass_at_1_macro"] == pytest.approx((0.5 + 1.0) / 2)
    assert s["by_construction"]["mutation"] == {"total": 1, "resolved": 1, "rate": 1.0}
    assert s["by_fix_size"] == {
        "11-50": {"total": 1, "resolved": 0, "rate": 0.0},
        "<=10": {"total": 1, "resolved": 1, "rate": 1.0},
    }
    assert s["failure_causes"] == {"wrong_localization": 1}


def test_summary_all_infra_has_no_value_and_kappa_needs_two_models() -> None:
    s = summarize([row("a-1", "m1", False, infra=True)])
    assert s["headline"]["denominator"] == 0 and s["headline"]["value"] is None
    assert s["agreement"]["fleiss_kappa"] is None


def test_summary_fleiss_kappa_across_models() -> None:
    rows = [
        row(f"t{i}", m, p)
        for i, (a, b) in enumerate([(True, True), (False, False), (True, False), (False, False)])
        for m, p in (("m1", a), ("m2", b))
    ]
    agreement = summarize(rows)["agreement"]
    # table [[2,0],[0,2],[1,1],[0,2]]: P_bar = 0.75, p = (3/8, 5/8), P_e = 34/64, kappa = (0.75 - 34/64) / (1 - 34/64)
    assert agreement["tasks"] == 4
    assert agreement["fleiss_kappa"] == pytest.approx((0.75 - 34 / 64) / (1 - 34 / 64), abs=1e-6)
