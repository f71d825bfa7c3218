"""Instrumentation, xcresult and OHOS parsers, and the target classification, on the documented output shapes.

Samples are self-made in the formats the tools print (instrumentation: androidx.test's
InstrumentationResultPrinter and ``am instrument``; xcresult: ``xcresulttool get test-results tests`` and the
legacy ``--legacy --format json`` documents; OHOS: Hypium's OhReport lines). The simulated-device tests
(``test_device_sim.py``) add outputs produced by real JUnit runs.
"""

from __future__ import annotations

import pytest

from pytest_mobilebench.parsers import get_parser
from pytest_mobilebench.parsers.instrumentation import (
    TestStatus,
    first_exception,
    parse_instrumentation,
)
from pytest_mobilebench.parsers.ohos import OhosStatus, parse_ohos
from pytest_mobilebench.parsers.xcresult import XcStatus, parse_legacy, parse_tests_json
from pytest_mobilebench.states import TestState
from pytest_mobilebench.suites.device_repair.contract import (
    TargetOutcome,
    classify_ohos,
    classify_target,
    classify_xcresult,
)

CLS = "com.example.calc.CalculatorTest"
Q = f"{CLS}#percentOfHundred"


def block(test: str, code: int, *, cls: str = CLS, stack: str | None = None) -> str:
    head = (
        f"INSTRUMENTATION_STATUS: class={cls}\nINSTRUMENTATION_STATUS: current=1\n"
        "INSTRUMENTATION_STATUS: id=AndroidJUnitRunner\nINSTRUMENTATION_STATUS: numtests=1\n"
    )
    if stack:
        head += f"INSTRUMENTATION_STATUS: stack={stack}\n"
    return (
        head + f"INSTRUMENTATION_STATUS: stream=\n{cls}:\nINSTRUMENTATION_STATUS: test={test}\n"
        f"INSTRUMENTATION_STATUS_CODE: {code}\n"
    )


RESULT_OK = "INSTRUMENTATION_RESULT: stream=\n\nTime: 0.012\n\nOK (1 test)\n\n\nINSTRUMENTATION_CODE: -1\n"
RESULT_FAIL = (
    "INSTRUMENTATION_RESULT: stream=\n\nTime: 0.02\nThere was 1 failure:\n\nFAILURES!!!\n"
    "Tests run: 1,  Failures: 1\n\n\nINSTRUMENTATION_CODE: -1\n"
)
ASSERT_STACK = (
    "java.lang.AssertionError: expected:<30> but was:<300>\n\tat org.junit.Assert.fail(Assert.java:89)\n"
    "\tat org.junit.Assert.failNotEquals(Assert.java:835)\n"
    "\tat com.example.calc.CalculatorTest.percentOfHundred(CalculatorTest.java:16)"
)

SAMPLES = {
    "pass": block("percentOfHundred", 1) + block("percentOfHundred", 0) + RESULT_OK,
    "assertion": block("percentOfHundred", 1) + block("percentOfHundred", -2, stack=ASSERT_STACK) + RESULT_FAIL,
    "hamcrest": block("percentOfHundred", 1)
    + block(
        "percentOfHundred",
        -2,
        stack='java.lang.AssertionError: \nExpected: is "hello-world"\n     but: was "hello--world-"\n'
        "\tat org.hamcrest.MatcherAssert.assertThat(MatcherAssert.java:20)",
    )
    + RESULT_FAIL,
    "truth": block("percentOfHundred", 1)
    + block(
        "percentOfHundred",
        -2,
        stack="com.google.common.truth.AssertionErrorWithFacts: expected: 30\nbut was : 300\n"
        "\tat com.example.calc.CalculatorTest.percentOfHundred(CalculatorTest.java:16)",
    )
    + RESULT_FAIL,
    "exception": block("percentOfHundred", 1)
    + block(
        "percentOfHundred",
        -2,
        stack="java.lang.NullPointerException: Attempt to invoke virtual method on a null object reference\n"
        "\tat com.example.calc.Calculator.percentOf(Calculator.java:14)",
    )
    + RESULT_FAIL,
    "assumption": block("percentOfHundred", 1)
    + block(
        "percentOfHundred",
        -4,
        stack="org.junit.AssumptionViolatedException: got: <false>, expected: is <true>\n"
        "\tat org.junit.Assume.assumeTrue(Assume.java:68)",
    )
    + RESULT_OK,
    "ignored": block("percentOfHundred", 1) + block("percentOfHundred", -3) + RESULT_OK,
    "crash_before_test": "INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n",
    "crash_mid_test": block("percentOfHundred", 1)
    + "INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n",
    "missing_method": block("initializationError", 1, cls="org.junit.runner.manipulation.Filter")
    + block(
        "initializationError",
        -2,
        cls="org.junit.runner.manipulation.Filter",
        stack=f"java.lang.Exception: No tests found matching Method percentOf({CLS}) from "
        "org.junit.internal.requests.ClassRequest@5e9f23b4\n"
        "\tat org.junit.internal.requests.FilterRequest.getRunner(FilterRequest.java:40)",
    )
    + RESULT_FAIL,
    "zero_tests": "INSTRUMENTATION_RESULT: stream=\n\nTime: 0.001\n\nOK (0 tests)\n\n\nINSTRUMENTATION_CODE: -1\n",
    "runner_missing": (
        "INSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: "
        "ComponentInfo{com.example.calc.test/androidx.test.runner.AndroidJUnitRunner}\n"
        "INSTRUMENTATION_STATUS: id=ActivityManagerService\nINSTRUMENTATION_STATUS_CODE: -1\n"
        "android.util.AndroidException: INSTRUMENTATION_FAILED: "
        "com.example.calc.test/androidx.test.runner.AndroidJUnitRunner\n"
    ),
    "aborted": block("percentOfHundred", 1) + "INSTRUMENTATION_ABORTED: System has crashed.\n",
    "cut_off": block("percentOfHundred", 1) + block("percentOfHundred", 0),
    "twice": block("percentOfHundred", 1) + block("percentOfHundred", -2, stack=ASSERT_STACK) * 2 + RESULT_FAIL,
}

EXPECTED = {
    "pass": TargetOutcome.PASSED,
    "assertion": TargetOutcome.ASSERTION_FAILURE,
    "hamcrest": TargetOutcome.ASSERTION_FAILURE,
    "truth": TargetOutcome.ASSERTION_FAILURE,
    "exception": TargetOutcome.EXCEPTION,
    "assumption": TargetOutcome.SKIPPED,
    "ignored": TargetOutcome.SKIPPED,
    "crash_before_test": TargetOutcome.PROCESS_CRASH,
    "crash_mid_test": TargetOutcome.PROCESS_CRASH,
    "missing_method": TargetOutcome.NOT_RUN,
    "zero_tests": TargetOutcome.NOT_RUN,
    "runner_missing": TargetOutcome.RUNNER_FAILED,
    "aborted": TargetOutcome.PROCESS_CRASH,
    "cut_off": TargetOutcome.PROCESS_CRASH,
    "twice": TargetOutcome.NOT_RUN,
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_instrumentation_target_outcome(name: str) -> None:
    outcome, detail = classify_target(parse_instrumentation(SAMPLES[name]), Q)
    assert outcome is EXPECTED[name], detail


def test_only_an_assertion_counts_and_nothing_skipped_passes() -> None:
    passing = {n for n, o in EXPECTED.items() if o is TargetOutcome.PASSED}
    assert passing == {"pass"}
    assert classify_target(parse_instrumentation(SAMPLES["pass"]), Q, timed_out="no_output")[0] is TargetOutcome.TIMEOUT


def test_instrumentation_records_keep_counts_stack_and_messages() -> None:
    run = parse_instrumentation(SAMPLES["assertion"])
    record = run.tests[Q]
    assert (record.starts, record.ends, record.status) == (1, 1, TestStatus.FAILED)
    assert record.first_exception == "java.lang.AssertionError"
    assert record.stack.splitlines()[-1].endswith("(CalculatorTest.java:16)")
    assert run.result_code == -1 and run.short_msg is None
    crashed = parse_instrumentation(SAMPLES["crash_mid_test"])
    assert crashed.tests[Q].status is TestStatus.INCOMPLETE and crashed.process_crashed
    assert parse_instrumentation(SAMPLES["runner_missing"]).failed.endswith("AndroidJUnitRunner")
    assert parse_instrumentation(SAMPLES["ignored"]).tests[Q].status is TestStatus.IGNORED


def test_first_exception_skips_frames_and_reads_caused_by() -> None:
    assert (
        first_exception("\tat a.B.c(B.java:1)\njava.lang.IllegalStateException: boom")
        == "java.lang.IllegalStateException"
    )
    assert first_exception("junit.framework.AssertionFailedError") == "junit.framework.AssertionFailedError"
    assert first_exception("") is None


def test_registered_instrumentation_parser_maps_states() -> None:
    parse = get_parser("instrumentation")
    assert parse(SAMPLES["pass"], {}).tests == {Q: TestState.PASS}
    assert parse(SAMPLES["ignored"], {}).tests == {Q: TestState.SKIP}
    assert parse(SAMPLES["crash_mid_test"], {}).tests == {Q: TestState.FAIL}
    from pytest_mobilebench.parsers import ParseError

    with pytest.raises(ParseError):
        parse("gradle says hello\n", {})


# ---------------------------------------------------------------------------------------------- xcresult

XC_TARGET = "CalcTests/CalculatorTests/testPercent"


def xc_case(name: str, result: str, *messages: str) -> dict:
    return {
        "name": f"{name}()",
        "nodeType": "Test Case",
        "nodeIdentifier": f"CalculatorTests/{name}()",
        "result": result,
        "duration": "0.01s",
        "children": [{"name": m, "nodeType": "Failure Message", "result": "Failed"} for m in messages],
    }


def xc_doc(*cases: dict) -> dict:
    return {
        "devices": [{"deviceName": "iPhone 15", "osVersion": "17.5"}],
        "testPlanConfigurations": [],
        "testNodes": [
            {
                "name": "CalcPlan",
                "nodeType": "Test Plan",
                "result": "Failed",
                "children": [
                    {
                        "name": "CalcTests",
                        "nodeType": "Unit test bundle",
                        "result": "Failed",
                        "children": [
                            {
                                "name": "CalculatorTests",
                                "nodeType": "Test Suite",
                                "result": "Failed",
                                "children": list(cases),
                            }
                        ],
                    }
                ],
            }
        ],
    }


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        (xc_case("testPercent", "Passed"), TargetOutcome.PASSED),
        (
            xc_case(
                "testPercent",
                "Failed",
                'CalculatorTests.swift:12: XCTAssertEqual failed: ("300") is not equal to ("30")',
            ),
            TargetOutcome.ASSERTION_FAILURE,
        ),
        (
            xc_case("testPercent", "Failed", "Crash: CalcApp (4242): Fatal error: Unexpectedly found nil"),
            TargetOutcome.PROCESS_CRASH,
        ),
        (
            xc_case("testPercent", "Failed", "Test crashed with signal abrt before starting test execution."),
            TargetOutcome.PROCESS_CRASH,
        ),
        (xc_case("testPercent", "Skipped", "Test skipped - not on this OS"), TargetOutcome.SKIPPED),
        (
            xc_case("testPercent", "Failed", "CalculatorTests.swift:14: error: Thrown error: DecodingError"),
            TargetOutcome.EXCEPTION,
        ),
        (xc_case("testOther", "Passed"), TargetOutcome.NOT_RUN),
    ],
)
def test_xcresult_tests_json_outcomes(case: dict, expected: TargetOutcome) -> None:
    tests = parse_tests_json(xc_doc(case))
    assert classify_xcresult(tests, XC_TARGET)[0] is expected


def test_xcresult_zero_tests_and_bad_document() -> None:
    assert parse_tests_json({"testNodes": []}) == {}
    assert classify_xcresult({}, XC_TARGET)[0] is TargetOutcome.NOT_RUN
    from pytest_mobilebench.parsers import ParseError

    with pytest.raises(ParseError, match="testNodes"):
        parse_tests_json({"actions": {}})


def _v(value: str) -> dict:
    return {"_type": {"_name": "String"}, "_value": value}


def test_xcresult_legacy_form_with_summary_refs() -> None:
    def meta(name: str, status: str, ref: str | None = None) -> dict:
        node = {
            "_type": {"_name": "ActionTestMetadata"},
            "identifier": _v(f"CalculatorTests/{name}()"),
            "testStatus": _v(status),
        }
        if ref:
            node["summaryRef"] = {"_type": {"_name": "Reference"}, "id": _v(ref)}
        return node

    doc = {
        "_type": {"_name": "ActionTestPlanRunSummaries"},
        "summaries": {
            "_values": [
                {
                    "testableSummaries": {
                        "_values": [
                            {
                                "targetName": _v("CalcTests"),
                                "tests": {
                                    "_values": [
                                        {
                                            "_type": {"_name": "ActionTestSummaryGroup"},
                                            "subtests": {
                                                "_values": [
                                                    {
                                                        "_type": {"_name": "ActionTestSummaryGroup"},
                                                        "subtests": {
                                                            "_values": [
                                                                meta("testPercent", "Failure", "0~abc"),
                                                                meta("testAdd", "Success"),
                                                                meta("testSkip", "Skipped"),
                                                            ]
                                                        },
                                                    }
                                                ]
                                            },
                                        }
                                    ]
                                },
                            }
                        ]
                    }
                }
            ]
        },
    }
    summaries = {
        "0~abc": {
            "_type": {"_name": "ActionTestSummary"},
            "failureSummaries": {"_values": [{"message": _v('XCTAssertEqual failed: ("300") is not equal to ("30")')}]},
        }
    }
    tests = parse_legacy(doc, summaries)
    assert tests[XC_TARGET].status is XcStatus.FAILED
    assert classify_xcresult(tests, XC_TARGET)[0] is TargetOutcome.ASSERTION_FAILURE
    assert tests["CalcTests/CalculatorTests/testAdd"].status is XcStatus.PASSED
    assert classify_xcresult(tests, "CalcTests/CalculatorTests/testSkip")[0] is TargetOutcome.SKIPPED
    # without the referenced summary the failure has no assertion message: never taken as an assertion
    assert classify_xcresult(parse_legacy(doc), XC_TARGET)[0] is TargetOutcome.EXCEPTION


# ---------------------------------------------------------------------------------------------- OHOS


def spec(test: str, code: int, *, stack: str = "", stream: str = "", after: str = "") -> str:
    start = (
        f"OHOS_REPORT_STATUS: class=CalcSuite\nOHOS_REPORT_STATUS: current=1\nOHOS_REPORT_STATUS: id=JS\n"
        f"OHOS_REPORT_STATUS: numtests=1\nOHOS_REPORT_STATUS: stream=\nOHOS_REPORT_STATUS: test={test}\n"
        "OHOS_REPORT_STATUS_CODE: 1\n\n"
    )
    end = (
        "OHOS_REPORT_STATUS: class=CalcSuite\nOHOS_REPORT_STATUS: current=1\nOHOS_REPORT_STATUS: id=JS\n"
        "OHOS_REPORT_STATUS: numtests=1\n\n"
    )
    end += (f"OHOS_REPORT_STATUS: stack={stack}\n" if stack else "OHOS_REPORT_STATUS: stream=\n") + "\n"
    end += f"OHOS_REPORT_STATUS: stream={stream}\n" if stream else ""
    end += f"OHOS_REPORT_STATUS: test={test}\nOHOS_REPORT_STATUS_CODE: {code}\n{after}OHOS_REPORT_STATUS: consuming=4\n"
    return start + end


def ohos_result(run: int, fail: int = 0, error: int = 0, ignore: int = 0) -> str:
    return (
        f"OHOS_REPORT_RESULT: stream=Tests run: {run}, Failure: {fail}, Error: {error}, Pass: "
        f"{run - fail - error}, Ignore: {ignore}\n"
        f"OHOS_REPORT_CODE: {-1 if fail else 0}\nOHOS_REPORT_STATUS: taskconsuming=20\n"
    )


OHOS = {
    "pass": ("OHOS_REPORT_SUM: 1\n" + spec("percentOf", 0) + ohos_result(1), TargetOutcome.PASSED),
    "assertion": (
        "OHOS_REPORT_SUM: 1\n"
        + spec(
            "percentOf",
            -2,
            stack="Error: expect 300 equals 30\n    at anonymous (entry/src/ohosTest/ets/test/Calc.test.ets:12:7)",
            stream="Error in percentOf, expect 300 equals 30",
        )
        + ohos_result(1, fail=1),
        TargetOutcome.ASSERTION_FAILURE,
    ),
    "uncaught_error": (
        "OHOS_REPORT_SUM: 1\n"
        + spec(
            "percentOf",
            -1,
            stack="TypeError: Cannot read property value of undefined",
            stream="Error in percentOf, Cannot read property value of undefined",
        )
        + ohos_result(1, error=1),
        TargetOutcome.EXCEPTION,
    ),
    "skipped": (
        "OHOS_REPORT_SUM: 1\n"
        + spec("percentOf", 0, after="OHOS_REPORT_STATUS: skipReason=not on this device\n")
        + ohos_result(1, ignore=1),
        TargetOutcome.SKIPPED,
    ),
    "crash": (
        "OHOS_REPORT_SUM: 1\n"
        + spec("percentOf", 0).split("OHOS_REPORT_STATUS_CODE: 1\n")[0]
        + "OHOS_REPORT_STATUS_CODE: 1\n",
        TargetOutcome.PROCESS_CRASH,
    ),
    "zero": ("OHOS_REPORT_SUM: 0\n" + ohos_result(0), TargetOutcome.NOT_RUN),
}


@pytest.mark.parametrize("name", sorted(OHOS))
def test_ohos_outcomes(name: str) -> None:
    text, expected = OHOS[name]
    assert classify_ohos(parse_ohos(text), "CalcSuite#percentOf")[0] is expected


def test_ohos_fields() -> None:
    run = parse_ohos(OHOS["assertion"][0])
    test = run.tests["CalcSuite#percentOf"]
    assert (test.starts, test.ends, test.status) == (1, 1, OhosStatus.FAILED)
    assert "expect 300 equals 30" in test.message and test.stack.startswith("Error: expect")
    assert run.declared == 1 and run.result_code == -1 and run.summary.startswith("Tests run: 1, Failure: 1")
    assert parse_ohos(OHOS["crash"][0]).tests["CalcSuite#percentOf"].status is OhosStatus.INCOMPLETE


# ---------------------------------------------------------------------------------------------- real JUnit runs

JAVA_TEST = """\
package demo;

import static org.junit.Assert.assertEquals;
import static org.junit.Assume.assumeTrue;

import org.junit.Ignore;
import org.junit.Test;

public class ShapesTest {
    @Test public void passes() { assertEquals(2, 1 + 1); }
    @Test public void asserts() { assertEquals(30, 300); }
    @Test public void throwsNpe() { String s = null; s.length(); }
    @Test public void assumes() { assumeTrue(false); }
    @Ignore("not today") @Test public void ignored() { }
}
"""


@pytest.mark.skipif(not __import__("shutil").which("javac"), reason="needs a JDK")
@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("passes", TargetOutcome.PASSED),
        ("asserts", TargetOutcome.ASSERTION_FAILURE),
        ("throwsNpe", TargetOutcome.EXCEPTION),
        ("assumes", TargetOutcome.SKIPPED),
        ("ignored", TargetOutcome.SKIPPED),
        ("missing", TargetOutcome.NOT_RUN),
    ],
)
def test_outputs_of_real_junit_runs(
    tmp_path_factory: pytest.TempPathFactory, method: str, expected: TargetOutcome
) -> None:
    """The simulated device's runner (real JUnit 4) prints the status protocol for every shape, incl. a missing
    method."""
    import subprocess

    from adbsim.device import JUNIT_CP, compile_runner

    work = tmp_path_factory.getbasetemp() / "junit-shapes"
    if not (work / "classes" / "demo" / "ShapesTest.class").is_file():
        (work / "src" / "demo").mkdir(parents=True, exist_ok=True)
        (work / "src" / "demo" / "ShapesTest.java").write_text(JAVA_TEST, encoding="utf-8")
        subprocess.run(
            [
                "javac",
                "-proc:none",
                "-cp",
                JUNIT_CP,
                "-d",
                str(work / "classes"),
                str(work / "src" / "demo" / "ShapesTest.java"),
            ],
            check=True,
            capture_output=True,
        )
    runner = compile_runner(work)
    cp = f"{work / 'classes'}:{JUNIT_CP}:{runner}"
    out = subprocess.run(
        ["java", "-cp", cp, "MbInstrumentationRunner", f"demo.ShapesTest#{method}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    assert classify_target(parse_instrumentation(out), f"demo.ShapesTest#{method}")[0] is expected, out
