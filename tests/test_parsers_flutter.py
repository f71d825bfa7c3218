"""The "flutter" parser on hand-written `flutter test --machine` streams (fixtures/logs/flutter, see its README)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_mobilebench.parsers import ParseError, get_parser
from pytest_mobilebench.parsers.flutter import UNFINISHED_MESSAGE
from pytest_mobilebench.states import TestState

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "flutter"
P, F, S = TestState.PASS, TestState.FAIL, TestState.SKIP
parse = get_parser("flutter")
C = "test/counter_test.dart::"

COMPLETE_TESTS = {
    C + "Counter starts at zero": P,
    C + "Counter increments  twice": F,
    C + "Counter decrements below zero": S,
    C + "Counter throws on overflow": F,
    C + "Counter renders\nthe title": P,
    C + "Counter leaks a timer": F,
    C + "same name": F,
}
COMPLETE_MESSAGES = {
    C + "Counter increments  twice": "Expected: <2>\n  Actual: <1>\n",
    C + "Counter throws on overflow": "StateError: Bad state: counter overflow",
    C + "Counter leaks a timer": "This test failed after it had already completed.\nTimer fired after the test ended",
    C + "same name": "Expected: true\n  Actual: <false>\n",
}
LOAD_FAILURE = (
    "test/widgets/login_test.dart: suite failed to load; its tests are absent: Failed to load "
    "\"/app/test/widgets/login_test.dart\": test/widgets/login_test.dart:3:8: Error: Error when reading "
    "'lib/widgets/login_form.dart': No such file or directory"
)
NON_JSON = "output: ignored 2 non-JSON line(s); first at line 1: 'Resolving dependencies...'"
DUPLICATE = "duplicate test id 'test/counter_test.dart::same name' reported 2 times (PASS, FAIL); kept FAIL"


def _stream(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


def test_complete_stream() -> None:
    result = parse(_stream("machine-complete.txt"), {}, root_dir="/app")
    assert result.tests == COMPLETE_TESTS
    assert result.messages == COMPLETE_MESSAGES
    assert result.warnings == (NON_JSON, LOAD_FAILURE, DUPLICATE)


def test_without_root_dir_paths_stay_as_reported() -> None:
    result = parse(_stream("machine-complete.txt"), {})
    assert sorted(result.tests) == sorted("/app/" + k for k in COMPLETE_TESTS)


def test_stream_with_a_malformed_line_continues() -> None:
    result = parse(_stream("machine-malformed-line.txt"), {}, root_dir="/app")
    assert result.tests == COMPLETE_TESTS
    assert result.messages == COMPLETE_MESSAGES
    assert result.warnings == (
        "output line 17: malformed JSON event skipped (Unterminated string starting at; column 66): "
        "'{\"testID\":7,\"messageType\":\"print\",\"message\":\"counter = 0\",\"type\":\"priObservat...'",
        NON_JSON,
        LOAD_FAILURE,
        DUPLICATE,
    )


def test_stream_cut_off_without_done() -> None:
    result = parse(_stream("machine-truncated.txt"), {}, root_dir="/app/")
    assert result.tests == {C + "Counter starts at zero": P, C + "Counter increments  twice": F}
    assert result.messages == {C + "Counter increments  twice": UNFINISHED_MESSAGE}
    assert result.warnings == (
        "output line 19: malformed JSON event skipped (Unterminated string starting at; column 21): "
        "'{\"testID\":8,\"error\":\"Expected: <2>\\\\n  Ac'",
        NON_JSON,
        "output: stream ended without a 'done' event after line 19",
        "test/widgets/login_test.dart: suite never finished loading; its tests are absent",
        "output line 18: 'Counter increments  twice' started but never finished; counted as FAIL",
    )


def _ev(**fields: object) -> str:
    return json.dumps(fields)


def _start(test_id: int, name: str, groups: list[int], suite: int = 0) -> str:
    return _ev(type="testStart", test={"id": test_id, "name": name, "suiteID": suite, "groupIDs": groups})


def test_unfinished_test_keeps_its_errors_and_hidden_setup_failure_is_visible() -> None:
    stream = "\n".join([
        _ev(type="suite", suite={"id": 0, "platform": "vm", "path": "test/a_test.dart"}),
        _start(1, "g (setUpAll)", [2, 3]),
        _ev(type="testDone", testID=1, result="error", skipped=False, hidden=False),
        _start(4, "g slow", [2, 3]),
        _ev(type="error", testID=4, error="TimeoutException after 0:00:30"),
        _ev(type="error", testID=1, error="late"),
    ])
    result = parse(stream, {})
    assert result.tests == {"test/a_test.dart::g (setUpAll)": F, "test/a_test.dart::g slow": F}
    assert result.messages == {
        "test/a_test.dart::g (setUpAll)": "late",
        "test/a_test.dart::g slow": UNFINISHED_MESSAGE + "\nTimeoutException after 0:00:30",
    }


def test_unknown_result_is_a_failure_with_warning_and_daemon_notices_are_silent() -> None:
    stream = "\n".join([
        '[{"event":"test.startedProcess","params":{"vmServiceUri":"http://127.0.0.1:1/"}}]',
        _ev(type="suite", suite={"id": 0, "path": "test/a_test.dart"}),
        _start(1, "t", [2]),
        _ev(type="testDone", testID=1, result="crashed", skipped=False, hidden=False),
        _ev(type="done", success=False),
    ])
    result = parse(stream, {})
    assert result.tests == {"test/a_test.dart::t": F}
    assert result.messages == {"test/a_test.dart::t": "unknown test result 'crashed'"}
    assert result.warnings == ("output line 4: unknown result 'crashed' for 't'; counted as FAIL",)


def test_no_events_at_all_raises() -> None:
    with pytest.raises(ParseError, match=r"output: no flutter --machine JSON event in 2 lines; first line: "
                                         r"'Error: No pubspec.yaml file found.'"):
        parse("Error: No pubspec.yaml file found.\nThis command should be run from the root of your Flutter project.", {})
    with pytest.raises(ParseError, match=r"in 0 lines"):
        parse("", {})
