"""iOS and HarmonyOS adapters: exact command lines, infrastructure mapping, and xcresult reading through an
injected runner (no Xcode or hdc here: the runner returns documented output shapes)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from pytest_mobilebench.devices import harmony, ios
from pytest_mobilebench.parsers import ParseError
from pytest_mobilebench.suites.device_repair.contract import (
    TargetOutcome,
    classify_xcresult,
)

PLAN = ios.IosPlan(
    scheme="Calc",
    destination="platform=iOS Simulator,id=6F0B1E7A-0000-4000-8000-000000000001",
    derived_data="/tmp/dd",
    workspace="Calc.xcworkspace",
)


def test_xcodebuild_command_lines() -> None:
    assert ios.build_for_testing(PLAN) == [
        "xcodebuild",
        "-workspace",
        "Calc.xcworkspace",
        "-scheme",
        "Calc",
        "-configuration",
        "Debug",
        "-destination",
        "platform=iOS Simulator,id=6F0B1E7A-0000-4000-8000-000000000001",
        "-derivedDataPath",
        "/tmp/dd",
        "build-for-testing",
    ]
    cmd = ios.test_without_building(PLAN, "CalcTests/CalculatorTests/testPercent", "/tmp/r.xcresult")
    assert cmd[-4:] == [
        "test-without-building",
        "-only-testing:CalcTests/CalculatorTests/testPercent",
        "-resultBundlePath",
        "/tmp/r.xcresult",
    ]


@pytest.mark.parametrize(
    ("output", "kind"),
    [
        (
            'error: Signing for "Calc" requires a development team. Select a development team in the Signing '
            "& Capabilities editor.",
            "signing_failed",
        ),
        (
            "xcodebuild: error: Unable to find a destination matching the provided destination specifier:\n"
            "\t\t{ platform:iOS Simulator, id:X }",
            "destination_unavailable",
        ),
        ("Unable to boot the Simulator. launchd failed to respond.", "simulator_boot_failed"),
        ("CalculatorTests.swift:12: error: -[CalcTests.CalculatorTests testPercent] : XCTAssertEqual failed", None),
    ],
)
def test_xcodebuild_infrastructure_kinds(output: str, kind: str | None) -> None:
    assert ios.infra_kind_of(output) == kind


def test_read_results_prefers_the_xcode16_form_and_falls_back_to_legacy() -> None:
    new_doc = {
        "testNodes": [
            {
                "name": "CalcTests",
                "nodeType": "Unit test bundle",
                "children": [
                    {
                        "name": "CalculatorTests",
                        "nodeType": "Test Suite",
                        "children": [
                            {
                                "name": "testPercent()",
                                "nodeType": "Test Case",
                                "nodeIdentifier": "CalculatorTests/testPercent()",
                                "result": "Passed",
                            }
                        ],
                    }
                ],
            }
        ]
    }
    calls: list[list[str]] = []

    def xcode16(argv: Sequence[str], timeout: float) -> tuple[int, str]:
        calls.append(list(argv))
        return 0, json.dumps(new_doc)

    tests = ios.read_results("/r.xcresult", run=xcode16)
    assert classify_xcresult(tests, "CalcTests/CalculatorTests/testPercent")[0] is TargetOutcome.PASSED
    assert calls == [["xcrun", "xcresulttool", "get", "test-results", "tests", "--path", "/r.xcresult"]]

    def v(x: str) -> dict:
        return {"_type": {"_name": "String"}, "_value": x}

    root = {"actions": {"_values": [{"actionResult": {"testsRef": {"id": v("0~tests")}}}]}}
    summaries = {
        "_type": {"_name": "ActionTestPlanRunSummaries"},
        "summaries": {
            "_values": [
                {
                    "testableSummaries": {
                        "_values": [
                            {
                                "targetName": v("CalcTests"),
                                "tests": {
                                    "_values": [
                                        {
                                            "_type": {"_name": "ActionTestMetadata"},
                                            "identifier": v("CalculatorTests/testPercent()"),
                                            "testStatus": v("Failure"),
                                            "summaryRef": {"id": v("0~fail")},
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
    failure = {
        "failureSummaries": {"_values": [{"message": v('XCTAssertEqual failed: ("300") is not equal to ("30")')}]}
    }

    def legacy(argv: Sequence[str], timeout: float) -> tuple[int, str]:
        if "test-results" in argv:
            return 64, "error: unknown subcommand 'test-results'"
        ident = argv[argv.index("--id") + 1] if "--id" in argv else None
        return 0, json.dumps({None: root, "0~tests": summaries, "0~fail": failure}[ident])

    tests = ios.read_results("/r.xcresult", run=legacy)
    assert classify_xcresult(tests, "CalcTests/CalculatorTests/testPercent")[0] is TargetOutcome.ASSERTION_FAILURE

    with pytest.raises(ParseError):
        ios.read_results("/r.xcresult", run=lambda argv, t: (1, "no such bundle"))


HPLAN = harmony.HarmonyPlan(
    bundle="com.example.calc",
    app_hap="entry/build/default/outputs/default/entry-default-signed.hap",
    test_hap="entry/build/default/outputs/ohosTest/entry-ohosTest-signed.hap",
)


def test_harmony_command_lines() -> None:
    assert harmony.aa_test(HPLAN, "127.0.0.1:5555", "CalcSuite#percentOf") == [
        "hdc",
        "-t",
        "127.0.0.1:5555",
        "shell",
        "aa",
        "test",
        "-b",
        "com.example.calc",
        "-m",
        "entry_test",
        "-s",
        "unittest",
        "OpenHarmonyTestRunner",
        "-s",
        "class",
        "CalcSuite#percentOf",
        "-s",
        "timeout",
        "15000",
    ]
    assert harmony.install("SN1", HPLAN.test_hap) == ["hdc", "-t", "SN1", "install", "-r", HPLAN.test_hap]
    assert "module=entry@ohosTest" in harmony.build_test(HPLAN) and "module=entry@default" in harmony.build_app(HPLAN)
    with pytest.raises(ValueError, match="ONE spec"):
        harmony.aa_test(HPLAN, "SN1", "CalcSuite")


@pytest.mark.parametrize(
    ("output", "kind"),
    [
        ("[Fail][E001005] Device not found or connected", "device_offline"),
        ("[Empty]", "device_offline"),
        (
            "[Info]App install path:/tmp/x.hap msg:error: failed to install bundle. code:9568322 signature "
            "verification failed",
            "install_failed",
        ),
        ("OHOS_REPORT_CODE: -1", None),
    ],
)
def test_hdc_infrastructure_kinds(output: str, kind: str | None) -> None:
    assert harmony.infra_kind_of(output) == kind
