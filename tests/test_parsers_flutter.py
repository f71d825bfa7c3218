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
    '"/app/test/widgets/login_test.dart": test/widgets/login_test.dart:3:8: Error: Error when reading '
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
        '\'{"testID":7,"messageType":"print","message":"counter = 0","type":"priObservat...\'',
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
        '\'{"testID":8,"error":"Expected: <2>\\\\n  Ac\'',
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
    stream = "\n".join(
        [
            _ev(type="suite", suite={"id": 0, "platform": "vm", "path": "test/a_test.dart"}),
            _start(1, "g (setUpAll)", [2, 3]),
            _ev(type="testDone", testID=1, result="error", skipped=False, hidden=False),
            _start(4, "g slow", [2, 3]),
            _ev(type="error", testID=4, error="TimeoutException after 0:00:30"),
            _ev(type="error", testID=1, error="late"),
        ]
    )
    result = parse(stream, {})
    assert result.tests == {"test/a_test.dart::g (setUpAll)": F, "test/a_test.dart::g slow": F}
    assert result.messages == {
        "test/a_test.dart::g (setUpAll)": "late",
        "test/a_test.dart::g slow": UNFINISHED_MESSAGE + "\nTimeoutException after 0:00:30",
    }


def test_unknown_result_is_a_failure_with_warning_and_daemon_notices_are_silent() -> None:
    stream = "\n".join(
        [
            '[{"event":"test.startedProcess","params":{"vmServiceUri":"http://127.0.0.1:1/"}}]',
            _ev(type="suite", suite={"id": 0, "path": "test/a_test.dart"}),
            _start(1, "t", [2]),
            _ev(type="testDone", testID=1, result="crashed", skipped=False, hidden=False),
            _ev(type="done", success=False),
        ]
    )
    result = parse(stream, {})
    assert result.tests == {"test/a_test.dart::t": F}
    assert result.messages == {"test/a_test.dart::t": "unknown test result 'crashed'"}
    assert result.warnings == ("output line 4: unknown result 'crashed' for 't'; counted as FAIL",)


def test_no_events_at_all_raises() -> None:
    with pytest.raises(
        ParseError,
        match=r"output: no flutter --machine JSON event in 2 lines; first line: "
        r"'Error: No pubspec.yaml file found.'",
    ):
        parse(
            "Error: No pubspec.yaml file found.\nThis command should be run from the root of your Flutter project.", {}
        )
    with pytest.raises(ParseError, match=r"in 0 lines"):
        parse("", {})


@pytest.mark.parametrize(
    "line",
    [
        _ev(type="suite", suite=[0, "/app/x.dart"]),
        _ev(type="suite", suite={"id": [0], "path": "/app/x.dart"}),
        _ev(type="testStart", test="not an object"),
        _ev(type="testStart", test={"id": {"a": 1}, "name": "t", "suiteID": 0, "groupIDs": 5}),
        _ev(type="testStart", test={"id": 99, "name": ["t"], "suiteID": [0], "groupIDs": 5}),
        _ev(type="testDone", testID=[7], result="success"),
        _ev(type="testDone", testID=8, result=["success"], skipped="yes", hidden={"x": 1}),
        _ev(type="error", testID={"id": 8}, error=None),
        '{"type":"print","testID":' + "9" * 5000 + "}",  # over Python's int digit limit
        "[" * 100_000 + "]" * 100_000,
    ],
)
def test_valid_json_of_the_wrong_shape_is_a_warning(line: str) -> None:
    lines = _stream("machine-complete.txt").split("\n")
    result = parse("\n".join([*lines[:20], line, *lines[20:]]), {}, root_dir="/app")
    assert result.tests == COMPLETE_TESTS  # nothing else is lost or changed
    assert any("output line 21:" in w for w in result.warnings)


def test_two_machine_streams_in_one_output_keep_their_own_ids() -> None:
    """melos / custom commands: each `flutter test --machine` process numbers its suites and tests from 0."""
    first = _stream("machine-complete.txt")
    second = first.replace("/app/test/", "/app/packages/other/test/").replace(
        '"result":"failure"', '"result":"success"'
    )
    second = second.replace('"isFailure":true,"type":"error"', '"isFailure":true,"type":"print"')
    result = parse(f"$ melos exec -- flutter test --machine\n{first}\n{second}", {}, root_dir="/app")
    other = {k.replace("test/", "packages/other/test/", 1): v for k, v in COMPLETE_TESTS.items()}
    other[other.__iter__().__next__().replace("Counter starts at zero", "Counter increments  twice")] = P
    other["packages/other/test/counter_test.dart::same name"] = P
    assert result.tests == {**COMPLETE_TESTS, **other}
    assert not any("repeated test id" in w for w in result.warnings)


def test_unicode_line_separators_do_not_split_an_event() -> None:
    """U+2028/U+2029/U+0085 are written raw inside JSON strings; a late error after them still fails the test."""
    lines = _stream("machine-complete.txt").split("\n")
    late = json.dumps(
        {"testID": 7, "error": "boom\u2028at line\u2029two\x85three", "type": "error"}, ensure_ascii=False
    )
    result = parse("\n".join([*lines[:17], late, *lines[17:]]), {}, root_dir="/app")
    assert result.tests[C + "Counter starts at zero"] is F
    assert result.messages[C + "Counter starts at zero"] == "boom\u2028at line\u2029two\x85three"


def test_an_unreadable_error_event_still_fails_its_test() -> None:
    lines = _stream("machine-complete.txt").split("\n")
    broken = '{"testID":7,"error":"Expected: <1>\\n  Actual: <0>","stackTrace":"x","isFailure":true,"type":"error",'
    result = parse("\n".join([*lines[:17], broken, *lines[17:]]), {}, root_dir="/app")
    assert result.tests[C + "Counter starts at zero"] is F
    assert result.messages[C + "Counter starts at zero"] == (
        "an error event for this test could not be read (output line 18)"
    )


def test_a_repeated_event_never_overwrites_another_test() -> None:
    lines = _stream("machine-complete.txt").split("\n")
    extra = [
        _ev(type="testDone", testID=8, result="success", skipped=False, hidden=False),  # 8 failed before
        _start(7, "an impostor", [4, 5]),  # id 7 is taken
        _ev(type="suite", suite={"id": 0, "path": "/app/test/elsewhere_test.dart"}),  # suite 0 is taken
    ]
    result = parse("\n".join([*lines[:-2], *extra, *lines[-2:]]), {}, root_dir="/app")
    assert result.tests == COMPLETE_TESTS
    assert "output line 39: second testDone for 'Counter increments  twice'; a failure is kept" in result.warnings


def test_interleaved_streams_are_told_apart_by_their_melos_prefix() -> None:
    """`melos exec --stream -c 2 -- flutter test --machine`: lines of two processes alternate, each prefixed."""
    first = [f"[counter_app] {line}" for line in _stream("machine-complete.txt").split("\n") if line]
    other = _stream("machine-complete.txt").replace("/app/test/", "/app/packages/other/test/")
    second = [f"[other] {line}" for line in other.split("\n") if line]
    mixed = [line for pair in zip(first, second) for line in pair]
    result = parse("\n".join(mixed), {}, root_dir="/app")
    assert result.tests == {
        **COMPLETE_TESTS,
        **{k.replace("test/", "packages/other/test/", 1): v for k, v in COMPLETE_TESTS.items()},
    }
    assert not any("unknown test id" in w or "repeated" in w for w in result.warnings)
