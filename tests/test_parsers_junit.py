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
        "app.settings.SettingsRepositoryTest#migrates v1 preferences": (
            "java.lang.IllegalStateException: no migration for v1"
        ),
        "app.SuiteWithoutClassnames#fails without a message attribute": "expected 1 but was 2",
        login
        + "login  trims the user name. then submits": "org.junit.ComparisonFailure: expected:<[alice]> but was:<[ "
        "alice ]>",
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
        (
            "TEST-demo.CalcTest.xml: line 11: testcase dropped, it cannot be read on its own (its tags end nowhere "
            "before the next testcase or the end of the file)"
        ),
    )
    assert set(result.messages) == {"demo.CalcTest#addIsWrong", "demo.ParamTest#adds[1: add(2, 2) = 5]"}


def test_malformed_in_the_middle_is_reported_as_malformed() -> None:
    data = (
        b'<testsuite name="K">\n<testcase classname="K" name="a"/>\n<testcase classname="K" name="b" & />\n'
        b'<testcase classname="K" name="c"/>\n</testsuite>\n'
    )
    result = parse("", {"TEST-K.xml": data})
    assert result.tests == {"K#a": P, "K#c": P}  # the testcase after the damaged one is kept
    assert result.warnings == (
        "TEST-K.xml: malformed at line 3, 2 testcases recovered (not well-formed (invalid token): line 3, column 33)",
        "TEST-K.xml: line 3: testcase dropped, it cannot be read on its own (not well-formed (invalid token))",
    )


CALC = GRADLE_RESULTS / "TEST-demo.CalcTest.xml"
CALC_TESTS = {
    "demo.CalcTest#addsTwoNumbers": P,
    "demo.CalcTest#addIsWrong": F,
    "demo.CalcTest#printsToStdout": P,
    "demo.CalcTest#divByZeroErrors": F,
    "demo.CalcTest#ignoredOne": S,
}


@pytest.mark.parametrize(
    ("old", "new", "note"),
    [
        # a test printed an ANSI colour code: ESC is not allowed anywhere in XML 1.0
        (b"but was:&lt;4&gt;\n", b"but was:&lt;4&gt;\x1b[31m\n", "1 characters not allowed in XML replaced by U+FFFD"),
        (b"hello <from>", b"hello \x00\x07 <from>", "2 characters not allowed in XML replaced by U+FFFD"),
        # Surefire-style escaped control characters are just as invalid
        (b"expected:&lt;5&gt;", b"expected:&#27;&#x1;&lt;5&gt;", "2 characters not allowed in XML replaced by U+FFFD"),
        (b"/ by zero", b"/ by \xff\xfezero", "bytes that are not utf-8 replaced by U+FFFD (first at byte"),
        (b'encoding="UTF-8"', b'encoding="UTF-9"', "unknown encoding 'UTF-9' read as UTF-8"),
    ],
)
def test_invalid_characters_lose_no_testcase(old: bytes, new: bytes, note: str) -> None:
    data = CALC.read_bytes()
    assert old in data
    result = parse("", {"TEST-demo.CalcTest.xml": data.replace(old, new, 1)})
    assert result.tests == CALC_TESTS
    assert result.warnings[0].startswith(f"TEST-demo.CalcTest.xml: {note}")


def test_declared_latin1_file_is_read_in_its_encoding() -> None:
    data = (
        '<?xml version="1.0" encoding="ISO-8859-1"?>\n'
        '<testsuite name="K"><testcase classname="K" name="caf\xe9"/></testsuite>'
    )
    result = parse("", {"TEST-K.xml": data.encode("latin-1")})
    assert result.tests == {"K#caf\xe9": P} and result.warnings == ()


def test_broken_markup_inside_one_testcase_keeps_every_other_one() -> None:
    data = CALC.read_bytes().replace(b'name="printsToStdout"', b'name="printsToStdout" <oops', 1)
    result = parse("", {"TEST-demo.CalcTest.xml": data})
    assert result.tests == {k: v for k, v in CALC_TESTS.items() if k != "demo.CalcTest#printsToStdout"}
    assert result.warnings[0].startswith("TEST-demo.CalcTest.xml: malformed at line 10, 4 testcases recovered")
    assert result.warnings[1].startswith("TEST-demo.CalcTest.xml: line 10: testcase dropped")


def test_salvaged_testcases_without_classname_keep_their_suite_name() -> None:
    data = (FIXTURES / "handmade" / "nested-testsuites.xml").read_bytes()
    data = data.replace(b'name="reads the stored theme"', b'name="reads the stored theme" &', 1)
    result = parse("", {"r.xml": data})
    assert result.tests["app.SuiteWithoutClassnames#uses the suite name as class"] is P
    assert result.tests["app.SuiteWithoutClassnames#fails without a message attribute"] is F
    assert "app.settings.SettingsRepositoryTest#reads the stored theme" not in result.tests
    assert len(result.tests) == 4


def test_reruns_follow_the_duplicate_rule() -> None:
    """Surefire / Gradle mergeReruns: failed then passed on a rerun is FAIL (docs/test-ids.md, "Retries")."""
    result = parse("", _files(FIXTURES / "reruns"))
    cls = "com.example.RerunTest#"
    assert result.tests == {
        cls + "passesFirstTime": P,
        cls + "failsThenPasses": F,
        cls + "errorsTwiceThenPasses": F,
        cls + "alwaysFails": F,
    }
    assert result.messages == {
        cls + "failsThenPasses": "flakyFailure: expected:<1> but was:<0>",
        cls + "errorsTwiceThenPasses": "flakyError: connect timed out",
        cls + "alwaysFails": "expected:<3> but was:<2>",
    }
    assert result.warnings == (
        f"duplicate test id '{cls}failsThenPasses' reported 2 times (FAIL, PASS); kept FAIL",
        f"duplicate test id '{cls}errorsTwiceThenPasses' reported 3 times (FAIL, FAIL, PASS); kept FAIL",
        f"duplicate test id '{cls}alwaysFails' reported 2 times (FAIL, FAIL); kept FAIL",
    )


def test_unreadable_file_is_a_warning_when_others_are_fine() -> None:
    files = {
        "a/TEST-Good.xml": b'<testsuite name="Good"><testcase classname="Good" name="ok"/></testsuite>',
        "b/TEST-Bad.xml": b"Gradle daemon crashed\n",
        "b/output.bin": b"\x00\x01",
    }
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
    data = (
        b'<testsuites xmlns="urn:x"><testsuite name="S"><testcase classname="C" name="n">'
        b"<system-out><![CDATA[<failure/> not a failure]]></system-out></testcase></testsuite></testsuites>"
    )
    assert parse("", {"r.xml": data}).tests == {"C#n": P}


def test_id_helper_never_joins_with_a_dot() -> None:
    assert junit_test_id("a.B", "c d.e") == "a.B#c d.e"


def test_many_broken_testcases_are_summarised_and_the_good_one_kept() -> None:
    """A candidate's test output can fill a report with unclosed <testcase> tags; each byte is read once."""
    n = 5000
    data = (
        b"<testsuites>"
        + b'<testsuite name="S">' * n
        + b'<testcase classname="C" name="open">' * n
        + b'<testcase classname="C" name="ok"/><bad &>'
    )
    result = parse("", {"TEST-x.xml": data})
    assert result.tests == {"C#ok": P}
    assert len(result.warnings) == 22  # the damage, 20 dropped testcases by line, then the count of the rest
    assert result.warnings[-1] == f"TEST-x.xml: {n - 20} more testcases dropped"
