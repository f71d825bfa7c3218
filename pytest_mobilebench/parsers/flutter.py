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

Other event types (``allSuites``, ``group``, ``print``, ``debug``, future ones) are ignored, as the
protocol asks of clients. Fields of the wrong JSON type (a ``test`` that is not an object, a list as an
id) make that event unusable: it is skipped with a warning naming its line.

Several streams in one output (``melos exec -- flutter test --machine``, a custom command running
several packages): every ``start`` event after the first begins a new stream, and suite and test ids are
resolved within their own stream only (each ``flutter test`` process counts its ids from 0 again).
Interleaved streams whose lines carry a ``[package] `` prefix (``melos exec --stream`` with concurrency)
are told apart by that prefix.
The output is split into lines at ``\n`` only: the JSON reporter writes U+2028, U+2029 and U+0085
unescaped inside strings, so they never end a line.

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
goes on, and when it still reads as an ``error`` event of a known test, that test is ``FAIL`` (an error
that cannot be read is never dropped into a pass); a second ``testStart`` or ``suite`` event for an id
already seen in the same stream is ignored with a warning, and a second ``testDone`` never turns a
failure back into a pass; a stream without its ``done`` event is still parsed, and every test that started but never
finished is ``FAIL`` with the message :data:`UNFINISHED_MESSAGE` (followed by its error texts, if any). ``[{"event":
...}]`` lines (the flutter tool's own daemon-style notices) are skipped silently. :class:`ParseError` when the output
holds no JSON event at all. Duplicate ids follow
:class:`~pytest_mobilebench.parsers.ResultBuilder` (``FAIL > PASS > SKIP``, with a warning).
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from typing import Any, Final

from pytest_mobilebench.parsers._core import (
    ParseError,
    ParseResult,
    ResultBuilder,
    register,
    register_console,
    relative_to_root,
    strip_ansi,
    stronger,
)
from pytest_mobilebench.states import TestState

__all__ = ["UNFINISHED_MESSAGE", "flutter_console_counts", "flutter_test_id", "parse_flutter"]

#: Message of a test that has a ``testStart`` but no ``testDone`` (the stream was cut off).
UNFINISHED_MESSAGE: Final[str] = "test started but never finished: the event stream ended before its testDone event"

_RESULTS: Final[dict[str, TestState]] = {
    "success": TestState.PASS,
    "failure": TestState.FAIL,
    "error": TestState.FAIL,
}

#: ``melos exec --stream`` puts ``[package] `` before every line of a package's output.
_CHANNEL: Final = re.compile(r"^\[([^\[\]{}\"]{1,200})\] ?(?=[{\[])")

#: A line that no longer decodes but still says it is an error event, and of which test.
_BROKEN_ERROR: Final = re.compile(r'"type"\s*:\s*"error"')
_BROKEN_TEST_ID: Final = re.compile(r'"testID"\s*:\s*(\d{1,12})\b')


def flutter_test_id(suite_path: str, name: str) -> str:
    """The test id: ``f"{suite_path}::{name}"`` (see the module docstring)."""
    return f"{suite_path}::{name}"


@dataclasses.dataclass
class _Test:
    name: str
    suite_id: int | str | None
    grouped: bool
    line: int
    errors: list[str] = dataclasses.field(default_factory=list)
    state: TestState | None = None  # set by testDone (None while running)
    hidden: bool = False


@dataclasses.dataclass
class _Stream:
    """The ids of one ``flutter test --machine`` process: suite id -> path, test id -> test."""

    suites: dict[int | str, str] = dataclasses.field(default_factory=dict)
    tests: dict[int | str, _Test] = dataclasses.field(default_factory=dict)
    events: int = 0
    done: bool = False


def _short(text: str, limit: int = 80) -> str:
    """``text`` on one line (line breaks become spaces), cut to ``limit`` characters."""
    flat = " ".join(part.strip() for part in text.splitlines() if part.strip())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _key(value: Any) -> int | str | None:
    """An event's id field when it is an int or a string (never a bool, list or object), else None."""
    return value if type(value) in (int, str) else None


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _decode(line: str) -> tuple[Any, str | None]:
    """(decoded JSON value, None) or (None, why it does not decode)."""
    try:
        return json.loads(line), None
    except json.JSONDecodeError as exc:
        return None, f"{exc.msg}; column {exc.colno}"
    except (ValueError, RecursionError) as exc:  # integers over the digit limit, absurd nesting
        return None, type(exc).__name__


class _Reader:
    """Applies events to the current stream; all warnings go to the builder."""

    def __init__(self, builder: ResultBuilder) -> None:
        self.builder = builder
        self.channels: dict[str, list[_Stream]] = {}  # line prefix ("" for none) -> its streams, in order

    @property
    def streams(self) -> list[_Stream]:
        """Every stream of every channel, channels in the order they first appeared."""
        return [stream for streams in self.channels.values() for stream in streams]

    def event(self, lineno: int, event: dict[str, Any], channel: str = "") -> None:
        kind = event["type"]
        streams = self.channels.setdefault(channel, [_Stream()])
        if kind == "start" and streams[-1].events:
            streams.append(_Stream())
        stream = streams[-1]
        stream.events += 1
        handlers = {
            "suite": self._on_suite,
            "testStart": self._on_test_start,
            "error": self._on_error,
            "testDone": self._on_test_done,
        }
        if kind in handlers:
            handlers[kind](stream, lineno, event)
        elif kind == "done":
            stream.done = True

    def broken_line(self, lineno: int, line: str, why: str, channel: str = "") -> None:
        self.builder.warn(f"output line {lineno}: malformed JSON event skipped ({why}): {_short(line)!r}")
        found = _BROKEN_TEST_ID.search(line)
        current = self.channels.get(channel, [_Stream()])[-1]
        test = current.tests.get(int(found.group(1))) if found else None
        if test is not None and _BROKEN_ERROR.search(line):
            test.errors.append(f"an error event for this test could not be read (output line {lineno})")
            if test.state is not None:
                test.state, test.hidden = TestState.FAIL, False

    def _on_suite(self, stream: _Stream, lineno: int, event: dict[str, Any]) -> None:
        suite = _obj(event.get("suite"))
        suite_id, path = _key(suite.get("id")), suite.get("path")
        if suite_id is None or suite_id in stream.suites or not isinstance(path, str):
            self.builder.warn(
                f"output line {lineno}: suite event with a missing or repeated id {suite.get('id')!r} "
                "or a path that is not a string ignored"
            )
            return
        stream.suites[suite_id] = path

    def _on_test_start(self, stream: _Stream, lineno: int, event: dict[str, Any]) -> None:
        info = _obj(event.get("test"))
        test_id, name = _key(info.get("id")), info.get("name")
        if test_id is None or test_id in stream.tests or not isinstance(name, str):
            self.builder.warn(
                f"output line {lineno}: testStart with a missing or repeated test id "
                f"{info.get('id')!r} or a name that is not a string ignored"
            )
            return
        groups = info.get("groupIDs")
        stream.tests[test_id] = _Test(
            name=name,
            suite_id=_key(info.get("suiteID")),
            grouped=bool(groups) if isinstance(groups, list) else groups is not None,
            line=lineno,
        )

    def _test(self, stream: _Stream, lineno: int, event: dict[str, Any]) -> _Test | None:
        test = stream.tests.get(_key(event.get("testID")))  # type: ignore[arg-type]
        if test is None:
            self.builder.warn(f"output line {lineno}: {event['type']} for unknown test id {event.get('testID')!r}")
        return test

    def _on_error(self, stream: _Stream, lineno: int, event: dict[str, Any]) -> None:
        test = self._test(stream, lineno, event)
        if test is None:
            return
        test.errors.append(strip_ansi(str(event.get("error", ""))))
        if test.state is not None:  # error after completion: failed, and visible
            test.state, test.hidden = TestState.FAIL, False

    def _on_test_done(self, stream: _Stream, lineno: int, event: dict[str, Any]) -> None:
        test = self._test(stream, lineno, event)
        if test is None:
            return
        result = event.get("result")
        if event.get("skipped") is True:
            state = TestState.SKIP
        elif isinstance(result, str) and result in _RESULTS:
            state = _RESULTS[result]
        else:
            self.builder.warn(f"output line {lineno}: unknown result {result!r} for {test.name!r}; counted as FAIL")
            state = TestState.FAIL
            test.errors.append(f"unknown test result {result!r}")
        if test.errors and state is not TestState.SKIP:
            state = TestState.FAIL  # errors reported before testDone always mean failure
        hidden = event.get("hidden") is True
        if test.state is not None:
            self.builder.warn(f"output line {lineno}: second testDone for {test.name!r}; a failure is kept")
            state, hidden = stronger(test.state, state), hidden and test.hidden
        test.state = state
        test.hidden = hidden and state is not TestState.FAIL

    def finish(self, root_dir: str | None, last_line: int) -> None:
        """Report every stream's tests to the builder (rules: module docstring)."""
        streams = self.streams
        for number, stream in enumerate(streams, start=1):
            if stream.done or not stream.events:
                continue
            if len(streams) == 1:
                self.builder.warn(f"output: stream ended without a 'done' event after line {last_line}")
            else:
                self.builder.warn(f"output: stream {number} of {len(streams)} ended without a 'done' event")
        for stream in streams:
            for test in stream.tests.values():
                self._report(stream, test, root_dir)

    def _report(self, stream: _Stream, test: _Test, root_dir: str | None) -> None:
        path = relative_to_root(stream.suites.get(test.suite_id, ""), root_dir)  # type: ignore[arg-type]
        if test.suite_id not in stream.suites:
            self.builder.warn(
                f"output line {test.line}: test {test.name!r} names suite id {test.suite_id!r} that has no suite event"
            )
        message = "\n".join(test.errors)
        if not test.grouped and test.name.startswith("loading "):
            if test.state is None:
                self.builder.warn(f"{path or test.name}: suite never finished loading; its tests are absent")
            elif test.state is TestState.FAIL:
                detail = f": {_short(message, 300)}" if message else ""
                self.builder.warn(f"{path or test.name}: suite failed to load; its tests are absent{detail}")
            return
        if test.state is None:
            self.builder.warn(f"output line {test.line}: {test.name!r} started but never finished; counted as FAIL")
            unfinished = f"{UNFINISHED_MESSAGE}\n{message}" if message else UNFINISHED_MESSAGE
            self.builder.add(flutter_test_id(path, test.name), TestState.FAIL, unfinished)
        elif not test.hidden:
            self.builder.add(flutter_test_id(path, test.name), test.state, message)


@register("flutter")
def parse_flutter(output: str, files: Mapping[str, bytes], *, root_dir: str | None = None) -> ParseResult:
    """Parse ``flutter test --machine`` event streams (ids and rules: module docstring).

    Args:
        output: the command output text holding the event stream(s) (stdout, possibly mixed with stderr).
        files: unused (the stream is in ``output``); accepted for the common parser signature.
        root_dir: the package root where the tests ran; suite paths under it become relative.

    Raises:
        ParseError: no JSON event in ``output`` (the message gives the line count and the first line).
    """
    del files
    builder = ResultBuilder()
    reader = _Reader(builder)
    non_json: list[tuple[int, str]] = []
    lines = output.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    for lineno, raw in enumerate(lines, start=1):
        line = raw.strip()
        prefix = _CHANNEL.match(line)
        channel = prefix.group(1) if prefix else ""
        line = line[prefix.end() :] if prefix else line
        if not line:
            continue
        if line[0] not in "{[":
            non_json.append((lineno, line))
            continue
        event, why = _decode(line)
        if why is not None:
            reader.broken_line(lineno, line, why, channel)
        elif isinstance(event, list):
            if not all(isinstance(item, dict) and "event" in item for item in event):
                builder.warn(f"output line {lineno}: JSON array that is not a flutter tool notice skipped")
        elif not isinstance(event, dict) or not isinstance(event.get("type"), str):
            builder.warn(f"output line {lineno}: JSON value without a 'type' skipped: {_short(line)!r}")
        else:
            reader.event(lineno, event, channel)
    if not any(stream.events for stream in reader.streams):
        first = f"; first line: {_short(lines[0].strip())!r}" if lines else ""
        raise ParseError(f"output: no flutter --machine JSON event in {len(lines)} lines{first}")
    if non_json:
        lineno, text = non_json[0]
        builder.warn(f"output: ignored {len(non_json)} non-JSON line(s); first at line {lineno}: {_short(text)!r}")
    reader.finish(root_dir, len(lines))
    return builder.build()


#: The expanded reporter's last line, e.g. ``00:03 +4 ~1 -4: Some tests failed.`` or ``00:01 +2: All tests passed!``.
_CONSOLE_SUMMARY: Final = re.compile(
    r"^(?:\d+:\d+ )?\+(\d+)(?: ~\d+)?(?: -(\d+))?: (?:Some tests failed\.|All tests passed!)[ \t\r]*$", re.MULTILINE
)


@register_console("flutter")
def flutter_console_counts(output: str) -> tuple[int, int] | None:
    """``(passed, failed)`` summed over ``flutter test``'s summary lines, None without one (``--machine``)."""
    matches = _CONSOLE_SUMMARY.findall(output)
    if not matches:
        return None
    return sum(int(p) for p, _ in matches), sum(int(f or 0) for _, f in matches)
