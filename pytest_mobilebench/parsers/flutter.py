"""Flutter parser: the ``flutter test --machine`` JSON event stream (the Dart ``test`` package's JSON
reporter protocol), read from the command output text. Result files are not used.

The stream is one JSON object per line. Events used:

* ``suite``: ``suite.id`` -> ``suite.path`` (absolute, or relative to the package root);
* ``testStart``: ``test.id``, ``test.name`` (the full name, group names included, joined by spaces by
  the test package), ``test.suiteID``, ``test.groupIDs``;
* ``error``: ``testID``, ``error`` text (kept as the test's message; several are joined by newlines);
  an error that arrives after the test's ``testDone`` still makes the test ``FAIL``, as the protocol
  says, and makes a hidden test visible;
* ``testDone``: ``testID``, ``result`` (``success`` | ``failure`` | ``error``), ``skipped``, ``hidden``;
* ``done``: end of the run.

Other event types (``start``, ``allSuites``, ``group``, ``print``, ``debug``, future ones) are ignored,
as the protocol asks of clients.

States: ``skipped: true`` -> ``SKIP``; else ``success`` -> ``PASS``; ``failure`` / ``error`` -> ``FAIL``;
an unknown ``result`` -> ``FAIL`` with a warning (never a silent pass). ``hidden: true`` tests (the
synthetic ``setUpAll`` / ``tearDownAll`` tests that succeeded) are ignored. The synthetic per-file
``loading <path>`` tests (no group ids, name ``"loading "`` + path) are never reported as tests: when one
ends in ``failure`` / ``error`` the file did not compile or load, a warning carries its error, and that
file's tests stay absent (grading sees ``NONE``, SPEC section 1 "Test states").

Test id: ``"{suite path}::{full test name}"``, the suite path made relative to ``root_dir`` when it lies
under it (see :func:`~pytest_mobilebench.parsers.relative_to_root`), the test name exactly as in the
stream (spaces and newlines kept). Example: ``"test/counter_test.dart::Counter increments twice"``.

Damage: non-JSON lines (``flutter pub get`` progress, tool banners) are skipped with one summary
warning; a line that looks like JSON but does not decode gives a warning naming its line and parsing
goes on; a stream without its ``done`` event is still parsed, and every test that started but never
finished is ``FAIL`` with the message :data:`UNFINISHED_MESSAGE` (followed by its error texts, if any). ``[{"event": ...}]`` lines (the
flutter tool's own daemon-style notices) are skipped silently. :class:`ParseError` when the output
holds no JSON event at all. Duplicate ids follow
:class:`~pytest_mobilebench.parsers.ResultBuilder` (``FAIL > PASS > SKIP``, with a warning).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
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

__all__ = ["UNFINISHED_MESSAGE", "flutter_test_id", "parse_flutter"]

#: Message of a test that has a ``testStart`` but no ``testDone`` (the stream was cut off).
UNFINISHED_MESSAGE: Final[str] = "test started but never finished: the event stream ended before its testDone event"

_RESULTS: Final[dict[str, TestState]] = {
    "success": TestState.PASS,
    "failure": TestState.FAIL,
    "error": TestState.FAIL,
}


def flutter_test_id(suite_path: str, name: str) -> str:
    """The test id: ``f"{suite_path}::{name}"`` (see the module docstring)."""
    return f"{suite_path}::{name}"


@dataclasses.dataclass
class _Test:
    name: str
    suite_id: Any
    group_ids: list[Any]
    line: int
    errors: list[str] = dataclasses.field(default_factory=list)
    state: TestState | None = None  # set by testDone (None while running)
    hidden: bool = False


def _short(text: str, limit: int = 80) -> str:
    """``text`` on one line (line breaks become spaces), cut to ``limit`` characters."""
    flat = " ".join(part.strip() for part in text.splitlines() if part.strip())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


@register("flutter")
def parse_flutter(output: str, files: Mapping[str, bytes], *, root_dir: str | None = None) -> ParseResult:
    """Parse a ``flutter test --machine`` event stream (ids and rules: module docstring).

    Args:
        output: the command output text holding the event stream (stdout, possibly mixed with stderr).
        files: unused (the stream is in ``output``); accepted for the common parser signature.
        root_dir: the package root where the tests ran; suite paths under it become relative.

    Raises:
        ParseError: no JSON event in ``output`` (the message gives the line count and the first line).
    """
    del files
    builder = ResultBuilder()
    suites: dict[Any, str] = {}
    tests: dict[Any, _Test] = {}
    order: list[Any] = []
    non_json: list[tuple[int, str]] = []
    events = 0
    done_seen = False
    lines = output.splitlines()

    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        if line[0] not in "{[":
            non_json.append((lineno, line))
            continue
        try:
            event = json.loads(line)
        except json.JSONDecodeError as exc:
            builder.warn(f"output line {lineno}: malformed JSON event skipped ({exc.msg}; column {exc.colno}): "
                         f"{_short(line)!r}")
            continue
        if isinstance(event, list):
            if not all(isinstance(item, dict) and "event" in item for item in event):
                builder.warn(f"output line {lineno}: JSON array that is not a flutter tool notice skipped")
            continue
        if not isinstance(event, dict) or not isinstance(event.get("type"), str):
            builder.warn(f"output line {lineno}: JSON value without a 'type' skipped: {_short(line)!r}")
            continue
        events += 1
        kind = event["type"]
        if kind == "suite":
            suite = event.get("suite") or {}
            suites[suite.get("id")] = str(suite.get("path") or "")
        elif kind == "testStart":
            info = event.get("test") or {}
            test_id = info.get("id")
            if test_id in tests:
                builder.warn(f"output line {lineno}: second testStart for test id {test_id!r}; the later one kept")
            else:
                order.append(test_id)
            tests[test_id] = _Test(
                name=str(info.get("name", "")),
                suite_id=info.get("suiteID"),
                group_ids=list(info.get("groupIDs") or []),
                line=lineno,
            )
        elif kind == "error":
            test = tests.get(event.get("testID"))
            if test is None:
                builder.warn(f"output line {lineno}: error event for unknown test id {event.get('testID')!r}")
                continue
            test.errors.append(strip_ansi(str(event.get("error", ""))))
            if test.state is not None:  # error after completion: failed, and visible
                test.state = TestState.FAIL
                test.hidden = False
        elif kind == "testDone":
            test = tests.get(event.get("testID"))
            if test is None:
                builder.warn(f"output line {lineno}: testDone for unknown test id {event.get('testID')!r}")
                continue
            result = event.get("result")
            if event.get("skipped") is True:
                state = TestState.SKIP
            elif result in _RESULTS:
                state = _RESULTS[result]
            else:
                builder.warn(f"output line {lineno}: unknown result {result!r} for {test.name!r}; counted as FAIL")
                state = TestState.FAIL
                test.errors.append(f"unknown test result {result!r}")
            if test.errors and state is not TestState.SKIP:
                state = TestState.FAIL  # errors reported before testDone always mean failure
            test.state = state
            test.hidden = bool(event.get("hidden")) and state is not TestState.FAIL
        elif kind == "done":
            done_seen = True

    if not events:
        first = f"; first line: {_short(lines[0].strip())!r}" if lines else ""
        raise ParseError(f"output: no flutter --machine JSON event in {len(lines)} lines{first}")
    if non_json:
        lineno, text = non_json[0]
        builder.warn(f"output: ignored {len(non_json)} non-JSON line(s); first at line {lineno}: {_short(text)!r}")
    if not done_seen:
        builder.warn(f"output: stream ended without a 'done' event after line {len(lines)}")

    for key in order:
        test = tests[key]
        path = relative_to_root(suites.get(test.suite_id, ""), root_dir)
        if test.suite_id not in suites:
            builder.warn(f"output line {test.line}: test {test.name!r} names suite id {test.suite_id!r} "
                         "that has no suite event")
        message = "\n".join(test.errors)
        if not test.group_ids and test.name.startswith("loading "):
            if test.state is None:
                builder.warn(f"{path or test.name}: suite never finished loading; its tests are absent")
            elif test.state is TestState.FAIL:
                detail = f": {_short(message, 300)}" if message else ""
                builder.warn(f"{path or test.name}: suite failed to load; its tests are absent{detail}")
            continue
        if test.state is None:
            builder.warn(f"output line {test.line}: {test.name!r} started but never finished; counted as FAIL")
            unfinished = f"{UNFINISHED_MESSAGE}\n{message}" if message else UNFINISHED_MESSAGE
            builder.add(flutter_test_id(path, test.name), TestState.FAIL, unfinished)
            continue
        if test.hidden:
            continue
        builder.add(flutter_test_id(path, test.name), test.state, message)
    return builder.build()
