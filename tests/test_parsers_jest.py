"""The "jest" parser on real `jest --json` output (fixtures/logs/jest, see its README) and bad inputs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mobilebench.parsers import ParseError, get_parser
from pytest_mobilebench.states import TestState

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "jest"
ROOT = "/tmp/jestproj"  # where the sample project ran
P, F, S = TestState.PASS, TestState.FAIL, TestState.SKIP
parse = get_parser("jest")
M = "src/__tests__/math.test.js::"
T = "src/__tests__/format.test.ts::"

EXPECTED_TESTS = {
    M + "math > add > adds two numbers": P,
    M + "math > add > adds  negatives (two spaces)": P,
    M + "math > mul > multiplies 3 by 4": F,
    M + "math > mul > multiplies big numbers": S,  # test.skip -> "pending"
    M + "math > mul > multiplies fractions": S,  # test.todo -> "todo"
    M + "top level > with arrow in name": P,
    M + "add(1, 1) = 2": P,
    M + "add(2, 2) = 4": P,
    M + "a multi-line\nname": P,
    T + "formatPrice > formats whole dollars": P,
    T + "formatPrice > duplicate title 1": F,  # two test.each rows with one title: PASS + FAIL -> FAIL
}
EXPECTED_MESSAGES = {
    M + "math > mul > multiplies 3 by 4": "Error: expect(received).toBe(expected) // Object.is equality\n\n"
    "Expected: 12\nReceived: 13\n    at Object.toBe (/tmp/jestproj/src/__tests__/math.test.js:14:25)\n",
    T + "formatPrice > duplicate title 1": "Error: expect(received).toBe(expected) // Object.is equality\n\n"
    "Expected: true\nReceived: false\n    at /tmp/jestproj/src/__tests__/format.test.ts:8:16\n",
}
EXPECTED_WARNINGS = (
    "src/__tests__/syntax.test.js: test suite failed to run; its tests are absent: SyntaxError: "
    '/tmp/jestproj/src/__tests__/syntax.test.js: Unexpected token, expected "," (2:18)',
    "src/__tests__/currency.test.ts: test suite failed to run; its tests are absent: "
    "src/__tests__/currency.test.ts:1:10 - error TS2305: Module '\"../format\"' has no exported "
    "member 'formatCurrency'.",
    "src/__tests__/broken.test.js: test suite failed to run; its tests are absent: "
    "Cannot find module '../does-not-exist' from 'src/__tests__/broken.test.js'",
    f"duplicate test id '{T}formatPrice > duplicate title 1' reported 2 times (PASS, FAIL); kept FAIL",
)


def test_report_from_output_file() -> None:
    files = {"jest-results.json": (FIXTURES / "jest-results.json").read_bytes(), "package.json": b"{}"}
    result = parse("Test results written to: jest-results.json", files, root_dir=ROOT)
    assert result.tests == EXPECTED_TESTS
    assert result.messages == EXPECTED_MESSAGES
    assert sorted(result.warnings) == sorted(EXPECTED_WARNINGS)  # suite order differs between jest runs
    assert result.warnings[-1] == EXPECTED_WARNINGS[-1]  # duplicate-id warnings come last


def test_report_inside_npm_output_text() -> None:
    output = (FIXTURES / "npm-test-json-output.txt").read_text(encoding="utf-8")
    result = parse(output, {}, root_dir=ROOT + "/")
    assert result.tests == EXPECTED_TESTS
    assert result.messages == EXPECTED_MESSAGES
    assert sorted(result.warnings) == sorted(EXPECTED_WARNINGS)  # suite order differs between jest runs
    assert result.warnings[-1] == EXPECTED_WARNINGS[-1]  # duplicate-id warnings come last


def test_without_root_dir_paths_stay_absolute() -> None:
    result = parse("", {"jest-results.json": (FIXTURES / "jest-results.json").read_bytes()})
    assert sorted(result.tests) == sorted(f"{ROOT}/{k}" for k in EXPECTED_TESTS)


def test_json_without_test_results_raises_naming_what_is_missing() -> None:
    data = (FIXTURES / "no-testResults.json").read_bytes()
    with pytest.raises(
        ParseError,
        match=r"jest-results\.json: line 1: JSON object has no 'testResults' "
        r"\(not a jest --json report\); its keys: numTotalTests, success",
    ):
        parse("", {"jest-results.json": data})
    with pytest.raises(ParseError, match=r"output line 3: JSON object has no 'testResults'"):
        parse("> jest --json\n\n" + data.decode(), {})


def test_invalid_json_file_and_no_json_raise() -> None:
    with pytest.raises(ParseError, match=r"r\.json: line 2 column 1: invalid JSON \(Expecting value\)"):
        parse("", {"r.json": b'{"testResults":\n'})
    with pytest.raises(ParseError, match=r"no \.json result file and no JSON object in the output \(1 lines\)"):
        parse("sh: 1: jest: not found", {})
    with pytest.raises(ParseError, match=r"r\.json: line 1: 'testResults' is a dict, expected a list"):
        parse("", {"r.json": b'{"testResults": {}}'})


def _report(*suites: dict[str, object]) -> bytes:
    return json.dumps({"testResults": list(suites)}).encode()


def test_exec_error_unknown_status_and_interrupted_run() -> None:
    suite = {
        "name": "/w/a.test.tsx",
        "status": "failed",
        "message": "",
        "testExecError": {"message": "\u001b[1mafterAll hook timed out\u001b[22m"},
        "assertionResults": [
            {"ancestorTitles": ["A"], "title": "x", "status": "passed", "failureMessages": []},
            {"ancestorTitles": ["A"], "title": "y", "status": "focused", "failureMessages": []},
        ],
    }
    crashed = {
        "name": "/w/b.test.ts",
        "status": "failed",
        "message": "",
        "testExecError": {"message": "Jest worker ran out of memory"},
        "assertionResults": [],
    }
    report = json.loads(_report(suite, crashed))
    report["wasInterrupted"] = True
    result = parse("", {"out/r.json": json.dumps(report).encode()}, root_dir="/w")
    assert result.tests == {"a.test.tsx::A > x": P, "a.test.tsx::A > y": F}
    assert result.messages == {"a.test.tsx::A > y": "unknown jest status 'focused'"}
    assert result.warnings == (
        "out/r.json: the jest run was interrupted; results may be incomplete",
        "a.test.tsx: test suite reported an error besides its 2 tests: afterAll hook timed out",
        "a.test.tsx: unknown status 'focused' for 'a.test.tsx::A > y'; counted as FAIL",
        "b.test.ts: test suite failed to run; its tests are absent: Jest worker ran out of memory",
    )


def test_several_reports_are_merged() -> None:
    one = _report(
        {
            "name": "/w/p1/a.test.js",
            "status": "passed",
            "assertionResults": [{"ancestorTitles": [], "title": "t", "status": "passed"}],
        }
    )
    two = _report(
        {
            "name": "/w/p2/a.test.js",
            "status": "passed",
            "assertionResults": [{"ancestorTitles": [], "title": "t", "status": "disabled"}],
        }
    )
    result = parse("", {"packages/p1/jest.json": one, "packages/p2/jest.json": two}, root_dir="/w")
    assert result.tests == {"p1/a.test.js::t": P, "p2/a.test.js::t": S}
    assert result.warnings == ()


def test_retried_tests_follow_the_duplicate_rule() -> None:
    """Real jest 29 output with jest.retryTimes(2): failed then passed is FAIL (docs/test-ids.md, "Retries")."""
    result = parse("", {"jest-retry.json": (FIXTURES / "jest-retry.json").read_bytes()}, root_dir=ROOT)
    r = "src/retry/flaky.retry.js::retry > "
    assert result.tests == {
        r + "fails once then passes": F,
        r + "fails on every attempt": F,
        r + "passes first time": P,
    }
    assert result.messages[r + "fails once then passes"] == "run 1 of 2 failed (jest retryTimes)"
    assert result.messages[r + "fails on every attempt"] == "run 1 of 3 failed (jest retryTimes)"
    assert result.warnings == (
        f"duplicate test id '{r}fails once then passes' reported 2 times (FAIL, PASS); kept FAIL",
        f"duplicate test id '{r}fails on every attempt' reported 3 times (FAIL, FAIL, FAIL); kept FAIL",
    )


def test_retry_reasons_are_the_messages_of_the_earlier_runs() -> None:
    report = json.loads((FIXTURES / "jest-retry.json").read_text())
    report["testResults"][0]["assertionResults"][0]["retryReasons"] = ["\x1b[31mError: calls was 1\x1b[39m"]
    result = parse("", {"r.json": json.dumps(report).encode()}, root_dir=ROOT)
    assert result.messages["src/retry/flaky.retry.js::retry > fails once then passes"] == "Error: calls was 1"


def _real_report() -> dict:
    return json.loads((FIXTURES / "jest-results.json").read_text())


@pytest.mark.parametrize(
    ("where", "value"),
    [
        (("testResults", 0, "assertionResults"), 7),
        (("testResults", 0, "assertionResults"), "abc"),
        (("testResults", 0, "assertionResults", 0), ["not", "an", "object"]),
        (("testResults", 0, "assertionResults", 0, "ancestorTitles"), 5),
        (("testResults", 0, "assertionResults", 0, "ancestorTitles"), [["math"]]),
        (("testResults", 0, "assertionResults", 0, "title"), {"t": 1}),
        (("testResults", 0, "assertionResults", 0, "failureMessages"), 3),
        (("testResults", 0, "assertionResults", 0, "status"), ["passed"]),
        (("testResults", 0, "assertionResults", 0, "invocations"), "2"),
        (("testResults", 0, "name"), {"path": "x"}),
        (("testResults", 0, "testExecError"), "boom"),
        (("testResults", 0), None),
    ],
)
def test_valid_json_of_the_wrong_shape_loses_only_its_own_part(where: tuple, value: object) -> None:
    report = _real_report()
    target = report
    for key in where[:-1]:
        target = target[key]
    mutated_suite = report["testResults"][0]["name"]
    target[where[-1]] = value
    result = parse("", {"r.json": json.dumps(report).encode()}, root_dir=ROOT)
    untouched = {k: v for k, v in EXPECTED_TESTS.items() if not mutated_suite.endswith(k.split("::")[0])}
    assert untouched and all(result.tests.get(k) is v for k, v in untouched.items())


def test_one_report_with_bad_test_results_among_good_ones_is_a_warning() -> None:
    good = (FIXTURES / "jest-results.json").read_bytes()
    result = parse("", {"a.json": good, "b.json": b'{"testResults": {"x": 1}}'}, root_dir=ROOT)
    assert result.tests == EXPECTED_TESTS
    assert result.warnings[0] == "b.json: line 1: 'testResults' is a dict, expected a list; that report is skipped"


def test_json_that_python_cannot_hold_is_a_parse_error_not_a_crash() -> None:
    with pytest.raises(ParseError):
        parse("", {"r.json": b'{"testResults": [' * 50_000})
    with pytest.raises(ParseError):
        parse('{"testResults": [], "n": ' + "9" * 5000 + "}", {})


def test_report_on_stdout_with_unicode_line_separators_in_strings() -> None:
    """JSON.stringify leaves U+2028 / U+2029 / U+0085 raw; they must not cut the report's line."""
    report = _real_report()
    report["testResults"][0]["assertionResults"][0]["failureMessages"] = ["a\u2028b\u2029c\x85d"]
    report["testResults"][0]["assertionResults"][0]["status"] = "failed"
    text = "> jest --json\n" + json.dumps(report, ensure_ascii=False, separators=(",", ":")) + "\n"
    result = parse(text * 25, {}, root_dir=ROOT)  # 25 reports: more than the multi-line retries would allow
    suite = report["testResults"][0]
    assertion = suite["assertionResults"][0]
    test_id = f"{suite['name'][len(ROOT) + 1 :]}::{' > '.join([*assertion['ancestorTitles'], assertion['title']])}"
    assert result.tests == {**EXPECTED_TESTS, test_id: F}
    assert result.messages[test_id] == "a\u2028b\u2029c\x85d"
