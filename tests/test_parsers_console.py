"""console_counts: (passed, failed) as the runners' own console summaries print them.

Real output: jest 29 (fixtures/logs/jest), Gradle 4.4.1 (fixtures/logs/junit); flutter's console is
hand-written (fixtures/logs/flutter/README.md).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mobilebench.parsers import ParseResult, console_counts, get_parser
from pytest_mobilebench.states import TestState
from pytest_mobilebench.trust import cross_check

LOGS = Path(__file__).resolve().parent.parent / "fixtures" / "logs"


def _text(relative: str) -> str:
    return (LOGS / relative).read_text(encoding="utf-8")


@pytest.mark.parametrize(
    ("parser", "sample", "expected"),
    [
        ("jest", "jest/npm-test-json-output.txt", (8, 2)),  # Tests: 2 failed, 1 skipped, 1 todo, 8 passed, 12 total
        ("jest", "jest/jest-retry-console.txt", (2, 1)),  # the retried test counts as passed here
        ("jest", "jest/jest-results.json", None),  # a --json report is not a console summary
        ("junit", "junit/gradle-console.txt", (5, 3)),  # 9 tests completed, 3 failed, 1 skipped
        ("junit", "junit/gradle-console-passing.txt", None),  # Gradle prints nothing when all passed
        ("flutter", "flutter/expanded-failed.txt", (4, 4)),  # 00:03 +4 ~1 -4: Some tests failed.
        ("flutter", "flutter/expanded-passed.txt", (2, 0)),  # 00:01 +2 ~1: All tests passed!
        ("flutter", "flutter/machine-complete.txt", None),  # --machine has no summary line
    ],
)
def test_counts_on_real_output(parser: str, sample: str, expected: tuple[int, int] | None) -> None:
    assert console_counts(parser, _text(sample)) == expected


def test_gradle_summary_agrees_with_the_parsed_reports_of_the_same_run() -> None:
    folder = LOGS / "junit" / "gradle" / "build" / "test-results" / "test"
    result = get_parser("junit")("", {p.name: p.read_bytes() for p in folder.glob("*.xml")})
    states = list(result.tests.values())
    assert console_counts("junit", _text("junit/gradle-console.txt")) == (
        states.count(TestState.PASS),
        states.count(TestState.FAIL),
    )


def test_several_summaries_are_added() -> None:
    two_tasks = "> Task :a:test\n3 tests completed, 1 failed\n> Task :b:test\n1 test completed, 1 failed, 0 skipped\n"
    assert console_counts("junit", two_tasks) == (2, 2)
    melos = "00:01 +3: All tests passed!\n00:02 +1 -2: Some tests failed.\n"
    assert console_counts("flutter", melos) == (4, 2)


def test_colours_and_crlf_are_ignored() -> None:
    coloured = (
        "\x1b[1mTests:       \x1b[22m\x1b[1m\x1b[31m1 failed\x1b[39m\x1b[22m, \x1b[1m\x1b[32m3 passed"
        "\x1b[39m\x1b[22m, 4 total\r\n"
    )
    assert console_counts("jest", coloured) == (3, 1)
    assert console_counts("jest", "Tests:       4 passed, 4 total") == (4, 0)


def test_lines_that_only_look_alike_are_not_summaries() -> None:
    assert console_counts("jest", "  console.log\n    Tests: whatever 3 total\n") is None
    assert console_counts("junit", "expected 9 tests completed, 3 failed in the log") is None
    assert console_counts("flutter", "00:01 +1: Counter starts at zero\n") is None
    assert console_counts("flutter", "") is None


def test_unknown_parser_name_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="unknown parser 'xctest'"):
        console_counts("xctest", "Tests: 1 passed, 1 total")


def test_a_retried_pass_is_passed_on_the_console_and_fail_in_the_parse() -> None:
    """Real jest run (exit status 0): the console and the parse disagree by design (docs/test-ids.md, "Retries")."""
    report = (LOGS / "jest" / "jest-retry-passed.json").read_bytes()
    result = get_parser("jest")("", {"r.json": report}, root_dir="/tmp/jestproj")
    assert result.tests["src/retry/flaky.retry.js::retry > fails once then passes"] is TestState.FAIL
    assert console_counts("jest", _text("jest/jest-retry-passed-console.txt")) == (1, 0)


def test_an_honest_retried_pass_is_no_tampering() -> None:
    """The real run above exited 0 with ``1 passed``: the cross-check counts the retried test the runner's
    way (``passed_on_retry``) and says nothing; a report that forges the same pass without retries is caught."""
    report = (LOGS / "jest" / "jest-retry-passed.json").read_bytes()
    result = get_parser("jest")("", {"r.json": report}, root_dir="/tmp/jestproj")
    console = console_counts("jest", _text("jest/jest-retry-passed-console.txt"))
    assert result.passed_on_retry == {"src/retry/flaky.retry.js::retry > fails once then passes"}
    assert cross_check("jest", 0, result.tests, console, result.passed_on_retry) is None
    assert cross_check("jest", 0, result.tests, console) is not None  # without the retry fact: a disagreement
    assert ParseResult.from_dict(result.to_dict()) == result


def test_a_test_failing_on_every_attempt_is_not_passed_on_retry() -> None:
    report = (LOGS / "jest" / "jest-retry.json").read_bytes()
    result = get_parser("jest")("", {"r.json": report}, root_dir="/tmp/jestproj")
    assert result.passed_on_retry == {"src/retry/flaky.retry.js::retry > fails once then passes"}
    console = console_counts("jest", _text("jest/jest-retry-console.txt"))
    assert cross_check("jest", 1, result.tests, console, result.passed_on_retry) is None
