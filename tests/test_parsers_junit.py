"""The "junit" parser on real Gradle TEST-*.xml files and hand-made damaged / unusual ones.

Fixtures: fixtures/logs/junit (see its README for how each file was produced).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_mobilebench.parsers import ParseError, get_parser
from pytest_mobilebench.parsers.junit import junit_test_id
from pytest_mobilebench.states import TestState

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "logs" / "junit"
GRADLE_RESULTS = FIXTURES / "gradle" / "build" / "test-results" / "test"

P, F, S = TestState.PASS, TestState.FAIL, TestState.SKIP
parse = get_parser("junit")


def _files(folder: Path, prefix: str = "") -> dict[str, bytes]:
    return {prefix + str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.xml"))}


def test_real_gradle_results() -> None:
    result = parse("BUILD SUCCESSFUL in 9s", _files(GRADLE_RESULTS, "app/build/test-results/test/"))
    assert result.tests == {
        "demo.CalcTest#addsTwoNumbers": P,
        "demo.CalcTest#addIsWrong": F,
        "demo.CalcTest#printsToStdout": P,
        "demo.CalcTest#divByZeroErrors": F,
        "demo.CalcTest#ignoredOne": S,
        "demo.OuterTest$InnerTest#innerPasses": P,
        "demo.OuterTest#outerPasses": P,
        "demo.ParamTest#adds[0: add(1, 1) = 2]": P,
        "demo.ParamTest#adds[1: add(2, 2) = 5]": F,
    }
    assert result.messages == {
        "demo.CalcTest#addIsWrong": "java.lang.AssertionError: expected:<5> but was:<4>",
        "demo.CalcTest#divByZeroErrors": "java.lang.ArithmeticException: / by zero",
        "demo.ParamTest#adds[1: add(2, 2) = 5]": "java.lang.AssertionError: expected:<5> but was:<4>",
    }
    assert result.warnings == ()


def test_kotlin_names_nested_suites_error_and_retry() -> None:
    result = parse("", _files(FIXTURES / "handmade"))
    login = "com.example.login.LoginViewModelTest#"
    assert result.tests == {
        "app.settings.SettingsRepositoryTest#reads the stored theme": P,
        "app.settings.SettingsRepositoryTest#migrates v1 preferences": F,
        "app.settings.SettingsRepositoryTest#sync is disabled offline": S,
        "app.SuiteWithoutClassnames#uses the suite name as class": P,
        "app.SuiteWithoutClassnames#fails without a message attribute": F,
        login + "login with empty password shows an error": P,
        login + "login  trims the user name. then submits": F,
        login + "remembers the last user (retried)": F,
        login + "biometric login is offered": S,
    }
    assert result.messages == {
        "app.settings.SettingsRepositoryTest#migrates v1 preferences":
            "java.lang.IllegalStateException: no migration for v1",
        "app.SuiteWithoutClassnames#fails without a message attribute": "expected 1 but was 2",
        login + "login  trims the user name. then submits":
            "org.junit.ComparisonFailure: expected:<[alice]> but was:<[ alice ]>",
        login + "remembers the last user (retried)": "java.lang.AssertionError: timed out waiting for state",
    }
    assert result.warnings == (
        f"duplicate test id '{login}remembers the last user (retried)' reported 2 times (FAIL, PASS); kept FAIL",
    )


def test_file_cut_off_mid_element_keeps_complete_testcases_and_other_files() -> None:
    files = _files(GRADLE_RESULTS)
    files["TEST-demo.CalcTest.xml"] = (FIXTURES / "truncated" / "TEST-demo.CalcTest.xml").read_bytes()
    result = parse("", files)
    assert result.tests == {
        "demo.CalcTest#addsTwoNumbers": P,
        "demo.CalcTest#addIsWrong": F,
        "demo.CalcTest#printsToStdout": P,
        # divByZeroErrors and ignoredOne were in the lost part
        "demo.OuterTest$InnerTest#innerPasses": P,
        "demo.OuterTest#outerPasses": P,
        "demo.ParamTest#adds[0: add(1, 1) = 2]": P,
        "demo.ParamTest#adds[1: add(2, 2) = 5]": F,
    }
    assert result.warnings == (
        "TEST-demo.CalcTest.xml: truncated at line 12, 3 testcases recovered (unclosed token: line 12, column 4)",
    )
    assert set(result.messages) == {"demo.CalcTest#addIsWrong", "demo.ParamTest#adds[1: add(2, 2) = 5]"}


def test_malformed_in_the_middle_is_reported_as_malformed() -> None:
    data = (
        b'<testsuite name="K">\n<testcase classname="K" name="a"/>\n<testcase classname="K" name="b" & />\n'
        b'<testcase classname="K" name="c"/>\n</testsuite>\n'
    )
    result = parse("", {"TEST-K.xml": data})
    assert result.tests == {"K#a": P}
    assert result.warnings == ("TEST-K.xml: malformed at line 3, 1 testcases recovered (not well-formed (invalid token): "
                               "line 3, column 33)",)


def test_unreadable_file_is_a_warning_when_others_are_fine() -> None:
    files = {"a/TEST-Good.xml": b'<testsuite name="Good"><testcase classname="Good" name="ok"/></testsuite>',
             "b/TEST-Bad.xml": b"Gradle daemon crashed\n", "b/output.bin": b"\x00\x01"}
    result = parse("", files)
    assert result.tests == {"Good#ok": P}
    assert result.warnings == (
        "ignored 1 non-XML result file(s): b/output.bin",
        "b/TEST-Bad.xml: unreadable at line 1, no testcase recovered (syntax error: line 1, column 0)",
    )


def test_nothing_usable_raises_naming_file_and_line() -> None:
    with pytest.raises(ParseError, match=r"TEST-A\.xml: line 1: syntax error"):
        parse("", {"TEST-A.xml": b"not xml", "TEST-B.xml": b"<testsuite><testcase name="})
    with pytest.raises(ParseError, match=r"no \.xml result file among the result files \(no files at all\)"):
        parse("> Task :app:compileDebugKotlin FAILED", {})


def test_well_formed_file_without_testcases_is_empty_not_an_error() -> None:
    result = parse("", {"TEST-Empty.xml": b'<?xml version="1.0"?><testsuite name="Empty" tests="0"/>'})
    assert result.tests == {} and result.warnings == ()


def test_testcase_level_output_and_namespaces_are_ignored() -> None:
    data = (b'<testsuites xmlns="urn:x"><testsuite name="S"><testcase classname="C" name="n">'
            b'<system-out><![CDATA[<failure/> not a failure]]></system-out></testcase></testsuite></testsuites>')
    assert parse("", {"r.xml": data}).tests == {"C#n": P}


def test_id_helper_never_joins_with_a_dot() -> None:
    assert junit_test_id("a.B", "c d.e") == "a.B#c d.e"
