"""The AppEval verdict contract, pure (SPEC section 2 "Two states, one acceptance contract", "Grading").

Everything here maps parsed evidence to outcomes: no device, no process, no file.

* :func:`classify_target` turns one ``am instrument`` output (and its deadline flag, and the run's
  known-answer canaries, :mod:`.canaries`) into a :class:`TargetOutcome`: a stream without the runner's
  structure or with a canary off its known answer is ``runner_compromised``; an ASSERTION failure needs
  exactly one start and one end of q, a final failure code, no ``shortMsg`` / ``INSTRUMENTATION_FAILED`` /
  ``INSTRUMENTATION_ABORTED``, and an assertion type as the first exception; a skipped, ignored,
  assumption-failed or empty selection is never a pass. In a run that crashed or was cut off, q's own
  record decides only when q started and ended once and a canary started after it (the runner kept
  writing); otherwise, and when q is absent from it, it is a ``process_crash``.
* :func:`state_infra_kind` says whether a state's outcome is infrastructure (and which kind).
* :func:`acceptance` is the record contract: S_bug ends in an assertion failure, S_fix passes.
* :func:`candidate_verdict` is a candidate's reason, primary failure cause and report fields.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_mobilebench.parsers.instrumentation import (
    InstrumentationRun,
    TestRecord,
    TestStatus,
    is_assertion,
    protocol_problems,
)
from pytest_mobilebench.parsers.ohos import OhosRun, OhosStatus
from pytest_mobilebench.parsers.xcresult import XcStatus, XcTest, is_assertion_message
from pytest_mobilebench.suites.device_repair.canaries import CanaryPair, canary_problems

__all__ = [
    "CANDIDATE_REACHABLE",
    "Cause",
    "Reason",
    "StateOutcome",
    "TargetOutcome",
    "acceptance",
    "candidate_verdict",
    "classify_ohos",
    "classify_target",
    "classify_xcresult",
    "compromised_runs",
    "failure_cause",
    "state_infra_kind",
]


@enum.unique
class Reason(str, enum.Enum):
    """The single reason of a device-repair item (first match wins, in this order)."""

    MISSING_PREDICTION = "missing_prediction"
    EMPTY_PATCH = "empty_patch"
    PATCH_APPLY_FAILED = "patch_apply_failed"
    POLICY_VIOLATION = "policy_violation"  # kind runner_compromised: never resolved, never infrastructure
    INFRA_ERROR = "infra_error"
    BUILD_FAILED = "build_failed"
    APP_CRASH = "app_crash"
    TIMEOUT = "timeout"
    RECORD_REJECTED = "record_rejected"
    RESOLVED = "resolved"
    UNRESOLVED = "unresolved"

    @property
    def is_infra(self) -> bool:
        """Only ``infra_error`` is infrastructure: retryable, never cached, outside Pass@1's denominator."""
        return self is Reason.INFRA_ERROR


@enum.unique
class TargetOutcome(str, enum.Enum):
    """How ONE test method ended in one state."""

    PASSED = "passed"
    ASSERTION_FAILURE = "assertion_failure"
    EXCEPTION = "exception"  # the test ended on a non-assertion exception (the code under test threw)
    PROCESS_CRASH = "process_crash"  # the instrumented process died ("Process crashed.", no end, aborted)
    TIMEOUT = "timeout"  # wall clock or no-output deadline
    SKIPPED = "skipped"  # ignored or assumption failure
    NOT_RUN = "not_run"  # zero tests, initializationError, a missing method, not exactly one start/end
    RUNNER_FAILED = "runner_failed"  # INSTRUMENTATION_FAILED: runner / test package not installed
    RUNNER_COMPROMISED = "runner_compromised"  # the stream lacks the runner's structure, or a canary is off


@enum.unique
class Cause(str, enum.Enum):
    """Primary failure causes (SPEC section 2), assigned where the evidence allows."""

    NO_PRODUCTION_EDIT = "no_production_edit"
    WRONG_LOCALIZATION = "wrong_localization"
    INCOMPLETE_SEMANTIC_FIX = "incomplete_semantic_fix"
    REGRESSION = "regression"
    BUILD_REGRESSION = "build_regression"
    TEST_TARGET_MISMATCH = "test_target_mismatch"
    APP_CRASH = "app_crash"
    TIMEOUT = "timeout"
    EXTERNAL_INFRASTRUCTURE = "external_infrastructure"


#: Infrastructure kinds a candidate's own code can provoke (a crash on start, an endless loop, an
#: oversized APK). A candidate must not escape the denominator this way: when one persists through the
#: retries, the reference state (S_fix) is run on the same device; if it passes, the outcome is the
#: candidate's (``app_crash`` / ``timeout`` / ``build_failed``), else it stays infrastructure.
#: ``instrumentation_failed`` is among them: code under test can print the marker's shape and stop the process.
CANDIDATE_REACHABLE: Final[frozenset[str]] = frozenset(
    {"app_crash", "instrumentation_timeout", "test_timeout", "install_failed", "instrumentation_failed"}
)

_OUTCOME_INFRA: Final[dict[TargetOutcome, str]] = {
    TargetOutcome.PROCESS_CRASH: "app_crash",
    TargetOutcome.RUNNER_FAILED: "instrumentation_failed",
}


def classify_target(
    run: InstrumentationRun,
    target: str,
    timed_out: str | None = None,
    canaries: CanaryPair | None = None,
    selected: Sequence[str] | None = None,
) -> tuple[TargetOutcome, str]:
    """Outcome of the target method ``target`` (``pkg.Class#method``) in one run, with a one-line reason.

    Args:
        run: the parsed ``am instrument -r`` output.
        target: the method the run selected.
        timed_out: None, ``"wall"``, ``"no_output"`` or ``"output_limit"`` (from the device adapter; the
            last counts as a wall-clock ``test_timeout``: the run never ended within what is read).
        canaries: the run's known-answer canaries (selected in the same call), or None for a run
            without them (then a cut-off run is always a ``process_crash``).
        selected: everything the run selected, when more than the target and its canaries.
    """
    if timed_out:
        return TargetOutcome.TIMEOUT, f"{timed_out} deadline hit"
    if canaries is not None:
        problems = protocol_problems(run, selected or canaries.selection) + canary_problems(run, canaries)[0]
        if problems:
            return TargetOutcome.RUNNER_COMPROMISED, "; ".join(problems)[:800]
    if run.failed is not None:
        return TargetOutcome.RUNNER_FAILED, f"INSTRUMENTATION_FAILED: {run.failed}"
    record = run.tests.get(target)
    if not run.complete or (record is not None and record.status is TestStatus.INCOMPLETE):
        return _cut_off(run, target, record, canaries)
    if record is None:
        others = ", ".join(sorted(run.tests)) or "no test"
        return TargetOutcome.NOT_RUN, f"{target} not reported ({others} ran)"
    return _from_record(record, target)


def _cut_off(
    run: InstrumentationRun, target: str, record: TestRecord | None, canaries: CanaryPair | None
) -> tuple[TargetOutcome, str]:
    """A run that crashed, was aborted or lacks its final ``INSTRUMENTATION_CODE``."""
    why = (
        run.short_msg
        or run.aborted
        or ("no INSTRUMENTATION_CODE: the run was cut off" if run.result_code is None else "")
    )
    complete = record is not None and record.starts == 1 and record.ends == 1
    if complete and canaries is not None and canary_problems(run, canaries)[1]:
        outcome, detail = _from_record(record, target)
        return outcome, f"{detail} (the run stopped after q ended and a canary started: {why}; kept as evidence)"
    if record is None:
        return TargetOutcome.PROCESS_CRASH, f"{target} absent from a run that stopped early: {why}"
    return TargetOutcome.PROCESS_CRASH, why or "the test started and never ended"


def _from_record(record: TestRecord, target: str) -> tuple[TargetOutcome, str]:
    """q's outcome from its own record (exactly one start and one end)."""
    if record.starts != 1 or record.ends != 1:
        return (
            TargetOutcome.NOT_RUN,
            f"{target}: {record.starts} starts and {record.ends} ends, expected exactly one each",
        )
    if record.status is TestStatus.PASSED:
        return TargetOutcome.PASSED, "passed"
    if record.status in (TestStatus.IGNORED, TestStatus.ASSUMPTION_FAILURE):
        return TargetOutcome.SKIPPED, record.status.value
    if is_assertion(record.first_exception):
        return TargetOutcome.ASSERTION_FAILURE, _message(record.stack)
    return TargetOutcome.EXCEPTION, f"first exception {record.first_exception or 'unknown'}"


def classify_xcresult(
    tests: Mapping[str, XcTest], target: str, timed_out: str | None = None
) -> tuple[TargetOutcome, str]:
    """Outcome of ``Target/Class/method`` from parsed xcresult tests (:mod:`pytest_mobilebench.parsers.xcresult`):
    a failure is an assertion only when no message reports a crash and one comes from XCTAssert / XCTFail /
    Swift Testing's ``Expectation failed``."""
    if timed_out:
        return TargetOutcome.TIMEOUT, f"{timed_out} deadline hit"
    test = tests.get(target)
    if test is None:
        return TargetOutcome.NOT_RUN, f"{target} not in the result bundle ({len(tests)} other test(s))"
    if test.crashed:
        return TargetOutcome.PROCESS_CRASH, next(m for m in test.messages if m)
    if test.status is XcStatus.PASSED:
        return TargetOutcome.PASSED, "passed"
    if test.status in (XcStatus.SKIPPED, XcStatus.EXPECTED_FAILURE):
        return TargetOutcome.SKIPPED, test.status.value
    if test.status is XcStatus.FAILED and any(is_assertion_message(m) for m in test.messages):
        return TargetOutcome.ASSERTION_FAILURE, test.messages[0]
    return TargetOutcome.EXCEPTION, (test.messages or (test.status.value,))[0]


def classify_ohos(run: OhosRun, target: str, timed_out: str | None = None) -> tuple[TargetOutcome, str]:
    """Outcome of ``Suite#it`` from a parsed ``aa test`` output (:mod:`pytest_mobilebench.parsers.ohos`):
    ``-2`` (an ``expect`` failed) is the assertion, ``-1`` (an uncaught error) is not."""
    if timed_out:
        return TargetOutcome.TIMEOUT, f"{timed_out} deadline hit"
    test = run.tests.get(target)
    if test is not None and (test.status is OhosStatus.INCOMPLETE or run.result_code is None):
        return TargetOutcome.PROCESS_CRASH, "the spec started and the run never finished"
    if test is None:
        return TargetOutcome.NOT_RUN, f"{target} not reported ({run.summary or 'no summary'})"
    if test.starts != 1 or test.ends != 1:
        return TargetOutcome.NOT_RUN, f"{target}: {test.starts} starts and {test.ends} ends, expected exactly one each"
    table = {
        OhosStatus.PASSED: (TargetOutcome.PASSED, "passed"),
        OhosStatus.SKIPPED: (TargetOutcome.SKIPPED, "skipped"),
        OhosStatus.FAILED: (TargetOutcome.ASSERTION_FAILURE, test.message),
        OhosStatus.ERROR: (TargetOutcome.EXCEPTION, test.message),
    }
    return table[test.status]


def _message(stack: str, limit: int = 300) -> str:
    """The exception lines of a stack (before the first ``at`` frame), on one line, at most ``limit`` chars."""
    lines = []
    for line in stack.splitlines():
        if line.lstrip().startswith("at "):
            break
        if line.strip():
            lines.append(line.strip())
    return " ".join(lines)[:limit]


@dataclasses.dataclass(frozen=True)
class StateOutcome:
    """What one attempt at one state produced.

    Attributes:
        state: ``S_bug``, ``S_fix``, ``candidate`` or ``reference``.
        applied: every patch of the state applied.
        built: both artefacts built and were found.
        infra_kind: a failure of the environment (device, adb, workspace, deadline ...), or None.
        target: q's outcome (None when the run did not reach the device).
        target_detail: one line about it.
        regression: Q method -> outcome.
        detail: one line for the report.
    """

    state: str
    applied: bool
    built: bool
    infra_kind: str | None = None
    target: TargetOutcome | None = None
    target_detail: str = ""
    regression: Mapping[str, TargetOutcome] = dataclasses.field(default_factory=dict)
    detail: str = ""

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins."""
        return {
            "state": self.state,
            "applied": self.applied,
            "built": self.built,
            "infra_kind": self.infra_kind,
            "target": self.target.value if self.target else None,
            "target_detail": self.target_detail,
            "regression": {k: v.value for k, v in self.regression.items()},
            "detail": self.detail,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> StateOutcome:
        """Inverse of :meth:`to_dict`."""
        return cls(
            state=str(data["state"]),
            applied=bool(data["applied"]),
            built=bool(data["built"]),
            infra_kind=data.get("infra_kind"),
            target=TargetOutcome(data["target"]) if data.get("target") else None,
            target_detail=str(data.get("target_detail", "")),
            regression={k: TargetOutcome(v) for k, v in (data.get("regression") or {}).items()},
            detail=str(data.get("detail", "")),
        )


def state_infra_kind(outcome: StateOutcome, *, reference: bool) -> str | None:
    """The infrastructure kind of a state outcome, or None when it says something about the code.

    In a reference state (S_bug, S_fix, the probe) a build or patch failure is infrastructure (the
    record's plan cannot be executed); in a candidate state it is the candidate's.
    """
    if outcome.infra_kind:
        return outcome.infra_kind
    if compromised_runs(outcome):
        return None  # the candidate's doing: a policy violation, never retried as infrastructure
    if reference and not outcome.applied:
        return "patch_apply_failed"
    if reference and not outcome.built:
        return "build_failed"
    if outcome.target is TargetOutcome.TIMEOUT:
        return "instrumentation_timeout" if "no_output" in outcome.target_detail else "test_timeout"
    kinds = [_OUTCOME_INFRA.get(o) for o in (outcome.target, *outcome.regression.values()) if o is not None]
    return next((k for k in kinds if k), None)


def compromised_runs(outcome: StateOutcome) -> list[str]:
    """The methods whose run was ``runner_compromised`` (q first), with the reason for q."""
    out = [f"q: {outcome.target_detail}"] if outcome.target is TargetOutcome.RUNNER_COMPROMISED else []
    return out + [f"Q {m}" for m, v in outcome.regression.items() if v is TargetOutcome.RUNNER_COMPROMISED]


def acceptance(s_bug: StateOutcome, s_fix: StateOutcome) -> tuple[bool, str]:
    """The record contract: q ends in an ASSERTION failure in S_bug and passes in S_fix (and Q passes in
    S_fix). Returns ``(accepted, why)``; call only when neither state is infrastructure."""
    problems = []
    if s_bug.target is not TargetOutcome.ASSERTION_FAILURE:
        problems.append(
            f"S_bug: q is {s_bug.target.value if s_bug.target else 'not run'} ({s_bug.target_detail}), "
            "expected an assertion failure"
        )
    if s_fix.target is not TargetOutcome.PASSED:
        problems.append(f"S_fix: q is {s_fix.target.value if s_fix.target else 'not run'} ({s_fix.target_detail})")
    broken = sorted(k for k, v in s_fix.regression.items() if v is not TargetOutcome.PASSED)
    if broken:
        problems.append(f"S_fix: regression tests not passing: {', '.join(broken)}")
    return (not problems, "; ".join(problems) or "S_bug assertion failure, S_fix pass")


def failure_cause(
    touched: Sequence[str], production: Sequence[str], defect_files: Sequence[str], outcome: StateOutcome
) -> Cause | None:
    """Primary failure cause of an unresolved candidate from its evidence (None when it resolved).

    ``touched``: every path the candidate's patch touches; ``production``: those that are neither tests,
    build configuration nor generated files.
    """
    if not outcome.built:
        return Cause.BUILD_REGRESSION
    if outcome.target is TargetOutcome.PASSED:
        broken = [k for k, v in outcome.regression.items() if v is not TargetOutcome.PASSED]
        return Cause.REGRESSION if broken else None
    if outcome.target in (TargetOutcome.PROCESS_CRASH, TargetOutcome.EXCEPTION):
        return Cause.APP_CRASH
    if outcome.target is TargetOutcome.TIMEOUT:
        return Cause.TIMEOUT
    if outcome.target in (TargetOutcome.NOT_RUN, TargetOutcome.SKIPPED, TargetOutcome.RUNNER_FAILED, None):
        return Cause.TEST_TARGET_MISMATCH
    if not production:
        return Cause.NO_PRODUCTION_EDIT
    if not set(touched) & set(defect_files):
        return Cause.WRONG_LOCALIZATION
    return Cause.INCOMPLETE_SEMANTIC_FIX


def candidate_verdict(outcome: StateOutcome, *, attributed: bool) -> Reason:
    """The reason of a graded candidate state.

    Args:
        outcome: the final attempt of the candidate state.
        attributed: a candidate-reachable infrastructure outcome was shown to be the candidate's (the
            reference state passed on the same device).
    """
    if compromised_runs(outcome):
        return Reason.POLICY_VIOLATION
    kind = state_infra_kind(outcome, reference=False)
    if kind and not (attributed and kind in CANDIDATE_REACHABLE):
        return Reason.INFRA_ERROR
    if not outcome.applied:
        return Reason.PATCH_APPLY_FAILED
    if not outcome.built or kind == "install_failed":
        return Reason.BUILD_FAILED
    if kind in ("app_crash", "instrumentation_failed"):
        return Reason.APP_CRASH
    if kind in ("instrumentation_timeout", "test_timeout"):
        return Reason.TIMEOUT
    q_ok = outcome.target is TargetOutcome.PASSED
    q_safe = all(v is TargetOutcome.PASSED for v in outcome.regression.values())
    return Reason.RESOLVED if q_ok and q_safe else Reason.UNRESOLVED
