"""Pure grading rules of issue resolution (MobileDev-Bench, seed 000; SPEC section 1).

Everything here maps test states (:class:`~pytest_mobilebench.states.TestState`) and run facts to
verdicts; nothing runs a build or reads a file. The suites gather the facts (patch applied? built?
timed out? which tests reported what?) and call these functions; the rules live only here.

* :func:`validate_instance`: is an instance usable, and what are its gold lists (base / test / fix runs).
* :func:`drop_flaky`: tests whose outcome differs between identical runs leave the gold lists.
* :func:`grade`: the verdict of one candidate run, with ONE :class:`~pytest_mobilebench.states.Reason`.
* :func:`localization`: file-level precision / recall / F1 of a candidate patch.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any, Final, final

from pytest_mobilebench.states import Reason, TestState, transition_of

__all__ = [
    "GOLD_LISTS",
    "Localization",
    "RunOutcome",
    "RunStates",
    "Validation",
    "Verdict",
    "count_transitions",
    "drop_flaky",
    "grade",
    "lead_with_cause",
    "localization",
    "states_for",
    "time_limit_words",
    "transitions",
    "validate_instance",
]

#: Names of the gold lists, in report order (SWE-bench vocabulary extended by MobileDev-Bench).
GOLD_LISTS: Final[tuple[str, ...]] = ("FAIL_TO_PASS", "NONE_TO_PASS", "PASS_TO_PASS")


# ------------------------------------------------------------------------------------------------ states


def states_for(ids: Iterable[str], parsed: Mapping[str, TestState]) -> dict[str, TestState]:
    """The state of each id in ``ids``; an id absent from ``parsed`` is ``NONE`` (it does not exist in that
    run; SPEC section 1 "Test states"). Keys keep the order of ``ids``."""
    return {test_id: parsed.get(test_id, TestState.NONE) for test_id in ids}


def transitions(before: Mapping[str, TestState], after: Mapping[str, TestState]) -> dict[str, str]:
    """Transition name (``"F2P"``, ``"N2P"``, ``"P2F"`` ...) of every test id in either run.

    ``before`` is the ``test`` run (base + test_patch), ``after`` the ``fix`` run (+ gold patch), per
    MobileDev-Bench section 3.4 / SPEC section 1 "The three configurations". An id missing from one run is
    ``NONE`` there. Returns ``{test_id: name}`` sorted by id, names as plain ``str``.
    """
    ids = sorted(set(before) | set(after))
    return {
        test_id: str(transition_of(before.get(test_id, TestState.NONE), after.get(test_id, TestState.NONE)))
        for test_id in ids
    }


def count_transitions(before: Mapping[str, TestState], after: Mapping[str, TestState]) -> dict[str, int]:
    """How many tests make each transition (see :func:`transitions`); ``{name: count}`` sorted by name,
    only transitions that occur."""
    return dict(sorted(Counter(transitions(before, after).values()).items()))


def drop_flaky(runs: Sequence[Mapping[str, TestState]]) -> tuple[dict[str, TestState], set[str]]:
    """Remove tests whose state differs across identical runs (SPEC section 1: "A test whose outcome
    differs between two identical runs is flaky and must not be in any gold list").

    A test reported in one run and absent from another differs (``X`` vs ``NONE``).

    Args:
        runs: the parsed states of two or more runs of the SAME configuration. One run finds nothing flaky.

    Returns:
        ``(stable, flaky)``: ``stable`` maps every test with one state in all runs to that state (sorted by
        id); ``flaky`` is the set of removed ids.

    Raises:
        ValueError: when ``runs`` is empty.
    """
    if not runs:
        raise ValueError("drop_flaky needs at least one run")
    ids = sorted(set().union(*(set(run) for run in runs)))
    stable: dict[str, TestState] = {}
    flaky: set[str] = set()
    for test_id in ids:
        seen = {run.get(test_id, TestState.NONE) for run in runs}
        if len(seen) == 1:
            stable[test_id] = seen.pop()
        else:
            flaky.add(test_id)
    return stable, flaky


# ------------------------------------------------------------------------------------------------ validation


@final
@dataclasses.dataclass(frozen=True)
class RunStates:
    """Facts of one validation run (``base``, ``test`` or ``fix`` configuration).

    Attributes:
        tests: parsed states by test id (flaky tests already dropped, see :func:`drop_flaky`).
        built: production code (and the build as a whole) compiled. A test source set that does not compile
            because it uses code only the fix introduces is NOT a build failure: its tests are ``NONE``.
        executed: the test command ran to completion and its reports were read.
    """

    tests: Mapping[str, TestState]
    built: bool
    executed: bool


@final
@dataclasses.dataclass(frozen=True)
class Validation:
    """Outcome of :func:`validate_instance`.

    Attributes:
        valid: the instance may be used.
        problems: why not (empty when valid), one sentence each.
        fail_to_pass, none_to_pass, pass_to_pass, pass_to_fail: sorted test ids by transition
            (``test`` run -> ``fix`` run).
        transition_counts: ``{name: count}`` over all tests (see :func:`count_transitions`).
    """

    valid: bool
    problems: tuple[str, ...]
    fail_to_pass: list[str]
    none_to_pass: list[str]
    pass_to_pass: list[str]
    pass_to_fail: list[str]
    transition_counts: dict[str, int]

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins; gold lists under their SWE-bench field names."""
        return {
            "valid": self.valid,
            "problems": list(self.problems),
            "FAIL_TO_PASS": list(self.fail_to_pass),
            "NONE_TO_PASS": list(self.none_to_pass),
            "PASS_TO_PASS": list(self.pass_to_pass),
            "PASS_TO_FAIL": list(self.pass_to_fail),
            "transition_counts": dict(self.transition_counts),
        }


def validate_instance(base: RunStates, test: RunStates, fix: RunStates) -> Validation:
    """Decide whether an instance is valid and derive its gold lists (MobileDev-Bench section 3.4 "Execution-Based
    Validation" and Appendix A; SPEC section 1 "The three configurations").

    Transitions are taken from the ``test`` run (base + test_patch) to the ``fix`` run (+ gold patch).
    The instance is valid iff ALL of:

    1. the ``base`` run built and executed tests;
    2. the ``fix`` run built and executed tests;
    3. at least one test is ``F2P`` or ``N2P``;
    4. no test is ``P2F``.

    The ``test`` run may fail to compile its test sources (new tests using code only the fix adds); its
    tests are then ``NONE`` and become ``N2P``. Every violated condition is listed in ``problems``.
    """
    problems: list[str] = []
    for label, run in (("base", base), ("fix", fix)):
        if not run.built:
            problems.append(f"the {label} run did not build")
        elif not run.executed:
            problems.append(f"the {label} run built but did not execute tests")
    names = transitions(test.tests, fix.tests)
    by_name: dict[str, list[str]] = {}
    for test_id, name in names.items():
        by_name.setdefault(name, []).append(test_id)
    f2p = by_name.get("F2P", [])
    n2p = by_name.get("N2P", [])
    p2f = by_name.get("P2F", [])
    if not f2p and not n2p:
        problems.append("no FAIL_TO_PASS or NONE_TO_PASS test: the gold patch makes no test pass")
    if p2f:
        shown = ", ".join(p2f[:5]) + (f" and {len(p2f) - 5} more" if len(p2f) > 5 else "")
        problems.append(f"{len(p2f)} PASS_TO_FAIL test(s): the gold patch breaks {shown}")
    return Validation(
        valid=not problems,
        problems=tuple(problems),
        fail_to_pass=f2p,
        none_to_pass=n2p,
        pass_to_pass=by_name.get("P2P", []),
        pass_to_fail=p2f,
        transition_counts=count_transitions(test.tests, fix.tests),
    )


# ------------------------------------------------------------------------------------------------ grading


@final
@dataclasses.dataclass(frozen=True, kw_only=True)
class RunOutcome:
    """Facts of one candidate evaluation run (SPEC section 1 "Grading a candidate").

    Attributes:
        applied: the candidate patch and then the test patch applied.
        built: the build before the tests succeeded (test sources that fail to compile only make their
            tests ``NONE``; see :class:`RunStates`).
        tests: parsed states by test id of the instance's test run (empty: no results at all).
        timed_out: the run hit the per-instance wall-clock limit.
        infra_error: what failed in the harness or environment (daemon down, image build failed, OOM kill),
            or ``None``.
        policy_violation: what the candidate did against the rules
            (:func:`pytest_mobilebench.suites.issue_resolution.policy.review`: touched the runner's tools or changed how
            the tests run; a report that disagrees with the runner), or ``None``. Edited test files are restored and
            flagged, not a violation.
        empty_patch: the candidate patch touches no file.
        missing_prediction: there is no prediction for this instance.
        test_patch_conflict: the test patch applies at base but not after the candidate's patch (the
            file and git's message), or ``None``.
        resource_exhausted: memory, disk or processes ran out under the candidate where the reference fix under the
            same limits did not (what ran out), or ``None``.
        time_limit: the limit a timed-out run hit, in words (``"--mb-instance-timeout (3 s)"``), or ``None``.
    """

    applied: bool
    built: bool
    tests: Mapping[str, TestState]
    timed_out: bool = False
    infra_error: str | None = None
    policy_violation: str | None = None
    empty_patch: bool = False
    missing_prediction: bool = False
    test_patch_conflict: str | None = None
    resource_exhausted: str | None = None
    time_limit: str | None = None


@final
@dataclasses.dataclass(frozen=True)
class Verdict:
    """The verdict of one candidate run.

    Attributes:
        reason: the single reason (see :func:`grade` for the precedence).
        resolved: ``reason is Reason.RESOLVED``.
        counts: per gold list, ``{"passed": int, "total": int}`` over the run's states (``passed`` counts ids
            whose state is ``PASS``); keys :data:`GOLD_LISTS`.
        failing: per gold list, ``{test_id: state}`` of the ids whose state is not ``PASS`` (sorted by id;
            iterating it yields the failing ids).
        detail: one human sentence on why (infra error text, policy violation text, what blocked resolution).
    """

    reason: Reason
    resolved: bool
    counts: dict[str, dict[str, int]]
    failing: dict[str, dict[str, TestState]]
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins (enum values as strings) for xdist, JSON and junit properties."""
        return {
            "reason": self.reason.value,
            "resolved": self.resolved,
            "counts": {name: dict(c) for name, c in self.counts.items()},
            "failing": {name: {i: s.value for i, s in ids.items()} for name, ids in self.failing.items()},
            "detail": self.detail,
        }


def _as_ids(name: str, ids: Iterable[str]) -> list[str]:
    if isinstance(ids, str):
        raise ValueError(f"{name} must be a collection of test ids, got the string {ids!r}")
    return list(ids)


def grade(
    *,
    fail_to_pass: Iterable[str],
    none_to_pass: Iterable[str],
    pass_to_pass: Iterable[str],
    outcome: RunOutcome,
) -> Verdict:
    """Grade one candidate run (MobileDev-Bench Appendix D.4.1 "Resolution Rate"; SPEC section 1
    "Grading a candidate").

    The reason is the FIRST that applies, in this order (earlier causes make later facts meaningless):

    1. ``missing_prediction``: no prediction, nothing was run.
    2. ``empty_patch``: the prediction changes nothing.
    3. ``infra_error``: the harness or environment failed; nothing after it says anything about the candidate
       (an apply or build "failure" caused by a dead daemon is infra).
    4. ``patch_apply_failed``: the candidate did not apply; ``test_patch_conflict``: the test patch,
       which applies at base, does not apply after the candidate's patch.
    5. ``policy_violation``: the candidate touched the runner's tools or configuration (detected from the
       patch, reported even when the tests would pass); then ``resource_exhausted``: memory, disk or processes ran
       out under the candidate where the reference fix under the same limits did not.
    6. ``timeout``: the run hit its wall-clock limit (a half-finished build or test run proves nothing).
    7. ``build_failed``: production code did not build.
    8. ``no_tests_ran``: the run produced no test result at all. NEVER resolved.
    9. ``resolved`` iff every FAIL_TO_PASS and NONE_TO_PASS id is ``PASS`` and every PASS_TO_PASS id is
       ``PASS``; otherwise ``unresolved``. ``SKIP`` and ``NONE`` (absent) are not ``PASS``.

    An instance whose FAIL_TO_PASS and NONE_TO_PASS are both empty is never resolved (it is invalid by
    :func:`validate_instance`: nothing would show the issue fixed); it grades ``unresolved`` with a
    ``detail`` saying so.

    ``counts`` and ``failing`` are computed from ``outcome.tests`` for every reason (all ``NONE`` when no
    test ran), so reports can show them uniformly.

    Raises:
        ValueError: when a gold list is passed as a bare string.
    """
    gold = {
        "FAIL_TO_PASS": sorted(set(_as_ids("fail_to_pass", fail_to_pass))),
        "NONE_TO_PASS": sorted(set(_as_ids("none_to_pass", none_to_pass))),
        "PASS_TO_PASS": sorted(set(_as_ids("pass_to_pass", pass_to_pass))),
    }
    counts: dict[str, dict[str, int]] = {}
    failing: dict[str, dict[str, TestState]] = {}
    for list_name, ids in gold.items():
        states = states_for(ids, outcome.tests)
        bad: dict[str, TestState] = {i: s for i, s in states.items() if s is not TestState.PASS}
        counts[list_name] = {"passed": len(ids) - len(bad), "total": len(ids)}
        failing[list_name] = bad

    def verdict(reason: Reason, detail: str) -> Verdict:
        return Verdict(reason=reason, resolved=reason is Reason.RESOLVED, counts=counts, failing=failing, detail=detail)

    if outcome.missing_prediction:
        return verdict(Reason.MISSING_PREDICTION, "no prediction for this instance")
    if outcome.empty_patch:
        return verdict(Reason.EMPTY_PATCH, "the candidate patch changes no file")
    if outcome.infra_error is not None:
        return verdict(Reason.INFRA_ERROR, outcome.infra_error or "infrastructure error")
    if outcome.test_patch_conflict is not None:
        return verdict(
            Reason.TEST_PATCH_CONFLICT,
            f"the test patch applies at base but not after the candidate's patch: {outcome.test_patch_conflict}",
        )
    if not outcome.applied:
        return verdict(Reason.PATCH_APPLY_FAILED, "the candidate patch (or the test patch after it) did not apply")
    if outcome.policy_violation is not None:
        return verdict(Reason.POLICY_VIOLATION, outcome.policy_violation or "policy violation")
    if outcome.resource_exhausted is not None:
        return verdict(Reason.RESOURCE_EXHAUSTED, outcome.resource_exhausted)
    if outcome.timed_out:
        return verdict(Reason.TIMEOUT, f"the test run exceeded {outcome.time_limit or 'its time limit'}")
    if not outcome.built:
        return verdict(Reason.BUILD_FAILED, "the build failed")
    if not outcome.tests:
        return verdict(Reason.NO_TESTS_RAN, "the test run produced no test results")
    if not gold["FAIL_TO_PASS"] and not gold["NONE_TO_PASS"]:
        return verdict(
            Reason.UNRESOLVED, "the instance has no FAIL_TO_PASS or NONE_TO_PASS test, so it cannot be resolved"
        )
    not_passing = {name: len(bad) for name, bad in failing.items() if bad}
    if not not_passing:
        return verdict(Reason.RESOLVED, "every FAIL_TO_PASS, NONE_TO_PASS and PASS_TO_PASS test passed")
    parts = ", ".join(f"{n} of {counts[name]['total']} {name}" for name, n in not_passing.items())
    return verdict(Reason.UNRESOLVED, f"not passing: {parts}")


# ------------------------------------------------------------------------------------------------ localization


@final
@dataclasses.dataclass(frozen=True)
class Localization:
    """File-level localization of one candidate (each value in ``[0, 1]``)."""

    precision: float
    recall: float
    f1: float

    def to_dict(self) -> dict[str, float]:
        """Plain builtins."""
        return dataclasses.asdict(self)


def localization(gold_files: Collection[str], pred_files: Collection[str]) -> Localization:
    """File-level precision, recall and F1 (MobileDev-Bench Appendix D.4.2; SPEC section 1
    "Localization").

    With ``F_gt = set(gold_files)`` and ``F_pred = set(pred_files)``::

        recall    = |F_gt & F_pred| / |F_gt|
        precision = |F_gt & F_pred| / |F_pred|        (0 when F_pred is empty)
        f1        = 2 P R / (P + R)                   (0 when P + R == 0)

    Macro-average over instances with :func:`pytest_mobilebench.metrics.mean`.

    Raises:
        ValueError: when ``gold_files`` is empty (a gold patch changes at least one file) or either
            argument is a bare string.
    """
    for label, value in (("gold_files", gold_files), ("pred_files", pred_files)):
        if isinstance(value, str):
            raise ValueError(f"{label} must be a collection of paths, got the string {value!r}")
    gold = set(gold_files)
    pred = set(pred_files)
    if not gold:
        raise ValueError("gold_files is empty: recall is undefined (a gold patch changes at least one file)")
    hit = len(gold & pred)
    recall = hit / len(gold)
    precision = hit / len(pred) if pred else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return Localization(precision=precision, recall=recall, f1=f1)


def time_limit_words(seconds: float, *, from_instance: bool) -> str:
    """The limit a test run has, as a timeout's detail names it: ``"--mb-instance-timeout (3 s)"``, or
    ``"the instance's timeout_s (3 s)"`` when the manifest set it (:attr:`RunOutcome.time_limit`)."""
    return f"the instance's timeout_s ({seconds:g} s)" if from_instance else f"--mb-instance-timeout ({seconds:g} s)"


def lead_with_cause(verdict: Verdict, explanation: str | None) -> str:
    """A result's ``detail``: the verdict's cause first (a timeout, no results, the tests not passing), then what
    the evidence adds; for a patch that does not apply, its own log's first error leads (it says more than the
    verdict's words)."""
    own_first = verdict.reason is Reason.PATCH_APPLY_FAILED
    parts = (explanation, verdict.detail) if own_first else (verdict.detail, explanation)
    return "; ".join(x for x in parts if x)
