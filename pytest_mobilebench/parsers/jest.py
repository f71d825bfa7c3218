"""Jest parser: the ``jest --json`` report (React Native, SPEC section 1).

Where the report comes from: every result file whose path ends in ``.json`` (sorted order; e.g. the
``--outputFile=jest-results.json`` file) that decodes to an object with ``testResults``. When no file
holds one, the command output text is searched: at each line starting with ``{`` a JSON object is
decoded (``jest --json`` without ``--outputFile`` prints the report on stdout, possibly after ``npm run``
banners), and every object with ``testResults`` is used. Several reports are merged.

Per suite (``testResults[]``, one per test file): ``name`` is the file's path as jest reports it
(absolute); ``assertionResults[]`` holds the tests, with ``ancestorTitles`` (the ``describe`` titles,
outermost first), ``title``, ``status`` and ``failureMessages``.

States: ``passed`` -> ``PASS``; ``failed`` -> ``FAIL`` (message: ``failureMessages`` joined by a blank
line, ANSI colours removed); ``pending`` | ``skipped`` | ``todo`` | ``disabled`` -> ``SKIP``; any other
status -> ``FAIL`` with a warning (never a silent pass).

Retries (``jest.retryTimes``): an assertion whose ``invocations`` is above 1 ran that many times and
every run before the last failed; each earlier run counts as one ``FAIL`` execution (its message from
``retryReasons`` when jest kept them) and the rule for repeated executions of
:class:`~pytest_mobilebench.parsers.ResultBuilder` applies: a test that failed and then passed on a retry
is ``FAIL`` (``docs/test-ids.md``, "Retries"), with a warning listing the executions.

Fields of the wrong JSON type never stop the parse: a suite or assertion that is not an object, a suite
without a test file path (``name``) or whose ``assertionResults`` is not a list, an assertion whose
titles are not strings: each is skipped with a warning naming where it is (``"jest-results.json:
testResults[2].assertionResults[0]: ..."``); the other suites and assertions are kept.

A suite that failed to run (a ``testExecError``, or ``status: "failed"`` with no assertion results: a
TypeScript / Babel compile error, a missing module) contributes no test: a warning names the file and
the first line of jest's message, and grading sees its tests as absent (``NONE``, SPEC section 1 "Test
states").

Test id: ``"{path}::{titles}"`` where ``path`` is the suite's path made relative to ``root_dir`` when
it lies under it (see :func:`~pytest_mobilebench.parsers.relative_to_root`; pass the directory jest ran
in, its ``rootDir``, so ids do not depend on where the repository was checked out) and ``titles`` is
``ancestorTitles + [title]`` joined by ``" > "``, every title exactly as written (spaces, ``>`` and
newlines kept). Example: ``"src/__tests__/math.test.js::math > mul > multiplies 3 by 4"``. Duplicate ids
(``test.each`` rows with equal titles, merged reports) follow
:class:`~pytest_mobilebench.parsers.ResultBuilder` (``FAIL > PASS > SKIP``, with a warning).

Errors: :class:`ParseError` when no report is usable: a ``.json`` file that does not decode (file, line
and column named), a JSON object without ``testResults`` (the keys it has are listed), ``testResults``
that is not a list, or no JSON at all. One unusable report among several is a warning.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from pytest_mobilebench.parsers._core import (
    ParseError,
    ParseResult,
    ResultBuilder,
    register,
    register_console,
    relative_to_root,
    strip_ansi,
)
from pytest_mobilebench.states import TestState

__all__ = ["TITLE_SEPARATOR", "jest_console_counts", "jest_test_id", "parse_jest"]

#: Joins ``ancestorTitles`` and ``title`` in a test id.
TITLE_SEPARATOR: Final[str] = " > "

_STATUSES: Final[dict[str, TestState]] = {
    "passed": TestState.PASS,
    "failed": TestState.FAIL,
    "pending": TestState.SKIP,
    "skipped": TestState.SKIP,
    "todo": TestState.SKIP,
    "disabled": TestState.SKIP,
}


def jest_test_id(path: str, titles: list[str]) -> str:
    """The test id: ``f"{path}::{' > '.join(titles)}"`` (see the module docstring)."""
    return f"{path}::{TITLE_SEPARATOR.join(titles)}"


def _first_line(message: str, limit: int = 300) -> str:
    """First informative line of a jest suite message (the ``● Test suite failed to run`` header skipped)."""
    for line in strip_ansi(message).splitlines():
        text = line.strip()
        if text and not text.startswith("●"):
            return text if len(text) <= limit else text[: limit - 3] + "..."
    return ""


#: Values that start on a line but do not end on it are decoded from the whole output at most this often:
#: each such attempt reads up to the rest of the output, so a flood of broken lines stays linear.
_MULTILINE_TRIES: Final = 20


def _objects_in_output(output: str) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, decoded value)`` for each JSON value that starts a line of ``output``.

    A value is first read from its line alone (``jest --json`` prints its report on one line); a line
    whose value is cut off at the line's end is read again across lines, at most
    :data:`_MULTILINE_TRIES` times per output.
    """
    decoder = json.JSONDecoder()
    offset = 0
    resume = 0  # lines inside a value already decoded are not searched again
    tries = _MULTILINE_TRIES
    for lineno, line in enumerate(output.split("\n"), start=1):  # U+2028 and U+0085 occur inside JSON strings
        stripped = line.strip()
        if offset >= resume and stripped.startswith("{"):
            try:
                yield lineno, json.loads(stripped)
            except json.JSONDecodeError as exc:
                if exc.pos >= len(stripped) and tries > 0:  # cut off at the line's end: may go on below
                    tries -= 1
                    start = offset + line.index("{")
                    try:
                        value, resume = decoder.raw_decode(output, start)
                    except (ValueError, RecursionError):
                        pass
                    else:
                        yield lineno, value
            except (ValueError, RecursionError):  # an integer over the digit limit, absurd nesting
                pass
        offset += len(line) + 1


def _describe_missing(where: str, value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(sorted(map(str, value))[:10]) or "none"
        return f"{where}: JSON object has no 'testResults' (not a jest --json report); its keys: {keys}"
    return f"{where}: JSON value is a {type(value).__name__}, not a jest --json report object with 'testResults'"


def _load_file(path: str, data: bytes) -> tuple[Any, str | None]:
    """(decoded value, None) or (None, the problem, naming the file and where)."""
    try:
        return json.loads(data.decode("utf-8-sig")), None
    except UnicodeDecodeError as exc:
        return None, f"{path}: not UTF-8 text (byte {exc.start})"
    except json.JSONDecodeError as exc:
        return None, f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})"
    except (ValueError, RecursionError) as exc:
        return None, f"{path}: JSON that cannot be read ({type(exc).__name__})"


def _is_report(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("testResults"), list)


def _not_a_report(where: str, value: Any) -> str:
    if isinstance(value, dict) and "testResults" in value:
        return f"{where}: 'testResults' is a {type(value['testResults']).__name__}, expected a list"
    return _describe_missing(where, value)


def _find_reports(output: str, files: Mapping[str, bytes]) -> tuple[list[tuple[str, dict[str, Any]]], list[str]]:
    """The jest reports as ``(where, report)`` and the problems met; raises ParseError when there is none."""
    reports: list[tuple[str, dict[str, Any]]] = []
    problems: list[str] = []
    for path in sorted(p for p in files if p.lower().endswith(".json")):
        value, problem = _load_file(path, files[path])
        if problem is not None:
            problems.append(problem)
        elif _is_report(value):
            reports.append((path, value))
        else:
            problems.append(_not_a_report(f"{path}: line 1", value))
    if not reports:
        for lineno, value in _objects_in_output(output):
            if _is_report(value):
                reports.append((f"output line {lineno}", value))
            else:
                problems.append(_not_a_report(f"output line {lineno}", value))
    if reports:
        return reports, [p for p in problems if "'testResults' is a" in p]
    if problems:
        raise ParseError("jest: no jest --json report found; " + "; ".join(problems[:5]))
    lines = len(output.splitlines())
    raise ParseError(f"jest: no .json result file and no JSON object in the output ({lines} lines)")


def _suite_path(where: str, suite: dict[str, Any], root_dir: str | None, builder: ResultBuilder) -> str | None:
    """The suite's test file path relative to ``root_dir``, or None (with a warning) when it has none."""
    raw_path = suite.get("name") or suite.get("testFilePath")
    if isinstance(raw_path, str) and raw_path:
        return relative_to_root(raw_path, root_dir)
    builder.warn(f"{where}: no test file path ('name' is {type(raw_path).__name__}); its tests are absent")
    return None


def _suite_reason(suite: dict[str, Any]) -> str:
    """First line of the suite's own error message (``message``, else ``testExecError.message``)."""
    exec_error = suite.get("testExecError")
    message = suite.get("message") or (exec_error.get("message") if isinstance(exec_error, dict) else "")
    return _first_line(str(message or ""))


def _titles(assertion: dict[str, Any]) -> list[str] | None:
    """``ancestorTitles + [title]`` when they are all strings, else None."""
    ancestors, title = assertion.get("ancestorTitles", []), assertion.get("title")
    if not isinstance(ancestors, list) or not isinstance(title, str):
        return None
    if not all(isinstance(t, str) for t in ancestors):
        return None
    return [*ancestors, title]


def _messages(value: Any) -> list[str]:
    if value is None:
        return []
    return [str(m) for m in value] if isinstance(value, list) else [str(value)]


def _executions(
    assertion: dict[str, Any], path: str, test_id: str, builder: ResultBuilder
) -> list[tuple[TestState, str]]:
    """States and messages of every run of one assertion: earlier (retried) runs first, then the last."""
    status = assertion.get("status")
    state = _STATUSES.get(status) if isinstance(status, str) else None
    failure = strip_ansi("\n\n".join(_messages(assertion.get("failureMessages"))))
    if state is None:
        builder.warn(f"{path}: unknown status {status!r} for {test_id!r}; counted as FAIL")
        state = TestState.FAIL
        failure = failure or f"unknown jest status {status!r}"
    invocations = assertion.get("invocations")
    retried = invocations - 1 if type(invocations) is int and invocations > 1 and state is not TestState.SKIP else 0
    reasons = _messages(assertion.get("retryReasons"))
    earlier = [
        strip_ansi(reasons[n]) if n < len(reasons) else f"run {n + 1} of {invocations} failed (jest retryTimes)"
        for n in range(min(retried, 1000))
    ]
    return [*((TestState.FAIL, text) for text in earlier), (state, failure)]


def _read_suite(where: str, suite: dict[str, Any], root_dir: str | None, builder: ResultBuilder) -> None:
    """Feed one ``testResults[]`` entry into ``builder`` (rules: module docstring)."""
    path = _suite_path(where, suite, root_dir, builder)
    if path is None:
        return
    assertions = suite.get("assertionResults")
    if assertions is not None and not isinstance(assertions, list):
        builder.warn(f"{where}: 'assertionResults' is a {type(assertions).__name__}, not a list; its tests are absent")
        assertions = None
    reason, exec_error = _suite_reason(suite), suite.get("testExecError")
    if not assertions:
        if exec_error or suite.get("status") == "failed":
            detail = f": {reason}" if reason else ""
            builder.warn(f"{path}: test suite failed to run; its tests are absent{detail}")
        return
    if exec_error:
        builder.warn(f"{path}: test suite reported an error besides its {len(assertions)} tests: {reason}")
    elif suite.get("status") == "failed" and not any(
        isinstance(a, dict) and a.get("status") == "failed" for a in assertions
    ):
        builder.warn(f"{path}: test suite failed although none of its tests did: {reason}")
    for number, assertion in enumerate(assertions):
        titles = _titles(assertion) if isinstance(assertion, dict) else None
        if titles is None:
            builder.warn(f"{where}.assertionResults[{number}]: not an object with string titles; skipped")
            continue
        test_id = jest_test_id(path, titles)
        builder.add_attempts(test_id, _executions(assertion, path, test_id, builder))


@register("jest")
def parse_jest(output: str, files: Mapping[str, bytes], *, root_dir: str | None = None) -> ParseResult:
    """Parse ``jest --json`` reports into a :class:`ParseResult` (sources, ids, rules: module docstring).

    Args:
        output: the command output; searched for the report when no ``.json`` file holds one.
        files: ``{relative path: bytes}``; ``.json`` files holding a report are used.
        root_dir: jest's ``rootDir`` where the tests ran; suite paths under it become relative.

    Raises:
        ParseError: no usable report (see the module docstring); the message names file/line and what
            is missing.
    """
    builder = ResultBuilder()
    reports, problems = _find_reports(output, files)
    for problem in problems:
        builder.warn(f"{problem}; that report is skipped")
    for where, report in reports:
        if report.get("wasInterrupted") is True:
            builder.warn(f"{where}: the jest run was interrupted; results may be incomplete")
        for index, suite in enumerate(report["testResults"]):
            if isinstance(suite, dict):
                _read_suite(f"{where}: testResults[{index}]", suite, root_dir, builder)
            else:
                builder.warn(f"{where}: testResults[{index}] is not an object; skipped")
    return builder.build()


#: jest's summary line, e.g. ``Tests:       2 failed, 1 skipped, 1 todo, 8 passed, 12 total``.
_CONSOLE_SUMMARY: Final = re.compile(r"^Tests:[ \t]+(?P<counts>(?:\d+ [a-z]+, )*)\d+ total[ \t\r]*$", re.MULTILINE)


@register_console("jest")
def jest_console_counts(output: str) -> tuple[int, int] | None:
    """``(passed, failed)`` of jest's last ``Tests:`` summary line (the runner prints its own final
    summary last; lines printed earlier by code under test are never added), None without one (see
    ``console_counts``)."""
    matches = list(_CONSOLE_SUMMARY.finditer(output))
    if not matches:
        return None
    counts = {word: int(number) for number, word in re.findall(r"(\d+) ([a-z]+)", matches[-1]["counts"])}
    return counts.get("passed", 0), counts.get("failed", 0)
