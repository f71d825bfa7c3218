"""The oracle's decision wired into a jest run's grading (issue 31, item 1; ``docs/oracle.md``).

:mod:`pytest_mobilebench.frameworks.react_native.oracle_verdict` groups the channel's signed ``assertion`` records
by test id and has a decider judge each test's records. The decider here is a test double that re-decides
``toBe`` records (the real one is ``pytest_mobilebench.oracle.decide_test``): a record whose in-realm outcome it
contradicts makes its test fail and is a ``runner_compromised`` finding; custom matchers are named; a record that
failed in realm and fails out of realm agrees; unsigned records count for nothing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import hmac
import json
from pathlib import Path
from typing import Any

import pytest

from pytest_mobilebench.frameworks.react_native import oracle_verdict
from pytest_mobilebench.parsers import ParseResult
from pytest_mobilebench.runtime.base import InfraError
from pytest_mobilebench.states import TestState

KEY = bytes(range(32))
HARNESS = {"nonce": "0" * 16, "key": KEY.hex(), "folder": "/var/tmp/h", "runner": "circus", "oracle": True}


@dataclasses.dataclass
class Decision:
    holds: bool | None
    disagreements: list[Any]
    unrecorded_matchers: list[str]


def decide_to_be(records: list[dict[str, Any]], snapshots: Any) -> Decision:
    """A stand-in decider: ``toBe`` of numbers re-decided, anything else named as unrecorded."""
    disagreements, unrecorded, holds = [], [], True
    for r in records:
        if r["matcher"] != "toBe":
            unrecorded.append(r["matcher"])
            continue
        ok = (r["received"]["v"] == r["expected"][0]["v"]) != r["not"]
        holds = holds and ok
        if ok != (r["inrealm"] == "pass"):
            disagreements.append({"seq": r["seq"], "inrealm": r["inrealm"], "oracle": ok})
    return Decision(holds, disagreements, unrecorded)


def _record(titles: list[str], seq: int, received: str, expected: str, inrealm: str, matcher: str = "toBe") -> dict:
    record = {"seq": seq, "matcher": matcher, "not": False, "promise": "", "received": {"t": "number", "v": received},
              "expected": [{"t": "number", "v": expected}], "inrealm": inrealm, "test": " > ".join(titles)}  # fmt: skip
    return {"type": "assertion", "path": "/testbed/__tests__/a.test.js", "titles": titles, "record": record}


def _channel(bodies: list[dict], key: bytes = KEY) -> bytes:
    lines = []
    for seq, body in enumerate(bodies):
        text = json.dumps({"seq": seq, **body}).encode()
        lines.append(hmac.new(key, text, hashlib.sha256).hexdigest().encode() + b" " + text + b"\n")
    return b"".join(lines)


def test_a_forged_pass_is_a_finding_and_its_test_cannot_pass(tmp_path: Path) -> None:
    channel = _channel(
        [
            _record(["Counter", "increments"], 0, "2", "1", "pass"),  # in realm: a forged toBe said pass
            _record(["Counter", "steps"], 0, "15", "15", "pass"),
            _record(["Counter", "caught"], 0, "1", "2", "fail"),  # failed in realm and out: agrees
            _record(["Counter", "custom"], 0, "4", "4", "pass", matcher="toBeEven"),
        ]
    )
    ids = [f"__tests__/a.test.js::Counter > {n}" for n in ("increments", "steps", "caught", "custom")]
    parsed = ParseResult(tests=dict.fromkeys(ids, TestState.PASS), messages={}, warnings=[])
    verdict = oracle_verdict.decide(HARNESS, channel, {}, decide_test=decide_to_be)
    assert verdict.failed == (ids[0],)
    assert len(verdict.findings) == 1 and verdict.findings[0].startswith(ids[0] + ": the oracle contradicts 1")
    assert verdict.unrecorded == {ids[3]: ("toBeEven",)}
    assert "toBeEven" in verdict.detail()

    graded, found, note = _graded(tmp_path, channel, parsed)
    assert graded.tests[ids[0]] == TestState.FAIL and graded.tests[ids[1]] == TestState.PASS
    assert graded.tests[ids[2]] == TestState.PASS and found == list(verdict.findings) and "toBeEven" in note


def test_records_not_signed_with_the_runs_key_count_for_nothing() -> None:
    channel = _channel([_record(["T", "x"], 0, "2", "1", "pass")], key=b"\x01" * 32)
    verdict = oracle_verdict.decide(HARNESS, channel, {}, decide_test=decide_to_be)
    assert verdict.failed == () and verdict.findings == ()


def test_records_reach_the_decider_per_test_in_seq_order() -> None:
    seen: list[list[int]] = []

    def spy(records: list[dict[str, Any]], snapshots: Any) -> Decision:
        seen.append([r["seq"] for r in records])
        return Decision(True, [], [])

    channel = _channel([_record(["T", "x"], 1, "1", "1", "pass"), _record(["T", "x"], 0, "1", "1", "pass")])
    oracle_verdict.decide(HARNESS, channel, {}, decide_test=spy)
    assert seen == [[0, 1]]


def test_off_leaves_the_run_as_it_was_and_a_missing_decider_is_the_harness_failure(tmp_path: Path) -> None:
    parsed = ParseResult(tests={"a::b": TestState.PASS}, messages={}, warnings=[])
    channel = _channel([_record(["b"], 0, "2", "1", "pass")])
    assert oracle_verdict.graded({**HARNESS, "oracle": False}, channel, parsed, tmp_path) == (parsed, [], "")

    def missing() -> Any:
        raise ImportError("no module named pytest_mobilebench.oracle")

    mp = pytest.MonkeyPatch()
    mp.setattr(oracle_verdict, "decider", missing)
    try:
        with pytest.raises(InfraError, match="decider is not installed"):
            oracle_verdict.graded(HARNESS, channel, parsed, tmp_path)
    finally:
        mp.undo()


def test_snapshots_are_read_from_the_evidence_by_repository_path(tmp_path: Path) -> None:
    (tmp_path / "snapshots" / "__tests__" / "__snapshots__").mkdir(parents=True)
    (tmp_path / "snapshots" / "__tests__" / "__snapshots__" / "a.test.js.snap").write_bytes(b"exports[`x 1`] = `1`;\n")
    assert oracle_verdict.read_snapshots(tmp_path) == {
        "__tests__/__snapshots__/a.test.js.snap": b"exports[`x 1`] = `1`;\n"
    }
    assert oracle_verdict.snapshot_paths(["__tests__/a.test.js", "b.test.js"]) == [
        "__tests__/__snapshots__/a.test.js.snap",
        "__snapshots__/b.test.js.snap",
    ]


def test_a_decider_that_fails_is_the_harness_failure_never_a_verdict(tmp_path: Path) -> None:
    parsed = ParseResult(tests={"a::b": TestState.PASS}, messages={}, warnings=[])
    channel = _channel([_record(["b"], 0, "2", "1", "pass")])

    def broken(records: list[dict[str, Any]], snapshots: Any) -> Decision:
        raise ValueError("a value the decider cannot read")

    with pytest.raises(InfraError, match="decider failed"):
        _graded(tmp_path, channel, parsed, broken)


def test_off_writes_the_runner_without_the_recorder_and_keeps_no_snapshots(tmp_path: Path) -> None:
    from pytest_mobilebench.frameworks.react_native import harness

    on = harness.prepare("node_modules/.bin/jest --ci --runTestsByPath __tests__/a.test.js")
    assert on is not None and on.oracle and on.to_dict()["oracle"] is True
    off = harness.with_oracle(on, on=False)
    runner = f"{on.folder}/runner.js"
    assert b"const ORACLE = true;" in on.files[runner] and b"const ORACLE = false;" in off.files[runner]
    assert (off.nonce, off.key, off.command, off.to_dict()["oracle"]) == (on.nonce, on.key, on.command, False)

    class Workspace:
        asked: list[list[str]] = []

        def read_files(self, patterns: list[str]) -> dict[str, bytes]:
            self.asked.append(patterns)
            return {"__tests__/__snapshots__/a.test.js.snap": b"exports[`x 1`] = `1`;\n", "../escape.snap": b"x"}

    ws = Workspace()
    assert oracle_verdict.keep_snapshots(ws, off, tmp_path) == {} and ws.asked == []
    oracle_verdict.keep_snapshots(ws, on, tmp_path)
    assert ws.asked == [["__tests__/__snapshots__/a.test.js.snap"]]
    assert oracle_verdict.read_snapshots(tmp_path) == {
        "__tests__/__snapshots__/a.test.js.snap": b"exports[`x 1`] = `1`;\n"
    }
    assert not (tmp_path / "escape.snap").exists()


def _graded(
    tmp_path: Path, channel: bytes, parsed: ParseResult, decide: Any = decide_to_be
) -> tuple[ParseResult, list[str], str]:
    """:func:`oracle_verdict.graded` with ``decide`` as the decider and the snapshots as a plain mapping."""
    mp = pytest.MonkeyPatch()
    mp.setattr(oracle_verdict, "decider", lambda: decide)
    mp.setattr(oracle_verdict, "snapshot_source", dict)
    try:
        return oracle_verdict.graded(HARNESS, channel, parsed, tmp_path)
    finally:
        mp.undo()


def test_a_failed_snapshot_reported_passing_was_cleared_in_realm_and_cannot_pass(tmp_path: Path) -> None:
    """A snapshot matcher never throws: its failure reaches jest through ``suppressedErrors``, which no test body can
    catch. Reported passing, the test's failure was cleared in its realm (the circus-hook attack of nmf-app #418)."""
    ids = [f"__tests__/a.test.js::S > {n}" for n in ("cleared", "failed", "inverted", "held")]
    bodies = [
        _record(["S", "cleared"], 0, "1", "1", "fail", matcher="toMatchSnapshot"),
        _record(["S", "failed"], 0, "1", "1", "fail", matcher="toMatchInlineSnapshot"),
        _record(["S", "inverted"], 0, "1", "1", "fail", matcher="toMatchSnapshot"),
        _record(["S", "held"], 0, "1", "1", "pass", matcher="toMatchSnapshot"),
        {"type": "file", "path": "/testbed/__tests__/a.test.js",
         "tests": [{"titles": ["S", "inverted"], "status": "passed", "failing": True}]},
    ]  # fmt: skip
    states = dict.fromkeys(ids, TestState.PASS) | {ids[1]: TestState.FAIL}
    graded, found, _ = _graded(tmp_path, _channel(bodies), ParseResult(tests=states, messages={}, warnings=[]))
    assert [t for t in ids if graded.tests[t] is TestState.FAIL] == ids[:2]
    assert len(found) == 1 and found[0].startswith(ids[0] + ": toMatchSnapshot (seq 0) failed and that matcher")


def test_a_thrown_assertion_failure_a_test_caught_keeps_its_pass(tmp_path: Path) -> None:
    """``toBe`` throws: a test may catch its own failure (``expect(() => expect(1).toBe(2)).toThrow()``)."""
    channel = _channel([_record(["T", "caught"], 0, "1", "2", "fail")])
    parsed = ParseResult(tests={"__tests__/a.test.js::T > caught": TestState.PASS}, messages={}, warnings=[])
    graded, found, _ = _graded(tmp_path, channel, parsed)
    assert graded.tests == parsed.tests and found == []
