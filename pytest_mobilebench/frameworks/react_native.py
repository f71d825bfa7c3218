"""React-Native / JS test plans: jest with a JSON report, limited to the test patch's test files.

SPEC section 1 "Running tests per framework" (jest with ``--json``). Command, by package manager
(:func:`pytest_mobilebench.runtime.recipes.node.detect_package_manager`): ``npx jest`` (npm),
``yarn jest`` (yarn classic and berry), ``pnpm exec jest`` (pnpm), with
``--ci --json --outputFile=.mobilebench/jest-results.json --testLocationInResults --runTestsByPath <files>``.
``--runTestsByPath`` makes jest take the paths literally (not as regular expressions, which break on
``[id].test.tsx``). Files: those matching jest's default ``testMatch`` (``*.test.*`` / ``*.spec.*`` or
under ``__tests__/``, extensions js/jsx/ts/tsx/mjs/cjs); snapshots and fixtures are not entry points.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Final

from pytest_mobilebench.frameworks.plan import PlanError, TestPlan
from pytest_mobilebench.runtime.recipes.node import detect_package_manager

__all__ = ["JEST_RUNNERS", "PLANNING_FILES", "RESULT_FILE", "is_jest_test_file", "plan_react_native"]

#: The jest JSON report (repository-relative).
RESULT_FILE: Final[str] = ".mobilebench/jest-results.json"

#: Package manager -> how it runs the project's jest binary.
JEST_RUNNERS: Final[dict[str, str]] = {"npm": "npx jest", "yarn": "yarn jest", "pnpm": "pnpm exec jest"}

#: Repository files the planner reads.
PLANNING_FILES: Final[tuple[str, ...]] = ("package.json", "pnpm-lock.yaml", "yarn.lock", "package-lock.json")

_EXT: Final = r"\.(?:js|jsx|ts|tsx|mjs|cjs)$"


def is_jest_test_file(path: str) -> bool:
    """Whether jest's default ``testMatch`` would pick ``path`` (``*.test.ts``, ``__tests__/x.js`` ...)."""
    name = PurePosixPath(path).name
    if "node_modules" in PurePosixPath(path).parts:
        return False
    if re.search(r"\.(?:test|spec)" + _EXT, name):
        return True
    return "__tests__" in PurePosixPath(path).parts[:-1] and re.search(_EXT, name) is not None


def plan_react_native(
    repo_dir: Path,
    test_files: Sequence[str],
    *,
    test_command: str | None = None,
    test_targets: Sequence[str] = (),
) -> TestPlan:
    """Plan the jest run for the test patch's files.

    ``test_targets`` (manifest) replace the files (used as given); ``test_command`` replaces the command
    (result glob and parser stay the default: it should write :data:`RESULT_FILE` or print jest's JSON).

    Raises:
        PlanError: no jest test file among the files.
    """
    if test_command:
        return TestPlan(test_command, (RESULT_FILE,), "jest")
    files = list(test_targets) if test_targets else sorted({f for f in test_files if is_jest_test_file(f)})
    if not files:
        raise PlanError(f"no jest test file (*.test.*, *.spec.*, __tests__/) among {list(test_files)!r}")
    runner = JEST_RUNNERS[detect_package_manager(repo_dir)]
    command = (
        f"mkdir -p .mobilebench && {runner} --ci --json --outputFile={RESULT_FILE} --testLocationInResults "
        f"--runTestsByPath {' '.join(shlex.quote(f) for f in files)}"
    )
    return TestPlan(command, (RESULT_FILE,), "jest")
