"""The jest harness wraps jest-circus: a project whose installed jest has none (jest 26 and older run jasmine2)
runs unharnessed rather than having its every run judged ``runner_compromised`` (its gold would fail)."""

from __future__ import annotations

from collections.abc import Sequence

from pytest_mobilebench.frameworks.plan import TestPlan
from pytest_mobilebench.suites.issue_resolution.attribution import CIRCUS, jest_harness_for

COMMAND = "node_modules/.bin/jest --ci --json --outputFile=/r/.mobilebench/jest-results.json --runTestsByPath a.test.js"


class _Workspace:
    root = "/testbed"

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files

    def read_files(self, patterns: Sequence[str]) -> dict[str, bytes]:
        return {p: self.files[p] for p in patterns if p in self.files}

    def run_with_channel(self) -> None:  # marks a runtime with a result channel
        raise AssertionError("not run here")


def _plan() -> TestPlan:
    return TestPlan(COMMAND, ("/r/.mobilebench/jest-results.json",), "jest", ())


def test_a_project_with_jest_circus_is_harnessed() -> None:
    ws = _Workspace({CIRCUS: b"{}", "a.test.js": b"const m = require('./m');\ntest('x', () => {});\n"})
    harness = jest_harness_for(ws, _plan())  # type: ignore[arg-type]
    assert harness is not None and "--testRunner=" in harness.command and harness.canary in harness.command


def test_a_project_without_jest_circus_runs_unharnessed() -> None:
    ws = _Workspace({"a.test.js": b"test('x', () => {});\n"})
    assert jest_harness_for(ws, _plan()) is None  # type: ignore[arg-type]
