"""Shared pieces of the log parsers: the result type, the registry and the duplicate-id rule.

Everything here is re-exported by :mod:`pytest_mobilebench.parsers`; import it from there.
The parsers are pure functions: ``(command output text, {relative path: bytes}) -> ParseResult``.
They never touch the file system, never run anything and never decide verdicts; absent test ids
are turned into ``NONE`` by grading (SPEC section 1, "Test states"), not here.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, TypeAlias, final

from pytest_mobilebench.states import TestState

__all__ = [
    "PARSERS",
    "ConsoleCounter",
    "ParseError",
    "ParseResult",
    "Parser",
    "ResultBuilder",
    "console_counts",
    "get_parser",
    "register",
    "register_console",
    "relative_to_root",
    "strip_ansi",
    "stronger",
]


class ParseError(ValueError):
    """The input yields nothing usable: no result file or event could be read at all.

    The message names the file (or ``"output"`` for the command output text) and the line, and says
    what is wrong, for example ``"TEST-a.xml: line 1: not well-formed (invalid token)"``. Partial damage
    (one file of many cut off, one malformed event line) is never a ParseError: it becomes a warning
    in :attr:`ParseResult.warnings` and the rest is kept.
    """


#: States a parser may report. ``NONE`` is assigned by grading to ids absent from a result.
_REPORTABLE: Final[frozenset[TestState]] = frozenset({TestState.PASS, TestState.FAIL, TestState.SKIP})


@final
@dataclasses.dataclass(frozen=True)
class ParseResult:
    """What one run's test output says, per test id.

    Attributes:
        tests: test id -> state, only ``PASS``, ``FAIL`` or ``SKIP``. Each parser module documents its
            id format (also ``docs/test-ids.md``); ids keep the names' whitespace exactly.
        messages: test id -> failure/error message text, only for ids in ``tests`` (usually the
            ``FAIL`` ones); may be empty.
        warnings: human-readable notes about damaged or surprising input, each naming the file or
            line, e.g. ``"TEST-x.xml: truncated at line 40, 3 testcases recovered"``.
        passed_on_retry: ids the runner retried that passed on their last attempt: ``FAIL`` in ``tests``
            (``docs/test-ids.md``, "Retries") but "passed" in the runner's own counts and exit status,
            which :func:`pytest_mobilebench.trust.cross_check` compares against.

    Raises:
        ValueError: at construction, when a state is not a reportable :class:`TestState` or a message
            belongs to an id that is not in ``tests``.
    """

    tests: dict[str, TestState]
    messages: dict[str, str]
    warnings: tuple[str, ...]
    passed_on_retry: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for test_id, state in self.tests.items():
            if not isinstance(state, TestState) or state not in _REPORTABLE:
                raise ValueError(f"test {test_id!r}: state {state!r} is not one of PASS, FAIL, SKIP")
        stray = sorted(set(self.messages) - set(self.tests))
        if stray:
            raise ValueError(f"messages for ids that are not in tests: {stray[:5]!r}")
        if not self.passed_on_retry <= set(self.tests):
            raise ValueError(
                f"passed_on_retry ids that are not in tests: {sorted(self.passed_on_retry - set(self.tests))[:5]!r}"
            )

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins for xdist / JSON: ``{"tests": {id: "PASS"}, "messages": {...}, "warnings": [...]}``."""
        return {
            "tests": {test_id: state.value for test_id, state in self.tests.items()},
            "messages": dict(self.messages),
            "warnings": list(self.warnings),
            "passed_on_retry": sorted(self.passed_on_retry),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ParseResult:
        """Inverse of :meth:`to_dict`.

        Raises:
            KeyError: a top-level key is missing.
            ValueError: a state string is not a :class:`TestState` value, or see the class docstring.
        """
        return cls(
            tests={str(k): TestState(v) for k, v in data["tests"].items()},
            messages={str(k): str(v) for k, v in data["messages"].items()},
            warnings=tuple(str(w) for w in data["warnings"]),
            passed_on_retry=frozenset(str(t) for t in data.get("passed_on_retry", ())),
        )


#: A parser: (command output text, {path relative to the repository: file bytes}) -> ParseResult.
#: The registered parsers also accept the keyword ``root_dir`` (see each module); callers that know the
#: repository's absolute path in the run environment should pass it so ids do not depend on it.
Parser: TypeAlias = Callable[[str, Mapping[str, bytes]], ParseResult]

_REGISTRY: dict[str, Parser] = {}

#: Read-only view of the registered parsers, by name (``"flutter"``, ``"jest"``, ``"junit"``).
PARSERS: Mapping[str, Parser] = MappingProxyType(_REGISTRY)


def register(name: str) -> Callable[[Parser], Parser]:
    """Decorator registering a parser function under ``name``; returns the function unchanged.

    Raises:
        ValueError: ``name`` is empty or already registered to a different function.
    """
    if not name:
        raise ValueError("parser name must be non-empty")

    def decorate(func: Parser) -> Parser:
        existing = _REGISTRY.get(name)
        if existing is not None and existing is not func:
            raise ValueError(f"parser {name!r} is already registered ({existing!r})")
        _REGISTRY[name] = func
        return func

    return decorate


def get_parser(name: str) -> Parser:
    """Return the parser registered under ``name``.

    Raises:
        KeyError: unknown name; the message lists the known names.
    """
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "(none)"
        raise KeyError(f"unknown parser {name!r}; known parsers: {known}") from None


#: Reads the runner's own console summary: output text (ANSI codes removed) -> (passed, failed) or None.
ConsoleCounter: TypeAlias = Callable[[str], "tuple[int, int] | None"]

_CONSOLE: dict[str, ConsoleCounter] = {}


def register_console(name: str) -> Callable[[ConsoleCounter], ConsoleCounter]:
    """Decorator registering the console-summary reader of parser ``name``; returns it unchanged."""

    def decorate(func: ConsoleCounter) -> ConsoleCounter:
        _CONSOLE[name] = func
        return func

    return decorate


def console_counts(parser_name: str, output: str) -> tuple[int, int] | None:
    """``(passed, failed)`` as the test runner's own console summary prints them, or None.

    For cross-checking a parse against what the runner said: jest's ``Tests: 1 failed, 3 passed, 4 total``,
    Gradle's ``N tests completed, M failed[, K skipped]`` (passed = N - M - K), flutter's expanded
    reporter ``MM:SS +N ~K -M: Some tests failed.`` / ``... All tests passed!``. When the output holds
    several summaries (one per Gradle test task, flutter run) their counts are added, but for jest, whose
    own final summary comes last: its last ``Tests:`` line only (code under test can print others). These are
    the runner's counts: a test that failed and then passed on a retry is "passed" there, while the
    parsers count it ``FAIL`` (``docs/test-ids.md``, "Retries").

    Returns:
        None when the output shows no summary (Gradle prints none when every test passed; ``--machine``
        and ``--json`` streams have none), or when the parser has no console reader.

    Raises:
        KeyError: ``parser_name`` is not a registered parser (see :func:`get_parser`).
    """
    get_parser(parser_name)
    counter = _CONSOLE.get(parser_name)
    return counter(strip_ansi(output)) if counter is not None else None


_ANSI_RE: Final = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")


def strip_ansi(text: str) -> str:
    """Remove ANSI colour / cursor escape sequences (``ESC [ ... letter``) from ``text``."""
    return _ANSI_RE.sub("", text)


def relative_to_root(path: str, root_dir: str | None) -> str:
    """Return ``path`` relative to ``root_dir`` when it lies under it, else ``path`` unchanged.

    Backslashes are turned into ``/`` first (Windows runners) and a leading ``./`` is dropped, so
    ``"/repo/src/a.test.ts"`` with root ``"/repo"`` (or ``"/repo/"``) gives ``"src/a.test.ts"``.
    """
    norm = path.replace("\\", "/")
    if root_dir:
        root = root_dir.replace("\\", "/").rstrip("/")
        if root and norm.startswith(root + "/"):
            norm = norm[len(root) + 1 :]
    while norm.startswith("./"):
        norm = norm[2:]
    return posixpath.normpath(norm) if norm else norm


#: Warnings one parse keeps (see :meth:`ResultBuilder.build`).
MAX_WARNINGS: Final = 200

# Duplicate ids: the state that wins. A test that failed in any of its executions (a retry, a duplicate
# name, the same class in two result files) is FAIL; one that ran and passed beats one that was skipped.
_PRECEDENCE: Final[dict[TestState, int]] = {TestState.FAIL: 3, TestState.PASS: 2, TestState.SKIP: 1}


def stronger(first: TestState, second: TestState) -> TestState:
    """The state that wins under the duplicate-id rule (``FAIL > PASS > SKIP``); ties keep ``first``."""
    return second if _PRECEDENCE[second] > _PRECEDENCE[first] else first


@final
class ResultBuilder:
    """Accumulates test states, messages and warnings for one parse; applies the duplicate-id rule.

    Duplicate rule (documented in ``docs/test-ids.md``): when an id is reported more than once, the
    state with the highest precedence wins, ``FAIL > PASS > SKIP``; the message of the first failing
    report is kept; one warning per duplicated id lists every state seen, in order.
    """

    def __init__(self) -> None:
        self._tests: dict[str, TestState] = {}
        self._messages: dict[str, str] = {}
        self._seen: dict[str, list[TestState]] = {}
        self._warnings: list[str] = []
        self._passed_on_retry: dict[str, int] = {}  # id -> number of attempts of its one retried report

    def add(self, test_id: str, state: TestState, message: str = "") -> None:
        """Record one report of ``test_id``; ``message`` is kept only for ``FAIL`` reports."""
        history = self._seen.setdefault(test_id, [])
        history.append(state)
        current = self._tests.get(test_id)
        self._tests[test_id] = state if current is None else stronger(current, state)
        if state is TestState.FAIL and message and test_id not in self._messages:
            self._messages[test_id] = message

    def add_attempts(self, test_id: str, attempts: list[tuple[TestState, str]]) -> None:
        """Record every attempt of one retried test, earlier ones first (each through :meth:`add`). When
        the last attempt passed after a failed one, the id is also kept in ``passed_on_retry``."""
        for state, message in attempts:
            self.add(test_id, state, message)
        if len(attempts) > 1 and attempts[-1][0] is TestState.PASS and any(s is TestState.FAIL for s, _ in attempts):
            self._passed_on_retry[test_id] = len(attempts)

    def warn(self, text: str) -> None:
        """Add one warning line."""
        self._warnings.append(text)

    def build(self) -> ParseResult:
        """Freeze into a :class:`ParseResult`; duplicate-id warnings come after the other warnings.

        At most :data:`MAX_WARNINGS` warnings are kept (a test run can print any number of broken
        lines); the last kept one then says how many more there were.
        """
        warnings = list(self._warnings)
        for test_id, history in self._seen.items():
            if len(history) > 1:
                states = ", ".join(s.value for s in history[:10]) + (", ..." if len(history) > 10 else "")
                warnings.append(
                    f"duplicate test id {test_id!r} reported {len(history)} times ({states}); "
                    f"kept {self._tests[test_id].value}"
                )
        if len(warnings) > MAX_WARNINGS:
            warnings[MAX_WARNINGS - 1 :] = [f"{len(warnings) - MAX_WARNINGS + 1} more warnings not shown"]
        messages = {k: v for k, v in self._messages.items() if self._tests.get(k) is TestState.FAIL}
        # an id also reported elsewhere (a same-named test that failed) is no clean retry
        retried = frozenset(t for t, n in self._passed_on_retry.items() if len(self._seen[t]) == n)
        return ParseResult(
            tests=dict(self._tests), messages=messages, warnings=tuple(warnings), passed_on_retry=retried
        )
