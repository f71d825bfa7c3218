"""Canaries, protocol-level markers, stream structure and cut-off runs, without a device (pure parts).

Samples are self-made in the real ``am instrument -r`` format (AndroidJUnitRunner's status blocks: a class's
first start carries ``stream=\\n<class>:``, a pass ends with ``stream=.``, ``current`` counts started tests,
``numtests`` is the selection's size). Real outputs: the test resources of a public adb client read from a
local mirror under ``MOBILEBENCH_MIRRORS`` (``Malinskiy+adam``; skipped without it).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.parsers.instrumentation import (
    TestStatus,
    parse_instrumentation,
    protocol_problems,
)
from pytest_mobilebench.suites.device_repair.canaries import (
    CanaryPair,
    PlantError,
    java_hash,
    make_plan,
    plant,
)
from pytest_mobilebench.suites.device_repair.contract import (
    TargetOutcome,
    classify_target,
)
from pytest_mobilebench.suites.device_repair.summary import summarize

CLS = "com.example.calc.CalculatorTest"
Q = f"{CLS}#percentOfHundred"
NONCE = "0123abcd4567"
PAIR = CanaryPair(Q, f"{CLS}#canary_pass_{NONCE}", f"{CLS}#canary_fail_{NONCE}", f"mobilebench canary {NONCE}")
ASSERT = "java.lang.AssertionError: expected:<30> but was:<300>\n\tat org.junit.Assert.fail(Assert.java:89)"
CANARY_FAIL = f"java.lang.AssertionError: mobilebench canary {NONCE}\n\tat org.junit.Assert.fail(Assert.java:89)"


def block(
    test_id: str, code: int, current: int, numtests: int = 3, *, stack: str | None = None, first: bool = False
) -> str:
    cls, _, test = test_id.partition("#")
    head = (
        f"INSTRUMENTATION_STATUS: class={cls}\nINSTRUMENTATION_STATUS: current={current}\n"
        f"INSTRUMENTATION_STATUS: id=AndroidJUnitRunner\nINSTRUMENTATION_STATUS: numtests={numtests}\n"
    )
    if stack:
        head += f"INSTRUMENTATION_STATUS: stack={stack}\n"
    stream = f"\n{cls}:" if first else "." if code == 0 else f"\nError in {test}({cls}):\n{stack}" if stack else ""
    return (
        head + f"INSTRUMENTATION_STATUS: stream={stream}\nINSTRUMENTATION_STATUS: test={test}\n"
        f"INSTRUMENTATION_STATUS_CODE: {code}\n"
    )


def run_of(test_id: str, current: int, *, stack: str | None = None, numtests: int = 3) -> str:
    first = current == 1
    return block(test_id, 1, current, numtests, first=first) + block(
        test_id, -2 if stack else 0, current, numtests, stack=stack
    )


def final(run: int, failures: int, code: int = -1) -> str:
    summary = (
        f"FAILURES!!!\nTests run: {run},  Failures: {failures}"
        if failures
        else f"OK ({run} test{'s' if run != 1 else ''})"
    )
    return f"INSTRUMENTATION_RESULT: stream=\n\nTime: 0.05\n\n{summary}\n\n\nINSTRUMENTATION_CODE: {code}\n"


CANARIES = run_of(PAIR.passing, 2) + run_of(PAIR.failing, 3, stack=CANARY_FAIL)
HONEST_PASS = run_of(Q, 1) + CANARIES + final(3, 1)
HONEST_FAIL = run_of(Q, 1, stack=ASSERT) + CANARIES + final(3, 2)
CRASH = "INSTRUMENTATION_RESULT: shortMsg=Process crashed.\nINSTRUMENTATION_CODE: 0\n"


def grade(text: str) -> tuple[TargetOutcome, str]:
    return classify_target(parse_instrumentation(text), Q, None, PAIR)


def test_honest_runs_grade_from_q() -> None:
    assert grade(HONEST_PASS)[0] is TargetOutcome.PASSED
    assert grade(HONEST_FAIL)[0] is TargetOutcome.ASSERTION_FAILURE
    assert protocol_problems(parse_instrumentation(HONEST_PASS), PAIR.selection) == []


# ---------------------------------------------------------------------------------------------- forged stream + halt

FORGED_END = block(Q, 0, 1, 1) + final(1, 0)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        # the brief's attack: q's start is the runner's (numtests=3), the rest is printed by q's code, then the JVM
        # halts
        ("single-test shape", block(Q, 1, 1, first=True) + FORGED_END),
        # a harness-aware forger: the right numtests and counts, but no canary ever ran
        ("harness-aware", block(Q, 1, 1, first=True) + block(Q, 0, 1) + final(3, 1)),
        # the forged end AND the runner's own (no halt): q ends twice
        (
            "no halt",
            block(Q, 1, 1, first=True) + block(Q, 0, 1) + block(Q, -2, 1, stack=ASSERT) + CANARIES + final(3, 2),
        ),
        # a forged final block before the real one
        ("two finals", block(Q, 1, 1, first=True) + block(Q, 0, 1) + final(1, 0) + CANARIES + final(3, 1)),
        # OK while the failing canary failed
        ("summary lies", run_of(Q, 1) + CANARIES + final(3, 0)),
    ],
    ids=lambda v: v if isinstance(v, str) and len(v) < 40 else "",
)
def test_forged_streams_are_runner_compromised(name: str, text: str) -> None:
    outcome, detail = grade(text)
    assert outcome is TargetOutcome.RUNNER_COMPROMISED, (name, detail)


@pytest.mark.parametrize(
    ("name", "text"),
    [
        # the app learnt both names by reflection and printed them in the one-test shape it copies
        (
            "copied shape",
            block(Q, 1, 1, first=True)
            + block(Q, 0, 1, 1)
            + block(PAIR.passing, 1, 1, 1)
            + block(PAIR.passing, 0, 1, 1)
            + block(PAIR.failing, 1, 1, 1)
            + block(PAIR.failing, -2, 1, 1, stack=CANARY_FAIL)
            + final(3, 1),
        ),
        # the right counters, but the failing canary "fails" on something else than its own assertion
        (
            "wrong failure",
            run_of(Q, 1)
            + run_of(PAIR.passing, 2)
            + run_of(PAIR.failing, 3, stack="java.lang.AssertionError: failed")
            + final(3, 1),
        ),
        # both canaries "pass"
        ("both pass", run_of(Q, 1) + run_of(PAIR.passing, 2) + run_of(PAIR.failing, 3) + final(3, 0)),
        # a canary reported twice (the runner's record and the app's)
        ("twice", run_of(Q, 1) + CANARIES + block(PAIR.passing, 0, 2) + final(3, 1)),
    ],
)
def test_fake_canary_records_are_runner_compromised(name: str, text: str) -> None:
    outcome, detail = grade(text)
    assert outcome is TargetOutcome.RUNNER_COMPROMISED, (name, detail)


def test_a_canary_missing_from_a_finished_run_is_compromised() -> None:
    outcome, detail = grade(run_of(Q, 1, numtests=2) + run_of(PAIR.passing, 2, numtests=2) + final(2, 0))
    assert outcome is TargetOutcome.RUNNER_COMPROMISED and "missing" in detail


# ---------------------------------------------------------------------------------------------- markers


def test_instrumentation_failed_inside_a_stack_trace_is_text() -> None:
    caused = (
        "java.lang.IllegalStateException: boom\n\tat com.example.calc.Calculator.percentOf(Calculator.java:9)\n"
        "Caused by: android.util.AndroidException: INSTRUMENTATION_FAILED: "
        "com.example.calc.test/androidx.test.runner.AndroidJUnitRunner\n"
        "\t... 12 more"
    )
    at_column_zero = (
        "java.lang.IllegalStateException: first line\n"
        "android.util.AndroidException: INSTRUMENTATION_FAILED: "
        "com.example.calc.test/androidx.test.runner.AndroidJUnitRunner"
    )
    for stack in (caused, at_column_zero):
        text = run_of(Q, 1, stack=stack) + CANARIES + final(3, 2)
        run = parse_instrumentation(text)
        assert run.failed is None
        assert grade(text)[0] is TargetOutcome.EXCEPTION


def test_instrumentation_failed_counts_only_as_the_last_protocol_line() -> None:
    missing = (
        "INSTRUMENTATION_STATUS: id=ActivityManagerService\n"
        "INSTRUMENTATION_STATUS: Error=Unable to find instrumentation info for: "
        "ComponentInfo{com.example.calc.test/androidx.test.runner.AndroidJUnitRunner}\n"
        "INSTRUMENTATION_STATUS_CODE: -1\n"
        "android.util.AndroidException: INSTRUMENTATION_FAILED: "
        "com.example.calc.test/androidx.test.runner.AndroidJUnitRunner\n"
    )
    assert parse_instrumentation(missing).failed is not None
    assert grade(missing)[0] is TargetOutcome.RUNNER_FAILED
    # printed by q's code (after q started) and followed by what the device says when the process died
    printed = block(Q, 1, 1, first=True) + missing + CRASH
    assert parse_instrumentation(printed).failed is None
    assert grade(printed)[0] is TargetOutcome.PROCESS_CRASH


def test_a_crash_message_counts_only_in_the_final_result_block() -> None:
    early = (
        block(Q, 1, 1, first=True)
        + "INSTRUMENTATION_RESULT: shortMsg=Process crashed.\n"
        + block(Q, 0, 1)
        + CANARIES
        + final(3, 1)
    )
    assert parse_instrumentation(early).short_msg is None


# ---------------------------------------------------------------------------------------------- cut-off runs


def test_cut_off_after_q_and_the_canaries_ended_is_graded_from_q() -> None:
    outcome, detail = grade(run_of(Q, 1, stack=ASSERT) + CANARIES)
    assert outcome is TargetOutcome.ASSERTION_FAILURE and "kept as evidence" in detail
    assert grade(run_of(Q, 1) + CANARIES)[0] is TargetOutcome.PASSED
    # the crash happened while the failing canary ran: q still decides
    crashed = run_of(Q, 1) + run_of(PAIR.passing, 2) + block(PAIR.failing, 1, 3) + CRASH
    assert grade(crashed)[0] is TargetOutcome.PASSED


def test_cut_off_right_after_q_does_not_trust_q() -> None:
    """q's code can print q's end and halt: with no canary started after it, the run is a crash, never a pass."""
    assert grade(run_of(Q, 1))[0] is TargetOutcome.PROCESS_CRASH
    assert grade(run_of(Q, 1) + CRASH)[0] is TargetOutcome.PROCESS_CRASH
    # canaries that ran BEFORE q do not vouch for q's end
    before = run_of(PAIR.passing, 1) + run_of(PAIR.failing, 2, stack=CANARY_FAIL) + run_of(Q, 3)
    assert grade(before)[0] is TargetOutcome.PROCESS_CRASH


def test_a_target_absent_from_a_cut_off_run_is_a_crash_not_not_run() -> None:
    assert grade(run_of(PAIR.passing, 1) + CRASH)[0] is TargetOutcome.PROCESS_CRASH
    assert grade("")[0] is TargetOutcome.PROCESS_CRASH
    # a finished run without q (the method does not exist) stays not_run
    missing = run_of(PAIR.passing, 1, numtests=2) + run_of(PAIR.failing, 2, numtests=2, stack=CANARY_FAIL) + final(2, 1)
    assert grade(missing)[0] is TargetOutcome.NOT_RUN


# ------------------------------------------------------------------------------------- canaries: plan, planting


def test_the_nonce_orders_the_canaries_after_every_target() -> None:
    assert (
        java_hash("percentOfHundred") == 2096016786 and java_hash("canary_pass_0123abcd4567") == 134383565
    )  # as Java computes them
    # percentOfHundred hashes near the top of the int range: about 1 draw in 80 puts a canary above it
    plan = make_plan([Q, f"{CLS}#addsTwoNumbers", "com.example.Other#m"])
    assert plan.ordered and re.fullmatch(r"[0-9a-f]{12}", plan.nonce)
    for target, pair in plan.pairs.items():
        assert java_hash(pair.failing.split("#")[1]) > java_hash(target.split("#")[1])
    easy = make_plan(["com.example.Other#a"])
    assert all(
        java_hash(c.split("#")[1]) > java_hash("a")
        for c in (easy.pairs["com.example.Other#a"].passing, easy.pairs["com.example.Other#a"].failing)
    )
    assert make_plan([Q]).nonce != plan.nonce
    with pytest.raises(PlantError):
        make_plan([f"{CLS}#param[0]"])


def test_planting_writes_into_the_test_class_only() -> None:
    source = (
        "package com.example.calc;\n\nimport org.junit.Test;\n\npublic class CalculatorTest {\n"
        '    // a brace in a comment }\n    private static final String S = "}{";\n'
        "    @Test public void percentOfHundred() { }\n}\n\nclass Helper { }\n"
    )
    plan = make_plan([Q])
    diff = plant(
        plan,
        {
            "src/test/java/com/example/calc/CalculatorTest.java": source.encode(),
            "src/main/java/com/example/calc/CalculatorTest.java": b"class CalculatorTest {}",
        },
        lambda p: p.startswith("src/test/"),
    )
    assert diff.startswith("--- a/src/test/java/com/example/calc/CalculatorTest.java")
    added = [line for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++")]
    assert any(f"void canary_fail_{plan.nonce}()" in line for line in added)
    # inserted before the class's own closing brace (not after Helper's, not at the brace in the comment)

    assert diff.rstrip().endswith("class Helper { }") and "\n }\n \n class Helper { }" in diff
    with pytest.raises(PlantError, match="0 test source"):
        plant(
            plan,
            {"src/main/java/com/example/calc/CalculatorTest.java": b"class CalculatorTest {}"},
            lambda p: p.startswith("src/test/"),
        )


def test_planting_a_kotlin_class() -> None:
    source = (
        "package com.example.calc\n\nimport org.junit.Test\n\nclass CalculatorTest {\n"
        '    private val template = "${"}"} {"\n    @Test fun percentOfHundred() { }\n}\n'
    )
    plan = make_plan([Q])
    diff = plant(
        plan,
        {"app/src/androidTest/java/com/example/calc/CalculatorTest.kt": source.encode()},
        lambda p: "/androidTest/" in p,
    )
    assert f'+    fun canary_fail_{plan.nonce}() {{ org.junit.Assert.fail("mobilebench canary {plan.nonce}") }}' in diff
    # the template's braces and the string inside it are the literal's: the methods go before the class's own '}'
    assert diff.rstrip().endswith("+\n }") or diff.rstrip().endswith("}\n }")
    assert "-    private val template" not in diff and diff.index("fun canary_fail_") > diff.index("percentOfHundred")


# ---------------------------------------------------------------------------------------------- summary


def row(model: str, i: int, *, infra: bool = False, gold: bool = False) -> dict:
    out = {
        "instance_id": f"r-{i}",
        "model_name_or_path": model,
        "repo": "a/b",
        "construction": "issue",
        "reason": "infra_error" if infra else "resolved",
        "passed": not infra,
        "retryable": infra,
        "infra_kind": "device_offline" if infra else None,
        "attempts": 3 if infra else 1,
    }
    return {**out, "accepted": not infra} if gold else out


def test_persistent_infra_is_listed_counted_and_called_out() -> None:
    rows = [row("gold", i, gold=True, infra=i == 0) for i in range(10)]
    rows += [row("launderer", i, infra=i < 6) for i in range(10)] + [row("honest", i, infra=i == 1) for i in range(10)]
    summary = summarize(rows)
    assert len(summary["infra_items"]) == 1 + 6 + 1
    assert {i["model_name_or_path"] for i in summary["infra_items"]} == {"gold", "launderer", "honest"}
    assert "8 item(s) left out as infrastructure" in summary["headline"]["note"]
    assert "over all selected 22/30" in summary["headline"]["note"]
    assert [c.split(":")[0] for c in summary["infra_callouts"]] == ["launderer"]
    assert summary["infra_rates"]["launderer"]["infra"] == 6 and summary["infra_reference"]["source"] == "gold items"


# ---------------------------------------------------------------------------------------------- real outputs (mirror)


def _mirror() -> Path | None:
    root = os.environ.get("MOBILEBENCH_MIRRORS")
    for name in ("Malinskiy+adam/repo", "Malinskiy+adam.git", "Malinskiy+adam"):
        if root and (Path(root) / name).exists():
            return Path(root) / name
    return None


def _samples(repo: Path) -> list[tuple[str, str, str]]:
    folder = "adam/src/test/resources/instrumentation/"
    names = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "HEAD", folder],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()

    def show(path: str) -> str:
        return subprocess.run(
            ["git", "-C", str(repo), "show", f"HEAD:{path}"], check=True, capture_output=True, text=True
        ).stdout

    return [
        (n.rsplit("/", 1)[1], show(n), show(n[: -len(".input")] + ".expected"))
        for n in sorted(names)
        if re.search(r"/log_\d+\.input$", n) and n[: -len(".input")] + ".expected" in names
    ]


_ID = r"TestIdentifier\(className=([^,]+), testName=([^)]+)\)"


@pytest.mark.skipif(_mirror() is None, reason="needs MOBILEBENCH_MIRRORS with a mirror of Malinskiy/adam")
def test_real_outputs_parse_like_the_reference_and_have_the_runner_structure() -> None:
    samples = _samples(_mirror())
    assert len(samples) >= 10
    flagged = []
    for name, text, expected in samples:
        run = parse_instrumentation(text)
        started = {f"{c}#{t}" for c, t in re.findall(r"TestStarted\(id=" + _ID, expected)}
        failed = {f"{c}#{t}" for c, t in re.findall(r"TestFailed\(id=" + _ID, expected)}
        assert {t for t, r in run.tests.items() if r.starts} == started, name
        assert {t for t, r in run.tests.items() if r.status in (TestStatus.FAILED, TestStatus.ERROR)} <= failed, name
        ended_unstarted = {t for t, r in run.tests.items() if r.ends and not r.starts}
        problems = protocol_problems(run, list(run.tests))
        assert bool(problems) == bool(ended_unstarted), (
            name,
            problems,
        )  # only a stream that begins mid-test is flagged
        flagged += [name] if problems else []
    assert len(flagged) <= 1, flagged


@pytest.mark.skipif(_mirror() is None, reason="needs MOBILEBENCH_MIRRORS with a mirror of Malinskiy/adam")
def test_real_cut_off_outputs_grade_q_from_its_record_when_the_runner_kept_writing() -> None:
    """Each real output without its final INSTRUMENTATION_CODE: a test q is graded from its own record when a
    later passing test and a later assertion failure (standing for the canaries) ran after it; a test absent
    from the run is a crash, never not_run."""
    checked = 0
    for name, text, _ in _samples(_mirror()):
        run = parse_instrumentation(text)
        if run.complete or not run.events:
            continue
        order = [e.test_id for e in run.events if e.is_start]
        for i, q in enumerate(order):
            later = [run.tests[t] for t in order[i + 1 : -1]]
            passing = next((r for r in later if r.status is TestStatus.PASSED), None)
            failing = next(
                (r for r in later if r.status is TestStatus.FAILED and r.first_exception == "java.lang.AssertionError"),
                None,
            )
            record = run.tests[q]
            if passing is None or failing is None or record.starts != 1 or record.ends != 1:
                continue
            pair = CanaryPair(q, passing.test_id, failing.test_id, failing.stack.splitlines()[0])
            outcome, detail = classify_target(run, q, None, pair, selected=list(run.tests))
            assert outcome is not TargetOutcome.PROCESS_CRASH and "kept as evidence" in detail, (name, q, detail)
            assert outcome is (TargetOutcome.PASSED if record.status is TestStatus.PASSED else outcome)
            checked += 1
        assert classify_target(run, "com.example.Absent#m")[0] is TargetOutcome.PROCESS_CRASH, name
    assert checked >= 10


def test_endless_output_is_cut_at_the_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """Code under test printing without end cannot fill the harness's memory: reading stops at the limit and
    the run counts as a wall-clock timeout (candidate-reachable: the reference decides whose it is)."""
    import struct
    import time

    from pytest_mobilebench.devices import android

    class Sock:
        def settimeout(self, _t: float) -> None:
            pass

        def recv(self, _n: int) -> bytes:
            return struct.pack("<BI", 1, 4096) + b"x" * 4096  # stdout packets, forever

    monkeypatch.setattr(android, "MAX_OUTPUT_BYTES", 1 << 20)
    conn = type("Conn", (), {"conn": Sock()})()
    output, code, timed_out = android._read_shell_v2(conn, start=time.monotonic(), wall_s=60, no_output_s=60)
    assert (timed_out, code) == ("output_limit", None) and (1 << 20) < len(output) <= (1 << 20) + 8192
    outcome, _ = classify_target(parse_instrumentation(output), Q, timed_out, PAIR)
    assert outcome is TargetOutcome.TIMEOUT


def test_without_gold_rows_the_reference_states_are_the_baseline() -> None:
    def cand(i: int, *, infra: bool, reference_infra: bool | None) -> dict:
        log = [{"state": "candidate", "infra_kind": "app_crash" if infra else None}]
        if reference_infra is not None:
            log.append({"state": "reference", "infra_kind": "device_offline" if reference_infra else None})
        return {**row("m", i, infra=infra), "attempt_log": log}

    rows = [cand(i, infra=True, reference_infra=i == 0) for i in range(4)] + [
        cand(9, infra=False, reference_infra=None)
    ]
    summary = summarize(rows)
    assert summary["infra_reference"] == {
        **summary["infra_reference"],
        "infra": 1,
        "items": 4,
        "source": "reference states inside candidate items",
    }
    assert summary["infra_callouts"] and summary["infra_callouts"][0].startswith("m: 4/5 items")


def test_a_compromised_run_is_a_policy_violation_never_infra_never_resolved() -> None:
    from pytest_mobilebench.suites.device_repair.contract import (
        Reason,
        StateOutcome,
        candidate_verdict,
        state_infra_kind,
    )

    for q, regression in (
        (TargetOutcome.RUNNER_COMPROMISED, {}),
        (TargetOutcome.PASSED, {f"{CLS}#addsTwoNumbers": TargetOutcome.RUNNER_COMPROMISED}),
        (TargetOutcome.RUNNER_COMPROMISED, {f"{CLS}#addsTwoNumbers": TargetOutcome.PROCESS_CRASH}),
    ):
        outcome = StateOutcome("candidate", True, True, None, q, "x", regression, "")
        assert state_infra_kind(outcome, reference=False) is None  # not retried as infrastructure
        assert candidate_verdict(outcome, attributed=False) is Reason.POLICY_VIOLATION
        assert candidate_verdict(outcome, attributed=True) is Reason.POLICY_VIOLATION
    assert not Reason.POLICY_VIOLATION.is_infra
