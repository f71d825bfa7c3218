"""Gradle test plans: settings modules, module kinds, tasks, compile-failure classification."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from pytest_mobilebench.frameworks import PlanError, TestPlan, plan_tests, production_built
from pytest_mobilebench.frameworks.android import module_kind
from pytest_mobilebench.frameworks.gradle import (
    CompileFailures,
    compile_failed_modules,
    module_for_file,
    settings_modules,
)
from pytest_mobilebench.frameworks.recipe import RecipeError

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos" / "recipes"
MIRRORS = Path(os.environ.get("MOBILEBENCH_TEST_MIRRORS", "/work/.mirror"))
_PLANNING = re.compile(r"(^|/)(build\.gradle(\.kts)?|settings\.gradle(\.kts)?)$|^gradle/|^build-plugin/|^plugins/")


def export(repo: str, commit: str, dest: Path) -> Path:
    """Settings, build scripts and build logic of ``repo`` at ``commit`` from the local mirror."""
    git_dir = MIRRORS / repo.replace("/", "+") / "repo"
    if not git_dir.is_dir():
        pytest.skip(f"no local mirror of {repo} under {MIRRORS}")
    listed = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit],
        capture_output=True,
        text=True,
        check=False,
    )
    if listed.returncode != 0:
        pytest.skip(f"mirror of {repo} lacks {commit}")
    paths = [p for p in listed.stdout.splitlines() if _PLANNING.search(p)]
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit, "--", *paths],
        capture_output=True,
        check=True,
    )
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive.stdout, check=True)
    return dest


@pytest.fixture(scope="module")
def thunderbird(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(
        "thunderbird/thunderbird-android",
        "d2598ca137d178ef8038a32ae9292095341bd73b",
        tmp_path_factory.mktemp("tb") / "r",
    )


@pytest.fixture(scope="module")
def element_x(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export(
        "element-hq/element-x-android", "a5a37664ba5e2fa178dcf8f5874d1aed15ebf7c0", tmp_path_factory.mktemp("ex") / "r"
    )


# ------------------------------------------------------------------------------------------ settings


def test_groovy_settings_multiline_bare_and_project_dir() -> None:
    assert settings_modules(FIXTURES / "android-groovy") == {
        ":": "",
        ":app": "app",
        ":core:data": "core/data",
        ":core:ui": "core/ui",  # continued on the next line after a comma
        ":lib-jvm": "libraries/jvm-lib",  # projectDir override
        ":feature-x": "feature-x",  # bare name
    }  # the commented-out include is not a module


def test_kts_settings_with_directory_scan_function() -> None:
    assert settings_modules(FIXTURES / "android-kts-logic") == {
        ":app": "app",
        ":feature:home": "feature/home",
        ":libs:db:impl": "libs/db/impl",  # libs/db has no build script: scanned one level deeper
        ":libs:network": "libs/network",
    }  # libs/db/docs holds no build script: not a module


def test_inline_listfiles_scan(tmp_path: Path) -> None:
    (tmp_path / "settings.gradle.kts").write_text(
        'file("modules").listFiles()!!.filter { it.isDirectory }.forEach { include(":modules:${it.name}") }\n',
        encoding="utf-8",
    )
    for name in ("alpha", "beta"):
        (tmp_path / "modules" / name).mkdir(parents=True)
        (tmp_path / "modules" / name / "build.gradle.kts").write_text("plugins { `java-library` }\n", encoding="utf-8")
    (tmp_path / "modules" / "notes").mkdir()
    assert settings_modules(tmp_path) == {":modules:alpha": "modules/alpha", ":modules:beta": "modules/beta"}


def test_no_settings_and_no_build_file(tmp_path: Path) -> None:
    with pytest.raises(RecipeError, match="no settings.gradle"):
        settings_modules(tmp_path)


def test_module_for_file_picks_the_nearest_module() -> None:
    modules = {":": "", ":core": "core", ":core:data": "core/data", ":lib": "libraries/lib"}
    assert module_for_file("core/data/src/test/kotlin/XTest.kt", modules) == ":core:data"
    assert module_for_file("core/src/test/YTest.kt", modules) == ":core"
    assert module_for_file("libraries/lib/src/test/ZTest.kt", modules) == ":lib"
    assert module_for_file("src/test/RootTest.kt", modules) == ":"
    assert module_for_file("docs/x.md", {":core": "core"}) is None


def test_module_kinds_through_convention_plugins() -> None:
    repo = FIXTURES / "android-kts-logic"
    assert module_kind(repo, "app") == "android"  # alias(libs.plugins.android.application)
    assert module_kind(repo, "feature/home") == "android"  # id(Plugins.ANDROID_LIBRARY) -> class plugin
    assert module_kind(repo, "libs/db/impl") == "android"  # catalog alias -> registered class plugin
    assert module_kind(repo, "libs/network") == "jvm"  # precompiled script plugin applying java-library
    groovy = FIXTURES / "android-groovy"
    assert module_kind(groovy, "app") == "android"  # apply plugin: 'com.android.application'
    assert module_kind(groovy, "feature-x") == "jvm"  # apply plugin: 'kotlin'


# ------------------------------------------------------------------------------------------- plans


def test_plan_groovy_with_flavors_and_instrumentation_files() -> None:
    plan = plan_tests(
        "android",
        FIXTURES / "android-groovy",
        [
            "app/src/test/java/org/demo/NoteTest.java",
            "app/src/androidTest/java/org/demo/NoteUiTest.java",  # instrumentation: not run
            "core/data/src/test/kotlin/org/demo/RepoTest.kt",
            "libraries/jvm-lib/src/test/java/org/demo/UtilTest.java",
        ],
    )
    assert plan == TestPlan(
        command="./gradlew --no-daemon --continue --console=plain "
        ":app:testFreeDebugUnitTest :core:data:testDebugUnitTest :lib-jvm:test",
        result_globs=(
            "app/build/test-results/**/TEST-*.xml",
            "core/data/build/test-results/**/TEST-*.xml",
            "libraries/jvm-lib/build/test-results/**/TEST-*.xml",
        ),
        parser="junit",
        modules=(":app", ":core:data", ":lib-jvm"),
    )
    assert TestPlan.from_dict(plan.to_dict()) == plan


def test_plan_only_instrumentation_is_an_error() -> None:
    with pytest.raises(PlanError, match="outside androidTest"):
        plan_tests("android", FIXTURES / "android-groovy", ["app/src/androidTest/java/org/demo/NoteUiTest.java"])


def test_explicit_command_and_targets_override() -> None:
    repo = FIXTURES / "android-groovy"
    plan = plan_tests("android", repo, ["x"], test_command="./gradlew :core:data:testDebugUnitTest --tests '*Repo*'")
    assert plan.command == "./gradlew :core:data:testDebugUnitTest --tests '*Repo*'"
    assert plan.modules == (":core:data",)
    assert plan.result_globs == ("core/data/build/test-results/**/TEST-*.xml",)
    plan = plan_tests("android", repo, [], test_targets=[":app:testPaidDebugUnitTest"])
    assert plan.command == "./gradlew --no-daemon --continue --console=plain :app:testPaidDebugUnitTest"
    assert plan.modules == (":app",)


def test_thunderbird_modules_and_tasks(thunderbird: Path) -> None:
    modules = settings_modules(thunderbird)
    assert len(modules) == 141  # 140 literal include paths + the root project
    assert modules[":library:html-cleaner"] == "library/html-cleaner"
    assert modules[":legacy:ui:legacy"] == "legacy/ui/legacy"
    assert modules[":feature:mail:message:export:impl-eml"] == "feature/mail/message/export/impl-eml"
    plan = plan_tests(
        "android",
        thunderbird,
        [
            "library/html-cleaner/src/test/kotlin/app/k9mail/html/cleaner/HtmlSanitizerTest.kt",
            "legacy/ui/legacy/src/test/java/com/fsck/k9/ui/helper/SizeFormatterTest.kt",
        ],
    )
    # html-cleaner: id(ThunderbirdPlugins.Library.jvm) -> thunderbird.library.jvm (java-library, kotlin jvm)
    # legacy ui: id(ThunderbirdPlugins.Library.androidCompose) -> ... -> com.android.library
    assert plan.command == (
        "./gradlew --no-daemon --continue --console=plain :legacy:ui:legacy:testDebugUnitTest "
        ":library:html-cleaner:test"
    )
    assert plan.modules == (":legacy:ui:legacy", ":library:html-cleaner")


def test_element_x_scanned_modules(element_x: Path) -> None:
    modules = settings_modules(element_x)
    # not listed literally: found by the settings' includeProjects() directory scan
    assert modules[":features:startchat:impl"] == "features/startchat/impl"
    assert modules[":libraries:matrix:impl"] == "libraries/matrix/impl"
    assert modules[":app"] == "app"
    assert ":features:startchat" not in modules  # a folder without build script is not a project
    plan = plan_tests(
        "android",
        element_x,
        [
            "features/startchat/impl/src/test/kotlin/io/element/android/features/startchat/impl/StartChatPresenterTest.kt",
            "libraries/core/src/test/kotlin/io/element/android/libraries/core/data/StringTest.kt",
            "app/src/test/kotlin/io/element/android/x/MainActivityTest.kt",
        ],
    )
    assert plan.command == (
        "./gradlew --no-daemon --continue --console=plain :app:testGplayDebugUnitTest "
        ":features:startchat:impl:testDebugUnitTest :libraries:core:test"
    )


# --------------------------------------------------------------------------------- compile failures


def test_compile_failures_from_real_gradle_output() -> None:
    output = (FIXTURES / "gradle-compile-failures" / "gradle-4.4.1-output.txt").read_text(encoding="utf-8")
    result = compile_failed_modules(output, [":good", ":badtest", ":badprod"])
    assert result == CompileFailures(test_sources=frozenset({":badtest"}), production=frozenset({":badprod"}))
    assert result.build_failed
    only_test = compile_failed_modules(output, [":good", ":badtest"])
    assert only_test.test_sources == {":badtest"}


MODERN_OUTPUT = """\
> Task :core:data:compileDebugKotlin
> Task :core:data:compileDebugUnitTestKotlin FAILED
e: file:///testbed/core/data/src/test/kotlin/org/demo/RepoTest.kt:12:9 Unresolved reference 'archive'.
> Task :app:compileFreeDebugUnitTestJavaWithJavac FAILED
> Task :lib-jvm:test FAILED
> Task :feature-x:kspTestKotlin FAILED

FAILURE: Build completed with 4 failures.
"""


def test_test_source_failures_keep_the_build_ok() -> None:
    modules = (":core:data", ":app", ":lib-jvm", ":feature-x")
    result = compile_failed_modules(MODERN_OUTPUT, modules)
    assert result.test_sources == {":core:data", ":app", ":feature-x"}
    assert result.production == frozenset() and result.other_tasks == frozenset()
    assert not result.build_failed  # failing tests (:lib-jvm:test) are not a build failure
    plan = TestPlan("./gradlew x", (), "junit", modules)
    assert production_built("android", MODERN_OUTPUT, plan)


def test_production_and_other_task_failures_fail_the_build() -> None:
    output = (
        "> Task :core:data:compileDebugKotlin FAILED\n"
        "e: file:///testbed/core/data/src/main/kotlin/Repo.kt:3:1 Expecting a top level declaration\n"
        "> Task :app:processFreeDebugResources FAILED\n"
    )
    result = compile_failed_modules(output, [":app"])
    assert result.production == {":core:data"}  # a dependency's production code counts too
    assert result.other_tasks == {":app:processFreeDebugResources"}
    assert not production_built("android", output, TestPlan("x", (), "junit", (":app",)))
