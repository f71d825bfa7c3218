"""The device flake policy, pure: per-test attempts, passed_flaky, and the strict and lenient headline."""

from __future__ import annotations

from pytest_mobilebench.suites.device_repair.flake import attempts_per_test, passed_flaky, strict_and_lenient
from pytest_mobilebench.report.headline import suite_headline
from pytest_mobilebench.suites.device_repair.summary import summarize

TARGET = "com.acme.CalcTest#adds"


def _attempt(state: str, target: str | None, kind: str | None, regression: dict | None = None) -> dict:
    return {"state": state, "target": target, "infra_kind": kind, "regression": regression or {}}


CRASH_THEN_PASS = [_attempt("candidate", "process_crash", "app_crash", {"com.acme.CalcTest#subs": "passed"}),
                   _attempt("candidate", "passed", None, {"com.acme.CalcTest#subs": "passed"})]  # fmt: skip


def test_a_pass_only_on_a_retry_is_flaky_and_each_tests_attempts_are_kept() -> None:
    assert passed_flaky(True, CRASH_THEN_PASS, "candidate")
    assert attempts_per_test(CRASH_THEN_PASS, "candidate", TARGET) == {
        TARGET: ["process_crash", "passed"],
        "com.acme.CalcTest#subs": ["passed", "passed"],
    }


def test_a_first_time_pass_a_failure_and_a_device_retry_are_not_flaky() -> None:
    assert not passed_flaky(True, [_attempt("candidate", "passed", None)], "candidate")
    assert not passed_flaky(False, CRASH_THEN_PASS, "candidate")  # not a pass at all
    offline_then_pass = [_attempt("candidate", None, "device_offline"), _attempt("candidate", "passed", None)]
    assert not passed_flaky(True, offline_then_pass, "candidate")  # the harness's retry: the target never ran
    # a gold item is decided by S_fix; S_bug's attempts do not count
    gold = [_attempt("S_bug", "assertion_failure", None), _attempt("S_fix", "timeout", "test_timeout"),
            _attempt("S_fix", "passed", None)]  # fmt: skip
    assert passed_flaky(True, gold, "S_fix") and not passed_flaky(True, gold, "S_bug")
    assert attempts_per_test(offline_then_pass, "candidate", TARGET) == {TARGET: ["not_run", "passed"]}


def _row(iid: str, passed: bool, flaky: bool = False) -> dict:
    return {
        "instance_id": iid,
        "model_name_or_path": "m",
        "reason": "resolved" if passed else "unresolved",
        "passed": passed,
        "retryable": False,
        "repo": "acme/calc",
        "passed_flaky": flaky,
        "attempts": 2 if flaky else 1,
        "test_attempts": {TARGET: ["process_crash", "passed"] if flaky else ["passed"]},
    }


def test_the_headline_is_strict_and_shows_the_lenient_rate_beside_it() -> None:
    rows = [_row("a", True), _row("b", True, flaky=True), _row("c", False), _row("d", True)]
    strict, lenient = strict_and_lenient(rows)
    assert (strict["numerator"], lenient["numerator"], strict["denominator"]) == (2, 3, 4)
    table = summarize(rows)
    headline = table["headline"]
    assert (headline["numerator"], headline["denominator"], headline["value"]) == (2, 4, 0.5)
    assert headline["lenient"]["numerator"] == 3 and headline["lenient"]["value"] == 0.75
    assert headline["lenient"]["label"].startswith("Pass@1 lenient")
    assert "1 target(s) that passed only on a retry" in headline["note"]
    assert table["passed_flaky"] == [{"instance_id": "b", "model_name_or_path": "m", "attempts": 2,
                                      "test_attempts": {TARGET: ["process_crash", "passed"]}}]  # fmt: skip
    block = suite_headline("device_repair", rows, table=table)["headline"]  # the terminal and the page show "secondary"
    assert [(e["label"], e["numerator"], e["denominator"]) for e in block["secondary"]] == [
        (headline["lenient"]["label"], 3, 4)
    ]
