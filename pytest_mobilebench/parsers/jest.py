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

Errors: :class:`ParseError` when no report is found: a ``.json`` file that does not decode (file, line
and column named), a JSON object without ``testResults`` (the keys it has are listed), ``testResults``
that is not a list, or no JSON at all.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any, Final

from pytest_mobilebench.parsers._core import (
    ParseError,
    ParseResult,
    ResultBuilder,
    register,
    relative_to_root,
    strip_ansi,
)
from pytest_mobilebench.states import TestState

__all__ = ["TITLE_SEPARATOR", "jest_test_id", "parse_jest"]

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


def _objects_in_output(output: str) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, decoded value)`` for each JSON value that starts a line of ``output``."""
    decoder = json.JSONDecoder()
    offset = 0
    resume = 0  # lines inside a value already decoded are not searched again
    for lineno, line in enumerate(output.splitlines(keepends=True), start=1):
        stripped = line.lstrip()
        if offset >= resume and stripped.startswith("{"):
            start = offset + (len(line) - len(stripped))
            try:
                value, resume = decoder.raw_decode(output, start)
            except json.JSONDecodeError:
                pass
            else:
                yield lineno, value
        offset += len(line)


def _describe_missing(where: str, value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(sorted(map(str, value))[:10]) or "none"
        return f"{where}: JSON object has no 'testResults' (not a jest --json report); its keys: {keys}"
    return f"{where}: JSON value is a {type(value).__name__}, not a jest --json report object with 'testResults'"


def _find_reports(output: str, files: Mapping[str, bytes]) -> list[tuple[str, dict[str, Any]]]:
    """The jest reports, as ``(where, report)``; raises ParseError when there is none."""
    reports: list[tuple[str, dict[str, Any]]] = []
    problems: list[str] = []
    for path in sorted(p for p in files if p.lower().endswith(".json")):
        try:
            value = json.loads(files[path].decode("utf-8-sig"))
        except UnicodeDecodeError as exc:
            problems.append(f"{path}: not UTF-8 text (byte {exc.start})")
            continue
        except json.JSONDecodeError as exc:
            problems.append(f"{path}: line {exc.lineno} column {exc.colno}: invalid JSON ({exc.msg})")
            continue
        if isinstance(value, dict) and "testResults" in value:
            reports.append((path, value))
        else:
            problems.append(_describe_missing(f"{path}: line 1", value))
    if reports:
        return reports
    for lineno, value in _objects_in_output(output):
        if isinstance(value, dict) and "testResults" in value:
            reports.append((f"output line {lineno}", value))
        else:
            problems.append(_describe_missing(f"output line {lineno}", value))
    if reports:
        return reports
    if problems:
        raise ParseError("jest: no jest --json report found; " + "; ".join(problems[:5]))
    lines = len(output.splitlines())
    raise ParseError(f"jest: no .json result file and no JSON object in the output ({lines} lines)")


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
    reports = _find_reports(output, files)
    for where, report in reports:
        suites = report["testResults"]
        if not isinstance(suites, list):
            raise ParseError(f"{where}: 'testResults' is a {type(suites).__name__}, expected a list")
        if report.get("wasInterrupted") is True:
            builder.warn(f"{where}: the jest run was interrupted; results may be incomplete")
        for index, suite in enumerate(suites):
            if not isinstance(suite, dict):
                builder.warn(f"{where}: testResults[{index}] is not an object; skipped")
                continue
            raw_path = suite.get("name") or suite.get("testFilePath") or ""
            if not raw_path:
                builder.warn(f"{where}: testResults[{index}] has no 'name' (test file path)")
            path = relative_to_root(str(raw_path), root_dir)
            assertions = suite.get("assertionResults") or []
            exec_error = suite.get("testExecError")
            message = str(suite.get("message") or "")
            if not message and isinstance(exec_error, dict):
                message = str(exec_error.get("message") or "")
            reason = _first_line(message)
            if not assertions:
                if exec_error or suite.get("status") == "failed":
                    detail = f": {reason}" if reason else ""
                    builder.warn(f"{path}: test suite failed to run; its tests are absent{detail}")
                continue
            if exec_error:
                builder.warn(f"{path}: test suite reported an error besides its {len(assertions)} tests: {reason}")
            elif suite.get("status") == "failed" and not any(
                isinstance(a, dict) and a.get("status") == "failed" for a in assertions
            ):
                builder.warn(f"{path}: test suite failed although none of its tests did: {reason}")
            for number, assertion in enumerate(assertions):
                if not isinstance(assertion, dict):
                    builder.warn(f"{path}: assertionResults[{number}] is not an object; skipped")
                    continue
                titles = [str(t) for t in assertion.get("ancestorTitles") or []]
                titles.append(str(assertion.get("title", "")))
                test_id = jest_test_id(path, titles)
                status = assertion.get("status")
                state = _STATUSES.get(status) if isinstance(status, str) else None
                failure = strip_ansi("\n\n".join(str(m) for m in assertion.get("failureMessages") or []))
                if state is None:
                    builder.warn(f"{path}: unknown status {status!r} for {test_id!r}; counted as FAIL")
                    state = TestState.FAIL
                    failure = failure or f"unknown jest status {status!r}"
                builder.add(test_id, state, failure)
    return builder.build()
