"""Android (Gradle) test plans: modules from the settings file, per-module unit-test tasks, JUnit XML results.

MobileDev-Bench Appendix A.7 ("Multi-Module Gradle Test Targeting"): the test patch's files are mapped to
their enclosing Gradle module via the settings declarations, and only those modules' unit-test tasks run,
Debug variant. Instrumentation tests (``androidTest/``) are not run (SPEC section 1).

Module kind heuristics (from the module's build file, read without running Gradle):

- the plugin ids it applies: ``plugins { id("x") / id 'x' / alias(libs.plugins.x) / kotlin("android") /
  `java-library` }`` and ``apply plugin: 'x'``; an id given as a Kotlin constant
  (``id(ThunderbirdPlugins.Library.jvm)``) is resolved in the build logic (``object`` path, then
  ``const val``); catalog aliases through ``gradle/*.versions.toml``;
- convention plugins are expanded recursively: a precompiled script plugin ``<id>.gradle(.kts)`` or a
  ``gradlePlugin { id = ...; implementationClass = ... }`` class anywhere in the build logic, whose own
  applied ids are read the same way;
- ``android``: it applies ``com.android.application`` / ``library`` / ``test`` / ``dynamic-feature`` ->
  task ``testDebugUnitTest`` (``test<Flavor>DebugUnitTest`` when the build file declares product flavors:
  the first declared flavor of each dimension);
- ``kmp``: Kotlin Multiplatform without an Android application/library plugin -> ``allTests``;
- ``jvm``: anything else (``java``, ``java-library``, ``org.jetbrains.kotlin.jvm``) -> ``test``;
- when no id can be resolved at all: an id or constant naming ``android`` -> android, naming
  ``multiplatform``/``kmp`` -> kmp; an ``android {`` block in the build file -> android; else jvm.

Command: ``./gradlew --no-daemon --continue --console=plain <tasks>``. ``--no-daemon``: one Gradle run per
container, no daemon left behind; ``--continue``: one module's failure does not stop the other modules'
tests; ``--console=plain``: task lines (``> Task :m:x FAILED``) that :func:`compile_failed_modules` reads.
No ``--offline``: the instance layer warmed the caches, but a test-only dependency may still be fetched.
Results: ``<module dir>/build/test-results/**/TEST-*.xml`` (JUnit XML, parser ``"junit"``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Final, final

from pytest_mobilebench.frameworks.android.planning import PLANNING_FILES, module_kind, plan_android, unit_test_task
from pytest_mobilebench.frameworks.gradle import compile_failed_modules
from pytest_mobilebench.plan import TestPlan
from pytest_mobilebench.frameworks.rules import gradle_entry_point, path_parts, tool_dir_of
from pytest_mobilebench.frameworks.tree import tree_root
from pytest_mobilebench.runtime.environment import Environment

if TYPE_CHECKING:
    from pytest_mobilebench.frameworks.recipe import EnvRecipe
    from pytest_mobilebench.patch import FileChange


__all__ = [
    "ANDROID",
    "PLANNING_FILES",
    "Android",
    "is_android_test_file",
    "module_kind",
    "plan_android",
    "unit_test_task",
]


# ------------------------------------------------------------------------------------------------ framework

#: Lines of Gradle scripts that change how tests run or report, or which code the tests get.
_GRADLE_TEST_LINE: Final = re.compile(
    r"\b(testOptions|unitTests|ignoreFailures|testLogging|failFast|maxParallelForks|excludeTestsMatching|"
    r"includeTestsMatching|isIncludeAndroidResources|isReturnDefaultValues|dependencySubstitution|eachDependency|"
    r"useTarget|substitute|useJUnitPlatform|useJUnit|beforeTest|afterTest|afterSuite|onOutput|taskGraph|"
    r"testClassesDirs)\b"
    r"|tasks\s*\.\s*(withType|named|register|getByName|findByName|getByPath|matching|configureEach|all)\b"
    r"[^\n]*\b(Test\b|test\w*)|tasks\s*\.\s*test\b|^\s*test\s*\{|\bfilter\s*\{|whenTaskAdded"
)
_APPLY_FROM: Final = re.compile(r"""apply\s*\(?\s*from\s*[:=]\s*(?:file\s*\(\s*)?["']([^"']+)["']""")
_PROPERTY_LINE: Final = re.compile(
    r"^\s*(org\.gradle\.jvmargs|org\.gradle\.java\.home|systemProp\.|org\.gradle\.daemon)"
)
_TEST_PACKAGE: Final = re.compile(
    r"^\s*package\s+(org\.junit|junit\.|kotlin\.test|io\.mockk|org\.mockito|org\.robolectric|org\.hamcrest|"
    r"org\.assertj|com\.google\.common\.truth|app\.cash\.turbine|kotlinx\.coroutines\.test|org\.gradle)"
)
_TOOL_NAMES: Final = frozenset({"local.properties"})


def _is_test_source_set(name: str) -> bool:
    return name.startswith(("test", "androidTest")) or name == "sharedTest" or name.endswith("Test")


def is_android_test_file(path: str) -> bool:
    """``*Test.kt`` / ``*Test.java`` (MobileDev-Bench Appendix A.2), or any file of a Gradle test source
    set: ``src/<set>/`` where ``<set>`` starts with ``test`` or ``androidTest`` (``testDebug``,
    ``testFixtures``), is ``sharedTest``, or ends with ``Test`` (``commonTest``, ``jvmTest``)."""
    parts = path_parts(path)
    dirs = parts[:-1]
    in_set = any(dirs[k] == "src" and _is_test_source_set(dirs[k + 1]) for k in range(len(dirs) - 1))
    return parts[-1].endswith(("Test.kt", "Test.java")) or in_set


def _gradle_findings(path: str, change: FileChange) -> list[str]:
    findings = []
    for sign, lines in (("+", change.added_lines), ("-", change.removed_lines)):
        for line in lines:
            if _GRADLE_TEST_LINE.search(line):
                findings.append(f"changed Gradle test configuration in {path}: {sign}{line.strip()}")
            target = _APPLY_FROM.search(line)
            if target and not target.group(1).endswith((".gradle", ".gradle.kts")):
                findings.append(f"{path} applies the non-Gradle file {target.group(1)}: {sign}{line.strip()}")
    return findings


@final
class Android:
    """The ``android`` framework (Gradle unit tests, JUnit XML); see :func:`plan_android`."""

    name = "android"
    parser = "junit"
    markers: tuple[str, ...] = ()
    planning_files: tuple[str, ...] = PLANNING_FILES

    def config_paths(self, files: Mapping[str, bytes]) -> tuple[str, ...]:
        """Nothing: Gradle test configuration is read from the patch's own lines."""
        del files
        return ()

    def test_rule(self, files: Mapping[str, bytes]) -> Callable[[str], bool]:
        """:func:`is_android_test_file` (Gradle's conventional source sets)."""
        del files
        return is_android_test_file

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
        """:func:`plan_android` over the contents of :data:`PLANNING_FILES`, read as an in-memory tree
        (:func:`pytest_mobilebench.frameworks.tree.tree_root`). A ``test_command``'s results are
        ``test_results`` when given."""
        del environment
        plan = plan_android(tree_root(files), test_files, test_command=test_command, test_targets=test_targets)  # type: ignore[arg-type]
        if test_command and test_results:
            return TestPlan(plan.command, tuple(test_results), plan.parser, plan.modules)
        return plan

    def production_built(self, output: str, plan: TestPlan) -> bool:
        """False when :func:`compile_failed_modules` finds a production compile failure."""
        return not compile_failed_modules(output, plan.modules).build_failed

    def runner_config(
        self, change: FileChange, before: Mapping[str, bytes], after: Mapping[str, bytes], plan_command: str
    ) -> list[str]:
        """Test-task lines of Gradle scripts, JVM options of ``gradle.properties``, and sources declaring
        a test framework's package (``package org.junit`` ...), from the section's parsed hunks."""
        del before, after, plan_command
        path = change.path
        if path.endswith((".gradle", ".gradle.kts")):
            return _gradle_findings(path, change)
        if PurePosixPath(path).name == "gradle.properties":
            return [f"changed Gradle JVM options in {path}: {line.strip()}"
                    for line in (*change.added_lines, *change.removed_lines) if _PROPERTY_LINE.match(line)]  # fmt: skip
        if path.endswith((".kt", ".java", ".groovy", ".kts")):
            return [f"{path} declares a test framework's package: {line.strip()}"
                    for line in change.added_lines if _TEST_PACKAGE.match(line)]  # fmt: skip
        return []

    def tool_path(self, path: str) -> str | None:
        """Build outputs and caches, the Gradle wrapper (``gradlew``, ``gradle/wrapper/``), ``local.properties``."""
        tool = tool_dir_of(path)
        if tool:
            return f"{path} is inside {tool}/ (installed dependencies, build outputs or tool caches)"
        if path_parts(path)[-1] in _TOOL_NAMES:
            return f"{path} holds the local SDK location Gradle reads"
        return gradle_entry_point(path)

    def infer_recipe(self, repo_dir: Path, overrides: Mapping[str, Any]) -> EnvRecipe:
        """:func:`pytest_mobilebench.frameworks.android.recipe.infer_android_recipe` (``overrides``:
        :func:`~pytest_mobilebench.runtime.environment.recipe_overrides`)."""
        from pytest_mobilebench.frameworks.android.recipe import infer_android_recipe

        return infer_android_recipe(repo_dir, overrides=overrides)


ANDROID = Android()
