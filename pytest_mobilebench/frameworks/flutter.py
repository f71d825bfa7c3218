"""Flutter test plans: ``flutter test --machine`` on the test patch's ``*_test.dart`` files under ``test/``.

SPEC section 1 "Running tests per framework": the machine-readable JSON event stream (``testStart`` /
``testDone``) is parsed by the ``"flutter"`` parser. The command writes the stream to
:data:`RESULT_FILE` and prints it too (so the run's output keeps the events), exiting with flutter's
status. Only ``*_test.dart`` files under ``test/`` run: helper files the patch touches there (fakes,
``*_checks.dart``) are not test entry points, and ``integration_test/`` needs a device.

A Dart compile error in production code (``lib/``) makes every test file that imports it fail to load;
:func:`production_compile_failed` finds such errors (``lib/...dart:L:C: Error:``) in the output.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Final

from pytest_mobilebench.frameworks.plan import PlanError, TestPlan

__all__ = ["PLANNING_FILES", "RESULT_FILE", "is_flutter_test_file", "plan_flutter", "production_compile_failed"]

#: Where the command stores the ``--machine`` event stream (repository-relative).
RESULT_FILE: Final[str] = ".mobilebench/flutter-machine.jsonl"

#: Repository files the planner reads.
PLANNING_FILES: Final[tuple[str, ...]] = ("pubspec.yaml",)

_PROD_ERROR: Final = re.compile(r"(?:^|[\s\"'(/])lib/[\w./-]+\.dart:\d+:\d+: Error:", re.MULTILINE)


def is_flutter_test_file(path: str) -> bool:
    """True for ``test/**/*_test.dart`` (repository-relative, POSIX)."""
    parts = PurePosixPath(path).parts
    return len(parts) >= 2 and parts[0] == "test" and parts[-1].endswith("_test.dart")


def _command(files: Sequence[str]) -> str:
    quoted = " ".join(shlex.quote(f) for f in files)
    return (
        f"mkdir -p .mobilebench && flutter test --machine {quoted} > {RESULT_FILE}; "
        f"status=$?; cat {RESULT_FILE}; exit $status"
    )


def plan_flutter(
    repo_dir: Path,
    test_files: Sequence[str],
    *,
    test_command: str | None = None,
    test_targets: Sequence[str] = (),
) -> TestPlan:
    """Plan ``flutter test --machine`` for the test patch's test files.

    ``test_targets`` (manifest) replace ``test_files`` as the files to run (used as given);
    ``test_command`` replaces the command (it should print ``--machine`` events; the result glob stays
    :data:`RESULT_FILE`, and the parser falls back to the output when that file is absent).

    Raises:
        PlanError: no ``test/**/*_test.dart`` among the files.
    """
    del repo_dir  # the plan depends on the file list only
    if test_command:
        return TestPlan(test_command, (RESULT_FILE,), "flutter")
    files = list(test_targets) if test_targets else sorted({f for f in test_files if is_flutter_test_file(f)})
    if not files:
        raise PlanError(f"no test/**/*_test.dart file among {list(test_files)!r}")
    return TestPlan(_command(files), (RESULT_FILE,), "flutter")


def production_compile_failed(output: str) -> bool:
    """True when the output reports a Dart compile error in a ``lib/`` file (production code)."""
    return _PROD_ERROR.search(output.replace("\\n", "\n")) is not None
