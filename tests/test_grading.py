"""Hand-computed checks of pytest_mobilebench.suites.issue_resolution.grading."""

from __future__ import annotations

import dataclasses
import json

import pytest

from pytest_mobilebench.suites.issue_resolution.grading import (
    GOLD_LISTS,
    Localization,
    RunOutcome,
    RunStates,
    Verdict,
    count_transitions,
    drop_flaky,
    grade,
    localization,
    states_for,
    transitions,
    validate_instance,
)
from pytest_mobilebench.states import Reason, TestState

P, F, N, S = TestState.PASS, TestState.FAIL, TestState.NONE, TestState.SKIP


# --------------------------------------------------------------------------------------------- states


def test_states_for_absent_is_none() -> None:
    assert states_for(["b", "a", "z"], {"a": P, "b": S}) == {"b": S, "a": P, "z": N}
    assert list(states_for(["b", "a"], {})) == ["b", "a"]


def test_transitions_over_union() -> None:
    before = {"t1": F, "t2": P, "t3": P, "t4": S}
    after = {"t1": P, "t2": P, "t3": F, "t5": P}
    result = transitions(before, after)
    assert result == {"t1": "F2P", "t2": "P2P", "t3": "P2F", "t4": "S2N", "t5": "N2P"}
    assert all(type(v) is str for v in result.values())
    assert list(result) == sorted(result)
    assert count_transitions(before, after) == {"F2P": 1, "N2P": 1, "P2F": 1, "P2P": 1, "S2N": 1}
    assert count_transitions({}, {}) == {}


# --------------------------------------------------------------------------------------------- flaky


def test_drop_flaky_removes_tests_that_differ() -> None:
    runs = [
        {"a": P, "b": F, "c": P, "d": S},
        {"a": P, "b": P, "c": P, "d": S, "e": F},
        {"a": P, "b": F, "c": P, "d": S},
    ]
    stable, flaky = drop_flaky(runs)
    # b flips PASS/FAIL; e is FAIL once and absent (NONE) twice
    assert flaky == {"b", "e"}
    assert stable == {"a": P, "c": P, "d": S}


def test_drop_flaky_single_run_and_errors() -> None:
    assert drop_flaky([{"x": F}]) == ({"x": F}, set())
    assert drop_flaky([{}, {}]) == ({}, set())
    with pytest.raises(ValueError, match="at least one run"):
        drop_flaky([])


def test_flaky_test_leaves_gold_lists() -> None:
    # the fix run is repeated; "Flaky#t" passes once and fails once, so it must not become F2P
    fix_runs = [{"A#t": P, "Flaky#t": P, "B#t": P}, {"A#t": P, "Flaky#t": F, "B#t": P}]
    fix_states, flaky = drop_flaky(fix_runs)
    assert flaky == {"Flaky#t"}
    test_states, _ = drop_flaky([{"A#t": F, "Flaky#t": F, "B#t": P}] * 2)
    test_states = {k: v for k, v in test_states.items() if k not in flaky}
    v = validate_instance(
        RunStates(test_states, True, True), RunStates(test_states, True, True), RunStates(fix_states, True, True)
    )
    assert v.valid
    assert v.fail_to_pass == ["A#t"]
    assert v.pass_to_pass == ["B#t"]
    assert "Flaky#t" not in v.fail_to_pass + v.pass_to_pass + v.none_to_pass


# --------------------------------------------------------------------------------------------- validation

BASE_OK = RunStates({"Old#a": P, "Old#b": P}, built=True, executed=True)


def test_valid_instance_gold_lists_sorted() -> None:
    test = RunStates({"Old#a": P, "Old#b": P, "Bug#z": F, "Bug#y": F, "Skip#s": S}, True, True)
    fix = RunStates({"Old#a": P, "Old#b": P, "Bug#z": P, "Bug#y": P, "Skip#s": P, "New#n": P}, True, True)
    v = validate_instance(BASE_OK, test, fix)
    assert v.valid and v.problems == ()
    assert v.fail_to_pass == ["Bug#y", "Bug#z"]
    assert v.none_to_pass == ["New#n"]
    assert v.pass_to_pass == ["Old#a", "Old#b"]
    assert v.pass_to_fail == []
    assert v.transition_counts == {"F2P": 2, "N2P": 1, "P2P": 2, "S2P": 1}  # S2P is in no gold list
    d = v.to_dict()
    assert d["FAIL_TO_PASS"] == ["Bug#y", "Bug#z"]
    json.dumps(d)


def test_n2p_only_instance_is_valid() -> None:
    # new test class that does not compile before the fix: NONE in the test run, PASS in the fix run
    test = RunStates({"Old#a": P}, built=True, executed=True)
    fix = RunStates({"Old#a": P, "New#a": P, "New#b": P}, built=True, executed=True)
    v = validate_instance(BASE_OK, test, fix)
    assert v.valid
    assert (v.fail_to_pass, v.none_to_pass, v.pass_to_pass) == ([], ["New#a", "New#b"], ["Old#a"])


def test_p2f_invalidates() -> None:
    test = RunStates({"Old#a": P, "Bug#x": F}, True, True)
    fix = RunStates({"Old#a": F, "Bug#x": P}, True, True)
    v = validate_instance(BASE_OK, test, fix)
    assert not v.valid
    assert v.pass_to_fail == ["Old#a"]
    assert v.fail_to_pass == ["Bug#x"]
    assert v.problems == ("1 PASS_TO_FAIL test(s): the gold patch breaks Old#a",)


def test_no_f2p_no_n2p_invalid() -> None:
    test = RunStates({"Old#a": P, "Bug#x": F}, True, True)
    fix = RunStates({"Old#a": P, "Bug#x": F}, True, True)
    v = validate_instance(BASE_OK, test, fix)
    assert not v.valid
    assert v.problems == ("no FAIL_TO_PASS or NONE_TO_PASS test: the gold patch makes no test pass",)


def test_skip_to_pass_alone_is_not_enough() -> None:
    v = validate_instance(BASE_OK, RunStates({"T#a": S}, True, True), RunStates({"T#a": P}, True, True))
    assert not v.valid
    assert v.transition_counts == {"S2P": 1}


def test_base_and_fix_must_build_and_execute() -> None:
    test = RunStates({"Bug#x": F}, True, True)
    fix = RunStates({"Bug#x": P}, True, True)
    v = validate_instance(RunStates({}, built=False, executed=False), test, fix)
    assert v.problems == ("the base run did not build",)
    v = validate_instance(BASE_OK, test, RunStates({"Bug#x": P}, built=True, executed=False))
    assert v.problems == ("the fix run built but did not execute tests",)
    assert not v.valid
    # the test run may fail to compile its new tests: that is not a problem (they are NONE -> N2P)
    v = validate_instance(BASE_OK, RunStates({}, built=False, executed=False), fix)
    assert v.valid and v.none_to_pass == ["Bug#x"]


def test_every_problem_is_listed() -> None:
    many_p2f = {f"T#{i}": P for i in range(7)}
    v = validate_instance(
        RunStates({}, built=True, executed=False),
        RunStates(many_p2f, True, True),
        RunStates({k: F for k in many_p2f}, built=False, executed=False),
    )
    assert v.problems == (
        "the base run built but did not execute tests",
        "the fix run did not build",
        "no FAIL_TO_PASS or NONE_TO_PASS test: the gold patch makes no test pass",
        "7 PASS_TO_FAIL test(s): the gold patch breaks T#0, T#1, T#2, T#3, T#4 and 2 more",
    )


# --------------------------------------------------------------------------------------------- grade

GOLD = {"fail_to_pass": ["Bug#x", "Bug#y"], "none_to_pass": ["New#n"], "pass_to_pass": ["Old#a"]}
ALL_PASS = {"Bug#x": P, "Bug#y": P, "New#n": P, "Old#a": P, "Extra#e": F}


def _outcome(**changes: object) -> RunOutcome:
    base = RunOutcome(applied=True, built=True, tests=ALL_PASS)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def test_resolved_when_every_gold_test_passes() -> None:
    v = grade(**GOLD, outcome=_outcome())
    assert v.reason is Reason.RESOLVED and v.resolved
    # a failing test outside the gold lists does not matter
    assert v.counts == {
        "FAIL_TO_PASS": {"passed": 2, "total": 2},
        "NONE_TO_PASS": {"passed": 1, "total": 1},
        "PASS_TO_PASS": {"passed": 1, "total": 1},
    }
    assert v.failing == {name: {} for name in GOLD_LISTS}


def test_skip_in_f2p_is_not_resolved() -> None:
    v = grade(**GOLD, outcome=_outcome(tests={**ALL_PASS, "Bug#y": S}))
    assert v.reason is Reason.UNRESOLVED and not v.resolved
    assert v.failing["FAIL_TO_PASS"] == {"Bug#y": S}
    assert v.counts["FAIL_TO_PASS"] == {"passed": 1, "total": 2}
    assert v.detail == "not passing: 1 of 2 FAIL_TO_PASS"


def test_missing_n2p_and_broken_p2p_are_unresolved() -> None:
    tests = {"Bug#x": P, "Bug#y": P, "Old#a": F}
    v = grade(**GOLD, outcome=_outcome(tests=tests))
    assert v.reason is Reason.UNRESOLVED
    assert v.failing == {"FAIL_TO_PASS": {}, "NONE_TO_PASS": {"New#n": N}, "PASS_TO_PASS": {"Old#a": F}}
    assert v.to_dict()["failing"] == {
        "FAIL_TO_PASS": {},
        "NONE_TO_PASS": {"New#n": "NONE"},
        "PASS_TO_PASS": {"Old#a": "FAIL"},
    }
    assert v.detail == "not passing: 1 of 1 NONE_TO_PASS, 1 of 1 PASS_TO_PASS"


def test_no_tests_ran_is_never_resolved() -> None:
    v = grade(fail_to_pass=[], none_to_pass=[], pass_to_pass=[], outcome=_outcome(tests={}))
    assert v.reason is Reason.NO_TESTS_RAN and not v.resolved
    v = grade(**GOLD, outcome=_outcome(tests={}))
    assert v.reason is Reason.NO_TESTS_RAN
    assert v.counts["FAIL_TO_PASS"] == {"passed": 0, "total": 2}
    assert v.failing["FAIL_TO_PASS"] == {"Bug#x": N, "Bug#y": N}


def test_empty_gold_lists_never_resolve() -> None:
    v = grade(fail_to_pass=[], none_to_pass=[], pass_to_pass=["Old#a"], outcome=_outcome())
    assert v.reason is Reason.UNRESOLVED and not v.resolved
    assert "cannot be resolved" in v.detail
    v = grade(fail_to_pass=[], none_to_pass=[], pass_to_pass=[], outcome=_outcome())
    assert v.reason is Reason.UNRESOLVED


def test_n2p_only_gold_resolves() -> None:
    v = grade(fail_to_pass=[], none_to_pass=["New#n"], pass_to_pass=[], outcome=_outcome())
    assert v.reason is Reason.RESOLVED


# Each row sets the facts of all later reasons too, to prove the earlier one wins.
PRECEDENCE = [
    (dict(missing_prediction=True, empty_patch=True, infra_error="x", applied=False), Reason.MISSING_PREDICTION),
    (dict(empty_patch=True, infra_error="x", applied=False, policy_violation="p"), Reason.EMPTY_PATCH),
    (dict(infra_error="docker daemon down", applied=False, timed_out=True, built=False), Reason.INFRA_ERROR),
    (dict(applied=False, policy_violation="p", timed_out=True, built=False, tests={}), Reason.PATCH_APPLY_FAILED),
    (dict(policy_violation="edits test/FooTest.kt", timed_out=True, built=False), Reason.POLICY_VIOLATION),
    (dict(timed_out=True, built=False, tests={}), Reason.TIMEOUT),
    (dict(built=False, tests={}), Reason.BUILD_FAILED),
    (dict(tests={}), Reason.NO_TESTS_RAN),
]


@pytest.mark.parametrize(("changes", "reason"), PRECEDENCE, ids=[r.value for _, r in PRECEDENCE])
def test_reason_precedence(changes: dict[str, object], reason: Reason) -> None:
    v = grade(**GOLD, outcome=_outcome(**changes))
    assert v.reason is reason
    assert not v.resolved


def test_details_carry_the_causes() -> None:
    assert grade(**GOLD, outcome=_outcome(infra_error="OOM killed")).detail == "OOM killed"
    v = grade(**GOLD, outcome=_outcome(policy_violation="candidate edits test/FooTest.kt"))
    assert v.detail == "candidate edits test/FooTest.kt"
    # an empty infra text is still infra
    assert grade(**GOLD, outcome=_outcome(infra_error="")).reason is Reason.INFRA_ERROR


def test_policy_violation_wins_over_passing_tests() -> None:
    v = grade(**GOLD, outcome=_outcome(policy_violation="edits tests"))
    assert v.reason is Reason.POLICY_VIOLATION
    assert v.counts["FAIL_TO_PASS"] == {"passed": 2, "total": 2}


def test_verdict_to_dict_is_plain_json() -> None:
    v = grade(**GOLD, outcome=_outcome(tests={**ALL_PASS, "Bug#x": F}))
    d = v.to_dict()
    assert json.loads(json.dumps(d)) == d
    assert d["reason"] == "unresolved" and d["resolved"] is False
    assert d["failing"]["FAIL_TO_PASS"] == {"Bug#x": "FAIL"}
    assert isinstance(v, Verdict)
    with pytest.raises(dataclasses.FrozenInstanceError):
        v.reason = Reason.RESOLVED  # type: ignore[misc]


def test_grade_rejects_string_gold_list() -> None:
    with pytest.raises(ValueError, match="fail_to_pass must be a collection of test ids"):
        grade(fail_to_pass="Bug#x", none_to_pass=[], pass_to_pass=[], outcome=_outcome())


def test_duplicate_gold_ids_count_once() -> None:
    v = grade(fail_to_pass=["Bug#x", "Bug#x"], none_to_pass=[], pass_to_pass=[], outcome=_outcome())
    assert v.counts["FAIL_TO_PASS"] == {"passed": 1, "total": 1}


# --------------------------------------------------------------------------------------------- localization


def test_localization_by_hand() -> None:
    # gold {A, B, C}, pred {B, C, D, E}: hit 2 -> R = 2/3, P = 2/4, F1 = 2*(1/2)(2/3)/(1/2+2/3) = 4/7
    loc = localization({"A", "B", "C"}, ["B", "C", "D", "E"])
    assert loc.recall == pytest.approx(2 / 3)
    assert loc.precision == pytest.approx(0.5)
    assert loc.f1 == pytest.approx(4 / 7)
    assert localization(["A"], ["A"]) == Localization(1.0, 1.0, 1.0)


def test_localization_edge_cases() -> None:
    assert localization(["A"], []) == Localization(precision=0.0, recall=0.0, f1=0.0)
    assert localization(["A"], ["B"]) == Localization(0.0, 0.0, 0.0)
    assert localization(["A", "A", "B"], ["A", "A"]).to_dict() == {
        "precision": 1.0,
        "recall": 0.5,
        "f1": pytest.approx(2 / 3),
    }
    with pytest.raises(ValueError, match="gold_files is empty"):
        localization([], ["A"])
    with pytest.raises(ValueError, match="pred_files must be a collection"):
        localization(["A"], "A")


def test_a_timeout_names_its_limit_and_the_cause_leads_the_detail() -> None:
    """Issue 33: a timeout's message opened with advice about test_command; the cause comes first now."""
    from pytest_mobilebench.suites.issue_resolution.grading import lead_with_cause, time_limit_words

    assert time_limit_words(3, from_instance=False) == "--mb-instance-timeout (3 s)"
    assert time_limit_words(1.5, from_instance=True) == "the instance's timeout_s (1.5 s)"
    v = grade(**GOLD, outcome=_outcome(timed_out=True, time_limit="--mb-instance-timeout (3 s)"))
    assert v.reason is Reason.TIMEOUT and v.detail == "the test run exceeded --mb-instance-timeout (3 s)"
    assert lead_with_cause(v, "expected test results in x") == (
        "the test run exceeded --mb-instance-timeout (3 s); expected test results in x"
    )
    bad = grade(**GOLD, outcome=_outcome(applied=False))
    assert lead_with_cause(bad, "the patch does not apply (3 strategies tried)").startswith("the patch does not apply")
    assert lead_with_cause(v, None) == v.detail
