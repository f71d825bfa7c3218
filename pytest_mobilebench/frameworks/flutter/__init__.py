"""Flutter test plans: ``flutter test --machine`` on the test patch's ``*_test.dart`` files under ``test/``.

SPEC section 1 "Running tests per framework": the machine-readable JSON event stream (``testStart`` /
``testDone``) is parsed by the ``"flutter"`` parser. The command writes the stream to
:data:`RESULT_FILE` and prints it too (so the run's output keeps the events), exiting with flutter's
status. Only ``*_test.dart`` files under ``test/`` run: helper files the patch touches there (fakes,
``*_checks.dart``) are not test entry points, and ``integration_test/`` needs a device.

A Dart compile error in production code (``lib/``) makes every test file that imports it fail to load;
:func:`production_compile_failed` finds such errors (``lib/...dart:L:C: Error:``) in the output.

Test files: ``*_test.dart`` anywhere and every file under a ``test/``, ``test_driver/`` or
``integration_test/`` folder (helpers and fixtures there are test code). Runner configuration:
``flutter_test_config.dart`` anywhere, ``dart_test.yaml``, ``pubspec_overrides.yaml``, a changed
``dependency_overrides`` section of the root ``pubspec.yaml`` (compared parsed) or a line opening one in
another package's ``pubspec.yaml``, and a package that names itself like a test
package (``name: test``, ``flutter_test`` ...). Tools: ``.dart_tool/``, ``.pub-cache/``, ``build/``,
``.fvm/``, ``.flutter-plugins*``, ``.packages``, ``.metadata``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from collections.abc import Callable, Mapping
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Final, final

import yaml

if TYPE_CHECKING:
    from pytest_mobilebench.patch import FileChange
    from pytest_mobilebench.frameworks.recipe import EnvRecipe

from pytest_mobilebench.runtime.environment import Environment
from pytest_mobilebench.plan import PlanError, TestPlan
from pytest_mobilebench.frameworks.rules import gradle_entry_point, path_parts, tool_dir_of

__all__ = [
    "FLUTTER",
    "PLANNING_FILES",
    "Flutter",
    "RESULT_FILE",
    "is_flutter_test_file",
    "plan_flutter",
    "production_compile_failed",
]

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


_TEST_DIRS: Final = frozenset({"test", "test_driver", "integration_test"})
_CONFIG_NAMES: Final = frozenset({"flutter_test_config.dart", "dart_test.yaml", "pubspec_overrides.yaml"})
_TEST_PACKAGES: Final = frozenset(
    {"test", "flutter_test", "test_api", "test_core", "matcher", "mockito", "mocktail", "integration_test"}
)
_TOOL_NAMES: Final = frozenset({".flutter-plugins", ".flutter-plugins-dependencies", ".packages", ".metadata"})
_NAME_LINE: Final = re.compile(r"^name:\s*['\"]?([\w-]+)")


def _overrides(data: bytes | None) -> object:
    try:
        parsed = yaml.safe_load(data) if data else None
    except yaml.YAMLError:
        return "<unreadable pubspec.yaml>"
    return parsed.get("dependency_overrides") if isinstance(parsed, dict) else None


@final
class Flutter:
    """The ``flutter`` framework (``flutter test --machine``); see the module docstring."""

    name = "flutter"
    parser = "flutter"
    markers: tuple[str, ...] = ()
    planning_files: tuple[str, ...] = PLANNING_FILES

    def config_paths(self, files: Mapping[str, bytes]) -> tuple[str, ...]:
        """The root ``pubspec.yaml``."""
        del files
        return ("pubspec.yaml",)

    def test_rule(self, files: Mapping[str, bytes]) -> Callable[[str], bool]:
        """``*_test.dart`` anywhere, or any file under ``test/``, ``test_driver/``, ``integration_test/``."""
        del files
        return lambda path: path.endswith("_test.dart") or bool(_TEST_DIRS & set(path_parts(path)[:-1]))

    def plan(
        self,
        files: Mapping[str, bytes],
        test_files: Sequence[str],
        *,
        test_command: str | None = None,
        test_targets: Sequence[str] = (),
        test_results: Sequence[str] = (),
        environment: Environment = Environment(),
    ) -> TestPlan:
        """:func:`plan_flutter`; a ``test_command``'s results are ``test_results`` when given."""
        del files, environment
        plan = plan_flutter(Path("."), test_files, test_command=test_command, test_targets=test_targets)
        if test_command and test_results:
            return TestPlan(plan.command, tuple(test_results), plan.parser)
        return plan

    def production_built(self, output: str, plan: TestPlan) -> bool:
        """False when the output shows a Dart compile error in ``lib/``."""
        del plan
        return not production_compile_failed(output)

    def runner_config(
        self, change: FileChange, before: Mapping[str, bytes], after: Mapping[str, bytes], plan_command: str
    ) -> list[str]:
        """See the module docstring."""
        del plan_command
        findings: list[str] = []
        for path in change.paths:
            base = PurePosixPath(path).name
            if base in _CONFIG_NAMES:
                findings.append(f"changed Flutter test configuration {path}")
            if path == "pubspec.yaml" and _overrides(before.get(path)) != _overrides(after.get(path)):
                findings.append("changed dependency_overrides of pubspec.yaml")
            if (
                base == "pubspec.yaml"
                and path != "pubspec.yaml"
                and any(
                    line.startswith("dependency_overrides:") for line in (*change.added_lines, *change.removed_lines)
                )
            ):
                findings.append(f"changed dependency_overrides of {path}")
            if base == "pubspec.yaml":
                names = [m.group(1) for line in change.added_lines for m in [_NAME_LINE.match(line)] if m]
                findings += [f"{path} names its package {n!r}, shadowing a test package" for n in names
                             if n in _TEST_PACKAGES]  # fmt: skip
        return findings

    def tool_path(self, path: str) -> str | None:
        """Dart/Flutter tool caches, generated plugin registries, and the Gradle entry point of the
        ``android/`` folder (:func:`~pytest_mobilebench.frameworks.rules.gradle_entry_point`)."""
        tool = tool_dir_of(path)
        if tool:
            return f"{path} is inside {tool}/ (installed dependencies, build outputs or tool caches)"
        if path_parts(path)[-1] in _TOOL_NAMES:
            return f"{path} is generated by the Flutter tool"
        return gradle_entry_point(path)

    def infer_recipe(self, repo_dir: Path, overrides: Mapping[str, Any]) -> EnvRecipe:
        """:func:`pytest_mobilebench.frameworks.flutter.recipe.infer_flutter_recipe` (``overrides``:
        :func:`~pytest_mobilebench.runtime.environment.recipe_overrides`)."""
        from pytest_mobilebench.frameworks.flutter.recipe import infer_flutter_recipe

        return infer_flutter_recipe(repo_dir, overrides=overrides)


FLUTTER = Flutter()
