"""Which jest runner the harness wraps (issue 17): jest-circus, or jest-jasmine2 for jest 26 and older and for
projects that name it; a project whose runner cannot be wrapped runs unharnessed rather than having its every run
judged ``runner_compromised`` (its gold would fail). One detection (:func:`harness.jest_runner`), read from the
project's configuration and the installed packages."""

from __future__ import annotations

import json

import pytest

from pytest_mobilebench.plan import TestPlan
from pytest_mobilebench.frameworks.react_native import harness
from pytest_mobilebench.frameworks.react_native.harness_js import RUNNERS
from pytest_mobilebench.runtime.base import Capability
from pytest_mobilebench.suites.issue_resolution.attribution import jest_harness_for
from fake_workspaces import FilesWorkspace

COMMAND = "node_modules/.bin/jest --ci --json --outputFile=/r/.mobilebench/jest-results.json --runTestsByPath a.test.js"
CIRCUS, JASMINE2 = "node_modules/jest-circus/package.json", "node_modules/jest-jasmine2/package.json"


def _jest(version: str) -> dict[str, bytes]:
    return {"node_modules/jest/package.json": json.dumps({"name": "jest", "version": version}).encode()}


def _package(jest: object) -> dict[str, bytes]:
    return {"package.json": json.dumps({"name": "p", "jest": jest}).encode()}


def _Workspace(files: dict[str, bytes]) -> FilesWorkspace:  # noqa: N802 - reads as the class it makes
    """A project's files in a workspace with a result channel (nothing is run here)."""
    return FilesWorkspace(files, capabilities=frozenset({Capability.RESULT_CHANNEL}))


def _plan() -> TestPlan:
    return TestPlan(COMMAND, ("/r/.mobilebench/jest-results.json",), "jest", ())


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({**_jest("29.7.0"), CIRCUS: b"{}"}, "circus"),
        ({**_jest("26.6.3"), JASMINE2: b"{}"}, "jasmine2"),
        ({**_jest("26.6.3"), JASMINE2: b"{}", CIRCUS: b"{}"}, "jasmine2"),  # installed is not used
        (
            {**_jest("26.6.3"), JASMINE2: b"{}", CIRCUS: b"{}", **_package({"testRunner": "jest-circus/runner"})},
            "circus",
        ),
        ({**_jest("29.7.0"), JASMINE2: b"{}", CIRCUS: b"{}", **_package({"testRunner": "jasmine2"})}, "jasmine2"),
        (
            {
                **_jest("27.0.0"),
                JASMINE2: b"{}",
                "jest.config.js": b"module.exports = {\n  testRunner: 'jest-jasmine2',\n};\n",
            },
            "jasmine2",
        ),
        (
            {
                **_jest("29.7.0"),
                JASMINE2: b"{}",
                CIRCUS: b"{}",
                **_package({"testRunner": "<rootDir>/node_modules/jest-circus/runner.js"}),
            },
            "circus",
        ),
        ({**_jest("29.7.0"), CIRCUS: b"{}", **_package({"testRunner": "./tools/my-runner.js"})}, None),  # custom
        ({**_jest("29.7.0"), **_package({"testRunner": "jasmine2"})}, None),  # jest 27+ without jest-jasmine2
        ({**_jest("26.6.3")}, None),  # nested install: nothing to resolve from the root
        ({JASMINE2: b"{}"}, "jasmine2"),  # no version readable: what is installed
        (
            {"node_modules/jest-config/package.json": b'{"version": "27.5.1"}', **_jest("26.6.3"), CIRCUS: b"{}"},
            "circus",
        ),
    ],
)
def test_the_runner_is_read_from_the_configuration_then_the_installed_jest(
    files: dict[str, bytes], expected: str | None
) -> None:
    assert harness.jest_runner(files) == expected


def test_a_preset_naming_its_runner_decides_where_the_project_names_none() -> None:
    files = {**_jest("26.6.3"), JASMINE2: b"{}", CIRCUS: b"{}", **_package({"preset": "some-preset"})}
    assert harness.preset_probes(files)[0] == "node_modules/some-preset/jest-preset.json"
    assert harness.jest_runner(files) == "jasmine2"
    preset = {"node_modules/some-preset/jest-preset.js": b"module.exports = { testRunner: 'jest-circus/runner' };\n"}
    assert harness.jest_runner({**files, **preset}) == "circus"


@pytest.mark.parametrize(
    ("files", "runner"),
    [({**_jest("29.7.0"), CIRCUS: b"{}"}, "circus"), ({**_jest("26.6.3"), JASMINE2: b"{}"}, "jasmine2")],
)
def test_the_harness_writes_the_runner_module_of_the_detected_runner(files: dict[str, bytes], runner: str) -> None:
    ws = _Workspace({**files, "a.test.js": b"const m = require('./m');\ntest('x', () => {});\n"})
    found = jest_harness_for(ws, _plan())  # type: ignore[arg-type]
    assert found is not None and found.runner == runner and found.to_dict()["runner"] == runner
    assert f"--testRunner={found.folder}/runner.js" in found.command
    # the run's canaries and the recorder's switch (on by default) are the differences
    head, _, tail = RUNNERS[runner].replace("__ORACLE__", "true").partition("__CANARY__")
    assert found.files[f"{found.folder}/runner.js"].decode().startswith(head) and found.files[
        f"{found.folder}/runner.js"
    ].decode().endswith(tail)
    other = "jest-jasmine2" if runner == "circus" else "jest-circus"
    assert other.encode() not in found.files[f"{found.folder}/runner.js"]


def test_a_project_whose_runner_cannot_be_wrapped_runs_unharnessed() -> None:
    ws = _Workspace({**_jest("26.6.3"), "a.test.js": b"test('x', () => {});\n"})
    assert jest_harness_for(ws, _plan()) is None  # type: ignore[arg-type]
