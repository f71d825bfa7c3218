"""What a candidate may not change: the tests, and how the tests run (SPEC section 1; issue #3).

Two kinds of finding, both pure over patch text and file contents:

* test files touched by the candidate (framework rule of :func:`pytest_mobilebench.patch.is_test_file`):
  a *flag*; the harness restores those files to base before the test patch, so the verdict still stands.
* changes to the test runner's configuration or setup: reason ``policy_violation``, never ``resolved``.

  - React Native / jest: ``jest.config.*``; the ``jest`` section of ``package.json`` (compared as parsed
    JSON before and after the candidate); the files that jest configuration names in ``setupFiles``,
    ``setupFilesAfterEnv``, ``globalSetup``, ``globalTeardown``, ``testEnvironment``,
    ``snapshotResolver``, ``testResultsProcessor``, ``testRunner``.
  - Android / Gradle: added or removed lines of Gradle build files that configure test tasks
    (``testOptions``, ``unitTests``, ``tasks.withType<Test>``/``tasks.test``, ``test {``, ``ignoreFailures``,
    ``filter``/``exclude``/``include`` of tests, ``testLogging``, ``failFast``, ``maxParallelForks``).
  - Flutter: ``flutter_test_config.dart`` anywhere, ``dart_test.yaml``.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

from pytest_mobilebench.patch import PatchInfo, is_test_file

__all__ = ["JEST_SETUP_KEYS", "config_files_to_compare", "jest_setup_files", "runner_config_violations", "touched_test_files"]

JEST_SETUP_KEYS: Final = (
    "setupFiles",
    "setupFilesAfterEnv",
    "globalSetup",
    "globalTeardown",
    "testEnvironment",
    "snapshotResolver",
    "testResultsProcessor",
    "testRunner",
)
_JEST_CONFIG_RE: Final = re.compile(r"(^|/)jest\.config\.(js|cjs|mjs|ts|json)$")
_GRADLE_FILE_RE: Final = re.compile(r"(\.gradle|\.gradle\.kts)$")
_GRADLE_TEST_LINE_RE: Final = re.compile(
    r"\b(testOptions|unitTests|ignoreFailures|testLogging|failFast|maxParallelForks|excludeTestsMatching|"
    r"includeTestsMatching|isIncludeAndroidResources|isReturnDefaultValues)\b"
    r"|tasks\.(withType|named|register)\s*[<(][^\n]*\bTest\b|tasks\.test\b|^\s*test\s*\{|\bfilter\s*\{"
)
_FLUTTER_CONFIG_RE: Final = re.compile(r"(^|/)(flutter_test_config\.dart|dart_test\.yaml)$")


def touched_test_files(info: PatchInfo, framework: str) -> list[str]:
    """Paths of test files the candidate added, changed, deleted or renamed (sorted)."""
    return sorted({p for p in info.paths if is_test_file(p, framework)})


def jest_setup_files(package_json: Mapping[str, Any] | None, jest_config: Mapping[str, Any] | None = None) -> set[str]:
    """Repository-relative files named by jest's setup keys (``<rootDir>/`` and ``./`` stripped)."""
    files: set[str] = set()
    for config in (jest_config, (package_json or {}).get("jest")):
        if not isinstance(config, Mapping):
            continue
        for key in JEST_SETUP_KEYS:
            value = config.get(key)
            values = value if isinstance(value, list) else [value]
            for v in values:
                if isinstance(v, str) and ("/" in v or v.endswith((".js", ".ts", ".tsx", ".cjs", ".mjs"))):
                    v = v.replace("<rootDir>/", "")
                    files.add(posixpath.normpath(v))
    return files


def _parse_json(data: bytes | None) -> Any:
    if data is None:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


def runner_config_violations(
    info: PatchInfo,
    patch_text: str,
    framework: str,
    *,
    before: Mapping[str, bytes],
    after: Mapping[str, bytes],
) -> list[str]:
    """Human-readable findings of test-runner configuration changed by the candidate (empty when none).

    Args:
        info: the parsed candidate patch.
        patch_text: the candidate patch text (for Gradle line checks).
        framework: ``android`` | ``flutter`` | ``react-native``.
        before: ``{path: bytes}`` of configuration files at base (``package.json`` at least for jest).
        after: the same files after the candidate patch was applied.
    """
    findings: list[str] = []
    paths = set(info.paths)
    if framework == "react-native":
        pkg_before = _parse_json(before.get("package.json"))
        pkg_after = _parse_json(after.get("package.json"))
        for path in sorted(p for p in paths if _JEST_CONFIG_RE.search(p)):
            findings.append(f"changed jest configuration file {path}")
        if "package.json" in paths and isinstance(pkg_before, dict) and isinstance(pkg_after, dict):
            if pkg_before.get("jest") != pkg_after.get("jest"):
                findings.append("changed the 'jest' section of package.json")
        setup = jest_setup_files(pkg_before) | jest_setup_files(pkg_after)
        for path in sorted(paths & setup):
            findings.append(f"changed jest setup file {path}")
    elif framework == "android":
        current: str | None = None
        for line in patch_text.splitlines():
            if line.startswith("+++ ") or line.startswith("--- "):
                name = line[4:].strip()
                if name != "/dev/null":
                    current = name[2:] if name[:2] in ("a/", "b/") else name
                continue
            if current and _GRADLE_FILE_RE.search(current) and line[:1] in "+-" and not line.startswith(("+++", "---")):
                if _GRADLE_TEST_LINE_RE.search(line[1:]):
                    findings.append(f"changed Gradle test configuration in {current}: {line.strip()}")
    elif framework == "flutter":
        for path in sorted(p for p in paths if _FLUTTER_CONFIG_RE.search(p)):
            findings.append(f"changed Flutter test configuration {path}")
    return findings


def config_files_to_compare(framework: str) -> Sequence[str]:
    """Globs of files to read before and after the candidate for :func:`runner_config_violations`."""
    return ("package.json",) if framework == "react-native" else ()
