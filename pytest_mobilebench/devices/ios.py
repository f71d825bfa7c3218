"""iOS: ``xcodebuild build-for-testing`` / ``test-without-building -only-testing:Target/Class/method`` and results
read through ``xcresulttool`` (Xcode 16 ``get test-results tests``, falling back to the legacy JSON form).

SPEC section 2 "Verifier discipline": frozen Xcode, scheme, configuration, the EXACT destination and a
derived-data folder per workspace. Signing failures, an unavailable destination and simulator boot failures
are infrastructure (:func:`infra_kind_of`). Nothing here runs on this project's Linux machines: the command
lines, the failure mapping and the result reading are tested with recorded output shapes and an injected
runner (``tests/test_device_adapters.py``).
"""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
from collections.abc import Callable, Sequence
from typing import Any, Final

from pytest_mobilebench.parsers.xcresult import XcTest, parse_legacy, parse_tests_json

__all__ = ["IosPlan", "build_for_testing", "infra_kind_of", "read_results", "test_without_building"]

#: (pattern in xcodebuild's output, infrastructure kind), first match wins
_INFRA: Final = (
    (
        re.compile(
            r"Code ?Sign(ing)? Error|requires a development team|No signing certificate|No profiles for", re.IGNORECASE
        ),
        "signing_failed",
    ),
    (re.compile(r"Unable to find a (destination|device) matching", re.IGNORECASE), "destination_unavailable"),
    (
        re.compile(
            r"Unable to boot (the )?(device|Simulator)|Failed to boot|Simulator device failed to launch", re.IGNORECASE
        ),
        "simulator_boot_failed",
    ),
    (re.compile(r"Early unexpected exit, operation never finished bootstrapping", re.IGNORECASE), "app_crash"),
)

Runner = Callable[[Sequence[str], float], tuple[int | None, str]]


def _subprocess(argv: Sequence[str], timeout_s: float) -> tuple[int | None, str]:
    try:
        done = subprocess.run(list(argv), check=False, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode(errors="replace") if isinstance(exc.stdout, bytes) else (exc.stdout or "")
        return None, out
    return done.returncode, done.stdout + done.stderr


@dataclasses.dataclass(frozen=True)
class IosPlan:
    """One record's iOS execution plan (E): project or workspace, scheme, configuration, destination, folders."""

    scheme: str
    destination: str  # e.g. "platform=iOS Simulator,id=6F0B1E7A-..." (an exact device, never a name pattern)
    derived_data: str
    configuration: str = "Debug"
    workspace: str | None = None
    project: str | None = None

    def _base(self) -> list[str]:
        where = ["-workspace", self.workspace] if self.workspace else ["-project", self.project or ""]
        return [
            "xcodebuild",
            *where,
            "-scheme",
            self.scheme,
            "-configuration",
            self.configuration,
            "-destination",
            self.destination,
            "-derivedDataPath",
            self.derived_data,
        ]


def build_for_testing(plan: IosPlan) -> list[str]:
    """``xcodebuild build-for-testing`` with the exact destination and derived data."""
    return [*plan._base(), "build-for-testing"]


def test_without_building(plan: IosPlan, target: str, result_bundle: str) -> list[str]:
    """``xcodebuild test-without-building -only-testing:Target/Class/method -resultBundlePath R``."""
    return [*plan._base(), "test-without-building", f"-only-testing:{target}", "-resultBundlePath", result_bundle]


def infra_kind_of(output: str) -> str | None:
    """The infrastructure kind an xcodebuild output shows, or None."""
    return next((kind for pattern, kind in _INFRA if pattern.search(output)), None)


def read_results(result_bundle: str, *, run: Runner = _subprocess, timeout_s: float = 300) -> dict[str, XcTest]:
    """Per-test results of a bundle: Xcode 16 ``get test-results tests``; when that form is unknown to the
    installed ``xcresulttool``, the legacy document and the test summaries it references.

    Raises:
        pytest_mobilebench.parsers.ParseError: neither form yields a readable document.
    """
    code, out = run(["xcrun", "xcresulttool", "get", "test-results", "tests", "--path", result_bundle], timeout_s)
    if code == 0:
        return parse_tests_json(json.loads(out))
    legacy = ["xcrun", "xcresulttool", "get", "--legacy", "--format", "json", "--path", result_bundle]
    code, out = run(legacy, timeout_s)
    root: dict[str, Any] = json.loads(out) if code == 0 else {}
    refs = [
        a.get("actionResult", {}).get("testsRef", {}).get("id", {}).get("_value")
        for a in root.get("actions", {}).get("_values", [])
    ]
    ref = next((r for r in refs if r), None)
    if ref is None:
        return parse_legacy({})
    code, out = run([*legacy, "--id", ref], timeout_s)
    summaries_doc = json.loads(out) if code == 0 else {}
    return parse_legacy(summaries_doc, _summaries(summaries_doc, result_bundle, run, timeout_s))


def _summaries(doc: Any, bundle: str, run: Runner, timeout_s: float) -> dict[str, Any]:
    """Fetch every ``summaryRef`` of failed tests (legacy form)."""
    ids: list[str] = []

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if (
                node.get("_type", {}).get("_name") == "ActionTestMetadata"
                and node.get("testStatus", {}).get("_value") != "Success"
            ):
                ref = node.get("summaryRef", {}).get("id", {}).get("_value")
                if ref:
                    ids.append(ref)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(doc)
    out: dict[str, Any] = {}
    for ref in ids:
        code, text = run(
            ["xcrun", "xcresulttool", "get", "--legacy", "--format", "json", "--path", bundle, "--id", ref], timeout_s
        )
        if code == 0:
            out[ref] = json.loads(text)
    return out
