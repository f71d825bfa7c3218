"""Xcode result bundles, read through ``xcresulttool`` JSON, parsed per test (pure).

Two input forms, both plain JSON documents already produced by ``xcrun xcresulttool``:

* Xcode 16+: ``xcresulttool get test-results tests --path R.xcresult`` -> ``{"testNodes": [...],
  "devices": [...], "testPlanConfigurations": [...]}``. Nodes nest ``Test Plan`` > ``Unit test bundle`` /
  ``UI test bundle`` > ``Test Suite`` > ``Test Case``; a test case's ``children`` hold ``Failure Message``
  nodes (their ``name`` is the message) and ``Repetition`` / ``Test Case Run`` nodes.
  ``result`` is ``Passed``, ``Failed``, ``Skipped``, ``Expected Failure`` or ``unknown``.
* legacy (``xcresulttool get --legacy --format json``): the ``ActionTestPlanRunSummaries`` document that
  ``testsRef`` points to. Every value is wrapped (``{"_type": {"_name": "String"}, "_value": "x"}``,
  arrays as ``{"_values": [...]}``); ``ActionTestMetadata`` leaves carry ``identifier``
  (``Class/method()``), ``testStatus`` (``Success``, ``Failure``, ``Skipped``, ``Expected Failure``) and
  optionally ``summaryRef``; failure messages come from the referenced ``ActionTestSummary`` documents,
  passed as ``summaries={ref id: document}``.

Test id: ``"{bundle}/{Class}/{method}"`` with the trailing ``()`` dropped, i.e. the form of
``xcodebuild -only-testing:Target/Class/method``. A failure is a crash when a message says the test or
the app crashed (``Crash: ...``, ``... crashed ...``, ``Test crashed with signal ...``); an assertion when a
message comes from ``XCTAssert*`` / ``XCTFail`` or Swift Testing's ``Expectation failed``.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Iterator, Mapping
from typing import Any, Final

from pytest_mobilebench.parsers._core import ParseError

__all__ = ["XcStatus", "XcTest", "is_assertion_message", "is_crash_message", "parse_legacy", "parse_tests_json"]


@enum.unique
class XcStatus(str, enum.Enum):
    """Final status of one test case."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    EXPECTED_FAILURE = "expected_failure"
    UNKNOWN = "unknown"


_NEW_STATUS: Final = {
    "Passed": XcStatus.PASSED,
    "Failed": XcStatus.FAILED,
    "Skipped": XcStatus.SKIPPED,
    "Expected Failure": XcStatus.EXPECTED_FAILURE,
}
_LEGACY_STATUS: Final = {
    "Success": XcStatus.PASSED,
    "Failure": XcStatus.FAILED,
    "Skipped": XcStatus.SKIPPED,
    "Expected Failure": XcStatus.EXPECTED_FAILURE,
}
_CRASH_RE: Final = re.compile(r"^Crash:|\bcrashed\b|Test crashed with signal", re.IGNORECASE)
_ASSERT_RE: Final = re.compile(r"\bXCTAssert\w*\b|\bXCTFail\b|\bExpectation failed\b|\bXCTUnwrap\b")


def is_crash_message(message: str) -> bool:
    """Whether a failure message reports a crash of the test runner or the app."""
    return bool(_CRASH_RE.search(message))


def is_assertion_message(message: str) -> bool:
    """Whether a failure message comes from an XCTest assertion or a Swift Testing expectation."""
    return bool(_ASSERT_RE.search(message))


@dataclasses.dataclass(frozen=True)
class XcTest:
    """One test case. ``messages``: its failure messages, in order."""

    __test__ = False

    test_id: str
    status: XcStatus
    messages: tuple[str, ...]

    @property
    def crashed(self) -> bool:
        """A message says it crashed."""
        return any(is_crash_message(m) for m in self.messages)

    def to_dict(self) -> dict[str, Any]:
        """Plain builtins."""
        return {"test_id": self.test_id, "status": self.status.value, "messages": list(self.messages)}


def _method_id(identifier: str) -> str:
    return identifier.removesuffix("()")


def _walk(nodes: list[Any], bundle: str | None) -> Iterator[XcTest]:
    for node in nodes:
        if not isinstance(node, dict):
            continue
        kind = node.get("nodeType")
        if kind in ("Unit test bundle", "UI test bundle"):
            bundle = str(node.get("name", ""))
        if kind == "Test Case":
            ident = str(node.get("nodeIdentifier") or node.get("name", ""))
            messages = tuple(
                str(c.get("name", ""))
                for c in _descendants(node.get("children") or [])
                if c.get("nodeType") == "Failure Message"
            )
            status = _NEW_STATUS.get(str(node.get("result")), XcStatus.UNKNOWN)
            yield XcTest(f"{bundle}/{_method_id(ident)}" if bundle else _method_id(ident), status, messages)
            continue
        yield from _walk(node.get("children") or [], bundle)


def _descendants(nodes: list[Any]) -> Iterator[dict[str, Any]]:
    for node in nodes:
        if isinstance(node, dict):
            yield node
            yield from _descendants(node.get("children") or [])


def parse_tests_json(document: Mapping[str, Any]) -> dict[str, XcTest]:
    """Parse the Xcode 16 ``get test-results tests`` document.

    Raises:
        ParseError: the document has no ``testNodes`` list.
    """
    nodes = document.get("testNodes") if isinstance(document, Mapping) else None
    if not isinstance(nodes, list):
        raise ParseError("xcresult tests JSON: no 'testNodes' list (is this the `get test-results tests` output?)")
    return {t.test_id: t for t in _walk(nodes, None)}


def _value(node: Any) -> Any:
    return node.get("_value") if isinstance(node, Mapping) else None


def _values(node: Any) -> list[Any]:
    return list(node.get("_values", [])) if isinstance(node, Mapping) else []


def _type(node: Any) -> str:
    return str(node.get("_type", {}).get("_name", "")) if isinstance(node, Mapping) else ""


def _legacy_tests(node: Any, bundle: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    if _type(node) == "ActionTestMetadata":
        yield bundle, node
        return
    for child in _values(node.get("subtests") if isinstance(node, Mapping) else None):
        yield from _legacy_tests(child, bundle)


def _legacy_messages(meta: Mapping[str, Any], summaries: Mapping[str, Any]) -> tuple[str, ...]:
    ref = _value(meta.get("summaryRef", {}).get("id")) if isinstance(meta.get("summaryRef"), Mapping) else None
    summary = summaries.get(str(ref)) if ref else None
    if not isinstance(summary, Mapping):
        return ()
    return tuple(str(_value(f.get("message")) or "") for f in _values(summary.get("failureSummaries")))


def parse_legacy(document: Mapping[str, Any], summaries: Mapping[str, Any] | None = None) -> dict[str, XcTest]:
    """Parse the legacy ``ActionTestPlanRunSummaries`` document (see the module docstring).

    Raises:
        ParseError: the document is not an ``ActionTestPlanRunSummaries``.
    """
    if _type(document) != "ActionTestPlanRunSummaries":
        raise ParseError(
            f"xcresult legacy JSON: expected ActionTestPlanRunSummaries, got {_type(document) or 'no _type'!r}"
        )
    out: dict[str, XcTest] = {}
    for run in _values(document.get("summaries")):
        for testable in _values(run.get("testableSummaries")):
            bundle = str(_value(testable.get("targetName")) or _value(testable.get("name")) or "")
            for top in _values(testable.get("tests")):
                for target, meta in _legacy_tests(top, bundle):
                    ident = _method_id(str(_value(meta.get("identifier")) or ""))
                    status = _LEGACY_STATUS.get(str(_value(meta.get("testStatus"))), XcStatus.UNKNOWN)
                    test_id = f"{target}/{ident}" if target else ident
                    out[test_id] = XcTest(test_id, status, _legacy_messages(meta, summaries or {}))
    return out
