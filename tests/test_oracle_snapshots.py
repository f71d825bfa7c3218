"""Snapshot matchers decided out of realm: ``.snap`` text read by the harness, compared as jest compares."""

from __future__ import annotations

import pytest
from oracle_builders import err, num, obj, rec, s, thrown

from pytest_mobilebench.oracle import RecordDecision, SnapFileError, SnapFiles, decide_record, parse_snap
from pytest_mobilebench.oracle.calls import strip_added_indentation

SNAP = (
    "// Jest Snapshot v1\r\n\r\n"
    "exports[`renders a \\`tick\\` 1`] = `\r\n"
    "<View>\r\n  <Text>\r\n    a\\\\b \\${x}\r\n  </Text>\r\n</View>\r\n"
    "`;\r\n\r\n"
    'exports[`plain 1`] = `"one line"`;\r\n'
)
TREE = "<View>\n  <Text>\n    a\\b ${x}\n  </Text>\n</View>"


def snap_record(key: str, serialized: str, *expected: dict, **keys: object) -> dict:
    snapshot = {"key": key, "serialized": serialized, "file": "src/__snapshots__/App.test.js.snap"}
    return rec("toMatchSnapshot", obj(), *expected, snapshot=snapshot, **keys)


SOURCE = SnapFiles({"src/__snapshots__/App.test.js.snap": SNAP})


def decide(record: dict, source: SnapFiles = SOURCE) -> RecordDecision:
    return decide_record(record, source)


def test_parse_snap_undoes_jest_escaping() -> None:
    parsed = parse_snap(SNAP, "App.test.js.snap")
    assert parsed == {"renders a `tick` 1": "\n" + TREE + "\n", "plain 1": '"one line"'}


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("exports[`a`] = `${x}`;\n", "x.snap:1: a template substitution"),
        ("\n\nmodule.exports = 1;\n", "x.snap:3: expected exports["),
        ("exports[`a`] = `1`;\nexports[`a`] = `2`;\n", "x.snap:2: snapshot 'a' is stored twice"),
        ("exports[`a`] = `1`\n", "x.snap:1: expected ';'"),
        ("exports[`a`] = `open\n", "x.snap:1: unterminated"),
    ],
)
def test_parse_snap_names_file_and_line_of_what_is_not_jest_format(text: str, where: str) -> None:
    with pytest.raises(SnapFileError, match=where.replace("[", r"\[")):
        parse_snap(text, "x.snap")


def test_to_match_snapshot_compares_with_the_stored_value() -> None:
    assert decide(snap_record("renders a `tick` 1", TREE)).outcome == "pass"
    assert decide(snap_record("renders a `tick` 1", TREE.replace("a\\b", "ab"))).outcome == "fail"
    assert decide(snap_record("plain 1", '"one line"')).outcome == "pass"


def test_a_missing_snapshot_is_undecidable_and_not_is_a_matcher_error() -> None:
    missing = decide(snap_record("new 1", '"x"'))
    assert missing.outcome is None and "no stored snapshot" in missing.reason
    assert decide(snap_record("plain 1", '"one line"', not_=True, inrealm="fail")).outcome == "fail"


def test_property_matchers_must_match_too() -> None:
    any_number = {"t": "asymmetric", "kind": "any", "inverse": False, "sample": {"t": "function", "name": "Number"}}
    record = snap_record("plain 1", '"one line"', obj(id=any_number))
    record["received"] = obj(id=num(1))
    assert decide(record).outcome is None  # the serialised value must be the merged one
    record["snapshot"]["merged"] = True
    assert decide(record).outcome == "pass"
    record["received"] = obj(id=s("1"))
    assert decide(record).outcome == "fail"


def test_a_malformed_snap_file_is_reported_not_passed() -> None:
    broken = SnapFiles({"src/__snapshots__/App.test.js.snap": "exports[`plain 1`] = `${evil()}`;\n"})
    decision = decide(snap_record("plain 1", '"one line"'), broken)
    assert decision.outcome is None and "template substitution" in decision.error


def test_inline_snapshots_lose_the_indentation_added_to_line_them_up() -> None:
    inline = '\n      Object {\n        "a": 1,\n      }\n    '
    assert strip_added_indentation(inline) == '\nObject {\n  "a": 1,\n}\n'
    record = rec("toMatchInlineSnapshot", obj(), snapshot={"key": "t 1", "serialized": 'Object {\n  "a": 1,\n}'})
    record["snapshot"]["inline"] = inline
    assert decide(record).outcome == "pass"
    record["snapshot"]["inline"] = inline.replace("1", "2")
    assert decide(record).outcome == "fail"


def test_thrown_error_snapshots() -> None:
    snapshot = {"key": "plain 1", "serialized": '"one line"', "file": "src/__snapshots__/App.test.js.snap"}
    matched = rec("toThrowErrorMatchingSnapshot", thrown(err("one line")), snapshot=snapshot)
    assert decide_record(matched, SOURCE).outcome == "pass"
    quiet = rec("toThrowErrorMatchingSnapshot", thrown(None), snapshot=snapshot)
    assert decide_record(quiet, SOURCE).outcome == "fail"
