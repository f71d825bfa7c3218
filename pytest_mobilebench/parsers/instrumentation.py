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

Protocol level: ``INSTRUMENTATION_FAILED`` / ``INSTRUMENTATION_ABORTED`` count only at the start of a line
(``am`` prints the first as ``android.util.AndroidException: INSTRUMENTATION_FAILED: ...``), outside any
status value, and as the last protocol line of the output; ``INSTRUMENTATION_FAILED`` also only before any
test event. Anywhere else (inside a ``stack`` value, a ``Caused by:`` line, before more protocol lines)
they are text and land in :attr:`InstrumentationRun.warnings`. The result keys (``shortMsg`` ...) are those
of the LAST result block: a status line after result lines starts the result over. Every test status block
is kept in order (:attr:`InstrumentationRun.events`) for :func:`protocol_problems`, which checks that the
stream has the structure only the runner writes.

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
    "StatusEvent",
    "TestRecord",
    "TestStatus",
    "first_exception",
    "is_assertion",
    "parse_instrumentation",
    "protocol_problems",
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
class StatusEvent:
    """One test status block, in output order.

    Attributes:
        code: its ``INSTRUMENTATION_STATUS_CODE`` (1 start, 0 / -1 / -2 / -3 / -4 end).
        test_id: ``"{class}#{test}"``.
        current: the ``current`` value (the runner's 1-based test counter), None when absent or not a number.
        numtests: the ``numtests`` value, None when absent or not a number.
        runner_id: the ``id`` value ("" when absent).
        line: 1-based line of the status code.
    """

    code: int
    test_id: str
    current: int | None
    numtests: int | None
    runner_id: str
    line: int

    @property
    def is_start(self) -> bool:
        """A start block (code 1)."""
        return self.code == START


@dataclasses.dataclass(frozen=True)
class InstrumentationRun:
    """One whole ``am instrument -r`` output.

    Attributes:
        tests: test id -> record, in order of first appearance.
        result_code: the ``INSTRUMENTATION_CODE`` value, None when the line is missing.
        result: the ``INSTRUMENTATION_RESULT`` keys (``stream``, ``shortMsg``, ``longMsg`` ...).
        failed: the text after ``INSTRUMENTATION_FAILED:`` (runner missing / not instrumentable), or None.
        aborted: the text after ``INSTRUMENTATION_ABORTED:``, or None.
        warnings: notes about damaged input (an unknown status code, a block without a test name, a
            marker that is not at protocol level).
        events: every test status block (:class:`StatusEvent`), in order.
        codes: how many ``INSTRUMENTATION_CODE`` lines the output has.
        after_final: protocol lines (status, result, code) after the first ``INSTRUMENTATION_CODE``.
        summary: ``(tests run, failures)`` read from the final result stream (``OK (3 tests)``,
            ``Tests run: 3,  Failures: 1``), None when it has neither.
    """

    tests: dict[str, TestRecord]
    result_code: int | None
    result: dict[str, str]
    failed: str | None
    aborted: str | None
    warnings: tuple[str, ...]
    events: tuple[StatusEvent, ...] = ()
    codes: int = 0
    after_final: int = 0
    summary: tuple[int, int] | None = None

    @property
    def short_msg(self) -> str | None:
        """``INSTRUMENTATION_RESULT: shortMsg=`` (e.g. ``Process crashed.``), or None."""
        return self.result.get("shortMsg")

    @property
    def complete(self) -> bool:
        """The run ended as the runner ends it: a final ``INSTRUMENTATION_CODE`` and no crash / abort marker."""
        return self.result_code is not None and not self.process_crashed and self.aborted is None

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
            "events": [dataclasses.asdict(e) for e in self.events],
            "codes": self.codes,
            "after_final": self.after_final,
            "summary": list(self.summary) if self.summary else None,
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
    r"|^(?:android\.util\.AndroidException: )?(INSTRUMENTATION_FAILED|INSTRUMENTATION_ABORTED): ?(.*)$"
)
_SUMMARY_OK_RE: Final = re.compile(r"^OK \((\d+) tests?\)\s*$", re.MULTILINE)
_SUMMARY_FAIL_RE: Final = re.compile(r"^Tests run: (\d+),\s+Failures: (\d+)", re.MULTILINE)


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and value.strip().lstrip("-").isdigit() else None


def _summary(stream: str) -> tuple[int, int] | None:
    ok, fail = _SUMMARY_OK_RE.search(stream), _SUMMARY_FAIL_RE.search(stream)
    if fail:
        return int(fail.group(1)), int(fail.group(2))
    return (int(ok.group(1)), 0) if ok else None


class _Acc:
    """Mutable accumulation state of one parse."""

    def __init__(self) -> None:
        self.block: dict[str, str] = {}
        self.result: dict[str, str] = {}
        self.key: tuple[dict[str, str], str] | None = None
        self.starts: dict[str, int] = {}
        self.ends: dict[str, list[tuple[int, str]]] = {}
        self.events: list[StatusEvent] = []
        self.result_code: int | None = None
        self.codes = 0
        self.after_final = 0
        self.marker: tuple[str, str, int] | None = None  # (kind, text, protocol lines seen before it)
        self.protocol_lines = 0
        self.warnings: list[str] = []

    def status_code(self, code: int, lineno: int) -> None:
        cls, test = self.block.get("class"), self.block.get("test")
        if cls is None or test is None:
            if code != START and "Error" in self.block:
                self.warnings.append(f"output line {lineno}: status error: {self.block['Error'].strip()}")
            self.block, self.key = {}, None
            return
        test_id = f"{cls}#{test}"
        if code != START and code not in _CODE_STATUS:
            # a custom status (Instrumentation.sendStatus with another code): not a test event
            self.warnings.append(f"output line {lineno}: unknown status code {code} for {test_id}")
            self.block, self.key = {}, None
            return
        self.events.append(
            StatusEvent(
                code,
                test_id,
                _int(self.block.get("current")),
                _int(self.block.get("numtests")),
                self.block.get("id", ""),
                lineno,
            )
        )
        if code == START:
            self.starts[test_id] = self.starts.get(test_id, 0) + 1
            self.ends.setdefault(test_id, [])
        else:
            self.starts.setdefault(test_id, 0)
            self.ends.setdefault(test_id, []).append((code, self.block.get("stack", "")))
        self.block, self.key = {}, None

    def protocol(self, kind: str) -> None:
        """Count one protocol line (status / result / code) for the position rules."""
        self.protocol_lines += 1
        if self.codes:  # called before a code line is counted: the first one is not "after" itself
            self.after_final += 1
        if kind == "status" and self.result:
            self.result = {}  # a status line after result lines: that result block was not the final one

    def markers(self) -> tuple[str | None, str | None]:
        """``(failed, aborted)``: the marker only when it is the last protocol line (and FAILED only before any
        test)."""
        if self.marker is None:
            return None, None
        kind, text, before = self.marker
        if before != self.protocol_lines:
            self.warnings.append(f"{kind} followed by more protocol lines: not the runner's final word, ignored")
            return None, None
        if kind == "INSTRUMENTATION_FAILED":
            if self.events:
                self.warnings.append("INSTRUMENTATION_FAILED after test events: ignored")
                return None, None
            return text, None
        return None, text

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


def _line(acc: _Acc, raw: str, lineno: int) -> None:
    match = _LINE_RE.match(raw)
    if match is not None and match.group(6) and acc.key is not None:
        match = None  # a marker inside a status / result value is that value's text
    if match is None:
        if acc.key is not None:
            target, key = acc.key
            target[key] += "\n" + raw
        elif "INSTRUMENTATION_FAILED" in raw or "INSTRUMENTATION_ABORTED" in raw:
            acc.warnings.append(f"output line {lineno}: marker not at protocol level, ignored")
        return
    if match.group(1):
        acc.protocol("status" if match.group(1) == "INSTRUMENTATION_STATUS" else "result")
        target = acc.block if match.group(1) == "INSTRUMENTATION_STATUS" else acc.result
        target[match.group(2)] = match.group(3)
        acc.key = (target, match.group(2))
    elif match.group(4) == "INSTRUMENTATION_STATUS_CODE":
        acc.protocol("status")
        acc.status_code(int(match.group(5)), lineno)
    elif match.group(4) == "INSTRUMENTATION_CODE":
        acc.protocol("code")
        acc.codes += 1
        if acc.codes == 1:
            acc.result_code = int(match.group(5))
        acc.key = None
    else:
        acc.marker, acc.key = (match.group(6), match.group(7).strip(), acc.protocol_lines), None


def parse_instrumentation(text: str) -> InstrumentationRun:
    """Parse ``am instrument -r`` output (see the module docstring). Never raises on damaged text:
    lines outside the protocol continue the previous value or are ignored."""
    acc = _Acc()
    for lineno, raw in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        _line(acc, raw, lineno)
    failed, aborted = acc.markers()
    result = {k: v.rstrip("\n") for k, v in acc.result.items()}
    return InstrumentationRun(
        tests=acc.records(),
        result_code=acc.result_code,
        result=result,
        failed=failed,
        aborted=aborted,
        warnings=tuple(acc.warnings),
        events=tuple(acc.events),
        codes=acc.codes,
        after_final=acc.after_final,
        summary=_summary(result.get("stream", "")),
    )


def _sequence_problems(events: tuple[StatusEvent, ...], open_end_allowed: bool) -> list[str]:
    """Start / end alternation and the ``current`` counter of a runner that runs one test at a time."""
    problems: list[str] = []
    started = 0
    running: StatusEvent | None = None
    for event in events:
        if event.is_start:
            if running is not None:
                problems.append(f"line {event.line}: {event.test_id} starts while {running.test_id} has not ended")
            started += 1
            if event.current != started:
                problems.append(
                    f"line {event.line}: start of {event.test_id} says current={event.current}, the runner's counter "
                    f"is {started}"
                )
            running = event
        else:
            if running is None or running.test_id != event.test_id:
                problems.append(f"line {event.line}: {event.test_id} ends without its start")
            elif event.current != running.current:
                problems.append(
                    f"line {event.line}: end of {event.test_id} says current={event.current}, its start "
                    f"{running.current}"
                )
            running = None
    if running is not None and not open_end_allowed:
        problems.append(f"{running.test_id} started and never ended in a run that finished")
    return problems


def protocol_problems(run: InstrumentationRun, selected: list[str] | tuple[str, ...]) -> list[str]:
    """Where the stream lacks the structure only the runner writes (empty list: none found). Pure.

    Checks: every test reported is one of ``selected``; tests start and end one at a time, each start's
    ``current`` is the runner's counter (1, 2, ...) and its end repeats it; every block names the same
    ``id`` and the same ``numtests``, and in a finished run (:attr:`InstrumentationRun.complete`)
    ``numtests`` is the number of tests started; at most one ``INSTRUMENTATION_CODE`` and no protocol
    line after it; a final summary, when there is one, agrees with the records (tests run = ended and not
    ignored, failures = ended in -1 / -2, never ``OK`` with a failure).
    """
    problems: list[str] = []
    events = run.events
    unselected = sorted({e.test_id for e in events} - set(selected))
    if unselected:
        problems.append(f"tests not selected were reported: {', '.join(unselected)}")
    problems += _sequence_problems(events, open_end_allowed=not run.complete)
    ids = sorted({e.runner_id for e in events})
    if len(ids) > 1:
        problems.append(f"status blocks name {len(ids)} runners: {', '.join(ids)}")
    numtests = sorted({e.numtests for e in events}, key=lambda n: -1 if n is None else n)
    started = sum(1 for e in events if e.is_start)
    if len(numtests) > 1 or None in numtests:
        problems.append(f"numtests differs between status blocks: {numtests}")
    elif numtests and run.complete and numtests[0] != started:
        problems.append(f"numtests={numtests[0]} but {started} test(s) started in a finished run")
    if run.codes > 1 or run.after_final:
        problems.append(f"{run.codes} INSTRUMENTATION_CODE line(s), {run.after_final} protocol line(s) after the first")
    if run.summary is not None and run.complete:
        ends = [r for r in run.tests.values() if r.ends]
        ran = sum(1 for r in ends if r.status is not TestStatus.IGNORED)
        failures = sum(1 for r in ends if r.status in (TestStatus.FAILED, TestStatus.ERROR))
        if run.summary != (ran, failures):
            problems.append(
                f"the final summary says {run.summary[0]} run / {run.summary[1]} failed, "
                f"the records {ran} run / {failures} failed"
            )
    return problems


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
