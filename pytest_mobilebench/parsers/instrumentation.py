"""Android instrumentation output (``am instrument -w -r``), parsed per test (pure).

Input: the raw text ``am instrument -r`` prints (the "raw" key/value protocol of
``android.app.Instrumentation`` and ``androidx.test.runner.AndroidJUnitRunner``)::

    INSTRUMENTATION_STATUS: class=com.example.CalcTest       <- one status block per test event
    INSTRUMENTATION_STATUS: test=adds
    INSTRUMENTATION_STATUS: stack=java.lang.AssertionError: expected:<3> but was:<4>
        at org.junit.Assert.fail(Assert.java:89)            <- values continue on the following lines
    INSTRUMENTATION_STATUS_CODE: -2                          <- ends the block
    INSTRUMENTATION_RESULT: stream=...                       <- run-level result block
    INSTRUMENTATION_RESULT: shortMsg=Process crashed.        <- the process died
    INSTRUMENTATION_CODE: -1                                 <- ends the run (-1 = Activity.RESULT_OK)
    INSTRUMENTATION_FAILED: com.example.test/androidx.test.runner.AndroidJUnitRunner
    INSTRUMENTATION_ABORTED: System has crashed.

Status codes (``androidx.test.internal.runner.listener.InstrumentationResultPrinter``): ``1`` start,
``0`` ok, ``-1`` error, ``-2`` failure, ``-3`` ignored, ``-4`` assumption failure. AndroidJUnitRunner
reports both assertion failures and uncaught exceptions as ``-2``; which one it was is told by the first
exception of the ``stack`` (:func:`first_exception`, :data:`ASSERTION_TYPES`).

Test id: ``"{class}#{test}"`` exactly as reported (``org.junit.runner.manipulation.Filter#initializationError``
for a method that does not exist). The registered ``"instrumentation"`` parser maps passed -> PASS,
failed / error / incomplete -> FAIL, ignored / assumption failure -> SKIP.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping
from typing import Any, Final

from pytest_mobilebench.parsers._core import (
    ParseError,
    ParseResult,
    ResultBuilder,
    register,
)
from pytest_mobilebench.states import TestState

__all__ = [
    "ASSERTION_TYPES",
    "InstrumentationRun",
    "TestRecord",
    "TestStatus",
    "first_exception",
    "is_assertion",
    "parse_instrumentation",
]

START: Final = 1

#: Exception classes that mean "an assertion failed" (JUnit 4 and 5, Truth, Hamcrest, Espresso view
#: assertions). Subclasses are not known from text, so the names Truth and Espresso throw are listed.
ASSERTION_TYPES: Final[frozenset[str]] = frozenset(
    {
        "java.lang.AssertionError",
        "junit.framework.AssertionFailedError",
        "junit.framework.ComparisonFailure",
        "org.junit.ComparisonFailure",
        "org.junit.internal.ArrayComparisonFailure",
        "org.opentest4j.AssertionFailedError",
        "org.opentest4j.MultipleFailuresError",
        "com.google.common.truth.AssertionErrorWithFacts",
        "com.google.common.truth.ComparisonFailureWithFacts",
        "androidx.test.espresso.base.DefaultFailureHandler$AssertionFailedWithCauseError",
        "android.support.test.espresso.base.DefaultFailureHandler$AssertionFailedWithCauseError",
        "kotlin.test.AssertionFailedError",
    }
)


@enum.unique
class TestStatus(str, enum.Enum):
    """Final status of one test in one instrumentation run."""

    __test__ = False

    PASSED = "passed"
    FAILED = "failed"  # code -2: assertion OR exception, see TestRecord.first_exception
    ERROR = "error"  # code -1
    IGNORED = "ignored"  # code -3
    ASSUMPTION_FAILURE = "assumption_failure"  # code -4
    INCOMPLETE = "incomplete"  # started, never ended (the process died)


_CODE_STATUS: Final[dict[int, TestStatus]] = {
    0: TestStatus.PASSED,
    -1: TestStatus.ERROR,
    -2: TestStatus.FAILED,
    -3: TestStatus.IGNORED,
    -4: TestStatus.ASSUMPTION_FAILURE,
}


@dataclasses.dataclass(frozen=True)
class TestRecord:
    """What the output says about one test id.

    Attributes:
        test_id: ``"{class}#{test}"``.
        starts: how many start (code 1) blocks it had.
        ends: how many final (non-1) blocks it had.
        status: the last final block's status, INCOMPLETE when it never ended.
        stack: the last final block's ``stack`` value ("" when none).
        first_exception: the class of the stack's first exception, or None.
    """

    __test__ = False

    test_id: str
    starts: int
    ends: int
    status: TestStatus
    stack: str
    first_exception: str | None

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins."""
        return {**dataclasses.asdict(self), "status": self.status.value}


@dataclasses.dataclass(frozen=True)
class InstrumentationRun:
    """One whole ``am instrument -r`` output.

    Attributes:
        tests: test id -> record, in order of first appearance.
        result_code: the ``INSTRUMENTATION_CODE`` value, None when the line is missing.
        result: the ``INSTRUMENTATION_RESULT`` keys (``stream``, ``shortMsg``, ``longMsg`` ...).
        failed: the text after ``INSTRUMENTATION_FAILED:`` (runner missing / not instrumentable), or None.
        aborted: the text after ``INSTRUMENTATION_ABORTED:``, or None.
        warnings: notes about damaged input (an unknown status code, a block without a test name).
    """

    tests: dict[str, TestRecord]
    result_code: int | None
    result: dict[str, str]
    failed: str | None
    aborted: str | None
    warnings: tuple[str, ...]

    @property
    def short_msg(self) -> str | None:
        """``INSTRUMENTATION_RESULT: shortMsg=`` (e.g. ``Process crashed.``), or None."""
        return self.result.get("shortMsg")

    @property
    def process_crashed(self) -> bool:
        """True when the output says the instrumented process died."""
        texts = (self.short_msg or "", self.result.get("longMsg", ""), self.aborted or "")
        return any("crashed" in t.lower() for t in texts)

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins for evidence files."""
        return {
            "tests": {k: v.to_dict() for k, v in self.tests.items()},
            "result_code": self.result_code,
            "result": dict(self.result),
            "failed": self.failed,
            "aborted": self.aborted,
            "warnings": list(self.warnings),
        }


_EXC_RE: Final = re.compile(r"^\s*(?:Caused by:\s*)?([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)(?::|\s*$)")


def first_exception(stack: str) -> str | None:
    """Class name of the first exception in a Java stack trace text, e.g. ``"java.lang.AssertionError"``.

    The first line that looks like ``fully.qualified.Name`` or ``fully.qualified.Name: message`` wins;
    ``at ...`` frames are never taken. Returns None for an empty or unrecognisable stack.
    """
    for line in stack.splitlines():
        if line.lstrip().startswith("at "):
            continue
        match = _EXC_RE.match(line)
        if match:
            return match.group(1)
    return None


def is_assertion(exception: str | None) -> bool:
    """Whether an exception class name is an assertion failure (:data:`ASSERTION_TYPES`)."""
    return exception in ASSERTION_TYPES


_LINE_RE: Final = re.compile(
    r"^(INSTRUMENTATION_STATUS|INSTRUMENTATION_RESULT): ([^=]*)=(.*)$"
    r"|^(INSTRUMENTATION_STATUS_CODE|INSTRUMENTATION_CODE): (-?\d+)\s*$"
    r"|^.*?(INSTRUMENTATION_FAILED|INSTRUMENTATION_ABORTED): ?(.*)$"
)


class _Acc:
    """Mutable accumulation state of one parse."""

    def __init__(self) -> None:
        self.block: dict[str, str] = {}
        self.result: dict[str, str] = {}
        self.key: tuple[dict[str, str], str] | None = None
        self.starts: dict[str, int] = {}
        self.ends: dict[str, list[tuple[int, str]]] = {}
        self.result_code: int | None = None
        self.failed: str | None = None
        self.aborted: str | None = None
        self.warnings: list[str] = []

    def status_code(self, code: int, lineno: int) -> None:
        cls, test = self.block.get("class"), self.block.get("test")
        if cls is None or test is None:
            if code != START and "Error" in self.block:
                self.warnings.append(f"output line {lineno}: status error: {self.block['Error'].strip()}")
            self.block, self.key = {}, None
            return
        test_id = f"{cls}#{test}"
        if code == START:
            self.starts[test_id] = self.starts.get(test_id, 0) + 1
            self.ends.setdefault(test_id, [])
        else:
            if code not in _CODE_STATUS:
                self.warnings.append(f"output line {lineno}: unknown status code {code} for {test_id}")
            self.starts.setdefault(test_id, 0)
            self.ends.setdefault(test_id, []).append((code, self.block.get("stack", "")))
        self.block, self.key = {}, None

    def records(self) -> dict[str, TestRecord]:
        out: dict[str, TestRecord] = {}
        for test_id, ends in self.ends.items():
            if ends:
                code, stack = ends[-1]
                status = _CODE_STATUS.get(code, TestStatus.ERROR)
            else:
                status, stack = TestStatus.INCOMPLETE, ""
            out[test_id] = TestRecord(
                test_id=test_id,
                starts=self.starts.get(test_id, 0),
                ends=len(ends),
                status=status,
                stack=stack.rstrip("\n"),
                first_exception=first_exception(stack),
            )
        return out


def parse_instrumentation(text: str) -> InstrumentationRun:
    """Parse ``am instrument -r`` output (see the module docstring). Never raises on damaged text:
    lines outside the protocol continue the previous value or are ignored."""
    acc = _Acc()
    for lineno, raw in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        match = _LINE_RE.match(raw)
        if match is None:
            if acc.key is not None:
                target, key = acc.key
                target[key] += "\n" + raw
            continue
        if match.group(1):
            target = acc.block if match.group(1) == "INSTRUMENTATION_STATUS" else acc.result
            target[match.group(2)] = match.group(3)
            acc.key = (target, match.group(2))
        elif match.group(4) == "INSTRUMENTATION_STATUS_CODE":
            acc.status_code(int(match.group(5)), lineno)
        elif match.group(4) == "INSTRUMENTATION_CODE":
            acc.result_code, acc.key = int(match.group(5)), None
        elif match.group(6) == "INSTRUMENTATION_FAILED":
            acc.failed, acc.key = match.group(7).strip(), None
        else:
            acc.aborted, acc.key = match.group(7).strip(), None
    return InstrumentationRun(
        tests=acc.records(),
        result_code=acc.result_code,
        result={k: v.rstrip("\n") for k, v in acc.result.items()},
        failed=acc.failed,
        aborted=acc.aborted,
        warnings=tuple(acc.warnings),
    )


_STATE: Final[dict[TestStatus, TestState]] = {
    TestStatus.PASSED: TestState.PASS,
    TestStatus.FAILED: TestState.FAIL,
    TestStatus.ERROR: TestState.FAIL,
    TestStatus.INCOMPLETE: TestState.FAIL,
    TestStatus.IGNORED: TestState.SKIP,
    TestStatus.ASSUMPTION_FAILURE: TestState.SKIP,
}


@register("instrumentation")
def parse(output: str, files: Mapping[str, bytes], *, root_dir: str | None = None) -> ParseResult:
    """The registry form: ``{test id: PASS | FAIL | SKIP}`` from the output text (files unused).

    Raises:
        ParseError: the output holds no instrumentation line at all.
    """
    run = parse_instrumentation(output)
    if not run.tests and run.result_code is None and run.failed is None and run.aborted is None:
        raise ParseError("output: no INSTRUMENTATION_* line")
    builder = ResultBuilder()
    for record in run.tests.values():
        builder.add(record.test_id, _STATE[record.status], record.stack)
    for warning in run.warnings:
        builder.warn(warning)
    return builder.build()
