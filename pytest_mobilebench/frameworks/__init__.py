"""Per-framework test plans: which command runs an instance's tests and where the results land.

``plan_tests(framework, repo_dir, test_files)`` is pure over the repository files it reads
(:data:`PLANNING_FILES` lists them, so a runtime can copy just those out of a container). See
:mod:`.android` (Gradle modules, MobileDev-Bench Appendix A.7), :mod:`.flutter` and :mod:`.react_native`.
An explicit ``test_command`` from the manifest overrides the derived command; result globs and parser
stay the framework's defaults.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Final

from pytest_mobilebench.frameworks import android, flutter, react_native
from pytest_mobilebench.frameworks.android import CompileFailures, compile_failed_modules
from pytest_mobilebench.frameworks.plan import PlanError, TestPlan

__all__ = [
    "PARSERS",
    "PLANNING_FILES",
    "CompileFailures",
    "PlanError",
    "TestPlan",
    "compile_failed_modules",
    "plan_tests",
    "production_built",
]

#: framework -> registered parser name of its results.
PARSERS: Final[dict[str, str]] = {"android": "junit", "flutter": "flutter", "react-native": "jest"}

#: framework -> repository globs the planner reads.
PLANNING_FILES: Final[dict[str, tuple[str, ...]]] = {
    "android": android.PLANNING_FILES,
    "flutter": flutter.PLANNING_FILES,
    "react-native": react_native.PLANNING_FILES,
}


def plan_tests(
    framework: str,
    repo_dir: Path,
    test_files: Sequence[str],
    *,
    test_command: str | None = None,
    test_targets: Sequence[str] = (),
) -> TestPlan:
    """The test plan for one instance.

    Args:
        framework: ``"android"`` | ``"flutter"`` | ``"react-native"``.
        repo_dir: the repository root (at least the files of ``PLANNING_FILES[framework]``).
        test_files: repository-relative paths of the test patch's files (non-test files are ignored).
        test_command: the manifest's explicit command; overrides everything else.
        test_targets: the manifest's targets (Gradle tasks; test files for flutter / jest).

    Raises:
        PlanError: unknown framework, or no runnable test among the files.
        RecipeError: (android) no settings file and no root build file.
    """
    if framework == "android":
        return android.plan_android(repo_dir, test_files, test_command=test_command, test_targets=test_targets)
    if framework == "flutter":
        return flutter.plan_flutter(repo_dir, test_files, test_command=test_command, test_targets=test_targets)
    if framework == "react-native":
        return react_native.plan_react_native(
            repo_dir, test_files, test_command=test_command, test_targets=test_targets
        )
    raise PlanError(f"framework {framework!r} is not one of {', '.join(PARSERS)}")


def production_built(framework: str, output: str, plan: TestPlan) -> bool:
    """False only when the run's output shows a production-code build failure.

    Android: :func:`compile_failed_modules` (``build_failed``); a test-source compile failure leaves the
    build ok (those tests are NONE). Flutter: a Dart compile error in ``lib/``. React-Native: jest has no
    separate build; a suite that cannot load shows as that suite's failure, so always True.
    """
    if framework == "android":
        return not compile_failed_modules(output, plan.modules).build_failed
    if framework == "flutter":
        return not flutter.production_compile_failed(output)
    return True
