"""The parser registry and the ParseResult contract (pytest_mobilebench.parsers)."""

from __future__ import annotations

import json

import pytest

from pytest_mobilebench.parsers import (
    PARSERS,
    ParseError,
    ParseResult,
    ResultBuilder,
    get_parser,
    register,
    relative_to_root,
    strip_ansi,
)
from pytest_mobilebench.parsers.flutter import parse_flutter
from pytest_mobilebench.parsers.jest import parse_jest
from pytest_mobilebench.parsers.junit import parse_junit
from pytest_mobilebench.states import TestState


def test_registry_holds_the_three_formats() -> None:
    assert {"flutter", "jest", "junit"} <= set(PARSERS)
    assert get_parser("junit") is parse_junit
    assert get_parser("flutter") is parse_flutter
    assert get_parser("jest") is parse_jest


def test_unknown_parser_lists_known_names() -> None:
    with pytest.raises(KeyError, match=r"unknown parser 'xctest'; known parsers: flutter, .*jest, junit"):
        get_parser("xctest")


def test_registry_view_is_read_only() -> None:
    with pytest.raises(TypeError):
        PARSERS["junit"] = parse_jest  # type: ignore[index]


def test_register_refuses_a_second_function_under_a_taken_name() -> None:
    def other(output: str, files: object) -> ParseResult:
        return ParseResult({}, {}, ())

    with pytest.raises(ValueError, match="already registered"):
        register("jest")(other)  # type: ignore[arg-type]
    assert register("jest")(parse_jest) is parse_jest  # re-registering the same function is harmless
    assert get_parser("jest") is parse_jest


def test_parse_error_is_a_value_error() -> None:
    assert issubclass(ParseError, ValueError)


def test_parse_result_round_trips_through_json() -> None:
    result = ParseResult(
        tests={"a#b": TestState.PASS, "a#c d": TestState.FAIL, "x::y": TestState.SKIP},
        messages={"a#c d": "boom\nline 2"},
        warnings=("w1",),
    )
    plain = result.to_dict()
    assert plain == {
        "tests": {"a#b": "PASS", "a#c d": "FAIL", "x::y": "SKIP"},
        "messages": {"a#c d": "boom\nline 2"},
        "warnings": ["w1"],
        "passed_on_retry": [],
    }
    assert ParseResult.from_dict(json.loads(json.dumps(plain))) == result
    older = {k: v for k, v in plain.items() if k != "passed_on_retry"}  # evidence written before the field
    assert ParseResult.from_dict(older) == result


def test_passed_on_retry_must_name_parsed_tests() -> None:
    with pytest.raises(ValueError, match="passed_on_retry"):
        ParseResult(tests={"a": TestState.FAIL}, messages={}, warnings=(), passed_on_retry=frozenset({"b"}))


def test_parse_result_rejects_none_state_and_stray_messages() -> None:
    with pytest.raises(ValueError, match="not one of PASS, FAIL, SKIP"):
        ParseResult(tests={"t": TestState.NONE}, messages={}, warnings=())
    with pytest.raises(ValueError, match="not one of PASS, FAIL, SKIP"):
        ParseResult(tests={"t": "PASS"}, messages={}, warnings=())  # type: ignore[dict-item]
    with pytest.raises(ValueError, match="messages for ids that are not in tests"):
        ParseResult(tests={}, messages={"t": "x"}, warnings=())


def test_duplicate_rule_fail_beats_pass_beats_skip() -> None:
    builder = ResultBuilder()
    builder.add("t1", TestState.SKIP)
    builder.add("t1", TestState.PASS)
    builder.add("t2", TestState.PASS)
    builder.add("t2", TestState.FAIL, "first failure")
    builder.add("t2", TestState.FAIL, "second failure")
    builder.add("t2", TestState.PASS)
    builder.add("t3", TestState.FAIL, "only")
    builder.add("t3", TestState.SKIP)
    result = builder.build()
    assert result.tests == {"t1": TestState.PASS, "t2": TestState.FAIL, "t3": TestState.FAIL}
    assert result.messages == {"t2": "first failure", "t3": "only"}
    assert result.warnings == (
        "duplicate test id 't1' reported 2 times (SKIP, PASS); kept PASS",
        "duplicate test id 't2' reported 4 times (PASS, FAIL, FAIL, PASS); kept FAIL",
        "duplicate test id 't3' reported 2 times (FAIL, SKIP); kept FAIL",
    )


def test_relative_to_root() -> None:
    assert relative_to_root("/repo/src/a.test.ts", "/repo") == "src/a.test.ts"
    assert relative_to_root("/repo/src/a.test.ts", "/repo/") == "src/a.test.ts"
    assert relative_to_root("/repository/a.ts", "/repo") == "/repository/a.ts"
    assert relative_to_root("C:\\w\\app\\test\\x_test.dart", "C:\\w\\app") == "test/x_test.dart"
    assert relative_to_root("./test/x_test.dart", None) == "test/x_test.dart"
    assert relative_to_root("/abs/x.js", None) == "/abs/x.js"


def test_strip_ansi() -> None:
    assert strip_ansi("\x1b[96msrc/a.ts\x1b[0m:\x1b[93m1\x1b[0m - \x1b[91merror\x1b[0m") == "src/a.ts:1 - error"


def test_warnings_are_capped_and_long_histories_shortened() -> None:
    builder = ResultBuilder()
    for n in range(500):
        builder.warn(f"w{n}")
    for _ in range(12):
        builder.add("t", TestState.FAIL)
    warnings = builder.build().warnings
    assert len(warnings) == 200 and warnings[:2] == ("w0", "w1") and warnings[198] == "w198"
    assert warnings[-1] == "302 more warnings not shown"  # 301 plain ones and the duplicate note
    one = ResultBuilder()
    for _ in range(12):
        one.add("t", TestState.PASS)
    assert one.build().warnings == (
        "duplicate test id 't' reported 12 times (" + ", ".join(["PASS"] * 10) + ", ...); kept PASS",
    )
